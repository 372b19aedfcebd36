#!/usr/bin/env bash
# cli_regions.sh BIN SRCDIR: body regions end to end. The two octopod examples (mesh labels with
# a slippery belly; a stiff body on soft, light legs) each find a credible gait with their own
# budget; `modes` reports the octopod's nine regions and writes regions.ply; a label file and
# automatic regions are used; and every bad region input exits 2 with a message naming the
# file, the line or the key, before any output is written.
. "$(dirname "$0")/lib_cli.sh" "$@"
cd "$SRC" || exit 1
for ex in octopod_slippery_belly octopod_stiff_body; do
  start=$(date +%s.%N)
  "$BIN" optimize "examples/$ex.json" --quiet --out "$T/$ex" >/dev/null 2>"$T/err"
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
