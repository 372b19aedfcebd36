#!/usr/bin/env bash
# cli_mpi.sh BIN SRCDIR: optimize under mpirun gives bit-identical params.json and history.csv
# (the wall-clock column aside) for 1 and 3 processes and for a plain run, and a rank that
# fails ends the whole job with its message and a non-zero exit code, without hanging.
# Skipped (exit 77) when the program was built without MPI or mpirun is missing.
. "$(dirname "$0")/lib_cli.sh" "$@"
if "$BIN" --version | grep -q "(no mpi)"; then echo "SKIP: built without MPI"; exit 77; fi
if ! command -v mpirun >/dev/null 2>&1; then echo "SKIP: mpirun not found"; exit 77; fi

# OpenMPI on a small CI box: running as root, more ranks than cores, shared-memory transport
# only, no core binding (three ranks bound to two cores would queue behind each other).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Same BLAS thread count and kernels for every run compared (both change the precompute's last
# bits): the kernels the program chooses, for the fault tool below too, which is not the program.
export OPENBLAS_NUM_THREADS=1
core=$("$BIN" --version | sed -n 's/^blas: //p')
[ -n "$core" ] && [ "$core" != "not OpenBLAS" ] && export OPENBLAS_CORETYPE=$core
# OpenMPI keeps some allocations until exit; under AddressSanitizer do not count them as leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
MPIRUN=(timeout 120 mpirun --oversubscribe --bind-to none --mca btl self,vader)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
TALK=(--set cmaes.population=8 --set cmaes.generations=4 --set sim.steps=150
      --set actuation.modes=4)
SMALL=("${TALK[@]}" --quiet)

opt_ok "$BIN" optimize "${SMALL[@]}" --out "$T/plain" >/dev/null || fail "plain optimize"
# A search with no gain by generation 10 turns objective.whole_losses on on every rank
# (cli_plateau.sh): the quadruped sliding down a 30° slope of friction 0.05.
SLIDE=(--set cmaes.population=6 --set cmaes.generations=40 --set actuation.modes=3
       --set sim.steps=100 --set reference.rerank=0 --set contact.slope=30
       --set contact.friction=0.05 --quiet)
opt_ok "$BIN" optimize "${SLIDE[@]}" --out "$T/slide1" >/dev/null || fail "plain sliding optimize"
opt_ok "${MPIRUN[@]}" -n 3 "$BIN" optimize "${SLIDE[@]}" --threads 1 --out "$T/slide3" >/dev/null \
  2>"$T/err3" || { fail "mpirun -n 3, sliding"; cat "$T/err3"; }
grep -q '"whole_losses":[[:space:]]*true' "$T/slide1/params.json" \
  && cmp -s "$T/slide1/params.json" "$T/slide3/params.json" \
  && diff <(strip_clock "$T/slide1/history.csv") <(strip_clock "$T/slide3/history.csv") >/dev/null \
  && echo "ok: the switch to whole losses is the plain run's on 3 processes" \
  || fail "the sliding search on 3 processes differs from the plain run"
# A search that ends with no gain, going backward, runs once more with whole losses; rank 0
# decides and every rank follows (cli_whole_losses.sh): the octopod with strokes of exponent 5.
OCTO=("$SRC/data/octopod.mesh" --set cmaes.population=6 --set cmaes.generations=40
      --set actuation.modes=3 --set sim.steps=100 --set reference.rerank=0
      --set actuation.amplitude_p=5 --seed 4 --quiet)
opt_ok "$BIN" optimize "${OCTO[@]}" --threads 1 --out "$T/oc1" >/dev/null || fail "plain octopod"
opt_ok "${MPIRUN[@]}" -n 2 "$BIN" optimize "${OCTO[@]}" --threads 1 --out "$T/oc2" >/dev/null \
  2>"$T/err2" || { fail "mpirun -n 2, octopod"; cat "$T/err2"; }
[ -d "$T/oc1/whole_losses" ] && cmp -s "$T/oc1/params.json" "$T/oc2/params.json" \
  && cmp -s "$T/oc1/whole_losses/params.json" "$T/oc2/whole_losses/params.json" \
  && echo "ok: the search with whole losses is the plain run's on 2 processes" \
  || fail "the second search on 2 processes differs from the plain run"
# A body that falls over left alone is laid down on every rank alike, and rank 0's second
# precompute cache is the one the others read (cli_stand.sh): a leaning stick of voxels.
python3 "$SRC/scripts/voxel_bodies.py" leaning "$T/leaning.mesh" >/dev/null \
  || fail "voxel_bodies.py leaning"
