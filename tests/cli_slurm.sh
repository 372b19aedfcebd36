#!/usr/bin/env bash
# cli_slurm.sh BIN SRCDIR: `sweep --slurm` on a real single-node Slurm. The test starts its own
# munged, slurmctld and slurmd (configuration, state, sockets and logs in a scratch directory,
# its own ports) and always stops them. Then: every array task of a tiny sweep COMPLETES with
# results bit-identical to a local sweep; a resubmission skips every run; a task requeued
# mid-run resumes from its checkpoint to the same result and its log keeps both attempts; a run
# of two tasks is one MPI job (srun --mpi=pmix) with the same result, and two tasks that srun
# starts without an MPI plugin are refused (exit 2) before writing anything.
# Installs nothing: skipped (exit 77) when the Slurm or munge programs are absent (Debian:
# apt-get install slurm-wlm munge), when not root (slurmd runs as root), or when the daemons do
# not start; MLC_REQUIRE_SLURM=1 (CI) turns these skips into failures. About a minute on 2 cores.
. "$(dirname "$0")/lib_cli.sh" "$@"
export OPENBLAS_NUM_THREADS=1
# OpenMPI keeps some allocations until exit; under AddressSanitizer do not count them as leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
skip() {
  if [ "${MLC_REQUIRE_SLURM:-0}" = 1 ]; then echo "FAIL: $* (MLC_REQUIRE_SLURM=1)"; exit 1; fi
  echo "SKIP: $*"; exit 77
}
for p in munged slurmctld slurmd sbatch squeue scontrol sinfo srun; do
  command -v "$p" >/dev/null 2>&1 || skip "$p not found (Debian: apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd needs root"
# Nothing of a surrounding Slurm job or MPI launch may leak into the cases.
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|OMPI_[A-Z_]*\|PMIX\?_[A-Z_]*\|MLC_MPI\)=.*/\1/p'); do
  unset "$v"
done

