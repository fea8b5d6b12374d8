#!/bin/sh
# check_readme.sh — the README's quick example compiles against the built library and runs:
# hardswish is 4 traced ops replayed as one kernel.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk '/<!-- quick-example/{f=1; next} f && /^```c/{p=1; next} p && /^```/{exit} p' README.md > "$dir/example.c"
if [ ! -s "$dir/example.c" ]; then echo "FAIL: no quick example in README.md"; echo "0 passed, 1 failed"; exit 1; fi
# shellcheck disable=SC2086
if ! ${CC:-cc} $CPPFLAGS -O1 "$dir/example.c" -o "$dir/example" $LINK; then
  echo "FAIL: the quick example does not compile"; echo "0 passed, 1 failed"; exit 1
fi
out=$(GCR_CACHE_DIR="$dir/cache" "$dir/example" 2>&1); rc=$?
echo "$out"
if [ $rc -ne 0 ]; then echo "FAIL: the quick example exited $rc"; echo "0 passed, 1 failed"; exit 1; fi
case "$out" in
  *"hardswish(3.5) = 3.5"*"4 ops traced, 1 kernel(s)"*) echo "1 passed, 0 failed" ;;
  *) echo "FAIL: unexpected output"; echo "0 passed, 1 failed"; exit 1 ;;
esac
