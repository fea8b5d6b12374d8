/* bind_replay.c — what rebinding a graph's inputs costs on the GPU: a small conv block (dense conv
 * + hardswish, multiply by a second input, depthwise conv, residual add, max pool, mean, linear)
 * at batch 1, captured once, then timed with CUDA events as replay alone against bind + replay
 * (both inputs bound to another pair of tensors before every replay, so each replay patches the
 * new addresses into the CUDA Graph's kernel nodes), fused and unfused (every op a library
 * kernel). Prints a table with the graph's upkeep: captures, patched rebinds, re-captures and the
 * kernel nodes one patch touches. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

#if GCR_HAVE_CUDA
#include "../replay/graph.h"
#include "cuda/graph_patch.h"

#define ITERS 2000
#define WARM 50

static gcr_tensor *rand_tensor(gcr_ctx *ctx, int nd, const int64_t *shape, float scale, unsigned seed)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= shape[d];
    float *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; h && i < n; i++) h[i] = scale * (float)((i * 7919 + seed * 104729) % 2001 - 1000) / 1000.0f;
    gcr_tensor *t = h ? gcr_tensor_from_data(ctx, GCR_F32, nd, shape, GCR_NCHW, h) : NULL;
    free(h);
    return gcr_tensor_keep(t);
}

/* microseconds per iteration of ITERS iterations, binding pair (i % 2) first when bind */
static double timed(gcr_ctx *ctx, gcr_graph *g, gcr_tensor *const *xs, gcr_tensor *const *ys, int bind, int iters)
{
    bench_timer t;
    bench_timer_start(&t, gcr_cuda_stream(ctx));
    for (int i = 0; i < iters; i++) {
        if (bind) {
            gcr_graph_bind_input(g, 0, xs[i % 2]);
            gcr_graph_bind_input(g, 1, ys[i % 2]);
        }
        if (gcr_graph_replay(g) != GCR_OK) break;
    }
    return 1e3 * bench_timer_ms(&t) / iters;
}

static int run(int fusion)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, fusion);
    if (!ctx) return 1;
    int64_t sx[4] = {1, 32, 28, 28}, sw[4] = {32, 32, 3, 3}, sd[4] = {32, 1, 3, 3}, sf[2] = {16, 32}, s32 = 32, s16 = 16;
    gcr_tensor *w = gcr_tensor_set_const(rand_tensor(ctx, 4, sw, 0.1f, 1)), *b = gcr_tensor_set_const(rand_tensor(ctx, 1, &s32, 0.1f, 2));
    gcr_tensor *wd = gcr_tensor_set_const(rand_tensor(ctx, 4, sd, 0.3f, 3)), *fw = gcr_tensor_set_const(rand_tensor(ctx, 2, sf, 0.2f, 4));
    gcr_tensor *fb = gcr_tensor_set_const(rand_tensor(ctx, 1, &s16, 0.1f, 5));
    gcr_tensor *xs[2] = {rand_tensor(ctx, 4, sx, 2.0f, 6), rand_tensor(ctx, 4, sx, 2.0f, 7)};
    gcr_tensor *ys[2] = {rand_tensor(ctx, 4, sx, 1.0f, 8), rand_tensor(ctx, 4, sx, 1.0f, 9)};
    gcr_conv2d_params cp = {{1, 1}, {1, 1}, {1, 1}, 1}, dp = {{1, 1}, {1, 1}, {1, 1}, 32};
    gcr_pool2d_params pp = {{2, 2}, {0, 0}, {0, 0}, {1, 1}, 0, 0};
    int hw[2] = {2, 3};
    gcr_graph *g = NULL;
    gcr_capture_begin(ctx);
    gcr_tensor *a = gcr_mul(ctx, gcr_hardswish(ctx, gcr_conv2d(ctx, xs[0], w, b, &cp)), ys[0]);
    gcr_tensor *d = gcr_conv2d(ctx, a, wd, NULL, &dp);
    gcr_graph_output(ctx, gcr_add(ctx, d, xs[0]));
    gcr_graph_output(ctx, gcr_linear(ctx, gcr_mean(ctx, gcr_max_pool2d(ctx, d, &pp), hw, 2, 0), fw, fb));
    if (gcr_capture_end(ctx, &g) != GCR_OK) {
        fprintf(stderr, "bind_replay: capture: %s\n", gcr_ctx_error(ctx));
        gcr_ctx_destroy(ctx);
        return 1;
    }
    timed(ctx, g, xs, ys, 1, WARM); /* captures the CUDA Graph and loads everything */
    double plain = timed(ctx, g, xs, ys, 0, ITERS);
    double bound = timed(ctx, g, xs, ys, 1, ITERS);
    double plain2 = timed(ctx, g, xs, ys, 0, ITERS);
    gcr_graph_stats gs;
    gcr_graph_get_stats(g, &gs);
    gcr_cuda_graph_stats st;
    gcr_cuda_exec_stats(g->cur ? g->cur->ex : NULL, g->cur ? &g->cur->job : NULL, &st);
    double alone = plain < plain2 ? plain : plain2;
    printf("| %-7s | %7d | %10.2f | %12.2f | %+9.2f | %8d | %7d | %10d | %5d | %s\n", fusion ? "fused" : "unfused",
           gs.kernels, alone, bound, bound - alone, st.captures, st.patched, st.recaptured, st.nodes,
           gcr_ctx_status(ctx) ? gcr_ctx_error(ctx) : st.why ? st.why : "");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
    return 0;
}

int main(void)
{
    gcr_ctx *probe = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!probe) {
        printf("bind_replay: no CUDA device, skipped\n");
        return 0;
    }
    printf("device: %s; %d iterations each, us per iteration (CUDA events)\n", gcr_ctx_device_name(probe), ITERS);
    gcr_ctx_destroy(probe);
    printf("| graph   | kernels | replay, us | bind+replay, us | bind cost | captures | patched | recaptured | nodes | note\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    return run(1) | run(0);
}
#else
int main(void)
{
    printf("bind_replay: a build without CUDA, skipped\n");
    return 0;
}
#endif
