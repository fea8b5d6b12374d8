#!/usr/bin/env bash
# mobilenet.sh — the MobileNet-v3-Large benchmark, gcr beside PyTorch in one run on one GPU:
#   gcr eager / captured+fused (no CUDA Graph) / captured+graph replay   (build/bin/mobilenet_v3)
#   PyTorch eager / eager + CUDA Graph / torch.compile reduce-overhead   (bench/torch_side_by_side.py)
# for each batch and dtype, then cold start (process start to the first replayed result) with an
# empty and a warm GCR_CACHE_DIR. Writes a markdown table (GPU, date, command) to
# $RESULTS/mobilenet-<date>.md plus the raw log and JSON lines beside it.
#
# usage: bench/mobilenet.sh                     (from anywhere; runs from the repository root)
# knobs (environment): BATCHES="1 8 32 128"  DTYPES="f32 f16"  LAYOUT=nchw  ITERS=200
#   GCR=1 (0 skips the gcr runs)  TORCH=1 (0 skips PyTorch)  TORCH_MODES=eager,graph,ro
#   COLD=1 (0 skips cold start)  COLD_DTYPES="f32" (cold start per dtype; an empty cache compiles everything)
#   BUILD=build  RESULTS=bench/results  MAKEFLAGS_J=-j8  DEVICE=cuda (cpu: a smoke test of this script)
set -euo pipefail
cd "$(dirname "$0")/.."
BATCHES=${BATCHES:-"1 8 32 128"}
DTYPES=${DTYPES:-"f32 f16"}
LAYOUT=${LAYOUT:-nchw}
DEVICE=${DEVICE:-cuda}
ITERS=${ITERS:-200}
TORCH=${TORCH:-1}
TORCH_MODES=${TORCH_MODES:-eager,graph,ro}
GCR=${GCR:-1}
COLD=${COLD:-$GCR}
COLD_DTYPES=${COLD_DTYPES:-${DTYPES%% *}}
BUILD=${BUILD:-build}
RESULTS=${RESULTS:-bench/results}
J=${MAKEFLAGS_J:--j8}
STAMP=$(date -u +%Y-%m-%dT%H%M%SZ)
mkdir -p "$RESULTS"
LOG="$RESULTS/mobilenet-$STAMP.log"
JSONL="$RESULTS/mobilenet-$STAMP.jsonl"
MD="$RESULTS/mobilenet-$STAMP.md"
CMD="BATCHES=\"$BATCHES\" DTYPES=\"$DTYPES\" LAYOUT=$LAYOUT ITERS=$ITERS GCR=$GCR TORCH=$TORCH TORCH_MODES=$TORCH_MODES COLD=$COLD COLD_DTYPES=\"$COLD_DTYPES\" bench/mobilenet.sh"
: > "$JSONL"

make $J BUILD="$BUILD" "$BUILD/bin/mobilenet_v3" > "$LOG" 2>&1 || { tail -30 "$LOG"; exit 1; }
BIN="$BUILD/bin/mobilenet_v3"
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)
[ -n "$GPU" ] || GPU="(no nvidia-smi)"
echo "# $CMD on $GPU" | tee -a "$LOG"

# gcr: one process per (dtype, batch); its cache warms after the first, cold start is measured below
for dt in $DTYPES; do
  [ "$GCR" = 1 ] || break
  for b in $BATCHES; do
    echo "== gcr large $dt batch $b" | tee -a "$LOG"
    "$BIN" --model large --batch "$b" --dtype "$dt" --layout "$LAYOUT" --device "$DEVICE" --iters "$ITERS" --warmup 20 \
      > "$RESULTS/.run.txt" 2>&1 || { cat "$RESULTS/.run.txt" >> "$LOG"; tail -20 "$RESULTS/.run.txt"; echo "gcr run failed"; continue; }
    cat "$RESULTS/.run.txt" >> "$LOG"
    grep -v '^RESULT' "$RESULTS/.run.txt" | grep -E 'mode|eager|captured|agree|DISAGREE' || true
    sed -n 's/^RESULT //p' "$RESULTS/.run.txt" >> "$JSONL"
  done
