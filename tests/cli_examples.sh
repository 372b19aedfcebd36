#!/usr/bin/env bash
# cli_examples.sh BIN SRCDIR: every example configuration still loads and runs, with its
# budget cut to one short generation (so none of them rots). Table 1 examples run on the
# bundled sample mesh here; their comments name the mesh to use for the real experiment.
. "$(dirname "$0")/lib_cli.sh" "$@"
cd "$SRC" || exit 1
n=0
for f in examples/*.json; do
  case "$f" in examples/sweep*.json) continue ;; esac
  n=$((n + 1))
  grep -q '"comment"' "$f" || { echo "FAIL: $f has no comment block"; fails=$((fails + 1)); }
  if opt_ok "$BIN" optimize "$f" --out "$T/$(basename "$f" .json)" --quiet \
       --set cmaes.generations=1 --set cmaes.population=4 --set sim.steps=20 >/dev/null 2>"$T/err"; then
    [ -s "$T/$(basename "$f" .json)/params.json" ] && echo "ok: $f" \
      || { echo "FAIL: $f wrote no params.json"; fails=$((fails + 1)); }
  else
    echo "FAIL: $f"; sed 's/^/  /' "$T/err" | head -3; fails=$((fails + 1))
  fi
done
[ "$n" -ge 17 ] || { echo "FAIL: expected at least 17 examples, found $n"; fails=$((fails + 1)); }
finish
