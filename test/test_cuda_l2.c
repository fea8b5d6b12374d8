/* test_cuda_l2.c — GCR_L2_PERSIST on a GPU (skips without one): a variant built with it packs the
 * constants its kernels read into one buffer and its CUDA Graph's kernel nodes carry an L2
 * access-policy window over them, on devices with L2 persistence.
 * - Every model of fused_models.h (f32, f16; NCHW, NHWC; fused and unfused) and a long chain
 *   behind a slow conv give the same bytes with the knob on and off, replayed on fresh inputs
 *   and eagerly.
 * - The packed copy is what the graph reads: a later write into a constant tensor does not reach
 *   the graph with the knob on (gcr_tensor_set_const allows either), while the graph still follows
 *   its ordinary inputs; the kernel nodes are windowed, and none are with the knob off. */
#include "knob_compare.h"
#include "../replay/graph.h"
#include "cuda/graph_patch.h"

static gcr_ctx *l2_ctx(int on, int fusion)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.l2_persist = on;
    o.knobs.fusion = fusion;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return NULL;
    return ctx;
}

static void test_bit_identical(void) { kc_all_models(l2_ctx); }

/* y = x @ w^T + b with w, b constant; returns the replayed y[0] after w is rewritten */
static void test_packed_and_windowed(void)
{
    for (int on = 1; on >= 0; on--) {
        gcr_ctx *ctx = l2_ctx(on, 1);
        if (!ctx) {
            h_skip_gpu("no CUDA device");
            return;
        }
        const int64_t xs[2] = {3, 40}, ws[2] = {24, 40}, bs[1] = {24};
        gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, xs, GCR_NCHW, -1, 1);
        gcr_tensor *w = gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 2, ws, GCR_NCHW, -1, 1));
        gcr_tensor *b = gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 1, bs, GCR_NCHW, -1, 1));
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = gcr_relu(ctx, gcr_linear(ctx, x, w, b));
        OK(ctx, gcr_capture_end(ctx, &g));
        if (!CHECK(g && y, "capture: %s", gcr_ctx_error(ctx))) {
            gcr_ctx_destroy(ctx);
            return;
        }
        for (int r = 0; r < 3; r++) OK(ctx, gcr_graph_replay(g)); /* plain first run, then the graph */
        float *before = h_read(y);
        /* the constant rewritten: the packed copy keeps the old weights */
        float *hw = h_randn(24 * 40, -1, 1);
        OK(ctx, gcr_tensor_from_host(w, hw, sizeof(float) * 24 * 40));
        OK(ctx, gcr_graph_replay(g));
        float *after = h_read(y);
        if (on) CHECK(!memcmp(before, after, sizeof(float) * 3 * 24), "l2_persist: a write into w reached the graph");
        else CHECK(memcmp(before, after, sizeof(float) * 3 * 24), "in place: the graph did not see the write into w");
        /* an ordinary input still moves the result */
        float *hx = h_randn(3 * 40, -1, 1);
        OK(ctx, gcr_tensor_from_host(x, hx, sizeof(float) * 3 * 40));
        OK(ctx, gcr_graph_replay(g));
        float *moved = h_read(y);
        CHECK(memcmp(after, moved, sizeof(float) * 3 * 24), "l2_persist=%d: a new input did not change the result", on);
        gcr_cuda_graph_stats st;
        gcr_cuda_exec_stats(g->cur ? g->cur->ex : NULL, g->cur ? &g->cur->job : NULL, &st);
        int dev_persist = 0;
        cudaDeviceGetAttribute(&dev_persist, cudaDevAttrMaxPersistingL2CacheSize, 0);
        if (on && dev_persist > 0) CHECK(st.windowed > 0, "l2_persist: no kernel node has the window");
        if (!on) CHECK(st.windowed == 0, "in place: %d kernel nodes have a window", st.windowed);
        CHECK(on ? g->cur && g->cur->consts != NULL : g->cur && g->cur->consts == NULL, "l2_persist=%d: packed constants", on);
        free(before);
        free(after);
        free(moved);
        free(hw);
        free(hx);
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

int main(void)
{
    h_seed(20261126);
    RUN(test_packed_and_windowed);
    RUN(test_bit_identical);
    return h_finish();
}
