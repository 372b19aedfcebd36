#!/usr/bin/env bash
# bench_terrain.sh: the cost of terrain and BDF2, and gaits on a slope and on steps.
#
#   scripts/bench_terrain.sh [BUILD_DIR]          (default BUILD_DIR: build)
#
# 1. Step cost: `bench_sim --terrain` (one thread, OPENBLAS_NUM_THREADS=1) three times: the Bat
#    sizes with |I| = 64 on the synthetic voxel body, flat backward Euler, flat BDF2, a bumpy
#    heightfield with 4 boxes (backward Euler, BDF2), and the flat plane through the terrain
#    path; per variant the median over the three invocations of the thread-CPU µs/step (each
#    itself a median of 21 rollouts of 300 steps) and its ratio to flat backward Euler.
# 2. Gaits: `optimize` on the bundled quadruped (examples/slope.json: 10° with
#    contact.anisotropy 3; examples/steps.json: two low boxes ahead; examples/bumps.json: a
#    heightfield), seed 1, the examples' 80 generations × 16, then each gait replayed in the full-space reference on the same
#    terrain. Printed: J, displacement, the credibility measures, found, exit code, seconds.
#
# Environment: BENCH_TMP (default /tmp/modalloco-terrain), BENCH_GENERATIONS (default: the
# examples' 80), BENCH_FULLSPACE=0 skips the full-space replays.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
BIN=$B/modalloco
TMP=${BENCH_TMP:-/tmp/modalloco-terrain}
mkdir -p "$TMP"
export OPENBLAS_NUM_THREADS=1

echo "== step cost (bench_sim --terrain, 3 invocations) =="
for i in 1 2 3; do "$B/bench_sim" --terrain > "$TMP/bench_$i.txt" || exit 1; done
head -3 "$TMP/bench_1.txt"
# variant rows: name (columns before the numbers), cpu µs (4th field from the end)
awk '
  /^(flat|heightfield)/ {
    n = NF; name = $1; for (k = 2; k <= n - 5; k++) name = name " " $k
    cpu[name] = cpu[name] " " $(n - 3); order[name] = ++seen[name] == 1 ? ++rows : order[name]
    names[order[name]] = name
  }
  function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j] + 0 < a[j - 1] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return a[int((m + 1) / 2)]
  }
  END {
    base = median(cpu[names[1]])
    printf "%-44s %12s %8s\n", "variant", "cpu us/step", "ratio"
    for (r = 1; r <= rows; r++) { m = median(cpu[names[r]]); printf "%-44s %12.2f %8.3f   (runs:%s)\n", names[r], m, m / base, cpu[names[r]] }
  }' "$TMP"/bench_[123].txt

echo "== gaits on the bundled quadruped =="
gen=()
[ -n "${BENCH_GENERATIONS:-}" ] && gen=(--set "cmaes.generations=$BENCH_GENERATIONS")
for e in slope steps bumps; do
  out=$TMP/$e
  t0=$(date +%s.%N)
  "$BIN" optimize "$ROOT/examples/$e.json" --out "$out" --force --quiet --seed 1 "${gen[@]}" \
    > "$TMP/$e.txt" 2> "$TMP/$e.err"
  rc=$?
  t1=$(date +%s.%N)
  printf '%s: exit %d, %.1f s\n' "$e" "$rc" "$(echo "$t1 - $t0" | bc)"
  grep -E '^(J|displacement|rise|airborne|penetration|up_min|robustness|credible|found) ' "$TMP/$e.txt" |
    tr '\n' ' '
  echo
  if [ "${BENCH_FULLSPACE:-1}" != 0 ]; then
    "$BIN" simulate "$out/params.json" --full-space --out "$out/full" --force \
      > "$TMP/$e.full.txt" 2> "$TMP/$e.full.err"
    printf '  full-space replay (exit %d): ' $?
    grep -E '^(full_displacement|full_penetration|full_credible) ' "$TMP/$e.full.txt" | tr '\n' ' '
    echo
  fi
done
