#!/bin/bash
# kernel_paths.sh: the copies of the simulator kernels give the same bits: AVX2 with the FMA
# instruction, the SSE2 baseline with it (MLC_NO_AVX2=1), and the SSE2 baseline with fused
# multiply-adds emulated, as on a CPU without FMA (MLC_NO_FMA=1). Runs bench_sim's table once
# per path (the path is chosen once per process, so each run is its own process) and compares
# every final-state checksum. On a machine or build without a copy, the runs that would take
# it take another; the test says so and still compares the runs.
#   kernel_paths.sh BENCH_SIM
set -u
BENCH=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BENCH" 1 --checksum >"$T/default" || { echo "FAIL: bench_sim exited $?"; exit 1; }
MLC_NO_AVX2=1 "$BENCH" 1 --checksum >"$T/base" ||
  { echo "FAIL: bench_sim (MLC_NO_AVX2=1) exited $?"; exit 1; }
MLC_NO_FMA=1 "$BENCH" 1 --checksum >"$T/emul" ||
  { echo "FAIL: bench_sim (MLC_NO_FMA=1) exited $?"; exit 1; }
path=$(grep -m1 '^kernels:' "$T/default")
base=$(grep -m1 '^kernels:' "$T/base")
emul=$(grep -m1 '^kernels:' "$T/emul")
echo "default run: $path; MLC_NO_AVX2=1 run: $base; MLC_NO_FMA=1 run: $emul"
case $base in *avx2*) echo "FAIL: MLC_NO_AVX2=1 did not force the baseline"; exit 1 ;; esac
case $emul in *avx2* | *", FMA"*) echo "FAIL: MLC_NO_FMA=1 did not force the emulation"; exit 1 ;; esac
case $path in
*avx2*) ;;
*) echo "note: no AVX2 path here (CPU or build); comparing the baselines" ;;
esac
for run in default base emul; do grep checksum "$T/$run" >"$T/$run.sums"; done
n=$(wc -l <"$T/default.sums")
if [ "$n" -lt 1 ]; then echo "FAIL: no checksums printed"; exit 1; fi
for run in base emul; do
  if ! diff "$T/default.sums" "$T/$run.sums"; then
    echo "FAIL: the kernel paths give different final states ($run)"; exit 1
  fi
done
echo "ok: $n checksums bit-identical across the three kernel paths"
