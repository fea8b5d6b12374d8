/* test_replay.c — guards and variants: rebinding an input pointer patches (no new variant);
 * shape, dtype and stride changes re-specialise (retrace=1) or run eagerly (retrace=0), and
 * never give the stale graph's result; the variant cache is LRU-capped, and a re-specialisation
 * that fails leaves it as it was; a parameter that no longer fits the new input (a literal
 * reshape) fails loudly; a graph may have any number of inputs. */
#include "capture_util.h"
#include "../replay/graph.h" /* gcr_graph_settings */
#include <cjson/cJSON.h>
#include <sys/stat.h>
#include <unistd.h>

static gcr_tensor *model(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *b)
{
    gcr_tensor *h = gcr_hardswish(ctx, x);
    int ax = 1;
    gcr_tensor *m = gcr_mean(ctx, h, &ax, 1, 1);
    return gcr_add(ctx, gcr_mul(ctx, h, m), b); /* b broadcasts over the last dim */
}

static gcr_tensor *rand_t(gcr_ctx *ctx, gcr_dtype dt, int nd, const int64_t *sh, gcr_format f)
{
    return h_rand_tensor(ctx, dt, nd, sh, f, -3, 3);
}

/* compares graph output y with the eager model on (x, b) */
static void same_as_eager(gcr_ctx *ctx, gcr_tensor *y, gcr_tensor *x, gcr_tensor *b, const char *what)
{
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *r = model(ctx, x, b);
    CHECK(gcr_tensor_numel(y) == gcr_tensor_numel(r) && gcr_tensor_ndim(y) == gcr_tensor_ndim(r), "%s: shapes", what);
    if (gcr_tensor_numel(y) == gcr_tensor_numel(r)) {
        float *a = h_read(y), *e = h_read(r);
        float tol = gcr_tensor_dtype(x) == GCR_F32 ? 1e-5f : 2e-2f;
        CHECK_CLOSE(a, e, gcr_tensor_numel(r), tol, tol, what);
        free(a);
        free(e);
    }
    gcr_scope_end(ctx, sc);
}

/* binds x as input 0, replays and compares output y with the eager model on (x, b) */
static void rebind_check(gcr_ctx *ctx, gcr_graph *g, gcr_tensor *y, gcr_tensor *x, gcr_tensor *b, const char *what)
{
    OK(ctx, gcr_graph_bind_input(g, 0, x));
    OK(ctx, gcr_graph_replay(g));
    same_as_eager(ctx, y, x, b, what);
}

