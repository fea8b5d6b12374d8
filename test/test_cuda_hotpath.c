/* test_cuda_hotpath.c — the hot path finds its kernels by keys computed once: after a warm-up,
 * repeated eager launches (dense, depthwise and stem-like convs, matmul, linear, max / average /
 * global pooling, pointwise, reduction, layout copy) and repeated replays without a CUDA Graph of a
 * graph whose conv and matmul run with fused epilogues (hooked launches) hash no program text,
 * compile nothing and load nothing (the module cache's counters, gcr_cuda_cache_get_stats), and the
 * results stay right. Skips without a GPU. */
#include "harness.h"
#include "cuda/cuda_ops.h"

#define REPS 20

static gcr_ctx *cuda_ctx(int graphs)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.graphs = graphs;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) {
        h_skip_gpu("no CUDA device");
        return NULL;
    }
    return ctx;
}

typedef struct inputs {
    gcr_tensor *x, *xh, *w, *wd, *ws, *a, *b, *lw;
} inputs;

static inputs make_inputs(gcr_ctx *ctx, gcr_dtype dt)
{
    const int64_t xs[4] = {2, 8, 15, 17}, ws[4] = {16, 8, 3, 3}, wds[4] = {8, 1, 3, 3}, wss[4] = {4, 3, 3, 3};
    const int64_t as[2] = {5, 24}, bs[2] = {24, 12}, lws[2] = {7, 24};
    inputs in = {h_rand_tensor(ctx, dt, 4, xs, GCR_NCHW, -1, 1), h_rand_tensor(ctx, dt, 4, xs, GCR_NHWC, -1, 1),
                 h_rand_tensor(ctx, dt, 4, ws, GCR_NCHW, -1, 1), h_rand_tensor(ctx, dt, 4, wds, GCR_NCHW, -1, 1),
                 h_rand_tensor(ctx, dt, 4, wss, GCR_NCHW, -1, 1), h_rand_tensor(ctx, dt, 2, as, GCR_NCHW, -1, 1),
                 h_rand_tensor(ctx, dt, 2, bs, GCR_NCHW, -1, 1), h_rand_tensor(ctx, dt, 2, lws, GCR_NCHW, -1, 1)};
    return in;
}

static void free_inputs(inputs *in)
{
    gcr_tensor *t[] = {in->x, in->xh, in->w, in->wd, in->ws, in->a, in->b, in->lw};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) gcr_tensor_free(t[i]);
}

/* every eager family once, on both layouts; the outputs are freed */
static void eager_pass(gcr_ctx *ctx, const inputs *in)
{
    uint64_t s = gcr_scope_begin(ctx);
    gcr_conv2d_params p = gcr_conv2d_default(), dw = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    dw.padding[0] = dw.padding[1] = 1;
    dw.groups = 8;
    gcr_pool2d_params mp = gcr_pool2d_default(2), ap = gcr_pool2d_default(3);
    ap.stride[0] = ap.stride[1] = 1;
    gcr_tensor *xs3 = gcr_slice(ctx, in->x, 1, 0, 3, 1); /* 3 channels: the stem's shape */
    gcr_tensor *xs3h = gcr_slice(ctx, in->xh, 1, 0, 3, 1);
    gcr_tensor *x[2] = {in->x, in->xh}, *x3[2] = {xs3, xs3h};
    for (int f = 0; f < 2; f++) {
        gcr_conv2d(ctx, x[f], in->w, NULL, &p);
        gcr_conv2d(ctx, x[f], in->wd, NULL, &dw);
        gcr_conv2d(ctx, x3[f], in->ws, NULL, &p);
        gcr_max_pool2d(ctx, x[f], &mp);
        gcr_avg_pool2d(ctx, x[f], &ap);
        gcr_adaptive_avg_pool2d(ctx, x[f], 1, 1);
        gcr_relu(ctx, x[f]);
        int hw[2] = {2, 3};
        gcr_mean(ctx, x[f], hw, 2, 1);
    }
    gcr_contiguous(ctx, in->x, GCR_NHWC);
    gcr_matmul(ctx, in->a, in->b);
    gcr_linear(ctx, in->a, in->lw, NULL);
    gcr_scope_end(ctx, s);
}

