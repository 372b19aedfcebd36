#!/usr/bin/env bash
# check_includes.sh SRCDIR: the doors that the compiler cannot see. A module's sources may name
# its own private headers by relative path ("internal/x.h", "testing/x.h"); no file of src/ may
# reach into another module's folder ("../sim/..."), and no file outside src/<mod>/ and tests/
# may name an internal/ or testing/ header at all. Exit 1 with each offending line listed.
set -u
cd "$1" || exit 2
bad=0
while IFS= read -r hit; do
    echo "crosses a module's door: $hit" >&2
    bad=1
done < <(grep -rnE '#[[:space:]]*include[[:space:]]*"[^"]*\.\./' src include tools 2>/dev/null)
while IFS= read -r hit; do
    echo "names a private or test header outside its module: $hit" >&2
    bad=1
done < <(grep -rnE '#[[:space:]]*include[[:space:]]*"[^"]*(internal|testing)/' include tools src/main.c 2>/dev/null)
# Inside src/, a file may name internal/ and testing/ headers relative to its own folder only,
# and those must exist there (a name that resolves through another module's include directory
# would be a crossing).
while IFS=: read -r file line text; do
    dir=$(dirname "$file")
    inc=$(sed -E 's/.*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1/' <<<"$text")
    case "$dir" in
        */internal | */testing) base=$dir/.. ;;
        *) base=$dir ;;
    esac
    if [ ! -f "$base/$inc" ] && [ ! -f "$dir/$inc" ]; then
        echo "names another module's private header: $file:$line: $inc" >&2
        bad=1
    fi
done < <(grep -rnE '#[[:space:]]*include[[:space:]]*"(internal|testing)/' src)
[ "$bad" = 0 ] && echo "every include stays behind its module's door"
exit "$bad"