done
rm -f "$RESULTS/.run.txt"

# PyTorch in the same run
if [ "$TORCH" = 1 ]; then
  tdt=$(echo $DTYPES | sed 's/f32/float32/; s/f16/float16/' | tr ' ' ',')
  echo "== torch $TORCH_MODES" | tee -a "$LOG"
  python3 bench/torch_side_by_side.py --modes "$TORCH_MODES" --batches "$(echo $BATCHES | tr ' ' ',')" \
    --dtypes "$tdt" --iters "$ITERS" --layout "$LAYOUT" --json "$RESULTS/.torch.json" 2>>"$LOG" \
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
      out=$(GCR_CACHE_DIR="$CACHE" "$BIN" --model large --batch 1 --dtype "$dt" --layout "$LAYOUT" --device "$DEVICE" \
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
python3 - "$JSONL" "$MD" "$GPU" "$CMD" "$LAYOUT" <<'EOF'
import json, sys, datetime
jl, md, gpu, cmd, layout = sys.argv[1:6]
rows = [json.loads(l) for l in open(jl) if l.strip()]
order = ["gcr-eager", "gcr-fused", "gcr-graph", "torch-eager", "torch-eager+cudagraph", "torch-compile-ro"]
names = {"gcr-eager": "gcr eager", "gcr-fused": "gcr captured+fused (no CUDA Graph)",
         "gcr-graph": "gcr captured+graph replay", "torch-eager": "PyTorch eager",
         "torch-eager+cudagraph": "PyTorch eager + CUDA Graph",
         "torch-compile-ro": "torch.compile reduce-overhead"}
perf = [r for r in rows if r["engine"] in order]
batches = sorted({r["batch"] for r in perf})
dtypes = [d for d in ("f32", "f16") if any(r["dtype"] == d for r in perf)]
out = ["# MobileNet-v3-Large: gcr vs PyTorch", "",
       "- GPU: %s" % gpu, "- date: %s" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
       "- command: `%s`" % cmd,
       "- layout %s, 224x224, random init; ms = median per forward (back-to-back forwards, input on the device)" % layout, ""]
hdr = "| engine | dtype | " + " | ".join("b%d ms" % b for b in batches) + " | kernels/fwd (b1) | b1 speed vs torch.compile (>1 faster) |"
out += [hdr, "|" + "---|" * (len(batches) + 4)]
for dt in dtypes:
    ro = {r["batch"]: r["ms"] for r in perf if r["engine"] == "torch-compile-ro" and r["dtype"] == dt}
    for e in order:
        sel = {r["batch"]: r for r in perf if r["engine"] == e and r["dtype"] == dt}
        if not sel:
            continue
        cells = ["%.3f" % sel[b]["ms"] if b in sel else "" for b in batches]
        b0 = batches[0]
        k = sel[b0].get("kernels") if b0 in sel else None
        ratio = "%.2fx" % (ro[b0] / sel[b0]["ms"]) if b0 in sel and b0 in ro else ""
        out.append("| %s | %s | %s | %s | %s |" % (names[e], dt, " | ".join(cells), "" if k is None else k, ratio))
out.append("")
cold = [r for r in rows if r["engine"] == "gcr-coldstart"]
if cold:
    out += ["## Cold start (batch 1, process start to the first replayed result)", "",
            "| dtype | kernel cache | first replayed result s | whole process s | compile s |", "|---|---|---|---|---|"]
    for r in cold:
        out.append("| %s | %s | %s | %s | %s |" % (r["dtype"], r["cache"], r["first_replay_at_s"], r["process_s"], r["compile_s"]))
    ros = [r for r in perf if r["engine"] == "torch-compile-ro" and r.get("compile_s") is not None]
    if ros:
        out += ["", "torch.compile reduce-overhead compile (first 3 calls) in this run: " +
                ", ".join("%s b%d %.1f s" % (r["dtype"], r["batch"], r["compile_s"]) for r in ros)]
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
echo "wrote $MD (log $LOG, raw $JSONL)"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$MD" "$LOG" "$JSONL" "$OUT"/; fi
