/* fusion_bench.c — what fusion and CUDA Graph replay buy, on the GPU (prints a table):
 *  1. hardswish written as 4 ops (add, clamp, mul, div) on 64x256x56x56, f32 and f16: eager (4
 *     kernels) vs replayed (1 generated kernel); the fused kernel's bandwidth as a fraction of a
 *     device-to-device cudaMemcpy of the same bytes measured in the same run (target >= 85%).
 *  2. 100 dependent tiny ops (add_scalar / mul_scalar on 256 elements): with GCR_FUSION=0 they stay
 *     100 kernels in one CUDA Graph, so replay time / 100 is the cost per graph node (target <= 1.3
 *     us on an H100); with fusion they are one kernel. Eager launches for comparison.
 * Wall-clock over many iterations between two syncs; the first iterations warm up. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#ifdef GCR_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int fail(gcr_ctx *ctx, const char *what)
{
    fprintf(stderr, "fusion_bench: %s: %s\n", what, ctx ? gcr_ctx_error(ctx) : "");
    return 1;
}

/* microseconds per device-to-device copy of bytes (read + write of bytes each) */
static double memcpy_us(size_t bytes, int iters)
{
#ifdef GCR_HAVE_CUDA
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return -1;
    cudaMemset(a, 1, bytes);
    for (int i = 0; i < 3; i++) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
    cudaDeviceSynchronize();
    double t0 = bench_now_us();
    for (int i = 0; i < iters; i++) cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
    cudaDeviceSynchronize();
    double t = (bench_now_us() - t0) / iters;
    cudaFree(a);
    cudaFree(b);
    return t;
#else
    (void)bytes;
    (void)iters;
    return -1;
#endif
}

static int bench_hswish(gcr_dtype dt)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!ctx) return fail(NULL, "no CUDA context");
    int64_t sh[4] = {64, 256, 56, 56}, n = 64LL * 256 * 56 * 56;
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) h[i] = (float)((i * 7919) % 2001) / 250.0f - 4.0f;
    gcr_tensor *f = gcr_tensor_from_data(ctx, GCR_F32, 4, sh, GCR_NCHW, h);
    gcr_tensor *x = dt == GCR_F32 ? f : gcr_tensor_keep(gcr_cast(ctx, f, dt));
    free(h);
    if (!x) return fail(ctx, "input");
    const int iters = 50;
    /* eager: 4 kernels, 4 round trips through memory */
    for (int i = 0; i < 3; i++) {
        uint64_t s = gcr_scope_begin(ctx);
        gcr_hardswish(ctx, x);
        gcr_scope_end(ctx, s);
    }
    gcr_ctx_sync(ctx);
    double t0 = bench_now_us();
    for (int i = 0; i < iters; i++) {
        uint64_t s = gcr_scope_begin(ctx);
        gcr_hardswish(ctx, x);
        gcr_scope_end(ctx, s);
    }
    gcr_ctx_sync(ctx);
    double eager = (bench_now_us() - t0) / iters;
    /* replay: one generated kernel in a CUDA Graph */
    gcr_graph *g = NULL;
    if (gcr_capture_begin(ctx) != GCR_OK) return fail(ctx, "capture_begin");
    gcr_hardswish(ctx, x);
    if (gcr_capture_end(ctx, &g) != GCR_OK) return fail(ctx, "capture_end");
    for (int i = 0; i < 3; i++) gcr_graph_replay(g);
    gcr_ctx_sync(ctx);
    t0 = bench_now_us();
    for (int i = 0; i < iters; i++) gcr_graph_replay(g);
    if (gcr_ctx_sync(ctx) != GCR_OK) return fail(ctx, "replay");
    double fused = (bench_now_us() - t0) / iters;
    gcr_graph_stats st;
    gcr_graph_get_stats(g, &st);
    size_t bytes = (size_t)n * gcr_dtype_size(dt);
    double cp = memcpy_us(bytes, iters);
    double gbs = 2.0 * (double)bytes / fused * 1e-3, cgbs = cp > 0 ? 2.0 * (double)bytes / cp * 1e-3 : 0;
    printf("hardswish 64x256x56x56 %-4s | eager (4 ops) %9.1f us | replay (%d kernel) %8.1f us | %.2fx | "
           "fused %6.0f GB/s, memcpy %6.0f GB/s: %5.1f%% of copy\n",
           gcr_dtype_name(dt), eager, st.kernels, fused, eager / fused, gbs, cgbs, cgbs > 0 ? 100.0 * gbs / cgbs : 0);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
    return 0;
}

static int bench_chain(int fusion)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, fusion);
    if (!ctx) return fail(NULL, "no CUDA context");
    int64_t sh[1] = {256};
    float h[256];
    for (int i = 0; i < 256; i++) h[i] = (float)i / 256.0f;
    gcr_tensor *x = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 1, sh, GCR_NCHW, h));
    const int iters = 2000;
    /* eager launches of the same 100 ops */
    for (int it = 0; it < 10; it++) {
        uint64_t s = gcr_scope_begin(ctx);
        gcr_tensor *y = x;
        for (int i = 0; i < 100; i++) y = i % 2 ? gcr_mul_scalar(ctx, y, 0.999f) : gcr_add_scalar(ctx, y, 0.01f);
        gcr_scope_end(ctx, s);
    }
    gcr_ctx_sync(ctx);
    double t0 = bench_now_us();
    for (int it = 0; it < iters / 10; it++) {
        uint64_t s = gcr_scope_begin(ctx);
        gcr_tensor *y = x;
        for (int i = 0; i < 100; i++) y = i % 2 ? gcr_mul_scalar(ctx, y, 0.999f) : gcr_add_scalar(ctx, y, 0.01f);
        gcr_scope_end(ctx, s);
    }
    gcr_ctx_sync(ctx);
    double eager = (bench_now_us() - t0) / (iters / 10);
    gcr_graph *g = NULL;
    if (gcr_capture_begin(ctx) != GCR_OK) return fail(ctx, "capture_begin");
    gcr_tensor *y = x;
    for (int i = 0; i < 100; i++) y = i % 2 ? gcr_mul_scalar(ctx, y, 0.999f) : gcr_add_scalar(ctx, y, 0.01f);
    if (gcr_capture_end(ctx, &g) != GCR_OK) return fail(ctx, "capture_end");
    for (int i = 0; i < 20; i++) gcr_graph_replay(g);
    gcr_ctx_sync(ctx);
    t0 = bench_now_us();
    for (int i = 0; i < iters; i++) gcr_graph_replay(g);
    if (gcr_ctx_sync(ctx) != GCR_OK) return fail(ctx, "replay");
    double rep = (bench_now_us() - t0) / iters;
    gcr_graph_stats st;
    gcr_graph_get_stats(g, &st);
    printf("100 tiny ops, fusion=%d        | eager %9.1f us (%.2f us/op) | replay (%3d kernels) %7.1f us | %.2f us per node\n",
           fusion, eager, eager / 100, st.kernels, rep, rep / st.kernels);
    gcr_graph_destroy(g);
    gcr_tensor_free(x);
    gcr_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    gcr_ctx *probe = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!probe) {
        printf("fusion_bench: no CUDA device, nothing to measure\n");
        return 0;
    }
    printf("device: %s\n", gcr_ctx_device_name(probe));
    gcr_ctx_destroy(probe);
    int rc = 0;
    rc |= bench_hswish(GCR_F32);
    rc |= bench_hswish(GCR_F16);
    rc |= bench_chain(0);
    rc |= bench_chain(1);
    return rc;
}
