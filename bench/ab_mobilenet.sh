#!/usr/bin/env bash
# ab_mobilenet.sh — MobileNet-v3-Large replay latency of two builds of gcr side by side in one run on
# one GPU, to show that a change keeps (or improves) speed: "before" is usually the previous commit,
# built into its own folder. Each configuration (dtype, batch, TF32) runs ROUNDS rounds, alternating
# A B B A ... so that clock drift and thermal state fall on both sides alike; a round is one
# `mobilenet_v3 --modes graph` process whose median replay time it keeps. Prints one markdown table:
# the median over rounds of each side, after/before, and the kernels per forward of each.
#
#   A=.snap/build/bin/mobilenet_v3 B=build/bin/mobilenet_v3 bash bench/ab_mobilenet.sh
#
# knobs: CONFIGS="f16:1 f16:128 f32:1 f32:128 f32-tf32:1 f32-tf32:128"  ROUNDS=4  ITERS=100
#        LAYOUT=nhwc  DEVICE=cuda (cpu: a smoke test of this script)  GCR_CACHE_DIR (one kernel cache for both: each side compiles its own kernels)
set -uo pipefail
A=${A:?path of the before binary}
B=${B:?path of the after binary}
CONFIGS=${CONFIGS:-"f16:1 f16:128 f32:1 f32:128 f32-tf32:1 f32-tf32:128"}
ROUNDS=${ROUNDS:-4}
ITERS=${ITERS:-100}
LAYOUT=${LAYOUT:-nhwc}
export GCR_LOG=0

# one_run BIN DTYPE[-tf32] BATCH: prints "median_ms kernels" of the graph mode, or "fail"
one_run() {
  local bin=$1 dt=${2%-tf32} b=$3 tf=0 out
  [ "$2" = "$dt" ] || tf=1
  out=$(GCR_TF32=$tf "$bin" --model large --batch "$b" --dtype "$dt" --layout "$LAYOUT" --device "${DEVICE:-cuda}" \
        --modes graph --iters "$ITERS" --reference none 2>&1) || { echo "$out" | tail -3 >&2; echo fail; return; }
  echo "$out" | awk '$1 == "captured+graph" && $2 ~ /^[0-9.]+$/ {print $2, $4; found = 1} END {if (!found) print "fail"}'
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "| config | before ms | after ms | after/before | kernels before | kernels after |"
echo "|---|---|---|---|---|---|"
for c in $CONFIGS; do
  dt=${c%%:*} b=${c##*:} ta="" tb="" ka=? kb=?
  failed=""
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
    for side in $order; do
      if [ "$side" = A ]; then res=$(one_run "$A" "$dt" "$b"); else res=$(one_run "$B" "$dt" "$b"); fi
      [ "$res" = fail ] && { failed=$side; break 2; }
      if [ "$side" = A ]; then ta="$ta ${res% *}"; ka=${res#* }; else tb="$tb ${res% *}"; kb=${res#* }; fi
    done
  done
  [ -z "$failed" ] || { echo "| $dt b$b | the $failed build's run failed (its output is above) |"; continue; }
  ma=$(echo $ta | tr ' ' '\n' | median); mb=$(echo $tb | tr ' ' '\n' | median)
  echo "| $dt b$b | $ma | $mb | $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}') | $ka | $kb |"
done
