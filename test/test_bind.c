/* test_bind.c — gcr_graph_bind_input with an input of another rank or size: every op that takes
 * an axis, a negative index or a size-dependent value applies it as the caller wrote it to the
 * new input (as an eager call on that input would), with knobs.retrace 1 (re-specialised graph)
 * and 0 (eager interpreter); where a parameter as written cannot apply (a literal reshape, a
 * permutation of another length, an axis past the new rank), the replay fails loudly naming the
 * op and the values. Each case captures on one shape, binds another, replays, and compares with
 * eager on fresh random data. A reshape captured as a view, bound to a strided input, gives eager's
 * result too (the op list runs as the API would). A graph's own output bound as its input reads the
 * values it held before the replay. */
#include "capture_util.h"

typedef gcr_tensor *(*model_fn)(gcr_ctx *ctx, gcr_tensor *x);

static gcr_tensor *m_softmax_mean(gcr_ctx *ctx, gcr_tensor *x)
{
    int ax = -1;
    return gcr_add(ctx, gcr_softmax(ctx, x, -1), gcr_mean(ctx, x, &ax, 1, 1));
}
static gcr_tensor *m_sum_last(gcr_ctx *ctx, gcr_tensor *x) { return gcr_sum(ctx, x, (int[]){-1}, 1, 0); }
static gcr_tensor *m_max_mid(gcr_ctx *ctx, gcr_tensor *x) { return gcr_max(ctx, x, (int[]){-2}, 1, 0); }
static gcr_tensor *m_mean_ends(gcr_ctx *ctx, gcr_tensor *x) { return gcr_mean(ctx, x, (int[]){-1, 0}, 2, 1); }
static gcr_tensor *m_sum_all(gcr_ctx *ctx, gcr_tensor *x) { return gcr_exp(ctx, gcr_sum(ctx, x, NULL, 0, 0)); }
static gcr_tensor *m_softmax_m2(gcr_ctx *ctx, gcr_tensor *x) { return gcr_softmax(ctx, x, -2); }
static gcr_tensor *m_concat_last(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_concat(ctx, (gcr_tensor *[]){x, gcr_exp(ctx, x)}, 2, -1);
}
static gcr_tensor *m_slice_end(gcr_ctx *ctx, gcr_tensor *x) { return gcr_exp(ctx, gcr_slice(ctx, x, 0, 0, -2, 1)); }
static gcr_tensor *m_slice_last(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_neg(ctx, gcr_slice(ctx, x, -1, -5, INT64_MAX, 2));
}
static gcr_tensor *m_flatten(gcr_ctx *ctx, gcr_tensor *x) { return gcr_relu(ctx, gcr_flatten(ctx, x, 1, -1)); }
static gcr_tensor *m_flatten_tail(gcr_ctx *ctx, gcr_tensor *x) { return gcr_abs(ctx, gcr_flatten(ctx, x, -2, -1)); }
/* perm is padded with zeros so that the eager twin on a 3-d input reads a (repeated) entry */
static gcr_tensor *m_permute(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_exp(ctx, gcr_permute(ctx, x, (int[GCR_MAX_DIMS]){1, 0}));
}
static gcr_tensor *m_reshape_infer(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_sigmoid(ctx, gcr_reshape(ctx, x, 2, (int64_t[]){-1, 4}));
}
static gcr_tensor *m_reshape_flat(gcr_ctx *ctx, gcr_tensor *x) { return gcr_tanh(ctx, gcr_reshape(ctx, x, 1, (int64_t[]){-1})); }
static gcr_tensor *m_reshape_literal(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_exp(ctx, gcr_reshape(ctx, x, 2, (int64_t[]){4, 6}));
}
static gcr_tensor *m_sum_axis2(gcr_ctx *ctx, gcr_tensor *x) { return gcr_sum(ctx, x, (int[]){2}, 1, 0); }
/* a view straight out of the graph, and a chain whose view feeds a reduction */
static gcr_tensor *m_flatten_view(gcr_ctx *ctx, gcr_tensor *x) { return gcr_flatten(ctx, gcr_exp(ctx, x), 0, -2); }
static gcr_tensor *m_slice_sum(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_sum(ctx, gcr_slice(ctx, gcr_exp(ctx, x), -2, 1, -1, 1), (int[]){-1}, 1, 1);
}

