/* pointwise_bw.c — eager pointwise bandwidth at 64x256x56x56 (f32 and f16): add, relu, hardswish
 * as the 4 eager ops the API decomposes it into, and hardswish as one fused kernel (the same ops
 * captured: the fuser makes one kernel of them, timed as graph replays). Bytes count reads + writes
 * of the op's own inputs and result (for the 4-op hardswish: those of the one fused op, so its
 * figure shows the cost of the round trips). Reported as GB/s and as a fraction of a device-to-
 * device cudaMemcpy measured in the same run. Times are CUDA events around ITERS calls. Further
 * rows show the N-d paths on the same tensor: batch_norm ([C] params), a multiply by an SE-style
 * [N,C,1,1] tensor, an NCHW -> NHWC copy, and reductions (bytes: the input read once). */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

#if GCR_HAVE_CUDA
#include "cuda/cuda_ops.h"

#define ITERS 20
static const int64_t SHAPE[4] = {64, 256, 56, 56};

static cudaEvent_t e0, e1;

static double elapsed_ms(gcr_ctx *ctx)
{
    float ms = 0;
    cudaEventRecord(e1, gcr_cuda_stream(ctx));
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    return ms / ITERS;
}

#define TIMED(ctx, body)                                                    \
    do {                                                                    \
        { body; } /* warm-up: compiles, allocator classes */                \
        gcr_ctx_sync(ctx);                                                  \
        cudaEventRecord(e0, gcr_cuda_stream(ctx));                          \
        for (int it_ = 0; it_ < ITERS; it_++) { body; }                     \
        ms = elapsed_ms(ctx);                                               \
    } while (0)

/* hardswish as its ops, x * clamp(x + 3, 0, 6) then / 6 (or * (1/6) when mul), captured into a
 * graph whose one fused kernel each replay runs; NULL on failure */
static gcr_graph *fused_hardswish(gcr_ctx *ctx, gcr_tensor *x, int mul)
{
    gcr_graph *g = NULL;
    if (gcr_capture_begin(ctx) != GCR_OK) return NULL;
    gcr_tensor *t = gcr_mul(ctx, x, gcr_clamp(ctx, gcr_add_scalar(ctx, x, 3.0f), 0.0f, 6.0f));
    if (mul) gcr_mul_scalar(ctx, t, 1.0f / 6.0f);
    else gcr_div_scalar(ctx, t, 6.0f);
    return gcr_capture_end(ctx, &g) == GCR_OK ? g : NULL;
}

static void row(const char *name, const char *dt, double bytes, double ms, double copy_gbs)
{
    double gbs = bytes / (ms * 1e-3) / 1e9;
    printf("%-28s %-4s %10.1f %10.1f %9.0f%%\n", name, dt, ms * 1e3, gbs, 100.0 * gbs / copy_gbs);
}

