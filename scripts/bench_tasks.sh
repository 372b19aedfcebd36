#!/usr/bin/env bash
# bench_tasks.sh: does each task objective find a gait that does the task? One shortened
# optimization per task and seed on the bundled quadruped (data/quadruped.mesh, the examples'
# settings with their generation budgets), judged by result.json: J, task_error against the
# task's tolerance, credible, found, and the wall time.
#
#   scripts/bench_tasks.sh [BUILD_DIR]          (default BUILD_DIR: build-perf, then build)
#
# Tasks and what "met" means (task_error of result.json, docs/method.md §7):
#   turn    examples/turn.json    (+ 3 polish steps)  final heading error |φ| ≤ 0.26 rad (15°)
#   target  examples/target.json                      final distance to the target ≤ 0.1 extent
#   path    examples/path.json    (+ effort 0.001)    mean distance to the path ≤ 0.1 extent
#   roll    examples/roll.json                        rotation about v̂ × ŷ ≤ −π/2 (onto its side)
#   flip    examples/flip.json                        airborne rotation ≤ −π/2 (a quarter flip)
# Environment:
#   BENCH_TMP    scratch directory (default /tmp/modalloco-tasks); outside the repository
#   BENCH_SEEDS  seeds (default "1 2 3")
#   BENCH_TASKS  tasks to run (default "turn target path roll flip")
#   BENCH_BODY   "cat": the tasks on a body they were not tuned on, examples/turn_cat.json and
#                target_cat.json (the Table 1 Bat row's actuation, 80 generations); met means a
#                heading within 30° (|φ| ≤ 0.52 rad) and a final distance at most 60% of the
#                starting one (40% nearer). Default tasks then "turn target".
# Output: one line per run and a table of medians per task on stdout; runs stay in $BENCH_TMP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench_tasks.sh: no built modalloco" >&2; exit 2; }
BIN=$BUILD/modalloco
TMP=${BENCH_TMP:-/tmp/modalloco-tasks}
SEEDS=${BENCH_SEEDS:-"1 2 3"}
BODY=${BENCH_BODY:-}
case "$BODY" in
"") SUFFIX= LABEL=quadruped DEF_TASKS="turn target path roll flip" ;;
cat) SUFFIX=_cat LABEL=cat DEF_TASKS="turn target" ;;
*) echo "bench_tasks.sh: BENCH_BODY must be empty or cat" >&2; exit 2 ;;
esac
TASKS=${BENCH_TASKS:-$DEF_TASKS}
export OPENBLAS_NUM_THREADS=1
case "$TMP/" in "$ROOT"/*) echo "bench_tasks.sh: BENCH_TMP must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$TMP"
command -v python3 >/dev/null || { echo "bench_tasks.sh: needs python3" >&2; exit 2; }

tolerance() { # task -> "op value" on task_error
    if [ -n "$BODY" ]; then
        case $1 in turn) echo "abs<= 0.52" ;; target) echo "nearer 0.4" ;;
        *) echo "bench_tasks.sh: no $1 example for $BODY" >&2; exit 2 ;; esac
        return
    fi
    case $1 in
    turn) echo "abs<= 0.26" ;; target | path) echo "<= 0.1" ;; roll) echo "<= -1.5708" ;;
    flip) echo "<= -1.5708" ;; *) echo "bench_tasks.sh: unknown task $1" >&2; exit 2 ;;
    esac
}

printf '%-7s %-5s %-14s %-12s %-12s %-5s %-8s %-6s %s\n' task seed mesh J task_error met credible found seconds
LINES=$TMP/lines.txt
: >"$LINES"
for task in $TASKS; do
    tol=$(tolerance "$task")
    for seed in $SEEDS; do
        out=$TMP/$task-$seed
        rm -rf "$out"
        t0=$(date +%s.%N)
        set +e
        "$BIN" optimize "$ROOT/examples/$task$SUFFIX.json" --out "$out" --seed "$seed" --quiet >"$out.stdout" 2>"$out.stderr"
        rc=$?
        set -e
        t1=$(date +%s.%N)
        line=$(python3 - "$out/result.json" "$task" "$seed" "$tol" "$rc" "$t0" "$t1" "$LABEL" <<'PY'
import json, sys
path, task, seed, tol, rc, t0, t1, label = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception:
    print("%-7s %-5s %-14s run failed (exit %s)" % (task, seed, label, rc)); sys.exit()
op, val = tol.split()
e = r["task_error"]
if op == "nearer":  # J_task = (d1 - d0) / extent and task_error = d1 / extent
    met = e <= (1 - float(val)) * (e - r["J_task"])
else:
    met = abs(e) <= float(val) if op == "abs<=" else e <= float(val)
print("%-7s %-5s %-14s %-12.5g %-12.5g %-5s %-8s %-6s %.1f" % (task, seed, label, r["J_exact"], e,
      "yes" if met else "no", str(r["credibility"]["credible"]).lower(), str(r.get("found")).lower(),
      float(t1) - float(t0)))
PY
)
        echo "$line"
        echo "$line" >>"$LINES"
    done
done
echo
echo "medians per task (tolerance on task_error):"
python3 - "$LINES" "$BODY" $TASKS <<'PY'
import statistics, sys
lines = [l.split() for l in open(sys.argv[1]) if l.strip() and "failed" not in l]
tols = {"turn": "|e| <= 0.26 rad", "target": "e <= 0.1 extent", "path": "e <= 0.1 extent",
        "roll": "e <= -pi/2 rad", "flip": "e <= -pi/2 rad"}
if sys.argv[2]:
    tols.update(turn="|e| <= 0.52 rad", target="40% nearer")
del sys.argv[2]
print("%-7s %-6s %-12s %-12s %-17s %-9s %-9s %s" % ("task", "seeds", "median J", "median err", "tolerance", "met", "credible", "median s"))
for t in sys.argv[2:]:
    rows = [l for l in lines if l[0] == t]
    if not rows: continue
    med = lambda k: statistics.median(float(l[k]) for l in rows)
    print("%-7s %-6d %-12.5g %-12.5g %-17s %-9s %-9s %.1f" % (t, len(rows), med(3), med(4), tols[t],
          "%d/%d" % (sum(l[5] == "yes" for l in rows), len(rows)),
          "%d/%d" % (sum(l[6] == "true" for l in rows), len(rows)), med(8)))
PY
