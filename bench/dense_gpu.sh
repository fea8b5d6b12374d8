#!/bin/sh
# dense_gpu.sh — one device call for the dense kernels (perf helper): builds the library twice
# (build-gpu: as committed; build-gpu-base: -DVEC_UNVERIFIED=0 -DGCR_DENSE_TC=0 -DGCR_DW_VEC=0
# -DGCR_DENSE_DIRECT=0, the kernel selection before the perf work), runs test_cuda_dense with a
# fresh kernel cache, then conv_bench for both (NCHW and NHWC; f32 and f16; batch 1 and 128), logs
# under $OUT (layers.txt: per layer base -> new; at most 8 files come back), and prints the
# per-forward totals last.  usage: sh bench/dense_gpu.sh [torch]   (torch: also
# bench/conv_bench_torch.py, its output appended to layers.txt)
set -u
OUT=${OUT:-/tmp/dense_out}
mkdir -p "$OUT"
export GCR_CACHE_DIR=$(mktemp -d)
J=-j16
T=build-gpu/test/test_cuda_dense
B=build-gpu/bench/conv_bench
make BUILD=build-gpu $J $T $B > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
make BUILD=build-gpu-base CFLAGS="-O2 -g -DVEC_UNVERIFIED=0 -DGCR_DENSE_TC=0 -DGCR_DW_VEC=0 -DGCR_DENSE_DIRECT=0" $J build-gpu-base/bench/conv_bench \
    >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
$T > "$OUT/test.log" 2>&1
echo "test_cuda_dense rc=$?"
grep -E "FAIL|passed|failed" "$OUT/test.log" | head -30
for f in nchw nhwc; do
    build-gpu/bench/conv_bench $f 1 128 > "$OUT/new_$f.log" 2>&1
    build-gpu-base/bench/conv_bench $f 1 128 > "$OUT/base_$f.log" 2>&1
done
if [ "${1:-}" = torch ]; then
    python3 bench/conv_bench_torch.py 1 128 > "$OUT/torch.log" 2>&1
    python3 bench/conv_bench_torch.py nhwc 1 128 >> "$OUT/torch.log" 2>&1
fi
# per-layer side by side (us), then totals
for f in nchw nhwc; do
    echo "== per layer $f: base -> new (us)" >> "$OUT/layers.txt"
    paste "$OUT/base_$f.log" "$OUT/new_$f.log" | awk -F'\t' '
        $1 ~ /^LAYER/ { next }
        /batch/ && $1 !~ /^ / { split($1, h, " "); hdr = h[1] " b" h[3] }
        $1 ~ / us / && $1 !~ /total/ { n = split($1, a, " +"); split($2, b, " +"); for (i = 1; i <= n; i++) if (a[i] == "us") { ua = a[i-1]; ub = b[i-1] }
                      printf "%-10s %-14s %s %9s %9s\n", hdr, a[2], a[3], ua, ub }' >> "$OUT/layers.txt"
done
[ -f "$OUT/torch.log" ] && { cat "$OUT/torch.log" >> "$OUT/layers.txt"; rm "$OUT/torch.log"; }
echo "== totals (us per forward): base | new"
for f in nchw nhwc; do
    paste "$OUT/base_$f.log" "$OUT/new_$f.log" | awk -F'\t' -v f=$f '
        $1 ~ /^LAYER/ { next }
        $1 ~ /batch/ && $1 !~ /^ / { split($1, h, " "); hdr = h[1] " b" h[3] " " f }
        $1 ~ /total/ { split($1, a, " +"); split($2, b, " +"); printf "%-16s base %8s (dw %s) | new %8s (dw %s)\n", hdr, a[3], a[8], b[3], b[8] }'
done
