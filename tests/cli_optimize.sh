#!/usr/bin/env bash
# cli_optimize.sh BIN SRCDIR: optimize is bit-reproducible for any thread count and across an
# interrupt + --resume, params.json replays exactly with simulate, and a small budget on the
# bundled quadruped finds a gait that walks.
. "$(dirname "$0")/lib_cli.sh" "$@"
# The optimizer's mechanics on a gentle actuation (the combined bound at p = 0.3, no ramp), where
# a few generations find walkers, robust replays off unless a check turns them on (their counts
# are what several checks measure), and no full-space validation (cli_rerank's). The paper's
# five handles (w = 5) with the σ₀ they start from (0.3): the restart checks below count the
# generations of this exact search.
SMALL=(--set cmaes.population=8 --set cmaes.generations=5 --set sim.steps=150 --set subspace.skinning_modes=5
       --set actuation.modes=4 --set actuation.amplitude_bound=combined --set actuation.amplitude_p=0.3
       --set actuation.ramp=0 --set cmaes.robust_samples=0 --set cmaes.robust_scope=walkers
       --set reference.rerank=0 --quiet)

opt_ok "$BIN" optimize "${SMALL[@]}" --threads 1 --out "$T/t1" >/dev/null || fail "optimize --threads 1"
opt_ok "$BIN" optimize "${SMALL[@]}" --threads 2 --out "$T/t2" >/dev/null || fail "optimize --threads 2"
cmp -s "$T/t1/params.json" "$T/t2/params.json" && echo "ok: params.json identical for 1 and 2 threads" \
  || fail "params.json differs between 1 and 2 threads"
diff <(strip_clock "$T/t1/history.csv") <(strip_clock "$T/t2/history.csv") >/dev/null \
  && echo "ok: history.csv identical for 1 and 2 threads" || fail "history.csv differs"
# The best gait's outputs too (two threads skin each frame's surface in two halves).
for f in animation.pc2 trajectory.csv result.json surface.obj; do
  cmp -s "$T/t1/$f" "$T/t2/$f" || fail "$f differs between 1 and 2 threads"
done
for f in params.json history.csv history.svg checkpoint.bin config.json trajectory.csv surface.obj animation.pc2 result.json; do
  [ -s "$T/t1/$f" ] || fail "optimize did not write $f"
done
[ "$(wc -l < "$T/t1/history.csv")" -eq 6 ] || fail "history.csv should have a header and 5 rows"
# The columns scripts rely on stay first; mean_J (score of the distribution mean) and the
# rollout count come after them; params.json reports the mean's and the best's scores, and
# the best gait's own J is never worse than its robust score (the worst of its replays).
head -1 "$T/t1/history.csv" | grep -qx "generation,evaluations,best_J,median_J,sigma,seconds,best_ever_J,failed,mean_J,rollouts,restart,population" \
  && echo "ok: history.csv columns" || fail "history.csv header: $(head -1 "$T/t1/history.csv")"
# The mean is scored in generation 1 (and every cmaes.mean_every = 10): mean_J is finite there
# and empty in generations 2-5, and the rollouts are the 8 candidates a generation plus that one.
awk -F, 'NR>1 && !((NR==2 ? ($9+0 == $9 && $9 < 1e300 && $9 > -1e300) : $9 == "") && $10 == 8*(NR-1)+1) {bad=1} END{exit bad}' "$T/t1/history.csv" \
  && echo "ok: mean_J in generation 1 only, rollouts counted" || fail "mean_J or rollouts column"
# Scored every generation, the mean is one more rollout in each, and the search is the same bit
# for bit (the mean's score is a report: CMA-ES never sees it).
"$BIN" optimize "${SMALL[@]}" --set cmaes.mean_every=1 --threads 2 --out "$T/m1" >/dev/null || fail "mean_every=1"
awk -F, 'NR>1 && !($9+0 == $9 && $9 < 1e300 && $9 > -1e300 && $10 == 9*(NR-1)) {bad=1} END{exit bad}' "$T/m1/history.csv" \
  && diff <(cut -d, -f1-5,7,8 "$T/m1/history.csv") <(cut -d, -f1-5,7,8 "$T/t1/history.csv") >/dev/null \
  && diff <(grep -v '"mean_every"' "$T/m1/params.json") <(grep -v '"mean_every"' "$T/t1/params.json") >/dev/null \
  && echo "ok: mean scored every generation: 9 rollouts each, the same search and gait" \
  || fail "mean_every=1 changed the search or its rollout count"
