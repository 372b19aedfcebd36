#!/usr/bin/env bash
# cli_usage.sh BIN SRCDIR: the small frictions of the command line: "did you mean" for
# commands, options and keys (also names from other tools), `help COMMAND`, and `info`
# printing 0 rather than -0.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh

check "mistyped command" 2 "$BIN" optimze
grep_err "command suggestion" "unknown command 'optimze'; did you mean 'optimize'?"
check "mistyped --version" 2 "$BIN" --verison
grep_err "--version suggestion" "did you mean '--version'?"
check "unknown command far from all" 2 "$BIN" frobnicate
grep -q "did you mean" "$T/err" && fail "frobnicate got a suggestion" || ok "no suggestion when nothing is near"

check "mistyped option" 2 "$BIN" optimize --thread 2
grep_err "option suggestion" "unknown option '--thread'; did you mean '--threads'?"
check "mistyped option with =" 2 "$BIN" simulate --full-spce
grep_err "option suggestion (simulate)" "did you mean '--full-space'?"
check "another command's option" 2 "$BIN" simulate --seed 3
grep_err "names the command that has it" "it is an option of optimize"
check "option near nothing" 2 "$BIN" info "$MESH" --bogus
grep_err "plain unknown option" "unknown option '--bogus'"
grep -q "did you mean" "$T/err" && fail "--bogus got a suggestion" || ok "no option suggestion when nothing is near"

check "--set popsize" 2 "$BIN" optimize --set popsize=10
grep_err "popsize points to cmaes.population" "unknown key 'popsize'; did you mean 'cmaes.population'?"
check "--set maxiter" 2 "$BIN" optimize --set maxiter=10
grep_err "maxiter points to cmaes.generations" "did you mean 'cmaes.generations'?"

# help COMMAND is COMMAND --help, byte for byte; help is --help.
for c in info modes simulate optimize sweep summarize view completion; do
  "$BIN" help "$c" >"$T/a" 2>&1; ra=$?
  "$BIN" "$c" --help >"$T/b" 2>&1; rb=$?
  if [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] && cmp -s "$T/a" "$T/b" && [ -s "$T/a" ]; then
    ok "help $c"; else fail "help $c differs from $c --help"; fi
done
"$BIN" help >"$T/a"; "$BIN" --help >"$T/b"
cmp -s "$T/a" "$T/b" && ok "help is --help" || fail "help differs from --help"
check "help of an unknown command" 2 "$BIN" help optimze
grep_err "help suggests" "did you mean 'optimize'?"
check "help with two commands" 2 "$BIN" help info modes

# info: a mesh with its minimum height at 0, unnormalized: the offset's y (-min y) is 0,
# never -0.
printf 'MeshVersionFormatted 1\nDimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 4 0\nEnd\n' >"$T/t.mesh"
check "info of a mesh at the origin" 0 "$BIN" info "$T/t.mesh" --set mesh.normalize=false
grep -q -- '-0[,)]' "$T/out" && fail "info prints -0: $(grep -- '-0[,)]' "$T/out")" \
  || ok "info prints no -0"
grep -q "x' = 1 x + (-0.5, 0, -0.5)" "$T/out" && ok "zero offset printed as 0" \
  || fail "transform line: $(grep transform "$T/out")"
finish
