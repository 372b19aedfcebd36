# lib_cli.sh: shared by the command-line tests (tests/cli_*.sh), sourced as
#   . "$(dirname "$0")/lib_cli.sh" "$@"
# Gives BIN (the program) and SRC (the source tree) from the arguments, a scratch directory
# $T removed on exit, a failure counter and the helpers below. End a script with `finish`.
set -u
BIN=$1
SRC=${2:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# check DESCRIPTION EXPECTED_CODE CMD...: run CMD (stdout in $T/out, stderr in $T/err) and
# compare its exit code.
check() {
  local desc=$1 want=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$desc: exit $got, expected $want"; sed 's/^/  stderr: /' "$T/err" | head -5
  else
    ok "$desc"
  fi
}
# grep_err DESCRIPTION PATTERN: the last checked command's stderr contains PATTERN.
grep_err() {
  if grep -q -- "$2" "$T/err"; then ok "$1"; else
    fail "$1: stderr lacks '$2'"; sed 's/^/  stderr: /' "$T/err" | head -5; fi
}
# history.csv without its wall-clock column (6: seconds), for reproducibility comparisons.
strip_clock() { cut -d, -f1-5,7- "$1"; }
# json_num FILE KEY: the first numeric value of "KEY": in a pretty-printed JSON file.
json_num() { sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\([-0-9.eE+]*\).*/\1/p" "$1" | head -1; }
# same_run DIR1 DIR2: two optimize runs ended alike: params.json identical, and history.csv
# but for its wall-clock column.
same_run() {
  cmp -s "$1/params.json" "$2/params.json" &&
    diff <(strip_clock "$1/history.csv") <(strip_clock "$2/history.csv") >/dev/null
}
# interrupt_after ROWS DIR CMD...: run CMD (an optimize writing into DIR) in the background,
# send it SIGINT once DIR/history.csv has ROWS lines (its header included), and return its
# exit code (130 when the signal came before its end). It waits up to 120 s for those rows (a
# run with several searches under the sanitizers takes long to reach a later one), and no
# longer than CMD runs.
interrupt_after() {
  local rows=$1 dir=$2; shift 2
  "$@" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 6000); do
    [ -f "$dir/history.csv" ] && [ "$(wc -l < "$dir/history.csv")" -ge "$rows" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  kill -INT $pid 2>/dev/null
  wait $pid
}
# opt_ok CMD...: run an optimize command; true when it exits 0 (a credible gait found) or 3
# (it ran to the end and found none), for the tests that are not about the gait's credibility.
opt_ok() { "$@"; local c=$?; [ "$c" -eq 0 ] || [ "$c" -eq 3 ]; }
finish() {
  echo "$fails failed"
  [ "$fails" -eq 0 ]
  exit $?
}
