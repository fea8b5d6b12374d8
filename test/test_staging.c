/* test_staging.c — host staging of a graph (gcr_graph_input_host / gcr_graph_output_host), on the
 * CPU and, when present, a GPU (with and without CUDA Graphs), f32 and f16, NCHW and NHWC inputs:
 * - one staged replay gives byte for byte what the explicit copies give (gcr_tensor_from_host, a
 *   replay of a twin graph, gcr_tensor_to_host), on fresh host data at every replay, so a staged
 *   input that was not copied in, or an output not copied out, shows;
 * - the staged input tensor holds the host buffer's data after the replay;
 * - bad calls: wrong sizes (GCR_ERR_SHAPE naming the input and the sizes), bad indices, NULL;
 *   asking again gives the same buffer;
 * - an input rebound to another shape: one replay fails with GCR_ERR_SHAPE and unstages every
 *   buffer that no longer fits (retrace=0: the outputs' once the op list has run); staged again
 *   with the new sizes, it matches the explicit copies;
 * - a staged input rebound to an expand view is refused, its source untouched;
 * - a signature change under retrace=0 (the op list runs eagerly) still stages;
 * - a region's graph staged through gcr_region_graph;
 * - the generic executor (every node through the backend's eager run) stages as the backend's does. */
#include "capture_util.h"
#include "../lib/exec.h"
#include <stdbool.h>

static gcr_format cur_fmt;
static gcr_dtype cur_dt;

/* conv 3x3 + bias + hardswish (in x's layout) and its spatial mean, both outputs of a capture */
static int model(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *b, gcr_tensor **out)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    out[0] = gcr_hardswish(ctx, gcr_conv2d(ctx, x, w, b, &p));
    out[1] = gcr_mean(ctx, out[0], (int[]){2, 3}, 2, false);
    OK(ctx, gcr_graph_output(ctx, out[0]));
    OK(ctx, gcr_graph_output(ctx, out[1]));
    return 2;
}

/* fresh random elements of a [shape] tensor of dtype dt, as host bytes (dense, logical order) */
static void *rand_bytes(gcr_ctx *ctx, gcr_dtype dt, const int64_t *shape, size_t *bytes)
{
    gcr_tensor *t = h_rand_tensor(ctx, dt, 4, shape, GCR_NCHW, -1, 1);
    *bytes = gcr_tensor_nbytes(t);
    void *h = malloc(*bytes);
    OK(ctx, gcr_tensor_to_host(t, h, *bytes));
    gcr_tensor_free(t);
    return h;
}

typedef struct setup {
    gcr_ctx *ctx;
    gcr_tensor *x, *x2, *w, *b; /* x2: the twin graph's input */
    gcr_graph *g, *g2;          /* g is staged, g2 takes explicit copies */
    gcr_tensor *out[2], *out2[2];
} setup;

static gcr_tensor *new_input(gcr_ctx *ctx, const int64_t *shape)
{
    return gcr_tensor_new(ctx, cur_dt, 4, shape, cur_fmt);
}

static bool make(setup *s, gcr_ctx *ctx, const int64_t *xs)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    const int64_t ws[4] = {6, xs[1], 3, 3}, bs[1] = {6};
    s->w = gcr_tensor_set_const(h_rand_tensor(ctx, cur_dt, 4, ws, GCR_NCHW, -0.5f, 0.5f));
    s->b = gcr_tensor_set_const(h_rand_tensor(ctx, cur_dt, 1, bs, GCR_NCHW, -0.5f, 0.5f));
    s->x = new_input(ctx, xs);
    s->x2 = new_input(ctx, xs);
    size_t n;
    void *h = rand_bytes(ctx, cur_dt, xs, &n);
    OK(ctx, gcr_tensor_from_host(s->x, h, n));
    OK(ctx, gcr_tensor_from_host(s->x2, h, n));
    free(h);
    OK(ctx, gcr_capture_begin(ctx));
    model(ctx, s->x, s->w, s->b, s->out);
    OK(ctx, gcr_capture_end(ctx, &s->g));
    OK(ctx, gcr_capture_begin(ctx));
    model(ctx, s->x2, s->w, s->b, s->out2);
    OK(ctx, gcr_capture_end(ctx, &s->g2));
    return CHECK(s->g && s->g2 && gcr_graph_num_inputs(s->g) == 1 && gcr_graph_num_outputs(s->g) == 2, "captures: %s",
                 gcr_ctx_error(ctx));
}

