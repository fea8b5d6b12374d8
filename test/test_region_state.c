/* test_region_state.c — what a region's tensors hold between passes, and what a region keeps:
 * host writes inside a body that would reach ops recorded before them are refused; a tensor the
 * last pass did not output (an intermediate now, another branch, another input signature) fails
 * to read instead of giving an earlier pass's data; a region output fed back as the next pass's
 * input (recurrent state) gives eager's results with any cache size, also through a view of it;
 * an eager view of a result outlives the result's variant; a tensor of an evicted variant fails
 * to read; the handles a region keeps stay bounded whatever the input pattern; a
 * pass whose graph cannot be built fails loudly and leaves the region usable; a region's graph
 * cannot be destroyed by the user. */
#include "capture_util.h"
#include "../replay/graph.h"

/* huge requests must come back as NULL under AddressSanitizer too, as they do in plain builds
 * (the sanitizer's runtime looks this up: it must be visible) */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static gcr_tensor *vec(gcr_ctx *ctx, const float *v, int64_t n)
{
    return gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){n}, GCR_NCHW, v);
}

/* reads t into got (n floats); returns the status */
static gcr_status read_n(gcr_tensor *t, float *got, int64_t n)
{
    return gcr_tensor_to_host(t, got, (size_t)n * sizeof *got);
}

/* 2. A write into a tensor that the pass has already read would not be seen by the ops before
 * it (the graph reads its inputs when it runs): refused, on the capture pass and on checked
 * passes. A write before any op reads the tensor is fine. */
static void test_host_write_in_body(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[4] = {-1, 2, -3, 4}, b[4] = {0.5f, -0.25f, 1.5f, -2}, got[4];
    gcr_tensor *stage = vec(ctx, a, 4);
    for (int pass = 0; pass < 3; pass++) {
        gcr_tensor *ya = NULL, *yb = NULL;
        gcr_status w1 = GCR_OK, w2 = GCR_OK;
        GCR_REGION(ctx, "stage")
        {
            w1 = gcr_tensor_from_host(stage, a, sizeof a);
            ya = gcr_relu(ctx, stage);
            w2 = gcr_tensor_from_host(stage, b, sizeof b);
            yb = gcr_exp(ctx, stage);
        }
        CHECK(w1 == GCR_OK, "pass %d: a write before any read is accepted", pass);
        CHECK(w2 == GCR_ERR_CAPTURE, "pass %d: a write after relu read the tensor is refused: %s", pass,
              gcr_status_name(w2));
        CHECK(strstr(gcr_ctx_error(ctx), "tensor_from_host") && strstr(gcr_ctx_error(ctx), "already read"),
              "pass %d: the message says why: %s", pass, gcr_ctx_error(ctx));
        CHECK(read_n(ya, got, 4) != GCR_OK || got[0] != 0 || got[1] != 2, "pass %d: ya is not relu(b)", pass);
        (void)yb;
        gcr_ctx_clear_error(ctx);
    }
    /* the documented use: write before the region; a write inside the body before the read is
     * the same */
    for (int pass = 0; pass < 4; pass++) {
        float in[4];
        for (int i = 0; i < 4; i++) in[i] = (float)(pass + 1) * (i % 2 ? 1.0f : -1.0f);
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, "write first")
        {
            OK(ctx, gcr_tensor_from_host(stage, in, sizeof in));
            y = gcr_relu(ctx, stage);
        }
        OK(ctx, gcr_ctx_status(ctx));
        OK(ctx, read_n(y, got, 4));
        CHECK(got[0] == 0 && got[1] == in[1] && got[3] == in[3], "pass %d: relu of this pass's write", pass);
    }
    /* an explicit capture: the same rule */
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *c = gcr_neg(ctx, stage);
    gcr_status s = gcr_tensor_from_host(stage, b, sizeof b);
    CHECK(s == GCR_ERR_CAPTURE, "capture: a write after a read is refused: %s", gcr_status_name(s));
    gcr_ctx_clear_error(ctx);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(c != NULL, "traced");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* Reading a region's tensor inside its body would give the previous pass's data: refused. */
static void test_read_in_body(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[3] = {1, 2, 3}, got[3];
    gcr_tensor *x = vec(ctx, a, 3);
    for (int pass = 0; pass < 3; pass++) {
        gcr_status r = GCR_OK;
        GCR_REGION(ctx, "peek")
        {
            gcr_tensor *y = gcr_exp(ctx, x);
            r = read_n(y, got, 3);
        }
        CHECK(r == GCR_ERR_CAPTURE, "pass %d: reading a result inside the body fails: %s", pass, gcr_status_name(r));
        gcr_ctx_clear_error(ctx);
    }
    gcr_ctx_destroy(ctx);
}

