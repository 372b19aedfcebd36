#!/usr/bin/env bash
# cli_gait.sh BIN SRCDIR: the main job end to end. With a small budget on the bundled
# quadruped, the best gait moves the centre of mass along +x by at least half a body length
# and keeps J_align above 0.5, and what optimize reports agrees with its trajectory.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
json_num() { sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1" | head -1; }
"$BIN" optimize --quiet --seed 1 --set cmaes.generations=12 --out "$T/run" >/dev/null || { echo "FAIL: optimize"; exit 1; }
R=$T/run/result.json
disp=$(json_num "$R" displacement)
align=$(json_num "$R" J_align)
# Body length along x: the prepared quadruped's x extent, from the rest surface.
len=$(awk '$1=="v"{ if(min==""||$2<min)min=$2; if(max==""||$2>max)max=$2 } END{print max-min}' "$T/run/surface.obj")
# Displacement from the trajectory: last com_x minus first com_x (direction +x).
traj=$(awk -F, 'NR==2{x0=$3} END{print $3-x0}' "$T/run/trajectory.csv")
echo "body length $len, displacement $disp (trajectory $traj), J_align $align"
awk -v d="$disp" -v l="$len" -v a="$align" -v t="$traj" 'BEGIN{
  bad=0
  if (!(d >= 0.5*l)) { print "FAIL: displacement below half a body length"; bad=1 }
  if (!(a > 0.5)) { print "FAIL: J_align not above 0.5"; bad=1 }
  e = d - t; if (e < 0) e = -e
  if (!(e <= 1e-6*l)) { print "FAIL: result.json displacement disagrees with trajectory.csv"; bad=1 }
  exit bad }' || exit 1
echo "ok: the quadruped walks"
