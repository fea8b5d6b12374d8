/* test_region.c — GCR_REGION around an existing loop body: the first pass traces, later passes
 * check and replay with the same handles; a changed input shape, scalar or branch re-traces
 * (retrace=1) or runs eagerly (retrace=0) and always gives the new pass's result; variants are
 * cached per region under the LRU cap; guards=0 skips the body; a tensor marked twice in a pass is
 * one output and does not stop the later passes replaying. */
#include "capture_util.h"

/* the "existing inference code": a branch and a host scalar that the loop may change */
static gcr_tensor *forward(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, int branch, float scale)
{
    gcr_tensor *h = gcr_linear(ctx, x, w, NULL);
    gcr_tensor *a = branch == 0 ? gcr_hardswish(ctx, h) : branch == 1 ? gcr_sigmoid(ctx, h) : gcr_tanh(ctx, h);
    gcr_tensor *s = gcr_mul_scalar(ctx, a, scale);
    int ax = -1;
    return gcr_softmax(ctx, s, ax);
}

static gcr_tensor *rand_t(gcr_ctx *ctx, int nd, const int64_t *sh)
{
    return h_rand_tensor(ctx, GCR_F32, nd, sh, GCR_NCHW, -2, 2);
}

static void expect(gcr_ctx *ctx, gcr_tensor *y, gcr_tensor *x, gcr_tensor *w, int branch, float scale, const char *what)
{
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *r = forward(ctx, x, w, branch, scale);
    CHECK(y && gcr_tensor_numel(y) == gcr_tensor_numel(r), "%s: shape", what);
    if (y && gcr_tensor_numel(y) == gcr_tensor_numel(r)) {
        float *a = h_read(y), *e = h_read(r);
        CHECK_CLOSE(a, e, gcr_tensor_numel(r), 1e-5f, 1e-5f, what);
        free(a);
        free(e);
    }
    gcr_scope_end(ctx, sc);
}

static void test_loop(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *x = rand_t(ctx, 2, (int64_t[]){3, 6}), *w = gcr_tensor_set_const(rand_t(ctx, 2, (int64_t[]){5, 6}));
    gcr_tensor *first = NULL;
    gcr_graph *g0 = NULL;
    for (int pass = 0; pass < 6; pass++) {
        cu_refill(x, 0);
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, "forward") { y = forward(ctx, x, w, 0, 2.0f); }
        CHECK(gcr_ctx_status(ctx) == GCR_OK, "pass %d: %s", pass, gcr_ctx_error(ctx));
        if (pass == 0) {
            first = y;
            g0 = gcr_region_graph(ctx, "forward");
        }
        CHECK(y == first, "pass %d returns the same handle", pass);
        CHECK(gcr_region_graph(ctx, "forward") == g0, "same graph");
        expect(ctx, y, x, w, 0, 2.0f, "region pass");
        gcr_tensor_free(y); /* region tensors: a no-op */
    }
    gcr_graph_stats st;
    OK(ctx, gcr_graph_get_stats(g0, &st));
    CHECK(st.replays == 5 && st.variants == 1, "5 replays of 1 graph (%llu, %d)", (unsigned long long)st.replays,
          st.variants);
    CHECK(st.kernels < st.ops_traced, "fused: %d kernels for %d ops", st.kernels, st.ops_traced);
    CHECK(gcr_region_graph(ctx, "nope") == NULL, "unknown region");
    gcr_ctx_destroy(ctx);
}

/* shapes, scalars and branches change between passes */
static void test_changes(void)
{
    for (int retrace = 0; retrace <= 1; retrace++) {
        gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
        gcr_tensor *w = gcr_tensor_set_const(rand_t(ctx, 2, (int64_t[]){5, 6}));
        gcr_tensor *xa = rand_t(ctx, 2, (int64_t[]){3, 6}), *xb = rand_t(ctx, 3, (int64_t[]){2, 4, 6});
        struct { gcr_tensor *x; int branch; float scale; } plan[] = {
            {xa, 0, 2.0f}, {xa, 0, 2.0f}, {xb, 0, 2.0f}, {xa, 0, 2.0f}, {xa, 1, 2.0f}, {xa, 0, 2.0f},
            {xa, 0, 0.5f}, {xa, 1, 2.0f}, {xb, 2, 1.0f}, {xa, 0, 2.0f}, {xa, 1, 2.0f}, {xb, 2, 1.0f},
        };
        gcr_graph *seen[16];
        for (int p = 0; p < 12; p++) {
            cu_refill(plan[p].x, 0);
            gcr_tensor *y = NULL;
            GCR_REGION(ctx, "fwd") { y = forward(ctx, plan[p].x, w, plan[p].branch, plan[p].scale); }
            CHECK(gcr_ctx_status(ctx) == GCR_OK, "pass %d: %s", p, gcr_ctx_error(ctx));
            char what[64];
            snprintf(what, sizeof what, "retrace %d pass %d", retrace, p);
            expect(ctx, y, plan[p].x, w, plan[p].branch, plan[p].scale, what);
            seen[p] = gcr_region_graph(ctx, "fwd");
        }
        if (retrace) {
            /* passes 9..11 repeat signatures seen before: their graphs come from the cache */
            CHECK(seen[9] == seen[0] && seen[10] == seen[7] && seen[11] == seen[8], "cached variants reused");
            CHECK(seen[2] != seen[0] && seen[4] != seen[0] && seen[6] != seen[0], "changes gave new graphs");
        } else {
            CHECK(seen[2] == NULL && seen[4] == NULL, "retrace=0: changed passes run eagerly");
        }
        gcr_ctx_destroy(ctx);
    }
}

