#!/usr/bin/env bash
# cli_view.sh BIN SRCDIR: `modalloco view`: errors and exit codes, the PNG film strip (size from
# IHDR; body pixels in every panel, decoded with python3 when present), and view.html loaded in
# headless Chromium when installed: data-ready = frame count, no resource loaded, a screenshot
# that shows the body. Tasks and terrain: short runs of the examples target, path, turn, steps,
# slope and bumps embed the task (target, waypoints, heading) and the terrain's triangles as the
# configuration gives them, and load in Chromium without a JavaScript error.
. "$(dirname "$0")/lib_cli.sh" "$@"
u32be() { od -An -tu4 --endian=big -j "$2" -N4 "$1" | tr -d ' '; }
u32le() { od -An -tu4 --endian=little -j "$2" -N4 "$1" | tr -d ' '; }

opt_ok "$BIN" optimize --out "$T/run" --set cmaes.generations=2 --set cmaes.population=4 \
  --set sim.steps=60 --quiet >/dev/null 2>"$T/err" || { cat "$T/err"; echo "FAIL: optimize"; exit 1; }
NFRAMES=$(u32le "$T/run/animation.pc2" 28)

# output.viewer: simulate and optimize write view.html themselves.
"$BIN" simulate "$T/run/params.json" --out "$T/sim" --set output.viewer=true --quiet >/dev/null 2>"$T/err" \
  && grep -q "dataset.ready" "$T/sim/view.html" 2>/dev/null && echo "ok: simulate with output.viewer writes view.html" \
  || fail "simulate with output.viewer"

# ---- Errors ----
check "view --help" 0 "$BIN" view --help
check "view needs a DIR" 2 "$BIN" view
check "missing directory" 2 "$BIN" view "$T/nope"
grep_err "names the directory" "nope"
mkdir "$T/empty"
check "not a run directory" 2 "$BIN" view "$T/empty"
grep_err "names the missing file" "surface.obj"
grep_err "names the command that writes it" "optimize"
mkdir "$T/half" && cp "$T/run/surface.obj" "$T/half/"
check "no animation.pc2" 2 "$BIN" view "$T/half"
grep_err "names animation.pc2" "animation.pc2"
mkdir "$T/bad" && cp "$T/run/surface.obj" "$T/run/animation.pc2" "$T/bad/"
truncate -s -7 "$T/bad/animation.pc2"
check "corrupt animation.pc2" 2 "$BIN" view "$T/bad"
grep_err "corrupt pc2 is reported" "truncated or corrupt"
check "unwritable --png" 1 "$BIN" view "$T/run" --png "$T/no/such/dir/strip.png"
grep_err "names the PNG path" "strip.png"
check "--frames 0" 2 "$BIN" view "$T/run" --png "$T/x.png" --frames 0
check "--frames without --png" 2 "$BIN" view "$T/run" --frames 3
check "--set is refused" 2 "$BIN" view "$T/run" --set sim.steps=3

# ---- HTML ----
check "view DIR" 0 "$BIN" view "$T/run"
H=$T/run/view.html
[ -s "$H" ] || fail "view.html not written"
grep -q "^$H\$" "$T/out" && echo "ok: prints the page path" || fail "stdout lacks the path"
grep -q "<script src\|<link \|@import\|url(" "$H" && fail "view.html references an external resource"
grep -q "\"frames\":$NFRAMES," "$H" && echo "ok: all $NFRAMES frames embedded" \
  || fail "view.html does not embed $NFRAMES frames"

# ---- Task and terrain data ----
# meta FILE: the page's metadata <script> as one JSON line.
meta() { sed -n 's|^<script type="application/json" id="meta">\(.*\)</script>$|\1|p' "$1"; }
meta "$H" | grep -q '"task"\|"terrain"' && fail "the default run's page embeds a task or terrain" \
  || echo "ok: the default run (locomotion, flat ground) embeds no task or terrain"
TASKS="target path turn steps slope bumps"
for ex in $TASKS; do
  opt_ok "$BIN" optimize "$SRC/examples/$ex.json" --out "$T/$ex" --set cmaes.generations=2 \
    --set cmaes.population=4 --set sim.steps=60 --set cmaes.polish=0 --quiet >/dev/null 2>"$T/err" \
    && "$BIN" view "$T/$ex" >/dev/null 2>>"$T/err" || { fail "optimize and view $ex"; cat "$T/err"; }
done
meta "$T/target/view.html" | grep -q '"task":{"kind":"target","target":\[0.6,0.84,0.4\],"targetGround":0,"finalDist":[0-9.e-]*}' \
  && echo "ok: target: the target and the final distance are embedded" || fail "target: no target in the page"
meta "$T/path/view.html" | grep -q '"task":{"kind":"path","npath":3,"path":\[0,-0.09,0.84,0,1.5,0.25,0.84,0.1,3,0.6,0.84,0.4\]}' \
  && echo "ok: path: the 3 waypoints of path_waypoints.csv are embedded" || fail "path: no waypoints in the page"
