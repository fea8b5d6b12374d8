/* test_reduce.c — sum, mean and max on the CPU against double loops written here: single axes,
 * several axes, all axes, negative axes, keepdim on and off, inputs dense/NHWC/permuted/sliced,
 * each float dtype (reference from the rounded inputs as read back), empty reductions. */
#include "harness.h"

static const gcr_dtype FLOATS[] = {GCR_F32, GCR_F16, GCR_BF16};

typedef gcr_tensor *(*reduce_fn)(gcr_ctx *, gcr_tensor *, const int *, int, int);
static const struct { const char *name; reduce_fn fn; int op; } OPS[] = {
    {"sum", gcr_sum, 0}, {"mean", gcr_mean, 1}, {"max", gcr_max, 2},
};

/* reference: out[row-major over kept dims] of x [nd] over the axes marked in red */
static void reference(int op, const float *x, int nd, const int64_t *s, const int *red, float *out, int64_t on)
{
    double *acc = calloc((size_t)on + 1, sizeof *acc);
    int64_t *cnt = calloc((size_t)on + 1, sizeof *cnt);
    for (int64_t i = 0; i < on; i++) acc[i] = op == 2 ? -INFINITY : 0;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    for (int64_t l = 0; l < n; l++) {
        int64_t rem = l, o = 0, mul = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t i = rem % s[d];
            rem /= s[d];
            if (!red[d]) {
                o += i * mul;
                mul *= s[d];
            }
        }
        if (op == 2) acc[o] = fmax(acc[o], x[l]);
        else acc[o] += x[l];
        cnt[o]++;
    }
    for (int64_t i = 0; i < on; i++) out[i] = (float)(op == 1 ? acc[i] / (double)cnt[i] : acc[i]);
    free(acc);
    free(cnt);
}

static const struct { int nd; int64_t s[4]; } SHAPES[] = {
    {3, {3, 5, 7}}, {4, {2, 3, 5, 7}}, {2, {1, 1}}, {1, {13}}, {4, {2, 1, 3, 1}}, {2, {300, 7}},
};

static void run_case(gcr_ctx *ctx, int o, gcr_dtype dt, int si, int l, const int *axes, int naxes, int keepdim)
{
    int nd = SHAPES[si].nd;
    const int64_t *s = SHAPES[si].s;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    int red[8] = {0};
    char what[160];
    int k = snprintf(what, sizeof what, "%s %s shape#%d %s keepdim=%d axes", OPS[o].name, gcr_dtype_name(dt), si,
                     h_layout_name(l), keepdim);
    for (int i = 0; i < naxes; i++) {
        red[axes[i] < 0 ? axes[i] + nd : axes[i]] = 1;
        k += snprintf(what + k, sizeof what - k, " %d", axes[i]);
    }
    if (naxes == 0)
        for (int d = 0; d < nd; d++) red[d] = 1;
    int64_t os[8], on = 1;
    int ond = 0;
    for (int d = 0; d < nd; d++) {
        if (!red[d]) on *= (os[ond++] = s[d]);
        else if (keepdim) os[ond++] = 1;
    }
    uint64_t sc = gcr_scope_begin(ctx);
    float *host = h_randn(n, -3, 3);
    gcr_tensor *x = h_view(ctx, dt, nd, s, l, host);
    gcr_tensor *y = OPS[o].fn(ctx, x, axes, naxes, keepdim);
    int shape_ok = y && gcr_tensor_ndim(y) == ond && gcr_tensor_dtype(y) == dt;
    for (int d = 0; shape_ok && d < ond; d++) shape_ok = gcr_tensor_dim(y, d) == os[d];
    if (CHECK(shape_ok, "%s: result shape/dtype (%s)", what, gcr_ctx_error(ctx))) {
        float *xv = h_read(x), *got = h_read(y), *ref = malloc((size_t)on * 4 + 4);
        reference(OPS[o].op, xv, nd, s, red, ref, on);
        /* sums accumulate in f64 on the CPU, so only the final rounding differs */
        CHECK_CLOSE(got, ref, on, dt == GCR_F32 ? 1e-5f : 1e-2f, dt == GCR_F32 ? 1e-5f : 1e-2f, what);
        free(xv), free(got), free(ref);
    }
    gcr_ctx_clear_error(ctx);
    free(host);
    gcr_scope_end(ctx, sc);
}

