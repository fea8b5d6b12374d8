#!/usr/bin/env bash
# sass_profile.sh — one kernel launch under ncu --set full, then where its instructions and stalls go
# at SASS level (bench/sass_table.py over ncu's source page). NVRTC programs carry no source lines, so
# the SASS page is the finest view; ncu's locked clocks make its times comparisons, not latencies.
#
#   bench/sass_profile.sh OUT KERNEL-REGEX SKIP COMMAND [ARGS...]
#
# profiles the launch after SKIP launches of kernels matching KERNEL-REGEX in COMMAND; writes
# OUT/prof.ncu-rep, OUT/sass.csv, OUT/details.txt and OUT/sass.md, and prints sass.md. Example (a
# MobileNet-v3 1x1 at batch 128, its fourth launch: past the warm-up run):
#
#   bench/sass_profile.sh /tmp/p gcr_dense 3 build/bench/conv_bench net=mnv3 nhwc f16 head=0 only=b12.ex 128
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1 re=$2 skip=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 1
ncu --set full --import-source no -f -o "$out/prof" -k "regex:$re" -s "$skip" -c 1 "$@" > "$out/ncu.log" 2>&1 ||
    { tail -20 "$out/ncu.log"; exit 1; }
ncu -i "$out/prof.ncu-rep" --page source --csv --print-source sass > "$out/sass.csv" || exit 1
ncu -i "$out/prof.ncu-rep" --page details > "$out/details.txt" 2>&1
python3 "$here/sass_table.py" "$out/sass.csv" > "$out/sass.md" && cat "$out/sass.md"
