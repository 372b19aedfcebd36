#!/usr/bin/env bash
# cli_scale.sh BIN SRCDIR: the precompute's memory bound and a finer tetrahedralization.
#  - --max-memory below what a bundled mesh's precompute needs: modes, optimize and simulate
#    stop with exit 2 before any output, and the message states the estimate, the bound and
#    the fixes (mesh.min_tets, fewer modes, --max-memory);
#  - a bound above the first estimate (from the mesh size) but under the factor's size from
#    CHOLMOD's analysis stops there, before the factorization, with the analysis's figure (the
#    two-thread precompute, where the ordering runs beside the Hessian's assembly);
#  - a malformed size is a usage error (exit 2); a generous bound changes nothing (the same
#    eigenvalues as without it);
#  - mesh.min_tets gives a surface at least that many tets, more than tetgen's quality bound
#    alone; a negative value is refused;
#  - modes.json reports the factorizations' phases and factor sizes;
#  - a factor large enough (spot's, 10M entries) has its vibration solves split over the threads
#    by default, and the subspace is the same bytes as with one thread's CHOLMOD solves, and as
#    when the runtime gives the two-thread precompute a single thread.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/critter.mesh
SURF=$SRC/data/blub.off.gz
evals() { tr -d '\n\t ' < "$1" | sed -n 's/.*"vibration_eigenvalues":\[\([^]]*\)\].*/\1/p'; }

for cmd in modes optimize simulate; do
  check "$cmd --max-memory 1M" 2 "$BIN" $cmd "$MESH" --out "$T/$cmd-small" --max-memory 1M \
    --set cmaes.generations=1
  grep_err "$cmd: the estimate and the bound" "more than the memory bound of 1.00 MB"
  grep_err "$cmd: the fixes" "mesh.min_tets.*actuation.modes.*--max-memory"
  [ ! -e "$T/$cmd-small" ] && ok "$cmd: no output directory" || fail "$cmd wrote $T/$cmd-small"
done
# The first estimate's figure, from the fix it names, then a bound just above it.
"$BIN" modes "$SRC/data/spot.off.gz" --out "$T/sp0" --max-memory 1M 2>"$T/sp0.err" >/dev/null
first=$(grep -o 'max-memory ([0-9]*M or more)' "$T/sp0.err" | tr -dc 0-9)
if [ -n "$first" ]; then
  check "spot, a bound over the first estimate" 2 "$BIN" modes "$SRC/data/spot.off.gz" \
    --out "$T/sp1" --max-memory "$((first + 1))M"
  grep_err "the second check: the analysis's figure" "vibration factor from CHOLMOD's analysis"
  [ ! -e "$T/sp1" ] && ok "the second check: no output directory" || fail "wrote $T/sp1"
else
  fail "no first estimate in the --max-memory 1M message"
fi
check "--max-memory 12Q" 2 "$BIN" modes "$MESH" --out "$T/q" --max-memory 12Q
grep_err "unit named" "unknown unit 'Q'"
check "--max-memory 0" 2 "$BIN" modes "$MESH" --out "$T/z" --max-memory 0
check "--max-memory on info" 2 "$BIN" info "$MESH" --max-memory 1G

check "modes without a bound given" 0 "$BIN" modes "$MESH" --out "$T/a"
check "modes with --max-memory 64G" 0 "$BIN" modes "$MESH" --out "$T/b" --max-memory=64G
[ -n "$(evals "$T/a/modes.json")" ] && [ "$(evals "$T/a/modes.json")" = "$(evals "$T/b/modes.json")" ] \
  && ok "a bound that fits changes nothing" || fail "eigenvalues differ with --max-memory 64G"
nnz=$(json_num "$T/a/modes.json" vibration_factor_nnz)
awk -v x="${nnz:-0}" 'BEGIN { exit !(x > 0) }' && ok "modes.json: vibration factor nnz $nnz" \
  || fail "modes.json lacks timings.phases.vibration_factor_nnz"

if [ "$(nproc)" -ge 2 ]; then
  check "spot, default threads" 0 "$BIN" modes "$SRC/data/spot.off.gz" --out "$T/spot2"
  check "spot, one thread" 0 "$BIN" modes "$SRC/data/spot.off.gz" --out "$T/spot1" \
    --set parallel.threads=1
  st2=$(json_num "$T/spot2/modes.json" vibration_solve_threads)
  st1=$(json_num "$T/spot1/modes.json" vibration_solve_threads)
  [ "${st2:-0}" -ge 2 ] && [ "${st1:-0}" = 1 ] && ok "split solves: $st2 threads, one: $st1" \
    || fail "vibration_solve_threads ${st2:-?} by default, ${st1:-?} with one thread"
  cmp -s "$T/spot2/subspace.vtk" "$T/spot1/subspace.vtk" \
    && ok "split solves: the same subspace bytes" || fail "subspace.vtk differs with split solves"
  ft2=$(json_num "$T/spot2/modes.json" vibration_factor_threads)
  ft1=$(json_num "$T/spot1/modes.json" vibration_factor_threads)
  [ "${ft2:-0}" -ge 2 ] && [ "${ft1:-0}" = 1 ] && ok "split factorization: $ft2 threads, one: $ft1" \
    || fail "vibration_factor_threads ${ft2:-?} by default, ${ft1:-?} with one thread"
  for f in mode_0.pc2 mode_3.pc2; do # the vibration modes, from the factor
    cmp -s "$T/spot2/$f" "$T/spot1/$f" && ok "split factorization: the same $f" \
      || fail "$f differs between the split factorization and CHOLMOD's"
  done
  # Two branches asked for, one thread given: the vibration branch, which waits for the other's
  # ordering, must not wait forever.
  check "spot, two branches on one thread" 0 env OMP_THREAD_LIMIT=1 timeout 300 "$BIN" modes \
    "$SRC/data/spot.off.gz" --out "$T/spot_tl"
  cmp -s "$T/spot2/subspace.vtk" "$T/spot_tl/subspace.vtk" \
    && ok "one thread for two branches: the same subspace bytes" \
    || fail "subspace.vtk differs under OMP_THREAD_LIMIT=1"
fi

check "surface, tetgen's quality bound" 0 "$BIN" modes "$SURF" --out "$T/s0" \
  --set actuation.modes=2 --set mesh.up=+y
check "surface, mesh.min_tets=8000" 0 "$BIN" modes "$SURF" --out "$T/s1" \
  --set actuation.modes=2 --set mesh.min_tets=8000
t0=$(json_num "$T/s0/modes.json" tets); t1=$(json_num "$T/s1/modes.json" tets)
[ "${t1:-0}" -ge 8000 ] && [ "${t1:-0}" -gt "${t0:-0}" ] \
  && ok "mesh.min_tets: $t0 -> $t1 tets" || fail "mesh.min_tets=8000 gave ${t1:-?} tets (${t0:-?} without)"
check "mesh.min_tets=-1" 2 "$BIN" modes "$SURF" --out "$T/s2" --set mesh.min_tets=-1
grep_err "key named" "mesh.min_tets"
finish
