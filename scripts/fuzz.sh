#!/usr/bin/env bash
# Run every libFuzzer target in tests/fuzz/ for a bounded time (default 60 s each).
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs clang and libclang-rt-14-dev (Debian 12). Builds build-fuzz (CC=clang, -DMLC_FUZZ=ON)
# if needed. The committed seed corpus (tests/fuzz/corpus/<target>/) is copied into a work
# directory, so runs never modify the repository; new crashes are written to
# ${FUZZ_OUT:-build-fuzz/fuzz-out}/<target>/ and make the script exit 1. Turn a crash into a
# regression test by copying it to tests/data/regress/ (see tests/test_regress.c).
# Per input, -timeout=10 (seconds) and -malloc_limit_mb=1024 make slow inputs and unbounded
# allocations failures too. FUZZ_JOBS (default 2) targets run side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
build=${FUZZ_BUILD:-build-fuzz}
out=${FUZZ_OUT:-$build/fuzz-out}
jobs=${FUZZ_JOBS:-2}
if [ ! -x "$build/fuzz_config" ]; then
  CC=clang cmake -S . -B "$build" -DMLC_FUZZ=ON -DMLC_MPI=OFF -DMLC_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j"$jobs" >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

run_one() {
  local t=$1 dir="$out/$1"
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/crashes"
  cp tests/fuzz/corpus/"$t"/* "$dir/corpus/" 2>/dev/null || true
  if "$build/$t" "$dir/corpus" -max_total_time="$secs" -timeout=10 -malloc_limit_mb=1024 \
      -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
      -artifact_prefix="$dir/crashes/" >"$dir/log" 2>&1; then
    printf '%-20s ok   %s\n' "$t" "$(grep -E '^stat::number_of_executed_units' "$dir/log" | awk '{print $2 " execs"}')"
  else
    printf '%-20s FAIL (see %s/log, inputs in %s/crashes)\n' "$t" "$dir" "$dir"
    return 1
  fi
}

fail=0
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || fail=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
exit $fail
