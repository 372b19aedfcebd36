#!/usr/bin/env bash
# cli_terrain.sh BIN SRCDIR: terrain and integrator settings from the command line.
#  - bad inputs exit 2 with one message naming the place and the fix, and write nothing: a
#    malformed heightfield (file:line), a box with min > max, anisotropy < 1, a slope of 90°,
#    an unknown integrator, a slope together with a heightfield, the equality contact model on
#    a terrain, --full-space with BDF2, reference keys out of range;
#  - a heightfield named relative to its configuration file is found next to it;
#  - the slope and steps examples and BDF2 run (a few steps), the full-space reference runs on
#    a terrain and is judged against it, and the flat ground gives the same J with the new
#    keys at their defaults given explicitly.
. "$(dirname "$0")/lib_cli.sh" "$@"
TINY=(--set subspace.skinning_modes=3 --set actuation.modes=2 --set subspace.passive_clusters=3
      --set sim.steps=20)
cd "$T" || exit 1
bad() { # bad DESCRIPTION PATTERN ARGS...: exit 2, PATTERN on stderr, no output directory
  local desc=$1 pat=$2; shift 2
  rm -rf "$T/o"
  check "$desc" 2 "$BIN" simulate "${TINY[@]}" --out "$T/o" "$@"
  grep_err "$desc: message" "$pat"
  [ -e "$T/o" ] && fail "$desc: wrote $T/o" || true
}
printf '3 2 0 0 1 1\n0 0 0\n0 oops 0\n' > hf_bad.txt
bad "malformed heightfield" "hf_bad.txt:3: heightfield row 2, column 2" --set contact.heightfield=hf_bad.txt
printf '3 2 0 0 1 1\n0 0 0\n' > hf_short.txt
bad "short heightfield" "hf_short.txt:3: heightfield row 2, column 1: expected a height, got the end" \
  --set contact.heightfield=hf_short.txt
bad "missing heightfield" "nothere.txt: cannot open the heightfield" --set contact.heightfield=nothere.txt
bad "box with min > max" "contact.boxes\[0\]': min\[1\] = 0.5 is not below max\[1\] = 0.2" \
  --set 'contact.boxes=[{"min": [0, 0.5, 0], "max": [1, 0.2, 1]}]'
bad "box with an unknown member" "unknown member 'fricton'" \
  --set 'contact.boxes=[{"min": [0, 0, 0], "max": [1, 1, 1], "fricton": 1}]'
bad "anisotropy below 1" "contact.anisotropy' = 0.5 is out of range; valid: >= 1" --set contact.anisotropy=0.5
bad "slope of 90°" "contact.slope' = 90 is out of range; valid: in \[0, 90)" --set contact.slope=90
bad "unknown integrator" "sim.integrator' = \"rk4\" is invalid; valid: \"euler\" or \"bdf2\"" --set sim.integrator=rk4
printf '2 2 -5 -5 10 10\n0 0\n0 0\n' > hf_flat.txt
bad "slope and heightfield" "both set the ground" --set contact.slope=5 --set contact.heightfield=hf_flat.txt
bad "equality on a slope" "works on the flat ground only" --set contact.slope=5 --set contact.model=equality
bad "full space with BDF2" "integrates with backward Euler only" --set sim.integrator=bdf2 --full-space
bad "reference samples below -1" "valid: >= -1" --set reference.contact_samples=-2 --full-space
bad "reference acceleration above 20" "valid: in \[0, 20\]" --set reference.acceleration=30 --full-space
bad "no reference contact columns" "valid: >= 0" --set reference.contact_columns=-1 --full-space
check "too few reference contact columns" 1 "$BIN" simulate "${TINY[@]}" --set sim.steps=3 \
  --set reference.contact_columns=2 --full-space --out "$T/columns"
grep_err "too few reference contact columns: the fix" "raise reference.contact_columns"

