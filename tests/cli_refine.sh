#!/usr/bin/env bash
# cli_refine.sh BIN SRCDIR: reference.refine. When the returned gait does not hold in the
# full-space reference, optimize searches once more with twice the skinning modes, from that
# gait with 3/10 of the generations, in OUT/finer; when that gait does not hold either, once more in
# the same model from the box's centre with the whole budget, in OUT/finer_centre. It returns
# the gait that does best there (holding first, then credible, then the lower full-space J).
# Forced here with a threshold no gait reaches (100 times its travel) on the sample body, so
# every search runs: each further directory is a complete run whose config.json repeats it
# alone (the second's cmaes.start is the first gait); result.json's "refine" block holds every
# verdict and names the gait returned by that rule; OUT's params.json and result.json are that
# gait's and replay; stdout carries one set of results; an interruption in either further
# search resumes to the uninterrupted result (a further search that ends with no gain, going
# backward, runs once more with whole losses in its own directory, as its config.json alone
# does: cli_whole_losses.sh); reference.refine=0 searches once, and so does a
# task; a further search that fails leaves the others' best; cmaes.start is checked.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=3 --set sim.steps=120
       --set actuation.modes=3 --set subspace.skinning_modes=4 --threads 1)

# Seeds 1, 3 and 11 of this search return the first gait, the one from the centre and the one
# from the first gait (asserted below, so that every way through is tested).
outcomes=""
for seed in 1 3 11; do
run=run$seed
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=100 --seed "$seed" --out "$T/$run" >"$T/out" \
  2>"$T/err" && ok "optimize with reference.refine=100" \
  || fail "optimize with reference.refine=100: $(cat "$T/err")"
grep -q "searching once more in a finer model, subspace.skinning_modes=8, from that gait with 1 generations, in $T/$run/finer " "$T/err" \
  && grep -q "searching the finer model from the centre of the box with 3 generations, in $T/$run/finer_centre$" "$T/err" \
  && ok "stderr says it searches again, in which model, from where and where to" \
  || fail "no note of the further searches: $(grep -v '^gen ' "$T/err")"
python3 - "$T/$run" <<'PY' && ok "OUT/finer and OUT/finer_centre: the first configuration in the finer model, from the first gait and from the centre" \
  || fail "a further search's config.json is not the first search's in the finer model"
import json, math, sys
d = sys.argv[1]
a = json.load(open(d + "/config.json"))
for sub, start, gens in (("finer", "gait", 1), ("finer_centre", [], 3)):
    b = json.load(open(d + "/" + sub + "/config.json"))
    assert b["subspace"]["skinning_modes"] == 2 * a["subspace"]["skinning_modes"] == 8, b["subspace"]
    assert b["reference"]["refine"] == 0 and a["reference"]["refine"] == 100, (a["reference"], b["reference"])
    assert b["output"]["dir"] == d + "/" + sub, b["output"]
    assert b["cmaes"]["generations"] == gens, b["cmaes"]
    for k in a:
        if k in ("subspace", "reference", "output", "cmaes"):
            continue
        assert a[k] == b[k], k
    for k in a["cmaes"]:
        if k not in ("generations", "start"):
            assert a["cmaes"][k] == b["cmaes"][k], k
    u = b["cmaes"]["start"]
    assert u == [] if start == [] else len(u) == 18 and all(0 <= x <= 1 for x in u), u
PY
# The rule: the finer gait is returned when it holds in the reference (credible, keeping the
# threshold's share of its travel and of its J) and the first does not; or both alike, when it is credible
# there and the first is not; or both alike, when its full-space J is lower.
python3 - "$T/$run/result.json" <<'PY' && ok "result.json names the gait the rule returns" \
  || fail "the refine block's choice breaks the rule"
import json, sys
r = json.load(open(sys.argv[1]))["refine"]
first, finer, centre = r["searches"]
assert [(s["dir"], s["skinning_modes"], s["start"], s["generations"]) for s in r["searches"]] == [
    (".", 4, "centre", 3), ("finer", 8, "first gait", 1), ("finer_centre", 8, "centre", 3)], r
assert r["threshold"] == 100
assert "fraction" in first and "kept" in first and "J_full" in first, first
# holding: credible there, keeping the threshold's share of its travel and of its J ("kept",
# the lesser of the two shares: no more than the travel's)
assert all(s["kept"] <= s["fraction"] for s in r["searches"] if "kept" in s), r
holds = lambda s: s["credible_full"] and s["kept"] >= r["threshold"]
def better(a, b):  # b does better than a
    if holds(b) != holds(a):
        return holds(b)
    if b["credible_full"] != a["credible_full"]:
        return b["credible_full"]
    return b["J_full"] < a["J_full"]
