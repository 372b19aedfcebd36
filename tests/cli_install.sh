#!/usr/bin/env bash
# cli_install.sh BIN SRCDIR: `cmake --install` into a temporary prefix gives a program that
# finds its own sample mesh (not the source tree's), a manual page covering every setting,
# the example configurations, and the documentation with the license in share/doc/modalloco.
. "$(dirname "$0")/lib_cli.sh" "$@"
cmake --install "$(dirname "$BIN")" --prefix "$T/prefix" >/dev/null || { echo "FAIL: install"; exit 1; }
P=$T/prefix
[ -x "$P/bin/modalloco" ] || fail "bin/modalloco not installed"
[ -s "$P/share/modalloco/data/quadruped.mesh" ] || fail "sample mesh not installed"
[ -s "$P/share/modalloco/examples/table1_bat.json" ] || fail "examples not installed"
# The examples name the bundled characters relative to themselves; the layout keeps that.
for f in "$P"/share/modalloco/examples/*.json; do
  m=$(sed -n 's/.*"mesh": {"path": "\([^"]*\)"}.*/\1/p' "$f")
  [ -z "$m" ] || [ -s "$(dirname "$f")/$m" ] || fail "$(basename "$f"): $m not installed"
done
grep -q "CC BY 4.0" "$P/share/modalloco/data/README.md" || fail "data/README.md (licenses) not installed"
# The documentation, as in the source tree: README.md's links into docs/ resolve beside it.
D=$P/share/doc/modalloco
for f in README.md CHANGELOG.md LICENSE; do
  cmp -s "$SRC/$f" "$D/$f" || fail "share/doc/modalloco/$f not installed (or not the source's)"
done
n=0
for f in "$SRC"/docs/*.md "$SRC"/docs/*.svg "$SRC"/docs/*.png "$SRC"/docs/*.gif; do
  [ -e "$f" ] || continue
  n=$((n + 1))
  cmp -s "$f" "$D/docs/$(basename "$f")" || fail "share/doc/modalloco/docs/$(basename "$f") not installed"
done
[ "$n" -ge 5 ] || fail "only $n documentation pages found in $SRC/docs"
[ -z "$(find "$D/docs" -type f ! -name '*.md' ! -name '*.svg' ! -name '*.png' ! -name '*.gif')" ] \
  || fail "share/doc/modalloco/docs holds files that are not pages or their images"
MAN=$(find "$P" -name modalloco.1 | head -1)
[ -n "$MAN" ] || fail "man page not installed"
if [ -n "$MAN" ]; then
  for k in $(sed -n 's/^| `\([a-z_]*\.[a-z_]*\)`.*/\1/p' "$SRC/docs/config.md"); do
    grep -qF ".B $k" "$MAN" || fail "man page lacks $k"
  done
  for c in info modes simulate optimize sweep summarize view; do grep -q "^\.B $c" "$MAN" || fail "man page lacks command $c"; done
fi
# Run from an unrelated directory, without a mesh argument: the installed sample is used.
cd "$T" || exit 1
opt_ok "$P/bin/modalloco" optimize --out "$T/run" --quiet --set cmaes.generations=1 \
  --set cmaes.population=4 --set sim.steps=20 >/dev/null 2>"$T/err" || { fail "installed optimize"; cat "$T/err"; }
grep -q "$P/share/modalloco/data/quadruped.mesh" "$T/run/params.json" 2>/dev/null \
  && echo "ok: installed program uses the installed sample" || fail "installed program did not use its installed sample"
finish
