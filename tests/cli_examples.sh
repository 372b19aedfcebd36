#!/usr/bin/env bash
# cli_examples.sh BIN SRCDIR: every example configuration still loads and runs, with its
# budget cut to one short generation (so none of them rots), on the mesh it names: the
# Table 1 examples name bundled characters in data/ by paths relative to the example file, so
# they must run from a clean checkout, from any directory, without any file outside the tree.
. "$(dirname "$0")/lib_cli.sh" "$@"
cd "$SRC" || exit 1
ROOT=$(pwd -P)
# Without the full-space validation: at 20 steps its default would replay every candidate of the
# cat-sized Table 1 bodies (cli_rerank checks it).
short=(--quiet --set cmaes.generations=1 --set cmaes.population=4 --set sim.steps=20
       --set reference.rerank=0)
# inside_tree DIR: the mesh the run in DIR read (its config.json) is in the source tree.
inside_tree() {
  local p
  p=$(sed -n 's/^[[:space:]]*"path":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p' "$1/config.json" | head -1)
  [ -z "$p" ] && return 0 # the bundled sample mesh
  p=$(realpath -e "$p" 2>/dev/null) || return 1
  case "$p" in "$ROOT"/*) return 0 ;; *) return 1 ;; esac
}
n=0
for f in examples/*.json; do
  case "$f" in examples/sweep*.json) continue ;; esac
  n=$((n + 1))
  out=$T/$(basename "$f" .json)
  grep -q '"comment"' "$f" || fail "$f has no comment block"
  grep -q 'shared/' "$f" && fail "$f refers to a folder outside the repository"
  if opt_ok "$BIN" optimize "$f" --out "$out" "${short[@]}" >/dev/null 2>"$T/err"; then
    if [ ! -s "$out/params.json" ]; then fail "$f wrote no params.json"
    elif ! inside_tree "$out"; then fail "$f read a mesh outside the source tree"
    else ok "$f"; fi
  else
    fail "$f"; sed 's/^/  /' "$T/err" | head -3
  fi
done
[ "$n" -ge 17 ] || fail "expected at least 17 examples, found $n"
grep -q '"path": "../data/' examples/table1_bat.json || fail "table1_bat.json names no bundled mesh"

# A relative mesh.path in a config is relative to the config's directory, not to the working
# directory: the same example from a scratch directory reads the same mesh (same checksum).
mkdir -p "$T/elsewhere" && cd "$T/elsewhere" || exit 1
rel=$(realpath --relative-to=. "$SRC/examples/table1_bearded_dragon.json")
if opt_ok "$BIN" optimize "$rel" --out run "${short[@]}" >/dev/null 2>"$T/err" &&
   [ "$(grep -m1 '"checksum"' run/params.json)" = \
     "$(grep -m1 '"checksum"' "$T/table1_bearded_dragon/params.json")" ]; then
  ok "an example run from another directory reads its bundled mesh"
else
  fail "an example run from another directory"; sed 's/^/  /' "$T/err" | head -3
fi
# --set mesh.path stays relative to the working directory.
cp "$SRC/data/quadruped.mesh" here.mesh
check "--set mesh.path is relative to the working directory" 0 \
  "$BIN" optimize "$rel" --set mesh.path=here.mesh --out run2 "${short[@]}"
grep -q '"path":[[:space:]]*"here.mesh"' run2/config.json || fail "--set mesh.path was rewritten"
cd "$SRC" || exit 1

# Sweeps: list the runs only (a sweep is many optimize runs).
# The listing holds one "todo" line per run (grid product × list entries × seeds), each an
# optimize command into its own run directory, and a dry run writes nothing.
for f in examples/sweep*.json; do
  rm -rf "$T/sweep"
  check "$f lists its runs" 0 "$BIN" sweep "$f" --dry-run --out "$T/sweep"
  want=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); n = 1
for v in d.get("grid", {}).values(): n *= len(v)
print(n * max(len(d.get("list", [])), 1) * max(len(d.get("seeds", [])), 1))' "$f")
  got=$(grep -c '^todo .*modalloco optimize .* --out .*/run_[0-9]*' "$T/out")
  dirs=$(grep -o -- '--out [^ ]*' "$T/out" | sort -u | wc -l)
  [ "$got" = "$want" ] && [ "$dirs" = "$want" ] && ok "$f: $got runs listed, each into its own directory" \
    || fail "$f: $got runs listed into $dirs directories, expected $want"
  [ -e "$T/sweep" ] && fail "$f: the dry run wrote $T/sweep" || ok "$f: the dry run wrote nothing"
done
finish
