#!/usr/bin/env bash
# mobilenet.sh — the per-model benchmark (MobileNet-v3-Large, MobileNet-v2 with MODEL=mobilenet_v2, or
# ResNet-50 with MODEL=resnet50, which bench/resnet.sh sets), gcr beside PyTorch in one run on one GPU:
#   gcr eager / captured+fused (no CUDA Graph) / captured+graph replay   (build/bin/<the model's sample>)
#   PyTorch eager / eager + CUDA Graph / torch.compile reduce-overhead   (bench/torch_side_by_side.py)
# for each batch and dtype, then cold start (process start to the first replayed result) with an
# empty and a warm GCR_CACHE_DIR. Writes a markdown table (GPU, date, command) to
# $RESULTS/<mobilenet|mobilenet_v2|resnet50>-<date>.md plus the raw log and JSON lines beside it.
#
# f32 math, compared like with like: gcr's f32 is exact FP32 unless GCR_TF32=1 (1x1 convs and GEMMs
# on TF32 tensor cores); PyTorch's default runs f32 convs in TF32 (cudnn.allow_tf32). So f32 runs gcr
# both ways (engines gcr-<mode> and gcr-<mode>-tf32) and PyTorch both ways (torch-* with its default
# flags, torch-*-fp32 with TF32 off); every JSON line says its "math" (fp32, tf32, tf32-conv, f16)
# and the table's ratios pair fp32 with fp32 and TF32 with TF32.
#
# usage: bench/mobilenet.sh                     (from anywhere; runs from the repository root)
# knobs (environment): MODEL=mobilenet_v3 (or resnet50: torchvision's ResNet-50, base width 64; or
#   mobilenet_v2: torchvision's MobileNet-v2, a second depthwise-separable network)
#   BATCHES="1 8 32 128" (resnet50, mobilenet_v2: "1 32 128")  DTYPES="f32 f16"  LAYOUT=nchw
#   (resnet50, mobilenet_v2: nhwc, i.e. channels_last for PyTorch too)  ITERS=200
#   GCR=1 (0 skips the gcr runs)  TORCH=1 (0 skips PyTorch)  TORCH_MODES=eager,graph,ro
#   COLD=1 (0 skips cold start)  COLD_DTYPES="f32" (cold start per dtype; an empty cache compiles everything)
#   GCR_TF32_RUNS=1 (0: f32 gcr in exact FP32 only)  GCR_TF32_MODES=graph (modes of the TF32 run, e.g. fused,graph)
#   GCR_MODES=eager,fused,graph (modes of the other gcr runs)
#   TORCH_TF32=both (torch_side_by_side.py --tf32: default | 0 | 1 | both)
#   PROFILE=0 (1: per-kernel profile of the replay at batch 1 and the largest batch, per dtype and math,
#     summarised by bench/profile_top.py)  PROFILE_BATCHES="1 <largest>"  PROFILE_ITERS=10  PROFILE_TOP=15
#   BUILD=build  RESULTS=bench/results  MAKEFLAGS_J=-j8  DEVICE=cuda (cpu: a smoke test of this script)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${MODEL:-mobilenet_v3}
# per model: the sample, its model options, the results' name, torch_side_by_side.py --model, defaults
case "$MODEL" in
  mobilenet_v3) SAMPLE=mobilenet_v3 MODEL_ARGS="--model large" TAG=mobilenet TORCH_MODEL=mobilenet_v3_large
                DEF_BATCHES="1 8 32 128" DEF_LAYOUT=nchw ;;
  resnet50) SAMPLE=resnet50 MODEL_ARGS="" TAG=resnet50 TORCH_MODEL=resnet50 DEF_BATCHES="1 32 128" DEF_LAYOUT=nhwc ;;
  mobilenet_v2) SAMPLE=mobilenet_v2 MODEL_ARGS="" TAG=mobilenet_v2 TORCH_MODEL=mobilenet_v2 DEF_BATCHES="1 32 128"
                DEF_LAYOUT=nhwc ;;
  *) echo "mobilenet.sh: MODEL=$MODEL: mobilenet_v3, resnet50 or mobilenet_v2"; exit 2 ;;
