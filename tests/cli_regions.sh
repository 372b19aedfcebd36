#!/usr/bin/env bash
# cli_regions.sh BIN SRCDIR: body regions end to end. The three octopod examples (mesh labels
# with a slippery belly; a stiff body on soft, light legs; one localized mode per leg) each
# find a credible gait with their own budget; `modes` reports the octopod's nine regions and
# writes regions.ply; a label file and automatic regions are used, also as the regions of
# local modes (alone and after global modes; the cache follows the labels); and every bad
# region input exits 2 with a message naming the file, the line or the key, before any output
# is written.
. "$(dirname "$0")/lib_cli.sh" "$@"
cd "$SRC" || exit 1
# Their search, without the full-space validation (cli_rerank checks it, on the stiff body too).
for ex in octopod_slippery_belly octopod_stiff_body octopod_local_modes; do
  start=$(date +%s.%N)
  "$BIN" optimize "examples/$ex.json" --set reference.rerank=0 --quiet --out "$T/$ex" >/dev/null \
    2>"$T/err"
  code=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  if [ "$code" -ne 0 ]; then fail "$ex: optimize exited $code (no credible gait)"; continue; fi
  python3 - "$T/$ex/result.json" "$ex" "$secs" <<'PY' && ok "$ex walks credibly" || fail "$ex"
import json, sys
r = json.load(open(sys.argv[1])); c = r["credibility"]
print(f"{sys.argv[2]}: J {r['J']:.3f}, displacement {r['displacement']:.3f}, credible "
      f"{c['credible']}, robustness {c['robustness']}, {sys.argv[3]} s")
sys.exit(0 if r["found"] and c["credible"] and r["displacement"] > 0.3 else 1)
PY
done

# modes: the mesh's labels are the regions; regions.ply colours them.
check "modes on the octopod" 0 "$BIN" modes data/octopod.mesh --out "$T/modes"
grep -q '"regions":[[:space:]]*9,' "$T/modes/modes.json" || fail "modes.json: expected 9 regions"
grep -q '"region_source":[[:space:]]*"mesh"' "$T/modes/modes.json" || fail "modes.json: source"
[ -s "$T/modes/regions.ply" ] && ok "regions.ply written" || fail "no regions.ply"
grep -q "^regions: 9 (mesh)" "$T/out" || fail "modes does not print the regions"

check "info on the octopod" 0 "$BIN" info data/octopod.mesh
grep -q "^region labels     9 in the file: 0 1 2 3 4 5 6 7 8$" "$T/out" || fail "info: region labels"

# A label file per vertex (the octopod's legs by the sign of z, the body 0) and automatic
# regions, with materials for their labels.
awk '/^Vertices/{getline n; for(i=0;i<n;i++){getline; print ($2 > 0.29 ? ($3 < 0 ? 1 : 2) : 0)}; exit}' \
  data/octopod.mesh >"$T/sides.txt"
check "a per-vertex label file with materials" 0 "$BIN" modes data/octopod.mesh --out "$T/file" \
  --set regions.file="$T/sides.txt" --set 'material.regions={"1": {"mu": 3e6}, "2": {"friction": 0.2}}'
grep -q '"regions":[[:space:]]*3,' "$T/file/modes.json" || fail "label file: expected 3 regions"
check "automatic regions" 0 "$BIN" modes data/octopod.mesh --out "$T/auto" --set regions.auto=12
grep -q '"region_source":[[:space:]]*"auto"' "$T/auto/modes.json" || fail "auto: source"

# Local modes on the regions. The example's modes: one per region (mode_regions, one entry per
# mode), each moving outside its region by less than 0.15 of its motion (docs/method.md).
check "modes of octopod_local_modes" 0 "$BIN" modes examples/octopod_local_modes.json --out "$T/lm"
python3 - "$T/lm/modes.json" <<'PY' && ok "local modes: one per region, outside shares < 0.15" \
  || fail "local modes of the example"
