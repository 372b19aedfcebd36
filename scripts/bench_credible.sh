#!/usr/bin/env bash
# bench_credible.sh: the paper's Table 1 rows, each as its example ships, on its bundled
# character: three seeds each, judged by the credibility block of result.json, the median J
# beside the paper's row, seed 1 (or every seed) of each replayed in the full-space reference,
# and the time of each job beside the paper's.
#
#   scripts/bench_credible.sh [BUILD_DIR]         (default BUILD_DIR: build-perf, then build)
#
# Rows: examples/table1_<row>.json as shipped (mesh, modes, amplitude bound, friction, budget),
# plus the README demo. Per job: J, displacement, the credibility measures, exit code, wall
# time (precompute excluded: the subspace cache is built once per row before the timed jobs)
# and the ratio of the paper's time to ours. Per row: J of every seed, the median against the
# paper's J, how many gaits are credible (robustness included), and seed 1's full-space
# travel as a share of its reduced travel.
#
# Environment:
#   BENCH_TMP          scratch directory (default /tmp/modalloco-credible); outside the repo
#   BENCH_GENERATIONS  generations (default: each example's own)
#   BENCH_SEEDS        seeds (default "1 2 3")
#   BENCH_ROWS         rows (default "bat couch creepy_tree bearded_dragon octopus treefrog demo");
#                      NAME=FILE[:PAPER_J:PAPER_S] adds a row of one's own, e.g. a variant of an
#                      example (a mesh path in it is relative to FILE)
#   BENCH_THREADS      threads per job (default 2)
#   BENCH_FULLSPACE    1 (default): replay the first seed's gait in the full-space reference;
#                      "all": every seed's; 0: none (a replay takes 10-60 s on these meshes)
# Output: one line per job and summary tables on stdout; runs stay in $BENCH_TMP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench_credible.sh: no built modalloco" >&2; exit 2; }
BIN=$BUILD/modalloco
TMP=${BENCH_TMP:-/tmp/modalloco-credible}
GENS=${BENCH_GENERATIONS:-}
SEEDS=${BENCH_SEEDS:-"1 2 3"}
ROWS=${BENCH_ROWS:-"bat couch creepy_tree bearded_dragon octopus treefrog demo"}
THREADS=${BENCH_THREADS:-2}
FULL=${BENCH_FULLSPACE:-1}
export OPENBLAS_NUM_THREADS=1
case "$TMP/" in "$ROOT"/*) echo "bench_credible.sh: BENCH_TMP must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$TMP"
command -v python3 >/dev/null || { echo "bench_credible.sh: needs python3" >&2; exit 2; }

row_args() { # row -> example, the paper's J, the paper's seconds (Table 1)
    case $1 in
    bat) echo "$ROOT/examples/table1_bat.json -1.25 900" ;;
    couch) echo "$ROOT/examples/table1_couch.json -0.63 984" ;;
    creepy_tree) echo "$ROOT/examples/table1_creepy_tree.json -0.39 3300" ;;
    bearded_dragon) echo "$ROOT/examples/table1_bearded_dragon.json -0.97 1270" ;;
    octopus) echo "$ROOT/examples/table1_octopus.json -1.07 3590" ;;
    treefrog) echo "$ROOT/examples/table1_treefrog.json -1.22 1280" ;;
    demo) echo "$ROOT/examples/quadruped_demo.json 0 0" ;;
    *=*.json | *=*.json:*) # NAME=FILE[:PAPER_J:PAPER_S], e.g. a variant of an example
        local spec=${1#*=} file j=0 t=0
        file=${spec%%:*}
        [ "$file" != "$spec" ] && IFS=: read -r _ j t <<<"$spec"
        [ -f "$file" ] || { echo "bench_credible.sh: no example $file" >&2; exit 2; }
        echo "$file $j $t" ;;
    *) echo "bench_credible.sh: unknown row $1" >&2; exit 2 ;;
    esac
}

RESULTS=$TMP/results.tsv
: >"$RESULTS"
: >"$TMP/full.tsv"
echo "seeds $SEEDS, generations ${GENS:-as each example}, $THREADS threads, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
for spec in $ROWS; do
    read -r example paperJ paper <<<"$(row_args "$spec")"
    row=${spec%%=*}
    gens=()
    [ -n "$GENS" ] && gens=(--set cmaes.generations="$GENS")
    # The subspace cache first, so that the timed jobs measure the optimization alone.
    "$BIN" modes "$example" --set subspace.cache="$TMP/$row.cache" --out "$TMP/$row-modes" \
        --set parallel.threads="$THREADS" --force >"$TMP/$row-modes.log" 2>&1 || true
    for seed in $SEEDS; do
        out=$TMP/$row-$seed
        t0=$(date +%s.%N)
        rc=0
        "$BIN" optimize "$example" "${gens[@]}" --set subspace.cache="$TMP/$row.cache" \
            --seed "$seed" --threads "$THREADS" --out "$out" --force --quiet >"$out.log" 2>&1 || rc=$?
        t1=$(date +%s.%N)
        python3 - "$out/result.json" "$row" "$seed" "$rc" "$t0" "$t1" "$paper" "$paperJ" \
            >>"$RESULTS" <<'PY'
import json, sys
f, row, seed, rc, t0, t1, paper, paperJ = sys.argv[1:]
r = json.load(open(f)); c = r["credibility"]
secs = float(t1) - float(t0)
ratio = float(paper) / secs if float(paper) > 0 else 0
print("\t".join(str(v) for v in [row, seed, rc, "%.3f" % r["J"], "%.3f" % r["displacement"],
      "%.3f" % c["rise"], "%.3f" % c["airborne"], "%.4f" % c["penetration"],
      "%.3f" % c["up_min"], "%.3f" % c["robustness"], c["credible"], r.get("found"),
      "%.1f" % secs, paper, "%.0f" % ratio, paperJ]))
PY
        tail -1 "$RESULTS"
    done
    replay=""
    case $FULL in 1) replay=${SEEDS%% *} ;; all) replay=$SEEDS ;; esac
    for seed in $replay; do
        full_out=$TMP/$row-full; [ "$FULL" = all ] && full_out=$TMP/$row-full-$seed
        "$BIN" simulate "$TMP/$row-$seed/params.json" --full-space --out "$full_out" \
            --set parallel.threads="$THREADS" --force >"$full_out.log" 2>&1 || true
        python3 - "$full_out/fullspace.json" "$row" "$seed" >>"$TMP/full.tsv" <<'PY' || true
import json, sys
f, row, seed = sys.argv[1:]
d = json.load(open(f))
red, full = d["reduced"], d["full"]
print("\t".join([row, seed, "%.3f" % red["displacement"], "%.3f" % full["displacement"],
                 "%.2f" % (full["displacement"] / red["displacement"] if red["displacement"] else 0),
                 str(full.get("credibility", {}).get("credible")),
                 "%.2f" % (full["J"] / red["J"]) if red["J"] < 0 else "1.00"]))
PY
        [ -f "$TMP/full.tsv" ] && tail -1 "$TMP/full.tsv"
    done
done

echo
python3 - "$RESULTS" "$TMP/full.tsv" <<'PY'
import sys, statistics, os
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
print("| row | seed | exit | J | displacement | rise | airborne | penetration | up_min | robustness | credible | s | paper s | paper/ours |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r[:11] + r[12:15]) + " |")
full = {}  # row -> replays in seed order: [row, seed, reduced, full, share, credible, J share]
if os.path.exists(sys.argv[2]):
    for l in open(sys.argv[2]):
        if l.strip():
            f = l.rstrip("\n").split("\t")
            full.setdefault(f[0], []).append(f)
def shares(m):
    if m not in full: return "-"
    return ", ".join(f[4] + ("" if f[5] == "True" else " (not credible)") for f in full[m])
print()
replayed = sorted({f[1] for fs in full.values() for f in fs}, key=int)
print("| row | J per seed | median J | paper J | median/paper | credible | full/reduced travel (seeds %s) | median s | paper/ours |" % (", ".join(replayed) or "-"))
print("|---|---|---|---|---|---|---|---|---|")
for m in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == m]
    med = statistics.median(float(r[3]) for r in rs)
    pj = float(rs[0][15])
    secs = statistics.median(float(r[12]) for r in rs)
    paper = float(rs[0][13])
    print("| %s | %s | %.3f | %s | %s | %d/%d | %s | %.1f | %s |" % (
        m, " ".join(r[3] for r in rs), med, rs[0][15] if pj else "-",
        "%.2f" % (med / pj) if pj else "-", sum(r[10] == "True" for r in rs), len(rs),
        shares(m), secs, "%.0f" % (paper / secs) if paper > 0 else "-"))
replays = [f for fs in full.values() for f in fs]
if replays:
    held = sum(float(f[4]) >= 0.5 and f[5] == "True" and (len(f) < 7 or float(f[6]) >= 0.5)
               for f in replays)
    print()
    print("full space: %d of %d replayed gaits keep at least half of their travel, the same way, "
          "and of their J, and stay credible" % (held, len(replays)))
PY
