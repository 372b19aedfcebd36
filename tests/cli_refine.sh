#!/usr/bin/env bash
# cli_refine.sh BIN SRCDIR: reference.refine. When the returned gait does not hold in the
# full-space reference, optimize searches once more with twice the skinning modes in OUT/finer
# and returns the gait that does better there (holding first, then credible, then the lower
# full-space J).
# Forced here with a threshold no gait reaches (100 times its travel) on the sample body:
# OUT/finer is a complete run whose config.json repeats it alone; result.json's "refine" block
# holds both verdicts and names the gait returned by that rule; OUT's params.json and
# result.json are that gait's and replay; stdout carries one set of results; an interruption in
# the second search resumes to the uninterrupted result; reference.refine=0 searches once, and
# so does a task; a second search that fails leaves the first gait.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=3 --set sim.steps=120
       --set actuation.modes=3 --set subspace.skinning_modes=4 --threads 1)

# Seeds 1 and 3 of this search: the first returns the first gait, the second the finer one
# (asserted below, so that both ways through are tested).
outcomes=""
for seed in 1 3; do
run=run$seed
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=100 --seed "$seed" --out "$T/$run" >"$T/out" \
  2>"$T/err" && ok "optimize with reference.refine=100" \
  || fail "optimize with reference.refine=100: $(cat "$T/err")"
grep -q "searching once more in a finer model, subspace.skinning_modes=8, in $T/$run/finer" "$T/err" \
  && ok "stderr says it searches again, in which model and where" \
  || fail "no note of the second search: $(grep -v '^gen ' "$T/err")"
python3 - "$T/$run" <<'PY' && ok "OUT/finer: the same configuration with w doubled and refine 0" \
  || fail "OUT/finer/config.json is not the first search's with w doubled"
import json, sys
d = sys.argv[1]
a, b = json.load(open(d + "/config.json")), json.load(open(d + "/finer/config.json"))
assert b["subspace"]["skinning_modes"] == 2 * a["subspace"]["skinning_modes"] == 8, b["subspace"]
assert b["reference"]["refine"] == 0 and a["reference"]["refine"] == 100, (a["reference"], b["reference"])
assert b["output"]["dir"] == d + "/finer", b["output"]
for k in a:
    if k in ("subspace", "reference", "output"):
        continue
    assert a[k] == b[k], k
PY
# The rule: the finer gait is returned when it holds in the reference (credible, keeping the
# threshold's share of its travel) and the first does not; or both alike, when it is credible
# there and the first is not; or both alike, when its full-space J is lower.
python3 - "$T/$run/result.json" <<'PY' && ok "result.json names the gait the rule returns" \
  || fail "the refine block's choice breaks the rule"
import json, sys
r = json.load(open(sys.argv[1]))["refine"]
first, finer = r["searches"]
assert (first["dir"], finer["dir"], first["skinning_modes"], finer["skinning_modes"]) == (".", "finer", 4, 8), r
assert r["threshold"] == 100
assert "fraction" in first and "J_full" in first, first
holds = lambda s: s["credible_full"] and s["fraction"] >= r["threshold"]
if finer.get("exit") == 0 and finer.get("found") and "J_full" in finer:
    if holds(finer) != holds(first):
        want = "finer" if holds(finer) else "."
    elif finer["credible_full"] != first["credible_full"]:
        want = "finer" if finer["credible_full"] else "."
    else:
        want = "finer" if finer["J_full"] < first["J_full"] else "."
else:
    want = "."
assert r["returned"] == want, (r["returned"], want, r)
print("returned", want, file=sys.stderr)
PY
returned=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["refine"]["returned"])' "$T/$run/result.json")
[ "$(grep -c '^J ' "$T/out")" = 1 ] && grep -q "^refined $([ "$returned" = finer ] && echo finer || echo first)$" "$T/out" \
  && ok "stdout: one set of results, and which search's" || fail "stdout: $(cat "$T/out")"
J=$(awk '$1 == "J" {print $2}' "$T/out")
python3 - "$T/$run/params.json" "$J" <<'PY' && ok "stdout's J is params.json's" || fail "stdout's J is not the returned gait's"
import json, sys
assert abs(json.load(open(sys.argv[1]))["J"] - float(sys.argv[2])) <= 1e-8 * max(1, abs(float(sys.argv[2])))
PY
if [ "$returned" = finer ]; then
  cmp -s "$T/$run/params.json" "$T/$run/finer/params.json" && cmp -s "$T/$run/trajectory.csv" "$T/$run/finer/trajectory.csv" \
    && cmp -s "$T/$run/animation.pc2" "$T/$run/finer/animation.pc2" \
    && ok "OUT holds the finer search's gait and rollout" || fail "OUT's files are not the finer gait's"
