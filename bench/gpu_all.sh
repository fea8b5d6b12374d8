#!/usr/bin/env bash
# gpu_all.sh — the GPU work of a change in device-machine calls of at most 10 minutes each: build,
# the dense kernels' tests, the MobileNet-v3 benchmark beside PyTorch, the micro-benchmarks and the
# whole test suite. One call cannot hold them all (2026-11-23, H100: gcr side ~3 min, PyTorch side
# with 12 torch.compile runs ~5 min, the suite ~3-4 min with a cold kernel cache), so STAGES picks:
#
#   STAGES="build cold dense gcr" bash bench/gpu_all.sh first call  (~5 min)
#   STAGES="build torch test" bash bench/gpu_all.sh     second call (~9 min; same GPU kind)
#   python3 bench/mobilenet_table.py page.md "GPU" "commands" "gcr nhwc, PyTorch nchw" gcr.jsonl torch.jsonl
#
# stages: build (make all bench tests) · ab (A/B of kernels not yet on by default: ab.txt, ab.md) · cold (cold start, f32 and f16 b1: process start to the first
# replayed result with an empty then a warm kernel cache, before anything else has compiled on the
# machine) · dense (test_cuda_dense, fresh kernel cache) · gcr (gcr only: NHWC, f32 exact and
# GCR_TF32=1, f16, batches 1 8 32 128) · torch (PyTorch only: NCHW
# as in shared/bench/BASELINES.md, eager / eager + CUDA Graph / torch.compile reduce-overhead, f32 with
# PyTorch's default TF32 convs and strict FP32, f16) · micro (launch, fusion_bench, bind_replay) · test (every test
# binary, 16 at a time, each result line printed as it finishes, GCR_TEST_REQUIRE_CUDA=1 so a GPU test
# that skips fails). Each stage is time-boxed so results
# always come back; tables, JSON lines and logs land in $OUT (or bench/results/gpu-<stamp>/), at most
# 8 files (the device tool's limit).
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-"build cold dense gcr"}
DEST=${OUT:-bench/results/gpu-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$DEST"
LOG="$DEST/all.log"
export GCR_LOG=0 GCR_CACHE_DIR=${GCR_CACHE_DIR:-/tmp/gcr-cache-gpu-all}
R=$(mktemp -d)
t() { echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }
has() { case " $STAGES " in *" $1 "*) return 0 ;; esac; return 1; }

