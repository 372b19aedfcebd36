#!/usr/bin/env bash
# cli_anim.sh BIN SRCDIR: `modalloco view DIR --gif/--apng/--mp4 FILE`: the animations of a short
# optimize run (frame count and timing at the run's real speed, sizes, determinism, the task in
# green in the first frame: a walking run's direction arrow, a target), file names
# that contradict their option (exit 2 naming the right one), options without an animation,
# --mp4 without ffmpeg (exit 2 naming what to install, no file), through a stand-in ffmpeg
# (every raw frame piped; a failing encoder leaves no file), and through the real ffmpeg when
# it is installed (skipped otherwise).
. "$(dirname "$0")/lib_cli.sh" "$@"
u32be() { od -An -tu4 --endian=big -j "$2" -N4 "$1" | tr -d ' '; }
u16le() { od -An -tu2 --endian=little -j "$2" -N2 "$1" | tr -d ' '; }

opt_ok "$BIN" optimize --out "$T/run" --set cmaes.generations=2 --set cmaes.population=4 \
  --set sim.steps=60 --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; echo "FAIL: optimize"; exit 1; }
# 60 steps of 0.01 s: 0.6 s, so 16 frames at 25 fps (0, 0.04, ..., 0.60 s).

# ---- GIF ----
check "view --gif" 0 "$BIN" view "$T/run" --gif "$T/a.gif"
grep -q "a.gif (480 x 270, 16 frames at 25 fps, 0.60 s of simulated time at real speed" "$T/out" \
  && ok "reports 16 frames at real speed" || fail "report: $(cat "$T/out")"
[ "$(head -c 6 "$T/a.gif")" = GIF89a ] && ok "GIF89a signature" || fail "no GIF signature"
[ "$(u16le "$T/a.gif" 6)x$(u16le "$T/a.gif" 8)" = 480x270 ] && ok "480 x 270 screen" \
  || fail "screen $(u16le "$T/a.gif" 6)x$(u16le "$T/a.gif" 8)"
# gif_blocks FILE: "frames total_centiseconds" from walking the blocks.
gif_blocks() {
  python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
flags = d[10]
p = 13 + (3 * (2 << (flags & 7)) if flags & 0x80 else 0)
frames = delay = 0
def skip(p):
    while d[p]:
        p += d[p] + 1
    return p + 1
while d[p] != 0x3B:
    if d[p] == 0x21:
        if d[p + 1] == 0xF9:
            delay += struct.unpack('<H', d[p + 4:p + 6])[0]
        p = skip(p + 2)
    elif d[p] == 0x2C:
        frames += 1
        p = skip(p + 11)
    else:
        sys.exit('unexpected block 0x%02x at %d' % (d[p], p))
print(frames, delay)
EOF
}
if command -v python3 >/dev/null; then
  # 16 frames of 4 cs, the last held 0.5 s longer.
  [ "$(gif_blocks "$T/a.gif")" = "16 114" ] && ok "16 frames, 64 cs + 50 cs hold" \
    || fail "GIF blocks: $(gif_blocks "$T/a.gif")"
  "$BIN" view "$T/run" --gif "$T/slow.gif" --speed 0.5 --fps 10 --hold 0 >"$T/out" 2>"$T/err"
  [ "$(gif_blocks "$T/slow.gif")" = "13 130" ] && grep -q "0.5 x speed" "$T/out" \
    && ok "--speed 0.5 --fps 10: 13 frames of 10 cs" || fail "slow GIF: $(gif_blocks "$T/slow.gif"); $(cat "$T/out")"
  "$BIN" view "$T/run" --gif "$T/f5.gif" --frames 5 --width 200 --height 120 >"$T/out" 2>&1
  [ "$(gif_blocks "$T/f5.gif")" = "5 70" ] && [ "$(u16le "$T/f5.gif" 6)x$(u16le "$T/f5.gif" 8)" = 200x120 ] \
    && ok "--frames 5 --width 200 --height 120" || fail "--frames 5: $(gif_blocks "$T/f5.gif"); $(cat "$T/out")"