"$BIN" optimize "${SMALL[@]}" --set cmaes.mean_every=-1 --out "$T/mneg" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cmaes.mean_every" "$T/err" && [ ! -e "$T/mneg" ] \
  && echo "ok: a negative mean_every exits 2 and writes nothing" || fail "bad mean_every: $(cat "$T/err")"
jm=$(json_num "$T/t1/params.json" J_mean); jr=$(json_num "$T/t1/params.json" J_robust); j=$(json_num "$T/t1/params.json" J)
[ -n "$jm" ] && [ -n "$jr" ] && awk -v j="$j" -v r="$jr" 'BEGIN{exit !(j <= r)}' \
  && echo "ok: params.json J_mean $jm, J_robust $jr >= J $j" || fail "params.json J_mean/J_robust ($jm, $jr, $j)"
# Robust scoring with R = 2 is bit-identical for 1 and 2 threads too.
"$BIN" optimize "${SMALL[@]}" --set cmaes.robust_samples=2 --threads 1 --out "$T/r1" >/dev/null || fail "R=2 1 thread"
"$BIN" optimize "${SMALL[@]}" --set cmaes.robust_samples=2 --threads 2 --out "$T/r2" >/dev/null || fail "R=2 2 threads"
cmp -s "$T/r1/params.json" "$T/r2/params.json" && diff <(strip_clock "$T/r1/history.csv") <(strip_clock "$T/r2/history.csv") >/dev/null \
  && echo "ok: robust scoring identical for 1 and 2 threads" || fail "robust scoring differs between thread counts"
# Replays only for candidates that would become the best-ever: the same bits for any thread
# count, fewer rollouts than replaying every walker, and the best gait's J never worse than
# its robust score.
"$BIN" optimize "${SMALL[@]}" --set cmaes.robust_samples=2 --set cmaes.robust_scope=improving \
  --threads 1 --out "$T/i1" >/dev/null || fail "improving 1 thread"
"$BIN" optimize "${SMALL[@]}" --set cmaes.robust_samples=2 --set cmaes.robust_scope=improving \
  --threads 2 --out "$T/i2" >/dev/null || fail "improving 2 threads"
cmp -s "$T/i1/params.json" "$T/i2/params.json" \
  && echo "ok: improving-scope scoring identical for 1 and 2 threads" || fail "improving scope differs between thread counts"
ri=$(tail -1 "$T/i1/history.csv" | cut -d, -f10); rw=$(tail -1 "$T/r1/history.csv" | cut -d, -f10)
jr=$(json_num "$T/i1/params.json" J_robust); j=$(json_num "$T/i1/params.json" J)
[ "$ri" -lt "$rw" ] && awk -v j="$j" -v r="$jr" 'BEGIN{exit !(j <= r)}' \
  && echo "ok: improving scope: $ri rollouts against $rw, J $j <= J_robust $jr" \
  || fail "improving scope: $ri rollouts against $rw, J $j, J_robust $jr"
"$BIN" optimize "${SMALL[@]}" --set cmaes.robust_scope=all --out "$T/bad_scope" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cmaes.robust_scope" "$T/err" && [ ! -e "$T/bad_scope" ] \
  && echo "ok: a bad robust scope exits 2 and writes nothing" || fail "bad robust scope: $(cat "$T/err")"
# A diagonal phase (sep-CMA-ES) for part of the run: bit-identical for 1 and 2 threads, and it
# changes the search; a negative one exits 2 and writes nothing.
"$BIN" optimize "${SMALL[@]}" --set cmaes.diagonal=3 --threads 1 --out "$T/d1" >/dev/null || fail "diagonal 1 thread"
"$BIN" optimize "${SMALL[@]}" --set cmaes.diagonal=3 --threads 2 --out "$T/d2" >/dev/null || fail "diagonal 2 threads"
cmp -s "$T/d1/params.json" "$T/d2/params.json" && ! cmp -s "$T/d1/params.json" "$T/t1/params.json" \
  && echo "ok: diagonal phase identical for 1 and 2 threads, and not the full search" \
  || fail "diagonal phase: threads differ, or it changed nothing"
"$BIN" optimize "${SMALL[@]}" --set cmaes.diagonal=-2 --out "$T/dneg" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cmaes.diagonal" "$T/err" && [ ! -e "$T/dneg" ] \
  && echo "ok: a negative diagonal phase exits 2 and writes nothing" || fail "bad diagonal: $(cat "$T/err")"
# The default (-1) chooses from the dimension: below 100 parameters the full covariance (the
# bits of cmaes.diagonal = 0), from 100 on a diagonal one throughout (the bits of a phase longer
# than the run), said on stderr.
DIM=(--set cmaes.population=8 --set cmaes.generations=3 --set sim.steps=60 --set cmaes.robust_samples=0
     --set reference.rerank=0)