/* y (a graph output) against model on x run eagerly: same shape, same values */
static void same_as_eager(gcr_ctx *ctx, model_fn model, gcr_tensor *y, gcr_tensor *x, const char *what)
{
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *r = model(ctx, x);
    int same_shape = r && gcr_tensor_ndim(y) == gcr_tensor_ndim(r);
    for (int d = 0; same_shape && d < gcr_tensor_ndim(r); d++) same_shape = gcr_tensor_dim(y, d) == gcr_tensor_dim(r, d);
    char b1[96], b2[96];
    if (CHECK(same_shape, "%s: graph output %s, eager %s (%s)", what, gcr_tensor_describe(y, b1, sizeof b1),
              gcr_tensor_describe(r, b2, sizeof b2), gcr_ctx_error(ctx))) {
        float *a = h_read(y), *e = h_read(r);
        CHECK_CLOSE(a, e, gcr_tensor_numel(r), 1e-5f, 1e-5f, what);
        free(a);
        free(e);
    }
    gcr_scope_end(ctx, sc);
}

typedef struct bind_case {
    const char *name;
    model_fn model;
    int nd1, nd2;
    int64_t s1[4], s2[4];
} bind_case;

/* composites: repeat (a leading new dim too) and nearest upsampling record no size of x */
static gcr_tensor *m_repeat(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_exp(ctx, gcr_repeat(ctx, x, 3, (int64_t[]){2, 1, 3}));
}
static gcr_tensor *m_upsample(gcr_ctx *ctx, gcr_tensor *x) { return gcr_neg(ctx, gcr_upsample_nearest2d(ctx, x, 2, 3)); }

/* matmul with a 1-d operand (x's column sums, or row sums), lifted to 2-d and dropped after */
static gcr_tensor *m_matvec(gcr_ctx *ctx, gcr_tensor *x) { return gcr_matmul(ctx, x, gcr_sum(ctx, x, (int[]){0}, 1, 0)); }
static gcr_tensor *m_vecmat(gcr_ctx *ctx, gcr_tensor *x) { return gcr_matmul(ctx, gcr_sum(ctx, x, (int[]){1}, 1, 0), x); }

static const bind_case good[] = {
    {"matmul(x, colsum) [3,4]->[5,6]", m_matvec, 2, 2, {3, 4}, {5, 6}},
    {"matmul(rowsum, x) [3,4]->[5,6]", m_vecmat, 2, 2, {3, 4}, {5, 6}},
    {"repeat(2,1,3) [3,4]->[5,7]", m_repeat, 2, 2, {3, 4}, {5, 7}},
    {"repeat(2,1,3) [2,3,4]->[4,3,5]", m_repeat, 3, 3, {2, 3, 4}, {4, 3, 5}},
    {"upsample(2,3) [1,2,3,4]->[2,3,5,2]", m_upsample, 4, 4, {1, 2, 3, 4}, {2, 3, 5, 2}},
    {"softmax+mean(-1) [3,5]->[2,3,5]", m_softmax_mean, 2, 3, {3, 5}, {2, 3, 5}},
    {"sum(-1) [4,8]->[2,4,8]", m_sum_last, 2, 3, {4, 8}, {2, 4, 8}},
    {"sum(-1) [2,4,8]->[4,8]", m_sum_last, 3, 2, {2, 4, 8}, {4, 8}},
    {"max(-2) [4,8]->[3,4,8]", m_max_mid, 2, 3, {4, 8}, {3, 4, 8}},
    {"mean(-1,0) keepdim [4,8]->[2,3,5]", m_mean_ends, 2, 3, {4, 8}, {2, 3, 5}},
    {"sum(all) [4,8]->[2,3,5]", m_sum_all, 2, 3, {4, 8}, {2, 3, 5}},
    {"softmax(-2) [3,5]->[2,4,5,3]", m_softmax_m2, 2, 4, {3, 5}, {2, 4, 5, 3}},
    {"concat(-1) [3,4]->[2,3,4]", m_concat_last, 2, 3, {3, 4}, {2, 3, 4}},
    {"slice(0,0,-2) [10]->[12]", m_slice_end, 1, 1, {10}, {12}},
    {"slice(-1,-5,end,2) [4,6]->[2,4,9]", m_slice_last, 2, 3, {4, 6}, {2, 4, 9}},
    {"flatten(1,-1) [2,3,4]->[2,3,4,5]", m_flatten, 3, 4, {2, 3, 4}, {2, 3, 4, 5}},
    {"flatten(-2,-1) [2,3,4]->[5,6]", m_flatten_tail, 3, 2, {2, 3, 4}, {5, 6}},
    {"permute(1,0) [3,4]->[5,6]", m_permute, 2, 2, {3, 4}, {5, 6}},
    {"reshape(-1,4) [3,8]->[5,8]", m_reshape_infer, 2, 2, {3, 8}, {5, 8}},
    {"reshape(-1) [3,4]->[2,3,4]", m_reshape_flat, 2, 3, {3, 4}, {2, 3, 4}},
    {"reshape(4,6) [4,6]->[2,12]", m_reshape_literal, 2, 2, {4, 6}, {2, 12}},
    {"flatten(0,-2) view out [2,3,4]->[3,4]", m_flatten_view, 3, 2, {2, 3, 4}, {3, 4}},
    {"slice(-2,1,-1)+sum [3,5]->[2,6,4]", m_slice_sum, 2, 3, {3, 5}, {2, 6, 4}},
};

