#!/usr/bin/env bash
# cli_docs.sh BIN SRCDIR: what the documentation promises about the command line holds. The
# headers of history.csv and trajectory.csv in docs/outputs.md are the ones a run writes, and
# every column has its row in the page's tables; README.md opens with the two set-up commands
# (CI runs the second); every option the README's examples give a command is one that
# command's --help lists.
. "$(dirname "$0")/lib_cli.sh" "$@"
DOC=$SRC/docs/outputs.md
README=$SRC/README.md

# A tiny optimize writes both files.
opt_ok "$BIN" optimize "$SRC/data/quadruped.mesh" --out "$T/run" --quiet --set cmaes.generations=2 \
  --set cmaes.population=4 --set sim.steps=10 >/dev/null 2>"$T/err" || { fail "optimize"; cat "$T/err"; }

# check_header FILE FIRST_COLUMN: the documented header (the line of docs/outputs.md that starts
# with FIRST_COLUMN and a comma) is FILE's first line, and each of its columns is named in a
# table row of the page ("| `column`").
check_header() {
  local file=$1 first=$2 doc got
  doc=$(grep -m1 "^$first," "$DOC")
  got=$(head -1 "$T/run/$file" | tr -d '\r')
  if [ -z "$doc" ]; then
    fail "docs/outputs.md documents no $file header (a line starting with '$first,')"
  elif [ "$doc" != "$got" ]; then
    fail "$file header differs from docs/outputs.md"
    echo "  documented: $doc"
    echo "  written:    $got"
  else
    ok "$file header as documented"
  fi
  local col
  for col in $(echo "$got" | tr ',' ' '); do
    grep -q "^| \`$col\`" "$DOC" || grep -q "^| [^|]*\`$col\`[^|]*|" "$DOC" \
      || fail "docs/outputs.md: no table row for $file column $col"
  done
}
check_header history.csv generation
check_header trajectory.csv frame

# The README opens with the two set-up commands, exactly (the first runs the demo, CI the second).
want='```sh
scripts/install-deps.sh && cmake -S . -B build && cmake --build build -j2 && build/modalloco optimize examples/quadruped_demo.json --out demo
scripts/install-deps.sh && cmake -S . -B build && cmake --build build -j2 && ctest --test-dir build --output-on-failure -j2
```'
got=$(sed -n '3,6p' "$README")
[ "$(sed -n 1p "$README")" = "# modalloco" ] && [ "$got" = "$want" ] \
  && ok "README opens with the two set-up commands" || fail "README's first lines are not the two set-up commands"

# Every `modalloco CMD ... --option` inside the README's code blocks: CMD is a command and
# --option is listed by `modalloco CMD --help` (or by the global --help).
"$BIN" --help >"$T/help_all" 2>&1
awk '/^```/{inside = !inside; next} inside' "$README" |
  grep -oE '(^|[ /])modalloco [a-z]+[^|;&#]*' | sed 's/^[ \/]*//' >"$T/lines"
[ -s "$T/lines" ] || fail "no modalloco examples found in the README's code blocks"
while read -r _ cmd rest; do
  if ! grep -qE "^  $cmd( |$)" "$T/help_all"; then fail "README example: unknown command '$cmd'"; continue; fi
  "$BIN" "$cmd" --help >"$T/help_cmd" 2>&1
  for o in $(echo "$rest" | grep -oE -- '--[a-z][a-z-]*'); do
    grep -qE -- "$o([ =]|$)" "$T/help_cmd" "$T/help_all" || fail "README example: '$cmd' has no option $o"
  done
done <"$T/lines"
ok "README examples: $(wc -l <"$T/lines") command lines checked against --help"
finish
