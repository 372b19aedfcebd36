#!/usr/bin/env bash
# cli_rerank.sh BIN SRCDIR: reference.rerank = K replays up to K candidates in the full-space
# reference before optimize returns one. On the bundled quadruped: result.json's "rerank" block
# lists at least 2 candidates, the chosen one has the lowest full-space J among those whose
# reduced rollout is credible, params.json is that candidate, the "transfer" block is its
# replay (reported without reference.check: the validation measured it), `simulate
# --full-space params.json` computes the same full-space J, and 1 and 2 threads give the same
# bits; a replay that does not converge or fails is not chosen, and a failed one leaves the job
# its outputs. The default, -1, replays 16 candidates on
# the quadruped and none on the cat, and says so.
# Bad values exit 2 naming the key.
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
cmp -s "$T/t1/result.json" "$T/t2/result.json" && ok "result.json identical for 1 and 2 threads" \
  || fail "result.json differs between 1 and 2 threads"

# A replay that stops at the iteration guard is no verdict: with 2 iterations a step no replay
# converges, so the gait returned without the validation is returned, and both say so.
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.max_iterations=2 --out "$T/guard" \
  >/dev/null 2>"$T/err" || fail "optimize with reference.max_iterations=2: $(cat "$T/err")"
grep -q 'returning candidate 1 (returned), as no candidate is credible reduced with a converged' \
  "$T/err" && grep -q 'warning: the full-space reference did not converge' "$T/err" \
  && ok "unconverged replays: candidate 1 returned, with a warning" || fail "stderr: $(cat "$T/err")"
python3 - "$T/guard/result.json" <<'PY' && ok "unconverged replays: converged false in result.json" \
  || fail "result.json of the unconverged replays"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["rerank"]["chosen"] == 0 and len(r["rerank"]["candidates"]) >= 2, r["rerank"]
assert all(c["converged"] is False for c in r["rerank"]["candidates"]), r["rerank"]
assert r["transfer"]["converged"] is False, r["transfer"]
PY

# A replay that stops with an error (here the reference's contact columns run out at once, as
# on a large body lying flat) is no verdict either, and never costs the job its results: the
# outputs are written, the exit code is the reduced model's, every candidate and the "transfer"
# block carry the error, which names the key to raise; the same for reference.check alone.
for how in "reference.rerank=3" "reference.rerank=0 --set reference.check=1"; do
  rm -rf "$T/cols"
  # shellcheck disable=SC2086 # $how is two words for two settings
  opt_ok "$BIN" optimize "${SMALL[@]}" --set $how --set reference.contact_columns=2 \
    --out "$T/cols" >/dev/null 2>"$T/err" && [ -s "$T/cols/params.json" ] \
    && ok "$how: a failed replay leaves the job its outputs" || fail "$how, 2 columns: $(cat "$T/err")"
  grep -q "warning: the gait's full-space replay failed, so it is returned unchecked: .*raise reference.contact_columns (now 2)" \
    "$T/err" && ok "$how: stderr warns and names the fix" || fail "$how stderr: $(cat "$T/err")"
  python3 - "$T/cols/result.json" <<'PY' && ok "$how: result.json carries the error" \
    || fail "$how: result.json of the failed replays"
import json, sys
r = json.load(open(sys.argv[1]))
assert "reference.contact_columns" in r["transfer"]["error"] and "fraction" not in r["transfer"], r
for c in r.get("rerank", {}).get("candidates", []):
    assert c["converged"] is False and "contact columns" in c["error"], c
PY
done

# reference.rerank = -1, the default, chooses the count from the body: the bundled quadruped's
# 816 tets x 80 steps fit 16 candidates in 8e6 tet-steps.
opt_ok "$BIN" optimize --set cmaes.population=6 --set cmaes.generations=4 --set sim.steps=80 \
  --set actuation.modes=3 --out "$T/plain" >/dev/null 2>"$T/err" \
  && ok "optimize without the key" || fail "optimize without the key: $(cat "$T/err")"
grep -q 'reference.rerank = -1 chooses 16 for 816 tets x 80 steps' "$T/err" \
  && ok "stderr says the default chose 16 candidates" || fail "stderr: $(cat "$T/err")"