static void drop(setup *s)
{
    gcr_graph_destroy(s->g);
    gcr_graph_destroy(s->g2);
    gcr_tensor_free(s->x);
    gcr_tensor_free(s->x2);
    gcr_tensor_free(s->w);
    gcr_tensor_free(s->b);
}

/* stages g's input and both outputs; returns false when it could not */
static bool stage(setup *s, void **in, void **o0, void **o1)
{
    gcr_graph *g = s->g;
    OK(s->ctx, gcr_graph_input_host(g, 0, gcr_tensor_nbytes(gcr_graph_get_input(g, 0)), in));
    OK(s->ctx, gcr_graph_output_host(g, 0, gcr_tensor_nbytes(gcr_graph_get_output(g, 0)), o0));
    OK(s->ctx, gcr_graph_output_host(g, 1, gcr_tensor_nbytes(gcr_graph_get_output(g, 1)), o1));
    return *in && *o0 && *o1;
}

/* `rounds` replays on fresh data: staged g against g2 fed and read by explicit copies */
static void compare_rounds(setup *s, void *in, void *o0, void *o1, int rounds, const char *what)
{
    gcr_ctx *ctx = s->ctx;
    gcr_tensor *xin = gcr_graph_get_input(s->g, 0);
    int64_t xs[4];
    for (int d = 0; d < 4; d++) xs[d] = gcr_tensor_dim(xin, d);
    for (int r = 0; r < rounds; r++) {
        size_t n;
        void *h = rand_bytes(ctx, cur_dt, xs, &n);
        memcpy(in, h, n);
        OK(ctx, gcr_graph_replay(s->g));
        /* the twin, by explicit copies */
        OK(ctx, gcr_tensor_from_host(gcr_graph_get_input(s->g2, 0), h, n));
        OK(ctx, gcr_graph_replay(s->g2));
        void *got[2] = {o0, o1};
        for (int o = 0; o < 2; o++) {
            gcr_tensor *t = gcr_graph_get_output(s->g2, o);
            size_t nb = gcr_tensor_nbytes(t);
            void *want = malloc(nb);
            OK(ctx, gcr_tensor_to_host(t, want, nb));
            CHECK(nb == gcr_tensor_nbytes(gcr_graph_get_output(s->g, o)) && !memcmp(got[o], want, nb),
                  "%s round %d: staged output %d differs from the explicit copies", what, r, o);
            free(want);
        }
        void *back = malloc(n);
        OK(ctx, gcr_tensor_to_host(xin, back, n));
        CHECK(!memcmp(back, h, n), "%s round %d: the staged input tensor does not hold the host data", what, r);
        free(back);
        free(h);
    }
}

static void test_errors_and_identity(gcr_ctx *ctx, setup *s)
{
    gcr_graph *g = s->g;
    void *buf = (void *)1, *again = NULL;
    size_t nx = gcr_tensor_nbytes(gcr_graph_get_input(g, 0));
    gcr_status st = gcr_graph_input_host(g, 0, nx - 1, &buf);
    CHECK(st == GCR_ERR_SHAPE && buf == NULL && strstr(gcr_ctx_error(ctx), "input 0"), "short input buffer: %s %s",
          gcr_status_name(st), gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    st = gcr_graph_output_host(g, 1, 1 << 30, &buf);
    CHECK(st == GCR_ERR_SHAPE && strstr(gcr_ctx_error(ctx), "output 1"), "huge output buffer: %s %s", gcr_status_name(st),
          gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_input_host(g, 1, nx, &buf) == GCR_ERR_INVALID, "input index 1 of 1");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_output_host(g, -1, 4, &buf) == GCR_ERR_INVALID, "output index -1");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_input_host(g, 0, nx, NULL) == GCR_ERR_INVALID, "NULL buf");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_input_host(NULL, 0, nx, &buf) == GCR_ERR_INVALID, "NULL graph");
    OK(ctx, gcr_graph_input_host(g, 0, nx, &buf));
    OK(ctx, gcr_graph_input_host(g, 0, nx, &again));
    CHECK(buf && buf == again, "asking again gives the same buffer");
}

