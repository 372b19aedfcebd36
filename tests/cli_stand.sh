#!/usr/bin/env bash
# cli_stand.sh BIN SRCDIR: before its search, optimize rolls the body out once with no
# actuation. A body that falls over left alone (a leaning stick of voxels) is searched in the
# pose it comes to rest in (mesh.lay_down, the default): the note names the pose, config.json
# holds it as mesh.up with mesh.lay_down false, the search runs there (the passive body stays
# up), and the run resumes and replays as it ran. With mesh.lay_down=false the body is searched
# standing and the note says it falls. The bundled quadruped stands: no note, its pose kept.
# The passive rollouts leave the search's bits alone (params.json equal with --quiet).
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=2 --set actuation.modes=3 --threads 1)

# A stick of voxels 12 high leaning along +x (scripts/voxel_bodies.py leaning): its centre of
# mass lies beside its one-voxel foot, and it comes to rest on its side, up_min about 0.3.
python3 "$SRC/scripts/voxel_bodies.py" leaning "$T/leaning.mesh" >/dev/null \
  || fail "voxel_bodies.py leaning"

opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --out "$T/lean" >"$T/out" 2>"$T/err" \
  && ok "optimize on the leaning body" || fail "optimize on the leaning body: $(cat "$T/err")"
grep -q "left alone, this body falls over.*lays it down" "$T/err" \
  && ok "the leaning body is laid down, with a note" \
  || fail "no lay-down note for the leaning body: $(grep -v '^gen ' "$T/err")"
rest=$(grep -o 'mesh.up=\[[-0-9.,]*\]' "$T/err" | head -1)
[ -n "$rest" ] && ok "the note names a resting pose ($rest)" \
  || fail "no mesh.up in the note: $(grep 'falls over' "$T/err")"
# config.json holds the pose as mesh.up and mesh.lay_down false: the run as it ran.
python3 - "$T/lean/config.json" "$rest" <<'PY' && ok "config.json: mesh.up is the pose, lay_down false" \
  || fail "config.json does not record the pose laid down"
import json, sys
m = json.load(open(sys.argv[1]))["mesh"]
want = json.loads(sys.argv[2].split("=", 1)[1])
sys.exit(0 if m["lay_down"] is False and [round(x, 3) for x in m["up"]] == want else 1)
PY
# The search ran laid down: no second note, and its pose stays up with no actuation.
[ "$(grep -c 'falls over' "$T/err")" = 1 ] && ok "laid down, the body no longer falls over" \
  || fail "laid down, the body still falls over: $(grep 'falls over' "$T/err")"
"$BIN" simulate "$T/leaning.mesh" --set "$rest" --out "$T/lean_rest" >"$T/out" 2>&1 \
  || fail "simulate the leaning body laid down: $(cat "$T/out")"
up=$(awk '$1 == "up_min" {print $2}' "$T/out")
awk -v u="$up" 'BEGIN {exit !(u > 0.9)}' && ok "at rest laid down: up_min $up" \
  || fail "laid down, the passive rollout tips it: up_min '$up'"
# The gait replays on the pose it was found on (params.json carries it).
"$BIN" simulate "$T/lean/params.json" --out "$T/lean_replay" >"$T/out" 2>&1 \
  && ok "params.json of the laid-down search replays" \
  || fail "replaying the laid-down search: $(cat "$T/out")"
# The same search given the pose by hand: the same gait, bit for bit.
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --set "$rest" --set mesh.lay_down=false \
  --out "$T/lean_hand" >/dev/null 2>&1 || fail "optimize laid down by hand"
cmp -s <(sed "s#$T/lean_hand#$T/lean#" "$T/lean_hand/params.json") "$T/lean/params.json" \
  && ok "laid down by the program or by hand: the same params.json" \
  || fail "laid down by the program and by hand give other gaits"
# An interrupted laid-down run resumes from config.json's pose to the uninterrupted result.
LONG=(--set cmaes.population=6 --set cmaes.generations=12 --set actuation.modes=3 --threads 1)
opt_ok "$BIN" optimize "$T/leaning.mesh" "${LONG[@]}" --quiet --out "$T/lean_full" >/dev/null \
  2>&1 || fail "optimize the leaning body, 12 generations"
interrupt_after 4 "$T/lean_cut" "$BIN" optimize "$T/leaning.mesh" "${LONG[@]}" --quiet \
  --out "$T/lean_cut"
opt_ok "$BIN" optimize --resume "$T/lean_cut" --quiet >/dev/null 2>"$T/err" \
  || fail "resume the laid-down run: $(cat "$T/err")"
cmp -s <(sed "s#$T/lean_cut#$T/lean_full#" "$T/lean_cut/params.json") "$T/lean_full/params.json" \
  && ok "the laid-down run resumes to the uninterrupted gait" \
  || fail "the resumed laid-down run differs from the uninterrupted one"
# mesh.lay_down=false: searched standing, with the note of a body that falls.
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --set mesh.lay_down=false \
  --out "$T/lean_up" >/dev/null 2>"$T/err" || fail "optimize standing: $(cat "$T/err")"
grep -q "note: left alone, this body falls over" "$T/err" && ! grep -q "lays it down" "$T/err" \
  && ok "mesh.lay_down=false: searched standing, the note says it falls" \
  || fail "mesh.lay_down=false: $(grep 'falls over' "$T/err")"
grep -Eq '"up":[[:space:]]*"\+y"' "$T/lean_up/config.json" && ok "mesh.lay_down=false keeps mesh.up +y" \
  || fail "mesh.lay_down=false changed mesh.up"
opt_ok "$BIN" optimize "$SRC/data/quadruped.mesh" "${SMALL[@]}" --out "$T/quad" >/dev/null \
  2>"$T/err" && ok "optimize on the quadruped" || fail "optimize on the quadruped: $(cat "$T/err")"
grep -q "falls over" "$T/err" && fail "the quadruped stands, yet drew the note" \
  || ok "no note for the quadruped"
grep -Eq '"lay_down":[[:space:]]*true' "$T/quad/config.json" && grep -Eq '"up":[[:space:]]*"\+y"' "$T/quad/config.json" \
  && ok "the quadruped keeps its pose" || fail "the quadruped's pose changed"
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --quiet --out "$T/lean_quiet" \
  >/dev/null 2>&1 || fail "optimize --quiet on the leaning body"
cmp -s "$T/lean/params.json" <(sed "s#$T/lean_quiet#$T/lean#" "$T/lean_quiet/params.json") \
  && ok "the passive rollout leaves the search's bits alone" \
  || fail "params.json differs with the passive rollout"
check "mesh.lay_down=maybe is refused" 2 "$BIN" optimize "$SRC/data/quadruped.mesh" \
  --set mesh.lay_down=maybe --out "$T/bad"
grep_err "the message names the key and the values" "key 'mesh.lay_down' must be a boolean"
[ -e "$T/bad" ] && fail "a refused run left $T/bad" || ok "a refused run writes nothing"
finish
