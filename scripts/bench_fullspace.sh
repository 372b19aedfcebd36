#!/usr/bin/env bash
# bench_fullspace.sh: the full-space reference (`simulate --full-space`) before and after its
# acceleration and its contact on every surface vertex, side by side on the bundled cat and spot.
#
#   scripts/bench_fullspace.sh OLD_BIN [NEW_BIN]      (default NEW_BIN: build/modalloco)
#
# OLD_BIN is a modalloco built from an earlier commit (512 contact samples, plain local-global
# iterations), e.g. `git archive 97df186 | tar -x -C build-base/src` and a Release build there.
# Per mesh: a gait is optimized once with OLD_BIN (40 generations, seed 1: a configuration both
# programs read), then replayed in full space, the configurations interleaved in each of
# BENCH_RUNS rounds so that both see the same machine load:
#   old           OLD_BIN as it is: 512 samples, plain iterations
#   new           NEW_BIN, its defaults: every surface vertex, Anderson acceleration, one thread
#   new-2t        the same with two threads for the per-tet work (reference.threads=2)
# and once each (accuracy): every surface vertex with plain iterations (the new contact, the old
# solve) and every surface vertex at tolerance 1e-9 (the converged answer the others are
# compared with).
# Printed per run: seconds of the full-space rollout (fullspace.json full.seconds: the steps,
# not the set-up), the CPU seconds of the whole simulate process (user + system, all threads;
# set-up, reduced rollout and full-space rollout: on a loaded machine the wall time measures the
# load more than the work), iterations a step (mean, max), the full-space displacement and the
# deepest surface vertex below the ground (full.credibility.penetration, relative to the extent);
# then the medians and the speed-ups old / new of both times.
#
# Environment:
#   BENCH_TMP     scratch directory (default /tmp/modalloco-fullspace); outside the repo
#   BENCH_MESHES  meshes (default "cat spot": data/NAME.off.gz)
#   BENCH_RUNS    interleaved rounds (default 3)
#   BENCH_STEPS   steps of the rollouts (default 300)
#   BENCH_ONCE=0  skip the single accuracy runs (the plain one takes as long as old)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OLD=${1:?usage: bench_fullspace.sh OLD_BIN [NEW_BIN]}
NEW=${2:-$ROOT/build/modalloco}
for b in "$OLD" "$NEW"; do
    [ -x "$b" ] || { echo "bench_fullspace.sh: $b is not an executable" >&2; exit 2; }
done
TMP=${BENCH_TMP:-/tmp/modalloco-fullspace}
MESHES=${BENCH_MESHES:-"cat spot"}
RUNS=${BENCH_RUNS:-3}
STEPS=${BENCH_STEPS:-300}
ONCE=${BENCH_ONCE:-1}
mkdir -p "$TMP"

# fields DIR CPUFILE: seconds, CPU seconds, iterations mean and max, displacement, penetration
fields() {
    python3 - "$1/fullspace.json" "$2" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))["full"]
c = f["convergence"]
cpu = sum(float(x) for x in open(sys.argv[2]).read().split()[-2:])
print("%.2f %.2f %.2f %d %.9g %.3g" % (f["seconds"], cpu, c["iterations_mean"],
                                       c["iterations_max"], f["displacement"],
                                       f["credibility"]["penetration"]))
EOF
}

# replay NAME LABEL BIN ARGS...: one full-space replay, its line on stdout and in results
replay() {
    local name=$1 label=$2 bin=$3
    shift 3
    local out=$TMP/$name/$label
    /usr/bin/time -f "%U %S" -o "$out.cpu" "$bin" simulate "$TMP/$name/gait/params.json" \
        --full-space --out "$out" --force --set sim.steps="$STEPS" "$@" >"$out.log" 2>&1 || {
        echo "bench_fullspace.sh: $label on $name failed (see $out.log)" >&2
        return 1
    }
    local line
    line=$(fields "$out" "$out.cpu")
    printf '%-6s %-18s %s\n' "$name" "$label" "$line"
    echo "$name $label $line" >>"$TMP/results.txt"
}

: >"$TMP/results.txt"
printf '%-6s %-18s %s\n' mesh config "seconds cpu_s it_mean it_max displacement penetration"
for name in $MESHES; do
    mkdir -p "$TMP/$name"
    if [ ! -f "$TMP/$name/gait/params.json" ]; then
        "$OLD" optimize "$ROOT/data/$name.off.gz" --out "$TMP/$name/gait" --seed 1 \
            --set cmaes.generations=40 --quiet --force >/dev/null 2>&1
    fi
    for r in $(seq "$RUNS"); do
        replay "$name" "old-$r" "$OLD"
        replay "$name" "new-$r" "$NEW" --set reference.contact_samples=0
        replay "$name" "new-2t-$r" "$NEW" --set reference.contact_samples=0 --set reference.threads=2
    done
    if [ "$ONCE" = 1 ]; then
        replay "$name" surface-plain "$NEW" --set reference.contact_samples=0 \
            --set reference.acceleration=0
        replay "$name" surface-1e-9 "$NEW" --set reference.contact_samples=0 \
            --set reference.tolerance=1e-9
    fi
done

echo
echo "medians over $RUNS rounds (seconds of the full-space steps; iterations a step):"
python3 - "$TMP/results.txt" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, label, *v = line.split()
    kind = label.rsplit("-", 1)[0]  # old-N, new-N, new-2t-N: the round apart
    kind = kind if kind in ("old", "new", "new-2t") else label
    rows.setdefault((name, kind), []).append([float(x) for x in v])
med = lambda xs, i: statistics.median(x[i] for x in xs)
for (name, kind), xs in rows.items():
    print("%-6s %-14s %8.2f s (cpu %8.2f s)  iterations %6.2f (max %3d)  displacement %.6g  "
          "penetration %.3g" % (name, kind, med(xs, 0), med(xs, 1), med(xs, 2),
                                max(x[3] for x in xs), med(xs, 4), med(xs, 5)))
for name in sorted({n for n, _ in rows}):
    old, new, two = rows.get((name, "old")), rows.get((name, "new")), rows.get((name, "new-2t"))
    if old and new and two:
        print("%-6s speed-up old/new: wall %.1fx (two threads %.1fx), cpu %.1fx (two threads %.1fx)"
              % (name, med(old, 0) / med(new, 0), med(old, 0) / med(two, 0),
                 med(old, 1) / med(new, 1), med(old, 1) / med(two, 1)))
EOF
