#!/usr/bin/env bash
# cli_transfer.sh BIN SRCDIR: reference.check = 1 makes optimize replay its gait in the
# full-space reference: result.json's "transfer" block holds the same full-space travel and
# credibility as `simulate params.json --full-space` computes for the same gait (one judge for
# both commands), its fraction is that travel over the reduced one, and the run's stdout
# says it, with a warning when a credible gait does not hold there. Without the key nothing is
# replayed.
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=3 --set sim.steps=80
       --set actuation.modes=3 --quiet)

opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.check=1 --out "$T/run" >"$T/out" 2>"$T/err" \
  && ok "optimize with reference.check=1" || fail "optimize with reference.check=1: $(cat "$T/err")"
grep -q '^transfer_fraction ' "$T/out" && ok "stdout has transfer_fraction" \
  || fail "stdout: $(cat "$T/out")"
check "the same gait in simulate --full-space" 0 "$BIN" simulate "$T/run/params.json" \
  --full-space --out "$T/full" --quiet
python3 - "$T/run/result.json" "$T/full/fullspace.json" <<'PY' && ok "transfer block = simulate's full-space rollout" || fail "transfer block differs"
import json, sys
r = json.load(open(sys.argv[1])); f = json.load(open(sys.argv[2]))
t = r["transfer"]
assert t["model"] == "fullspace", t
full, red = f["full"], f["reduced"]
assert abs(t["displacement"] - full["displacement"]) <= 1e-12 * max(1, abs(full["displacement"])), (t, full)
assert abs(red["displacement"] - r["displacement"]) <= 1e-12 * max(1, abs(r["displacement"])), (red, r)
assert abs(t["fraction"] - full["displacement"] / red["displacement"]) <= 1e-9 * max(1, abs(t["fraction"])), t
for k in ("rise", "airborne", "penetration", "up_min", "credible"):
    assert t["credibility"][k] == full["credibility"][k], (k, t["credibility"], full["credibility"])
PY
# The full-space rollout's own files: one trajectory row a step, as trajectory.csv, whose com
# and up columns give fullspace.json's travel and up_min; fullspace.pc2 plays the same surface
# vertices as animation.pc2, from the same rest shape.
python3 - "$T/full" <<'PY' && ok "fullspace_trajectory.csv and fullspace.pc2 match fullspace.json" || fail "full-space frames"
import csv, json, struct, sys
d = sys.argv[1]
f = json.load(open(d + "/fullspace.json"))["full"]
red = list(csv.DictReader(open(d + "/trajectory.csv")))
full = list(csv.DictReader(open(d + "/fullspace_trajectory.csv")))
assert len(full) == len(red) == f["steps_done"] + 1, (len(full), len(red))
assert list(full[0].keys()) == list(red[0].keys())
for k in ("com_x", "com_y", "com_z"):
    assert abs(float(full[0][k]) - float(red[0][k])) <= 1e-9, (k, full[0][k], red[0][k])
travel = float(full[-1]["com_x"]) - float(full[0]["com_x"])  # the walking direction is +x
assert abs(travel - f["displacement"]) <= 1e-9 * max(1, abs(travel)), (travel, f["displacement"])
up_min = min(float(r["up_y"]) for r in full)
assert abs(up_min - f["credibility"]["up_min"]) <= 1e-8, (up_min, f["credibility"]["up_min"])
def pc2(path):
    b = open(path, "rb").read()
    assert b[:12] == b"POINTCACHE2\0"
    n, start, rate, frames = struct.unpack_from("<iffi", b, 16)
    assert len(b) == 32 + 12 * n * frames, (len(b), n, frames)
    return n, frames, b
na, fa, a = pc2(d + "/animation.pc2")
nf, ff, b = pc2(d + "/fullspace.pc2")
assert (na, fa) == (nf, ff), ((na, fa), (nf, ff))
r0 = struct.unpack_from("<%df" % (3 * na), a, 32)
f0 = struct.unpack_from("<%df" % (3 * nf), b, 32)
assert max(abs(x - y) for x, y in zip(r0, f0)) <= 1e-5, "frame 0 differs"
last = struct.unpack_from("<%df" % (3 * nf), b, 32 + 12 * nf * (ff - 1))
assert last != f0, "the full-space surface never moved"
PY
# A full-space rollout that fails (too few contact columns) leaves neither file half-written.
check "simulate --full-space with one contact column fails" 1 "$BIN" simulate \
  "$T/run/params.json" --full-space --set reference.contact_columns=1 --out "$T/cols" --quiet
grep_err "says to raise the columns" "raise reference.contact_columns"
[ ! -e "$T/cols/fullspace.pc2" ] && [ ! -e "$T/cols/fullspace_trajectory.csv" ] \
  && [ -z "$(ls "$T/cols" | grep -v -x -e animation.pc2 -e config.json -e result.json \
       -e surface.obj -e trajectory.csv)" ] \
  && ok "no full-space file after the failure" || fail "full-space files left: $(ls "$T/cols")"
opt_ok "$BIN" optimize "${SMALL[@]}" --set reference.rerank=0 --out "$T/plain" >"$T/out" 2>"$T/err" \
  && ok "optimize without the key" || fail "optimize without the key: $(cat "$T/err")"
grep -q '"transfer"' "$T/plain/result.json" && fail "transfer block without reference.check" \
  || ok "no transfer block by default"
# A gait credible in the reduced model that does not hold in full space (less than half of its
# travel, the other way, or not credible there) draws a warning; one that holds does not. The
# upright penguin, which falls over left alone, balances for 1.5 s in the reduced model only.
HOLD=(--set cmaes.population=6 --set cmaes.generations=2 --set actuation.modes=3
      --set reference.check=1 --threads 1)
opt_ok "$BIN" optimize "$SRC/data/penguin.off.gz" "${HOLD[@]}" --set sim.steps=150 \
  --out "$T/penguin" >/dev/null 2>"$T/penguin.err" || fail "optimize the penguin: $(cat "$T/penguin.err")"
opt_ok "$BIN" optimize "${HOLD[@]}" --set sim.steps=80 --out "$T/quad" >/dev/null 2>"$T/quad.err" \
  || fail "optimize the quadruped: $(cat "$T/quad.err")"
python3 - "$T" <<'PY' && ok "the warning exactly when a credible gait does not hold" || fail "the hold warning"
import json, sys
warned = {}
for run in ("penguin", "quad"):
    r = json.load(open("%s/%s/result.json" % (sys.argv[1], run)))
    t = r["transfer"]
    holds = t["fraction"] >= 0.5 and t["credibility"]["credible"]
    expect = r["credibility"]["credible"] and t["converged"] and not holds
    warned[run] = "does not hold in the full-space reference" in open("%s/%s.err" % (sys.argv[1], run)).read()
    assert warned[run] == expect, (run, warned[run], expect, t)
assert warned["penguin"] and not warned["quad"], warned  # both branches taken
PY
check "reference.check=2 is refused" 2 "$BIN" optimize "${SMALL[@]}" --set reference.check=2 \
  --out "$T/bad"
grep_err "names the key" "reference.check"
finish
