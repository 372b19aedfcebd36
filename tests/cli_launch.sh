#!/usr/bin/env bash
# cli_launch.sh BIN SRCDIR: a process that is one of several tasks or ranks (srun without an MPI
# plugin, an mpirun of another MPI, MLC_MPI=0 under a launcher) while its MPI world has one
# process exits 2 with a message naming the fix, before it writes anything; a lone process in a
# Slurm batch script (SLURM_NTASKS is the allocation's there) runs. The launchers are played by
# their environment variables: no Slurm or MPI needed.
. "$(dirname "$0")/lib_cli.sh" "$@"
export OPENBLAS_NUM_THREADS=1
cd "$T" || exit 1
TINY=(--set cmaes.population=4 --set cmaes.generations=1 --set sim.steps=20 --quiet)
# Nothing of the environment this test runs in may leak into the cases.
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|OMPI_COMM_WORLD_[A-Z_]*\|PMIX\?_[A-Z_]*\|MLC_MPI\)=.*/\1/p'); do
  unset "$v"
done

# refused DESCRIPTION PATTERN VAR=VALUE...: optimize and sweep exit 2, say PATTERN, write nothing.
refused() {
  local desc=$1 pat=$2; shift 2
  rm -rf run root
  check "$desc: optimize exits 2" 2 env "$@" "$BIN" optimize "${TINY[@]}" --out run
  grep_err "$desc: the message names the fix" "$pat"
  [ ! -e run ] && ok "$desc: optimize wrote nothing" || fail "$desc: optimize created run/"
  check "$desc: sweep exits 2" 2 env "$@" "$BIN" sweep sweep.json --out root
  [ ! -e root ] && ok "$desc: sweep wrote nothing" || fail "$desc: sweep created root/"
}
echo '{"seeds": [1], "args": ["cmaes.population=4", "cmaes.generations=1", "sim.steps=20"]}' > sweep.json

# Built without MPI the fix is to build with it; with MPI, to give srun its MPI plugin or to
# let MPI start.
srun_fix="srun --mpi=pmix" off_fix="MLC_MPI=0 keeps MPI off"
"$BIN" --version | grep -q "(no mpi)" && srun_fix="build with MPI" off_fix="build with MPI"
refused "srun -n 2 without an MPI plugin, task 1" "$srun_fix" \
  SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_PROCID=1
refused "srun -n 2 without an MPI plugin, task 0" "task 0 of 2" \
  SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_PROCID=0
refused "an srun step of an older Slurm (SLURM_NTASKS in a step)" "task 0 of 2" \
  SLURM_STEPID=3 SLURM_NTASKS=2
refused "mpirun -n 3 with MPI forced off" "$off_fix" \
  MLC_MPI=0 OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=2
refused "a PMI launcher, rank 1, MPI off" "rank 1 of 2" MLC_MPI=0 PMI_RANK=1 PMI_SIZE=2
refused "a PMIx rank above 0 alone" "rank 2 of 3" MLC_MPI=0 PMIX_RANK=2

# Commands that never use MPI refuse to run as several copies at all.
check "modes as task 1 of 2 exits 2" 2 env SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1 \
  "$BIN" modes --out modes
grep_err "modes as task 1 of 2: the message says so" "modes runs as one process, but this is task 1 of 2"
[ ! -e modes ] && ok "modes as task 1 of 2 wrote nothing" || fail "modes as task 1 of 2 created modes/"
check "simulate as rank 1 of 2 exits 2" 2 env OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 \
  "$BIN" simulate --out sim
grep_err "simulate as rank 1 of 2: the message says so" "simulate runs as one process, but this is rank 1 of 2"
[ ! -e sim ] && ok "simulate as rank 1 of 2 wrote nothing" || fail "simulate as rank 1 of 2 created sim/"

# Alone: the batch script itself (allocation of 4 tasks, no step), a one-task step, garbage.
for case in "SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_PROCID=0 SLURM_JOB_ID=7" \
            "SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=1 SLURM_NTASKS=1 SLURM_PROCID=0" \
            "SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=abc"; do
  rm -rf run
  # shellcheck disable=SC2086
  if opt_ok env $case "$BIN" optimize "${TINY[@]}" --out run >/dev/null 2>err.txt && [ -s run/params.json ]; then
    ok "alone ($case): runs"
  else
    fail "alone ($case)"; cat err.txt
  fi
done

finish