meta "$T/turn/view.html" | grep -q '"task":{"kind":"turn","heading":\[0,0,1\],"forward0":\[[^]]*\],"forward1":\[[^]]*\]}' \
  && echo "ok: turn: the heading wanted and the forward axes reached are embedded" || fail "turn: no heading in the page"
if command -v python3 >/dev/null; then
  for ex in steps slope bumps; do
    meta "$T/$ex/view.html" >"$T/$ex.meta"
    python3 - "$ex" "$T/$ex.meta" "$T/$ex/surface.obj" "$SRC/examples/bumps.txt" <<'EOF' && echo "ok: $ex: terrain triangles as configured" || fail "$ex: terrain triangles"
import json, math, sys
ex, M = sys.argv[1], json.load(open(sys.argv[2]))
T = M['terrain']
tri, ng, nb = T['tris'], T['nground'], T['nbox']
assert T['ntri'] == ng + 12 * nb and len(tri) == 9 * T['ntri'], (T['ntri'], ng, nb, len(tri))
assert len(T['lines']) % 6 == 0 and len(T['shadow']) == len(M['traj']) // 3
ground = [tri[i:i + 3] for i in range(0, 9 * ng, 3)]
boxes = [tri[i:i + 3] for i in range(9 * ng, len(tri), 3)]
if ex == 'steps':  # flat ground, the two boxes of examples/steps.json
    assert nb == 2 and all(p[1] == 0 for p in ground)
    for b, (lo, hi) in enumerate([([1.1, -1, -3], [6, 0.05, 3]), ([1.7, -1, -3], [6, 0.1, 3])]):
        pts = boxes[36 * b:36 * b + 36]
        for k in range(3):
            assert sorted({p[k] for p in pts}) == [lo[k], hi[k]], (b, k, sorted({p[k] for p in pts}))
    print('steps: 2 boxes, %d ground triangles' % ng)
if ex == 'slope':  # one plane rising 10 degrees along +x, touching the rest surface
    assert nb == 0
    a, b = ground[0], ground[1]
    s = (b[1] - a[1]) / (b[0] - a[0]) if b[0] != a[0] else None
    assert s is not None and abs(math.degrees(math.atan(s)) - 10) < 1e-3, s
    y0 = a[1] - s * a[0]
    assert all(abs(p[1] - (y0 + s * p[0])) < 1e-5 for p in ground)
    rest = [list(map(float, l.split()[1:4])) for l in open(sys.argv[3]) if l.startswith('v ')]
    gap = min((p[1] - (y0 + s * p[0])) * math.cos(math.atan(s)) for p in rest)
    assert abs(gap) < 1e-5, gap
    print('slope: %.4f degrees, rest surface %.2g m above it' % (math.degrees(math.atan(s)), gap))
if ex == 'bumps':  # the heights of examples/bumps.txt at its nodes
    nums = [float(w) for l in open(sys.argv[4]) for w in l.split('#')[0].split()]
    nx, nz, x0, z0, dx, dz = nums[:6]
    h = nums[6:]
    node = {}
    for p in ground:
        i, j = (p[0] - x0) / dx, (p[2] - z0) / dz
        if abs(i - round(i)) < 1e-6 and abs(j - round(j)) < 1e-6 and 0 <= i < nx and 0 <= j < nz:
            node[(round(i), round(j))] = p[1]
    assert len(node) == nx * nz, len(node)
    assert all(abs(y - h[i + int(nx) * j]) < 1e-6 for (i, j), y in node.items())
    print('bumps: %d of %d nodes at their heights' % (len(node), nx * nz))
EOF
  done
else
  echo "SKIP: python3 not installed (terrain geometry checks)"
fi

# ---- PNG film strip ----
check "view --png" 0 "$BIN" view "$T/run" --png "$T/strip.png"
check "view --png --frames 3" 0 "$BIN" view "$T/run" --png "$T/strip3.png" --frames 3
for f in strip strip3; do
  [ "$(od -An -tx1 -N8 "$T/$f.png" | tr -d ' ')" = "89504e470d0a1a0a" ] || fail "$f.png: no PNG signature"
done
W=$(u32be "$T/strip.png" 16); Hh=$(u32be "$T/strip.png" 20)
[ "$W" = 1930 ] && [ "$Hh" = 240 ] && echo "ok: 6 panels of 320x240 (+2 px separators)" \
  || fail "strip.png is ${W}x${Hh}, expected 1930x240"
W=$(u32be "$T/strip3.png" 16)
[ "$W" = 964 ] && echo "ok: --frames 3 gives 3 panels" || fail "strip3.png is $W wide, expected 964"