"$BIN" optimize "${DIM[@]}" --set actuation.modes=4 --quiet --out "$T/da24" >/dev/null
"$BIN" optimize "${DIM[@]}" --set actuation.modes=4 --set cmaes.diagonal=0 --quiet --out "$T/d024" >/dev/null
"$BIN" optimize "${DIM[@]}" --set actuation.modes=17 --out "$T/da102" >/dev/null 2>"$T/err102"
"$BIN" optimize "${DIM[@]}" --set actuation.modes=17 --set cmaes.diagonal=1000 --quiet --out "$T/dl102" >/dev/null
"$BIN" optimize "${DIM[@]}" --set actuation.modes=17 --set cmaes.diagonal=0 --quiet --out "$T/d0102" >/dev/null
strip_cfg() { grep -v '"diagonal"' "$1"; }
cmp -s <(strip_cfg "$T/da24/params.json") <(strip_cfg "$T/d024/params.json") \
  && cmp -s <(strip_cfg "$T/da102/params.json") <(strip_cfg "$T/dl102/params.json") \
  && ! cmp -s <(strip_cfg "$T/da102/params.json") <(strip_cfg "$T/d0102/params.json") \
  && grep -q "diagonal covariance throughout (cmaes.diagonal = -1 chooses it for 102 parameters" "$T/err102" \
  && echo "ok: cmaes.diagonal = -1 is full below 100 parameters, diagonal from 100 on, and says so" \
  || fail "automatic diagonal: $(cat "$T/err102")"
# cmaes.sigma0 = 0 (the default) chooses 0.3 × min(1, 8 / signals) × min(1, 5 / w): the bits
# of 0.15 for 4 modes × 2 sinusoids at the default w = 10, of 0.3 × 8/20 / 2 for 10 × 2, of
# 0.3 for 4 × 2 at w = 5; said on stderr.
s20=$(awk 'BEGIN{printf "%.17g", 0.3 * (8 / 20) * 0.5}')
"$BIN" optimize "${DIM[@]}" --set actuation.modes=4 --set cmaes.sigma0=0.15 --quiet --out "$T/s24" >/dev/null
"$BIN" optimize "${DIM[@]}" --set actuation.modes=10 --out "$T/sa20" >/dev/null 2>"$T/errs20"
"$BIN" optimize "${DIM[@]}" --set actuation.modes=10 --set cmaes.sigma0="$s20" --quiet --out "$T/s20" >/dev/null
"$BIN" optimize "${DIM[@]}" --set actuation.modes=4 --set subspace.skinning_modes=5 --out "$T/sa5" >/dev/null 2>"$T/errs5"
"$BIN" optimize "${DIM[@]}" --set actuation.modes=4 --set subspace.skinning_modes=5 --set cmaes.sigma0=0.3 --quiet --out "$T/s5" >/dev/null
strip_s() { grep -v '"sigma0"' "$1"; }
cmp -s <(strip_s "$T/da24/params.json") <(strip_s "$T/s24/params.json") \
  && cmp -s <(strip_s "$T/sa20/params.json") <(strip_s "$T/s20/params.json") \
  && cmp -s <(strip_s "$T/sa5/params.json") <(strip_s "$T/s5/params.json") \
  && ! cmp -s <(strip_s "$T/sa20/params.json") <(strip_s "$T/da24/params.json") \
  && grep -q "sigma0 0.06 (cmaes.sigma0 = 0 chooses it for 20 signals and w = 10)" "$T/errs20" \
  && grep -q "sigma0 0.3 (cmaes.sigma0 = 0 chooses it for 8 signals and w = 5)" "$T/errs5" \
  && echo "ok: cmaes.sigma0 = 0 is 0.15 for 8 signals at w = 10, 0.3 (8/20)/2 for 20, 0.3 at w = 5, and says so" \
  || fail "automatic sigma0: $(cat "$T/errs20" "$T/errs5")"
# Where turning over is the task (roll, flip), the 20 signals narrow it by sqrt(8/20) only.
"$BIN" optimize "${DIM[@]}" --set actuation.modes=10 --set objective.kind=roll --out "$T/sr20" \
  >/dev/null 2>"$T/errr20"
grep -q "sigma0 0.0949 (cmaes.sigma0 = 0 chooses it for 20 signals and w = 10)" "$T/errr20" \
  && echo "ok: cmaes.sigma0 = 0 for a roll is 0.3 sqrt(8/20)/2 for 20 signals" \
  || fail "automatic sigma0 for a roll: $(cat "$T/errr20")"
