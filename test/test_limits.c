/* test_limits.c — sizes and parameters at the edges of the integer types: result shapes whose
 * byte count would wrap, INT_MAX / INT64_MAX window parameters and slice bounds, kernels whose
 * dilated extent overflows, empty captures. Each request either gives the exact result or fails
 * with a status and a message naming the op and the values passed, eagerly and under capture
 * alike, with no signed overflow (the SAN=1 build runs UBSan) and no crash. */
#include "capture_util.h"
#include <limits.h>

/* Huge requests must fail with NULL under ASan too, not abort the test (visible to the ASan
 * runtime although tests build with -fvisibility=hidden). */
__attribute__((visibility("default"), used)) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#define S(...) (int64_t[]){__VA_ARGS__}

static gcr_ctx *ctx;

/* a tensor of zeros-free random data, or of no elements at all when some dim is 0 */
static gcr_tensor *T(int nd, const int64_t *s) { return gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, nd, s, GCR_NCHW, -1, 1)); }

typedef gcr_tensor *(*op_fn)(const void *arg);

/* fn(arg) must return NULL with status st and a message holding each needle, both eagerly and
 * while capturing (at the call, not later) */
static void both_fail(op_fn fn, const void *arg, gcr_status st, const char *what, const char *const *needles)
{
    for (int capture = 0; capture <= 1; capture++) {
        if (capture) CHECK(gcr_capture_begin(ctx) == GCR_OK, "%s: capture_begin", what);
        gcr_tensor *r = fn(arg);
        const char *msg = gcr_ctx_error(ctx);
        CHECK(r == NULL, "%s (capture %d): returned a tensor", what, capture);
        CHECK(gcr_ctx_status(ctx) == st, "%s (capture %d): status %s, want %s (%s)", what, capture,
              gcr_status_name(gcr_ctx_status(ctx)), gcr_status_name(st), msg);
        for (int i = 0; needles[i]; i++)
            CHECK(strstr(msg, needles[i]) != NULL, "%s (capture %d): message \"%s\" lacks \"%s\"", what, capture, msg,
                  needles[i]);
        gcr_ctx_clear_error(ctx);
        if (capture) {
            gcr_graph *g = NULL;
            gcr_capture_end(ctx, &g);
            gcr_graph_destroy(g);
            gcr_ctx_clear_error(ctx);
        }
    }
}
#define BOTH_FAIL(fn, arg, st, ...) both_fail(fn, arg, st, #fn, (const char *const[]){__VA_ARGS__, NULL})

/* ---------------------------------------------------------------- result sizes */

static gcr_tensor *matmul_wrap(const void *arg)
{
    (void)arg;
    /* [1380655685,0] @ [0,3340214413]: 4.6e18 elements, whose f32 byte count wraps to 4 */
    return gcr_matmul(ctx, T(2, S(1380655685, 0)), T(2, S(0, 3340214413LL)));
}
static gcr_tensor *matmul_batch(const void *arg)
{
    (void)arg;
    return gcr_matmul(ctx, T(4, S(1 << 25, 1, 1, 0)), T(4, S(1, 1 << 25, 0, 1)));
}
static gcr_tensor *add_strides(const void *arg)
{
    (void)arg;
    /* no elements, but the result's row-major strides would be 2^92 */
    const int64_t big = (int64_t)1 << 46;
    return gcr_add(ctx, T(3, S(big, 0, 1)), T(3, S(1, 0, big)));
}
static gcr_tensor *linear_wide(const void *arg)
{
    (void)arg;
    return gcr_linear(ctx, T(2, S((int64_t)1 << 40, 0)), T(2, S((int64_t)1 << 40, 0)), NULL);
}
static gcr_tensor *reshape_zero(const void *arg)
{
    (void)arg;
    const int64_t big = (int64_t)1 << 40;
    return gcr_reshape(ctx, T(1, S(0)), 3, S(0, big, big));
}
static gcr_tensor *concat_many(const void *arg)
{
    (void)arg;
    gcr_tensor *x = T(2, S((int64_t)1 << 45, 0)), *xs[64];
    for (int i = 0; i < 64; i++) xs[i] = x;
    return gcr_concat(ctx, xs, 64, 0);
}