C=$T/cluster
mkdir -p "$C/state" "$C/spool" "$C/munge"
chmod 700 "$C/munge"
# stop_pids FILE...: stop the daemons whose pid files are given (relative to $C).
stop_pids() {
  local f pid
  for f in "$@"; do
    pid=$(cat "$C/$f" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
}
stop_cluster_daemons() { stop_pids slurmd.pid slurmctld.pid; }
stop_cluster() {
  # Our jobs first (their slurmstepd), then the daemons we started, by their pid files.
  if [ -S "$C/munge/sock" ] && [ -n "${SLURM_CONF:-}" ]; then
    scancel --quiet --user=root 2>/dev/null
    for _ in $(seq 1 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
  stop_cluster_daemons
  stop_pids munge/pid
}
trap 'stop_cluster; rm -rf "$T"' EXIT

dd if=/dev/urandom of="$C/munge/key" bs=1024 count=1 status=none && chmod 600 "$C/munge/key"
munged --force --socket="$C/munge/sock" --key-file="$C/munge/key" --pid-file="$C/munge/pid" \
  --log-file="$C/munge/log" --seed-file="$C/munge/seed" 2>"$C/munged.err" \
  || skip "munged does not start: $(cat "$C/munged.err" "$C/munge/log" 2>/dev/null | tail -3)"

# The node as slurmd sees it (CPUs, memory), a free port pair, one partition.
hw=$(slurmd -C 2>/dev/null | head -1)
cpus=$(echo "$hw" | sed -n 's/.* CPUs=\([0-9]*\).*/\1/p')
mem=$(echo "$hw" | sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p')
host=$(hostname -s)
[ -n "$cpus" ] && [ -n "$mem" ] || skip "slurmd -C gave no CPUs/RealMemory: $hw"
# Every Slurm client call is bounded: with a controller that died they retry for minutes.
for c in sinfo squeue scontrol scancel sbatch; do
  eval "$c() { timeout 20 $(command -v $c) \"\$@\"; }"
done
# A free port pair: nothing bound to either, in any state (a socket still in TIME_WAIT makes
# slurmctld's bind fail).
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    ss -tan 2>/dev/null | grep -Eq ":($p|$((p + 1)))\b" || { echo "$p"; return; }
  done
  echo "$p"
}
# start_slurm: write the configuration on a free port pair, start slurmctld and slurmd, wait
# until the node is idle (at most 30 s). False when the controller died or the node never
# became idle; the caller retries on other ports.
start_slurm() {
  port=$(free_port)
  cat > "$C/slurm.conf" <<CONF
ClusterName=mlctest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$C/munge/sock,cred_expire=10
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerParameters=sched_interval=1
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=mlc Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$C/slurm.conf
  slurmctld -f "$SLURM_CONF" -i 2>"$C/ctld.err" || return 1
  sleep 1
  local pid
  pid=$(cat "$C/slurmctld.pid" 2>/dev/null)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null || grep -q fatal "$C/slurmctld.log" 2>/dev/null; then
    return 1
  fi
  slurmd -f "$SLURM_CONF" 2>"$C/slurmd.err" || return 1
  local t0=$SECONDS
  state=""
  while [ $((SECONDS - t0)) -lt 30 ]; do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -1)
    [ "$state" = idle ] && return 0
    sleep 0.5
  done
  return 1
}
started=0
for attempt in 1 2 3; do
  if start_slurm; then started=1; break; fi
  echo "attempt $attempt: the one-node Slurm did not come up on ports $port-$((port + 1)): $(tail -2 "$C/slurmctld.log" 2>/dev/null)"
  stop_cluster_daemons
  rm -rf "$C/state" "$C/spool" "$C/slurmctld.pid" "$C/slurmd.pid" "$C"/*.log
  mkdir -p "$C/state" "$C/spool"
done
[ "$started" = 1 ] || skip "the node did not become idle (state '$state'): $(tail -3 "$C/slurmd.log" "$C/slurmctld.log" 2>/dev/null)"
echo "ok: a one-node Slurm is up ($host, $cpus CPUs, ports $port-$((port + 1)))"

# wait_job ID SECONDS: until no task of job ID is pending or running; false on timeout.
wait_job() {
  local i
  for i in $(seq 1 $(($2 * 5))); do
    [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  squeue -j "$1"; return 1
}
# all_completed ID N: tasks 0..N-1 of array job ID are COMPLETED with exit code 0.
all_completed() {
  local i info good=0
  for i in $(seq 0 $(($2 - 1))); do
    info=$(scontrol -o show job "${1}_$i" 2>/dev/null)
    if echo "$info" | grep -q "JobState=COMPLETED .*ExitCode=0:0"; then good=$((good + 1)); else
      echo "  task $i: $(echo "$info" | grep -o 'JobState=[A-Z_]* Reason=[^ ]*' | head -1) $(echo "$info" | grep -o 'ExitCode=[0-9:]*')"
    fi
  done
  [ "$good" -eq "$2" ]
}
# same_runs A B N: run_0000..run_N-1 of roots A and B have identical params.json and history.csv.
same_runs() {
  local i d
  for i in $(seq 0 $(($3 - 1))); do
    d=$(printf run_%04d "$i")
    cmp -s "$1/$d/params.json" "$2/$d/params.json" || return 1
    diff -q <(strip_clock "$1/$d/history.csv") <(strip_clock "$2/$d/history.csv") >/dev/null || return 1
  done
}

cd "$T" || exit 1
start=$(date +%s)
cat > sweep.json <<'JSON'
{"base": {"sim": {"steps": 80}, "cmaes": {"population": 6, "generations": 3},
          "actuation": {"modes": 3}},
 "grid": {"actuation.sinusoids": [1, 2]},
 "seeds": [1, 2],
 "args": ["parallel.threads=1"],
 "slurm": {"ntasks": 1, "cpus_per_task": 1, "options": ["--time=00:05:00"]}}
JSON
"$BIN" sweep sweep.json --out local --quiet >/dev/null 2>local.err || { fail "local sweep"; cat local.err; }

# 1. The array: every task completes, every run as the local one.
"$BIN" sweep sweep.json --out sroot --slurm job.sh >slurm.txt 2>&1 || { fail "sweep --slurm"; cat slurm.txt; }
grep -q "1 task x 1 CPU = 1 CPUs, memory the partition's default, time 00:05:00" slurm.txt \
  && ok "sweep --slurm prints the request" || fail "request: $(cat slurm.txt)"
job=$(sbatch --parsable job.sh 2>sbatch.err) || { fail "sbatch: $(cat sbatch.err)"; finish; }
wait_job "$job" 60 || fail "job $job did not finish in 60 s"
all_completed "$job" 4 && ok "all 4 array tasks COMPLETED, exit code 0" || fail "not every task completed"
same_runs local sroot 4 && ok "the 4 runs are bit-identical to the local sweep" \
  || fail "Slurm runs differ from the local ones"
grep -q "attempt 1 (SLURM_RESTART_COUNT=0)" "sroot/slurm-${job}_3.out" \
  && ok "a task's log starts with its attempt" || fail "log of task 3: $(head -3 "sroot/slurm-${job}_3.out")"

# 2. Resubmitted, throttled to one task at a time: every run is complete and skipped.
before=$(stat -c %Y sroot/run_0001/params.json)
"$BIN" sweep sweep.json --out sroot --slurm job.sh --slurm-max-running 1 >slurm.txt 2>&1 \
  && grep -q "^#SBATCH --array=0-3%1$" job.sh && grep -q "at most 1 running at once" slurm.txt \
  || fail "--slurm-max-running 1: $(grep array job.sh) $(cat slurm.txt)"
job2=$(sbatch --parsable job.sh) || fail "sbatch of the throttled array"
scontrol -o show job "$job2" 2>/dev/null | grep -q "ArrayTaskThrottle=1" \
  && ok "--slurm-max-running 1: Slurm holds the array to one task at a time" \
  || fail "throttle: $(scontrol -o show job "$job2" 2>&1 | grep -o 'ArrayTaskThrottle=[^ ]*' | head -1)"
wait_job "$job2" 60 || fail "resubmission did not finish"
n=$(cat sroot/slurm-"${job2}"_*.out 2>/dev/null | grep -c "is complete$")
all_completed "$job2" 4 && [ "$n" -eq 4 ] && [ "$(stat -c %Y sroot/run_0001/params.json)" = "$before" ] \
  && ok "a resubmission skips all 4 runs" || fail "resubmission: $n of 4 runs skipped"

# 3. Requeued mid-run: resumes from its checkpoint to the local result, both attempts logged.
cat > long.json <<'JSON'
{"base": {"sim": {"steps": 80}, "cmaes": {"population": 6, "generations": 150},
          "actuation": {"modes": 3}},
 "seeds": [5],
 "args": ["parallel.threads=1"],
 "slurm": {"cpus_per_task": 1, "options": ["--time=00:05:00"]}}
JSON
"$BIN" sweep long.json --out lroot --slurm long.sh >/dev/null 2>&1 || fail "sweep --slurm (long)"
ljob=$(sbatch --parsable long.sh)
rows=0
for _ in $(seq 1 300); do
  rows=$(grep -c '^[0-9]' lroot/run_0000/history.csv 2>/dev/null)
  [ "${rows:-0}" -ge 10 ] && break
  sleep 0.1
done
if [ "${rows:-0}" -ge 10 ] && [ ! -e lroot/run_0000/params.json ]; then
  scontrol requeue "${ljob}_0" || fail "scontrol requeue"
  # A requeued job waits cred_expire seconds (above: 10) before it may start again.
  "$BIN" sweep long.json --out llocal --quiet >/dev/null 2>&1 || fail "local long sweep"
  wait_job "$ljob" 90 || fail "requeued job did not finish"
  log="lroot/slurm-${ljob}_0.out"
  all_completed "$ljob" 1 && ok "the requeued task COMPLETED" || fail "requeued task"
  same_runs llocal lroot 1 && ok "the requeued run resumed to the local result, bit for bit" \
    || fail "the requeued run differs from the local one"
  grep -q "attempt 1 (SLURM_RESTART_COUNT=0)" "$log" && grep -q "attempt 2 (SLURM_RESTART_COUNT=1)" "$log" \
    && grep -q "interrupted after generation" "$log" \
    && ok "the log keeps both attempts (after generation $rows or later)" || { fail "log of the requeued task"; cat "$log"; }
else
  fail "the long run had ${rows:-0} generations before it ended; cannot requeue it mid-run"
fi

# 4. Two tasks per run: one MPI job with srun --mpi=pmix, or a refusal without the plugin.
if "$BIN" --version | grep -q "(no mpi)"; then
  echo "SKIP: built without MPI: no two-task run"
elif ! srun --mpi=list 2>&1 | grep -qw pmix; then
  echo "SKIP: this Slurm has no pmix plugin (srun --mpi=list): no two-task run"
elif [ "$cpus" -lt 2 ]; then
  echo "SKIP: the node has one CPU: no two-task run"
else
  sed 's/"ntasks": 1,/"ntasks": 2,/' sweep.json > two.json
  "$BIN" sweep two.json --out troot --slurm two.sh >/dev/null 2>&1 || fail "sweep --slurm (two tasks)"
  grep -q "^LAUNCH=(srun --mpi=pmix " two.sh || fail "two.sh: $(grep LAUNCH two.sh)"
  tjob=$(sbatch --parsable --array=1 two.sh) && wait_job "$tjob" 60 || fail "two-task job"
  scontrol -o show job "${tjob}_1" | grep -q "JobState=COMPLETED .*ExitCode=0:0" \
    && grep -q "2 processes x 1 thread" "troot/slurm-${tjob}_1.out" \
    && ok "a run of two tasks is one MPI job of 2 processes" || { fail "two-task run"; cat "troot/slurm-${tjob}_1.out"; }
  cmp -s local/run_0001/params.json troot/run_0001/params.json \
    && ok "the two-process run is bit-identical to the local one" || fail "two-process run differs"
  # The same two tasks without an MPI plugin (MpiDefault=none): refused before writing.
  srun -n 2 --mpi=none "$BIN" optimize --set cmaes.generations=1 --out "$T/nompi" >/dev/null 2>nompi.err
  code=$?
  [ "$code" -eq 2 ] && [ "$(grep -c "srun --mpi=pmix" nompi.err)" -eq 2 ] && [ ! -e "$T/nompi" ] \
    && ok "srun -n 2 without an MPI plugin: both tasks refuse (exit 2), nothing written" \
    || { fail "srun -n 2 --mpi=none: exit $code"; cat nompi.err; }
fi
echo "Slurm part: $(($(date +%s) - start)) s"
finish