/* A staged input rebound to an expand view of a tensor (the same shape, stride 0 along dim 0): the
 * replay refuses it (GCR_ERR_INVALID naming the input) and writes nothing into the view's source;
 * bound back, the staged replay runs. */
static void expand_refused(setup *s, const int64_t *xs, const char *what)
{
    gcr_ctx *ctx = s->ctx;
    const int64_t one[4] = {1, xs[1], xs[2], xs[3]};
    gcr_tensor *src = h_rand_tensor(ctx, cur_dt, 4, one, cur_fmt, -1, 1);
    gcr_tensor *e = gcr_expand(ctx, src, 4, xs);
    float *before = h_read(src);
    OK(ctx, gcr_graph_bind_input(s->g, 0, e));
    gcr_status st = gcr_graph_replay(s->g);
    CHECK(st == GCR_ERR_INVALID && strstr(gcr_ctx_error(ctx), "input 0") && strstr(gcr_ctx_error(ctx), "expand view"),
          "%s: a staged input bound to an expand view: %s %s", what, gcr_status_name(st), gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    float *after = h_read(src);
    CHECK(before && after && !memcmp(before, after, sizeof(float) * (size_t)gcr_tensor_numel(src)),
          "%s: the expand view's source was written", what);
    free(before);
    free(after);
    OK(ctx, gcr_graph_bind_input(s->g, 0, s->x));
    OK(ctx, gcr_graph_replay(s->g));
    gcr_tensor_free(e);
    gcr_tensor_free(src);
}

/* graphs: knobs.graphs; generic: every graph on the generic executor */
static void run_case(int graphs, int generic)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.graphs = graphs;
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) return;
    if (generic) gcr_exec_force(ctx, &gcr_generic_executor);
    char what[96];
    snprintf(what, sizeof what, "%s %s %s graphs=%d%s", cu_dev == GCR_DEVICE_CUDA ? "cuda" : "cpu",
             cur_dt == GCR_F16 ? "f16" : "f32", cur_fmt == GCR_NHWC ? "nhwc" : "nchw", graphs, generic ? " generic" : "");
    const int64_t xs[4] = {2, 5, 9, 7};
    setup s;
    if (make(&s, ctx, xs)) {
        test_errors_and_identity(ctx, &s);
        void *in, *o0, *o1;
        if (stage(&s, &in, &o0, &o1)) compare_rounds(&s, in, o0, o1, 4, what);
        expand_refused(&s, xs, what);
        /* rebound to another shape: the staged sizes no longer fit */
        const int64_t ys[4] = {3, 5, 6, 8};
        gcr_tensor *y = new_input(ctx, ys), *y2 = new_input(ctx, ys);
        OK(ctx, gcr_graph_bind_input(s.g, 0, y));
        OK(ctx, gcr_graph_bind_input(s.g2, 0, y2));
        gcr_status st = gcr_graph_replay(s.g);
        CHECK(st == GCR_ERR_SHAPE && strstr(gcr_ctx_error(ctx), "host buffer of input 0"), "%s: stale input size: %s %s", what,
              gcr_status_name(st), gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        /* that one failed replay unstaged every buffer that no longer fits, the outputs' too */
        st = gcr_graph_replay(s.g);
        CHECK(st == GCR_OK, "%s: the replay after the one that unstaged: %s %s", what, gcr_status_name(st), gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        OK(ctx, gcr_graph_replay(s.g2));
        if (stage(&s, &in, &o0, &o1)) compare_rounds(&s, in, o0, o1, 3, what);
        drop(&s);
        gcr_tensor_free(y);
        gcr_tensor_free(y2);
    }
    gcr_ctx_destroy(ctx);
}

/* retrace=0: a new signature of the same size (NCHW strides for an NHWC capture, or the reverse)
 * runs the op list eagerly, and the staging still copies in and out */
static void run_eager_fallback(void)
{
    gcr_ctx *ctx = cu_ctx(0, 8, 1);
    if (!ctx) return;
    const int64_t xs[4] = {2, 4, 5, 6};
    setup s;
    if (make(&s, ctx, xs)) {
        gcr_format other = cur_fmt == GCR_NHWC ? GCR_NCHW : GCR_NHWC;
        gcr_tensor *z = gcr_tensor_new(ctx, cur_dt, 4, xs, other);
        OK(ctx, gcr_graph_bind_input(s.g, 0, z));
        void *in, *o0, *o1;
        if (stage(&s, &in, &o0, &o1)) {
            size_t n;
            void *h = rand_bytes(ctx, cur_dt, xs, &n);
            memcpy(in, h, n);
            OK(ctx, gcr_graph_replay(s.g));
            gcr_tensor *zz = gcr_tensor_new(ctx, cur_dt, 4, xs, other), *ref[2];
            OK(ctx, gcr_tensor_from_host(zz, h, n));
            model(ctx, zz, s.w, s.b, ref);
            void *got[2] = {o0, o1};
            for (int o = 0; o < 2; o++) {
                size_t nb = gcr_tensor_nbytes(ref[o]);
                void *want = malloc(nb);
                OK(ctx, gcr_tensor_to_host(ref[o], want, nb));
                CHECK(!memcmp(got[o], want, nb), "retrace=0 eager replay: staged output %d differs from eager", o);
                free(want);
                gcr_tensor_free(ref[o]);
            }
            gcr_tensor_free(zz);
            free(h);
            expand_refused(&s, xs, "retrace=0");
            /* another shape: the input's buffer is found stale before anything runs, the outputs'
             * only once the op list has run (their shapes come from it); then it runs unstaged */
            const int64_t ys[4] = {3, 4, 6, 8};
            gcr_tensor *y = new_input(ctx, ys);
            OK(ctx, gcr_graph_bind_input(s.g, 0, y));
            static const char *const stale[2] = {"host buffer of input 0", "host buffer of output"};
            for (int k = 0; k < 2; k++) {
                gcr_status st = gcr_graph_replay(s.g);
                CHECK(st == GCR_ERR_SHAPE && strstr(gcr_ctx_error(ctx), stale[k]), "retrace=0: stale sizes, replay %d: %s %s",
                      k, gcr_status_name(st), gcr_ctx_error(ctx));
                gcr_ctx_clear_error(ctx);
            }
            OK(ctx, gcr_graph_replay(s.g));
            gcr_tensor_free(y);
        }
        drop(&s);
        gcr_tensor_free(z);
    }
    gcr_ctx_destroy(ctx);
}

/* a region's graph staged: the body's passes replay with the host buffers */
static void run_region(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    if (!ctx) return;
    const int64_t xs[4] = {1, 3, 8, 8}, ws[4] = {6, 3, 3, 3}, bs[1] = {6};
    gcr_tensor *w = gcr_tensor_set_const(h_rand_tensor(ctx, cur_dt, 4, ws, GCR_NCHW, -0.5f, 0.5f));
    gcr_tensor *b = gcr_tensor_set_const(h_rand_tensor(ctx, cur_dt, 1, bs, GCR_NCHW, -0.5f, 0.5f));
    gcr_tensor *x = new_input(ctx, xs), *xr = new_input(ctx, xs), *out[2] = {0};
    gcr_graph *g = NULL;
    void *in = NULL, *ob[2] = {0};
    for (int pass = 0; pass < 5; pass++) {
        size_t n;
        void *h = rand_bytes(ctx, cur_dt, xs, &n);
        if (in) memcpy(in, h, n);
        else OK(ctx, gcr_tensor_from_host(x, h, n));
        GCR_REGION(ctx, "staged") { model(ctx, x, w, b, out); }
        OK(ctx, gcr_ctx_status(ctx));
        if (pass == 0) {
            g = gcr_region_graph(ctx, "staged");
            if (!CHECK(g && gcr_graph_num_outputs(g) == 2, "region graph")) break;
            OK(ctx, gcr_graph_input_host(g, 0, n, &in));
            for (int o = 0; o < 2; o++)
                OK(ctx, gcr_graph_output_host(g, o, gcr_tensor_nbytes(gcr_graph_get_output(g, o)), &ob[o]));
            free(h);
            continue;
        }
        CHECK(gcr_region_graph(ctx, "staged") == g, "region pass %d: the same graph", pass);
        gcr_tensor *ref[2];
        OK(ctx, gcr_tensor_from_host(xr, h, n));
        model(ctx, xr, w, b, ref);
        float *want = h_read(ref[1]), *got = h_read(out[1]);
        CHECK_CLOSE(got, want, gcr_tensor_numel(ref[1]), cu_tol(cur_dt), cu_tol(cur_dt), "region pass output");
        free(want);
        free(got);
        for (int o = 0; o < 2; o++) {
            gcr_tensor *t = gcr_graph_get_output(g, o);
            size_t nb = gcr_tensor_nbytes(t);
            void *tb = malloc(nb);
            OK(ctx, gcr_tensor_to_host(t, tb, nb));
            CHECK(ob[o] && !memcmp(tb, ob[o], nb), "region pass %d: staged output %d differs from the output tensor", pass, o);
            free(tb);
            gcr_tensor_free(ref[o]);
        }
        free(h);
    }
    gcr_tensor_free(x);
    gcr_tensor_free(xr);
    gcr_tensor_free(w);
    gcr_tensor_free(b);
    gcr_ctx_destroy(ctx);
}

/* The staging of a strided input copies through a dense tensor of the graph's; planned at a replay
 * inside the caller's per-iteration scope, it must outlive that scope (the graph frees it) */
static void run_scoped_strided(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    if (!ctx) return;
    gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){3, 2}, GCR_NCHW, -1.0f, 1.0f);
    gcr_tensor *xt = gcr_permute(ctx, x, (int[]){1, 0}); /* [2,3], strided: the graph's input */
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_neg(ctx, xt);
    OK(ctx, gcr_capture_end(ctx, &g));
    void *in = NULL;
    OK(ctx, gcr_graph_input_host(g, 0, 6 * sizeof(float), &in));
    for (int it = 0; in && it < 4; it++) {
        uint64_t sc = gcr_scope_begin(ctx);
        for (int i = 0; i < 6; i++) ((float *)in)[i] = (float)(10 * it + i);
        /* tensors made between replays (reusing whatever the scope freed) keep their data */
        gcr_tensor *keep = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){2, 3}, GCR_NCHW,
                                                (float[]){-7, -7, -7, -7, -7, -7});
        OK(ctx, gcr_graph_replay(g));
        float got[6], k[6];
        OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
        OK(ctx, gcr_tensor_to_host(keep, k, sizeof k));
        for (int i = 0; i < 6; i++) {
            CHECK(got[i] == -(float)(10 * it + i), "scoped replay %d: y[%d] %g, want %g", it, i, got[i], -(float)(10 * it + i));
            CHECK(k[i] == -7, "scoped replay %d: an unrelated tensor changed: %g", it, k[i]);
        }
        gcr_scope_end(ctx, sc);
    }
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void all(void)
{
    const gcr_dtype dts[2] = {GCR_F32, GCR_F16};
    for (int d = 0; d < 2; d++)
        for (int f = 0; f < 2; f++) {
            cur_dt = dts[d];
            cur_fmt = f ? GCR_NHWC : GCR_NCHW;
            h_case = "staged replays";
            run_case(1, 0);
            if (cu_dev == GCR_DEVICE_CUDA) run_case(0, 0);
            h_case = "generic executor";
            run_case(1, 1);
            h_case = "retrace=0";
            run_eager_fallback();
            h_case = "region";
            run_region();
        }
    h_case = "strided input staged in a scope";
    run_scoped_strided();
}

int main(void)
{
    h_seed(20261126);
    cu_each_device(all);
    return h_finish();
}
