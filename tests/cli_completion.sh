#!/usr/bin/env bash
# cli_completion.sh BIN SRCDIR: `modalloco completion bash` completes commands, options and
# --set keys (checked by calling the completion function as bash does); its option lists
# agree with the parser and the help texts; `cmake --install` puts it where bash-completion
# looks.
. "$(dirname "$0")/lib_cli.sh" "$@"
"$BIN" completion bash >"$T/comp.bash" || fail "completion bash"
bash -n "$T/comp.bash" && ok "script parses" || fail "script does not parse"
# shellcheck disable=SC1091
. "$T/comp.bash"

# complete WORDS...: COMPREPLY (sorted, one line) for the command line WORDS, the last word
# being the one under the cursor, split as bash splits at COMP_WORDBREAKS ('=' apart).
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _modalloco 2>/dev/null
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { # DESCRIPTION WANT WORDS...
  local desc=$1 want=$2; shift 2
  local got; got=$(complete_words "$@")
  [ "$got" = "$want" ] && ok "$desc" || fail "$desc: got '$got', want '$want'"
}
expect "modalloco opt<TAB>" "optimize" modalloco opt
expect "modalloco s<TAB>" "simulate summarize sweep" modalloco s
expect "--set cmaes.pop<TAB>" "cmaes.population=" modalloco optimize --set cmaes.pop
expect "--set=cmaes.pop<TAB>" "cmaes.population=" modalloco optimize --set = cmaes.pop
expect "--set sim.d<TAB>" "sim.dt=" modalloco simulate --set sim.d
expect "optimize --thr<TAB>" "--threads" modalloco optimize --thr
expect "simulate --full<TAB>" "--full-space" modalloco simulate --full
expect "simulate --j<TAB> (--json)" "--json" modalloco simulate --j
expect "help sw<TAB>" "sweep" modalloco help sw
expect "completion <TAB>" "bash" modalloco completion ""
expect "no value list after --set KEY=" "" modalloco optimize --set sim.steps = ""
expect "no value list after --seed" "" modalloco optimize --seed ""
mkdir -p "$T/dirs/run_a" && touch "$T/dirs/file_b"
expect "--out completes directories" "$T/dirs/run_a" modalloco optimize --out "$T/dirs/"
expect "a positional completes files" "$T/dirs/file_b $T/dirs/run_a" modalloco info "$T/dirs/"

# Every key of the configuration table (docs/config.md) completes after --set.
n_keys=$(sed -n 's/^| `\([a-z_0-9]*\.[a-z_0-9]*\)`.*/\1/p' "$SRC/docs/config.md" | sort -u | wc -l)
n_comp=$(complete_words modalloco optimize --set "" | wc -w)
[ "$n_keys" -gt 50 ] && [ "$n_comp" -eq "$n_keys" ] && ok "all $n_keys keys complete" \
  || fail "--set <TAB> gives $n_comp keys, docs/config.md has $n_keys"

# The option lists agree with the program: each completed option is accepted by the parser
# (it is parsed before the --help that follows ends the command), and each option a command's
# help text names completes.
for c in $(complete_words modalloco ""); do
  case $c in -*|help|completion) continue ;; esac
  opts=$(complete_words modalloco "$c" -)
  for o in $opts; do
    if "$BIN" "$c" "$o" 1 --help >/dev/null 2>"$T/err" || "$BIN" "$c" "$o" 100 --help >/dev/null 2>>"$T/err" ||
       "$BIN" "$c" "$o" 8G --help >/dev/null 2>>"$T/err" ||
       "$BIN" "$c" "$o" --help >/dev/null 2>>"$T/err"; then
      :
    else
      fail "$c $o: completed but refused: $(head -1 "$T/err")"
    fi
  done
  for o in $("$BIN" "$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    case " $opts " in *" $o "*) ;; *) fail "$c --help names $o, which does not complete" ;; esac
  done
  ok "$c: options agree ($(echo "$opts" | wc -w))"
done

# Installed where bash-completion finds it, the same script.
cmake --install "$(dirname "$BIN")" --prefix "$T/prefix" >/dev/null || fail "install"
f=$T/prefix/share/bash-completion/completions/modalloco
cmp -s "$f" "$T/comp.bash" && ok "installed as share/bash-completion/completions/modalloco" \
  || fail "installed completion missing or stale: $f"
finish