typedef struct bad_case {
    const char *name;
    model_fn model;
    int nd1, nd2;
    int64_t s1[4], s2[4];
    gcr_status st;
    const char *needle[3]; /* the op, and the values the caller passed */
} bad_case;

static const bad_case bad[] = {
    {"reshape(4,6) [4,6]->[5,6]", m_reshape_literal, 2, 2, {4, 6}, {5, 6}, GCR_ERR_SHAPE, {"reshape", "f32[5,6]", "4,6"}},
    {"permute(1,0) [3,4]->[2,3,4]", m_permute, 2, 3, {3, 4}, {2, 3, 4}, GCR_ERR_PARAM, {"permute", "f32[2,3,4]", "2 entries"}},
    {"sum(2) [2,3,4]->[3,4]", m_sum_axis2, 3, 2, {2, 3, 4}, {3, 4}, GCR_ERR_PARAM, {"sum", "axis 2", "f32[3,4]"}},
};

/* model(x1) captured into *g; on failure a failed check, ctx destroyed, and NULL */
static gcr_tensor *capture(gcr_ctx *ctx, model_fn model, gcr_tensor *x1, gcr_graph **g, const char *name)
{
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = model(ctx, x1);
    OK(ctx, gcr_capture_end(ctx, g));
    if (CHECK(*g && y, "%s: capture: %s", name, gcr_ctx_error(ctx))) return y;
    gcr_ctx_destroy(ctx);
    return NULL;
}