LEAN=(--set cmaes.population=6 --set cmaes.generations=3 --set actuation.modes=3 --quiet)
opt_ok "$BIN" optimize "$T/leaning.mesh" "${LEAN[@]}" --threads 1 --out "$T/lean1" >/dev/null \
  2>&1 || fail "plain optimize of the leaning body"
opt_ok "${MPIRUN[@]}" -n 2 "$BIN" optimize "$T/leaning.mesh" "${LEAN[@]}" --threads 1 \
  --out "$T/lean2" >/dev/null 2>"$T/err2" || { fail "mpirun -n 2, leaning"; cat "$T/err2"; }
grep -Eq '"lay_down":[[:space:]]*false' "$T/lean1/params.json" \
  && cmp -s "$T/lean1/params.json" "$T/lean2/params.json" \
  && echo "ok: the leaning body is laid down alike on 2 processes" \
  || fail "the laid-down search on 2 processes differs from the plain run"
# Robust replays in rounds (src/job/optimize_robust.c): by generation 12 some candidates stop
# after their first or second replay (a generation's replays are then not a multiple of R = 8);
# every rank takes the same rounds, so the 3-process run is the plain one.
ROUNDS=("${SMALL[@]}" --set cmaes.generations=12 --set reference.rerank=0)
opt_ok "$BIN" optimize "${ROUNDS[@]}" --out "$T/rounds1" >/dev/null || fail "plain optimize, 12 generations"
opt_ok "${MPIRUN[@]}" -n 3 "$BIN" optimize "${ROUNDS[@]}" --threads 1 --out "$T/rounds3" >/dev/null \
  2>"$T/err3" || { fail "mpirun -n 3, 12 generations"; cat "$T/err3"; }
cut_short=$(awk -F, 'NR > 1 { r = $10 - prev - $12 - ($9 != ""); prev = $10; if (r % 8) n++ }
                     NR == 1 { prev = 0 } END { print n + 0 }' "$T/rounds1/history.csv")
[ "$cut_short" -ge 1 ] && cmp -s "$T/rounds1/params.json" "$T/rounds3/params.json" \
  && diff <(strip_clock "$T/rounds1/history.csv") <(strip_clock "$T/rounds3/history.csv") >/dev/null \
  && echo "ok: replays cut short in $cut_short generations, the same on 3 processes" \
  || fail "rounds of replays: $cut_short generations cut short, or 3 processes differ from the plain run"
opt_ok "${MPIRUN[@]}" -n 1 "$BIN" optimize "${SMALL[@]}" --out "$T/n1" >/dev/null 2>"$T/err1" \
  || { fail "mpirun -n 1"; cat "$T/err1"; }
opt_ok "${MPIRUN[@]}" -n 3 "$BIN" optimize "${SMALL[@]}" --threads 1 --out "$T/n3" >/dev/null 2>"$T/err3" \
  || { fail "mpirun -n 3"; cat "$T/err3"; }
for d in n1 n3; do
  cmp -s "$T/plain/params.json" "$T/$d/params.json" && echo "ok: params.json of $d identical to the plain run" \
    || fail "params.json of $d differs from the plain run"
  diff <(strip_clock "$T/plain/history.csv") <(strip_clock "$T/$d/history.csv") >/dev/null \
    && echo "ok: history.csv of $d identical" || fail "history.csv of $d differs"
done
# The full-space validation (reference.rerank = -1: 16 candidates on the sample body at 150
# steps) is shared among the ranks by blocks of candidates; its verdicts, the gait it chooses
# and the whole result.json are those of the plain run.
cmp -s "$T/plain/result.json" "$T/n3/result.json" && echo "ok: result.json of n3 identical to the plain run" \
  || fail "result.json of n3 differs from the plain run"
ncand=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["rerank"]["candidates"]))' \
  "$T/n3/result.json" 2>/dev/null || echo 0)
[ "$ncand" -ge 3 ] && echo "ok: the 3 ranks shared $ncand full-space replays" \
  || fail "the validation replayed $ncand candidates under mpirun -n 3 (expected at least 3)"
[ -s "$T/n3/precompute.cache" ] && echo "ok: rank 0 shared the precompute through DIR/precompute.cache" \
  || fail "no precompute.cache in the output of the 3-process run"

# reference.refine forced (any gait keeps less than 100 times its travel): rank 0 decides on
# the second search and every rank runs it; both searches, the comparison and the files are the
# plain run's.
REFINE=("${SMALL[@]}" --set reference.refine=100 --set subspace.skinning_modes=4)
opt_ok "$BIN" optimize "${REFINE[@]}" --out "$T/refine1" >/dev/null 2>&1 || fail "plain refine"
opt_ok "${MPIRUN[@]}" -n 2 "$BIN" optimize "${REFINE[@]}" --threads 1 --out "$T/refine2" \
  >/dev/null 2>"$T/err2" || { fail "mpirun -n 2, refine"; cat "$T/err2"; }