python3 - "$T/plain/result.json" "$T/plain/params.json" <<'PY' \
  && ok "by default: a rerank block of 2-16 candidates, its choice's transfer, -1 recorded" \
  || fail "default rerank block or params.json"
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
c = r["rerank"]["candidates"]
assert 2 <= len(c) <= 16, len(c)
assert r["transfer"]["J"] == c[r["rerank"]["chosen"]]["J_full"], r["transfer"]
assert p["config"]["reference"]["rerank"] == -1, p["config"]["reference"]
PY
# The default caps each step of its replays at 30 iterations: on the octopod with a ten times
# stiffer body the reference needs hundreds, so its replays stop there, are no verdict, and the
# gait returned without the validation is returned with a warning.
opt_ok "$BIN" optimize "$SRC/examples/octopod_stiff_body.json" --set cmaes.generations=2 \
  --set sim.steps=100 --out "$T/stiff" >/dev/null 2>"$T/err" \
  || fail "optimize the stiff octopod: $(cat "$T/err")"
grep -q 'not converged: [0-9]* steps at 30 iterations' "$T/err" \
  && grep -q 'returning candidate 1 (returned), as no candidate' "$T/err" \
  && grep -q 'warning: the full-space reference did not converge' "$T/err" \
  && ok "the default's replays stop at 30 iterations a step" || fail "stiff octopod: $(cat "$T/err")"

# --dry-run adds the replays to its estimate: 16 x 816 tets x 80 steps at 0.9 us a tet-step, 8
# rounds of 2 side by side on 2 threads.
"$BIN" optimize --set sim.steps=80 --set actuation.modes=3 --threads 2 --dry-run >"$T/dry" 2>&1 \
  && grep -q '^full-space validation up to 16 candidates, about 0.5 s' "$T/dry" \
  && ok "--dry-run estimates the validation" || fail "--dry-run: $(cat "$T/dry")"
# One candidate replays on both threads: the cat's 37,070 tets x 300 steps at 0.9 us a tet-step,
# a second thread adding 0.7 of the first's speed.
"$BIN" optimize "$SRC/data/cat.off.gz" --threads 2 --dry-run >"$T/dry" 2>&1 \
  && grep -q '^full-space validation up to 1 candidate, about 5.9 s' "$T/dry" \
  && ok "--dry-run estimates the cat's check on two threads" || fail "--dry-run: $(cat "$T/dry")"
# A body too large for 8e6 tet-steps still gets its returned gait checked while one replay stays
# under 30e6: the cat's 37,070 tets x 220 steps (8.2e6) are replayed once, x 810 steps (30.03e6)
# not at all.
CAT=("$BIN" optimize "$SRC/data/cat.off.gz" --set cmaes.population=4 --set cmaes.generations=1
  --set actuation.modes=3 --set cmaes.robust_samples=0)
opt_ok "${CAT[@]}" --set sim.steps=220 --out "$T/cat" >/dev/null 2>"$T/err" \
  && ok "optimize the cat without the key" || fail "optimize the cat: $(cat "$T/err")"
grep -q 'replayed once in the full-space reference before it is returned (reference.rerank = -1 chooses 1 for 37070 tets x 220 steps)' "$T/err" \
  && ok "stderr says the default checks the cat's gait" || fail "stderr: $(cat "$T/err")"
python3 - "$T/cat/result.json" <<'PY' \
  && ok "the cat's check: one candidate, the returned one, its transfer in result.json" \
  || fail "the cat's rerank or transfer block"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["rerank"]["candidates"]
assert len(c) == 1 and c[0]["source"] == "returned" and r["rerank"]["chosen"] == 0, r["rerank"]
assert r["transfer"]["J"] == c[0]["J_full"] and r["transfer"]["contact_vertices"] > 0, r["transfer"]
PY
opt_ok "${CAT[@]}" --set sim.steps=810 --out "$T/cat2" >/dev/null 2>"$T/err" \
  && ok "optimize the cat at 810 steps" || fail "optimize the cat: $(cat "$T/err")"
grep -q 'reference.rerank = -1 chooses none for 37070 tets x 810 steps' "$T/err" \
  && ok "stderr says the default replays none on the longer rollouts" || fail "stderr: $(cat "$T/err")"
grep -q -e '"rerank":' -e '"transfer":' "$T/cat2/result.json" \
  && fail "a rerank or transfer block on the cat at 810 steps" || ok "no replay at 810 steps"
for bad in -2 33 1.5 '"x"'; do
  check "reference.rerank=$bad is refused" 2 "$BIN" optimize "${SMALL[@]}" \
    --set "reference.rerank=$bad" --out "$T/bad"
  grep_err "names the key" "reference.rerank"
done
finish