static void test_rebind_and_respecialise(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    int64_t s1[4] = {2, 3, 4, 5}, s2[4] = {3, 2, 6, 5};
    gcr_tensor *x = rand_t(ctx, GCR_F32, 4, s1, GCR_NCHW), *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = model(ctx, x, b);
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(gcr_graph_num_inputs(g) == 2 && gcr_graph_get_input(g, 0) == x, "inputs in first-use order");
    same_as_eager(ctx, y, x, b, "capture pass");
    for (int it = 0; it < 5; it++) {
        cu_refill(x, 0);
        OK(ctx, gcr_graph_replay(g));
        same_as_eager(ctx, y, x, b, "fresh data");
    }
    /* pointer rebinding: same signature, no new variant */
    gcr_tensor *x2 = rand_t(ctx, GCR_F32, 4, s1, GCR_NCHW);
    rebind_check(ctx, g, y, x2, b, "rebound input");
    CHECK(cu_variants(g) == 1, "rebinding does not re-specialise (%d)", cu_variants(g));
    /* new shape: a new variant with the new result; the output handle takes the new shape */
    gcr_tensor *x3 = rand_t(ctx, GCR_F32, 4, s2, GCR_NCHW);
    OK(ctx, gcr_graph_bind_input(g, 0, x3));
    OK(ctx, gcr_graph_replay(g));
    CHECK(gcr_tensor_dim(y, 0) == 3 && gcr_tensor_dim(y, 2) == 6, "output has the new shape");
    same_as_eager(ctx, y, x3, b, "new shape");
    CHECK(cu_variants(g) == 2, "2 variants (%d)", cu_variants(g));
    /* new strides (NHWC) and new dtype (f16: b must follow) */
    gcr_tensor *x4 = rand_t(ctx, GCR_F32, 4, s1, GCR_NHWC);
    rebind_check(ctx, g, y, x4, b, "new strides");
    gcr_tensor *x5 = rand_t(ctx, GCR_F16, 4, s1, GCR_NCHW), *b5 = rand_t(ctx, GCR_F16, 1, (int64_t[]){5}, GCR_NCHW);
    OK(ctx, gcr_graph_bind_input(g, 0, x5));
    OK(ctx, gcr_graph_bind_input(g, 1, b5));
    OK(ctx, gcr_graph_replay(g));
    CHECK(gcr_tensor_dtype(y) == GCR_F16, "output is f16 now");
    same_as_eager(ctx, y, x5, b5, "new dtype");
    /* back to the first signature: a cache hit, no new build */
    int before = cu_variants(g);
    OK(ctx, gcr_graph_bind_input(g, 0, x));
    OK(ctx, gcr_graph_bind_input(g, 1, b));
    cu_refill(x, 0);
    OK(ctx, gcr_graph_replay(g));
    same_as_eager(ctx, y, x, b, "first signature again");
    CHECK(cu_variants(g) == before, "cached variant reused (%d vs %d)", cu_variants(g), before);
    CHECK(gcr_graph_bind_input(g, 5, x) == GCR_ERR_INVALID, "bad input index");
    gcr_ctx_clear_error(ctx);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* A re-specialisation whose build fails (the new x's last dim no longer broadcasts with b)
 * leaves the graph as it was, also with a cache of 1: the output keeps the last result, and
 * binding the old input back replays the cached variant without a new build. */
static void test_failed_respecialise(void)
{
    gcr_ctx *ctx = cu_ctx(1, 1, 1);
    gcr_tensor *x = rand_t(ctx, GCR_F32, 4, (int64_t[]){2, 3, 4, 5}, GCR_NCHW);
    gcr_tensor *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = model(ctx, x, b);
    OK(ctx, gcr_capture_end(ctx, &g));
    int64_t n = gcr_tensor_numel(y);
    float *before = h_read(y);
    gcr_tensor *x2 = rand_t(ctx, GCR_F32, 4, (int64_t[]){2, 3, 4, 6}, GCR_NCHW);
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    gcr_status s = gcr_graph_replay(g);
    CHECK(s == GCR_ERR_SHAPE, "the new signature cannot be built: %s", gcr_status_name(s));
    gcr_ctx_clear_error(ctx);
    CHECK(cu_kernels(g) > 0, "the working variant is still the graph's current one");
    CHECK(gcr_tensor_numel(y) == n, "the output keeps its shape");
    float *after = h_read(y);
    CHECK(!memcmp(before, after, sizeof *before * (size_t)n), "the output keeps its last result");
    OK(ctx, gcr_graph_bind_input(g, 0, x));
    cu_refill(x, 0);
    OK(ctx, gcr_graph_replay(g));
    same_as_eager(ctx, y, x, b, "back to the first input");
    CHECK(cu_variants(g) == 1, "the cached variant replayed (%d builds)", cu_variants(g));
    free(before);
    free(after);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* An eager view of a graph output shares the output's static buffer: it sees the next replay,
 * and it outlives the graph (the buffer then stays with the view). */
static void test_view_outlives_graph(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {6, 5, 4, 3, 2, 1}, got[6];
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){2, 3}, GCR_NCHW, a);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_mul_scalar(ctx, x, 2.0f);
    OK(ctx, gcr_capture_end(ctx, &g));
    gcr_tensor *view = gcr_reshape(ctx, y, 1, (int64_t[]){6});
    OK(ctx, gcr_tensor_from_host(x, b, sizeof b));
    OK(ctx, gcr_graph_replay(g));
    OK(ctx, gcr_tensor_to_host(view, got, sizeof got));
    CHECK(got[0] == 12 && got[5] == 2, "the view sees the replay: %g %g", got[0], got[5]);
    gcr_graph_destroy(g);
    OK(ctx, gcr_tensor_to_host(view, got, sizeof got));
    CHECK(got[0] == 12 && got[5] == 2, "the view outlives the graph: %g %g", got[0], got[5]);
    gcr_ctx_destroy(ctx);
}

static void test_lru(void)
{
    for (int cap = 2; cap <= 3; cap++) {
        gcr_ctx *ctx = cu_ctx(1, cap, 1);
        int64_t sh[3][4] = {{2, 3, 4, 5}, {1, 3, 4, 5}, {4, 3, 2, 5}};
        gcr_tensor *xs[3], *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
        for (int i = 0; i < 3; i++) xs[i] = rand_t(ctx, GCR_F32, 4, sh[i], GCR_NCHW);
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = model(ctx, xs[0], b);
        OK(ctx, gcr_capture_end(ctx, &g));
        int seq[] = {1, 2, 0, 1, 2, 0};
        for (int i = 0; i < 6; i++) {
            rebind_check(ctx, g, y, xs[seq[i]], b, "LRU cycle");
        }
        /* cap 3 holds all three signatures: 3 builds; cap 2 evicts on every switch: 1 + 6 */
        CHECK(cu_variants(g) == (cap == 3 ? 3 : 7), "cap %d: %d builds", cap, cu_variants(g));
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

static void test_eager_fallback(void)
{
    gcr_ctx *ctx = cu_ctx(0, 8, 1);
    int64_t s1[4] = {2, 3, 4, 5}, s2[4] = {1, 7, 3, 5};
    gcr_tensor *x = rand_t(ctx, GCR_F32, 4, s1, GCR_NCHW), *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = model(ctx, x, b);
    OK(ctx, gcr_capture_end(ctx, &g));
    gcr_tensor *x2 = rand_t(ctx, GCR_F32, 4, s2, GCR_NCHW);
    rebind_check(ctx, g, y, x2, b, "retrace=0: eager result for the new shape");
    CHECK(cu_variants(g) == 1, "retrace=0 builds nothing new");
    gcr_tensor *x3 = gcr_tensor_keep(gcr_permute(ctx, rand_t(ctx, GCR_F32, 4, (int64_t[]){5, 3, 4, 2}, GCR_NCHW),
                                                 (int[]){3, 1, 2, 0}));
    rebind_check(ctx, g, y, x3, b, "retrace=0: strided input");
    rebind_check(ctx, g, y, x, b, "retrace=0: back to the graph");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* a reshape to a literal shape cannot hold a new batch size: the replay fails, loudly */
static void test_frozen_reshape(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *x = rand_t(ctx, GCR_F32, 2, (int64_t[]){4, 6}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_reshape(ctx, gcr_relu(ctx, x), 3, (int64_t[]){4, 2, 3});
    OK(ctx, gcr_capture_end(ctx, &g));
    gcr_tensor *x2 = rand_t(ctx, GCR_F32, 2, (int64_t[]){5, 6}, GCR_NCHW);
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    gcr_status s = gcr_graph_replay(g);
    CHECK(s == GCR_ERR_SHAPE, "frozen reshape: %s", gcr_status_name(s));
    CHECK(strstr(gcr_ctx_error(ctx), "reshape") != NULL, "message names the op: %s", gcr_ctx_error(ctx));
    CHECK(gcr_tensor_dim(y, 0) == 4, "the output keeps its last good result");
    gcr_ctx_clear_error(ctx);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* A reshape of a slice that was contiguous at capture only because its dims were 1: bound to a
 * bigger batch the slice is strided, so the recorded view cannot hold; the replay runs the op list
 * as the API would (the strided input copied, then reshaped) in both knob settings, and the graph
 * replays again for the first input */
static void test_reshape_of_strided_view(void)
{
    for (int retrace = 0; retrace <= 1; retrace++) {
        gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
        gcr_tensor *x = rand_t(ctx, GCR_F32, 2, (int64_t[]){1, 6}, GCR_NCHW);
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = gcr_exp(ctx, gcr_flatten(ctx, gcr_slice(ctx, x, 1, 1, INT64_MAX, 6), 0, -1));
        OK(ctx, gcr_capture_end(ctx, &g));
        gcr_tensor *x2 = rand_t(ctx, GCR_F32, 2, (int64_t[]){3, 6}, GCR_NCHW);
        gcr_tensor *xs[3] = {x2, x, x2};
        for (int p = 0; p < 3; p++) {
            cu_refill(xs[p], 0);
            OK(ctx, gcr_graph_bind_input(g, 0, xs[p]));
            char what[64];
            snprintf(what, sizeof what, "retrace %d, pass %d: batch %lld", retrace, p, (long long)gcr_tensor_dim(xs[p], 0));
            if (!CHECK(gcr_graph_replay(g) == GCR_OK, "%s: %s", what, gcr_ctx_error(ctx))) {
                gcr_ctx_clear_error(ctx);
                continue;
            }
            uint64_t sc = gcr_scope_begin(ctx);
            gcr_tensor *r = gcr_exp(ctx, gcr_flatten(ctx, gcr_slice(ctx, xs[p], 1, 1, INT64_MAX, 6), 0, -1));
            CHECK(gcr_tensor_numel(y) == gcr_tensor_numel(r) && gcr_tensor_numel(r) == gcr_tensor_dim(xs[p], 0),
                  "%s: %lld elements, eager %lld", what, (long long)gcr_tensor_numel(y), (long long)gcr_tensor_numel(r));
            if (gcr_tensor_numel(y) == gcr_tensor_numel(r)) {
                float *a = h_read(y), *e = h_read(r);
                CHECK_CLOSE(a, e, gcr_tensor_numel(r), 1e-5f, 1e-5f, what);
                free(a);
                free(e);
            }
            gcr_scope_end(ctx, sc);
        }
        CHECK(cu_variants(g) == 1, "retrace %d: the signature the graph cannot take builds no variant (%d)", retrace,
              cu_variants(g));
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

/* A replay that runs the op list eagerly (the graph cannot take the new signature, or retrace=0)
 * with an earlier error still on the ctx: that error stays (sticky until the caller clears it),
 * and a replay that fails returns its own status, not the earlier one's */
static void test_fallback_keeps_sticky_error(void)
{
    for (int retrace = 0; retrace <= 1; retrace++) {
        gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
        gcr_tensor *x = rand_t(ctx, GCR_F32, 2, (int64_t[]){2, 3}, GCR_NCHW);
        gcr_graph *g = NULL, *gr = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_exp(ctx, gcr_reshape(ctx, x, 1, (int64_t[]){6}));
        OK(ctx, gcr_capture_end(ctx, &g));
        OK(ctx, gcr_capture_begin(ctx));
        gcr_reshape(ctx, gcr_relu(ctx, x), 3, (int64_t[]){2, 3, 1}); /* a literal shape */
        OK(ctx, gcr_capture_end(ctx, &gr));
        gcr_tensor *xt = gcr_permute(ctx, rand_t(ctx, GCR_F32, 2, (int64_t[]){3, 2}, GCR_NCHW), (int[]){1, 0});
        OK(ctx, gcr_graph_bind_input(g, 0, xt));
        OK(ctx, gcr_graph_bind_input(gr, 0, rand_t(ctx, GCR_F32, 2, (int64_t[]){5, 6}, GCR_NCHW)));
        CHECK(gcr_dropout(ctx, x, 2.0f) == NULL, "dropout p 2 fails");
        gcr_status s = gcr_graph_replay(g);
        CHECK(s == GCR_OK, "retrace %d: the strided input runs the op list: %s", retrace, gcr_status_name(s));
        s = gcr_graph_replay(gr);
        CHECK(s == GCR_ERR_SHAPE, "retrace %d: the literal reshape fails with its own status: %s", retrace,
              gcr_status_name(s));
        CHECK(gcr_ctx_status(ctx) == GCR_ERR_PARAM && strstr(gcr_ctx_error(ctx), "dropout"),
              "retrace %d: the earlier error stays on the ctx: %s (%s)", retrace, gcr_status_name(gcr_ctx_status(ctx)),
              gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        gcr_graph_destroy(g);
        gcr_graph_destroy(gr);
        gcr_ctx_destroy(ctx);
    }
}

/* a slice to the end keeps its bounds as written: bound to a wider input it takes the wider
 * input's elements in both knob settings (test_bind.c covers every such op); a region re-traces
 * the body and gets the same */
static void test_slice_to_end(void)
{
    for (int retrace = 0; retrace <= 1; retrace++) {
        gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
        gcr_tensor *x = rand_t(ctx, GCR_F32, 2, (int64_t[]){4, 6}, GCR_NCHW);
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = gcr_exp(ctx, gcr_slice(ctx, x, 1, 0, INT64_MAX, 2));
        OK(ctx, gcr_capture_end(ctx, &g));
        gcr_tensor *x2 = rand_t(ctx, GCR_F32, 2, (int64_t[]){4, 8}, GCR_NCHW);
        OK(ctx, gcr_graph_bind_input(g, 0, x2));
        OK(ctx, gcr_graph_replay(g));
        CHECK(gcr_tensor_dim(y, 1) == 4, "retrace %d: the slice took the wider input's 4 elements", retrace);
        gcr_tensor *xs[2] = {x, x2};
        for (int p = 0; p < 4; p++) {
            gcr_tensor *r = NULL;
            GCR_REGION(ctx, "slice") { r = gcr_exp(ctx, gcr_slice(ctx, xs[p % 2], 1, 0, INT64_MAX, 2)); }
            CHECK(gcr_tensor_dim(r, 1) == (p % 2 ? 4 : 3), "region pass %d re-traced the slice", p);
        }
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

static void test_guards_off(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 0);
    gcr_tensor *x = rand_t(ctx, GCR_F32, 4, (int64_t[]){2, 3, 4, 5}, GCR_NCHW);
    gcr_tensor *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = model(ctx, x, b);
    OK(ctx, gcr_capture_end(ctx, &g));
    for (int i = 0; i < 3; i++) {
        cu_refill(x, 0);
        OK(ctx, gcr_graph_replay(g));
        same_as_eager(ctx, y, x, b, "guards=0, same signature");
    }
    gcr_graph_stats st;
    gcr_graph_get_stats(g, &st);
    CHECK(st.replays == 3, "3 replays counted");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* model captured on ctx over random x [2,3,4,5] and b [5]: its graph, NULL when the capture failed */
static gcr_graph *capture_model(gcr_ctx *ctx)
{
    gcr_tensor *x = rand_t(ctx, GCR_F32, 4, (int64_t[]){2, 3, 4, 5}, GCR_NCHW);
    gcr_tensor *b = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    model(ctx, x, b);
    OK(ctx, gcr_capture_end(ctx, &g));
    return g;
}

/* GCR_DUMP's "source" reaches the executor (which writes a CUDA variant's program) whatever the case
 * and spaces of its names, as the other dumps match them: "ALL" or " Source " dumped the CPU
 * source but not the CUDA program, and "sources", a name that is no dump, turned it on */
static void test_dump_source_setting(void)
{
    static const struct { const char *dump; int on; } cases[] = {
        {"source", 1}, {"all", 1}, {"ALL", 1}, {" All ", 1}, {"trace, Source", 1}, {"sources", 0}, {"trace", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gcr_ctx_opts o = gcr_ctx_opts_default();
        o.device = GCR_DEVICE_CPU;
        o.knobs.log = 0;
        o.knobs.dump = cases[i].dump;
        o.knobs.dump_dir = "/nonexistent_gcr_dir/x"; /* nothing is written */
        gcr_ctx *ctx = NULL;
        if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) continue;
        gcr_graph *g = capture_model(ctx);
        if (CHECK(g, "graph")) {
            gcr_exec_settings set = gcr_graph_settings(g);
            CHECK(!set.dump_dir == !cases[i].on, "dump \"%s\": source dump %s", cases[i].dump,
                  set.dump_dir ? "on" : "off");
        }
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

/* GCR_DUMP / GCR_PROFILE through the knobs: files appear with the expected content */
static void test_dumps_profile(void)
{
    char dir[256], prof[300], path[400];
    snprintf(dir, sizeof dir, "/tmp/gcr_test_dump_%d", (int)getpid());
    snprintf(prof, sizeof prof, "%s_profile.json", dir);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.dump = "trace,fused,source,plan";
    o.knobs.dump_dir = dir;
    o.knobs.profile = prof;
    o.knobs.log = 0;
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) return;
    gcr_graph *g = capture_model(ctx);
    for (int i = 0; g && i < 3; i++) OK(ctx, gcr_graph_replay(g));
    int kernels = cu_kernels(g);
    gcr_graph_destroy(g);
    static const struct { const char *suffix, *needle; } want[] = {
        {"trace.txt", "clamp"}, {"trace.dot", "digraph"}, {"fused.txt", "fused k"},
        {"fused.dot", "cluster_"}, {"source.c", "fminf(fmaxf(a, p0), p1)"}, {"plan.txt", "arena"},
    };
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/g1_v1_%s", dir, want[i].suffix);
        char *txt = h_slurp(path);
        if (!txt) { /* serial numbers are per process: find the file of this graph by suffix */
            for (int k = 2; k < 64 && !txt; k++) {
                snprintf(path, sizeof path, "%s/g%d_v1_%s", dir, k, want[i].suffix);
                txt = h_slurp(path);
            }
        }
        CHECK(txt && strstr(txt, want[i].needle), "dump %s holds '%s'", want[i].suffix, want[i].needle);
        free(txt);
        unlink(path);
    }
    rmdir(dir);
    char *js = h_slurp(prof);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    cJSON *ev = root ? cJSON_GetObjectItem(root, "traceEvents") : NULL;
    CHECK(cJSON_IsArray(ev) && cJSON_GetArraySize(ev) == 4 * kernels, "profile: one event per kernel per run (%d)",
          ev ? cJSON_GetArraySize(ev) : -1);
    cJSON *e0 = ev ? cJSON_GetArrayItem(ev, 0) : NULL;
    CHECK(e0 && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(e0, "ph")), "X") &&
              strncmp(cJSON_GetStringValue(cJSON_GetObjectItem(e0, "name")), "k0_", 3) == 0 &&
              cJSON_IsNumber(cJSON_GetObjectItem(e0, "dur")),
          "Chrome trace events (ph X, kernel names, durations)");
    cJSON_Delete(root);
    free(js);
    unlink(prof);
    gcr_ctx_destroy(ctx);

    /* a dump directory longer than any fixed path buffer (1,283 characters): the plan lands in it,
     * under its own name (a 1024-byte buffer put it beside the directory, truncated) */
    char top[64];
    snprintf(top, sizeof top, "/tmp/gcr_test_long_%d", (int)getpid());
    char *deep = h_long_dir(top, 5), *file = malloc(1500); /* the deepest level is the library's to make */
    o.knobs.dump = " Plan "; /* names match whatever their case and the spaces around them */
    o.knobs.dump_dir = deep;
    o.knobs.profile = NULL;
    ctx = NULL;
    if (CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) {
        gcr_tensor *x2 = rand_t(ctx, GCR_F32, 4, (int64_t[]){2, 3, 4, 5}, GCR_NCHW);
        gcr_tensor *b2 = rand_t(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
        OK(ctx, gcr_capture_begin(ctx));
        model(ctx, x2, b2);
        OK(ctx, gcr_capture_end(ctx, &g));
        gcr_graph_destroy(g);
        char *txt = NULL;
        for (int k = 1; k < 64 && !txt; k++) {
            snprintf(file, 1500, "%s/g%d_v1_plan.txt", deep, k);
            txt = h_slurp(file);
        }
        CHECK(txt && strstr(txt, "arena"), "a plan dumped into a %d-character directory", (int)strlen(deep));
        free(txt);
        unlink(file);
        gcr_ctx_destroy(ctx);
    }
    for (int level = 4; level >= 0; level--) { /* the directories, deepest first */
        rmdir(deep);
        *strrchr(deep, '/') = 0;
    }
    rmdir(deep);
    free(deep);
    free(file);
}

/* A graph with more inputs than a stack frame holds signatures for (70,000 inputs x ~140-byte
 * metas is over the usual 8 MiB stack): replay, a rebind with new data, and a re-specialisation
 * give eager's sum. CPU only, unfused: one pointwise group over 70,000 inputs would be a kernel
 * no GPU compiler takes. */
static void test_many_inputs(void)
{
    if (cu_dev != GCR_DEVICE_CPU) return;
    enum { N = 70000 };
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.fusion = 0;
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) return;
    gcr_tensor **x = malloc(sizeof *x * N);
    float *v = h_randn(N, -1, 1);
    for (int i = 0; i < N; i++) x[i] = gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){1}, GCR_NCHW, &v[i]);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = x[0];
    for (int i = 1; i < N; i++) y = gcr_add(ctx, y, x[i]);
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(gcr_graph_num_inputs(g) == N, "inputs: %d", gcr_graph_num_inputs(g));
    for (int round = 0; round < 3 && g; round++) {
        if (round == 1) { /* new data, same signature */
            h_fill(v, N, -1, 1);
            for (int i = 0; i < N; i++) OK(ctx, gcr_tensor_from_host(x[i], &v[i], sizeof v[i]));
        }
        gcr_tensor *x2 = NULL;
        if (round == 2) { /* input 7 becomes [3]: a broadcast add, re-specialised */
            float three[3] = {0.25f, -0.5f, 1.0f};
            x2 = gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){3}, GCR_NCHW, three);
            OK(ctx, gcr_graph_bind_input(g, 7, x2));
        }
        OK(ctx, gcr_graph_replay(g));
        float got[3] = {0}, want[3] = {0};
        int n = round == 2 ? 3 : 1;
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int i = 0; i < N; i++) acc += i == 7 && round == 2 ? (double[]){0.25, -0.5, 1.0}[j] : v[i];
            want[j] = (float)acc;
        }
        gcr_tensor *out = gcr_graph_get_output(g, 0);
        OK(ctx, gcr_tensor_to_host(out, got, (size_t)n * sizeof *got));
        for (int j = 0; j < n; j++)
            CHECK(fabsf(got[j] - want[j]) <= 1e-2f, "round %d [%d]: %g, want %g", round, j, got[j], want[j]);
        gcr_tensor_free(x2);
    }
    gcr_graph_destroy(g);
    free(v);
    free(x);
    gcr_ctx_destroy(ctx);
}

/* A graph whose conv / matmul result becomes empty on a new binding replays as eager does (an
 * empty result, GCR_OK): the CUDA executor launched the fused matmul with an empty grid, which the
 * driver refuses (GCR_ERR_DEVICE "invalid argument"; found by test_fuzz_replay seed 173). */
static void test_empty_anchor(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){4, 5}, GCR_NCHW, -1, 1);
    gcr_tensor *w = gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){5, 3}, GCR_NCHW, -1, 1));
    gcr_tensor *img = h_rand_tensor(ctx, GCR_F32, 4, (int64_t[]){1, 2, 5, 5}, GCR_NHWC, -1, 1);
    gcr_tensor *k = gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 4, (int64_t[]){3, 2, 3, 3}, GCR_NCHW, -1, 1));
    gcr_conv2d_params cp = gcr_conv2d_default();
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_relu(ctx, gcr_matmul(ctx, x, w));
    gcr_tensor *z = gcr_relu(ctx, gcr_conv2d(ctx, img, k, NULL, &cp));
    OK(ctx, gcr_capture_end(ctx, &g));
    gcr_tensor *x0 = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){0, 5}, GCR_NCHW, -1, 1);
    gcr_tensor *img0 = h_rand_tensor(ctx, GCR_F32, 4, (int64_t[]){0, 2, 5, 5}, GCR_NHWC, -1, 1);
    OK(ctx, gcr_graph_bind_input(g, 0, x0));
    OK(ctx, gcr_graph_bind_input(g, 1, img0));
    for (int r = 0; r < 2 && g; r++) {
        OK(ctx, gcr_graph_replay(g));
        CHECK(gcr_tensor_numel(y) == 0 && gcr_tensor_dim(y, 1) == 3, "matmul result [0,3], got numel %lld",
              (long long)gcr_tensor_numel(y));
        CHECK(gcr_tensor_numel(z) == 0 && gcr_tensor_dim(z, 1) == 3, "conv result [0,3,3,3], got numel %lld",
              (long long)gcr_tensor_numel(z));
    }
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* A graph's eager reduction in its two-pass form (few outputs, a long reduced dim: the CUDA reduce
 * kernels' partials) keeps its scratch for every replay: tensors made after the capture never share
 * it. The partials lived in a block handed back to the allocator's cache during the capture, which
 * the next small tensor could get and every replay then overwrote. */
