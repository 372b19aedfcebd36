#!/usr/bin/env bash
# cli_hostile.sh BIN SRCDIR: the program under hostile conditions, end to end.
#  - paths with spaces and non-ASCII characters work for info, modes, optimize and simulate
#    (mesh paths, --out, a surface run through tetgen, TMPDIR itself);
#  - temporary files are cleaned up: TMPDIR is empty after successful and failing tetgen runs;
#  - bad inputs (every file of tests/data/regress/) exit 2 with a message, never crash; a
#    corrupt precompute cache is recomputed (exit 0); a doctored checkpoint is refused;
#  - a run killed with SIGKILL at random moments leaves every output absent or complete:
#    each params.json/config.json/result.json present is valid JSON and each animation.pc2
#    has the size its header announces.
# JSON validation and checkpoint surgery use python3 and are skipped without it.
. "$(dirname "$0")/lib_cli.sh" "$@"
have_py=0
command -v python3 >/dev/null && have_py=1
have_tetgen=0
command -v tetgen >/dev/null && have_tetgen=1
TINY=(--set subspace.skinning_modes=2 --set actuation.modes=2 --set subspace.passive_clusters=2
      --set subspace.contact_samples=4 --set sim.steps=10 --set cmaes.population=4
      --set cmaes.generations=2)

# ---- Paths with spaces and non-ASCII characters; TMPDIR too -------------------------------
D="$T/dir with spaces/ünïcødé ∂"
mkdir -p "$D" "$T/tmp dir é"
export TMPDIR="$T/tmp dir é"
cp "$SRC/tests/data/mesh_cube5.mesh" "$D/cube 5 ü.mesh"
cp "$SRC/tests/data/mesh_cube.off" "$D/cube ü.off"
"$BIN" info "$D/cube 5 ü.mesh" >/dev/null 2>"$T/err" && ok "info on a path with spaces and UTF-8" \
  || fail "info: $(cat "$T/err")"
"$BIN" modes "$D/cube 5 ü.mesh" "${TINY[@]}" --out "$D/modes out ∂" >/dev/null 2>"$T/err" \
  && [ -s "$D/modes out ∂/modes.json" ] && ok "modes --out with spaces and UTF-8" \
  || fail "modes: $(cat "$T/err")"
opt_ok "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --quiet --out "$D/opt ü" >/dev/null 2>"$T/err" \
  && [ -s "$D/opt ü/params.json" ] && ok "optimize --out with spaces and UTF-8" \
  || fail "optimize: $(cat "$T/err")"
"$BIN" simulate "$D/opt ü/params.json" --out "$D/sim ü" >/dev/null 2>"$T/err" \
  && [ -s "$D/sim ü/result.json" ] && ok "simulate params.json from a path with spaces" \
  || fail "simulate: $(cat "$T/err")"
opt_ok "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --quiet --out "$D/opt ü" \
  --resume "$D/opt ü" >/dev/null 2>"$T/err" && ok "--resume from a path with spaces" \
  || fail "resume: $(cat "$T/err")"
