#!/usr/bin/env bash
# cli_rerank.sh BIN SRCDIR: reference.rerank = K replays up to K candidates in the full-space
# reference before optimize returns one. On the bundled quadruped: result.json's "rerank" block
# lists at least 2 candidates, the chosen one has the lowest full-space J among those whose
# reduced rollout is credible, params.json is that candidate, the "transfer" block is its
# replay (reported without reference.check: the validation measured it), `simulate
# --full-space params.json` computes the same full-space J, and 1 and 2 threads give the same
# bits. Bad values exit 2 naming the key.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=4 --set sim.steps=80
       --set actuation.modes=3 --set reference.rerank=3)

opt_ok "$BIN" optimize "${SMALL[@]}" --out "$T/run" >"$T/out" 2>"$T/err" \
  && ok "optimize with reference.rerank=3" || fail "optimize with reference.rerank=3: $(cat "$T/err")"
grep -q 'modalloco: rerank: returning candidate' "$T/err" && ok "stderr names the chosen candidate" \
  || fail "stderr: $(cat "$T/err")"
[ "$(grep -c '^modalloco: rerank [0-9]*/[0-9]* ' "$T/err")" -ge 2 ] \
  && ok "stderr has a line per candidate" || fail "stderr: $(cat "$T/err")"
check "the chosen gait in simulate --full-space" 0 "$BIN" simulate "$T/run/params.json" \
  --full-space --out "$T/full" --quiet
python3 - "$T/run/result.json" "$T/run/params.json" "$T/full/fullspace.json" <<'PY' \
  && ok "the chosen candidate holds best, and simulate reproduces its full-space J" \
  || fail "rerank block, params.json or simulate disagree"
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2])); f = json.load(open(sys.argv[3]))
b = r["rerank"]; c = b["candidates"]; k = b["chosen"]
assert len(c) >= 2, c
assert len({json.dumps(x["J_reduced"]) + json.dumps(x["J_full"]) for x in c}) == len(c), c
cred = [x for x in c if x["credible"]]
if cred:
    assert c[k]["credible"], b
    assert c[k]["J_full"] == min(x["J_full"] for x in cred), b
else:
    assert k == 0, b
ch = c[k]
assert p["J"] == ch["J_reduced"], (p["J"], ch)
assert p["gait"] == ("best" if k == 0 else ch["source"]) or k == 0, (p["gait"], ch)
t = r["transfer"]
assert t["J"] == ch["J_full"] and t["fraction"] == ch["transfer_fraction"], (t, ch)
assert p["config"]["reference"]["rerank"] == 3, p["config"]["reference"]
full = f["full"]
assert abs(full["J"] - ch["J_full"]) <= 1e-12 * max(1, abs(ch["J_full"])), (full["J"], ch)
PY
# The same choice and bits for any thread count (the replays run in one process).
for t in 1 2; do
  opt_ok "$BIN" optimize "${SMALL[@]}" --threads $t --quiet --out "$T/t$t" >/dev/null 2>"$T/err" \
    || fail "optimize --threads $t: $(cat "$T/err")"
done
cmp -s "$T/t1/params.json" "$T/t2/params.json" && ok "params.json identical for 1 and 2 threads" \
  || fail "params.json differs between 1 and 2 threads"
python3 - "$T/t1/result.json" "$T/t2/result.json" <<'PY' && ok "rerank block identical for 1 and 2 threads" \
  || fail "rerank block differs between 1 and 2 threads"
import json, sys
a, b = (json.load(open(f))["rerank"] for f in sys.argv[1:])
for x in (a, b):
    for c in x["candidates"]:
        c.pop("seconds")
assert a == b, (a, b)
PY
opt_ok "$BIN" optimize --set cmaes.population=6 --set cmaes.generations=4 --set sim.steps=80 \
  --set actuation.modes=3 --quiet --out "$T/plain" >/dev/null 2>"$T/err" \
  && ok "optimize without the key" || fail "optimize without the key: $(cat "$T/err")"
grep -q '"rerank":' "$T/plain/result.json" && fail "rerank block in result.json by default" \
  || ok "no rerank block by default"
grep -q '"transfer":' "$T/plain/result.json" && fail "transfer block by default" \
  || ok "no transfer block by default"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["config"]["reference"]["rerank"] == 0' \
  "$T/plain/params.json" && ok "params.json records reference.rerank = 0" \
  || fail "params.json lacks reference.rerank"
for bad in -1 33 1.5 '"x"'; do
  check "reference.rerank=$bad is refused" 2 "$BIN" optimize "${SMALL[@]}" \
    --set "reference.rerank=$bad" --out "$T/bad"
  grep_err "names the key" "reference.rerank"
done
finish
