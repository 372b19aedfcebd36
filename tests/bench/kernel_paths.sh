#!/bin/bash
# kernel_paths.sh: the AVX2 and the SSE2 baseline copies of the simulator kernels give the same
# bits. Runs bench_sim's table once on the path the CPU selects and once with MLC_NO_AVX2=1
# (the path is chosen once per process, so each run is its own process) and compares every
# final-state checksum. On a machine or build without the AVX2 copy both runs take the
# baseline; the test says so and still compares the two runs.
#   kernel_paths.sh BENCH_SIM
set -u
BENCH=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BENCH" 1 --checksum >"$T/default" || { echo "FAIL: bench_sim exited $?"; exit 1; }
MLC_NO_AVX2=1 "$BENCH" 1 --checksum >"$T/base" ||
  { echo "FAIL: bench_sim (MLC_NO_AVX2=1) exited $?"; exit 1; }
path=$(grep -m1 '^kernels:' "$T/default")
base=$(grep -m1 '^kernels:' "$T/base")
echo "default run: $path; MLC_NO_AVX2=1 run: $base"
case $base in *avx2*) echo "FAIL: MLC_NO_AVX2=1 did not force the baseline"; exit 1 ;; esac
case $path in
*avx2*) ;;
*) echo "note: no AVX2 path here (CPU or build); comparing the baseline with itself" ;;
esac
grep checksum "$T/default" >"$T/default.sums"
grep checksum "$T/base" >"$T/base.sums"
n=$(wc -l <"$T/default.sums")
if [ "$n" -lt 1 ]; then echo "FAIL: no checksums printed"; exit 1; fi
if ! diff "$T/default.sums" "$T/base.sums"; then
  echo "FAIL: the kernel paths give different final states"; exit 1
fi
echo "ok: $n checksums bit-identical across the kernel paths"
