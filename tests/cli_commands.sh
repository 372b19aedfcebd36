#!/usr/bin/env bash
# cli_commands.sh BIN SRCDIR: the command-line contract (`modalloco --help`, the README's tour):
# exit codes, help, info --json keys, config errors that name the key, modes/simulate outputs.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh

check "--help exits 0" 0 "$BIN" --help
check "--version exits 0" 0 "$BIN" --version
grep -q "modalloco" "$T/out" || { echo "FAIL: --version prints the name"; fails=$((fails + 1)); }
check "no command is a usage error" 2 "$BIN"
check "unknown command" 2 "$BIN" frobnicate
check "unknown option" 2 "$BIN" info "$MESH" --bogus
check "info needs a mesh" 2 "$BIN" info
for c in info modes simulate optimize; do check "$c --help" 0 "$BIN" $c --help; done

check "info --json" 0 "$BIN" info "$MESH" --json
for key in vertices tets boundary_faces volume bbox_min bbox_max flipped_tets components; do
  grep -q "\"$key\"" "$T/out" || { echo "FAIL: info --json lacks $key"; fails=$((fails + 1)); }
done
check "missing mesh file" 2 "$BIN" info "$T/nope.mesh"
grep_err "missing mesh names the file" "nope.mesh"

echo '{"sim": {"step": 3}}' > "$T/typo.json"
check "unknown config key" 2 "$BIN" simulate "$T/typo.json" --out "$T/x"
grep_err "suggests the closest key" "sim.steps"
echo '{"sim": {"steps": "many"}}' > "$T/type.json"
check "wrong type" 2 "$BIN" simulate "$T/type.json" --out "$T/x"
grep_err "names the key" "sim.steps"
printf '{"sim": {\n "steps": 3,\n}' > "$T/bad.json"
check "malformed JSON" 2 "$BIN" simulate "$T/bad.json" --out "$T/x"
grep_err "names the file" "bad.json"
check "out-of-range --set" 2 "$BIN" optimize "$MESH" --set cmaes.population=1 --out "$T/x"
grep_err "names the setting" "cmaes.population"
check "zero direction" 2 "$BIN" optimize "$MESH" --set objective.direction=[0,0,0] --out "$T/x"
grep_err "names the setting" "objective.direction"
check "bad --seed" 2 "$BIN" optimize "$MESH" --seed abc
check "bad --threads" 2 "$BIN" optimize "$MESH" --threads -3

check "modes" 0 "$BIN" modes "$MESH" --out "$T/modes" --set actuation.modes=4
for f in modes.json config.json surface.obj mode_0.pc2 mode_3.pc2 weight_1.ply clusters.ply subspace.vtk; do
  [ -s "$T/modes/$f" ] || { echo "FAIL: modes did not write $f"; fails=$((fails + 1)); }
done
check "modes into a directory of another run" 2 "$BIN" modes "$MESH" --out "$T/modes" --set actuation.modes=5
grep_err "refuses to overwrite another run" "another"
check "... unless --force" 0 "$BIN" modes "$MESH" --out "$T/modes" --set actuation.modes=5 --force
# --force did overwrite: the run now has 5 modes (mode_4.pc2, modes.json and config.json say so).
[ -s "$T/modes/mode_4.pc2" ] && ok "--force wrote the new run's mode_4.pc2" || fail "no mode_4.pc2 after --force"
grep -q '"modes":[[:space:]]*5' "$T/modes/config.json" && ok "--force replaced config.json" \
  || fail "config.json after --force: $(grep '"modes"' "$T/modes/config.json")"
# The files after modes.json are written side by side on the threads: on one thread they are
# the same bytes.
check "modes on one thread" 0 "$BIN" modes "$MESH" --out "$T/modes1" --set actuation.modes=5 \
  --set parallel.threads=1
for f in "$T"/modes/*; do
  b=$(basename "$f")
  case "$b" in modes.json | config.json) continue ;; esac
  cmp -s "$f" "$T/modes1/$b" && ok "modes on one thread: the same $b" \
    || fail "modes on one thread: $b differs"
done

cat > "$T/gait.json" <<JSON
{"mesh": {"path": "$MESH"}, "sim": {"steps": 50},
 "actuation": {"parameters": [{"mode": 0, "sinusoids": [{"amplitude": 1e6, "period": 0.3, "phase": 0}]}]}}
JSON
check "amplitude beyond its bound is simulated" 0 "$BIN" simulate "$T/gait.json" --out "$T/sim"
grep_err "warns that it is outside the search box" "outside the optimizer's search box"
grep_err "names the parameter" "amplitude"

# The step's fused multiply-adds emulated (as on a CPU without FMA): the same outputs, and a
# note that says why it is slower.
if grep -qw fma /proc/cpuinfo 2>/dev/null && grep -q "FMA instruction" "$T/err"; then
  fail "the note about emulated FMA on a CPU with FMA, without MLC_NO_FMA"
fi
check "simulate with MLC_NO_FMA=1" 0 env MLC_NO_FMA=1 "$BIN" simulate "$T/gait.json" --out "$T/sim_nofma"
grep_err "says the FMA instruction is emulated" "emulates it, with the same results"
for f in result.json trajectory.csv animation.pc2; do
  cmp -s "$T/sim/$f" "$T/sim_nofma/$f" && ok "emulated FMA: $f byte-identical" \
    || fail "emulated FMA: $f differs"
done

check "optimize --dry-run" 0 "$BIN" optimize "$MESH" --dry-run --out "$T/dry" --set cmaes.generations=3
grep -q "estimated wall time" "$T/out" || { echo "FAIL: --dry-run prints an estimate"; fails=$((fails + 1)); }
grep -q "parameters 24" "$T/out" || { echo "FAIL: --dry-run prints the problem size"; fails=$((fails + 1)); }
[ ! -e "$T/dry" ] || { echo "FAIL: --dry-run wrote an output directory"; fails=$((fails + 1)); }
# Beside the upper bound (every candidate pays its 8 replays), the typical time, where only the
# improving pay: inside its range, which lies below the bound; without replays no such line.
awk '/^estimated wall time/ {e = $4} /^typical wall time/ {t = $4; split($6, r, "-"); lo = substr(r[1], 2); hi = r[2]}
     END {exit !(t != "" && lo + 0 <= t + 0 && t + 0 <= hi + 0 && hi + 0 < e + 0)}' "$T/out" \
  && ok "--dry-run: typical time within its range, below the bound" \
  || fail "--dry-run typical time: $(grep 'wall time' "$T/out")"
check "optimize --dry-run without replays" 0 "$BIN" optimize "$MESH" --dry-run \
  --set cmaes.generations=3 --set cmaes.robust_samples=0
grep -q "typical wall time" "$T/out" && fail "a typical time without replays" \
  || ok "no typical time without replays: the estimate is the job's"
check "--dry-run still validates" 2 "$BIN" optimize "$MESH" --dry-run --set cmaes.population=1

finish