else
  echo "SKIP: python3 not installed (GIF block walk)"
fi
"$BIN" view "$T/run" --gif "$T/b.gif" >/dev/null 2>&1
cmp -s "$T/a.gif" "$T/b.gif" && ok "the same GIF twice" || fail "two GIFs of one run differ"
"$BIN" view "$T/run" --gif "$T/follow.gif" --follow >/dev/null 2>&1 && [ -s "$T/follow.gif" ] \
  && ok "--follow" || fail "--follow"

# ---- APNG ----
check "view --apng" 0 "$BIN" view "$T/run" --apng "$T/a.png"
[ "$(od -An -tx1 -N8 "$T/a.png" | tr -d ' ')" = 89504e470d0a1a0a ] && ok "PNG signature" \
  || fail "no PNG signature"
[ "$(head -c 41 "$T/a.png" | tail -c 4)" = acTL ] && [ "$(u32be "$T/a.png" 41)" = 16 ] \
  && ok "acTL right after IHDR: 16 frames" || fail "acTL: $(u32be "$T/a.png" 41) frames"
# green_first FILE: the task's green pixels (g > r + 60, g > b + 40) in an APNG's first frame.
green_first() {
  python3 - "$1" <<'EOF'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
i, idat = 8, b''
while i < len(d):
    n, t = struct.unpack('>I', d[i:i + 4])[0], d[i + 4:i + 8]
    if t == b'IHDR': w, h = struct.unpack('>II', d[i + 8:i + 16])
    if t == b'IDAT': idat += d[i + 8:i + 8 + n]
    i += 12 + n
raw, s, green = zlib.decompress(idat), 3 * w, 0
for j in range(h):
    f, line = raw[j * (s + 1)], bytearray(raw[j * (s + 1) + 1:(j + 1) * (s + 1)])
    assert f == 1, f  # the writer filters every row with Sub
    for x in range(3, s):
        line[x] = (line[x] + line[x - 3]) & 255
    green += sum(1 for x in range(0, s, 3) if line[x + 1] > line[x] + 60 and line[x + 1] > line[x + 2] + 40)
print(green)
EOF
}
if command -v python3 >/dev/null; then
  g=$(green_first "$T/a.png")
  [ "$g" -gt 30 ] && ok "the direction arrow of a walking run: $g green pixels" \
    || fail "no direction arrow in the first frame ($g green pixels)"
  "$BIN" optimize "$SRC/examples/target.json" --out "$T/target" --set cmaes.generations=1 \
    --set cmaes.population=4 --set sim.steps=20 --set cmaes.polish=0 --quiet >/dev/null 2>&1
  "$BIN" view "$T/target" --apng "$T/target.png" >/dev/null 2>"$T/err" || fail "view target --apng"
  g=$(green_first "$T/target.png")
  [ "$g" -gt 30 ] && ok "the target: $g green pixels" || fail "no target in the first frame ($g)"
else
  echo "SKIP: python3 not installed (task pixels)"
fi
check "--apng accepts .apng" 0 "$BIN" view "$T/run" --apng "$T/a.apng"
check "strip and animations in one call" 0 "$BIN" view "$T/run" --png "$T/s.png" --gif "$T/c.gif" \
  --frames 4
[ "$(u32be "$T/s.png" 16)" = 1286 ] && [ -s "$T/c.gif" ] && ok "--frames 4: 4 panels and 4 frames" \
  || fail "strip $(u32be "$T/s.png" 16) wide"