static void test_axes(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int o = 0; o < 3; o++)
        for (int di = 0; di < 3; di++)
            for (int si = 0; si < (int)(sizeof SHAPES / sizeof *SHAPES); si++)
                for (int l = 0; l < H_LAYOUTS; l++)
                    for (int keep = 0; keep < 2; keep++) {
                        int nd = SHAPES[si].nd;
                        h_seed(1 + o * 1000 + di * 300 + si * 30 + l * 3 + keep);
                        run_case(ctx, o, FLOATS[di], si, l, NULL, 0, keep); /* all axes */
                        for (int a = 0; a < nd; a++) {                     /* each single axis */
                            run_case(ctx, o, FLOATS[di], si, l, &a, 1, keep);
                            int neg = a - nd;
                            run_case(ctx, o, FLOATS[di], si, l, &neg, 1, keep);
                        }
                        for (int a = 0; a < nd; a++) /* pairs, given in either order */
                            for (int b = 0; b < nd; b++)
                                if (a != b) run_case(ctx, o, FLOATS[di], si, l, (int[]){a, b}, 2, keep);
                        if (nd >= 3) {
                            run_case(ctx, o, FLOATS[di], si, l, (int[]){nd - 1, 0, 1}, 3, keep);
                            int all[4] = {3, 1, 2, 0};
                            if (nd == 4) run_case(ctx, o, FLOATS[di], si, l, all, 4, keep);
                        }
                    }
    gcr_ctx_destroy(ctx);
}

/* a sum over many elements stays accurate (f64 accumulation) and max finds the true maximum */
static void test_large(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t n = 1 << 20;
    float *host = h_randn(n, 0.0f, 1.0f);
    host[123457] = 5.0f;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 1, &n, GCR_NCHW, host);
    gcr_tensor *s = gcr_sum(ctx, x, NULL, 0, 0), *m = gcr_max(ctx, x, NULL, 0, 0);
    double ref = 0;
    for (int64_t i = 0; i < n; i++) ref += host[i];
    float got[1] = {0}, mx[1] = {0};
    CHECK_OK(ctx, gcr_tensor_to_host(s, got, 4));
    CHECK_OK(ctx, gcr_tensor_to_host(m, mx, 4));
    CHECK(fabs(got[0] - ref) <= 1e-6 * ref, "sum of 2^20: got %.9g want %.9g", got[0], ref);
    CHECK(mx[0] == 5.0f, "max %g", mx[0]);
    CHECK(gcr_tensor_ndim(s) == 0, "all-axes sum is 0-d");
    free(host);
    gcr_ctx_destroy(ctx);
}

static void test_empty(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t sh[] = {3, 0};
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 2, sh, GCR_NCHW);
    int ax = 1;
    gcr_tensor *s = gcr_sum(ctx, x, &ax, 1, 0), *m = gcr_mean(ctx, x, &ax, 1, 1);
    float a[3] = {1, 1, 1}, b[3] = {0, 0, 0};
    CHECK(s && gcr_tensor_ndim(s) == 1 && gcr_tensor_dim(s, 0) == 3, "sum over empty dim: %s", gcr_ctx_error(ctx));
    CHECK(m && gcr_tensor_ndim(m) == 2 && gcr_tensor_dim(m, 1) == 1, "mean keepdim over empty dim");
    CHECK_OK(ctx, gcr_tensor_to_host(s, a, 12));
    CHECK_OK(ctx, gcr_tensor_to_host(m, b, 12));
    CHECK(a[0] == 0 && a[1] == 0 && a[2] == 0, "empty sum is 0");
    CHECK(isnan(b[0]) && isnan(b[1]) && isnan(b[2]), "empty mean is NaN");
    /* reducing the non-empty axis of an empty tensor gives an empty result */
    ax = 0;
    gcr_tensor *e = gcr_sum(ctx, x, &ax, 1, 0);
    CHECK(e && gcr_tensor_numel(e) == 0 && gcr_tensor_dim(e, 0) == 0, "empty result");
    /* max of an empty dim has no value */
    ax = 1;
    CHECK(gcr_max(ctx, x, &ax, 1, 0) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "max over empty dim rejected");
    gcr_ctx_clear_error(ctx);
    gcr_ctx_destroy(ctx);
}

/* max propagates NaN like PyTorch; sum of a 0-d tensor is itself */
static void test_special(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t n = 5;
    float v[5] = {1, NAN, 3, 2, -1}, r = 0;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 1, &n, GCR_NCHW, v);
    CHECK_OK(ctx, gcr_tensor_to_host(gcr_max(ctx, x, NULL, 0, 0), &r, 4));
    CHECK(isnan(r), "max with a NaN is NaN (got %g)", r);
    float z = 2.5f;
    gcr_tensor *s = gcr_tensor_from_data(ctx, GCR_F32, 0, NULL, GCR_NCHW, &z);
    CHECK_OK(ctx, gcr_tensor_to_host(gcr_mean(ctx, s, NULL, 0, 0), &r, 4));
    CHECK(r == 2.5f, "mean of a 0-d tensor (got %g)", r);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_axes);
    RUN(test_large);
    RUN(test_empty);
    RUN(test_special);
    return h_finish();
}