# A heightfield next to its configuration, run from elsewhere.
mkdir -p cfgdir elsewhere
cp hf_flat.txt cfgdir/field.txt
echo '{"contact": {"heightfield": "field.txt"}}' > cfgdir/run.json
(cd elsewhere && check "heightfield next to the config" 0 "$BIN" simulate ../cfgdir/run.json "${TINY[@]}" --out "$T/hf")
grep -q '"heightfield":[[:space:]]*"../cfgdir/field.txt"' "$T/hf/config.json" \
  && ok "config.json records the heightfield's path" || fail "config.json: $(grep heightfield "$T/hf/config.json")"

# The examples and BDF2, briefly.
# Each ends with all its steps done and not failed; on the slope the passive body slides down:
# back along the objective's direction (the slope rises along it) and lower.
ran_all() { # ran_all DESCRIPTION RESULT.JSON: 20 steps done, not failed
  grep -q '"steps_done":[[:space:]]*20,' "$2" 2>/dev/null && grep -q '"failed":[[:space:]]*false' "$2" \
    && ok "$1: 20 steps, not failed" || fail "$1: $(grep -E 'steps_done|failed' "$2" 2>&1 | tr -d '\n')"
}
for e in slope steps; do
  check "examples/$e.json runs" 0 "$BIN" simulate "$SRC/examples/$e.json" "${TINY[@]}" --out "$T/$e"
  ran_all "examples/$e.json" "$T/$e/result.json"
done
disp=$(json_num "$T/slope/result.json" displacement) gain=$(json_num "$T/slope/result.json" height_gain)
awk -v d="$disp" -v g="$gain" 'BEGIN { exit !(d != "" && g != "" && d < -0.01 && g < -0.01) }' \
  && ok "the body slides down the slope: displacement $disp, height gain $gain" \
  || fail "the body does not slide down the slope: displacement '$disp', height gain '$gain'"
check "full-space reference on the steps" 0 "$BIN" simulate "$SRC/examples/steps.json" "${TINY[@]}" \
  --set sim.steps=10 --full-space --out "$T/steps_full"
grep -q '"full"' "$T/steps_full/fullspace.json" 2>/dev/null && ok "fullspace.json written" \
  || fail "no fullspace.json"
# The full-space rollout is judged against the slope too (it once was against y = 0: 16% of
# the extent "below ground" on a 10° slope at rest).
check "full-space reference on the slope" 0 "$BIN" simulate "${TINY[@]}" --set contact.slope=10 \
  --set sim.steps=30 --full-space --out "$T/slope_full"
grep_err "terrain contact of the reference on samples" "uses 512 samples"
pen=$(sed -n 's/^full_penetration //p' "$T/out")
awk -v p="$pen" 'BEGIN { exit !(p != "" && p < 0.005) }' && ok "full-space penetration on the slope: $pen" \
  || fail "full-space penetration on the slope: '$pen'"
check "bdf2 runs" 0 "$BIN" simulate "${TINY[@]}" --set sim.integrator=bdf2 --out "$T/bdf2"
ran_all "bdf2" "$T/bdf2/result.json"
grep -q '"integrator":[[:space:]]*"bdf2"' "$T/bdf2/config.json" && ok "config.json records bdf2" \
  || fail "config.json: $(grep integrator "$T/bdf2/config.json")"
# The new keys at their defaults, explicitly: the same J as without them.
check "defaults" 0 "$BIN" simulate "${TINY[@]}" --out "$T/d0"
check "defaults, explicit" 0 "$BIN" simulate "${TINY[@]}" --set sim.integrator=euler --set contact.slope=0 \
  --set contact.anisotropy=1 --set 'contact.boxes=[]' --set 'contact.heightfield=""' --out "$T/d1"
j0=$(json_num "$T/d0/result.json" J)
[ -n "$j0" ] && [ "$j0" = "$(json_num "$T/d1/result.json" J)" ] \
  && ok "explicit defaults give the same J" || fail "J differs: $(json_num "$T/d0/result.json" J) vs $(json_num "$T/d1/result.json" J)"
jb=$(json_num "$T/bdf2/result.json" J)
[ -n "$jb" ] && [ "$jb" != "$j0" ] && ok "bdf2 steps differently from backward Euler (J $jb vs $j0)" \
  || fail "bdf2 gives backward Euler's J: '$jb' vs '$j0'"
finish
