#!/usr/bin/env bash
# cli_gait.sh BIN SRCDIR: the main job end to end. With the README demo's configuration and
# budget on the bundled quadruped, optimize finds a credible gait (exit 0, "found": true, every
# credibility limit met: on the ground, upright, not sunk, and it survives a nudge of its
# parameters) that moves the centre of mass along +x by a third of a body length within its 300
# steps (its 80-generation gaits go 0.38-0.57 body lengths in seeds 1-4) and keeps J_align above
# 0.5, and what optimize reports agrees with its trajectory.
. "$(dirname "$0")/lib_cli.sh" "$@"
"$BIN" optimize "$SRC/examples/quadruped_demo.json" --quiet --seed 4 \
  --out "$T/run" >/dev/null || { echo "FAIL: optimize found no credible gait (exit $?)"; exit 1; }
python3 - "$T/run/result.json" "$T/run/params.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2]))
c = r["credibility"]
ok = (r["found"] is True and p["found"] is True and c["credible"] is True and c["rise"] <= 0.25
      and c["airborne"] <= 0.25 and c["penetration"] <= 0.02 and c["up_min"] > 0.5
      and c["robustness"] >= 0.75)
print("credibility", c)
sys.exit(0 if ok else 1)
PY
R=$T/run/result.json
disp=$(json_num "$R" displacement)
align=$(json_num "$R" J_align)
# Body length along x: the prepared quadruped's x extent, from the rest surface.
len=$(awk '$1=="v"{ if(min==""||$2<min)min=$2; if(max==""||$2>max)max=$2 } END{print max-min}' "$T/run/surface.obj")
# Displacement from the trajectory: last com_x minus first com_x (direction +x).
traj=$(awk -F, 'NR==2{x0=$3} END{printf "%.17g", $3-x0}' "$T/run/trajectory.csv")
# The lowest the body's up axis got (column 11, up_y): it walked, it did not roll.
upmin=$(awk -F, 'NR>1{ if(m==""||$11<m)m=$11 } END{print m}' "$T/run/trajectory.csv")
echo "body length $len, displacement $disp (trajectory $traj), J_align $align, min up_y $upmin"
awk -v d="$disp" -v l="$len" -v a="$align" -v t="$traj" -v u="$upmin" 'BEGIN{
  bad=0
  if (!(d >= l/3)) { print "FAIL: displacement below a third of a body length"; bad=1 }
  if (!(a > 0.5)) { print "FAIL: J_align not above 0.5"; bad=1 }
  if (!(u >= a - 1e-6)) { print "FAIL: upright gate: min up_y below J_align"; bad=1 }
  if (!(u > 0.5)) { print "FAIL: the body rolled over"; bad=1 }
  e = d - t; if (e < 0) e = -e
  if (!(e <= 1e-6*l)) { print "FAIL: result.json displacement disagrees with trajectory.csv"; bad=1 }
  exit bad }' || exit 1
echo "ok: the quadruped walks"