if [ $have_tetgen = 1 ]; then
  "$BIN" info "$D/cube ü.off" >/dev/null 2>"$T/err" && ok "surface with spaces and UTF-8 through tetgen" \
    || fail "info on a surface: $(cat "$T/err")"
  # A failing tetgen (self-intersecting surface: two overlapping cubes) must clean up too.
  { echo OFF; echo "16 24 0"; sed -n '4,11p' "$SRC/tests/data/mesh_cube.off"
    sed -n '4,11p' "$SRC/tests/data/mesh_cube.off" | awk '{print $1+0.5, $2+0.5, $3+0.5}'
    sed -n '12,23p' "$SRC/tests/data/mesh_cube.off"
    sed -n '12,23p' "$SRC/tests/data/mesh_cube.off" | awk '{print 3, $2+8, $3+8, $4+8}'; } > "$D/two ü.off"
  "$BIN" info "$D/two ü.off" >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 139 ] && [ $rc -ne 134 ] && ok "failing tetgen reported (exit $rc)" \
    || fail "self-intersecting surface: exit $rc $(cat "$T/err")"
  MLC_TETGEN=/bin/false "$BIN" info "$D/cube ü.off" >/dev/null 2>&1
  [ $? -eq 1 ] && ok "tetgen exiting with an error: exit 1" || fail "MLC_TETGEN=/bin/false"
  # A tetgen that explains itself and then aborts: its own reason reaches the user (the quiet
  # first run says nothing; the unbuffered verbose rerun is quoted).
  printf '#!/bin/sh\nfor a; do [ "$a" = -Q ] && exit 1; done\necho "Delaunizing vertices."\necho "Error:  A facet is degenerate (vertex 7 repeats)."\nexit 1\n' > "$D/fake-tetgen"
  chmod +x "$D/fake-tetgen"
  MLC_TETGEN="$D/fake-tetgen" "$BIN" info "$D/cube ü.off" >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 1 ] && grep -q "tetgen says: .*A facet is degenerate (vertex 7 repeats)" "$T/err" \
    && ok "tetgen's own reason is quoted" || fail "tetgen reason: exit $rc $(cat "$T/err")"
fi
left=$(find "$TMPDIR" -mindepth 1 | head -5)
[ -z "$left" ] && ok "no leftovers in TMPDIR" || fail "leftovers in TMPDIR: $left"
export TMPDIR="$T"