static void test_result_sizes(void)
{
    BOTH_FAIL(matmul_wrap, NULL, GCR_ERR_OOM, "matmul", "1380655685", "3340214413");
    BOTH_FAIL(matmul_batch, NULL, GCR_ERR_OOM, "matmul", "33554432");
    BOTH_FAIL(add_strides, NULL, GCR_ERR_OOM, "add", "70368744177664");
    BOTH_FAIL(linear_wide, NULL, GCR_ERR_OOM, "linear", "1099511627776");
    BOTH_FAIL(reshape_zero, NULL, GCR_ERR_SHAPE, "reshape", "0,1099511627776,1099511627776");
    BOTH_FAIL(concat_many, NULL, GCR_ERR_OOM, "concat", "35184372088832");
    /* a tensor of no elements but huge dims is fine while it fits */
    gcr_tensor *e = gcr_add(ctx, T(2, S((int64_t)1 << 30, 0)), T(1, S(1)));
    CHECK(e && gcr_tensor_numel(e) == 0 && gcr_tensor_dim(e, 0) == (int64_t)1 << 30, "empty broadcast: %s",
          gcr_ctx_error(ctx));
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "no error left behind: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
}

/* ---------------------------------------------------------------- window parameters */

static gcr_tensor *x8(void) { return T(4, S(1, 2, 8, 8)); }

static gcr_tensor *conv_with(const void *arg)
{
    return gcr_conv2d(ctx, x8(), T(4, S(3, 2, 3, 3)), NULL, (const gcr_conv2d_params *)arg);
}
static gcr_tensor *max_pool_with(const void *arg) { return gcr_max_pool2d(ctx, x8(), (const gcr_pool2d_params *)arg); }
static gcr_tensor *avg_pool_with(const void *arg) { return gcr_avg_pool2d(ctx, x8(), (const gcr_pool2d_params *)arg); }
static gcr_tensor *adaptive_with(const void *arg)
{
    const int *o = arg;
    return gcr_adaptive_avg_pool2d(ctx, x8(), o[0], o[1]);
}
/* a weight of no elements whose kernel height times the dilation passes int64 */
static gcr_tensor *conv_tall_kernel(const void *arg)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.dilation[0] = *(const int *)arg;
    return gcr_conv2d(ctx, x8(), T(4, S(0, 2, (int64_t)1 << 45, 1)), NULL, &p);
}