if has build; then
  t build
  make -j16 BUILD=build all bench tests > "$DEST/build.log" 2>&1 || { tail -40 "$DEST/build.log"; exit 1; }
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tee -a "$LOG"
fi
if has cold; then
  t "cold start (nhwc)"
  GCR=0 TORCH=0 COLD=1 COLD_DTYPES="f32 f16" LAYOUT=nhwc RESULTS="$R/cold" OUT= timeout 200 bench/mobilenet.sh > "$R/cold.out" 2>&1
  echo "cold start exit $?" | tee -a "$LOG"
  cp "$R"/cold/*.jsonl "$DEST/cold.jsonl" 2>/dev/null
  grep -E "^cold start" "$R/cold.out" | tee -a "$LOG"
fi
if has dense; then
  t "test_cuda_dense (fresh kernel cache)"
  GCR_CACHE_DIR=$(mktemp -d) timeout 200 build/test/test_cuda_dense > "$R/dense.log" 2>&1
  echo "test_cuda_dense exit $?" | tee -a "$LOG"
  grep -E "^FAIL|passed" "$R/dense.log" | head -20 | tee -a "$LOG"
fi
if has gcr; then
  t "gcr (nhwc)"
  LAYOUT=nhwc ITERS=100 TORCH=0 COLD=0 RESULTS="$R/gcr" OUT= timeout 330 bench/mobilenet.sh \
    > "$R/gcr.out" 2>&1
  echo "gcr bench exit $?" | tee -a "$LOG"
  cp "$R"/gcr/*.jsonl "$DEST/gcr.jsonl" 2>/dev/null
  cat "$R"/gcr/*.log >> "$LOG" 2>/dev/null
  grep -E "^\||agree|DISAGREE" "$R/gcr.out" | tee -a "$LOG" | grep -E "DISAGREE|replay"
fi
if has torch; then
  t "torch (nchw)"
  GCR=0 DTYPES="f16 f32" LAYOUT=nchw ITERS=100 TORCH_MODES=eager,graph,ro TORCH_TF32=both COLD=0 RESULTS="$R/torch" OUT= \
    timeout 330 bench/mobilenet.sh > "$R/torch.out" 2>&1
  echo "torch bench exit $?" | tee -a "$LOG"
  cp "$R"/torch/*.jsonl "$DEST/torch.jsonl" 2>/dev/null
  cat "$R"/torch/*.log >> "$LOG" 2>/dev/null
  grep -c '^RESULT' "$R/torch.out" | sed 's/^/torch result lines: /' | tee -a "$LOG"
fi
if has ab; then
  # A/B of kernels not yet picked by default, in one call on one GPU: the deep-pipeline tc tiles
  # (forced with conv_bench force=: d_ takes the first deep tile listed, the 64-wide one; 8kd_ the
  # 128-wide implicit one) against the heuristic's picks on ResNet-50, the small-channel tiles on the
  # stems (force=c_: the 32-wide one, 4c_: the 64-wide one), and the channel-group
  # depthwise kernel against the shared-memory tile (a build with -DGCR_DW_CLASSIC=0) on MobileNet-v3
  t "ab: deep tiles, depthwise kernels"
  make -j16 BUILD=build-nc CFLAGS="-O2 -g -DGCR_DW_CLASSIC=0" build-nc/bench/conv_bench > "$R/ab_build.log" 2>&1 ||
    tail -20 "$R/ab_build.log"
  for v in "build/bench/conv_bench net=resnet50 nhwc f16 head=0 32 128" \
           "build/bench/conv_bench net=resnet50 nhwc f16 head=0 force=d_ 32 128" \
           "build/bench/conv_bench net=resnet50 nhwc f16 head=0 force=8kd_ 32 128" \
           "build/bench/conv_bench net=all nhwc f16 head=0 only=stem 1 32 128" \
           "build/bench/conv_bench net=all nhwc f16 head=0 only=stem force=c_ 1 32 128" \
           "build/bench/conv_bench net=all nhwc f16 head=0 only=stem force=4c_ 1 32 128" \
           "build/bench/conv_bench net=mnv3 nhwc f16 head=0 32 128" \
           "build-nc/bench/conv_bench net=mnv3 nhwc f16 head=0 32 128"; do
    echo "== $v" >> "$DEST/ab.txt"
    timeout 90 $v >> "$DEST/ab.txt" 2>&1
    echo "$v" | tee -a "$LOG"
    grep -E "total" "$DEST/ab.txt" | tail -2 | tee -a "$LOG"
  done
  python3 bench/ab_table.py "$DEST/ab.txt" > "$DEST/ab.md" 2>&1 # per layer, each run against the block's first
fi
if has micro; then
  t micro
  for b in launch fusion_bench bind_replay; do timeout 25 build/bench/$b 2>&1 | tee -a "$DEST/micro.txt"; done
fi
if has test; then
  t "make test"
  GCR_TEST_REQUIRE_CUDA=1 JOBS=16 timeout "${TEST_S:-240}" make BUILD=build test > "$R/test.log" 2>&1
  echo "make test exit $?" | tee -a "$LOG"
  grep -E "^done|passed, .* failed|^FAIL" "$R/test.log" | tee -a "$LOG" | grep -vE "^done" | tail -30
fi
J=$(ls "$DEST"/cold.jsonl "$DEST"/gcr.jsonl "$DEST"/torch.jsonl 2>/dev/null)
[ -n "$J" ] && python3 bench/mobilenet_table.py "$DEST/mobilenet.md" \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)" "STAGES=\"$STAGES\" bench/gpu_all.sh" \
  "gcr nhwc, PyTorch nchw" $J > /dev/null
t done
rm -rf "$R"
