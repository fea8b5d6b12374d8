#!/usr/bin/env bash
# gpu_all.sh — one device-machine call: build, the MobileNet-v3 benchmark beside PyTorch (gcr in
# NHWC and NCHW, PyTorch in NCHW as in shared/bench/BASELINES.md), the micro-benchmarks, then the
# whole test suite with the GPU tests. Each stage is time-boxed so the results always come back;
# markdown tables and logs land in $OUT (or bench/results/gpu-<stamp>/).
set -uo pipefail
cd "$(dirname "$0")/.."
DEST=${OUT:-bench/results/gpu-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$DEST"
R=$(mktemp -d)
export GCR_CACHE_DIR=$(mktemp -d)
LOG="$DEST/all.log"
t() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
t build
make -j16 BUILD=build all bench >> "$LOG" 2>&1 || { tail -40 "$LOG"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >> "$LOG" 2>&1
t "gcr nhwc"
LAYOUT=nhwc BATCHES="${BATCHES:-1 8 32 128}" ITERS=100 TORCH=0 COLD=0 RESULTS="$R/nhwc" OUT= timeout 130 bench/mobilenet.sh 2>&1 | tail -40 | tee -a "$LOG"
t "gcr nchw + torch + cold start"
LAYOUT=nchw BATCHES="${BATCHES:-1 8 32 128}" ITERS=100 TORCH_MODES=eager,graph,ro COLD_DTYPES=f32 RESULTS="$R/nchw" OUT= \
  timeout 250 bench/mobilenet.sh 2>&1 | tail -60 | tee -a "$LOG"
cp "$R"/nhwc/*.md "$DEST/mobilenet-nhwc.md" 2>/dev/null
cp "$R"/nchw/*.md "$DEST/mobilenet-nchw.md" 2>/dev/null
cat "$R"/*/*.log "$R"/*/*.jsonl > "$DEST/mobilenet-raw.log" 2>/dev/null
t micro
for b in launch fusion_bench; do timeout 25 build/bench/$b 2>&1 | tee -a "$DEST/micro.txt"; done
t "make test"
JOBS=12 timeout "${TEST_S:-110}" make BUILD=build test > "$DEST/test.log" 2>&1; echo "make test exit $?" >> "$DEST/test.log"
grep -E "passed, .* failed|^FAIL|exit" "$DEST/test.log" | tail -40
t done