/* 3. A tensor that is not an output of the pass that ran last holds no data. */
static void test_stale_body_tensor(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[4] = {0.5f, -1, 2, -0.25f}, got[4];
    gcr_tensor *x = vec(ctx, a, 4);
    gcr_tensor *y1 = NULL, *y2 = NULL, *z = NULL;
    /* pass 0: y is the sink; pass 1: the same y feeds relu, so it is an intermediate */
    GCR_REGION(ctx, "grow") { y1 = gcr_exp(ctx, x); }
    OK(ctx, read_n(y1, got, 4));
    CHECK(fabsf(got[2] - expf(2)) < 1e-5f, "pass 0: y holds exp(x)");
    float a2[4] = {3, 1, -2, 1};
    OK(ctx, gcr_tensor_from_host(x, a2, sizeof a2));
    GCR_REGION(ctx, "grow") { y2 = gcr_exp(ctx, x); z = gcr_relu(ctx, gcr_add_scalar(ctx, y2, -2.0f)); }
    OK(ctx, gcr_ctx_status(ctx));
    CHECK(y2 == y1, "the matched op returns the same handle");
    gcr_status s = read_n(y2, got, 4);
    CHECK(s == GCR_ERR_CAPTURE, "pass 1: y is an intermediate now; reading it fails: %s (got %g, exp(3) is %g)",
          gcr_status_name(s), got[0], expf(3));
    CHECK(strstr(gcr_ctx_error(ctx), "grow") && strstr(gcr_ctx_error(ctx), "output"),
          "the message names the region and says why: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    OK(ctx, read_n(z, got, 4));
    CHECK(fabsf(got[0] - (expf(3) - 2)) < 1e-4f, "z holds this pass's result");

    /* a branch taken on pass 0 made t; pass 1 takes the other branch */
    gcr_tensor *t = NULL, *u = NULL;
    for (int pass = 0; pass < 2; pass++) {
        GCR_REGION(ctx, "branch")
        {
            gcr_tensor *h = gcr_mul_scalar(ctx, x, 0.5f);
            if (pass == 0) t = gcr_sigmoid(ctx, h);
            else u = gcr_tanh(ctx, h);
        }
        OK(ctx, gcr_ctx_status(ctx));
    }
    s = read_n(t, got, 4);
    CHECK(s == GCR_ERR_CAPTURE, "pass 0's branch result after pass 1 took the other branch: %s", gcr_status_name(s));
    gcr_ctx_clear_error(ctx);
    OK(ctx, read_n(u, got, 4));
    CHECK(fabsf(got[0] - tanhf(1.5f)) < 1e-5f, "the other branch's result is current");
    /* back to the first branch: t is an output again and holds this pass's data */
    float a3[4] = {-4, 0, 1, 2};
    OK(ctx, gcr_tensor_from_host(x, a3, sizeof a3));
    gcr_tensor *t2 = NULL;
    GCR_REGION(ctx, "branch") { t2 = gcr_sigmoid(ctx, gcr_mul_scalar(ctx, x, 0.5f)); }
    CHECK(t2 == t, "the cached variant returns its handle");
    OK(ctx, read_n(t2, got, 4));
    CHECK(fabsf(got[0] - 1 / (1 + expf(2))) < 1e-5f, "t holds the new pass's result");
    s = read_n(u, got, 4);
    CHECK(s == GCR_ERR_CAPTURE, "and the other branch's tensor no longer reads: %s", gcr_status_name(s));
    gcr_ctx_clear_error(ctx);
    gcr_ctx_destroy(ctx);
}

/* 4. Recurrent state: the region's output is the next pass's input; every pass equals eager,
 * with a cache of 1 (the previous variant, whose output is read, is evicted by the pass) and 3. */
static void test_recurrent_state(void)
{
    for (int cache = 1; cache <= 3; cache += 2)
        for (int retrace = 0; retrace <= 1; retrace++) {
            gcr_ctx *ctx = cu_ctx(retrace, cache, 1);
            float wv[16], xv[4], h0[4];
            h_fill(wv, 16, -1, 1);
            h_fill(xv, 4, -1, 1);
            h_fill(h0, 4, -1, 1);
            gcr_tensor *w = gcr_tensor_set_const(gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){4, 4}, GCR_NCHW, wv));
            gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 4}, GCR_NCHW, xv);
            gcr_tensor *h = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 4}, GCR_NCHW, h0);
            gcr_tensor *ref = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 4}, GCR_NCHW, h0);
            for (int pass = 0; pass < 6; pass++) {
                GCR_REGION(ctx, "rnn") { h = gcr_tanh(ctx, gcr_add(ctx, gcr_linear(ctx, h, w, NULL), x)); }
                CHECK(gcr_ctx_status(ctx) == GCR_OK, "cache %d retrace %d pass %d: %s", cache, retrace, pass,
                      gcr_ctx_error(ctx));
                ref = gcr_tanh(ctx, gcr_add(ctx, gcr_linear(ctx, ref, w, NULL), x));
                float got[4], want[4];
                OK(ctx, read_n(h, got, 4));
                OK(ctx, read_n(ref, want, 4));
                char what[64];
                snprintf(what, sizeof what, "cache %d retrace %d pass %d", cache, retrace, pass);
                CHECK_CLOSE(got, want, 4, 1e-5f, 1e-5f, what);
            }
            gcr_ctx_destroy(ctx);
        }
}

