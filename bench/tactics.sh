#!/usr/bin/env bash
# tactics.sh — every dense tactic's time on every conv / GEMM layer of the benchmark nets beside the
# heuristic's pick: conv_bench under GCR_AUTOTUNE=1 (each shape's candidates timed once on the real
# shape, lib/cuda/autotune.c) with GCR_LOG=2 (which prints each measurement) and an empty kernel
# cache, each layer named first (conv_bench's tactics argument); bench/tactics_table.py turns the
# log into one table per net, dtype and batch. A layer whose heuristic pick is much slower than its
# best candidate is where a rule of lib/cuda/dense.c is worth an A/B (bench/ab_conv.sh).
#
#   OUT=/tmp/t NETS="resnet50 mnv3" ARGS="nhwc f16 head=1 32 128" bash bench/tactics.sh
#
# Writes $OUT/tactics.log (stderr of the runs) and $OUT/tactics.md, and prints the summary lines.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
O=${OUT:-bench/results/tactics-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$O"
make -j"${JOBS:-8}" BUILD=build build/bench/conv_bench > "$O/build.log" 2>&1 || { tail -20 "$O/build.log"; exit 1; }
: > "$O/tactics.log"
cache=$(mktemp -d)
for net in ${NETS:-resnet50 mnv3}; do
    # shellcheck disable=SC2086 # ARGS is a list of conv_bench arguments
    GCR_AUTOTUNE=1 GCR_LOG=2 GCR_CACHE_DIR="$cache" timeout "${T:-300}" build/bench/conv_bench net="$net" tactics \
        ${ARGS:-nhwc f16 head=1 32 128} 2>> "$O/tactics.log" > /dev/null
done
rm -rf "$cache"
python3 bench/tactics_table.py "$O/tactics.log" > "$O/tactics.md"
grep -E "^### |^per forward" "$O/tactics.md"
