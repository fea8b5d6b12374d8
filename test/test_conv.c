/* test_conv.c — conv2d on the CPU against a direct 7-loop reference in double: odd sizes,
 * strides 1-3, padding 0-2, dilation 1-2, groups 1/2/3, depthwise and channel multipliers,
 * 1x1/3x3/5x5 kernels, with and without bias, dense/NHWC/permuted inputs and permuted weights,
 * f32/f16/bf16, several seeds; plus parameter errors. */
#include "harness.h"

/* the input layouts these tests use are h_view's first three */
enum { L_DENSE = H_DENSE, L_NHWC = H_NHWC, L_PERM = H_PERMUTED, L_COUNT };
static const char *dname(gcr_dtype t) { return gcr_dtype_name(t); }

typedef struct cfg {
    int N, C, H, W, O, KH, KW, sh, sw, ph, pw, dh, dw, groups, bias;
} cfg;

static void ref_conv(const cfg *c, const float *x, const float *w, const float *b, int OH, int OW, float *out)
{
    int Cg = c->C / c->groups, Og = c->O / c->groups;
    for (int n = 0; n < c->N; n++)
        for (int o = 0; o < c->O; o++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double s = b ? b[o] : 0.0;
                    int g = o / Og;
                    for (int ci = 0; ci < Cg; ci++)
                        for (int kh = 0; kh < c->KH; kh++)
                            for (int kw = 0; kw < c->KW; kw++) {
                                int ih = oh * c->sh - c->ph + kh * c->dh, iw = ow * c->sw - c->pw + kw * c->dw;
                                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                                s += (double)x[((n * c->C + g * Cg + ci) * c->H + ih) * c->W + iw] *
                                     w[((o * Cg + ci) * c->KH + kh) * c->KW + kw];
                            }
                    out[((n * c->O + o) * OH + oh) * OW + ow] = (float)s;
                }
}

