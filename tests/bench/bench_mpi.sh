#!/usr/bin/env bash
# bench_mpi.sh BIN [GENERATIONS] [POPULATION]: parallel efficiency of the rollout phase of
# `optimize` with 1, 2 and 4 MPI processes (one thread each), and the time spent in
# communication per generation against a generation's rollouts.
#
# Figures come from the line `optimize` prints under mpirun (or with MLC_TIMING=1):
#   rollouts  = wall time of the rollout phase per generation (the slowest rank's)
#   comm      = rank 0's time in broadcast + gathers, less its wait for slower ranks
#   wait      = rank 0's wait for the slowest rank (load imbalance)
# Efficiency E(K) = rollouts(1) / (K * rollouts(K)); it is only reported for K <= cores:
# beyond that the processes share cores and the number says nothing about scaling.
set -euo pipefail
BIN=${1:?usage: bench_mpi.sh BIN [GENERATIONS] [POPULATION]}
GENS=${2:-6}
POP=${3:-16}
if "$BIN" --version | grep -q "(no mpi)"; then echo "SKIP: built without MPI"; exit 0; fi
CORES=$(nproc)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1 MLC_TIMING=1
MPIRUN=(mpirun --oversubscribe --bind-to none --mca btl self,vader)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
ARGS=(--set cmaes.population="$POP" --set cmaes.generations="$GENS" --set sim.steps=300 --threads 1)
# Precompute once into a cache so every run measures the same thing quickly.
"$BIN" modes --set subspace.cache="$T/pre.cache" --out "$T/modes" >/dev/null 2>&1 || true

echo "bench_mpi: quadruped, population $POP, $GENS generations, 300 steps, 1 thread per process, $CORES cores"
printf '%-6s %-14s %-14s %-14s %-14s %-10s\n' procs "gen [s]" "rollouts [s]" "comm [s]" "wait [s]" efficiency
roll1=""
for K in 1 2 4; do
  "${MPIRUN[@]}" -n "$K" "$BIN" optimize "${ARGS[@]}" --set subspace.cache="$T/pre.cache" \
    --out "$T/k$K" >/dev/null 2>"$T/err$K"
  line=$(grep "timing per generation" "$T/err$K")
  # "... %.4f s total, rollouts %.4f s (slowest ...; mean ...), communication %.6f s, waiting ... %.4f s"
  gen=$(sed -E 's/.*generation: ([0-9.]+) s total.*/\1/' <<<"$line")
  roll=$(sed -E 's/.*rollouts ([0-9.]+) s.*/\1/' <<<"$line")
  comm=$(sed -E 's/.*communication ([0-9.]+) s.*/\1/' <<<"$line")
  wait=$(sed -E 's/.*slowest ([0-9.]+) s$/\1/' <<<"$line")
  [ -z "$roll1" ] && roll1=$roll
  if [ "$K" -le "$CORES" ]; then
    eff=$(awk -v a="$roll1" -v b="$roll" -v k="$K" 'BEGIN { printf "%.2f", a / (k * b) }')
  else
    eff="n/a (>$CORES cores)"
  fi
  printf '%-6s %-14s %-14s %-14s %-14s %-10s\n' "$K" "$gen" "$roll" "$comm" "$wait" "$eff"
  cmp -s "$T/k1/params.json" "$T/k$K/params.json" || echo "WARNING: params.json of $K processes differs from 1"
done
