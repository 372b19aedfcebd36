#!/usr/bin/env bash
# bench.sh: the paper's Table 1 as a benchmark, plus mesh independence and thread scaling.
#
#   scripts/bench.sh [BUILD_DIR]          (default BUILD_DIR: build-perf, then build)
#
# Parts (BENCH_PARTS, default "table indep threads"):
#   table    The six Table 1 configurations of "Actuators À La Mode" (m, k, w, |C_p|, |I|,
#            steps; CMA-ES population 16, one actuation cluster), each on the closest mesh at
#            hand, plus a koala stress row at the Bat settings. Per row: precompute time,
#            per-step cost, rollouts per second, total optimization time and peak RSS
#            (`modalloco optimize ... --quiet` under /usr/bin/time -v), and the ratio of the
#            total to the paper's reported time. Times come from history.csv: a generation's
#            time is the mean over generations 2..G, the precompute is generation 1's
#            timestamp minus one generation, per-step = generation time / (16 × steps) × threads.
#   indep    Mesh independence: the Bat settings on one shape (spot) at three resolutions
#            (tetgen -pYq1.414 with no volume bound, -a1.2e-5, -a8e-6, into $BENCH_TMP):
#            per-step cost (bench_sim --mesh, median thread-CPU µs) and precompute time
#            against n log n growth.
#   threads  Rollout-phase scaling: optimize on the Bat row's mesh with --threads 1 and 2;
#            also checks that J is bit-identical (thread count must not change results).
#
# Environment:
#   BENCH_GENERATIONS  generations per optimize (default 200, the paper's). A smaller value
#                      gives a shortened run: every printed total is then extrapolated to 200
#                      generations as precompute + 200 × (mean generation time), and the
#                      header says so.
#   BENCH_THREADS      --threads of the table rows (default 0 = all cores)
#   BENCH_MESHES       optional directory of pre-tetrahedralized meshes (NAME/NAME.ele, and
#                      koala/koala.ele.gz for the koala row); without it the rows use the
#                      surfaces bundled in data/ (NAME.off.gz, tetrahedralized on load the
#                      same way) and skip koala; a row whose mesh is missing in both falls
#                      back to data/critter.mesh
#   BENCH_TMP          scratch directory for generated meshes and runs (default
#                      /tmp/modalloco-bench); never inside the repository
#   BENCH_SKIP_KOALA=1 skip the koala stress row (its precompute alone takes about a minute)
#   MLC_NO_AVX2=1      run everything on the SSE2 baseline kernels instead of the AVX2 ones
#                      (read by the program itself; results are bit-identical, only slower).
#                      The indep part prints which kernel path bench_sim used.
# Threads: OPENBLAS_NUM_THREADS=1 is exported (faster on 2 cores, and bit-stable).
# Output: one table per part on stdout; raw logs stay in $BENCH_TMP.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench.sh: no built modalloco (give BUILD_DIR)" >&2; exit 2; }
BIN=$BUILD/modalloco
GENS=${BENCH_GENERATIONS:-200}
THREADS=${BENCH_THREADS:-0}
MESHES=${BENCH_MESHES:-}
TMP=${BENCH_TMP:-/tmp/modalloco-bench}
PARTS=${BENCH_PARTS:-"table indep threads"}
export OPENBLAS_NUM_THREADS=1
mkdir -p "$TMP"
case "$TMP/" in "$ROOT"/*) echo "bench.sh: BENCH_TMP must be outside the repository" >&2; exit 2 ;; esac

# ---- meshes -------------------------------------------------------------------------------
# spot_fine (~174k tets) stands in for the 180-200k-tet Creepy Tree and Bearded Dragon.
mesh_path() { # name -> path (generated or unpacked into $TMP when needed)
    case $1 in
    critter) echo "$ROOT/data/critter.mesh" ;;
    cat | spot | penguin)
        if [ -n "$MESHES" ] && [ -f "$MESHES/$1/$1.ele" ]; then echo "$MESHES/$1/$1.ele"
        elif [ -f "$ROOT/data/$1.off.gz" ]; then echo "$ROOT/data/$1.off.gz"
        else echo "$ROOT/data/critter.mesh"; fi ;;
    spot_mid | spot_fine)
        local a=1.2e-5; [ "$1" = spot_fine ] && a=8e-6
        if [ ! -f "$TMP/$1.1.ele" ]; then
            if [ -n "$MESHES" ] && [ -f "$MESHES/spot/spot.off" ]; then cp "$MESHES/spot/spot.off" "$TMP/$1.off"
            elif [ -f "$ROOT/data/spot.off.gz" ]; then gunzip -c "$ROOT/data/spot.off.gz" > "$TMP/$1.off"
            else echo "$ROOT/data/critter.mesh"; return; fi
            (cd "$TMP" && tetgen -pYq1.414a$a -zQ "$1.off" > /dev/null)
        fi
        echo "$TMP/$1.1.ele" ;;
    koala)
        if [ -z "$MESHES" ] || [ ! -f "$MESHES/koala/koala.ele.gz" ]; then echo ""; return; fi
        for f in node ele face; do
            [ -f "$TMP/koala.$f" ] || gunzip -c "$MESHES/koala/koala.$f.gz" > "$TMP/koala.$f"
        done
        echo "$TMP/koala.ele" ;;
    esac
}
verts() { # same for the vertex count
    case $1 in
    *.ele) head -1 "${1%.ele}.node" | awk '{print $1}' ;;
    *) "$BIN" info "$1" 2>/dev/null | awk '$1 == "vertices" {print $2}' ;;
    esac
}
tets() { # a TetGen file's header, else what `info` says (a surface is tetrahedralized first)
    case $1 in
    *.ele) head -1 "$1" | awk '{print $1}' ;;
    *) "$BIN" info "$1" 2>/dev/null | awk '$1 == "tets" {print $2}' ;;
    esac
}

# ---- one optimize run -> "precompute gen_s rollouts_per_s per_step_us total_s rss_mb J" ----
run_opt() { # tag mesh m k w cp ns steps threads
    local tag=$1 mesh=$2 m=$3 k=$4 w=$5 cp=$6 ns=$7 steps=$8 thr=$9 out=$TMP/run_$1
    rm -rf "$out"
    /usr/bin/time -v "$BIN" optimize "$mesh" --out "$out" --quiet --force --threads "$thr" \
        --set actuation.modes="$m" --set actuation.sinusoids="$k" \
        --set subspace.skinning_modes="$w" --set subspace.passive_clusters="$cp" \
        --set subspace.contact_samples="$ns" --set sim.steps="$steps" \
        --set cmaes.population=16 --set cmaes.generations="$GENS" \
        --set subspace.actuation_clusters=1 > "$out.log" 2> "$out.time" || {
        echo "FAILED $tag (see $out.log, $out.time)" >&2; return 1; }
    local nthr=$thr; [ "$nthr" = 0 ] && nthr=$(nproc)
    awk -F, -v G="$GENS" -v steps="$steps" -v thr="$nthr" -v rss="$(awk '/Maximum resident/ {print $6}' "$out.time")" \
        -v J="$(awk -F'[:,]' '/"J"/ {gsub(/[ \t]/, "", $2); print $2; exit}' "$out/result.json")" '
        NR > 1 { t[$1] = $6; n = $1 }
        END {
            gen = n > 1 ? (t[n] - t[1]) / (n - 1) : t[1]
            pre = t[1] - gen; if (pre < 0) pre = 0
            printf "%.2f %.4f %.1f %.1f %.1f %.0f %s\n", pre, gen, 16 / gen, gen / (16 * steps) * thr * 1e6,
                   pre + 200 * gen, rss / 1024, J
        }' "$out/history.csv"
}

if [[ " $PARTS " == *" table "* ]]; then
    echo "== (a) Table 1 of the paper: $GENS generations x 16$( [ "$GENS" != 200 ] && echo ", totals EXTRAPOLATED to 200 generations" ), threads=$THREADS ($(nproc) cores)"
    printf "%-15s %-10s %7s | %2s %2s %2s %3s %3s %4s | %8s %8s %8s %9s %9s %7s %8s | %s\n" \
        row mesh tets m k w Cp I step "precomp" "gen s" "roll/s" "us/step" "total s" "RSS MB" "paper s" "total/paper"
    # row  mesh  m k w Cp I steps paper_seconds
    # |I| is modalloco's default of 64 contact samples, not the paper's 20–40 (docs/method.md).
    rows="Couch spot 10 2 5 5 64 300 984
CreepyTree spot_fine 6 2 5 5 64 300 3300
Bat cat 3 2 5 10 64 300 900
BeardedDragon spot_fine 6 2 7 10 64 200 1270
Octopus spot 16 2 6 20 64 300 3590
Treefrog spot 5 3 5 10 64 200 1280
Koala(stress) koala 3 2 5 10 64 300 -"
    while read -r name mname m k w cp ns steps paper; do
        [ "$mname" = koala ] && [ "${BENCH_SKIP_KOALA:-0}" = 1 ] && continue
        mesh=$(mesh_path "$mname"); [ -n "$mesh" ] || continue
        res=$(run_opt "$name" "$mesh" "$m" "$k" "$w" "$cp" "$ns" "$steps" "$THREADS") || continue
        read -r pre gen rps us tot rss J <<< "$res"
        ratio=$( [ "$paper" = - ] && echo - || awk -v a="$tot" -v b="$paper" 'BEGIN { printf "%.3f", a / b }')
        printf "%-15s %-10s %7s | %2s %2s %2s %3s %3s %4s | %8s %8s %8s %9s %9s %7s %8s | %s  (J %s)\n" \
            "$name" "$(basename "$mesh" | cut -d. -f1)" "$(tets "$mesh")" "$m" "$k" "$w" "$cp" "$ns" "$steps" \
            "$pre" "$gen" "$rps" "$us" "$tot" "$rss" "$paper" "$ratio" "$J"
    done <<< "$rows"
    echo "(us/step = generation time / (16 rollouts x steps) x threads: the per-thread cost of a step including"
    echo " the objective bookkeeping; the paper's hardware and parallelism are not given)"
fi

if [[ " $PARTS " == *" indep "* ]]; then
    echo
    echo "== (b) mesh independence: Bat settings (w=5 m=3 |Cp|=10 |I|=20), spot at three resolutions"
    "$BUILD/bench_sim" 1 --config 5,3,10,20 | grep '^kernels:' || true
    printf "%-10s %8s %8s | %10s %10s | %11s %14s\n" mesh verts tets "us/step" "cpu us" "subspace s" "n log n ratio"
    base_t=""; base_n=""
    for mname in spot spot_mid spot_fine; do
        mesh=$(mesh_path "$mname")
        line=$("$BUILD/bench_sim" 5 --mesh "$mesh" --config 5,3,10,20 | tail -1)
        read -r us cpu sub <<< "$(echo "$line" | awk '{print $(NF-2), $(NF-1), $NF}')"
        nv=$(verts "$mesh")
        [ -z "$base_t" ] && base_t=$sub && base_n=$nv
        nl=$(awk -v n="$nv" -v b="$base_n" -v t="$sub" -v t0="$base_t" \
            'BEGIN { printf "%.2f (time x%.2f)", (n * log(n)) / (b * log(b)), t / t0 }')
        printf "%-10s %8s %8s | %10s %10s | %11s %14s\n" "$mname" "$nv" "$(tets "$mesh")" "$us" "$cpu" "$sub" "$nl"
    done
fi

if [[ " $PARTS " == *" threads "* ]]; then
    echo
    echo "== (c) thread scaling of the rollout phase: Bat settings on $(basename "$(mesh_path cat)"), $GENS generations"
    printf "%8s %10s %10s %10s %s\n" threads "gen s" "roll/s" speedup J
    one=""
    for thr in 1 2; do
        res=$(run_opt "threads$thr" "$(mesh_path cat)" 3 2 5 10 20 300 "$thr") || continue
        read -r pre gen rps us tot rss J <<< "$res"
        [ -z "$one" ] && one=$gen && J1=$J
        printf "%8s %10s %10s %10s %s%s\n" "$thr" "$gen" "$rps" "$(awk -v a="$one" -v b="$gen" 'BEGIN { printf "%.2f", a / b }')" \
            "$J" "$( [ "$J" = "$J1" ] && echo "  (identical)" || echo "  (DIFFERS)")"
    done
fi
