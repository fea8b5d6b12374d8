#!/usr/bin/env bash
# kernel_trace.sh — per-kernel GPU times and the gaps between kernels inside one replayed CUDA Graph
# (bench/trace/kernel_trace.c through CUDA_INJECTION64_PATH; CUPTI activity records). Runs a sample
# at batch 1 (or BATCH) in graph mode, takes the graph launched most often, splits its kernels into
# replays at gaps over 20 µs and prints the median replay's timeline and a per-kernel-name summary.
#
#   MODEL=mobilenet_v3 DTYPE=f16 BATCH=1 bash bench/kernel_trace.sh > trace.md
set -euo pipefail
cd "$(dirname "$0")/.."
CUDA=${CUDA_HOME:-/usr/local/cuda}
MODEL=${MODEL:-mobilenet_v3} DTYPE=${DTYPE:-f16} BATCH=${BATCH:-1} LAYOUT=${LAYOUT:-nhwc}
LIB=${BUILD:-build}/bench/libkernel_trace.so
CSV=${CSV:-$(mktemp --suffix .csv)}
CUPTI_LIB=$(dirname "$(find "$CUDA/" -name 'libcupti.so' 2>/dev/null | head -1)")
CUPTI_INC=$(dirname "$(find "$CUDA/" -name 'cupti.h' 2>/dev/null | head -1)")
mkdir -p "$(dirname "$LIB")"
cc -O2 -shared -fPIC -I"$CUPTI_INC" bench/trace/kernel_trace.c -L"$CUPTI_LIB" -Wl,-rpath,"$CUPTI_LIB" -lcupti -o "$LIB"
CUDA_INJECTION64_PATH=$PWD/$LIB KERNEL_TRACE_OUT=$CSV \
  "${BUILD:-build}/bin/$MODEL" --dtype "$DTYPE" --layout "$LAYOUT" --batch "$BATCH" --modes graph \
  --iters "${ITERS:-50}" --warmup 10 --reference none > /dev/null
python3 - "$CSV" "$MODEL $DTYPE b$BATCH $LAYOUT" <<'PY'
import collections, statistics, sys
rows = []
for line in open(sys.argv[1]):
    s, e, gx, gy, gz, bx, gid, name = line.rstrip("\n").split(",", 7)
    rows.append((int(s), int(e), f"{gx}x{gy}x{gz}", int(gid), name))
graphs = collections.Counter(r[3] for r in rows if r[3])
if not graphs: sys.exit("kernel_trace: no kernel ran inside a CUDA Graph")
gid = graphs.most_common(1)[0][0]
ks = sorted((r for r in rows if r[3] == gid), key=lambda r: r[0])
reps, cur = [], [ks[0]]
for a, b in zip(ks, ks[1:]):
    if b[0] - a[1] > 20000: reps.append(cur); cur = []
    cur.append(b)
reps.append(cur)
n = collections.Counter(len(r) for r in reps).most_common(1)[0][0]
reps = [r for r in reps if len(r) == n]
span = lambda r: r[-1][1] - r[0][0]
med = sorted(reps, key=span)[len(reps) // 2]
print(f"# In-graph kernel timeline: {sys.argv[2]}\n")
print(f"{len(reps)} replays of {n} kernels; median replay span {span(med)/1000:.1f} µs "
      f"(min {min(map(span, reps))/1000:.1f}, max {max(map(span, reps))/1000:.1f})\n")
busy = sum(k[1] - k[0] for k in med)
gaps = [b[0] - a[1] for a, b in zip(med, med[1:])]
print(f"kernel time {busy/1000:.1f} µs, gaps {sum(gaps)/1000:.1f} µs (median gap {statistics.median(gaps)/1000:.2f} µs; "
      f"negative: PDL overlap)\n")
print("| # | kernel | grid | µs | gap before µs |\n|---|---|---|---|---|")
prev = None
for i, k in enumerate(med):
    gap = "" if prev is None else f"{(k[0] - prev[1])/1000:.2f}"
    print(f"| {i} | {k[4][:48]} | {k[2]} | {(k[1]-k[0])/1000:.2f} | {gap} |"); prev = k
agg = collections.OrderedDict()
for k in med:
    a = agg.setdefault(k[4].split("(")[0][:40], [0, 0]); a[0] += 1; a[1] += k[1] - k[0]
print("\n| kernel | count | µs | share | mean µs |\n|---|---|---|---|---|")
for name, (c, t) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print(f"| {name} | {c} | {t/1000:.1f} | {100*t/busy:.1f}% | {t/c/1000:.2f} |")
PY
