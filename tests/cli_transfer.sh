#!/usr/bin/env bash
# cli_transfer.sh BIN SRCDIR: reference.check = 1 makes optimize replay its gait in the
# full-space reference: result.json's "transfer" block holds the same full-space travel and
# credibility as `simulate params.json --full-space` computes for the same gait (one judge for
# both commands), its fraction is that travel over the reduced one, and the run's stdout
# says it. Without the key nothing is replayed.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=3 --set sim.steps=80
       --set actuation.modes=3 --quiet)

opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.check=1 --out "$T/run" >"$T/out" 2>"$T/err" \
  && ok "optimize with reference.check=1" || fail "optimize with reference.check=1: $(cat "$T/err")"
grep -q '^transfer_fraction ' "$T/out" && ok "stdout has transfer_fraction" \
  || fail "stdout: $(cat "$T/out")"
check "the same gait in simulate --full-space" 0 "$BIN" simulate "$T/run/params.json" \
  --full-space --out "$T/full" --quiet
python3 - "$T/run/result.json" "$T/full/fullspace.json" <<'PY' && ok "transfer block = simulate's full-space rollout" || fail "transfer block differs"
import json, sys
r = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
t = r["transfer"]
assert t["model"] == "fullspace", t
full, red = f["full"], f["reduced"]
assert abs(t["displacement"] - full["displacement"]) <= 1e-12 * max(1, abs(full["displacement"])), (t, full)
assert abs(red["displacement"] - r["displacement"]) <= 1e-12 * max(1, abs(r["displacement"])), (red, r)
assert abs(t["fraction"] - full["displacement"] / red["displacement"]) <= 1e-9 * max(1, abs(t["fraction"])), t
for k in ("rise", "airborne", "penetration", "up_min", "credible"):
    assert t["credibility"][k] == full["credibility"][k], (k, t["credibility"], full["credibility"])
PY
opt_ok "$BIN" optimize "${SMALL[@]}" --out "$T/plain" >"$T/out" 2>"$T/err" \
  && ok "optimize without the key" || fail "optimize without the key: $(cat "$T/err")"
grep -q '"transfer"' "$T/plain/result.json" && fail "transfer block without reference.check" \
  || ok "no transfer block by default"
check "reference.check=2 is refused" 2 "$BIN" optimize "${SMALL[@]}" --set reference.check=2 \
  --out "$T/bad"
grep_err "names the key" "reference.check"
finish
