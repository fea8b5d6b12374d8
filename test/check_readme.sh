#!/bin/sh
# check_readme.sh — the README's examples compile against the built library and run: the quick
# example (hardswish is 4 traced ops replayed as one kernel) and the host-staging example (each
# replay reads the host buffer the loop just wrote and fills the output buffer).
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0; fail=0
# example MARKER NAME EXPECTED-GLOB: extracts the c block after <!-- MARKER, builds and runs it
example() {
  awk -v m="<!-- $1" 'index($0, m) == 1 {f=1; next} f && /^```c/{p=1; next} p && /^```/{exit} p' README.md > "$dir/$2.c"
  if [ ! -s "$dir/$2.c" ]; then echo "FAIL: no $2 example in README.md"; fail=$((fail+1)); return; fi
  # shellcheck disable=SC2086
  if ! ${CC:-cc} $CPPFLAGS -O1 "$dir/$2.c" -o "$dir/$2" $LINK; then
    echo "FAIL: the $2 example does not compile"; fail=$((fail+1)); return
  fi
  out=$(GCR_CACHE_DIR="$dir/cache" "$dir/$2" 2>&1); rc=$?
  echo "$out"
  if [ $rc -ne 0 ]; then echo "FAIL: the $2 example exited $rc"; fail=$((fail+1)); return; fi
  # shellcheck disable=SC2254
  case "$out" in
    $3) pass=$((pass+1)) ;;
    *) echo "FAIL: unexpected output of the $2 example"; fail=$((fail+1)) ;;
  esac
}
example quick-example quick '*hardswish(3.5) = 3.5*4 ops traced, 1 kernel(s)*'
example staging-example staging '*step 1: out\[0\] = 0, out\[63\] = 62*step 3: out\[0\] = 0, out\[63\] = 186*'
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
