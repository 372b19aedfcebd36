#!/usr/bin/env bash
# cli_stand.sh BIN SRCDIR: before its search, optimize rolls the body out once with no
# actuation and says when it falls over left alone (a credible gait must then balance by
# actuating, which a finer model seldom reproduces). A leaning stick of voxels topples and
# draws the note; the bundled quadruped stands and does not; the passive rollout leaves the
# search's bits alone (params.json equal with and without --quiet, which skips the note). The
# note's mesh.up lays the body down as it came to rest, and there it stays.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=2 --set actuation.modes=3 --threads 1)

# A stick of voxels 12 high leaning along +x (scripts/voxel_bodies.py leaning): its centre of
# mass lies beside its one-voxel foot, and it comes to rest on its side, up_min about 0.3.
python3 "$SRC/scripts/voxel_bodies.py" leaning "$T/leaning.mesh" >/dev/null \
  || fail "voxel_bodies.py leaning"

opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --out "$T/lean" >"$T/out" 2>"$T/err" \
  && ok "optimize on the leaning body" || fail "optimize on the leaning body: $(cat "$T/err")"
grep -q "left alone, this body falls over" "$T/err" && ok "the leaning body draws the note" \
  || fail "no note for the leaning body: $(grep -v '^gen ' "$T/err")"
# The note names the pose the body comes to rest in; laid down so (mesh.up), it stays there:
# no note, and a passive rollout keeps it up.
rest=$(grep -o 'mesh.up=\[[-0-9.,]*\]' "$T/err" | head -1)
[ -n "$rest" ] && ok "the note names a resting pose ($rest)" \
  || fail "no mesh.up in the note: $(grep 'falls over' "$T/err")"
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --set "$rest" --out "$T/lean_down" \
  >/dev/null 2>"$T/err" || fail "optimize on the leaning body laid down: $(cat "$T/err")"
grep -q "falls over" "$T/err" && fail "laid down as it came to rest, the body still falls over" \
  || ok "laid down as it came to rest, the body stays down"
"$BIN" simulate "$T/leaning.mesh" --set "$rest" --out "$T/lean_rest" >"$T/out" 2>&1 \
  || fail "simulate the leaning body laid down: $(cat "$T/out")"
up=$(awk '$1 == "up_min" {print $2}' "$T/out")
awk -v u="$up" 'BEGIN {exit !(u > 0.9)}' && ok "at rest laid down: up_min $up" \
  || fail "laid down, the passive rollout tips it: up_min '$up'"
opt_ok "$BIN" optimize "$SRC/data/quadruped.mesh" "${SMALL[@]}" --out "$T/quad" >/dev/null \
  2>"$T/err" && ok "optimize on the quadruped" || fail "optimize on the quadruped: $(cat "$T/err")"
grep -q "falls over" "$T/err" && fail "the quadruped stands, yet drew the note" \
  || ok "no note for the quadruped"
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --quiet --out "$T/lean_quiet" \
  >/dev/null 2>&1 || fail "optimize --quiet on the leaning body"
cmp -s "$T/lean/params.json" <(sed "s#$T/lean_quiet#$T/lean#" "$T/lean_quiet/params.json") \
  && ok "the passive rollout leaves the search's bits alone" \
  || fail "params.json differs with the passive rollout"
finish