int main(void)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!ctx) {
        printf("pointwise_bw: no CUDA device, skipped\n");
        return 0;
    }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    int64_t n = SHAPE[0] * SHAPE[1] * SHAPE[2] * SHAPE[3];
    float *h = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) h[i] = (float)((i * 7919) % 2001) * 0.005f - 5.0f;
    gcr_tensor *x32 = gcr_tensor_from_data(ctx, GCR_F32, 4, SHAPE, GCR_NCHW, h);
    free(h);
    gcr_tensor *y32 = gcr_relu(ctx, x32);
    double ms;
    /* copy reference: one D2D memcpy of the f32 tensor (read + write) */
    void *dst = gcr_tensor_data(y32), *src = gcr_tensor_data(x32);
    TIMED(ctx, cudaMemcpyAsync(dst, src, (size_t)n * 4, cudaMemcpyDeviceToDevice, gcr_cuda_stream(ctx)));
    double copy_gbs = 2.0 * n * 4 / (ms * 1e-3) / 1e9;
    printf("eager pointwise bandwidth, [64,256,56,56], %s, mean of %d\n", gcr_ctx_device_name(ctx), ITERS);
    printf("%-28s %-4s %10s %10s %10s\n", "op", "dt", "us", "GB/s", "of copy");
    printf("%-28s %-4s %10.1f %10.1f %9.0f%%\n", "cudaMemcpy D2D", "f32", ms * 1e3, copy_gbs, 100.0);
    for (int f = 0; f < 2; f++) {
        gcr_dtype dt = f ? GCR_F16 : GCR_F32;
        const char *dn = f ? "f16" : "f32";
        double es = f ? 2 : 4;
        gcr_tensor *x = f ? gcr_cast(ctx, x32, GCR_F16) : x32, *y = f ? gcr_cast(ctx, y32, GCR_F16) : y32;
        TIMED(ctx, gcr_tensor_free(gcr_add(ctx, x, y)));
        row("add", dn, 3.0 * n * es, ms, copy_gbs);
        TIMED(ctx, gcr_tensor_free(gcr_relu(ctx, x)));
        row("relu", dn, 2.0 * n * es, ms, copy_gbs);
        TIMED(ctx, gcr_tensor_free(gcr_hardswish(ctx, x)));
        row("hardswish, 4 eager ops", dn, 2.0 * n * es, ms, copy_gbs);
        /* then the same with the division by 6 replaced by a multiply, a diagnostic of what the
         * division costs where the kernel is no longer memory-bound */
        static const char *const fused_name[2] = {"hardswish, one kernel", "  same, * (1/6) not / 6"};
        for (int mul = 0; mul < 2; mul++) {
            gcr_graph *g = fused_hardswish(ctx, x, mul);
            if (!g) {
                printf("%s: %s\n", fused_name[mul], gcr_ctx_error(ctx));
                gcr_ctx_clear_error(ctx);
                continue;
            }
            TIMED(ctx, gcr_graph_replay(g));
            row(fused_name[mul], dn, 2.0 * n * es, ms, copy_gbs);
            gcr_graph_destroy(g);
        }
        /* the N-d (broadcast / strided) paths: per-channel batch norm, an SE-style [N,C,1,1]
         * multiply, a layout change, and reductions */
        int64_t cs[1] = {SHAPE[1]}, se[4] = {SHAPE[0], SHAPE[1], 1, 1};
        float hp[64 * 256];
        for (int i = 0; i < 64 * 256; i++) hp[i] = 0.5f + (float)(i % 7) * 0.1f;
        gcr_tensor *pc32 = gcr_tensor_from_data(ctx, GCR_F32, 1, cs, GCR_NCHW, hp);
        gcr_tensor *ps32 = gcr_tensor_from_data(ctx, GCR_F32, 4, se, GCR_NCHW, hp);
        gcr_tensor *pc = gcr_cast(ctx, pc32, dt), *ps = gcr_cast(ctx, ps32, dt);
        TIMED(ctx, gcr_tensor_free(gcr_batch_norm(ctx, x, pc, pc, pc, pc, 1e-5f)));
        row("batch_norm (params [C])", dn, 2.0 * n * es, ms, copy_gbs);
        TIMED(ctx, gcr_tensor_free(gcr_mul(ctx, x, ps)));
        row("mul by [N,C,1,1]", dn, 2.0 * n * es, ms, copy_gbs);
        TIMED(ctx, gcr_tensor_free(gcr_contiguous(ctx, x, GCR_NHWC)));
        row("contiguous nchw -> nhwc", dn, 2.0 * n * es, ms, copy_gbs);
        int hw[2] = {2, 3};
        TIMED(ctx, gcr_tensor_free(gcr_mean(ctx, x, hw, 2, 1)));
        row("mean over H,W", dn, 1.0 * n * es, ms, copy_gbs);
        TIMED(ctx, gcr_tensor_free(gcr_sum(ctx, x, NULL, 0, 0)));
        row("sum of everything", dn, 1.0 * n * es, ms, copy_gbs);
        gcr_tensor_free(pc), gcr_tensor_free(ps), gcr_tensor_free(pc32), gcr_tensor_free(ps32);
        if (f) gcr_tensor_free(x), gcr_tensor_free(y);
    }
    if (gcr_ctx_status(ctx) != GCR_OK) printf("error: %s\n", gcr_ctx_error(ctx));
    gcr_ctx_destroy(ctx);
    return 0;
}
#else
int main(void)
{
    printf("pointwise_bw: built without CUDA, skipped\n");
    return 0;
}
#endif