# ---- Names and options ----
check "--png a.gif" 2 "$BIN" view "$T/run" --png "$T/x.gif"
grep_err "names --gif" "use --gif"
check "--gif a.png" 2 "$BIN" view "$T/run" --gif "$T/x.png"
grep_err "names --png" "use --png"
check "--mp4 a.gif" 2 "$BIN" view "$T/run" --mp4 "$T/x.gif"
grep_err "names --gif" "use --gif"
check "--apng a.webm" 2 "$BIN" view "$T/run" --apng "$T/x.webm"
grep_err "names --mp4" "use --mp4"
check "--gif a.jpg" 2 "$BIN" view "$T/run" --gif "$T/x.jpg"
grep_err "says what view writes" "does not write"
check "--fps without an animation" 2 "$BIN" view "$T/run" --fps 10
check "--follow with only a strip" 2 "$BIN" view "$T/run" --png "$T/x.png" --follow
check "--frames and --speed" 2 "$BIN" view "$T/run" --gif "$T/x.gif" --frames 5 --speed 2
check "--frames 65 for a strip" 2 "$BIN" view "$T/run" --png "$T/x.png" --frames 65
check "--fps 0" 2 "$BIN" view "$T/run" --gif "$T/x.gif" --fps 0
check "--speed 0" 2 "$BIN" view "$T/run" --gif "$T/x.gif" --speed 0
check "--width 8" 2 "$BIN" view "$T/run" --gif "$T/x.gif" --width 8
check "too many frames" 2 "$BIN" view "$T/run" --gif "$T/x.gif" --speed 0.01 --fps 100
grep_err "says how to fix it" "raise --speed"
check "unwritable --gif" 1 "$BIN" view "$T/run" --gif "$T/no/such/dir/a.gif"
grep_err "names the GIF path" "a.gif"
ls "$T"/x.* >/dev/null 2>&1 && fail "a refused name left a file" || ok "no file for a refused name"

# ---- MP4 without ffmpeg, with a stand-in, with the real one ----
mkdir "$T/empty_path"
PATH="$T/empty_path" check "--mp4 without ffmpeg" 2 "$BIN" view "$T/run" --mp4 "$T/v.mp4"
grep_err "names what to install" "apt-get install ffmpeg"
[ -e "$T/v.mp4" ] && fail "--mp4 without ffmpeg wrote a file" || ok "no file without ffmpeg"
mkdir "$T/fake"
cat >"$T/fake/ffmpeg" <<'EOF'
#!/bin/sh
# Stores the raw frames where the video would go (the last argument).
for a; do last=$a; done
exec cat >"$last"
EOF
chmod +x "$T/fake/ffmpeg"
PATH="$T/fake:$PATH" check "--mp4 through a stand-in ffmpeg" 0 "$BIN" view "$T/run" --mp4 "$T/raw.mp4"
[ "$(stat -c %s "$T/raw.mp4")" = $((480 * 270 * 3 * 16)) ] && ok "16 raw frames of 480 x 270 piped" \
  || fail "piped $(stat -c %s "$T/raw.mp4") bytes"
PATH="$T/fake:$PATH" check "--mp4 with an odd height" 2 "$BIN" view "$T/run" --mp4 "$T/odd.mp4" --height 271
grep_err "asks for even sizes" "even"
printf '#!/bin/sh\necho "Unknown encoder libx264" >&2\nexit 1\n' >"$T/fake/ffmpeg"
PATH="$T/fake:$PATH" check "a failing ffmpeg" 1 "$BIN" view "$T/run" --mp4 "$T/bad.mp4"
grep_err "shows ffmpeg's message" "Unknown encoder"
grep_err "says ffmpeg failed" "ffmpeg failed"
[ -e "$T/bad.mp4" ] || [ -n "$(ls -A "$T" | grep '^\.')" ] && fail "a failed video left a file" \
  || ok "no file after a failed encoder"
if command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null; then
  for f in v.mp4 v.webm; do
    check "--mp4 $f with ffmpeg" 0 "$BIN" view "$T/run" --mp4 "$T/$f"
    got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries \
      stream=codec_name,width,height,nb_read_frames,r_frame_rate -of csv=p=0 "$T/$f")
    want=$([ $f = v.mp4 ] && echo h264 || echo vp9),480,270,25/1,16
    [ "$got" = "$want" ] && ok "$f: $got" || fail "$f: ffprobe says '$got', expected '$want'"
  done
else
  echo "SKIP: ffmpeg not installed (real MP4 and WebM encoding)"
fi

finish