static const cfg cases[] = {
    /* N  C  H   W   O  KH KW sh sw ph pw dh dw  g  bias */
    {2, 3, 7, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* plain 3x3 */
    {2, 3, 7, 5, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},   /* 1x1 stride 1: x read as the GEMM operand */
    {1, 8, 6, 7, 16, 1, 1, 2, 2, 0, 0, 1, 1, 1, 1},  /* 1x1 strided: im2col */
    {1, 4, 9, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, 2, 1},   /* groups 2 */
    {2, 6, 5, 7, 9, 3, 3, 1, 1, 0, 2, 1, 1, 3, 1},   /* groups 3, asymmetric padding */
    {2, 6, 11, 10, 6, 3, 3, 1, 2, 2, 1, 2, 1, 6, 1}, /* depthwise, dilated */
    {1, 5, 13, 12, 5, 5, 5, 2, 2, 2, 2, 1, 1, 5, 0}, /* depthwise 5x5 stride 2 */
    {2, 7, 6, 9, 7, 3, 3, 3, 1, 0, 1, 1, 2, 7, 0},   /* depthwise stride 3, dilation 2 in w */
    {1, 4, 7, 7, 8, 3, 3, 2, 1, 1, 1, 1, 1, 4, 1},   /* groups == C with 2 outputs per channel */
    {2, 4, 8, 9, 7, 5, 5, 3, 1, 2, 0, 1, 2, 1, 1},   /* 5x5 stride 3 */
    {1, 3, 5, 5, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1},   /* padding 2 with dilation 2 */
    {1, 32, 11, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, /* K 288: two K blocks of the GEMM */
    {1, 300, 5, 3, 150, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* M 150 > one M block, K 300 */
};

static void run_case(gcr_ctx *ctx, const cfg *c, gcr_dtype dt, int xl, int wl, uint64_t seed)
{
    char what[256];
    snprintf(what, sizeof what, "conv N%d C%d %dx%d O%d k%dx%d s%d,%d p%d,%d d%d,%d g%d b%d %s x:%s w:%s seed %llu", c->N, c->C,
             c->H, c->W, c->O, c->KH, c->KW, c->sh, c->sw, c->ph, c->pw, c->dh, c->dw, c->groups, c->bias, dname(dt), h_layout_name(xl),
             h_layout_name(wl), (unsigned long long)seed);
    h_seed(seed);
    int64_t xs[4] = {c->N, c->C, c->H, c->W}, ws[4] = {c->O, c->C / c->groups, c->KH, c->KW}, bs[1] = {c->O};
    int64_t nx = xs[0] * xs[1] * xs[2] * xs[3], nw = ws[0] * ws[1] * ws[2] * ws[3];
    float *hx = h_randn(nx, -1, 1), *hw = h_randn(nw, -1, 1), *hb = h_randn(c->O, -1, 1);
    gcr_tensor *x = h_view_unchecked(ctx, dt, 4, xs, xl, hx), *w = h_view_unchecked(ctx, dt, 4, ws, wl, hw);
    gcr_tensor *b = c->bias ? h_tensor(ctx, dt, 1, bs, GCR_NCHW, hb) : NULL;
    gcr_conv2d_params p = {{c->sh, c->sw}, {c->ph, c->pw}, {c->dh, c->dw}, c->groups};
    gcr_tensor *y = gcr_conv2d(ctx, x, w, b, &p);
    if (!CHECK(y != NULL, "%s: %s", what, gcr_ctx_error(ctx))) {
        gcr_ctx_clear_error(ctx);
        goto out;
    }
    int OH = (int)gcr_tensor_dim(y, 2), OW = (int)gcr_tensor_dim(y, 3);
    int eh = (c->H + 2 * c->ph - c->dh * (c->KH - 1) - 1) / c->sh + 1, ew = (c->W + 2 * c->pw - c->dw * (c->KW - 1) - 1) / c->sw + 1;
    CHECK(gcr_tensor_dim(y, 0) == c->N && gcr_tensor_dim(y, 1) == c->O && OH == eh && OW == ew, "%s: shape", what);
    CHECK(gcr_tensor_dtype(y) == dt, "%s: dtype", what);
    CHECK(gcr_tensor_format(y) == (xl == L_NHWC ? GCR_NHWC : GCR_NCHW), "%s: format follows x", what);
    /* the reference sees the same rounded inputs as the kernel */
    float *rx = h_read(x), *rw = h_read(w), *rb = b ? h_read(b) : NULL;
    int64_t ny = (int64_t)c->N * c->O * OH * OW;
    float *ref = malloc((size_t)ny * sizeof *ref), *got = h_read(y);
    ref_conv(c, rx, rw, rb, OH, OW, ref);
    float big = 0;
    for (int64_t i = 0; i < ny; i++) big = fabsf(ref[i]) > big ? fabsf(ref[i]) : big;
    CHECK(big > 0.1f, "%s: reference is not trivially small (%g)", what, big);
    float tol = dt == GCR_F32 ? 1e-4f : 1e-2f;
    CHECK_CLOSE(got, ref, ny, tol, tol, what);
    free(rx);
    free(rw);
    free(rb);
    free(ref);
    free(got);
    gcr_tensor_free(y);
out:
    gcr_tensor_free(x);
    gcr_tensor_free(w);
    gcr_tensor_free(b);
    free(hx);
    free(hw);
    free(hb);
}

static void test_conv_f32_layouts(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int xl = 0; xl < L_COUNT; xl++)
            for (uint64_t seed = 1; seed <= 2; seed++) run_case(ctx, &cases[i], GCR_F32, xl, seed == 2 ? L_PERM : L_DENSE, seed * 7919 + i);
    gcr_ctx_destroy(ctx);
}

static void test_conv_half(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int xl = 0; xl < L_COUNT; xl++) {
            run_case(ctx, &cases[i], GCR_F16, xl, L_DENSE, 31 + i);
            run_case(ctx, &cases[i], GCR_BF16, xl, xl == L_PERM ? L_PERM : L_DENSE, 57 + i);
        }
    gcr_ctx_destroy(ctx);
}

/* a strided bias (every other element of a longer vector) and a sliced (strided) input */
static void test_conv_strided_bias_and_slice(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    h_seed(99);
    int64_t xs[4] = {2, 3, 7, 11}, ws[4] = {5, 3, 3, 3}, bs[1] = {10};
    float *hx = h_randn(2 * 3 * 7 * 11, -1, 1), *hw = h_randn(5 * 27, -1, 1), *hb = h_randn(10, -1, 1);
    gcr_tensor *xb = h_tensor(ctx, GCR_F32, 4, xs, GCR_NCHW, hx), *w = h_tensor(ctx, GCR_F32, 4, ws, GCR_NCHW, hw);
    gcr_tensor *bb = h_tensor(ctx, GCR_F32, 1, bs, GCR_NCHW, hb);
    gcr_tensor *x = gcr_slice(ctx, xb, 3, 1, 10, 2); /* W 11 -> 5, stride 2 */
    gcr_tensor *b = gcr_slice(ctx, bb, 0, 0, 10, 2);
    gcr_conv2d_params p = {{1, 2}, {1, 1}, {1, 1}, 1};
    gcr_tensor *y = gcr_conv2d(ctx, x, w, b, &p);
    if (CHECK(y != NULL, "conv on slices: %s", gcr_ctx_error(ctx))) {
        cfg c = {2, 3, 7, 5, 5, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1};
        float *rx = h_read(x), *rb = h_read(b), *got = h_read(y);
        int OH = (int)gcr_tensor_dim(y, 2), OW = (int)gcr_tensor_dim(y, 3);
        float *ref = malloc((size_t)(2 * 5 * OH * OW) * sizeof *ref);
        ref_conv(&c, rx, hw, rb, OH, OW, ref);
        CHECK_CLOSE(got, ref, 2 * 5 * OH * OW, 1e-4f, 1e-4f, "conv on sliced x and strided bias");
        free(rx);
        free(rb);
        free(got);
        free(ref);
    }
    gcr_ctx_destroy(ctx);
    free(hx);
    free(hw);
    free(hb);
}

static void test_conv_errors(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    int64_t xs[4] = {1, 4, 5, 5}, ws[4] = {6, 4, 3, 3};
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 4, xs, GCR_NCHW), *w = gcr_tensor_new(ctx, GCR_F32, 4, ws, GCR_NCHW);
    gcr_conv2d_params p = gcr_conv2d_default();
    p.groups = 3;
    CHECK(gcr_conv2d(ctx, x, w, NULL, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "groups 3 on C 4 rejected");
    CHECK(strstr(gcr_ctx_error(ctx), "conv2d") != NULL, "message names the op: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    p = gcr_conv2d_default();
    p.stride[1] = 0;
    CHECK(gcr_conv2d(ctx, x, w, NULL, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "stride 0 rejected");
    gcr_ctx_clear_error(ctx);
    p = gcr_conv2d_default();
    p.dilation[0] = 3; /* 3x3 kernel dilated 3 spans 7 > 5 */
    CHECK(gcr_conv2d(ctx, x, w, NULL, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "window larger than input");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_conv2d(ctx, x, NULL, NULL, NULL) == NULL && gcr_ctx_status(ctx) == GCR_ERR_INVALID, "NULL weight");
    gcr_ctx_destroy(ctx);
}

/* no input channels: the result is the bias alone. The weight [2,0,1,1] is an expand view, whose
 * strides already match the CPU kernel's layout, so the kernel reads it in place: it has no data */
static void test_conv_empty_weight_view(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    int64_t xs[4] = {1, 0, 2, 2}, w1s[4] = {1, 0, 1, 1}, ws[4] = {2, 0, 1, 1}, bs[1] = {2};
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 4, xs, GCR_NCHW);
    gcr_tensor *w = gcr_expand(ctx, gcr_tensor_new(ctx, GCR_F32, 4, w1s, GCR_NCHW), 4, ws);
    gcr_tensor *b = h_tensor(ctx, GCR_F32, 1, bs, GCR_NCHW, (float[]){3, 4});
    gcr_tensor *y = gcr_conv2d(ctx, x, w, b, NULL);
    if (CHECK(y != NULL, "conv with an empty expanded weight: %s", gcr_ctx_error(ctx))) {
        float *got = h_read(y), ref[8] = {3, 3, 3, 3, 4, 4, 4, 4};
        CHECK_CLOSE(got, ref, 8, 0, 0, "empty reduction gives the bias");
        free(got);
    }
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_conv_f32_layouts);
    RUN(test_conv_half);
    RUN(test_conv_strided_bias_and_slice);
    RUN(test_conv_errors);
    RUN(test_conv_empty_weight_view);
    return h_finish();
}
