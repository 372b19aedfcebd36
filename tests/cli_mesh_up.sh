#!/bin/bash
# cli_mesh_up.sh: mesh.up. The bundled quadruped turned by hand so that its up axis is z, read
# with mesh.up = +z, must give the same modes and the same rollout as the original; info warns
# about a file turned upside down until mesh.up says so; bad values are input errors naming
# the key.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh

# (x, y, z) → (x, −z, y) on the Vertices block: +y becomes +z, a proper rotation.
awk 'sec == 1 && n > 0 { print $1, -$3, $2, $4; n--; next }
     sec == 1 && n == 0 && NF == 1 && !done { n = $1; done = 1; print; next }
     /^Vertices/ { sec = 1 } /^Tetrahedra/ { sec = 2 } { print }' "$MESH" >"$T/zup.mesh"
[ "$(wc -l <"$T/zup.mesh")" -eq "$(wc -l <"$MESH")" ] || fail "the turned mesh lost lines"

eig() { grep -o '"vibration_eigenvalues":[^]]*' "$1/modes.json"; }
check "modes, y up" 0 "$BIN" modes "$MESH" --out "$T/m_y" --quiet
check "modes, z up with mesh.up=+z" 0 "$BIN" modes "$T/zup.mesh" --set mesh.up=+z --out "$T/m_z" \
  --quiet
check "modes, z up with mesh.up=[0,0,1]" 0 "$BIN" modes "$T/zup.mesh" --set 'mesh.up=[0,0,1]' \
  --out "$T/m_v" --quiet
[ -n "$(eig "$T/m_y")" ] || fail "modes.json has no vibration_eigenvalues"
if [ "$(eig "$T/m_y")" = "$(eig "$T/m_z")" ] && [ "$(eig "$T/m_y")" = "$(eig "$T/m_v")" ]; then
  ok "the same vibration eigenvalues"
else
  fail "eigenvalues differ: $(eig "$T/m_y") vs $(eig "$T/m_z") vs $(eig "$T/m_v")"
fi
# modes.json states the rotation: R takes +z to +y, (x, y, z) → (x, z, −y).
tr -d ' \t\n' <"$T/m_z/modes.json" | grep -q '"rotate":\[\[1,0,0\],\[0,0,1\],\[0,-1,0\]\]' &&
  ok "modes.json states the rotation" || fail "modes.json lacks the rotation"
grep -q '"up":[[:space:]]*"+z"' "$T/m_z/config.json" && ok "config.json keeps the name" ||
  fail "config.json lacks mesh.up"

# The same rollout: the prepared meshes are identical, so the trajectories are too.
check "simulate, y up" 0 "$BIN" simulate "$MESH" --set sim.steps=20 --out "$T/s_y" --quiet
check "simulate, z up" 0 "$BIN" simulate "$T/zup.mesh" --set mesh.up=+z --set sim.steps=20 \
  --out "$T/s_z" --quiet
cmp -s "$T/s_y/trajectory.csv" "$T/s_z/trajectory.csv" && ok "the same trajectory" ||
  fail "trajectories differ"

# info: upside down, (x, y, z) → (x, −y, −z), the body tips over on its back with the default
# +y and stands on its feet with -y. Turned to z up it also rests on its flank (a voxel box), so
# there is no warning, only the steadier axis in the report.
awk 'sec == 1 && n > 0 { print $1, -$2, -$3, $4; n--; next }
     sec == 1 && n == 0 && NF == 1 && !done { n = $1; done = 1; print; next }
     /^Vertices/ { sec = 1 } /^Tetrahedra/ { sec = 2 } { print }' "$MESH" >"$T/down.mesh"
check "info, upside down" 0 "$BIN" info "$T/down.mesh"
grep_err "info suggests -y" "warning: .*tips over.*try --set mesh.up=-y"
check "info, upside down with mesh.up=-y" 0 "$BIN" info "$T/down.mesh" --set mesh.up=-y
[ -s "$T/err" ] && fail "info warned with the right axis: $(cat "$T/err")" || ok "no warning"
grep -q "^up axis *-y (mesh.up; the body stands on it)" "$T/out" && ok "info reports the up axis" ||
  fail "info: no up axis"
check "info, z up" 0 "$BIN" info "$T/zup.mesh"
grep -q "^up axis *+y .*steadiest on +z" "$T/out" && ok "info names the steadier axis" ||
  fail "info: $(grep '^up axis' "$T/out")"
check "info, original" 0 "$BIN" info "$MESH"
[ -s "$T/err" ] && fail "info warned on the original: $(cat "$T/err")" || ok "no warning"

for bad in null 3 '[0,1]' '[0,0,0]' +w z; do
  check "mesh.up=$bad is refused" 2 "$BIN" info "$MESH" --set "mesh.up=$bad"
  grep_err "mesh.up=$bad: message names the key" "'mesh.up'"
done
grep_err "the message says what is valid" "valid: +x, -x, +y, -y, +z, -z"
finish
