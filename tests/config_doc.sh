#!/usr/bin/env bash
# config_doc.sh TOOL SRCDIR: docs/config.md's key table is the one tools/make_config_doc.c
# prints from the modules' key tables, so the page says what the program reads. On a
# difference it shows the diff and how to regenerate the page.
TOOL=$1 SRC=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$TOOL" "$SRC/docs/config.md" >"$out" || { echo "FAIL: make_config_doc failed"; exit 1; }
if ! diff -u "$SRC/docs/config.md" "$out"; then
  echo "FAIL: docs/config.md differs from the key tables; regenerate it with"
  echo "  build/make_config_doc docs/config.md > /tmp/config.md && mv /tmp/config.md docs/config.md"
  exit 1
fi
# Every key the program accepts has its row, once.
rows=$(grep -c '^| `[a-z_0-9]*\.[a-z_0-9]*` |' "$SRC/docs/config.md")
keys=$("$TOOL" | grep -c '^| `[a-z_0-9]*\.[a-z_0-9]*` |')
[ "$rows" -eq "$keys" ] && [ "$keys" -gt 0 ] || { echo "FAIL: $rows rows, $keys keys"; exit 1; }
echo "ok: docs/config.md's key table is generated from the key tables ($keys keys)"
