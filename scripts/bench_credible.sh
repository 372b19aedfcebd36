#!/usr/bin/env bash
# bench_credible.sh: are the gaits credible? The paper's Table 1 jobs on real characters, three
# seeds each, judged by the credibility block of result.json, with seed 1 of each replayed in
# the full-space reference, and the time of each job beside the paper's.
#
#   scripts/bench_credible.sh [BUILD_DIR]         (default BUILD_DIR: build-perf, then build)
#
# Rows (mesh, Table 1 example, the paper's time for that row):
#   cat      examples/table1_bat.json       900 s   (Bat-sized, 37k tets)
#   spot     examples/table1_couch.json     984 s   (59k tets; it faces −z: objective.direction)
#   blub     examples/table1_treefrog.json 1280 s   (3.3k tets; along −z, the example's direction)
#   penguin  examples/table1_bat.json       900 s   (19k tets; it tips over at rest)
#   demo     examples/quadruped_demo.json     -     (the README demo, bundled mesh)
# Per job: J, displacement, the credibility measures, found, exit code, wall time and the ratio
# of the paper's time to ours. Per mesh: the median J and how many gaits are credible. Seed 1
# of each mesh is replayed with `simulate --full-space` (the converged full-space reference):
# its displacement beside the reduced one.
#
# Environment:
#   BENCH_MESHES       optional directory of pre-tetrahedralized meshes (NAME/NAME.node);
#                      default: the surfaces bundled in data/ (NAME.off.gz)
#   BENCH_TMP          scratch directory (default /tmp/modalloco-credible); outside the repo
#   BENCH_GENERATIONS  generations (default 200, the paper's)
#   BENCH_SEEDS        seeds (default "1 2 3")
#   BENCH_ROWS         rows to run (default "cat spot blub penguin demo")
#   BENCH_FULLSPACE=0  skip the full-space replays (each takes minutes on the larger meshes)
# Output: one line per job and a summary table on stdout; runs stay in $BENCH_TMP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench_credible.sh: no built modalloco" >&2; exit 2; }
BIN=$BUILD/modalloco
MESHES=${BENCH_MESHES:-}
mesh_of() { # name -> the mesh file of that character
    if [ -n "$MESHES" ] && [ -f "$MESHES/$1/$1.node" ]; then echo "$MESHES/$1/$1.node"
    else echo "$ROOT/data/$1.off.gz"; fi
}
TMP=${BENCH_TMP:-/tmp/modalloco-credible}
GENS=${BENCH_GENERATIONS:-200}
SEEDS=${BENCH_SEEDS:-"1 2 3"}
ROWS=${BENCH_ROWS:-"cat spot blub penguin demo"}
FULL=${BENCH_FULLSPACE:-1}
export OPENBLAS_NUM_THREADS=1
case "$TMP" in "$ROOT"*) echo "bench_credible.sh: BENCH_TMP must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$TMP"
command -v python3 >/dev/null || { echo "bench_credible.sh: needs python3" >&2; exit 2; }

row_args() { # row -> example, paper seconds, extra --set arguments
    case $1 in
    cat) echo "$ROOT/examples/table1_bat.json 900 --set mesh.path=$(mesh_of cat)" ;;
    spot) echo "$ROOT/examples/table1_couch.json 984 --set mesh.path=$(mesh_of spot) --set objective.direction=[0,0,-1]" ;;
    blub) echo "$ROOT/examples/table1_treefrog.json 1280 --set mesh.path=$(mesh_of blub)" ;;
    penguin) echo "$ROOT/examples/table1_bat.json 900 --set mesh.path=$(mesh_of penguin)" ;;
    demo) echo "$ROOT/examples/quadruped_demo.json 0" ;;
    *) echo "bench_credible.sh: unknown row $1" >&2; exit 2 ;;
    esac
}

RESULTS=$TMP/results.tsv
: >"$RESULTS"
: >"$TMP/full.tsv"
echo "generations $GENS, seeds $SEEDS, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
for row in $ROWS; do
    read -r example paper extra <<<"$(row_args "$row")"
    # shellcheck disable=SC2086
    set -- $extra
    for seed in $SEEDS; do
        out=$TMP/$row-$seed
        gens=$GENS
        [ "$row" = demo ] && gens=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['cmaes']['generations'])" "$example")
        t0=$(date +%s.%N)
        rc=0
        "$BIN" optimize "$example" "$@" --set cmaes.generations="$gens" \
            --set subspace.cache="$TMP/$row.cache" --seed "$seed" --out "$out" --force --quiet \
            >"$out.log" 2>&1 || rc=$?
        t1=$(date +%s.%N)
        python3 - "$out/result.json" "$row" "$seed" "$rc" "$t0" "$t1" "$paper" >>"$RESULTS" <<'PY'
import json, sys
f, row, seed, rc, t0, t1, paper = sys.argv[1:]
r = json.load(open(f)); c = r["credibility"]
secs = float(t1) - float(t0)
ratio = float(paper) / secs if float(paper) > 0 else 0
print("\t".join(str(v) for v in [row, seed, rc, "%.3f" % r["J"], "%.3f" % r["displacement"],
      "%.3f" % c["rise"], "%.3f" % c["airborne"], "%.4f" % c["penetration"],
      "%.3f" % c["up_min"], "%.3f" % c["robustness"], c["credible"], r.get("found"),
      "%.1f" % secs, paper, "%.0f" % ratio]))
PY
        tail -1 "$RESULTS"
    done
    if [ "$FULL" = 1 ]; then
        set -- $extra
        first=${SEEDS%% *}
        "$BIN" simulate "$TMP/$row-$first/params.json" --full-space --out "$TMP/$row-full" \
            --force >"$TMP/$row-full.log" 2>&1 || true
        python3 - "$TMP/$row-full/fullspace.json" "$row" "$first" >>"$TMP/full.tsv" <<'PY' || true
import json, sys
f, row, seed = sys.argv[1:]
d = json.load(open(f))
red, full = d["reduced"], d["full"]
print("\t".join([row, seed, "%.3f" % red["displacement"], "%.3f" % full["displacement"],
                 "%.2f" % (full["displacement"] / red["displacement"] if red["displacement"] else 0),
                 str(full.get("credibility", {}).get("credible"))]))
PY
        [ -f "$TMP/full.tsv" ] && tail -1 "$TMP/full.tsv"
    fi
done

echo
python3 - "$RESULTS" "$TMP/full.tsv" <<'PY'
import sys, statistics, os
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| mesh | seed | exit | J | displacement | rise | airborne | penetration | up_min | robustness | credible | s | paper s | paper/ours |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r[:11] + r[12:]) + " |")
print()
print("| mesh | credible | median J | median s |")
print("|---|---|---|---|")
for m in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == m]
    print("| %s | %d/%d | %.3f | %.1f |" % (m, sum(r[10] == "True" for r in rs), len(rs),
          statistics.median(float(r[3]) for r in rs), statistics.median(float(r[12]) for r in rs)))
if os.path.exists(sys.argv[2]):
    print()
    print("| mesh | seed | reduced displacement | full-space displacement | full/reduced | full credible |")
    print("|---|---|---|---|---|---|")
    for l in open(sys.argv[2]):
        if l.strip():
            print("| " + " | ".join(l.rstrip("\n").split("\t")) + " |")
PY