static void test_reduce_scratch_after_capture(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.fusion = 0; /* the reduction runs as its eager kernel inside the graph */
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) return;
    gcr_tensor *x = rand_t(ctx, GCR_F32, 2, (int64_t[]){2, 100000}, GCR_NCHW);
    int ax = 1;
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *s = gcr_sum(ctx, x, &ax, 1, 0);
    OK(ctx, gcr_capture_end(ctx, &g));
    enum { NT = 64, NE = 16 };
    gcr_tensor *t[NT];
    float v[NE], got[NE];
    for (int i = 0; i < NT; i++) { /* small tensors of known values, one of them maybe in the old block */
        for (int j = 0; j < NE; j++) v[j] = (float)(i * NE + j) + 0.25f;
        t[i] = gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){NE}, GCR_NCHW, v);
    }
    float *xs = h_read(x), want[2];
    for (int r = 0; r < 2; r++) {
        double acc = 0;
        for (int k = 0; k < 100000; k++) acc += xs[r * 100000 + k];
        want[r] = (float)acc;
    }
    free(xs);
    for (int rep = 0; rep < 2 && g; rep++) OK(ctx, gcr_graph_replay(g));
    float *sv = h_read(s);
    CHECK_CLOSE(sv, want, 2, 1e-2f, 1e-4f, "sum over 100000 after replays");
    free(sv);
    int bad = 0;
    for (int i = 0; i < NT; i++) {
        OK(ctx, gcr_tensor_to_host(t[i], got, sizeof got));
        for (int j = 0; j < NE; j++) bad += got[j] != (float)(i * NE + j) + 0.25f;
    }
    CHECK(bad == 0, "tensors made after the capture changed under replays (%d values)", bad);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* y (12 elements) against exp of the host values hx */