esac
BATCHES=${BATCHES:-$DEF_BATCHES}
DTYPES=${DTYPES:-"f32 f16"}
LAYOUT=${LAYOUT:-$DEF_LAYOUT}
DEVICE=${DEVICE:-cuda}
ITERS=${ITERS:-200}
TORCH=${TORCH:-1}
TORCH_MODES=${TORCH_MODES:-eager,graph,ro}
GCR=${GCR:-1}
COLD=${COLD:-$GCR}
COLD_DTYPES=${COLD_DTYPES:-${DTYPES%% *}}
GCR_TF32_RUNS=${GCR_TF32_RUNS:-1}
GCR_TF32_MODES=${GCR_TF32_MODES:-graph}
GCR_MODES=${GCR_MODES:-eager,fused,graph}
TORCH_TF32=${TORCH_TF32:-both}
PROFILE=${PROFILE:-0}
PROFILE_BATCHES=${PROFILE_BATCHES:-$(printf '%s\n' 1 $BATCHES | sort -nu | sed -n '1p;$p' | sort -nu | tr '\n' ' ')}
PROFILE_ITERS=${PROFILE_ITERS:-10}
PROFILE_TOP=${PROFILE_TOP:-15}
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-bench/results}
J=${MAKEFLAGS_J:--j8}
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p "$RESULTS"
LOG="$RESULTS/$TAG-$STAMP.log"
JSONL="$RESULTS/$TAG-$STAMP.jsonl"
MD="$RESULTS/$TAG-$STAMP.md"
PROF_MD="$RESULTS/.profile-$STAMP.md"
RUN="$RESULTS/.run.txt"
CMD="MODEL=$MODEL BATCHES=\"$BATCHES\" DTYPES=\"$DTYPES\" LAYOUT=$LAYOUT ITERS=$ITERS GCR=$GCR GCR_TF32_RUNS=$GCR_TF32_RUNS GCR_TF32_MODES=$GCR_TF32_MODES TORCH=$TORCH TORCH_MODES=$TORCH_MODES TORCH_TF32=$TORCH_TF32 COLD=$COLD COLD_DTYPES=\"$COLD_DTYPES\" PROFILE=$PROFILE"
[ "$PROFILE" = 1 ] && CMD="$CMD PROFILE_BATCHES=\"${PROFILE_BATCHES% }\" PROFILE_ITERS=$PROFILE_ITERS"
CMD="$CMD bench/mobilenet.sh"
: > "$JSONL"
: > "$PROF_MD"

make $J BUILD="$BUILD" "$BUILD/bin/$SAMPLE" > "$LOG" 2>&1 || { tail -30 "$LOG"; exit 1; }
BIN="$BUILD/bin/$SAMPLE"
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
[ -n "$GPU" ] || GPU="(no nvidia-smi)"
echo "# $CMD on $GPU" | tee -a "$LOG"

# the gcr math variants of a dtype: f32 exact FP32, and with GCR_TF32_RUNS=1 also TF32; f16 is f16
gcr_maths() { if [ "$1" = f32 ]; then [ "$GCR_TF32_RUNS" = 1 ] && echo "fp32 tf32" || echo fp32; else echo "$1"; fi; }
# the engine-name suffix of a gcr math variant: gcr-<mode>-tf32 for TF32, plain gcr-<mode> otherwise
gcr_suffix() { [ "$1" != tf32 ] || echo -tf32; }

# run_gcr MATH DTYPE BATCH [sample args...]: one sample process into $RUN (the log gets
# it too). GCR_TF32 is always set, to 0 outside the tf32 variant, so that a GCR_TF32=1 in the
# caller's environment cannot turn the fp32 rows into TF32 ones. Returns 1 if the process failed.
run_gcr() {
  local math=$1 dt=$2 b=$3 tf=0
  shift 3
  [ "$math" != tf32 ] || tf=1
  # shellcheck disable=SC2086
  GCR_TF32=$tf "$BIN" $MODEL_ARGS --batch "$b" --dtype "$dt" --layout "$LAYOUT" --device "$DEVICE" "$@" \
    > "$RUN" 2>&1 || { cat "$RUN" >> "$LOG"; tail -20 "$RUN"; echo "gcr run failed ($math $dt b$b)"; return 1; }
  cat "$RUN" >> "$LOG"
}

# gcr: one process per (dtype, batch, math); its cache warms after the first, cold start is measured
# below. The RESULT lines get "math" and, for TF32, engine gcr-<mode>-tf32.
for dt in $DTYPES; do
  [ "$GCR" = 1 ] || break
  for b in $BATCHES; do
    for math in $(gcr_maths "$dt"); do
      echo "== gcr $MODEL $dt batch $b math $math" | tee -a "$LOG"
      sfx=$(gcr_suffix "$math") modes=$GCR_MODES
      [ -z "$sfx" ] || modes=$GCR_TF32_MODES
      run_gcr "$math" "$dt" "$b" --modes "$modes" --iters "$ITERS" --warmup 20 || continue
      grep -v '^RESULT' "$RUN" | grep -E 'mode|eager|captured|agree|DISAGREE' || true
      sed -n 's/^RESULT {"engine":"\(gcr-[a-z]*\)"/{"engine":"\1'"$sfx"'","math":"'"$math"'"/p' "$RUN" >> "$JSONL"
    done
  done
done