# Restarts need something to end a run, and say so; with early stops or the collapse trigger
# (on by default) the run is accepted.
"$BIN" optimize "${SMALL[@]}" --set cmaes.restarts=1 --set cmaes.restart_collapse=0 --set cmaes.restart_stall=0 --out "$T/rs" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cmaes.restart_collapse" "$T/err" && [ ! -e "$T/rs" ] && echo "ok: restarts without a trigger refused" \
  || fail "restarts without a trigger: $(cat "$T/err")"
"$BIN" optimize "${SMALL[@]}" --set cmaes.restarts=1 --set cmaes.early_stop=true --out "$T/rs" >/dev/null \
  && echo "ok: restarts with early_stop run" || fail "restarts with early_stop"
# BIPOP under a rollout budget: a collapse threshold this coarse ends runs within a few
# generations, so restarts happen; history.csv numbers them and their populations, the budget
# (less the final mean's rollout) is never exceeded, and 1 and 2 threads agree.
BIP=(--set cmaes.restarts=6 --set cmaes.restart_strategy=bipop --set cmaes.restart_collapse=0.27
     --set cmaes.budget=150)
"$BIN" optimize "${SMALL[@]}" "${BIP[@]}" --threads 1 --out "$T/b1" >/dev/null || fail "bipop 1 thread"
"$BIN" optimize "${SMALL[@]}" "${BIP[@]}" --threads 2 --out "$T/b2" >/dev/null || fail "bipop 2 threads"
cmp -s "$T/b1/params.json" "$T/b2/params.json" && diff <(strip_clock "$T/b1/history.csv") <(strip_clock "$T/b2/history.csv") >/dev/null \
  && echo "ok: bipop identical for 1 and 2 threads" || fail "bipop differs between thread counts"
awk -F, 'NR>1 {if ($10 > 149) over=1; if ($11 > last) r++; last=$11; p[$12]=1} END{n=0; for (k in p) n++; exit !(over == 0 && r >= 2 && n >= 2)}' "$T/b1/history.csv" \
  && echo "ok: bipop restarts recorded within the budget" || fail "bipop history: $(cut -d, -f1,10-12 "$T/b1/history.csv" | tr '\n' ' ')"
grep -q '"stop_reason":[[:space:]]*"budget"' "$T/b1/params.json" && echo "ok: stop_reason budget" \
  || fail "stop_reason: $(grep stop_reason "$T/b1/params.json")"

# A restart begins only when the budget left could pay for the run that ended
# (cmaes.restart_room): with 14 generations of 8 (112 evaluations) the first run stalls after 72,
# so the job ends there, where restart_room=0 spends the 40 left on a run of 16 that starts from
# the box centre again. Up to that point both jobs are the same, bit for bit; with 30
# generations there is room, and the runs of 16 and 32 follow.
RM=(--set cmaes.restarts=3 --set cmaes.restart_stall=2)
"$BIN" optimize "${SMALL[@]}" "${RM[@]}" --set cmaes.generations=14 --out "$T/rm1" >/dev/null || fail "restart_room 1"
"$BIN" optimize "${SMALL[@]}" "${RM[@]}" --set cmaes.generations=14 --set cmaes.restart_room=0 --out "$T/rm0" >/dev/null || fail "restart_room 0"
n1=$(($(wc -l < "$T/rm1/history.csv") - 1))
grep -q '"stop_reason":[[:space:]]*"restart_room"' "$T/rm1/params.json" \
  && [ "$(tail -1 "$T/rm1/history.csv" | cut -d, -f2,11)" = "72,0" ] \
  && [ "$(tail -1 "$T/rm0/history.csv" | cut -d, -f11,12)" = "1,16" ] \
  && diff <(strip_clock "$T/rm1/history.csv") <(strip_clock "$T/rm0/history.csv" | head -$((n1 + 1))) >/dev/null \
  && echo "ok: no restart without room for it; the same search up to there" \
  || fail "restart_room: $(grep stop_reason "$T/rm1/params.json") $(cut -d, -f2,11,12 "$T/rm1/history.csv" | tr '\n' ' ') / $(cut -d, -f2,11,12 "$T/rm0/history.csv" | tr '\n' ' ')"
"$BIN" optimize "${SMALL[@]}" "${RM[@]}" --set cmaes.generations=30 --out "$T/rm30" >/dev/null || fail "restart_room 30"
awk -F, 'NR>1 {p[$12]=1} END{exit !(p[8] && p[16] && p[32])}' "$T/rm30/history.csv" \
  && echo "ok: restarts where there is room" || fail "restart_room 30: $(cut -d, -f2,11,12 "$T/rm30/history.csv" | tr '\n' ' ')"
