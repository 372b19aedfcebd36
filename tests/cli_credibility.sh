#!/usr/bin/env bash
# cli_credibility.sh BIN SRCDIR: result.json of optimize and simulate carries the credibility
# block, optimize reports "found" and exits 3 (outputs still written) when no credible gait can
# exist: without ground contact the body falls through the ground plane, so every gait sinks
# far below it whatever the contact model or the optimizer does. simulate only warns (exit 0).
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=2 --set sim.steps=60
       --set actuation.modes=3 --set reference.rerank=0 --quiet)
block() { sed -n '/"credibility"/,/}/p' "$1" | sed 's/},$/}/'; }

check "optimize with no ground exits 3" 3 "$BIN" optimize "${SMALL[@]}" \
  --set contact.enabled=false --out "$T/fall"
grep_err "says it found none" "no credible gait found"
cp "$T/out" "$T/fall.out"
for f in params.json history.csv trajectory.csv surface.obj animation.pc2 result.json; do
  [ -s "$T/fall/$f" ] || fail "exit 3 but $f not written"
done
for f in result.json params.json; do
  grep -Eq '"found":[[:space:]]*false' "$T/fall/$f" && ok "$f says \"found\": false" \
    || fail "$f lacks \"found\": false"
done
grep -q '^found false$' "$T/fall.out" && grep -q '^credible false$' "$T/fall.out" \
  && grep -q '^penetration ' "$T/fall.out" && ok "the summary prints the block and found" \
  || fail "summary: $(cat "$T/fall.out")"
R=$T/fall/result.json
block "$R" | grep -Eq '"credible":[[:space:]]*false' && ok "result.json: credible false" \
  || fail "result.json block: $(block "$R")"
vals=""
for k in rise airborne penetration up_min robustness; do
  v=$(block "$R" | sed -n "s/^[[:space:]]*\"$k\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p")
  [ -n "$v" ] || fail "credibility.$k missing"
  vals="$vals $v"
done
echo "rise airborne penetration up_min robustness:$vals"
# Values in their ranges, and the fall is what makes it incredible.
echo "$vals" | awk '{ bad = 0
  if (!($1 >= 0)) bad = 1; if (!($2 >= 0 && $2 <= 1)) bad = 1
  if (!($3 > 0.02)) bad = 1; if (!($4 >= -1 && $4 <= 1)) bad = 1
  if (!($5 >= 0 && $5 <= 1 && $5 * 8 == int($5 * 8))) bad = 1
  exit bad }' && ok "measures in range, penetration beyond the limit" || fail "measures:$vals"

# simulate replays it: same block (the same rollout, and replays bit-identical), a warning,
# exit 0, and no "found" (that is optimize's).
check "simulate of a non-credible gait exits 0" 0 "$BIN" simulate "$T/fall/params.json" \
  --out "$T/replay"
grep_err "warns" "not credible"
diff <(block "$R") <(block "$T/replay/result.json") >/dev/null && ok "simulate reproduces the block" \
  || fail "blocks differ: $(block "$T/replay/result.json")"
grep -q '"found"' "$T/replay/result.json" && fail "simulate wrote found" || ok "simulate writes no found"

# --full-space judges the full-space rollout too (robustness: the reduced model's); it falls
# through the plane as well.
check "simulate --full-space" 0 "$BIN" simulate "$T/fall/params.json" --out "$T/full" --full-space
F=$T/full/fullspace.json
grep -q '"surface vertices"' "$F" && grep -q '"columns_solved"' "$F" \
  && grep -q '"columns":[[:space:]]*[1-9]' "$F" \
  && ok "the reference's contact covers every surface vertex" \
  || fail "fullspace.json: the reference's contact is not on every surface vertex"
fpen=$(sed -n '/"full"/,$p' "$F" | sed -n 's/^[[:space:]]*"penetration":[[:space:]]*\([-0-9.eE+]*\).*/\1/p' | head -1)
frob=$(sed -n '/"full"/,$p' "$F" | sed -n 's/^[[:space:]]*"robustness":[[:space:]]*\([-0-9.eE+]*\).*/\1/p' | head -1)
[ "$(grep -c '"credibility"' "$F")" -eq 2 ] && grep -q '^full_credible false$' "$T/out" \
  && awk -v p="$fpen" 'BEGIN{exit !(p > 0.02)}' && [ "$frob" = "$(json_num "$R" robustness)" ] \
  && ok "fullspace.json judges both rollouts (full penetration $fpen)" \
  || fail "fullspace.json credibility: penetration '$fpen' robustness '$frob'"
# The reference iterates each step to its tolerance and says how it went.
grep -q '"iterations_mean"' "$F" && grep -q '"guard_steps"' "$F" \
  && grep -q '^full_iterations_max [1-9]' "$T/out" \
  && ok "fullspace.json reports the reference's convergence" \
  || fail "fullspace.json lacks the convergence block"

# With the ground: the block does not depend on the thread count.
opt_ok "$BIN" optimize "${SMALL[@]}" --threads 1 --out "$T/t1" >/dev/null 2>&1 || fail "optimize --threads 1"
opt_ok "$BIN" optimize "${SMALL[@]}" --threads 2 --out "$T/t2" >/dev/null 2>&1 || fail "optimize --threads 2"
cmp -s "$T/t1/result.json" "$T/t2/result.json" && block "$T/t1/result.json" | grep -q robustness \
  && ok "result.json (credibility included) identical for 1 and 2 threads" \
  || fail "result.json differs between thread counts"

# The help names exit code 3.
"$BIN" optimize --help | grep -q "exit.* 3\|3 .*credible" && ok "optimize --help documents exit 3" \
  || fail "optimize --help does not mention exit code 3"
finish