# ---- Every regression input is refused with exit 2 and a message --------------------------
R="$SRC/tests/data/regress"
for f in "$R"/*.mesh "$R"/*.msh "$R"/*.off "$R"/*.obj "$R"/*.stl "$R"/*.ply; do
  [ -e "$f" ] || continue
  MLC_TETGEN=/nonexistent "$BIN" info "$f" >/dev/null 2>"$T/err"
  rc=$?
  { [ $rc -eq 2 ] || { [ $rc -eq 1 ] && grep -q tetgen "$T/err"; }; } && [ -s "$T/err" ] \
    || fail "info $(basename "$f"): exit $rc $(head -c 300 "$T/err")"
done
for f in "$R"/*.json; do
  "$BIN" simulate "$f" --out "$T/never" >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "$(basename "$f")" "$T/err" \
    || fail "simulate $(basename "$f"): exit $rc $(head -c 300 "$T/err")"
done
ok "regression configs and params files refused with exit 2"
# Checkpoints: each doctored checkpoint.bin makes --resume exit 2.
for f in "$R"/*.ckpt; do
  rm -rf "$T/res" && cp -r "$D/opt ü" "$T/res" && cp "$f" "$T/res/checkpoint.bin"
  "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --quiet --resume "$T/res" --out "$T/res" \
    >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "checkpoint" "$T/err" \
    || fail "--resume with $(basename "$f"): exit $rc $(head -c 300 "$T/err")"
done
ok "doctored checkpoints refused with exit 2"
# Caches: a corrupt cache is not an error; it is recomputed with a warning, then rewritten.
for f in "$R"/*.cache; do
  cp "$f" "$T/c.bin"
  "$BIN" modes "$D/cube 5 ü.mesh" "${TINY[@]}" --set subspace.cache="$T/c.bin" \
    --out "$T/cm" --force >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 0 ] && { grep -q "recomputing" "$T/err" || ! cmp -s "$f" "$T/c.bin"; } \
    || fail "modes with cache $(basename "$f"): exit $rc $(head -c 300 "$T/err")"
done
ok "corrupt caches recomputed"

# A checkpoint whose optimizer state has another dimension but the right fingerprint (the
# fingerprint is a hash anyone can copy) must be refused, not read out of bounds.
if [ $have_py = 1 ]; then
  "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --set actuation.modes=3 --quiet \
    --out "$T/other" >/dev/null 2>&1
  rm -rf "$T/res" && cp -r "$D/opt ü" "$T/res"
  python3 - "$T/res/checkpoint.bin" "$T/other/checkpoint.bin" <<'PY'
import struct, sys
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b: h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
def parts(b):  # magic, fingerprint, history count and rows (64 bytes each), state, checksum
    n = struct.unpack('<Q', b[16:24])[0]; off = 24 + 64 * n
    return b[:off], b[off:-8]
mine = open(sys.argv[1], 'rb').read(); other = open(sys.argv[2], 'rb').read()
head, _ = parts(mine); _, state = parts(other)
body = head + state
open(sys.argv[1], 'wb').write(body + struct.pack('<Q', fnv(body)))
PY
  "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --quiet --resume "$T/res" --out "$T/res" \
    >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "the optimizer state has" "$T/err" && ok "checkpoint state of another size refused: $(cat "$T/err")" \
    || fail "grafted checkpoint: exit $rc $(cat "$T/err")"
fi

# The full-space validation's candidates in the checkpoint (the job state after the optimizer
# state): a header of another shape, with a valid checksum, is refused too.
if [ $have_py = 1 ]; then
  opt_ok "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --set reference.rerank=2 --quiet \
    --out "$T/rr" >/dev/null 2>"$T/err" || fail "optimize with reference.rerank=2: $(cat "$T/err")"
  python3 - "$T/rr/checkpoint.bin" <<'PY'
import struct, sys
def fnv(b):
    h = 0xcbf29ce484222325
    for c in b: h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h
b = bytearray(open(sys.argv[1], 'rb').read()); L = len(b)
# The job state's length sits just before it (find the offset where it says so), and its
# header is (runs, parameters, 32 slots, ring length, ring position) as int32.
p = next(p for p in range(24, L - 36) if struct.unpack('<Q', b[p:p + 8])[0] == L - 16 - p
         and struct.unpack('<i', b[p + 16:p + 20])[0] == 32)
b[p + 12:p + 16] = struct.pack('<i', 7)  # the candidates' parameter count
b[-8:] = struct.pack('<Q', fnv(bytes(b[:-8])))
open(sys.argv[1], 'wb').write(bytes(b))
PY
  "$BIN" optimize "$D/cube 5 ü.mesh" "${TINY[@]}" --set reference.rerank=2 --quiet \
    --resume "$T/rr" --out "$T/rr" >/dev/null 2>"$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "candidates do not fit this configuration" "$T/err" \
    && ok "checkpoint candidates of another shape refused: $(cat "$T/err")" \
    || fail "doctored candidates: exit $rc $(cat "$T/err")"
fi

# ---- SIGKILL at random moments: outputs absent, previous or complete ----------------------
check_outputs() { # DIR: every output present is whole
  local d=$1 f
  for f in params.json config.json result.json modes.json; do
    [ -e "$d/$f" ] || continue
    if [ $have_py = 1 ]; then
      python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$d/$f" 2>/dev/null \
        || { fail "$d/$f is not valid JSON after SIGKILL"; return; }
    else
      [ -s "$d/$f" ] || { fail "$d/$f is empty after SIGKILL"; return; }
    fi
  done
  if [ -e "$d/animation.pc2" ]; then
    local size np ns
    size=$(stat -c %s "$d/animation.pc2")
    np=$(od -An -t d4 -j 16 -N 4 "$d/animation.pc2" | tr -d ' ')
    ns=$(od -An -t d4 -j 28 -N 4 "$d/animation.pc2" | tr -d ' ')
    [ "$size" -eq $((32 + 12 * np * ns)) ] \
      || fail "$d/animation.pc2: $size bytes, header says $np points x $ns samples"
  fi
}
kills=${MLC_KILL_ROUNDS:-12}
for i in $(seq 1 "$kills"); do
  out="$T/kill"
  [ $((i % 3)) -eq 1 ] && rm -rf "$out" # sometimes fresh, sometimes over a previous run
  "$BIN" optimize "$SRC/data/quadruped.mesh" --set sim.steps=60 --set cmaes.population=6 \
    --set cmaes.generations=4 --set actuation.modes=3 --quiet --force --out "$out" \
    >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 10))$((RANDOM % 10))"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  check_outputs "$out"
done
ok "$kills SIGKILLs: every output present was complete"

finish
