#!/usr/bin/env bash
# cli_manpage.sh BIN SRCDIR: the manual page (built next to the program) says what the program
# does: its SYNOPSIS has every command the program knows, and the columns it documents for
# trajectory.csv and history.csv are the header lines a tiny run writes.
. "$(dirname "$0")/lib_cli.sh" "$@"
MAN=$(dirname "$BIN")/modalloco.1
[ -s "$MAN" ] || { fail "no manual page at $MAN"; finish; }

# The commands, from the program's own table (its completion script's first word list).
"$BIN" completion bash >"$T/comp.bash" && . "$T/comp.bash"
COMP_WORDS=(modalloco ""); COMP_CWORD=1; _modalloco 2>/dev/null
synopsis=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$MAN")
n=0
for c in "${COMPREPLY[@]}"; do
  case $c in -*) continue ;; esac
  n=$((n + 1))
  if [ "$c" = help ]; then pat='fBhelp\\fR'; else pat="^\.B modalloco $c\$|^\.B modalloco $c "; fi
  echo "$synopsis" | grep -Eq "$pat" || fail "SYNOPSIS lacks command $c"
done
[ "$n" -ge 9 ] && ok "SYNOPSIS lists all $n commands" || fail "only $n commands found"

# documented FILE: the column line under ".I FILE" in FILES.
documented() { sed -n "/^\.I $1\$/{n;p;q}" "$MAN"; }
opt_ok "$BIN" optimize --out "$T/run" --quiet --set cmaes.generations=1 --set cmaes.population=4 \
  --set sim.steps=10 >/dev/null 2>"$T/err" || fail "tiny optimize: $(head -1 "$T/err")"
for f in trajectory.csv history.csv; do
  doc=$(documented "$f")
  got=$(head -1 "$T/run/$f")
  [ -n "$doc" ] && [ "$doc" = "$got" ] && ok "$f columns documented: $got" \
    || fail "$f: the manual says '$doc', the program writes '$got'"
done
finish
