#!/usr/bin/env bash
# make_readme_gait.sh: regenerate docs/gait.gif, the animated gait at the top of the README,
# from the bundled demo: optimize examples/quadruped_demo.json (about 5 s of CPU on 2 cores;
# the same seed gives the same gait on any machine), then render it as a GIF at the run's real
# speed. Run from the repository root after building:
#
#   scripts/make_readme_gait.sh [BUILD_DIR]        (default BUILD_DIR: build)
#
# The settings keep the file small enough to sit at the top of a README (about 160 KB):
# 480 x 270 pixels, 25 frames per second, one palette of 255 colours for the whole animation,
# and only the rectangle that changed stored for each frame after the first.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build}/modalloco
[ -x "$BIN" ] || { echo "make_readme_gait.sh: $BIN not found; build first (README: Building)" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$BIN" optimize examples/quadruped_demo.json --out "$TMP/demo" --quiet >/dev/null
"$BIN" view "$TMP/demo" --gif docs/gait.gif --width 480 --height 270 --fps 25 --hold 0.5
