#!/usr/bin/env bash
# cli_json.sh BIN SRCDIR: `optimize --json` and `simulate --json` print one JSON document on
# stdout, equal to the result.json the run wrote (simulate --full-space: with fullspace.json as
# "fullspace"), and nothing else; the key-value summary goes to stderr; failures print nothing.
. "$(dirname "$0")/lib_cli.sh" "$@"
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
TINY=(--set cmaes.generations=2 --set cmaes.population=4 --set sim.steps=20)

# same_json DESCRIPTION STDOUT FILE [FULLSPACE_FILE]: STDOUT parses as exactly one JSON value
# (json.load refuses trailing text) equal to FILE's, with FULLSPACE_FILE's as "fullspace".
same_json() {
  if python3 - "$2" "$3" "${4:-}" <<'EOF'; then ok "$1"; else fail "$1"; fi
import json, sys
out = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
if sys.argv[3]:
    want["fullspace"] = json.load(open(sys.argv[3]))
if out != want:
    keys = sorted(set(out) ^ set(want)) or [k for k in want if out.get(k) != want[k]]
    print("  differs in:", keys[:5])
    sys.exit(1)
for k in ("J", "J_disp", "J_align", "displacement", "credibility"):
    if k not in out:
        print("  no", k); sys.exit(1)
EOF
}

opt_ok "$BIN" optimize --json --out "$T/opt" "${TINY[@]}" >"$T/opt.out" 2>"$T/opt.err" \
  || fail "optimize --json exit code"
same_json "optimize --json prints result.json" "$T/opt.out" "$T/opt/result.json"
grep -q "\"found\"" "$T/opt.out" && ok "optimize --json has found" || fail "optimize --json lacks found"
grep -q '^J -' "$T/opt.err" && grep -q '^found ' "$T/opt.err" \
  && ok "optimize --json: the summary lines on stderr" || fail "optimize --json: summary not on stderr"

# The same run without --json writes the same result (the option changes only the printing).
opt_ok "$BIN" optimize --out "$T/plain" "${TINY[@]}" >"$T/plain.out" 2>/dev/null
cmp -s "$T/plain/result.json" "$T/opt/result.json" && ok "--json leaves result.json as it was" \
  || fail "--json changed result.json"
grep -q '^J ' "$T/plain.out" && ok "without --json the summary stays on stdout" \
  || fail "without --json the summary left stdout"

check "simulate --json" 0 "$BIN" simulate "$T/opt/params.json" --json --out "$T/sim"
same_json "simulate --json prints result.json" "$T/out" "$T/sim/result.json"
check "simulate --json --full-space" 0 "$BIN" simulate "$T/opt/params.json" --json --full-space \
  --out "$T/full"
same_json "simulate --full-space --json adds fullspace.json" "$T/out" "$T/full/result.json" \
  "$T/full/fullspace.json"
grep -q '^full_J ' "$T/err" && ok "full-space summary on stderr" || fail "full-space summary not on stderr"

# --expect's report is a summary line too; a difference still exits 1 with the document.
sed 's/"J":[^,]*/"J": 5/' "$T/sim/result.json" >"$T/wrong.json"
check "simulate --json --expect (differs)" 1 "$BIN" simulate "$T/opt/params.json" --json \
  --out "$T/sim2" --expect "$T/wrong.json"
same_json "--expect differing: the document still printed" "$T/out" "$T/sim2/result.json"
grep -q 'DIFFERS' "$T/err" && ok "--expect report on stderr" || fail "--expect report not on stderr"

# Failures and refusals print nothing on stdout.
check "optimize --json with a bad key" 2 "$BIN" optimize --json --out "$T/bad" --set popsize=4
[ -s "$T/out" ] && fail "bad key: stdout not empty" || ok "bad key: stdout empty"
grep_err "bad key: alias hint" "did you mean 'cmaes.population'"
check "optimize --json --dry-run" 2 "$BIN" optimize --json --dry-run "${TINY[@]}"
[ -s "$T/out" ] && fail "--dry-run: stdout not empty" || ok "--dry-run --json: stdout empty"
grep_err "--json --dry-run: says why" "drop one of them"
check "simulate --json of a missing file" 2 "$BIN" simulate "$T/nothere.json" --json --out "$T/x"
[ -s "$T/out" ] && fail "missing file: stdout not empty" || ok "missing file: stdout empty"
finish