/* A result that is a view of the fed-back state (the previous pass's output), with a cache of 1,
 * and an eager view of an output whose variant is then evicted: both keep their data. */
static void test_views_outlive_variants(void)
{
    gcr_ctx *ctx = cu_ctx(1, 1, 1);
    float h0[4] = {0.5f, -1, 2, -0.25f}, want[4], got[4];
    gcr_tensor *h = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 4}, GCR_NCHW, h0);
    memcpy(want, h0, sizeof want);
    for (int pass = 0; pass < 4; pass++) {
        gcr_tensor *v = NULL;
        GCR_REGION(ctx, "state view")
        {
            v = gcr_reshape(ctx, h, 1, (int64_t[]){-1});
            h = gcr_tanh(ctx, h);
        }
        OK(ctx, gcr_ctx_status(ctx));
        OK(ctx, read_n(v, got, 4));
        CHECK_CLOSE(got, want, 4, 1e-6f, 1e-6f, "the view holds this pass's input state");
        for (int i = 0; i < 4; i++) want[i] = tanhf(want[i]);
    }
    /* an eager view of a result; the next pass's new shape evicts that result's variant */
    float a[3] = {1, 2, 3};
    gcr_tensor *x = vec(ctx, a, 3), *y = NULL;
    GCR_REGION(ctx, "evicted") { y = gcr_exp(ctx, x); }
    gcr_tensor *view = gcr_reshape(ctx, y, 2, (int64_t[]){1, 3});
    gcr_tensor *x2 = vec(ctx, a, 2);
    GCR_REGION(ctx, "evicted") { y = gcr_exp(ctx, x2); }
    OK(ctx, gcr_ctx_status(ctx));
    OK(ctx, read_n(view, got, 3));
    CHECK(fabsf(got[2] - expf(3)) < 1e-4f, "the eager view keeps the evicted output's data: %g", got[2]);
    gcr_ctx_destroy(ctx);
}

/* 5. Twelve input shapes through the default cache of 8: the first pass's output, whose variant
 * was evicted, fails to read (it neither reads freed memory nor gives old data). */
static void test_handle_after_eviction(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *first = NULL, *y = NULL;
    for (int k = 0; k < 12; k++) {
        gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){k + 1, 5}, GCR_NCHW, -2, 2);
        GCR_REGION(ctx, "shapes") { y = gcr_sigmoid(ctx, gcr_mul_scalar(ctx, x, 3.0f)); }
        OK(ctx, gcr_ctx_status(ctx));
        if (k == 0) first = y;
    }
    float got[5];
    gcr_status s = read_n(first, got, 5);
    CHECK(s == GCR_ERR_CAPTURE, "reading an evicted variant's output: %s", gcr_status_name(s));
    CHECK(strstr(gcr_ctx_error(ctx), "shapes") && strstr(gcr_ctx_error(ctx), "evicted"),
          "the message names the region and the eviction: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    float last[60];
    OK(ctx, read_n(y, last, 60));
    gcr_ctx_destroy(ctx);
}

/* 12. Nine input shapes cycled through a cache of 8 re-trace on every pass, as do nine branches,
 * recurrent state and a new input tensor on every pass (freed after it); what the region keeps
 * (variants, and the tensor handles of its traces) must not grow with the number of passes. */