"$BIN" optimize "${SMALL[@]}" --set cmaes.restart_room=-1 --out "$T/rmneg" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "cmaes.restart_room" "$T/err" && [ ! -e "$T/rmneg" ] \
  && echo "ok: a negative restart_room exits 2 and writes nothing" || fail "bad restart_room: $(cat "$T/err")"

# simulate replays params.json to the same objective, bit for bit.
"$BIN" simulate "$T/t1/params.json" --out "$T/replay" >/dev/null 2>&1 || fail "simulate params.json"
[ "$(json_num "$T/replay/result.json" J)" = "$(json_num "$T/t1/result.json" J)" ] \
  && echo "ok: simulate reproduces J" || fail "simulate J $(json_num "$T/replay/result.json" J) != $(json_num "$T/t1/result.json" J)"

# --expect: a user's regression check passes on a fresh result and fails (exit 1, with the
# quantity named) on an altered one.
"$BIN" simulate "$T/t1/params.json" --out "$T/replay" --force --expect "$T/t1/result.json" >"$T/out" 2>&1 \
  && grep -q matches "$T/out" && echo "ok: --expect passes on the stored result" || fail "--expect on a fresh result"
sed 's/"J":[^,]*/"J": -123.0/' "$T/t1/result.json" > "$T/altered.json"
"$BIN" simulate "$T/t1/params.json" --out "$T/replay" --force --expect "$T/altered.json" >"$T/out" 2>&1
[ $? -eq 1 ] && grep -q "differs: J expected -123" "$T/out" && echo "ok: --expect fails on an altered result" \
  || fail "--expect on an altered result"

# A params.json replayed on another mesh is refused.
"$BIN" simulate "$T/t1/params.json" --set mesh.path="$SRC/data/critter.mesh" --out "$T/other" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q checksum "$T/err" && echo "ok: params from another mesh refused" || fail "params on another mesh"

# Interrupt after the first generation, resume, and end exactly where an uninterrupted run ends.
LONG=(--set cmaes.population=8 --set cmaes.generations=6 --set sim.steps=300 --set actuation.modes=4 --quiet)
opt_ok "$BIN" optimize "${LONG[@]}" --threads 1 --out "$T/full" >/dev/null || fail "uninterrupted run"
interrupt_after 2 "$T/int" "$BIN" optimize "${LONG[@]}" --threads 1 --out "$T/int"
code=$?
if [ $code -eq 130 ]; then
  echo "ok: SIGINT exits 130 after saving a checkpoint"
  opt_ok "$BIN" optimize --resume "$T/int" --threads 2 --quiet >/dev/null || fail "--resume"
  cmp -s "$T/full/params.json" "$T/int/params.json" && echo "ok: resumed run ends identical" \
    || fail "resumed params.json differs from the uninterrupted run"
  diff <(strip_clock "$T/full/history.csv") <(strip_clock "$T/int/history.csv") >/dev/null \
    && echo "ok: resumed history identical" || fail "resumed history.csv differs"
else
  echo "note: the run finished before the signal (exit $code); resume not exercised"
fi
# Killed outright (no chance to save): the checkpoint written during the run, a second or so
# behind, resumes to the uninterrupted result; the generations after it are redone.
KILLED=(--set cmaes.population=8 --set cmaes.generations=40 --set sim.steps=300 --set actuation.modes=4
        --set reference.rerank=0 --quiet)
opt_ok "$BIN" optimize "${KILLED[@]}" --threads 1 --out "$T/kfull" >/dev/null || fail "uninterrupted run (40 generations)"
"$BIN" optimize "${KILLED[@]}" --threads 1 --out "$T/kill" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  [ -f "$T/kill/checkpoint.bin" ] && break
  sleep 0.02
done
kill -KILL $pid 2>/dev/null
wait $pid
code=$?
if [ $code -eq 137 ] && [ -f "$T/kill/checkpoint.bin" ] && [ ! -e "$T/kill/params.json" ]; then
  opt_ok "$BIN" optimize --resume "$T/kill" --threads 2 --quiet >/dev/null || fail "--resume after SIGKILL"
  same_run "$T/kfull" "$T/kill" \
    && echo "ok: killed mid-run, resumed from the checkpoint it saved, ends identical" \
    || fail "resume after SIGKILL differs from the uninterrupted run"
else
  echo "note: the run ended (exit $code) before it was killed mid-run; SIGKILL resume not exercised"
fi
# Resuming with another configuration is refused before any work.
"$BIN" optimize --resume "$T/full" --set sim.steps=100 --quiet >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q "another configuration" "$T/err" && echo "ok: resume with other config refused" \
  || fail "resume with another configuration"

finish
