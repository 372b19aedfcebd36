#!/usr/bin/env bash
# bench_scale.sh: how the precompute grows with the mesh (docs/scaling.md).
#
#   scripts/bench_scale.sh [BUILD_DIR]          (default BUILD_DIR: build-perf, then build)
#
# For each mesh size: wall time, CPU time (user + system) and peak RSS (/usr/bin/time -v) of
#   modes      `modalloco modes MESH`, with the precompute's phases from modes.json (METIS
#              vertex ordering, the vibration factor's symbolic analysis, numeric factorization
#              and Lanczos loop, its nonzeros, the clusters);
#   optimize   a short `optimize MESH` (SCALE_GENERATIONS generations, default 5);
#   fullspace  `simulate RUN/params.json --full-space`: the optimized gait replayed in the
#              full-space reference (only up to SCALE_FULLSPACE_MAX_TETS tets, default 200000:
#              the reference is a full implicit FEM and takes hours on a million tets).
#
# Sizes (SCALE_SIZES, default "60k 174k"; each one a few minutes at most on 2 cores):
#   60k    the bundled spot surface, tetrahedralized with tetgen -pYq1.414 (59,477 tets)
#   174k   spot with the volume bound -a8e-6 (173,884 tets; scripts/bench.sh's spot_fine)
#   420k   the koala tet mesh (420,580 tets): needs SCALE_KOALA=DIR holding koala.node and
#          koala.ele (or their .gz); skipped without it
#   1m     spot with -a1.2e-6 (1,015,759 tets; tetgen alone takes about a minute; modes needs
#          about 5 GB and optimize about as much: run it alone on a shared machine)
#   NAME=N spot with mesh.min_tets=N (tetgen's bound from the enclosed volume)
# Environment:
#   SCALE_TMP            scratch directory for meshes and runs (default /tmp/modalloco-scale),
#                        never inside the repository
#   SCALE_MAX_MEMORY     passed as --max-memory to every command (default: the program's own
#                        default bound)
#   SCALE_THREADS        --threads of optimize (default 0 = all cores)
# OPENBLAS_NUM_THREADS=1 is exported (the program pins OpenBLAS to one thread anyway).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-}
if [ -z "$BUILD" ]; then
    for d in "$ROOT/build-perf" "$ROOT/build"; do [ -x "$d/modalloco" ] && BUILD=$d && break; done
