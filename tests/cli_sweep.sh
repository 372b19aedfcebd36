#!/usr/bin/env bash
# cli_sweep.sh BIN SRCDIR: `sweep` expands a grid x seeds into run directories and runs them,
# --jobs 2 gives the same files, `summarize` gives one row per run (CSV + SVG), a second sweep
# skips the complete runs, --dry-run writes nothing, --slurm writes a job-array script whose tasks (run here with a
# stand-in srun) reproduce the local runs exactly.
. "$(dirname "$0")/lib_cli.sh" "$@"
# The precompute's BLAS sums in another order with other thread counts; runs compared bit for
# bit must use the same (the Slurm script sets 1).
export OPENBLAS_NUM_THREADS=1
cd "$T" || exit 1
cat > sweep.json <<'JSON'
{"base": {"sim": {"steps": 80}, "cmaes": {"population": 6, "generations": 2},
          "actuation": {"modes": 3}},
 "grid": {"actuation.sinusoids": [1, 2]},
 "seeds": [1, 2],
 "args": ["parallel.threads=1"]}
JSON

"$BIN" sweep sweep.json --out root --dry-run >dry.txt || fail "sweep --dry-run"
[ "$(grep -c "^todo" dry.txt)" -eq 4 ] && [ ! -e root ] && echo "ok: --dry-run lists 4 runs, writes nothing" \
  || fail "--dry-run: $(cat dry.txt)"

"$BIN" sweep sweep.json --out root --quiet >/dev/null 2>err.txt || { fail "sweep"; cat err.txt; }
n=0
for i in 0 1 2 3; do [ -s "root/run_000$i/params.json" ] && n=$((n + 1)); done
[ "$n" -eq 4 ] && [ ! -e root/run_0004 ] && echo "ok: 4 run directories with params.json" || fail "$n of 4 runs complete"
grep -q '"cmaes.seed=2"' root/run_0001/run.json && grep -Eq '"actuation.sinusoids":[[:space:]]*2' root/run_0003/run.json \
  && echo "ok: run.json records each run's overrides" || fail "run.json overrides"

# The same sweep two runs at a time, each its own process: the same result files.
"$BIN" sweep sweep.json --out jroot --jobs 2 --quiet >/dev/null 2>jerr.txt || { fail "sweep --jobs 2"; cat jerr.txt; }
same=0
for i in 0 1 2 3; do
  d=run_000$i
  cmp -s "root/$d/params.json" "jroot/$d/params.json" \
    && diff -q <(strip_clock "root/$d/history.csv") <(strip_clock "jroot/$d/history.csv") >/dev/null && same=$((same + 1))
done
[ "$same" -eq 4 ] && echo "ok: --jobs 2 gives the same params.json and history.csv as --jobs 1" \
  || fail "--jobs 2: $same of 4 runs identical to --jobs 1"

"$BIN" summarize root --out summary.csv >/dev/null 2>&1 || fail "summarize"
[ "$(wc -l < summary.csv)" -eq 5 ] && head -1 summary.csv | grep -q "actuation.sinusoids,seed,J,displacement,J_align,generations,seconds" \
  && echo "ok: summary has a header and 4 rows" || { fail "summary.csv"; cat summary.csv; }
[ "$(grep -c ",done$" summary.csv)" -eq 4 ] || fail "not every run is done in the summary"
[ "$(grep -Ec ",(true|false),done$" summary.csv)" -eq 4 ] && head -1 summary.csv | grep -q ",found,status$" \
  && echo "ok: summary has each run's found" || fail "summary found column: $(cat summary.csv)"
grep -q "<svg" summary.svg && [ "$(grep -c "<rect x=" summary.svg)" -eq 4 ] \
  && echo "ok: summary.svg has a bar per run" || fail "summary.svg"
[ "$("$BIN" summarize root/run_0000 root/run_0002 | wc -l)" -eq 3 ] || fail "summarize of run directories"

before=$(stat -c %Y root/run_0000/params.json)
"$BIN" sweep sweep.json --out root >/dev/null 2>again.txt || fail "second sweep"
[ "$(grep -c "complete, skipped" again.txt)" -eq 4 ] && [ "$(stat -c %Y root/run_0000/params.json)" = "$before" ] \
  && echo "ok: a second sweep skips the complete runs" || { fail "rerun did not skip"; cat again.txt; }

# A changed sweep over the same root is refused rather than mixed in.
sed 's/"steps": 80/"steps": 90/' sweep.json > changed.json
"$BIN" sweep changed.json --out root --quiet >/dev/null 2>changed.txt
[ $? -eq 2 ] && grep -q "another configuration" changed.txt && echo "ok: a changed sweep is refused" \
  || fail "changed sweep over the same root"

