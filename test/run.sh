#!/bin/sh
# run.sh — runs every test binary given, then the shell checks (exported symbols, README
# example), and prints the total as the last line: "N passed, N failed, N skipped".
# A binary that crashes or exits non-zero without a count counts as one failure. JOBS=N runs
# N binaries at once.
# The library's knobs are not inherited (as harness.h does for the test binaries, so that the
# shell checks, such as the README example's kernel count, see the defaults too): every GCR_*
# variable goes except the test inputs (GCR_TEST_*, GCR_FUZZ_*), GCR_CACHE_DIR and GCR_LOG.
for v in $(env | sed -n 's/^\(GCR_[A-Za-z0-9_]*\)=.*/\1/p'); do
  case $v in GCR_TEST_*|GCR_FUZZ_*|GCR_CACHE_DIR|GCR_LOG) ;; *) unset "$v" ;; esac
done
pass=0; fail=0; skip=0
count() { # $1 = output file, $2 = exit code, $3 = name
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
  if [ -z "$line" ]; then
    echo "FAIL $3: exited $2 without a result line"; tail -n 20 "$1"; fail=$((fail+1)); return
  fi
  p=$(echo "$line" | sed 's/^\([0-9]*\) passed.*/\1/')
  f=$(echo "$line" | sed 's/.* \([0-9]*\) failed.*/\1/')
  s=$(echo "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
  pass=$((pass+p)); fail=$((fail+f)); skip=$((skip+${s:-0}))
  if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then echo "FAIL $3: exit $2"; fail=$((fail+1)); fi
  if [ "$f" -ne 0 ] || [ "$2" -ne 0 ]; then grep -E '^FAIL' "$1" | head -n 30; fi
  echo "$3: $line"
}
out=$(mktemp)
if [ "${JOBS:-1}" -gt 1 ]; then
  # JOBS=N runs the binaries N at a time (each into its own log), each saying "done NAME" as it ends
  # (so a run cut by a time box still shows what finished), then counts them in order
  dir=$(mktemp -d)
  for t in "$@"; do echo "$t"; done | xargs -P "$JOBS" -I{} sh -c '
    n=$(basename "$1"); "$1" > "$2/$n.log" 2>&1; rc=$?; echo $rc > "$2/$n.rc"
    echo "done $n (exit $rc): $(grep -E "^[0-9]+ passed, [0-9]+ failed" "$2/$n.log" | tail -n 1)"' _ {} "$dir"
  for t in "$@"; do
    n=$(basename "$t")
    count "$dir/$n.log" "$(cat "$dir/$n.rc" 2>/dev/null || echo 1)" "$n"
  done
  rm -rf "$dir"
else
  for t in "$@"; do
    "$t" > "$out" 2>&1; rc=$?
    count "$out" $rc "$(basename "$t")"
  done
fi
for s in test/check_*.sh; do
  [ -f "$s" ] || continue
  sh "$s" > "$out" 2>&1; rc=$?
  count "$out" $rc "$(basename "$s")"
done
rm -f "$out"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
