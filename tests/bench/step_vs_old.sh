#!/bin/bash
# step_vs_old.sh: the step's cost at 20 and 64 contact samples (synthetic body, Bat sizes:
# bench_sim --only 0 and --config 5,3,10,64) beside another build's, measured in one run, so
# that both builds see the same machine load.
#   step_vs_old.sh NEW_BENCH_SIM OLD_BENCH_SIM [runs]
#   STEP_MESHES="…/penguin/penguin.ele …/cat/cat.ele" adds each mesh at the Bat sizes with 64
#   samples (--mesh PATH --config 5,3,10,64; the subspace is computed, and under callgrind
#   that takes a minute or two per mesh and build).
# Prints, per configuration and build, the instructions a step (callgrind, steps only: steady
# whatever the load; skipped without valgrind) and the median over `runs` (3) invocations of
# bench_sim 5's thread-CPU µs a step, the builds' invocations interleaved (new, old, new, ...):
# on a shared machine the wall clock and even the CPU time move with the other jobs.
set -u
NEW=$1
OLD=$2
RUNS=${3:-3}
export OPENBLAS_NUM_THREADS=1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cfgs=("--only 0" "--config 5,3,10,64")
names=("20 samples" "64 samples")
for m in ${STEP_MESHES:-}; do
  [ -f "$m" ] || { echo "step_vs_old.sh: no mesh $m" >&2; exit 2; }
  cfgs+=("--mesh $m --config 5,3,10,64")
  names+=("$(basename "${m%%.*}"), 64")
done
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
instr() { # instructions a step of a 300-step rollout
  valgrind --tool=callgrind --callgrind-out-file="$T/cg" --toggle-collect=mlc_rollout_step \
    "$1" 1 $2 >/dev/null 2>&1 || { echo "-"; return; }
  callgrind_annotate "$T/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1);
    printf "%.1fk\n", $1 / 300 / 1000; exit}'
}
printf "%-12s %-5s %14s %12s\n" configuration build "instr/step" "cpu us/step"
for i in "${!cfgs[@]}"; do
  for r in $(seq "$RUNS"); do
    for b in new old; do
      bin=$NEW
      [ $b = old ] && bin=$OLD
      "$bin" 5 ${cfgs[$i]} | awk '$NF ~ /^[0-9.]+$/ && NF > 3 {print $(NF - 1)}' >>"$T/$b.$i"
    done
  done
  for b in new old; do
    bin=$NEW
    [ $b = old ] && bin=$OLD
    ins="-"
    command -v valgrind >/dev/null && ins=$(instr "$bin" "${cfgs[$i]}")
    printf "%-12s %-5s %14s %12s\n" "${names[$i]}" $b "$ins" "$(median <"$T/$b.$i")"
  done
done
