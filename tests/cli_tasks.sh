#!/usr/bin/env bash
# cli_tasks.sh BIN SRCDIR: the task objectives (objective.kind turn, target, path, roll, flip),
# the penalties and the gradient polish, end to end on the bundled quadruped with short budgets:
#  - each task's short optimization gains over the zero gait (J below the zero gait's J);
#  - result.json's J equals J re-derived from the written frames (trajectory.csv: centres of
#    mass and forward axes at 17 digits, up axes at 9): relative 1e-7, the up axes' digits;
#  - the polish never ends worse than it started and is bit-identical at 1 and 2 threads;
#  - bad task inputs fail with exit 2 and a message naming the file, line or key.
. "$(dirname "$0")/lib_cli.sh" "$@"
cd "$SRC" || exit 1
short=(--quiet --set cmaes.population=10 --set cmaes.generations=8 --set sim.steps=200)
zero='actuation.parameters=[{"mode":0,"sinusoids":[{"amplitude":0,"period":0.4,"phase":0}]}]'

# rederive DIR: J from DIR/trajectory.csv and DIR/config.json (docs/method.md §7), printed with
# result.json's J; exit 1 when they differ by more than 1e-7 relative (1e-9 absolute).
rederive() {
  python3 - "$1" <<'PY'
import csv, json, math, sys
d = sys.argv[1]
cfg = json.load(open(d + "/config.json"))
res = json.load(open(d + "/result.json"))
ob = cfg["objective"]
rows = list(csv.DictReader(open(d + "/trajectory.csv")))
c = [[float(r["com_x"]), float(r["com_y"]), float(r["com_z"])] for r in rows]
f = [[float(r["forward_x"]), float(r["forward_z"])] for r in rows]
up = min(float(r["up_y"]) for r in rows)
J_up = max(0.0, up) if ob["upright"] else 1.0
dt = cfg["sim"]["dt"]
e = cfg["mesh"]["extent"]
dist = lambda a, b: math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
kind = ob["kind"]
if kind == "turn":
    h = ob["heading"]; hx, hz = h[0], h[-1]; n = math.hypot(hx, hz); hx, hz = hx / n, hz / n
    cosang = lambda v: (v[0] * hx + v[1] * hz) / math.hypot(v[0], v[1])
    Jt = 0.5 * (cosang(f[0]) - cosang(f[-1])) * J_up
elif kind == "target":
    p = ob["target"]
    Jt = (dist(c[-1], p) - dist(c[0], p)) / e * J_up
elif kind == "path":
    import os
    path = ob["path"]
    w = [list(map(float, r)) for r in list(csv.reader(open(path)))[1:] if r]
    def P(t):
        if t <= w[0][0]: return w[0][1:]
        if t >= w[-1][0]: return w[-1][1:]
        for a, b in zip(w, w[1:]):
            if a[0] <= t <= b[0]:
                s = (t - a[0]) / (b[0] - a[0]); return [a[k] + s * (b[k] - a[k]) for k in (1, 2, 3)]
    s1 = s0 = 0.0
    for i, ci in enumerate(c):
        p = P(i * dt); s1 += dist(ci, p); s0 += dist(c[0], p)
    Jt = (s1 - s0) / (len(c) * e) * J_up
else:
    sys.exit("kind %s is not re-derived here" % kind)
J = Jt * res["J_gate"]
# the penalties that the frames determine
vib = ob.get("vibration", 0)
if vib > 0:
    acc = [sum((c[i + 1][k] - 2 * c[i][k] + c[i - 1][k]) ** 2 for k in range(3)) for i in range(1, len(c) - 1)]
    Jv = vib * sum(acc) / (len(acc) * dt ** 4 * e * e)
    J += Jv
    if abs(Jv - res["J_vibration"]) > 1e-9 * abs(Jv): sys.exit("J_vibration %r != %r" % (res["J_vibration"], Jv))
J += res["J_effort"]
print("%s: J %.12g, re-derived %.12g, task_error %.4g" % (kind, res["J_exact"], J, res["task_error"]))
if abs(J - res["J_exact"]) > max(1e-9, 1e-7 * abs(J)): sys.exit(1)
PY
}
jval() { sed -n 's/^J \(.*\)/\1/p' "$1"; }
below() { python3 -c "import sys; sys.exit(0 if float('$1') < float('$2') else 1)"; }

for task in turn target path; do
  ex=examples/$task.json
  extra=()
  [ "$task" = path ] && extra=(--set objective.vibration=1e-5)
  [ "$task" = turn ] && extra=(--set cmaes.polish=1)
  if opt_ok "$BIN" optimize "$ex" --out "$T/$task" "${short[@]}" "${extra[@]}" >"$T/$task.out" 2>"$T/err"; then
    "$BIN" simulate "$ex" --out "$T/$task-zero" --set sim.steps=200 --set "$zero" >"$T/$task-zero.out" 2>/dev/null
    J=$(jval "$T/$task.out"); J0=$(jval "$T/$task-zero.out")
    if below "$J" "$J0"; then ok "$task: J $J below the zero gait's $J0"; else fail "$task: J $J not below the zero gait's $J0"; fi
    if rederive "$T/$task"; then ok "$task: result.json's J re-derived from the frames"; else fail "$task: J differs from the frames'"; fi
  else
    fail "$task optimize"; sed 's/^/  /' "$T/err" | head -3
  fi