# profile: the replay's kernels at batch 1 and the largest batch, per dtype and math. A profiled run
# launches plainly, each kernel between two events (replay/cuda_exec.c), so short kernels carry
# launch gaps; the unprofiled replay's ms is printed beside the sum. GCR_DUMP=fused lets
# profile_top.py tell 1x1, depthwise and stem convolutions apart.
if [ "$PROFILE" = 1 ]; then
  PDIR=$(mktemp -d)
  echo "## Per-kernel profile of the replay (bench/profile_top.py)" >> "$PROF_MD"
  echo "" >> "$PROF_MD"
  echo "GCR_PROFILE runs launch plainly, each kernel between two CUDA events (no CUDA Graph), so a short kernel's time includes its launch gap; the first 3 forwards (first pass, first replay, a warm-up) are left out." >> "$PROF_MD"
  echo "" >> "$PROF_MD"
  for dt in $DTYPES; do
    for b in $PROFILE_BATCHES; do
      for math in $(gcr_maths "$dt"); do
        echo "== profile gcr $MODEL $dt batch $b math $math" | tee -a "$LOG"
        rm -rf "$PDIR"/*
        GCR_PROFILE="$PDIR/trace.json" GCR_DUMP=fused GCR_DUMP_DIR="$PDIR/dump" \
          run_gcr "$math" "$dt" "$b" --modes graph --iters "$PROFILE_ITERS" --warmup 2 || continue
        # the unprofiled replay's ms from the timing run above, if there was one
        ref=$(grep -F "\"engine\":\"gcr-graph$(gcr_suffix "$math")\"," "$JSONL" | grep -F "\"dtype\":\"$dt\"" | grep -F "\"batch\":$b," \
              | sed -n 's/.*"ms":\([0-9.]*\).*/--replay-ms \1/p' | tail -n 1 || true)
        python3 bench/profile_top.py "$PDIR/trace.json" --dump "$PDIR/dump" --skip 3 --top "$PROFILE_TOP" $ref \
          --title "$dt$([ "$math" = "$dt" ] || echo " $math") batch $b ($LAYOUT)" 2>&1 | tee -a "$LOG" "$PROF_MD" || echo "profile_top failed" | tee -a "$LOG"
      done
    done
  done
  rm -rf "$PDIR"
fi
rm -f "$RUN"

# PyTorch in the same run
if [ "$TORCH" = 1 ]; then
  tdt=$(echo $DTYPES | sed 's/f32/float32/; s/f16/float16/' | tr ' ' ',')
  echo "== torch $TORCH_MODES" | tee -a "$LOG"
  python3 bench/torch_side_by_side.py --model "$TORCH_MODEL" --modes "$TORCH_MODES" --batches "$(echo $BATCHES | tr ' ' ',')" \
    --dtypes "$tdt" --iters "$ITERS" --layout "$LAYOUT" --tf32 "$TORCH_TF32" --json "$RESULTS/.torch.json" 2>>"$LOG" \
    | tee -a "$LOG" | sed -n 's/^RESULT //p' >> "$JSONL" || echo "torch side-by-side failed (see $LOG)"
  rm -f "$RESULTS/.torch.json"
fi

# cold start: fresh processes, batch 1, replay mode only; empty cache, then the same (now warm) cache
if [ "$COLD" = 1 ]; then
  CACHE=$(mktemp -d)
  for dt in $COLD_DTYPES; do
    rm -rf "$CACHE"; mkdir -p "$CACHE"
    for state in empty warm; do
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086
      out=$(GCR_CACHE_DIR="$CACHE" "$BIN" $MODEL_ARGS --batch 1 --dtype "$dt" --layout "$LAYOUT" --device "$DEVICE" \
            --modes graph --iters 1 --warmup 0 2>&1) || { echo "$out" | tail -5; continue; }
      t1=$(date +%s.%N)
      echo "$out" >> "$LOG"
      at=$(echo "$out" | sed -n 's/.*first replayed result \([0-9.]*\) s after process start.*/\1/p')
      comp=$(echo "$out" | sed -n 's/^RESULT .*"compile_s":\([0-9.]*\).*/\1/p')
      whole=$(python3 -c "print(round($t1-$t0,3))")
      echo "cold start $dt $state cache: first replayed result ${at}s after process start (process total ${whole}s, compile ${comp}s)" | tee -a "$LOG"
      echo "{\"engine\":\"gcr-coldstart\",\"dtype\":\"$dt\",\"cache\":\"$state\",\"first_replay_at_s\":${at:-null},\"process_s\":$whole,\"compile_s\":${comp:-null}}" >> "$JSONL"
    done
  done
  rm -rf "$CACHE"
fi

# the markdown table
python3 bench/mobilenet_table.py "$MD" "$GPU" "$CMD" "$LAYOUT" "$JSONL"
# the profile summaries (PROFILE=1) after the tables
if [ -s "$PROF_MD" ]; then printf '\n' >> "$MD"; cat "$PROF_MD" >> "$MD"; fi
rm -f "$PROF_MD"
echo "wrote $MD (log $LOG, raw $JSONL)"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$MD" "$LOG" "$JSONL" "$OUT"/; fi
