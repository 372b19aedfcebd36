#!/bin/bash
# cli_surface.sh: a defective surface is diagnosed before tetgen runs: exit 2, one
# "modalloco: error:" line per defect naming the file, the defect and what to do; `info` on a
# good surface prints the check. tetgen is made unreachable (MLC_TETGEN) for the defect cases.
. "$(dirname "$0")/lib_cli.sh" "$@"
D=$SRC/tests/data

export MLC_TETGEN=/nonexistent/tetgen
check "open surface" 2 "$BIN" info "$D/surface_open.off"
grep_err "names the hole" "error: .*surface_open.off: the surface is open: 3 boundary edges"
grep_err "gives a vertex on it" "one at vertex 3 (0, 1, 0)"
grep_err "says what to do" "Select All by Trait > Non Manifold, then Face > Fill"
check "non-manifold surface" 2 "$BIN" modes "$D/surface_nonmanifold.off" --out "$T/m" --quiet
grep_err "names the edge" "not manifold: 1 edges .* from vertex 0 (0, 0, 0) to vertex 1"
check "degenerate triangle" 2 "$BIN" simulate "$D/surface_degenerate.off" --out "$T/s" --quiet
grep_err "names the triangle" "1 degenerate triangles (zero area), e.g. the one with corners"
check "two parts" 2 "$BIN" info "$D/surface_two_parts.off"
grep_err "counts the parts" "2 separate parts (connected components) of 12 and 12 triangles"

# Several defects: one prefixed line each. The cube without its last triangle, plus a far
# triangle: open, and in two parts.
{ sed '3s/8 11/11 12/' "$D/surface_open.off" | sed -n '1,11p'
  printf '5 0 0\n6 0 0\n5 1 0\n'; sed -n '12,$p' "$D/surface_open.off"; echo "3 8 9 10"; } \
  >"$T/two_defects.off"
check "two defects" 2 "$BIN" info "$T/two_defects.off"
[ "$(grep -c '^modalloco: error: .*two_defects.off: ' "$T/err")" -eq 2 ] &&
  ok "one line per defect" || fail "expected 2 error lines: $(cat "$T/err")"
unset MLC_TETGEN

if command -v tetgen >/dev/null; then
  # A closed surface whose triangles disagree on the outside is tetrahedralized; info says so.
  sed '12s/^3 0 2 1$/3 0 1 2/' "$D/mesh_cube.off" >"$T/flip.off"
  check "info on a good surface" 0 "$BIN" info "$T/flip.off"
  grep -q "^surface check     closed, manifold, one part, no zero-area triangles; 3 edges" \
    "$T/out" && ok "info prints the check" || fail "info: $(grep surface "$T/out")"
  check "info --json" 0 "$BIN" info "$T/flip.off" --json
  grep -q '"misoriented_edges":[[:space:]]*3' "$T/out" && ok "json has the check" ||
    fail "json lacks surface_check"
fi
finish