static void test_lru_cap(void)
{
    gcr_ctx *ctx = cu_ctx(1, 2, 1);
    gcr_tensor *w = gcr_tensor_set_const(rand_t(ctx, 2, (int64_t[]){5, 6}));
    gcr_tensor *x = rand_t(ctx, 2, (int64_t[]){3, 6});
    for (int p = 0; p < 9; p++) {
        cu_refill(x, 0);
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, "lru") { y = forward(ctx, x, w, p % 3, 1.0f); }
        expect(ctx, y, x, w, p % 3, 1.0f, "3 branches through a cache of 2");
    }
    gcr_ctx_destroy(ctx);
}

static void test_guards_off(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 0);
    gcr_tensor *w = gcr_tensor_set_const(rand_t(ctx, 2, (int64_t[]){5, 6}));
    gcr_tensor *x = rand_t(ctx, 2, (int64_t[]){3, 6});
    gcr_tensor *y = NULL;
    int bodies = 0;
    for (int p = 0; p < 4; p++) {
        cu_refill(x, 0);
        GCR_REGION(ctx, "fast") { y = forward(ctx, x, w, 0, 1.0f); bodies++; }
        expect(ctx, y, x, w, 0, 1.0f, "guards=0 replays the last graph on new data");
    }
    CHECK(bodies == 1, "guards=0 runs the body once (%d)", bodies);
    gcr_ctx_destroy(ctx);
}

/* several outputs, one marked (twice, as two helpers each marking it might: still one output, and
 * the later identical passes replay the first pass's graph) while also feeding a later op */
static void test_outputs(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *x = rand_t(ctx, 2, (int64_t[]){4, 5});
    for (int p = 0; p < 3; p++) {
        cu_refill(x, 0);
        gcr_tensor *a = NULL, *b = NULL;
        GCR_REGION(ctx, "two")
        {
            a = gcr_exp(ctx, x);
            gcr_graph_output(ctx, a);
            gcr_graph_output(ctx, a);
            b = gcr_add_scalar(ctx, a, 1.0f);
        }
        float *pa = h_read(a), *pb = h_read(b), *px = h_read(x);
        for (int i = 0; i < 20; i++) {
            CHECK(fabsf(pa[i] - expf(px[i])) <= 1e-5f * expf(px[i]), "a[%d] pass %d", i, p);
            CHECK(fabsf(pb[i] - pa[i] - 1) <= 1e-5f * pb[i], "b[%d] pass %d", i, p);
        }
        free(pa);
        free(pb);
        free(px);
    }
    gcr_graph_stats st;
    gcr_graph *g = gcr_region_graph(ctx, "two");
    OK(ctx, gcr_graph_get_stats(g, &st));
    CHECK(st.replays == 2 && gcr_graph_num_outputs(g) == 2, "2 replays (%llu), 2 outputs (%d)", (unsigned long long)st.replays,
          gcr_graph_num_outputs(g));
    gcr_ctx_destroy(ctx);
}

/* random sequences of inputs (two shapes, two tensors of one shape), branches and scalars
 * through small and larger caches, both retrace settings: every pass equals eager */
static void test_stress(void)
{
    for (int retrace = 0; retrace <= 1; retrace++)
        for (int cache = 1; cache <= 4; cache += 3) {
            gcr_ctx *ctx = cu_ctx(retrace, cache, 1);
            gcr_tensor *w = gcr_tensor_set_const(rand_t(ctx, 2, (int64_t[]){5, 6}));
            gcr_tensor *xs[3] = {rand_t(ctx, 2, (int64_t[]){3, 6}), rand_t(ctx, 2, (int64_t[]){3, 6}),
                                 rand_t(ctx, 3, (int64_t[]){2, 2, 6})};
            uint64_t r = 12345;
            for (int p = 0; p < 60; p++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                gcr_tensor *x = xs[(r >> 33) % 3];
                int branch = (int)((r >> 40) % 3);
                float scale = (r >> 50) % 2 ? 1.0f : -0.5f;
                cu_refill(x, 0);
                gcr_tensor *y = NULL;
                GCR_REGION(ctx, "stress") { y = forward(ctx, x, w, branch, scale); }
                char what[64];
                snprintf(what, sizeof what, "retrace %d cache %d pass %d", retrace, cache, p);
                CHECK(gcr_ctx_status(ctx) == GCR_OK, "%s: %s", what, gcr_ctx_error(ctx));
                expect(ctx, y, x, w, branch, scale, what);
            }
            gcr_ctx_destroy(ctx);
        }
}

static void all(void)
{
    RUN(test_loop);
    RUN(test_changes);
    RUN(test_lru_cap);
    RUN(test_guards_off);
    RUN(test_outputs);
    RUN(test_stress);
}

int main(void)
{
    h_seed(5);
    cu_each_device(all);
    return h_finish();
}
