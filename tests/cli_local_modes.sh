#!/usr/bin/env bash
# cli_local_modes.sh BIN SRCDIR: localized actuation modes from the command line.
#  - actuation.local_modes replaces the global modes (config.json then says actuation.modes = 0
#    and loads back to the same modes); modes.json names each mode's region (−1 = global) and
#    writes mode_I.pc2 for every mode;
#  - with one region (regions.auto = 1: the whole body) local modes with weight 0 are the global
#    modes: same eigenvalues;
#  - on a body without regions (the quadruped labels every tet 0; a TetGen mesh without
#    attributes) local modes stop with exit 2 and name regions.auto and regions.file, before
#    any output;
#  - an optimized gait on local modes replays exactly from its params.json;
#  - bad settings exit 2 with messages that name the key.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh
evals() { tr -d '\n\t ' < "$1" | sed -n 's/.*"vibration_eigenvalues":\[\([^]]*\)\].*/\1/p'; }

check "global modes" 0 "$BIN" modes "$MESH" --out "$T/g" --set actuation.modes=3
check "local modes" 0 "$BIN" modes "$MESH" --out "$T/l" --set actuation.local_modes=3 \
  --set actuation.localization=0 --set regions.auto=1
tr -d '\n\t ' < "$T/l/modes.json" | grep -q '"mode_regions":\[0,0,0\],"regions":1' \
  && ok "modes.json: mode_regions and regions" || fail "modes.json lacks mode_regions/regions"
[ "$(evals "$T/g/modes.json")" = "$(evals "$T/l/modes.json")" ] \
  && ok "one region, weight 0: the global eigenvalues" || fail "local != global eigenvalues"
[ -s "$T/l/mode_2.pc2" ] && ok "mode_I.pc2 for local modes" || fail "no mode_2.pc2"
[ "$(json_num "$T/l/config.json" modes)" = 0 ] && ok "config.json: actuation.modes = 0" \
  || fail "config.json actuation.modes is not 0"
check "config.json loads back" 0 "$BIN" modes "$T/l/config.json" --out "$T/l2"
[ "$(evals "$T/l/modes.json")" = "$(evals "$T/l2/modes.json")" ] \
  && ok "config.json gives the same modes" || fail "config.json gives other modes"
tr -d '\n\t ' < "$T/g/modes.json" | grep -q '"mode_regions":\[-1,-1,-1\],"regions":0' \
  && ok "global modes: region -1" || fail "global modes' regions"

if opt_ok "$BIN" optimize "$MESH" --out "$T/o" --quiet --set actuation.local_modes=2 \
  --set regions.auto=1 --set cmaes.generations=3 --set cmaes.population=6 --set sim.steps=60 >/dev/null 2>"$T/err"; then
  ok "optimize on local modes"
  check "replay" 0 "$BIN" simulate "$T/o/params.json" --out "$T/r" --expect "$T/o/result.json" \
    --tolerance 1e-12
else
  fail "optimize on local modes"; cat "$T/err"
fi

# A sweep resolves the replacement as optimize does: its runs' config.json match, so a second
# sweep finds them complete.
cat > "$T/sweep.json" <<JSON
{"base": {"mesh": {"path": "$MESH"}, "sim": {"steps": 20}, "regions": {"auto": 1},
          "cmaes": {"population": 4, "generations": 1}},
 "grid": {"actuation.local_modes": [2]}, "seeds": [1], "out": "$T/sw"}
JSON
check "sweep over local modes" 0 "$BIN" sweep "$T/sweep.json"
check "sweep again" 0 "$BIN" sweep "$T/sweep.json"
if grep -q "complete, skipped" "$T/err" "$T/out"; then ok "second sweep skips the finished run"
else fail "second sweep did not recognize its run"; sed 's/^/  /' "$T/err" | head -3; fi

check "modes = 0 alone" 2 "$BIN" modes "$MESH" --out "$T/x" --set actuation.modes=0
grep_err "names local_modes" "actuation.local_modes"
check "negative weight" 2 "$BIN" modes "$MESH" --out "$T/x" --set actuation.local_modes=2 \
  --set actuation.localization=-1 --set regions.auto=1
grep_err "names the weight" "actuation.localization"
check "too many local modes" 2 "$BIN" modes "$MESH" --out "$T/x" --set actuation.local_modes=65
grep_err "names local_modes" "actuation.local_modes"
check "global + whole-body local" 2 "$BIN" modes "$MESH" --out "$T/x" \
  --set actuation.local_modes=2 --set actuation.modes=2 --set regions.auto=1
grep_err "says why" "repeat the global ones"

# No regions: never the whole body's modes in silence. The quadruped's MEDIT references are all
# 0; a TetGen mesh without attributes has none.
for m in "$MESH" "$SRC/tests/data/mesh_cube5.ele"; do
  check "local modes without regions: $(basename "$m")" 2 "$BIN" modes "$m" --out "$T/nr" \
    --set actuation.local_modes=2
  grep_err "names the fixes" "has no regions.*regions.auto=K.*regions.file=LABELS"
  [ -e "$T/nr" ] && fail "wrote $T/nr without regions"
done
grep_err "says what the file lacks" "carries no region labels"
check "optimize: local modes without regions" 2 "$BIN" optimize "$MESH" --out "$T/nro" \
  --set actuation.local_modes=1
grep_err "says the mesh's labels are all one" "labels every tet 0"
[ -e "$T/nro" ] && fail "optimize wrote $T/nro without regions"
check "automatic regions feed local modes" 0 "$BIN" modes "$MESH" --out "$T/ar" \
  --set actuation.local_modes=1 --set regions.auto=6
tr -d '\n\t ' < "$T/ar/modes.json" | grep -q '"region_source":"auto"' \
  && ok "regions.auto gives the local modes' regions" || fail "regions.auto: source"
finish