[ -f "$T/refine1/finer/params.json" ] && grep -q '"refine"' "$T/refine1/result.json" \
  && cmp -s "$T/refine1/params.json" "$T/refine2/params.json" \
  && cmp -s "$T/refine1/result.json" "$T/refine2/result.json" \
  && cmp -s "$T/refine1/finer/params.json" "$T/refine2/finer/params.json" \
  && cmp -s "$T/refine1/finer_centre/params.json" "$T/refine2/finer_centre/params.json" \
  && python3 -c 'import json, sys; a, b = (json.load(open(f))["cmaes"] for f in sys.argv[1:]); assert a == b and a["start"]' \
     "$T/refine1/finer/config.json" "$T/refine2/finer/config.json" \
  && echo "ok: the searches in a finer model, from the first gait and from the centre, are the plain run's on 2 processes" \
  || fail "reference.refine on 2 processes differs from the plain run"
# Only rank 0 talks: one progress header, not three.
opt_ok "${MPIRUN[@]}" -n 3 "$BIN" optimize "${TALK[@]}" --set reference.refine=0 --threads 1 --out "$T/talk" >"$T/out" 2>"$T/err" \
  || fail "mpirun -n 3 (progress)"
[ "$(grep -c "vertices" "$T/err")" -eq 1 ] && [ "$(grep -c "^J " "$T/out")" -eq 1 ] \
  && echo "ok: progress and results come from rank 0 only" || fail "several ranks printed"

# A failing rank ends the job with its message, quickly. The failure is injected through the
# optimize job's test seam (mlc_optimize_def.fault) by tests/tools/optimize_fault.c
# (MLC_FAULT_BIN, set by CMake); the program itself has no such seam.
if [ -z "${MLC_FAULT_BIN:-}" ]; then
  echo "SKIP: failing rank (MLC_FAULT_BIN not set)"
else
  start=$(date +%s)
  "${MPIRUN[@]}" -n 3 "$MLC_FAULT_BIN" 1 "$T/bad" cmaes.population=8 cmaes.generations=4 \
    sim.steps=150 actuation.modes=4 >/dev/null 2>"$T/errbad"
  code=$?
  took=$(( $(date +%s) - start ))
  if [ $code -ne 0 ] && [ $code -ne 124 ] && grep -q "rank 1 of 3: precompute failed on purpose" "$T/errbad"; then
    echo "ok: a failing rank ends the job (exit $code, ${took}s) with its message"
  else
    fail "failing rank: exit $code after ${took}s"; cat "$T/errbad"
  fi
  # The same job without a failing rank (none is rank 5 of 3) runs to the end.
  "${MPIRUN[@]}" -n 3 "$MLC_FAULT_BIN" 5 "$T/nofault" cmaes.population=8 cmaes.generations=4 \
    sim.steps=150 actuation.modes=4 >/dev/null 2>"$T/errnofault"
  code=$?
  if { [ $code -eq 0 ] || [ $code -eq 3 ]; } && cmp -s "$T/plain/params.json" "$T/nofault/params.json"; then
    echo "ok: without the fault the job gives the plain run's params.json"
  else
    fail "job without a fault: exit $code"; cat "$T/errnofault"
  fi
fi
# A failure on rank 0 (an input error every rank sees) exits cleanly with code 2, said once.
"${MPIRUN[@]}" -n 3 "$BIN" optimize "${SMALL[@]}" --set sim.steps=0 --out "$T/bad2" >/dev/null 2>"$T/errbad2"
code=$?
[ $code -eq 2 ] && [ "$(grep -c "modalloco: error" "$T/errbad2")" -eq 1 ] \
  && echo "ok: an input error exits 2 with one message" || { fail "input error under mpirun: exit $code"; cat "$T/errbad2"; }

# A rank killed mid-run: mpirun ends the job non-zero instead of waiting forever.
timeout 120 "${MPIRUN[@]:2}" -n 2 "$BIN" optimize "${SMALL[@]}" --set cmaes.generations=100000 \
  --threads 1 --out "$T/killed" >/dev/null 2>"$T/errkill" &
job=$!
victim=""
for _ in $(seq 1 200); do
  [ -s "$T/killed/history.csv" ] && victim=$(pgrep -f "^$BIN optimize.*$T/killed" | tail -1) && [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] && kill -KILL "$victim"
wait $job
code=$?
[ -n "$victim" ] && [ $code -ne 0 ] && [ $code -ne 124 ] && echo "ok: a killed rank ends the job (exit $code)" \
  || fail "killed rank: exit $code (victim '$victim')"

finish
