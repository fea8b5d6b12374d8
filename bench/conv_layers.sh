#!/bin/sh
# conv_layers.sh — issue 11's per-layer comparison with cuDNN in one device call (about 5 minutes):
# builds build/bench/conv_bench, runs it (gcr) and bench/conv_bench_torch.py (cuDNN) one after the
# other on the same GPU over every distinct conv shape of MobileNet-v3-Large and ResNet-50, then
# bench/conv_table.py joins their LAYER lines into markdown tables. Each part is time-boxed; a part
# cut short still leaves the blocks it finished (both programs flush a block at a time), so the table
# covers what both sides reached. Writes to $OUT (5 files: build.log, gcr.log, torch.log,
# conv_layers.md, summary.txt) and prints the geomean summary last.
# Knobs (environment): NETS (all), DTYPES ("f16 tf32"), BATCHES ("1 32 128"), LAYOUT (nhwc),
# BUILD_T / GCR_T / TORCH_T (seconds for the build, the gcr side and the torch side: 150 / 150 / 180),
# TABLE_ARGS (extra conv_table.py options, e.g. "--peak-f16 989 --bw 4800" on an H200).
# usage: OUT=/tmp/x sh bench/conv_layers.sh
set -u
OUT=${OUT:-/tmp/conv_layers}
NETS=${NETS:-all}
DTYPES=${DTYPES:-"f16 tf32"}
BATCHES=${BATCHES:-"1 32 128"}
LAYOUT=${LAYOUT:-nhwc}
BUILD_T=${BUILD_T:-150}
GCR_T=${GCR_T:-150}
TORCH_T=${TORCH_T:-180}
TABLE_ARGS=${TABLE_ARGS:-}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
t0=$(date +%s)

timeout "$BUILD_T" make -j16 BUILD=build build/bench/conv_bench > "$OUT/build.log" 2>&1 ||
    { echo "conv_layers: build failed or timed out (rc $?)"; tail -30 "$OUT/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,memory.total --format=csv,noheader 2>/dev/null

# $DTYPES and $BATCHES split into words on purpose
t1=$(date +%s)
# shellcheck disable=SC2086
timeout "$GCR_T" build/bench/conv_bench net="$NETS" "$LAYOUT" $DTYPES $BATCHES > "$OUT/gcr.log" 2>&1
rc=$?
echo "gcr side: rc $rc ($([ $rc = 124 ] && echo 'timed out, ')$(($(date +%s) - t1)) s), $(grep -c '^LAYER' "$OUT/gcr.log") LAYER lines, $(grep -c ' failed: ' "$OUT/gcr.log") failed"
grep ' failed: ' "$OUT/gcr.log" | head -5

t1=$(date +%s)
# shellcheck disable=SC2086
timeout "$TORCH_T" python3 bench/conv_bench_torch.py net="$NETS" "$LAYOUT" $DTYPES $BATCHES > "$OUT/torch.log" 2>&1
rc=$?
echo "torch side: rc $rc ($([ $rc = 124 ] && echo 'timed out, ')$(($(date +%s) - t1)) s), $(grep -c '^LAYER' "$OUT/torch.log") LAYER lines, $(grep -c ' failed: ' "$OUT/torch.log") failed"
grep -E '^SHAPES|Error|error' "$OUT/torch.log" | head -8

# shellcheck disable=SC2086
python3 bench/conv_table.py "$OUT/gcr.log" "$OUT/torch.log" -o "$OUT/conv_layers.md" $TABLE_ARGS > "$OUT/summary.txt" 2>&1
echo "table: rc $?, total $(($(date +%s) - t0)) s"
echo
cat "$OUT/summary.txt"