best = first
for s in (finer, centre):
    if s.get("exit") == 0 and s.get("found") and "J_full" in s and better(best, s):
        best = s
assert r["returned"] == best["dir"], (r["returned"], best["dir"], r)
print("returned", best["dir"], file=sys.stderr)
PY
returned=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["refine"]["returned"])' "$T/$run/result.json")
[ "$(grep -c '^J ' "$T/out")" = 1 ] && grep -q "^refined $([ "$returned" = . ] && echo first || echo "$returned")$" "$T/out" \
  && ok "stdout: one set of results, and which search's" || fail "stdout: $(cat "$T/out")"
J=$(awk '$1 == "J" {print $2}' "$T/out")
python3 - "$T/$run/params.json" "$J" <<'PY' && ok "stdout's J is params.json's" || fail "stdout's J is not the returned gait's"
import json, sys
assert abs(json.load(open(sys.argv[1]))["J"] - float(sys.argv[2])) <= 1e-8 * max(1, abs(float(sys.argv[2])))
PY
if [ "$returned" != . ]; then
  cmp -s "$T/$run/params.json" "$T/$run/$returned/params.json" && cmp -s "$T/$run/trajectory.csv" "$T/$run/$returned/trajectory.csv" \
    && cmp -s "$T/$run/animation.pc2" "$T/$run/$returned/animation.pc2" \
    && ok "OUT holds the returned search's gait and rollout" || fail "OUT's files are not the $returned gait's"
fi
check "OUT/params.json replays to OUT/result.json" 0 "$BIN" simulate "$T/$run/params.json" \
  --expect "$T/$run/result.json" --out "$T/replay$seed" --quiet
# Each further search alone, from its own config.json: the same gait.
for sub in finer finer_centre; do
opt_ok "$BIN" optimize "$T/$run/$sub/config.json" --out "$T/alone$seed" --force --quiet >/dev/null 2>&1 \
  || fail "optimize OUT/$sub/config.json"
cmp -s <(sed "s#$T/alone$seed#$T/$run/$sub#" "$T/alone$seed/params.json") "$T/$run/$sub/params.json" \
  && ok "OUT/$sub/config.json repeats its search" || fail "OUT/$sub/config.json gives another gait"
done
# The first search alone (reference.refine=0): OUT/finer is not made, and when the first gait
# is the one returned, it is this run's.
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=0 --seed "$seed" --out "$T/once$seed" >"$T/out" 2>"$T/err" \
  || fail "optimize with reference.refine=0"
[ ! -e "$T/once$seed/finer" ] && [ ! -e "$T/once$seed/finer_centre" ] && ! grep -q "^refined" "$T/out" && ! grep -q '"refine":' "$T/once$seed/result.json" \
  && ok "reference.refine=0: one search" || fail "reference.refine=0 still searched twice"
python3 - "$T/$run/finer/config.json" "$T/once$seed/params.json" <<'PY' \
  && ok "OUT/finer starts at the first gait" || fail "OUT/finer's cmaes.start is not the first gait"
import json, math, sys
b, p = (json.load(open(f)) for f in sys.argv[1:])
# u holds (A, T, theta) per mode and sinusoid: T = T_min + u (T_max - T_min), theta likewise.
tmin, tmax = b["actuation"]["period_range"]
pmin, pmax = b["actuation"]["phase_range"]
u = b["cmaes"]["start"]
sig = [s for m in p["parameters"] for s in m["sinusoids"]]
assert len(u) == 3 * len(sig) == 18, (len(u), len(sig))
for i, s in enumerate(sig):
    assert math.isclose(s["period"], tmin + u[3 * i + 1] * (tmax - tmin), rel_tol=1e-12), (i, s, u)
    assert math.isclose(s["phase"], pmin + u[3 * i + 2] * (pmax - pmin), rel_tol=1e-12, abs_tol=1e-15), (i, s, u)
PY
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
[ "$outcomes" = " . finer_centre finer" ] && ok "seeds 1, 3 and 11 return the first gait, the centre's and the first gait's finer one" \
  || fail "the seeds no longer cover every outcome ($outcomes): choose others"
# Interrupted in either further search, the run resumes to the uninterrupted result.
LONG=(--set cmaes.population=6 --set cmaes.generations=30 --set sim.steps=120
      --set actuation.modes=3 --set subspace.skinning_modes=4 --threads 1 --set reference.refine=100 --quiet)
opt_ok "$BIN" optimize "${LONG[@]}" --out "$T/full" >"$T/full.out" 2>&1 || fail "optimize, 30 generations"
for sub in finer finer_centre; do
rm -rf "$T/cut"
interrupt_after 4 "$T/cut/$sub" "$BIN" optimize "${LONG[@]}" --out "$T/cut"
rc=$?
[ "$rc" = 130 ] && [ -f "$T/cut/$sub/checkpoint.bin" ] && [ -f "$T/cut/params.json" ] \
  && ok "interrupted in OUT/$sub: the checkpoints kept" || fail "no checkpoint of the search in OUT/$sub"