import json, sys
d = json.load(open(sys.argv[1])); reg = d["mode_regions"]; f = d["outside_fractions"]
print(f"outside shares {min(f):.3f}..{max(f):.3f}, regions {reg}")
sys.exit(0 if d["regions"] == 9 and reg == list(range(9)) and len(f) == len(reg)
         and len(d["vibration_eigenvalues"]) == 9 and max(f) < 0.15 else 1)
PY
# 4 global modes followed by 2 per region; automatic regions feed the local modes too.
check "global and local modes" 0 "$BIN" modes data/octopod.mesh --out "$T/gl" \
  --set actuation.modes=4 --set actuation.local_modes=2
tr -d '\n\t ' <"$T/gl/modes.json" | grep -q '"mode_regions":\[-1,-1,-1,-1,0,0,1,1,2,2,3,3,4,4,5,5,6,6,7,7,8,8\],"regions":9' \
  && ok "4 global + 2 × 9 local modes" || fail "global and local modes: mode_regions"
check "local modes on automatic regions" 0 "$BIN" modes data/octopod.mesh --out "$T/al" \
  --set actuation.local_modes=1 --set regions.auto=12
python3 - "$T/al/modes.json" <<'PY' && ok "automatic regions are the local modes' regions" \
  || fail "local modes on automatic regions"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["region_source"] == "auto" and d["mode_regions"] == list(range(d["regions"]))
         and d["regions"] >= 12 else 1)
PY
# The precompute cache follows the labels: another labelling of the same mesh recomputes.
check "local modes into a cache" 0 "$BIN" modes data/octopod.mesh --out "$T/c1" \
  --set actuation.local_modes=1 --set subspace.cache="$T/lm.cache"
check "the same labels from the cache" 0 "$BIN" modes data/octopod.mesh --out "$T/c2" \
  --set actuation.local_modes=1 --set subspace.cache="$T/lm.cache"
grep -q '"from_cache":[[:space:]]*true' "$T/c2/modes.json" && ok "cache used" || fail "cache not used"
check "other labels, the same cache" 0 "$BIN" modes data/octopod.mesh --out "$T/c3" \
  --set actuation.local_modes=1 --set subspace.cache="$T/lm.cache" --set regions.file="$T/sides.txt"
grep -q '"from_cache":[[:space:]]*false' "$T/c3/modes.json" && grep -q '"regions":[[:space:]]*3,' \
  "$T/c3/modes.json" && ok "other labels: recomputed" || fail "other labels taken from the cache"

# Bad input: exit 2, a message naming the place and the fix, nothing written.
printf '0\n1\n' >"$T/short.txt"
printf '0\n1\nleg\n' >"$T/word.txt"
bad() { # DESCRIPTION PATTERN SETTINGS...
  local desc=$1 pat=$2; shift 2
  local out=$T/bad_$((++nbad))
  check "$desc" 2 "$BIN" optimize data/octopod.mesh --out "$out" --set cmaes.generations=1 "$@"
  grep_err "$desc: message" "$pat"
  [ -e "$out/params.json" ] && fail "$desc: wrote params.json"
}
nbad=0
bad "a missing label file" "regions.file: .*nothere.txt" --set regions.file="$T/nothere.txt"
bad "a label file of the wrong length" "short.txt: 2 labels; expected one per tet (1008) or one per vertex (420)" \
  --set regions.file="$T/short.txt"
bad "a label that is not an integer" "word.txt:3: expected one integer label" --set regions.file="$T/word.txt"
bad "a material for a label the body lacks" "material.regions gives region 12.*labelled 0, 1, 2, 3, 4, 5, 6, 7, 8" \
  --set 'material.regions={"12": {"mu": 2e6}}'
bad "a label file and automatic regions together" "both given" --set regions.file="$T/short.txt" \
  --set regions.auto=3
bad "a negative region stiffness" "material.regions.0.mu' = -1 is out of range" \
  --set 'material.regions={"0": {"mu": -1}}'
bad "a region label that is not an integer" "region labels are integers" \
  --set 'material.regions={"legs": {"mu": 2e6}}'
bad "materials without regions" "the body has no regions" --set mesh.path=tests/data/mesh_cube5.ele \
  --set 'material.regions={"0": {"mu": 2e6}}'
finish