static int same_counts(const gcr_cuda_cache_stats *a, const gcr_cuda_cache_stats *b)
{
    return a->hashes == b->hashes && a->compiles == b->compiles && a->disk_hits == b->disk_hits;
}

static void test_eager(void)
{
    gcr_ctx *ctx = cuda_ctx(1);
    if (!ctx) return;
    static const gcr_dtype dts[3] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int d = 0; d < 3; d++) {
        inputs in = make_inputs(ctx, dts[d]);
        for (int i = 0; i < 2; i++) eager_pass(ctx, &in); /* compiles and caches what the pass needs */
        CHECK_OK(ctx, gcr_ctx_status(ctx));
        gcr_cuda_cache_stats s0, s1;
        gcr_cuda_cache_get_stats(ctx, &s0);
        for (int r = 0; r < REPS; r++) eager_pass(ctx, &in);
        CHECK_OK(ctx, gcr_ctx_status(ctx));
        CHECK_OK(ctx, gcr_ctx_sync(ctx));
        gcr_cuda_cache_get_stats(ctx, &s1);
        CHECK(same_counts(&s0, &s1), "%s: %d eager passes hashed %d program texts, compiled %d, loaded %d from disk",
              gcr_dtype_name(dts[d]), REPS, s1.hashes - s0.hashes, s1.compiles - s0.compiles, s1.disk_hits - s0.disk_hits);
        /* conv, pool and matmul launches find their program in the memory cache by its kept key */
        CHECK(s1.mem_hits - s0.mem_hits >= REPS * 10, "%s: %d memory hits", gcr_dtype_name(dts[d]), s1.mem_hits - s0.mem_hits);
        free_inputs(&in);
    }
    gcr_ctx_destroy(ctx);
}

/* conv + bias-free relu epilogue, then a matmul with an add epilogue: hooked launches on replay */
static gcr_tensor *forward(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *a, gcr_tensor *b, gcr_tensor **mm)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    *mm = gcr_add_scalar(ctx, gcr_matmul(ctx, a, b), 0.5f);
    return gcr_relu(ctx, gcr_conv2d(ctx, x, w, NULL, &p));
}

static void test_replay_without_graph(void)
{
    gcr_ctx *ctx = cuda_ctx(0);
    if (!ctx) return;
    inputs in = make_inputs(ctx, GCR_F32);
    gcr_tensor *y = NULL, *mm = NULL;
    gcr_cuda_cache_stats s0, s1;
    for (int it = 0; it < REPS + 3; it++) {
        if (it == 3) gcr_cuda_cache_get_stats(ctx, &s0); /* traced, built and replayed by now */
        GCR_REGION(ctx, "hot") { y = forward(ctx, in.x, in.w, in.a, in.b, &mm); }
    }
    CHECK_OK(ctx, gcr_ctx_status(ctx));
    CHECK_OK(ctx, gcr_ctx_sync(ctx));
    gcr_cuda_cache_get_stats(ctx, &s1);
    CHECK(same_counts(&s0, &s1), "%d replays hashed %d program texts, compiled %d, loaded %d from disk", REPS,
          s1.hashes - s0.hashes, s1.compiles - s0.compiles, s1.disk_hits - s0.disk_hits);
    gcr_graph_stats gs;
    if (CHECK_OK(ctx, gcr_graph_get_stats(gcr_region_graph(ctx, "hot"), &gs)))
        CHECK(gs.kernels < gs.ops_traced, "the epilogues fused: %d kernels for %d ops", gs.kernels, gs.ops_traced);
    /* the replayed results against eager ones */
    gcr_tensor *my = NULL, *ry = forward(ctx, in.x, in.w, in.a, in.b, &my);
    float *g1 = h_read(y), *r1 = h_read(ry), *g2 = h_read(mm), *r2 = h_read(my);
    CHECK_CLOSE(g1, r1, gcr_tensor_numel(ry), 1e-5f, 1e-5f, "conv + relu");
    CHECK_CLOSE(g2, r2, gcr_tensor_numel(my), 1e-5f, 1e-5f, "matmul + add");
    free(g1), free(r1), free(g2), free(r2);
    free_inputs(&in);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    h_seed(20261125);
    RUN(test_eager);
    RUN(test_replay_without_graph);
    return h_finish();
}