static void run_good(const bind_case *k, int retrace)
{
    gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
    char what[160];
    gcr_tensor *x1 = h_rand_tensor(ctx, GCR_F32, k->nd1, k->s1, GCR_NCHW, -2, 2);
    gcr_graph *g = NULL;
    gcr_tensor *y = capture(ctx, k->model, x1, &g, k->name);
    if (!y) return;
    snprintf(what, sizeof what, "%s retrace %d: capture pass", k->name, retrace);
    same_as_eager(ctx, k->model, y, x1, what);
    gcr_tensor *x2 = h_rand_tensor(ctx, GCR_F32, k->nd2, k->s2, GCR_NCHW, -2, 2);
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    for (int it = 0; it < 3; it++) {
        if (it > 0) cu_refill(x2, 0);
        gcr_status s = gcr_graph_replay(g);
        snprintf(what, sizeof what, "%s retrace %d: bound, replay %d", k->name, retrace, it);
        if (!CHECK(s == GCR_OK, "%s: %s: %s", what, gcr_status_name(s), gcr_ctx_error(ctx))) break;
        same_as_eager(ctx, k->model, y, x2, what);
    }
    /* and back to the captured shape */
    OK(ctx, gcr_graph_bind_input(g, 0, x1));
    cu_refill(x1, 0);
    OK(ctx, gcr_graph_replay(g));
    snprintf(what, sizeof what, "%s retrace %d: bound back", k->name, retrace);
    same_as_eager(ctx, k->model, y, x1, what);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void run_bad(const bad_case *k, int retrace)
{
    gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
    gcr_tensor *x1 = h_rand_tensor(ctx, GCR_F32, k->nd1, k->s1, GCR_NCHW, -2, 2);
    gcr_graph *g = NULL;
    gcr_tensor *y = capture(ctx, k->model, x1, &g, k->name);
    if (!y) return;
    gcr_tensor *x2 = h_rand_tensor(ctx, GCR_F32, k->nd2, k->s2, GCR_NCHW, -2, 2);
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    gcr_status s = gcr_graph_replay(g);
    const char *msg = gcr_ctx_error(ctx);
    CHECK(s == k->st, "%s retrace %d: replay %s, want %s (%s)", k->name, retrace, gcr_status_name(s),
          gcr_status_name(k->st), msg);
    for (int i = 0; i < 3 && k->needle[i]; i++)
        CHECK(strstr(msg, k->needle[i]) != NULL, "%s retrace %d: message \"%s\" lacks \"%s\"", k->name, retrace, msg,
              k->needle[i]);
    /* the eager call on the new input fails the same way */
    gcr_ctx_clear_error(ctx);
    CHECK(k->model(ctx, x2) == NULL && gcr_ctx_status(ctx) == k->st, "%s: eager twin: %s", k->name,
          gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    /* the graph still serves its captured shape */
    OK(ctx, gcr_graph_bind_input(g, 0, x1));
    OK(ctx, gcr_graph_replay(g));
    char what[160];
    snprintf(what, sizeof what, "%s retrace %d: bound back after the failure", k->name, retrace);
    same_as_eager(ctx, k->model, y, x1, what);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void test_bind_other_shape(void)
{
    for (int retrace = 0; retrace <= 1; retrace++)
        for (size_t i = 0; i < sizeof good / sizeof *good; i++) run_good(&good[i], retrace);
}

static void test_bind_inapplicable(void)
{
    for (int retrace = 0; retrace <= 1; retrace++)
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) run_bad(&bad[i], retrace);
}

/* a reshape made on a strided input copies it first (an API choice, kept by the graph): bound to a
 * contiguous input it still gives eager's result; made on a contiguous input it is a view, which
 * cannot hold a strided input, so bound to one the replay runs the op list as the API would (a
 * copy, then the view) and gives eager's result too, never the wrong elements */
static void test_bind_strides(void)
{
    for (int retrace = 0; retrace <= 1; retrace++) {
        gcr_ctx *ctx = cu_ctx(retrace, 8, 1);
        gcr_tensor *base = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){4, 3}, GCR_NCHW, -2, 2);
        gcr_tensor *strided = gcr_permute(ctx, base, (int[]){1, 0});
        gcr_tensor *dense = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){3, 4}, GCR_NCHW, -2, 2);
        for (int start_strided = 0; start_strided <= 1; start_strided++) {
            gcr_tensor *x1 = start_strided ? strided : dense, *x2 = start_strided ? dense : strided;
            gcr_graph *g = NULL;
            OK(ctx, gcr_capture_begin(ctx));
            gcr_tensor *y = m_reshape_flat(ctx, x1);
            OK(ctx, gcr_capture_end(ctx, &g));
            OK(ctx, gcr_graph_bind_input(g, 0, x2));
            gcr_status s = gcr_graph_replay(g);
            char what[96];
            snprintf(what, sizeof what, "retrace %d: captured %s, bound %s", retrace, start_strided ? "strided" : "dense",
                     start_strided ? "dense" : "strided");
            if (CHECK(s == GCR_OK, "%s: %s", what, gcr_ctx_error(ctx))) same_as_eager(ctx, m_reshape_flat, y, x2, what);
            gcr_ctx_clear_error(ctx);
            gcr_graph_destroy(g);
        }
        gcr_ctx_destroy(ctx);
    }
}