static void test_bounded(void)
{
    for (int pattern = 0; pattern < 4; pattern++) {
        gcr_ctx *ctx = cu_ctx(1, 8, 1);
        gcr_tensor *xs[9];
        for (int k = 0; k < 9; k++) xs[k] = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){k + 1, 3}, GCR_NCHW, -1, 1);
        gcr_tensor *h = xs[0];
        int at100 = -1, most = 0;
        for (int pass = 0; pass < 300; pass++) {
            uint64_t sc = gcr_scope_begin(ctx);
            gcr_tensor *y = NULL;
            if (pattern == 0) { /* nine shapes in turn */
                GCR_REGION(ctx, "cycle") { y = gcr_exp(ctx, gcr_relu(ctx, xs[pass % 9])); }
            } else if (pattern == 1) { /* nine branches in turn */
                GCR_REGION(ctx, "cycle")
                {
                    y = xs[0];
                    for (int i = 0; i <= pass % 9; i++) y = gcr_add_scalar(ctx, y, 1.0f);
                }
            } else if (pattern == 2) { /* recurrent state: a new input handle every pass */
                GCR_REGION(ctx, "cycle") { h = y = gcr_tanh(ctx, gcr_add_scalar(ctx, h, 0.25f)); }
            } else { /* a new input tensor every pass, freed after it (the scope's end) */
                gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){pass % 4 + 1, 3}, GCR_NCHW, -1, 1);
                GCR_REGION(ctx, "cycle") { y = gcr_exp(ctx, x); }
            }
            CHECK(gcr_ctx_status(ctx) == GCR_OK, "pattern %d pass %d: %s", pattern, pass, gcr_ctx_error(ctx));
            gcr_scope_end(ctx, sc);
            int n = gcr_region_handle_count(ctx, "cycle");
            if (n > most) most = n;
            if (pass == 100) at100 = n;
            if (pass > 100 && n > at100 + 40) break; /* one report is enough */
        }
        CHECK(most <= 2 * 8 * 10 + 10, "pattern %d: the region keeps at most %d handles", pattern, most);
        CHECK(gcr_region_handle_count(ctx, "cycle") <= at100 + 40, "pattern %d: handles after 300 passes %d, after 100 %d",
              pattern, gcr_region_handle_count(ctx, "cycle"), at100);
        gcr_ctx_destroy(ctx);
    }
}

/* A pass whose graph cannot be built (its output would need 256 TiB) fails loudly; the next
 * passes fail the same way without a crash, and a body that fits then works. */
static void test_failed_build(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    int64_t n = (int64_t)1 << 23;
    gcr_tensor *col = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){n, 1}, GCR_NCHW);
    gcr_tensor *row = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){1, n}, GCR_NCHW);
    float a[2] = {1, -2}, got[2];
    gcr_tensor *small = vec(ctx, a, 2);
    for (int pass = 0; pass < 4; pass++) {
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, "huge")
        {
            y = gcr_neg(ctx, small);
            if (pass < 3) gcr_add(ctx, col, row);
        }
        if (pass < 3) {
            CHECK(gcr_ctx_status(ctx) == GCR_ERR_OOM, "pass %d: the build fails: %s", pass, gcr_ctx_error(ctx));
            CHECK(read_n(y, got, 2) != GCR_OK, "pass %d: nothing ran", pass);
        } else {
            OK(ctx, read_n(y, got, 2));
            CHECK(got[0] == -1 && got[1] == 2, "pass %d: the body that fits runs", pass);
        }
        gcr_ctx_clear_error(ctx);
    }
    gcr_ctx_destroy(ctx);
}

/* An op that fails in a body (here a shape error) fails the pass at its end; nothing runs. */
static void test_failed_op(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[3] = {1, 2, 3}, b[2] = {1, 2}, got[3];
    gcr_tensor *x = vec(ctx, a, 3), *bad = vec(ctx, b, 2);
    for (int pass = 0; pass < 4; pass++) {
        gcr_tensor *y = NULL;
        int fail = pass == 1 || pass == 2;
        GCR_REGION(ctx, "op fails")
        {
            y = gcr_exp(ctx, x);
            if (fail) gcr_add(ctx, y, bad);
        }
        if (fail) {
            CHECK(gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "pass %d: the failed op's status: %s", pass,
                  gcr_status_name(gcr_ctx_status(ctx)));
            gcr_ctx_clear_error(ctx);
            CHECK(read_n(y, got, 3) == GCR_ERR_CAPTURE, "pass %d: nothing ran", pass);
            gcr_ctx_clear_error(ctx);
        } else {
            OK(ctx, read_n(y, got, 3));
            CHECK(fabsf(got[2] - expf(3)) < 1e-4f, "pass %d: a pass without the failing op runs", pass);
        }
    }
    gcr_ctx_destroy(ctx);
}

