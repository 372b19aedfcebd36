#!/usr/bin/env bash
# cli_voxel_bodies.sh BIN SRCDIR: every body scripts/voxel_bodies.py makes (the held-out zoo of
# scripts/bench_zoo.sh) reads as one clean body: `info` accepts it (exit 0: conforming, no
# flipped tets, one part joined by faces, a boundary), finds the tets the script says it wrote
# and the voxels' volume (6 tets a voxel, 0.05 a side).
. "$(dirname "$0")/lib_cli.sh" "$@"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

bodies=$(python3 "$SRC/scripts/voxel_bodies.py" 2>&1 | sed -n 's/.*{\(.*\)}.*/\1/p' | tr , ' ')
[ -n "$bodies" ] || fail "no body list in voxel_bodies.py's usage"
for b in $bodies; do
  said=$(python3 "$SRC/scripts/voxel_bodies.py" "$b" "$T/$b.mesh") || { fail "$b: not written"; continue; }
  tets=$(echo "$said" | sed -n 's/.*, \([0-9]*\) tets.*/\1/p')
  if ! "$BIN" info "$T/$b.mesh" --set mesh.normalize=false >"$T/$b.info" 2>&1; then
    fail "$b: info refuses it: $(cat "$T/$b.info")"
    continue
  fi
  python3 - "$T/$b.info" "$tets" <<'PY' && ok "$b: one clean body of $tets tets" || fail "$b: $(cat "$T/$b.info")"
import sys
info = dict(l.split(None, 1) if " " in l else (l, "") for l in open(sys.argv[1]).read().splitlines())
tets = int(sys.argv[2])
get = lambda k: next(v.strip() for key, v in info.items() if key == k)
assert int(get("tets")) == tets, (get("tets"), tets)
assert get("components") == "1", get("components")
assert int(get("boundary").split()[-1]) >= 4, get("boundary")
assert int(get("flipped").split()[-1]) == 0
vol = float(get("volume"))
assert abs(vol - tets / 6 * 0.05 ** 3) <= 1e-9 * vol, (vol, tets)
PY
done
finish