fi
[ -n "$BUILD" ] && [ -x "$BUILD/modalloco" ] || { echo "bench_scale.sh: no built modalloco (give BUILD_DIR)" >&2; exit 2; }
BIN=$BUILD/modalloco
SIZES=${SCALE_SIZES:-"60k 174k"}
TMP=${SCALE_TMP:-/tmp/modalloco-scale}
GENS=${SCALE_GENERATIONS:-5}
FS_MAX=${SCALE_FULLSPACE_MAX_TETS:-200000}
THREADS=${SCALE_THREADS:-0}
MEM=()
[ -n "${SCALE_MAX_MEMORY:-}" ] && MEM=(--max-memory "$SCALE_MAX_MEMORY")
export OPENBLAS_NUM_THREADS=1
command -v /usr/bin/time > /dev/null || { echo "bench_scale.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
mkdir -p "$TMP"
case "$TMP/" in "$ROOT"/*) echo "bench_scale.sh: SCALE_TMP must be outside the repository" >&2; exit 2 ;; esac

# mesh NAME -> prints "PATH [--set ...]" for the size, generating it into $TMP when needed.
spot_bounded() { # name, tetgen volume bound
    if [ ! -f "$TMP/$1.1.ele" ]; then
        gunzip -c "$ROOT/data/spot.off.gz" > "$TMP/$1.off"
        (cd "$TMP" && tetgen -pYq1.414a"$2" -zQ "$1.off" > /dev/null)
    fi
    echo "$TMP/$1.1.ele"
}
mesh_args() {
    case $1 in
    60k) echo "$ROOT/data/spot.off.gz" ;;
    174k) spot_bounded spot_174k 8e-6 ;;
    1m) spot_bounded spot_1m 1.2e-6 ;;
    420k)
        [ -n "${SCALE_KOALA:-}" ] || return 1
        for f in node ele; do
            if [ ! -f "$TMP/koala.$f" ]; then
                if [ -f "$SCALE_KOALA/koala.$f" ]; then cp "$SCALE_KOALA/koala.$f" "$TMP/koala.$f"
                elif [ -f "$SCALE_KOALA/koala.$f.gz" ]; then gunzip -c "$SCALE_KOALA/koala.$f.gz" > "$TMP/koala.$f"
                else return 1; fi
            fi
        done
        echo "$TMP/koala.ele" ;;
    *=*) echo "$ROOT/data/spot.off.gz --set mesh.min_tets=${1#*=}" ;;
    *) return 1 ;;
    esac
}

# run LABEL LOG CMD...: time CMD; prints "wall cpu peakMB exit".
run() {
    local log=$1; shift
    local code=0
    /usr/bin/time -v "$@" > "$log.out" 2> "$log.time" || code=$?
    awk -v code="$code" -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
        /User time/ { c += $2 } /System time/ { c += $2 }
        /Maximum resident/ { m = $2 / 1024 }
        END { printf "%8.1f %8.1f %8.0f %4d", w, c, m, code }' "$log.time"
}
json() { sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1" | head -1; }
# A key of modes.json's "timings" object (the file has a "mesh" path before its "mesh" time).
timing() { sed -n '/"timings"/,$p' "$1" | sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" | head -1; }

printf "# modalloco %s, %s, %d cores, load %s\n" "$("$BIN" --version | head -1 | cut -d' ' -f2)" \
    "$(date -u +%F)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-7s %9s %-9s %8s %8s %8s %4s  %s\n" size tets command wall_s cpu_s peak_MB exit phases
for size in $SIZES; do
    args=$(mesh_args "$size") || { echo "$size: skipped (no mesh; see the header)"; continue; }
    # shellcheck disable=SC2086 # the mesh path and its --set are separate words
    set -- $args
    d=$TMP/run-$size
    rm -rf "$d-modes" "$d-opt" "$d-fs"
    r=$(run "$d-modes" "$BIN" modes "$@" --out "$d-modes" "${MEM[@]}")
    mj=$d-modes/modes.json
    tets=$( [ -f "$mj" ] && json "$mj" tets || echo "?")
    phases="-"
    if [ -f "$mj" ]; then
        phases=$(printf "order %.1f, analyze %.1f, factor %.1f, lanczos %.1f (%s solves), nnz(L) %.0fM, clusters %.1f, mesh %.1f" \
            "$(timing "$mj" vertex_ordering)" "$(timing "$mj" vibration_analyze)" \
            "$(timing "$mj" vibration_factor)" "$(timing "$mj" vibration_lanczos)" \
            "$(timing "$mj" vibration_solves)" "$(awk -v x="$(timing "$mj" vibration_factor_nnz)" 'BEGIN { print x / 1e6 }')" \
            "$(timing "$mj" clusters)" "$(timing "$mj" mesh)")
    fi
    printf "%-7s %9s %-9s %s  %s\n" "$size" "$tets" modes "$r" "$phases"
    r=$(run "$d-opt" "$BIN" optimize "$@" --out "$d-opt" --quiet --threads "$THREADS" \
        --set cmaes.generations="$GENS" "${MEM[@]}")
    printf "%-7s %9s %-9s %s  %s generations\n" "$size" "$tets" optimize "$r" "$GENS"
    if [ "$tets" != "?" ] && [ "$tets" -le "$FS_MAX" ] && [ -f "$d-opt/params.json" ]; then
        r=$(run "$d-fs" "$BIN" simulate "$d-opt/params.json" --out "$d-fs" --full-space "${MEM[@]}")
        printf "%-7s %9s %-9s %s\n" "$size" "$tets" fullspace "$r"
    else
        printf "%-7s %9s %-9s %s\n" "$size" "$tets" fullspace "skipped (more than SCALE_FULLSPACE_MAX_TETS=$FS_MAX tets, or no run)"
    fi
done