static void is_exp_of(gcr_tensor *y, const float *hx, const char *what)
{
    float *a = h_read(y);
    float want[12];
    for (int i = 0; i < 12; i++) want[i] = expf(hx[i]);
    if (CHECK(a != NULL, "%s: read", what)) CHECK_CLOSE(a, want, 12, 1e-5f, 1e-5f, what);
    free(a);
}

/* A graph holds what it reads: an input freed while a capture that read it is open, an input whose
 * scope ended, a rebound input freed, a constant freed, and another graph's output whose graph was
 * destroyed all stay readable until the graph lets them go, so its replays give the values they
 * held (they were freed handles, read after free: SAN=1 shows any left) */
static void test_freed_inputs(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    const int64_t sh[2] = {3, 4};
    float hx[12], hx2[12];
    /* freed inside the capture, after its last use; and a scope that ends after the capture */
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *x = rand_t(ctx, GCR_F32, 2, sh, GCR_NCHW);
    OK(ctx, gcr_tensor_to_host(x, hx, sizeof hx));
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_exp(ctx, x);
    gcr_tensor_free(x);
    OK(ctx, gcr_capture_end(ctx, &g));
    is_exp_of(y, hx, "input freed during the capture: the capture pass");
    gcr_scope_end(ctx, sc);
    OK(ctx, gcr_graph_replay(g));
    is_exp_of(y, hx, "input freed during the capture: a replay");
    /* a rebound input freed, then the graph replayed; then bound again */
    gcr_tensor *x2 = rand_t(ctx, GCR_F32, 2, sh, GCR_NCHW);
    OK(ctx, gcr_tensor_to_host(x2, hx2, sizeof hx2));
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    gcr_tensor_free(x2);
    OK(ctx, gcr_graph_replay(g));
    is_exp_of(y, hx2, "rebound input freed");
    /* another graph's output read by this one, that graph destroyed */
    gcr_graph *g2 = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *z = gcr_log(ctx, y);
    OK(ctx, gcr_capture_end(ctx, &g2));
    gcr_graph_destroy(g);
    OK(ctx, gcr_graph_replay(g2));
    is_exp_of(gcr_exp(ctx, z), hx2, "the output of a destroyed graph read by another");
    gcr_graph_destroy(g2);
    /* a region body that frees its input after the last op that reads it */
    for (int pass = 0; pass < 2; pass++) {
        gcr_tensor *xr = rand_t(ctx, GCR_F32, 2, sh, GCR_NCHW), *yr = NULL;
        OK(ctx, gcr_tensor_to_host(xr, hx, sizeof hx));
        GCR_REGION(ctx, "frees")
        {
            yr = gcr_exp(ctx, xr);
            gcr_tensor_free(xr);
        }
        OK(ctx, gcr_ctx_status(ctx));
        is_exp_of(yr, hx, "a region body that frees its input");
    }
    gcr_ctx_destroy(ctx);
}

static void all(void)
{
    RUN(test_freed_inputs);
    RUN(test_rebind_and_respecialise);
    RUN(test_lru);
    RUN(test_failed_respecialise);
    RUN(test_view_outlives_graph);
    RUN(test_eager_fallback);
    RUN(test_frozen_reshape);
    RUN(test_reshape_of_strided_view);
    RUN(test_fallback_keeps_sticky_error);
    RUN(test_slice_to_end);
    RUN(test_guards_off);
    RUN(test_dumps_profile);
    RUN(test_dump_source_setting);
    RUN(test_many_inputs);
    RUN(test_empty_anchor);
    RUN(test_reduce_scratch_after_capture);
}

int main(void)
{
    h_seed(7);
    cu_each_device(all);
    return h_finish();
}