done
# The turn ran with one polish step: never worse, reported in result.json.
b=$(json_num "$T/turn/result.json" J_before); a=$(json_num "$T/turn/result.json" J_after)
if [ -n "$a" ] && python3 -c "import sys; sys.exit(0 if float('$a') <= float('$b') else 1)"; then
  ok "polish: J $b -> $a"; else fail "polish block missing or worse ($b -> $a)"; fi

# summarize shows the task and how far the gait ended from it.
if "$BIN" summarize "$T/turn" "$T/target" "$T/path" --out "$T/sum.csv" >/dev/null 2>&1 &&
  head -1 "$T/sum.csv" | grep -q ',kind,task,task_error$' &&
  grep -q '^[^,]*/target,.*,target,target \[0.6 0.84 0.4\],[0-9.e-]*$' "$T/sum.csv" &&
  grep -q 'task error' "$T/sum.svg"; then ok "summarize: task columns"
else fail "summarize: no task columns"; cat "$T/sum.csv" 2>/dev/null | head -3; fi

# roll and flip: shorter still; J below the zero gait's.
for task in roll flip; do
  if opt_ok "$BIN" optimize examples/$task.json --out "$T/$task" "${short[@]}" --set cmaes.generations=5 \
    --set subspace.contact_samples=64 --set cmaes.robust_samples=0 >"$T/$task.out" 2>"$T/err"; then
    "$BIN" simulate examples/$task.json --out "$T/$task-zero" --set sim.steps=200 --set "$zero" \
      --set subspace.contact_samples=64 >"$T/$task-zero.out" 2>/dev/null
    J=$(jval "$T/$task.out"); J0=$(jval "$T/$task-zero.out")
    if below "$J" "$J0"; then ok "$task: J $J below the zero gait's $J0"; else fail "$task: J $J not below the zero gait's $J0"; fi
  else
    fail "$task optimize"; sed 's/^/  /' "$T/err" | head -3
  fi
done

# The polish is bit-identical at 1 and 2 threads.
pol=(--quiet --set cmaes.population=6 --set cmaes.generations=2 --set sim.steps=60 --set cmaes.polish=2
  --set actuation.modes=2)
opt_ok "$BIN" optimize examples/target.json --out "$T/p1" "${pol[@]}" --threads 1 >/dev/null 2>&1
opt_ok "$BIN" optimize examples/target.json --out "$T/p2" "${pol[@]}" --threads 2 >/dev/null 2>&1
if [ -s "$T/p1/params.json" ] && cmp -s "$T/p1/params.json" "$T/p2/params.json" &&
  cmp -s "$T/p1/result.json" "$T/p2/result.json"; then ok "polish: same bits at 1 and 2 threads"
else fail "polish: 1 and 2 threads differ"; fi

# Bad inputs: exit 2, the message names the place and the fix, nothing written.
one=(--set cmaes.generations=1 --set cmaes.population=4 --set sim.steps=10)
check "missing path file" 2 "$BIN" optimize examples/path.json --out "$T/bad1" "${one[@]}" --set objective.path="$T/nope.csv"
grep_err "missing path file named" "nope.csv"
[ ! -e "$T/bad1/params.json" ] && ok "missing path file: nothing written" || fail "missing path file: output written"
printf 'time,x,y,z\n0,0,0.8,0\n1,0.5,0.8\n' >"$T/bad.csv"
check "malformed waypoint" 2 "$BIN" optimize examples/path.json --out "$T/bad2" "${one[@]}" --set objective.path="$T/bad.csv"
grep_err "malformed waypoint names file:line" "bad.csv:3: malformed waypoint"
check "heading of zero length" 2 "$BIN" optimize examples/turn.json --out "$T/bad3" "${one[@]}" --set 'objective.heading=[0,5,0]'
grep_err "heading of zero length" "objective.heading"
check "target of 2 numbers" 2 "$BIN" optimize examples/target.json --out "$T/bad4" "${one[@]}" --set 'objective.target=[1,2]'
grep_err "target not 3 numbers" "objective.target"
check "target kind without a target" 2 "$BIN" optimize --out "$T/bad5" "${one[@]}" --set objective.kind=target
grep_err "target kind without a target" "needs key 'objective.target'"
check "unknown kind" 2 "$BIN" optimize --out "$T/bad6" "${one[@]}" --set objective.kind=spin
grep_err "unknown kind lists the kinds" "turn"
finish