fi
check "OUT/params.json replays to OUT/result.json" 0 "$BIN" simulate "$T/$run/params.json" \
  --expect "$T/$run/result.json" --out "$T/replay$seed" --quiet
# The second search alone, from its own config.json: the same gait.
opt_ok "$BIN" optimize "$T/$run/finer/config.json" --out "$T/alone$seed" --quiet >/dev/null 2>&1 \
  || fail "optimize OUT/finer/config.json"
cmp -s <(sed "s#$T/alone$seed#$T/$run/finer#" "$T/alone$seed/params.json") "$T/$run/finer/params.json" \
  && ok "OUT/finer/config.json repeats the second search" || fail "OUT/finer/config.json gives another gait"
# The first search alone (reference.refine=0): OUT/finer is not made, and when the first gait
# is the one returned, it is this run's.
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=0 --seed "$seed" --out "$T/once$seed" >"$T/out" 2>"$T/err" \
  || fail "optimize with reference.refine=0"
[ ! -e "$T/once$seed/finer" ] && ! grep -q "^refined" "$T/out" && ! grep -q '"refine":' "$T/once$seed/result.json" \
  && ok "reference.refine=0: one search" || fail "reference.refine=0 still searched twice"
if [ "$returned" = . ]; then
  python3 - "$T/once$seed/params.json" "$T/$run/params.json" <<'PY' \
    && ok "the first gait returned is the single search's" || fail "the first gait differs from the single search's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    del d["config"]["reference"]["refine"]
assert a == b
PY
fi
outcomes="$outcomes $returned"
done
[ "$outcomes" = " . finer" ] && ok "seed 1 returns the first gait, seed 3 the finer one" \
  || fail "the seeds no longer cover both outcomes ($outcomes): choose others"
# Interrupted in the second search, the run resumes to the uninterrupted result.
LONG=(--set cmaes.population=6 --set cmaes.generations=10 --set sim.steps=120
      --set actuation.modes=3 --set subspace.skinning_modes=4 --threads 1 --set reference.refine=100 --quiet)
opt_ok "$BIN" optimize "${LONG[@]}" --out "$T/full" >"$T/full.out" 2>&1 || fail "optimize, 10 generations"
interrupt_after 4 "$T/cut/finer" "$BIN" optimize "${LONG[@]}" --out "$T/cut"
rc=$?
[ "$rc" = 130 ] && [ -f "$T/cut/finer/checkpoint.bin" ] && [ -f "$T/cut/params.json" ] \
  && ok "interrupted in the second search: both checkpoints kept" || fail "no checkpoint of the second search"
opt_ok "$BIN" optimize --resume "$T/cut" --quiet >"$T/cut.out" 2>"$T/err" || fail "resume: $(cat "$T/err")"
cmp -s <(sed "s#$T/cut#$T/full#g" "$T/cut/params.json") "$T/full/params.json" \
  && cmp -s "$T/cut/result.json" "$T/full/result.json" && cmp -s "$T/cut.out" "$T/full.out" \
  && ok "the resumed run returns the uninterrupted gait" || fail "the resumed run differs"
# Tasks are judged by their full-space J, not by a share of travel: no second search.
opt_ok "$BIN" optimize "$SRC/examples/turn.json" "${SMALL[@]}" --set reference.refine=100 \
  --out "$T/turn" >"$T/out" 2>"$T/err" || fail "optimize the turn example: $(cat "$T/err")"
[ ! -e "$T/turn/finer" ] && ! grep -q "^refined" "$T/out" && ok "a turn is not searched for twice" \
  || fail "the turn example was searched for twice"
# A second search that cannot run (OUT/finer is a file) is a warning: the first gait is returned.
mkdir -p "$T/blocked" && : > "$T/blocked/finer"
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=100 --seed 3 --out "$T/blocked" \
  >"$T/out" 2>"$T/err" && ok "a failing second search leaves the job standing" \
  || fail "a failing second search failed the job: $(cat "$T/err")"
grep_err "the failure is a warning" "warning: the search in the finer model failed"
python3 - "$T/blocked/result.json" <<'PY' && ok "result.json: the second search's error, the first gait returned" \
  || fail "result.json does not record the failed second search"
import json, sys
r = json.load(open(sys.argv[1]))["refine"]
assert r["returned"] == "." and "error" in r["searches"][1], r
PY
grep -q "^refined first$" "$T/out" && ok "stdout: refined first" || fail "stdout: $(cat "$T/out")"
check "reference.refine=-1 is refused" 2 "$BIN" optimize --set reference.refine=-1 --out "$T/bad"
grep_err "the message names the key and its range" "reference.refine"
[ -e "$T/bad" ] && fail "a refused run left $T/bad" || ok "a refused run writes nothing"
finish