opt_ok "$BIN" optimize --resume "$T/cut" --quiet >"$T/cut.out" 2>"$T/err" || fail "resume: $(cat "$T/err")"
cmp -s <(sed "s#$T/cut#$T/full#g" "$T/cut/params.json") "$T/full/params.json" \
  && cmp -s "$T/cut/result.json" "$T/full/result.json" && cmp -s "$T/cut.out" "$T/full.out" \
  && ok "resumed after an interruption in OUT/$sub: the uninterrupted gait" || fail "the run resumed in OUT/$sub differs"
done
# Tasks are judged by their full-space J, not by a share of travel: no second search.
opt_ok "$BIN" optimize "$SRC/examples/turn.json" "${SMALL[@]}" --set reference.refine=100 \
  --out "$T/turn" >"$T/out" 2>"$T/err" || fail "optimize the turn example: $(cat "$T/err")"
[ ! -e "$T/turn/finer" ] && ! grep -q "^refined" "$T/out" && ok "a turn is not searched for twice" \
  || fail "the turn example was searched for twice"
# A further search that cannot run (OUT/finer is a file) is a warning: the best of the others
# is returned (here the third search still runs, from the centre).
mkdir -p "$T/blocked" && : > "$T/blocked/finer"
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.refine=100 --seed 1 --out "$T/blocked" \
  >"$T/out" 2>"$T/err" && ok "a failing further search leaves the job standing" \
  || fail "a failing further search failed the job: $(cat "$T/err")"
grep_err "the failure is a warning" "warning: a further search failed"
python3 - "$T/blocked/result.json" "$T/run1/result.json" <<'PY' && ok "result.json: the failed search's error, the others' verdicts unchanged" \
  || fail "result.json does not record the failed search"
import json, sys
r, full = (json.load(open(p))["refine"] for p in sys.argv[1:])
assert [s["dir"] for s in r["searches"]] == [".", "finer", "finer_centre"], r
assert "error" in r["searches"][1] and "exit" not in r["searches"][1], r
assert r["searches"][0] == full["searches"][0] and r["searches"][2] == full["searches"][2], (r, full)
assert r["returned"] in (".", "finer_centre") and r["returned"] != "finer", r
PY
# cmaes.start: the search's first mean. With a vanishing step size the gait returned is that
# point: every period T_min + 0.25 (T_max - T_min) = 0.3 s, against 0.4 s from the centre.
for start in 0.25 ""; do
  if [ -n "$start" ]; then st="[$(python3 -c 'print(",".join(["0.25"] * 18))')]"; want=0.3; else st="[]"; want=0.4; fi
  opt_ok "$BIN" optimize "${SMALL[@]}" --set cmaes.sigma0=1e-9 --set cmaes.generations=1 \
    --set "cmaes.start=$st" --set reference.refine=0 --out "$T/start$start" --quiet >/dev/null 2>"$T/err" \
    || fail "optimize with cmaes.start=$st: $(cat "$T/err")"
  python3 - "$T/start$start/params.json" "$want" <<'PY' && ok "cmaes.start=${st:0:12}...: every period $want s" \
    || fail "cmaes.start=$st does not start the search there"
import json, sys
p = json.load(open(sys.argv[1]))
T = [s["period"] for m in p["parameters"] for s in m["sinusoids"]]
assert len(T) == 6 and all(abs(t - float(sys.argv[2])) < 1e-6 for t in T), T
PY
done
check "cmaes.start with too few values is refused" 2 "$BIN" optimize "${SMALL[@]}" --set 'cmaes.start=[0.5,0.5]' --out "$T/bad"
grep_err "the message names the key and the count wanted" "key 'cmaes.start' has 2 values, but this search has 18 parameters"
[ -e "$T/bad" ] && fail "a refused run left $T/bad" || ok "a refused run writes nothing"
check "cmaes.start outside [0, 1] is refused" 2 "$BIN" optimize "${SMALL[@]}" --set 'cmaes.start=[0.5,1.5]' --out "$T/bad"
grep_err "the message names the value and the range" "1.5 is out of range; valid: .. or one value in .0, 1. per parameter"
check "reference.refine=-1 is refused" 2 "$BIN" optimize --set reference.refine=-1 --out "$T/bad"
grep_err "the message names the key and its range" "reference.refine"
[ -e "$T/bad" ] && fail "a refused run left $T/bad" || ok "a refused run writes nothing"
finish
