#!/usr/bin/env bash
# bench_zoo.sh: the defaults on a zoo of bodies. Every bundled character, with no setting but its
# walking direction (and the hand's up axis), three seeds each: what a user gets on a mesh of
# their own. Per job: J, the credibility block of result.json (rise, airborne, penetration of the
# deepest surface vertex, up_min, robustness to a nudge of the parameters), the exit code, the
# wall time of the whole job (tetrahedralization and precompute included), and the gait replayed
# in the full-space reference: its travel as a share of the reduced travel, whether it went the
# same way, its full-space J (the reduced J is what the optimizer saw; the full-space J is
# what held) and whether the full-space rollout is itself credible (a gait that travels by
# tumbling over keeps its travel but not its stance); and whether the search turned objective.whole_losses on itself (params.json on,
# config.json off: it found no gain in a quarter of its generations, most of them going
# backward).
#
#   scripts/bench_zoo.sh [BUILD_DIR]         (default BUILD_DIR: build-perf, then build)
#
# Environment:
#   ZOO_TMP        scratch directory (default /tmp/modalloco-zoo); outside the repo
#   ZOO_SEEDS      seeds (default "1 2 3")
#   ZOO_BODIES     bodies (default: the bundled ones below), e.g. "cat spot"; also "elephant seal
#                  starfish couch scorpion dog frog", voxel bodies the defaults were not chosen on, made
#                  by scripts/voxel_bodies.py into $ZOO_TMP/bodies; "seal2" etc. are the same
#                  bodies with every voxel cut in 8, at the paper's sizes (22k-86k tets)
#   ZOO_SET        extra settings for every job, e.g. "subspace.contact_samples=128 cmaes.generations=100"
#                  (to compare a candidate default against the shipped ones)
#   ZOO_FULLSPACE  "all" (default): replay every gait in the full-space reference; "first": the
#                  first seed's only; "0": none. A job whose result.json has a "transfer" block
#                  (ZOO_SET with reference.check=1 or reference.rerank=K) is not replayed again.
#   ZOO_THREADS    threads per job (default 2)
# Output: one line per job and a summary table on stdout; runs stay in $ZOO_TMP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench_zoo.sh: no built modalloco" >&2; exit 2; }
BIN=$BUILD/modalloco
TMP=${ZOO_TMP:-/tmp/modalloco-zoo}
SEEDS=${ZOO_SEEDS:-"1 2 3"}
BODIES=${ZOO_BODIES:-"blub quadruped octopod penguin critter cat hand octopus spot"}
FULL=${ZOO_FULLSPACE:-all}
THREADS=${ZOO_THREADS:-2}
export OPENBLAS_NUM_THREADS=1
case "$TMP/" in "$ROOT"/*) echo "bench_zoo.sh: ZOO_TMP must be outside the repository" >&2; exit 2 ;; esac
command -v python3 >/dev/null || { echo "bench_zoo.sh: needs python3" >&2; exit 2; }
mkdir -p "$TMP"

body_args() { # body -> mesh and the settings a user would give: direction, up axis
    case $1 in
    blub) echo "$ROOT/data/blub.off.gz" ;;
    quadruped) echo "$ROOT/data/quadruped.mesh" ;;
    octopod) echo "$ROOT/data/octopod.mesh" ;;
    penguin) echo "$ROOT/data/penguin.off.gz" ;;
    critter) echo "$ROOT/data/critter.mesh" ;;
    cat) echo "$ROOT/data/cat.off.gz" ;;
    hand) echo "$ROOT/data/hand.off.gz mesh.up=+z" ;;
    octopus) echo "$ROOT/data/octopus.mesh.gz" ;;
    spot) echo "$ROOT/data/spot.off.gz objective.direction=[0,0,-1]" ;;
    elephant | seal | starfish | couch | scorpion | dog | frog) # not bundled: scripts/voxel_bodies.py
        [ -f "$TMP/bodies/$1.mesh" ] || { mkdir -p "$TMP/bodies" &&
            python3 "$ROOT/scripts/voxel_bodies.py" "$1" "$TMP/bodies/$1.mesh" >/dev/null; }
        echo "$TMP/bodies/$1.mesh" ;;
    elephant2 | seal2 | starfish2 | couch2 | scorpion2 | dog2 | frog2) # the same, every voxel cut in 8
        [ -f "$TMP/bodies/$1.mesh" ] || { mkdir -p "$TMP/bodies" &&
            python3 "$ROOT/scripts/voxel_bodies.py" "${1%2}" "$TMP/bodies/$1.mesh" --refine 2 \
                >/dev/null; }
        echo "$TMP/bodies/$1.mesh" ;;
    *) echo "bench_zoo.sh: unknown body $1" >&2; exit 2 ;;
    esac
}

RESULTS=$TMP/results.tsv
: >"$RESULTS"
echo "seeds $SEEDS, $THREADS threads, $(nproc) cores, settings: ${ZOO_SET:-defaults}, $(date -u +%Y-%m-%dT%H:%MZ)"
for body in $BODIES; do
    read -r mesh settings <<<"$(body_args "$body")"
    sets=()
    for s in $settings ${ZOO_SET:-}; do sets+=(--set "$s"); done
    n=0
    for seed in $SEEDS; do
        n=$((n + 1))
        out=$TMP/$body-$seed
        rc=0
        t0=$(date +%s.%N)
        "$BIN" optimize "$mesh" "${sets[@]}" --seed "$seed" --threads "$THREADS" --out "$out" \
            --force --quiet >"$out.log" 2>&1 || rc=$?
        t1=$(date +%s.%N)
        full=""
        # A job that replayed its own gait (reference.check or reference.rerank) has its
        # "transfer" block already; the others are replayed here.
        if [ -f "$out/params.json" ] && ! grep -q '"transfer":' "$out/result.json" 2>/dev/null &&
            { [ "$FULL" = all ] || { [ "$FULL" = first ] && [ $n = 1 ]; }; }; then
            "$BIN" simulate "$out/params.json" --full-space --out "$out-full" \
                --set parallel.threads="$THREADS" --set reference.contact_samples=0 --force \
            >"$out-full.log" 2>&1 || true
            full=$out-full/fullspace.json
        fi
        python3 - "$out/result.json" "$body" "$seed" "$rc" "$t0" "$t1" "$full" >>"$RESULTS" <<'PY'
import json, os, sys
f, body, seed, rc, t0, t1, full = sys.argv[1:]
if not os.path.exists(f):
    print("\t".join([body, seed, rc] + ["nan"] * 7 + ["False", "%.1f" % (float(t1) - float(t0)), "-", "-", "-", "-", "-", "-"]))
    sys.exit(0)
r = json.load(open(f)); c = r["credibility"]
share, same, fullJ, fullcred, Jshare = "-", "-", "-", "-", "-"
if "transfer" in r:
    fr = r["transfer"]["fraction"]
    share, same, fullJ = "%.2f" % fr, str(fr > 0), "%.3f" % r["transfer"]["J"]
    fullcred = str(r["transfer"]["credibility"]["credible"])
    Jshare = "%.2f" % (r["transfer"]["J"] / r["J"]) if r["J"] < 0 else "1.00"
elif full and os.path.exists(full):
    d = json.load(open(full))
    red, fu = d["reduced"]["displacement"], d["full"]["displacement"]
    share = "%.2f" % (fu / red) if red else "nan"
    same = str(red * fu > 0)
    fullJ = "%.3f" % d["full"]["J"]
    fullcred = str(d["full"]["credibility"]["credible"])
    Jshare = "%.2f" % (d["full"]["J"] / d["reduced"]["J"]) if d["reduced"]["J"] < 0 else "1.00"
def whole_losses(name):  # objective.whole_losses in the run's params.json or config.json
    path = os.path.join(os.path.dirname(f), name)
    if not os.path.exists(path):
        return False
    d = json.load(open(path))
    return bool((d["config"] if name == "params.json" else d)["objective"]["whole_losses"])
switched = "yes" if whole_losses("params.json") and not whole_losses("config.json") else "-"
print("\t".join(str(v) for v in [body, seed, rc, "%.3f" % r["J"], "%.3f" % r["displacement"],
      "%.3f" % c["rise"], "%.3f" % c["airborne"], "%.4f" % c["penetration"],
      "%.3f" % c["up_min"], "%.3f" % c["robustness"], c["credible"],
      "%.1f" % (float(t1) - float(t0)), share, same, fullJ, switched, fullcred, Jshare]))
PY
        tail -1 "$RESULTS"
    done
done

echo
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
hdr = ["body", "seed", "exit", "J", "displacement", "rise", "airborne", "penetration", "up_min",
       "robustness", "credible", "s", "full/reduced", "same way", "full-space J",
       "switched to whole losses", "credible in full space", "full/reduced J"]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for r in rows:
    print("| " + " | ".join(r) + " |")
print()
print("| body | median J | credible | full/reduced travel per seed | credible in full space | median s |")
print("|---|---|---|---|---|---|")
for b in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == b]
    print("| %s | %.3f | %d/%d | %s | %d/%d | %.1f |" % (
        b, statistics.median(float(r[3]) for r in rs), sum(r[10] == "True" for r in rs), len(rs),
        " ".join(r[12] for r in rs), sum(len(r) > 16 and r[16] == "True" for r in rs), len(rs),
        statistics.median(float(r[11]) for r in rs)))
Js = [float(r[3]) for r in rows]
cred = sum(r[10] == "True" for r in rows)
shares = [float(r[12]) for r in rows if r[12] not in ("-", "nan")]
held = sum(s >= 0.5 for s in shares)
held_cred = sum(float(r[12]) >= 0.5 for r in rows if r[12] not in ("-", "nan") and r[10] == "True")
# Holds: credible in the reduced model, at least half of the travel the same way in full space
# and half of the J (the travel times the heading term: not turned away), and credible there too
# (upright, on the ground).
holds = sum(r[10] == "True" and r[12] not in ("-", "nan") and float(r[12]) >= 0.5 and
            len(r) > 16 and r[16] == "True" and
            (len(r) < 18 or r[17] in ("-", "nan") or float(r[17]) >= 0.5) for r in rows)
full_Js = [float(r[14]) for r in rows if len(r) > 14 and r[14] not in ("-", "nan")]
print()
print("zoo: median J %.3f, credible and robust %d/%d, full-space travel >= 50%% and the same way "
      "%d/%d (of the credible gaits %d/%d), holding in full space (that travel, half the J and "
      "credible there) %d/%d, median full-space J %s, median %.1f s a job"
      % (statistics.median(Js), cred, len(rows), held, len(shares), held_cred, cred, holds,
         len(rows), "%.3f" % statistics.median(full_Js) if full_Js else "-",
         statistics.median(float(r[11]) for r in rows)))
PY
