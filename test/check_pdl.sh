#!/bin/sh
# check_pdl.sh — every gcr kernel calls gcr_grid_dep() first. The host launches a kernel of a module
# that includes common.cuh with programmatic dependent launch (lib/cuda/launch.c, GCR_PDL), so it may
# start while its predecessor still runs; only that call makes it wait. A kernel in lib/cuda/kernels/
# whose body does not open with it, or a code generator in lib/cuda/ that writes a __global__ without
# emitting it right after the opening brace, fails here, each finding printed.
pass=0; fail=0
for f in lib/cuda/kernels/*.cuh; do
  out=$(awk '
    /__global__/ && !/^[[:space:]]*(\/\*|\*)/ { want = 1; line = FNR }
    want {
      s = $0
      if (!open) { i = index(s, "{"); if (!i) next; open = 1; s = substr(s, i + 1) }
      gsub(/\\[[:space:]]*$/, "", s); gsub(/^[[:space:]]+/, "", s)
      if (s == "") next
      if (s !~ /^gcr_grid_dep\(\);/) print FILENAME ":" line ": a __global__ whose body opens with \"" s "\""
      want = 0; open = 0
    }' "$f")
  n=$(grep -c '__global__' "$f")
  if [ -n "$out" ]; then echo "FAIL $out"; fail=$((fail+1)); elif [ "$n" -gt 0 ]; then pass=$((pass+1)); fi
done
for f in lib/cuda/*.c; do
  grep -q '__global__ void' "$f" || continue
  # the emitted signature ends with ")\n{\n"; the same put must go on with the wait
  if grep -q 'put(&b, ")\\n{\\n    gcr_grid_dep();' "$f"; then pass=$((pass+1))
  else echo "FAIL $f: writes a __global__ without gcr_grid_dep() after its opening brace"; fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