static void test_window_params(void)
{
    gcr_conv2d_params cp = gcr_conv2d_default();
    cp.padding[0] = INT_MAX;
    BOTH_FAIL(conv_with, &cp, GCR_ERR_PARAM, "conv2d", "padding", "2147483647");
    cp = gcr_conv2d_default();
    cp.padding[1] = -1;
    BOTH_FAIL(conv_with, &cp, GCR_ERR_PARAM, "conv2d", "padding", "-1");
    cp = gcr_conv2d_default();
    cp.dilation[1] = INT_MAX;
    BOTH_FAIL(conv_with, &cp, GCR_ERR_PARAM, "conv2d", "dilation", "2147483647");
    cp = gcr_conv2d_default();
    cp.stride[0] = INT_MAX;
    BOTH_FAIL(conv_with, &cp, GCR_ERR_PARAM, "conv2d", "stride", "2147483647");
    cp = gcr_conv2d_default();
    cp.groups = INT_MAX;
    BOTH_FAIL(conv_with, &cp, GCR_ERR_PARAM, "conv2d", "groups", "2147483647");
    int dil = 1 << 20;
    BOTH_FAIL(conv_tall_kernel, &dil, GCR_ERR_SHAPE, "conv2d", "f32[0,2,35184372088832,1]");
    dil = 1;
    BOTH_FAIL(conv_tall_kernel, &dil, GCR_ERR_SHAPE, "conv2d", "f32[0,2,35184372088832,1]");

    gcr_pool2d_params pp = gcr_pool2d_default(2);
    pp.padding[1] = INT_MAX; /* 2 * padding wrapped negative and passed "at most half the kernel" */
    BOTH_FAIL(max_pool_with, &pp, GCR_ERR_PARAM, "max_pool2d", "padding", "2147483647");
    BOTH_FAIL(avg_pool_with, &pp, GCR_ERR_PARAM, "avg_pool2d", "padding", "2147483647");
    pp = gcr_pool2d_default(INT_MAX);
    BOTH_FAIL(max_pool_with, &pp, GCR_ERR_PARAM, "max_pool2d", "kernel", "2147483647");
    pp = gcr_pool2d_default(2);
    pp.stride[0] = INT_MAX;
    BOTH_FAIL(avg_pool_with, &pp, GCR_ERR_PARAM, "avg_pool2d", "stride", "2147483647");
    pp = gcr_pool2d_default(2);
    pp.dilation[0] = INT_MAX;
    BOTH_FAIL(max_pool_with, &pp, GCR_ERR_PARAM, "max_pool2d", "dilation", "2147483647");
    pp = gcr_pool2d_default(3);
    pp.kernel[1] = INT_MIN;
    BOTH_FAIL(max_pool_with, &pp, GCR_ERR_PARAM, "max_pool2d", "kernel", "-2147483648");
    BOTH_FAIL(adaptive_with, ((int[]){INT_MAX, 1}), GCR_ERR_PARAM, "adaptive_avg_pool2d", "2147483647");
    BOTH_FAIL(adaptive_with, ((int[]){2, INT_MIN}), GCR_ERR_PARAM, "adaptive_avg_pool2d", "-2147483648");

    /* the largest accepted values still give PyTorch's shapes */
    pp = gcr_pool2d_default(2);
    pp.stride[0] = pp.stride[1] = 1 << 20;
    gcr_tensor *y = gcr_max_pool2d(ctx, x8(), &pp);
    CHECK(h_shape_is(y, 4, S(1, 2, 1, 1)), "max_pool2d stride 2^20 gives one window: %s", gcr_ctx_error(ctx));
    cp = gcr_conv2d_default();
    cp.padding[0] = 1 << 20;
    cp.stride[0] = 1 << 20;
    y = gcr_conv2d(ctx, x8(), T(4, S(3, 2, 3, 3)), NULL, &cp);
    CHECK(h_shape_is(y, 4, S(1, 3, 3, 6)), "conv2d padding 2^20 stride 2^20: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
}

/* ---------------------------------------------------------------- slice bounds */

static void slice_is(gcr_tensor *x, int64_t start, int64_t end, int64_t step, int n, const int *idx)
{
    gcr_tensor *y = gcr_slice(ctx, x, 0, start, end, step);
    if (!CHECK(y && gcr_tensor_numel(y) == n, "slice(%lld, %lld, %lld): %lld elements, want %d (%s)", (long long)start,
               (long long)end, (long long)step, (long long)gcr_tensor_numel(y), n, gcr_ctx_error(ctx)))
        return;
    float *a = h_read(y), *b = h_read(x);
    for (int i = 0; i < n; i++)
        CHECK(a[i] == b[idx[i]], "slice(%lld, %lld, %lld)[%d] = x[%d]", (long long)start, (long long)end,
              (long long)step, i, idx[i]);
    free(a);
    free(b);
}

static void test_slice_bounds(void)
{
    gcr_tensor *x = T(1, S(10));
    slice_is(x, 3, 10, INT64_MAX, 1, (int[]){3});
    slice_is(x, 0, INT64_MAX, INT64_MAX, 1, (int[]){0});
    slice_is(x, INT64_MIN, INT64_MAX, 4, 3, (int[]){0, 4, 8});
    slice_is(x, -3, INT64_MIN, 1, 0, NULL);
    slice_is(x, INT64_MAX, INT64_MAX, 1, 0, NULL);
    slice_is(x, -2, INT64_MAX, INT64_MAX - 1, 1, (int[]){8});
    slice_is(x, 1, 9, 7, 2, (int[]){1, 8});
    gcr_tensor *y = gcr_slice(ctx, x, 0, 0, 10, INT64_MIN);
    CHECK(!y && gcr_ctx_status(ctx) == GCR_ERR_PARAM && strstr(gcr_ctx_error(ctx), "-9223372036854775808"),
          "step INT64_MIN: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    y = gcr_slice(ctx, x, INT_MIN, 0, 10, 1);
    CHECK(!y && gcr_ctx_status(ctx) == GCR_ERR_PARAM && strstr(gcr_ctx_error(ctx), "-2147483648"),
          "dim INT_MIN: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
}

/* ---------------------------------------------------------------- empty captures */

static void test_empty_capture(void)
{
    gcr_graph *g = NULL;
    CHECK(gcr_capture_begin(ctx) == GCR_OK, "capture_begin");
    gcr_status s = gcr_capture_end(ctx, &g);
    CHECK(s == GCR_OK || g == NULL, "empty capture: %s (%s)", gcr_status_name(s), gcr_ctx_error(ctx));
    if (g) {
        CHECK(gcr_graph_num_inputs(g) == 0 && gcr_graph_num_outputs(g) == 0, "nothing in, nothing out");
        for (int i = 0; i < 3; i++) CHECK(gcr_graph_replay(g) == GCR_OK, "replay %d: %s", i, gcr_ctx_error(ctx));
    }
    gcr_graph_destroy(g);
    gcr_ctx_clear_error(ctx);
    for (int pass = 0; pass < 3; pass++) {
        GCR_REGION(ctx, "empty") {}
        CHECK(gcr_ctx_status(ctx) == GCR_OK, "empty region pass %d: %s", pass, gcr_ctx_error(ctx));
    }
    gcr_ctx_clear_error(ctx);
}

int main(void)
{
    h_seed(3);
    ctx = h_ctx(GCR_DEVICE_CPU);
    uint64_t sc = gcr_scope_begin(ctx);
    RUN(test_result_sizes);
    RUN(test_window_params);
    RUN(test_slice_bounds);
    RUN(test_empty_capture);
    gcr_scope_end(ctx, sc);
    gcr_ctx_destroy(ctx);
    return h_finish();
}
