#!/usr/bin/env bash
# cli_blas_kernels.sh BIN SRCDIR: the program runs OpenBLAS's kernels for this CPU. An OpenBLAS
# release that does not know the CPU model falls back to its SSE3 kernels ("Prescott"); on a
# CPU with AVX2 and FMA the program then restarts itself with OPENBLAS_CORETYPE naming better
# ones (blas_runtime.h), keeps its arguments and exit code, and computes what a run with those
# kernels named by hand computes. A kernel choice made by the user is kept.
. "$(dirname "$0")/lib_cli.sh" "$@"

core=$(env -u OPENBLAS_CORETYPE "$BIN" --version | sed -n 's/^blas: //p')
[ -n "$core" ] || fail "--version names no BLAS kernels"
if [ "$core" = "not OpenBLAS" ]; then echo "skip: the system BLAS is not OpenBLAS"; exit 77; fi
ok "--version: blas: $core"

user=$(OPENBLAS_CORETYPE=Prescott "$BIN" --version | sed -n 's/^blas: //p')
[ "$user" = "Prescott" ] && ok "OPENBLAS_CORETYPE set by the user is kept" ||
  fail "OPENBLAS_CORETYPE=Prescott gave '$user'"

if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  [ "$core" != "Prescott" ] && ok "a CPU with AVX2 and FMA runs $core, not the SSE3 fallback" ||
    fail "this CPU has AVX2 and FMA but OpenBLAS runs its SSE3 fallback kernels"
fi

# Through a restart (when there is one) the exit code and the diagnostics are the command's.
check "a missing mesh: exit 2 through the restart" 2 env -u OPENBLAS_CORETYPE "$BIN" modes "$T/none.mesh" --out "$T/none"
grep_err "its message names the file" "none.mesh"

# The same subspace as a run with those kernels named by hand.
env -u OPENBLAS_CORETYPE "$BIN" modes "$SRC/data/quadruped.mesh" --out "$T/auto" --quiet >/dev/null 2>&1 ||
  fail "modes (kernels chosen by the program) failed"
OPENBLAS_CORETYPE=$core "$BIN" modes "$SRC/data/quadruped.mesh" --out "$T/named" --quiet >/dev/null 2>&1 ||
  fail "modes (OPENBLAS_CORETYPE=$core) failed"
python3 - "$T/auto/modes.json" "$T/named/modes.json" <<'PY' && ok "modes.json: the same numbers as with OPENBLAS_CORETYPE=$core" || fail "modes.json differs from OPENBLAS_CORETYPE=$core's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d.pop("timings", None)
assert a == b, [k for k in a if a[k] != b.get(k)]
PY
for f in "$T"/auto/mode_*.pc2; do
  cmp -s "$f" "$T/named/$(basename "$f")" || fail "$(basename "$f") differs"
done
finish