/* A pass that switches to another cached entry (its ops match that entry's prefix) and then fails
 * ran nothing: gcr_region_graph still gives the graph that ran last, not the one the pass had
 * switched to (it gave the other branch's graph, which knobs.guards 0 then replayed). */
static void test_failed_pass_graph(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[3] = {1, 2, 3}, b[2] = {1, 2};
    gcr_tensor *x = vec(ctx, a, 3), *bad = vec(ctx, b, 2);
    for (int pass = 0; pass < 3; pass++)
        GCR_REGION(ctx, "switch") { gcr_tensor *r = gcr_relu(ctx, x); (pass % 2) ? gcr_exp(ctx, r) : gcr_neg(ctx, r); }
    OK(ctx, gcr_ctx_status(ctx));
    gcr_graph *last = gcr_region_graph(ctx, "switch"); /* the neg branch's */
    GCR_REGION(ctx, "switch")
    {
        gcr_tensor *y = gcr_exp(ctx, gcr_relu(ctx, x)); /* the exp branch's entry, then a failure */
        gcr_add(ctx, y, bad);
    }
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "the pass fails: %s", gcr_status_name(gcr_ctx_status(ctx)));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_region_graph(ctx, "switch") == last, "the failed pass ran nothing: the graph last run stays");
    gcr_ctx_destroy(ctx);
}

/* A break out of a body leaves its region open (documented): the next gcr_region_begin is refused
 * with a message naming the open region and how to close it (it said "inside a capture or another
 * region", for the same region); gcr_region_end then ends the pass and the loop goes on. */
static void test_break_left_open(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[3] = {1, 2, 3}, got[3];
    gcr_tensor *x = vec(ctx, a, 3), *y = NULL;
    for (int pass = 0; pass < 4; pass++) {
        GCR_REGION(ctx, "left open")
        {
            y = gcr_add_scalar(ctx, x, 1);
            if (pass == 1) break;
        }
        if (pass == 2) {
            CHECK(gcr_ctx_status(ctx) == GCR_ERR_CAPTURE && strstr(gcr_ctx_error(ctx), "region left open is open") &&
                      strstr(gcr_ctx_error(ctx), "gcr_region_end"),
                  "the refusal names the open region: %s", gcr_ctx_error(ctx));
            gcr_region_end(ctx);
            gcr_ctx_clear_error(ctx);
            continue;
        }
        if (pass == 1) continue;
        OK(ctx, read_n(y, got, 3));
        CHECK(got[0] == 2 && got[2] == 4, "pass %d: %g %g", pass, got[0], got[2]);
    }
    gcr_ctx_destroy(ctx);
}

/* A region's graph is borrowed: gcr_graph_destroy on it is refused with a message and the region
 * goes on replaying it (it freed the graph and crashed at the region's next eviction or at
 * gcr_ctx_destroy before). */
static void test_destroy_region_graph(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 1, (int64_t[]){7}, GCR_NCHW, -2, 2), *y = NULL;
    for (int pass = 0; pass < 3; pass++) {
        float in[7], got[7];
        h_fill(in, 7, -2, 2);
        OK(ctx, gcr_tensor_from_host(x, in, sizeof in));
        GCR_REGION(ctx, "borrowed") { y = gcr_exp(ctx, x); }
        OK(ctx, gcr_ctx_status(ctx));
        OK(ctx, read_n(y, got, 7));
        for (int i = 0; i < 7; i++) CHECK(fabsf(got[i] - expf(in[i])) <= 1e-5f * expf(in[i]), "pass %d [%d]", pass, i);
        if (pass == 0) {
            gcr_graph_destroy(gcr_region_graph(ctx, "borrowed"));
            CHECK(gcr_ctx_status(ctx) == GCR_ERR_INVALID && strstr(gcr_ctx_error(ctx), "region"),
                  "destroying a region's graph is refused: %s %s", gcr_status_name(gcr_ctx_status(ctx)), gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
            CHECK(gcr_region_graph(ctx, "borrowed") != NULL, "the region keeps its graph");
        }
    }
    gcr_ctx_destroy(ctx);
}

static void all(void)
{
    RUN(test_host_write_in_body);
    RUN(test_read_in_body);
    RUN(test_stale_body_tensor);
    RUN(test_recurrent_state);
    RUN(test_views_outlive_variants);
    RUN(test_handle_after_eviction);
    RUN(test_bounded);
    RUN(test_failed_build);
    RUN(test_failed_op);
    RUN(test_failed_pass_graph);
    RUN(test_break_left_open);
    RUN(test_destroy_region_graph);
}

int main(void)
{
    h_seed(99);
    cu_each_device(all);
    return h_finish();
}