# Body pixels (orange: r > g + 40 > b + 40) per panel, with an independent decoder; with
# PIXEL=green the task markers' pixels (g > r + 60, g > b + 40) instead.
probe() { # probe PNG PANELS PANEL_WIDTH MIN_PIXELS
  python3 - "$@" <<'EOF'
import struct, sys, zlib
import os
path, panels, pw, need = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
green = os.environ.get('PIXEL') == 'green'
d = open(path, 'rb').read()
i, idat = 8, b''
while i < len(d):
    n, t = struct.unpack('>I', d[i:i + 4])[0], d[i + 4:i + 8]
    c = d[i + 8:i + 8 + n]
    if zlib.crc32(t + c) & 0xffffffff != struct.unpack('>I', d[i + 8 + n:i + 12 + n])[0]:
        sys.exit('bad CRC in ' + t.decode())
    if t == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', c[:10])
    if t == b'IDAT': idat += c
    i += 12 + n
assert depth == 8 and ctype in (2, 6), (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for j in range(h):
    f, line = raw[j * (stride + 1)], bytearray(raw[j * (stride + 1) + 1:(j + 1) * (stride + 1)])
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
counts = [0] * panels
for line in rows:
    for x in range(w):
        r, g, b = line[x * bpp:x * bpp + 3]
        if (g > r + 60 and g > b + 40) if green else (r > g + 40 and g > b):
            counts[min(x // pw, panels - 1)] += 1
print('green' if green else 'body', 'pixels per panel:', counts)
sys.exit(0 if min(counts) >= need else 1)
EOF
}
if command -v python3 >/dev/null; then
  probe "$T/strip.png" 6 322 200 && echo "ok: the body shows in every panel" || fail "a panel lacks the body"
  PIXEL=green probe "$T/strip.png" 1 100000 0 | grep -q '\[0\]' \
    && echo "ok: no task marker in the strip of a walking run" || fail "green pixels in strip.png"
  for ex in target path turn; do
    "$BIN" view "$T/$ex" --png "$T/$ex.png" --frames 3 >/dev/null 2>"$T/err" || fail "view $ex --png"
    PIXEL=green probe "$T/$ex.png" 1 100000 20 && echo "ok: $ex: the task is drawn in the strip" \
      || fail "$ex: no task marker in the strip"
  done
else
  echo "SKIP: python3 not installed (film strip pixel check)"
fi

# ---- Headless Chromium ----
CHROME=""
for c in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
  [ -x "$c" ] && { CHROME=$c; break; }
done
if [ -z "$CHROME" ]; then
  echo "SKIP: chromium not installed (view.html not loaded in a browser)"
else
  run_chrome() {
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --enable-unsafe-swiftshader --user-data-dir="$(mktemp -d -p "$T")" \
      --enable-logging=stderr --v=0 --virtual-time-budget=10000 "$@" 2>"$T/chrome.err"
  }
  # js_errors: the console errors of the last load (the GL driver's performance notes aside).
  js_errors() { grep 'CONSOLE' "$T/chrome.err" | grep -v 'GL Driver Message' | grep 'Uncaught\|Error'; }
  run_chrome --dump-dom "file://$H" >"$T/dom.html"
  BODY=$(grep -o '<body[^>]*>' "$T/dom.html" | head -1)
  echo "  $BODY"
  echo "$BODY" | grep -q "data-ready=\"$NFRAMES\"" && echo "ok: Chromium: data-ready=$NFRAMES" \
    || { fail "Chromium: data-ready is not $NFRAMES"; tail -5 "$T/chrome.err"; }
  echo "$BODY" | grep -q 'data-resources="0"' && echo "ok: Chromium: no resource loaded" \
    || fail "Chromium: the page loaded resources"
  grep -q '<polyline' "$T/dom.html" && echo "ok: Chromium: convergence plot drawn" \
    || fail "Chromium: no convergence plot"
  js_errors && fail "Chromium: JavaScript errors" || echo "ok: Chromium: no JavaScript error"
  for ex in $TASKS; do
    run_chrome --dump-dom "file://$T/$ex/view.html" >"$T/dom.html"
    BODY=$(grep -o '<body[^>]*>' "$T/dom.html" | head -1)
    case $ex in target|path|turn) kind=$ex ntri=0 ;;
      *) kind="" ntri=$(meta "$T/$ex/view.html" | grep -o '"ntri":[0-9]*' | cut -d: -f2) ;; esac
    echo "$BODY" | grep -q "data-task=\"$kind\" data-terrain=\"$ntri\".*data-ready=\"$NFRAMES\"" \
      && echo "ok: Chromium: $ex: task '$kind', $ntri terrain triangles, $NFRAMES frames" \
      || fail "Chromium: $ex: $BODY"
    js_errors && fail "Chromium: $ex: JavaScript errors" || echo "ok: Chromium: $ex: no JavaScript error"
  done
  run_chrome --screenshot="$T/shot.png" --window-size=800,600 "file://$H" >/dev/null
  if [ -s "$T/shot.png" ] && [ "$(stat -c %s "$T/shot.png")" -gt 10000 ]; then
    echo "ok: Chromium: screenshot written ($(stat -c %s "$T/shot.png") bytes)"
    if command -v python3 >/dev/null; then
      probe "$T/shot.png" 1 100000 500 && echo "ok: Chromium: the body is drawn" \
        || fail "Chromium: no body in the screenshot"
    fi
  else
    fail "Chromium: no or trivial screenshot"
  fi
fi

finish