static gcr_tensor *m_add_transposed(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_add(ctx, x, gcr_permute(ctx, x, (int[GCR_MAX_DIMS]){1, 0}));
}
static gcr_tensor *m_square_plus_t(gcr_ctx *ctx, gcr_tensor *x)
{
    return gcr_add(ctx, gcr_mul_scalar(ctx, gcr_matmul(ctx, x, x), 0.25f), gcr_permute(ctx, x, (int[GCR_MAX_DIMS]){1, 0}));
}

/* A graph's own output bound as its input, as a recurrent loop does: each replay reads the values
 * the output held before it, as the eager calls would, never elements it has already overwritten
 * (fused and unfused, 3 steps). A staged input there is refused. */
static void test_bind_own_output(void)
{
    static const model_fn models[] = {m_add_transposed, m_square_plus_t};
    for (int fusion = 0; fusion <= 1; fusion++)
        for (int m = 0; m < 2; m++) {
            gcr_ctx *ctx = cu_ctx(1, 8, 1);
            gcr_knobs kn = gcr_ctx_opts_default().knobs;
            kn.fusion = fusion;
            OK(ctx, gcr_ctx_set_knobs(ctx, &kn));
            gcr_tensor *x = h_rand_tensor(ctx, GCR_F32, 2, (int64_t[]){7, 7}, GCR_NCHW, -1, 1);
            gcr_graph *g = NULL;
            OK(ctx, gcr_capture_begin(ctx));
            gcr_tensor *y = models[m](ctx, x);
            OK(ctx, gcr_capture_end(ctx, &g));
            OK(ctx, gcr_graph_bind_input(g, 0, y));
            for (int step = 0; step < 3; step++) {
                gcr_tensor *before = gcr_contiguous(ctx, y, GCR_NCHW); /* a copy of y's values now */
                char what[96];
                snprintf(what, sizeof what, "model %d fusion %d: output bound as input, step %d", m, fusion, step);
                if (!CHECK(gcr_graph_replay(g) == GCR_OK, "%s: %s", what, gcr_ctx_error(ctx))) break;
                same_as_eager(ctx, models[m], y, before, what);
                gcr_tensor_free(before);
            }
            void *hb = NULL;
            OK(ctx, gcr_graph_input_host(g, 0, gcr_tensor_nbytes(y), &hb));
            gcr_status s = gcr_graph_replay(g);
            CHECK(s == GCR_ERR_INVALID && strstr(gcr_ctx_error(ctx), "staged"),
                  "model %d fusion %d: a staged input that is the graph's output: %s (%s)", m, fusion, gcr_status_name(s),
                  gcr_ctx_error(ctx));
            gcr_graph_destroy(g);
            gcr_ctx_destroy(ctx);
        }
}

/* the issue's example in numbers: softmax(x)+mean(x) of a [2,3,5] input bound to a [3,5] graph */
static void test_issue_example(void)
{
    gcr_ctx *ctx = cu_ctx(1, 8, 1);
    float h[30];
    for (int i = 0; i < 30; i++) h[i] = (float)(i % 7) * 0.25f - 0.5f;
    gcr_tensor *x1 = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){3, 5}, GCR_NCHW, h);
    gcr_tensor *x2 = gcr_tensor_from_data(ctx, GCR_F32, 3, (int64_t[]){2, 3, 5}, GCR_NCHW, h);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = m_softmax_mean(ctx, x1);
    OK(ctx, gcr_capture_end(ctx, &g));
    OK(ctx, gcr_graph_bind_input(g, 0, x2));
    OK(ctx, gcr_graph_replay(g));
    same_as_eager(ctx, m_softmax_mean, y, x2, "issue example");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void all(void)
{
    RUN(test_issue_example);
    RUN(test_bind_other_shape);
    RUN(test_bind_inapplicable);
    RUN(test_bind_strides);
    RUN(test_bind_own_output);
}

int main(void)
{
    h_seed(11);
    cu_each_device(all);
    return h_finish();
}