# Slurm: a job-array script, one task per run, reading the manifest by SLURM_ARRAY_TASK_ID.
"$BIN" sweep sweep.json --out sroot --slurm job.sh >/dev/null 2>&1 || fail "sweep --slurm"
grep -q "^#SBATCH --array=0-3$" job.sh && [ "$(wc -l < sroot/manifest.tsv)" -eq 4 ] && [ ! -e sroot/run_0002/params.json ] \
  && echo "ok: --slurm writes a job array of 4 tasks and runs nothing" || fail "job.sh: $(grep SBATCH job.sh)"
mkdir -p fakebin
printf '#!/bin/sh\nexec "$@"\n' > fakebin/srun # a stand-in for Slurm's launcher
chmod +x fakebin/srun
grep -q "^#SBATCH --open-mode=append$" job.sh && grep -q "^LAUNCH=(srun)$" job.sh \
  && echo "ok: the log is appended to (requeues keep it); one task needs no MPI plugin" || fail "job.sh: $(cat job.sh)"
PATH="$T/fakebin:$PATH" SLURM_ARRAY_TASK_ID=2 bash job.sh >task.out 2>task.txt || { fail "array task 2"; cat task.txt; }
cmp -s root/run_0002/params.json sroot/run_0002/params.json && [ ! -e sroot/run_0001/params.json ] \
  && echo "ok: array task 2 reproduces run 2 exactly" || fail "array task 2 differs from the local run"
grep -q "^modalloco: array task 2, attempt 1 (SLURM_RESTART_COUNT=0)" task.out \
  && echo "ok: the task's log names its attempt" || fail "no attempt line: $(head -2 task.out)"
PATH="$T/fakebin:$PATH" SLURM_ARRAY_TASK_ID=2 SLURM_RESTART_COUNT=1 bash job.sh >again.out 2>&1
grep -q "attempt 2 (SLURM_RESTART_COUNT=1)" again.out && grep -q "complete" again.out \
  && echo "ok: a finished array task is skipped; a requeue is attempt 2" || fail "rerun of a finished task: $(cat again.out)"

# Several tasks per run: srun gets the MPI plugin (pmix unless "mpi" says otherwise), and the
# resources every array task asks for are printed.
cat > mpi.json <<'JSON'
{"seeds": [1, 2], "args": ["sim.steps=20"],
 "slurm": {"ntasks": 2, "cpus_per_task": 4, "options": ["--time=00:10:00", "--mem=2G", "-p debug"]}}
JSON
"$BIN" sweep mpi.json --out mroot --slurm mjob.sh >mjob.txt 2>&1 || fail "sweep --slurm with ntasks 2"
grep -q "^LAUNCH=(srun --mpi=pmix --cpus-per-task=4)$" mjob.sh && grep -q "^#SBATCH --ntasks=2$" mjob.sh \
  && echo "ok: several tasks per run are launched with srun --mpi=pmix" || fail "mjob.sh: $(grep -E 'LAUNCH|SBATCH' mjob.sh)"
grep -q "2 tasks x 4 CPUs = 8 CPUs, memory 2G per node, time 00:10:00, partition debug" mjob.txt \
  && grep -q "^launch: srun --mpi=pmix --cpus-per-task=4;" mjob.txt \
  && echo "ok: sweep --slurm prints what each array task asks for" || fail "resources: $(cat mjob.txt)"
sed 's/"ntasks": 2,/"ntasks": 2, "mpi": "pmi2",/' mpi.json > pmi2.json
"$BIN" sweep pmi2.json --out mroot --slurm mjob.sh >/dev/null 2>&1 && grep -q "^LAUNCH=(srun --mpi=pmi2 " mjob.sh \
  && echo "ok: \"mpi\" picks the plugin" || fail "mpi=pmi2: $(grep LAUNCH mjob.sh)"

# A wrong "slurm" member fails with exit 2 before anything is written.
for bad in '"mpi": "pm ix"' '"launcher": "mpirun", "mpi": "pmix"' '"ntasks": 0' '"cpus_per_task": 2.5' \
           '"options": ["--array=0-3"]' '"options": ["-c4"]' '"nodes": 2' '"options": "--time=1"' \
           '"launcher": "", "ntasks": 2'; do
  echo "{\"seeds\": [1], \"slurm\": {$bad}}" > badslurm.json
  "$BIN" sweep badslurm.json --out broot --slurm bjob.sh >/dev/null 2>bads.txt
  code=$?
  if [ $code -eq 2 ] && grep -q 'badslurm.json: "slurm"' bads.txt && [ ! -e broot ] && [ ! -e bjob.sh ]; then
    echo "ok: slurm {$bad} refused: $(cut -c1-90 bads.txt)"
  else
    fail "slurm {$bad}: exit $code, $(cat bads.txt)"
  fi
done

# Input errors in the sweep file stop it before any run (exit 2).
echo '{"grid": {"sim.stepz": [1, 2]}}' > bad.json
"$BIN" sweep bad.json --out badroot >/dev/null 2>bad.txt
[ $? -eq 2 ] && grep -q "run_0000" bad.txt && [ ! -e badroot/run_0000/config.json ] \
  && echo "ok: a bad key in the sweep fails with exit 2 before running" || { fail "bad sweep key"; cat bad.txt; }

finish
