/* test_pool.c — max_pool2d, avg_pool2d and adaptive_avg_pool2d on the CPU against references that
 * spell PyTorch's rules out directly (window positions inside input or padding, ceil_mode, the
 * count_include_pad divisor), on dense/NHWC/permuted inputs in f32/f16/bf16, several seeds; NaN
 * propagation of max; parameter errors. */
#include "harness.h"

/* the input layouts these tests use are h_view's first three */
enum { L_DENSE = H_DENSE, L_NHWC = H_NHWC, L_PERM = H_PERMUTED, L_COUNT };

/* PyTorch's pooled length: floor or ceil, and in ceil mode the last window must start inside the
 * input or the left padding */
static int out_len(int in, int k, int s, int p, int d, int ceil_mode)
{
    int span = in + 2 * p - d * (k - 1) - 1;
    int o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) o--;
    return o;
}

typedef struct pcfg {
    int N, C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, ceil, cip;
} pcfg;

/* max: over window taps that land in the input; avg: sum over in-input taps divided by the taps
 * inside [-pad, in + pad) (count_include_pad) or by the in-input taps */
static void ref_pool(int is_max, const pcfg *c, const float *x, int OH, int OW, float *out)
{
    for (int n = 0; n < c->N; n++)
        for (int ch = 0; ch < c->C; ch++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double s = 0, m = -INFINITY;
                    int in_input = 0, in_padded = 0;
                    for (int i = 0; i < c->kh; i++)
                        for (int j = 0; j < c->kw; j++) {
                            int ih = oh * c->sh - c->ph + i * c->dh, iw = ow * c->sw - c->pw + j * c->dw;
                            if (ih >= -c->ph && ih < c->H + c->ph && iw >= -c->pw && iw < c->W + c->pw) in_padded++;
                            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                            double v = x[((n * c->C + ch) * c->H + ih) * c->W + iw];
                            in_input++;
                            s += v;
                            if (v > m || isnan(v)) m = v;
                        }
                    double r = is_max ? m : s / (c->cip ? in_padded : in_input);
                    out[((n * c->C + ch) * OH + oh) * OW + ow] = (float)r;
                }
}

static const pcfg pcases[] = {
    /* N C  H  W kh kw sh sw ph pw dh dw ceil cip */
    {2, 3, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1},
    {2, 3, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, /* ceil: last windows overhang the padding */
    {2, 3, 7, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},
    {1, 2, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, /* ceil window clipped to input + padding: divisor 2*2 */
    {2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, 0, 1},
    {1, 4, 9, 11, 3, 2, 3, 1, 1, 1, 1, 1, 0, 0},
    {1, 2, 10, 7, 4, 5, 3, 2, 2, 2, 1, 1, 1, 0}, /* padding = kernel/2 */
    {2, 5, 5, 5, 5, 5, 1, 1, 2, 2, 1, 1, 0, 0},
    {1, 3, 6, 7, 3, 3, 3, 3, 0, 1, 1, 1, 1, 1}, /* ceil, padding in W only */
    {1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1}, /* ceil drops a window that would start in the right padding */
    {1, 2, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0},
};

/* dilated windows: max only */
static const pcfg dcases[] = {
    {1, 4, 9, 8, 3, 2, 2, 3, 1, 1, 2, 1, 1, 0},
    {2, 3, 11, 10, 3, 3, 1, 2, 1, 0, 2, 3, 0, 0},
    {1, 2, 6, 7, 3, 3, 3, 3, 0, 1, 1, 2, 1, 0},
};

static void run_pool(gcr_ctx *ctx, int is_max, const pcfg *c, gcr_dtype dt, int l, uint64_t seed)
{
    char what[200];
    snprintf(what, sizeof what, "%s N%d C%d %dx%d k%dx%d s%d,%d p%d,%d d%d,%d ceil%d cip%d %s %s seed %llu",
             is_max ? "max" : "avg", c->N, c->C, c->H, c->W, c->kh, c->kw, c->sh, c->sw, c->ph, c->pw, c->dh, c->dw,
             c->ceil, c->cip, gcr_dtype_name(dt), h_layout_name(l), (unsigned long long)seed);
    h_seed(seed);
    int64_t s[4] = {c->N, c->C, c->H, c->W}, n = s[0] * s[1] * s[2] * s[3];
    float *hx = h_randn(n, -2, 2);
    gcr_tensor *x = h_view_unchecked(ctx, dt, 4, s, l, hx);
    gcr_pool2d_params p = {{c->kh, c->kw}, {c->sh, c->sw}, {c->ph, c->pw}, {c->dh, c->dw}, c->ceil, c->cip};
    gcr_tensor *y = is_max ? gcr_max_pool2d(ctx, x, &p) : gcr_avg_pool2d(ctx, x, &p);
    if (CHECK(y != NULL, "%s: %s", what, gcr_ctx_error(ctx))) {
        int OH = out_len(c->H, c->kh, c->sh, c->ph, c->dh, c->ceil), OW = out_len(c->W, c->kw, c->sw, c->pw, c->dw, c->ceil);
        CHECK(gcr_tensor_dim(y, 2) == OH && gcr_tensor_dim(y, 3) == OW && gcr_tensor_dim(y, 1) == c->C, "%s: shape %lldx%lld want %dx%d",
              what, (long long)gcr_tensor_dim(y, 2), (long long)gcr_tensor_dim(y, 3), OH, OW);
        CHECK(gcr_tensor_format(y) == (l == L_NHWC ? GCR_NHWC : GCR_NCHW), "%s: format follows x", what);
        CHECK(gcr_tensor_dtype(y) == dt, "%s: dtype", what);
        if (gcr_tensor_numel(y) == (int64_t)c->N * c->C * OH * OW) {
            float *rx = h_read(x), *got = h_read(y), *ref = malloc((size_t)(c->N * c->C * OH * OW) * sizeof *ref);
            ref_pool(is_max, c, rx, OH, OW, ref);
            float tol = dt == GCR_F32 ? 1e-5f : 1e-2f;
            CHECK_CLOSE(got, ref, (int64_t)c->N * c->C * OH * OW, tol, tol, what);
            free(rx);
            free(got);
            free(ref);
        }
        gcr_tensor_free(y);
    } else {
        gcr_ctx_clear_error(ctx);
    }
    gcr_tensor_free(x);
    free(hx);
}

static void test_max_avg(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof pcases / sizeof *pcases; i++)
        for (int l = 0; l < L_COUNT; l++)
            for (int m = 0; m < 2; m++) {
                run_pool(ctx, m, &pcases[i], GCR_F32, l, 1000 + i * 7 + l * 2 + m);
                run_pool(ctx, m, &pcases[i], GCR_F32, l, 2000 + i * 7 + l * 2 + m);
                run_pool(ctx, m, &pcases[i], l == L_PERM ? GCR_BF16 : GCR_F16, l, 3000 + i);
            }
    for (size_t i = 0; i < sizeof dcases / sizeof *dcases; i++)
        for (int l = 0; l < L_COUNT; l++) {
            run_pool(ctx, 1, &dcases[i], GCR_F32, l, 4000 + i * 3 + l);
            run_pool(ctx, 1, &dcases[i], GCR_BF16, l, 5000 + i * 3 + l);
        }
    gcr_ctx_destroy(ctx);
}

static void run_adaptive(gcr_ctx *ctx, int N, int C, int H, int W, int OH, int OW, gcr_dtype dt, int l, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "adaptive %dx%dx%dx%d -> %dx%d %s %s", N, C, H, W, OH, OW, gcr_dtype_name(dt), h_layout_name(l));
    h_seed(seed);
    int64_t s[4] = {N, C, H, W};
    float *hx = h_randn((int64_t)N * C * H * W, -2, 2);
    gcr_tensor *x = h_view_unchecked(ctx, dt, 4, s, l, hx);
    gcr_tensor *y = gcr_adaptive_avg_pool2d(ctx, x, OH, OW);
    if (CHECK(y != NULL, "%s: %s", what, gcr_ctx_error(ctx))) {
        CHECK(gcr_tensor_dim(y, 2) == OH && gcr_tensor_dim(y, 3) == OW, "%s: shape", what);
        /* a 1x1 NHWC result has row-major strides too, and then reads as NCHW */
        CHECK(gcr_tensor_format(y) == (l == L_NHWC && OH * OW > 1 ? GCR_NHWC : GCR_NCHW), "%s: format follows x", what);
        float *rx = h_read(x), *got = h_read(y), *ref = malloc((size_t)(N * C * OH * OW) * sizeof *ref);
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                for (int i = 0; i < OH; i++)
                    for (int j = 0; j < OW; j++) {
                        /* PyTorch: start = floor(i*in/out), end = ceil((i+1)*in/out) */
                        int h0 = (int)floor((double)i * H / OH), h1 = (int)ceil((double)(i + 1) * H / OH);
                        int w0 = (int)floor((double)j * W / OW), w1 = (int)ceil((double)(j + 1) * W / OW);
                        double sum = 0;
                        for (int h = h0; h < h1; h++)
                            for (int w = w0; w < w1; w++) sum += rx[((n * C + c) * H + h) * W + w];
                        ref[((n * C + c) * OH + i) * OW + j] = (float)(sum / ((h1 - h0) * (w1 - w0)));
                    }
        float tol = dt == GCR_F32 ? 1e-5f : 1e-2f;
        CHECK_CLOSE(got, ref, (int64_t)N * C * OH * OW, tol, tol, what);
        free(rx);
        free(got);
        free(ref);
        gcr_tensor_free(y);
    } else {
        gcr_ctx_clear_error(ctx);
    }
    gcr_tensor_free(x);
    free(hx);
}

static void test_adaptive(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    int cases[][6] = {
        {2, 3, 7, 7, 1, 1}, /* global average */
        {2, 3, 7, 7, 3, 3}, /* 7 -> 3: overlapping windows */
        {1, 4, 5, 7, 2, 4},
        {1, 2, 6, 6, 6, 6}, /* identity */
        {1, 2, 4, 3, 7, 5}, /* more outputs than inputs */
        {3, 5, 13, 11, 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        for (int l = 0; l < L_COUNT; l++) {
            int *c = cases[i];
            run_adaptive(ctx, c[0], c[1], c[2], c[3], c[4], c[5], GCR_F32, l, 60 + i);
            run_adaptive(ctx, c[0], c[1], c[2], c[3], c[4], c[5], GCR_F16, l, 70 + i);
            run_adaptive(ctx, c[0], c[1], c[2], c[3], c[4], c[5], GCR_BF16, l, 80 + i);
        }
    gcr_ctx_destroy(ctx);
}

static void test_max_nan(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    float hx[16];
    for (int i = 0; i < 16; i++) hx[i] = (float)i;
    hx[5] = NAN; /* inside the first 2x2 window only */
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, (int64_t[]){1, 1, 4, 4}, GCR_NCHW, hx);
    gcr_pool2d_params p = gcr_pool2d_default(2);
    gcr_tensor *y = gcr_max_pool2d(ctx, x, &p);
    float o[4] = {0};
    if (CHECK(y != NULL, "max_pool2d: %s", gcr_ctx_error(ctx))) CHECK_OK(ctx, gcr_tensor_to_host(y, o, sizeof o));
    CHECK(isnan(o[0]) && o[1] == 7 && o[2] == 13 && o[3] == 15, "NaN propagates only through its window: %g %g %g %g",
          o[0], o[1], o[2], o[3]);
    gcr_ctx_destroy(ctx);
}

static void test_pool_errors(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 4, (int64_t[]){1, 2, 5, 5}, GCR_NCHW);
    gcr_tensor *x3 = gcr_tensor_new(ctx, GCR_F32, 3, (int64_t[]){2, 5, 5}, GCR_NCHW);
    gcr_pool2d_params p = gcr_pool2d_default(3);
    p.padding[0] = 2; /* more than half the kernel */
    CHECK(gcr_max_pool2d(ctx, x, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "padding > kernel/2 rejected");
    CHECK(strstr(gcr_ctx_error(ctx), "max_pool2d") != NULL, "message names the op: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    p = gcr_pool2d_default(7);
    CHECK(gcr_avg_pool2d(ctx, x, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "window larger than input");
    gcr_ctx_clear_error(ctx);
    p = gcr_pool2d_default(2);
    p.dilation[1] = 2;
    CHECK(gcr_avg_pool2d(ctx, x, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_UNSUPPORTED, "dilated avg pool refused");
    CHECK(strstr(gcr_ctx_error(ctx), "avg_pool2d") != NULL, "message names the op: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    p = gcr_pool2d_default(2);
    CHECK(gcr_max_pool2d(ctx, x3, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "3-d input rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_adaptive_avg_pool2d(ctx, x, 0, 2) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "adaptive size 0 rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_max_pool2d(ctx, NULL, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_INVALID, "NULL input");
    gcr_ctx_clear_error(ctx);
    /* an empty H: with padding a window fits, but it covers no input element */
    gcr_tensor *x0 = gcr_tensor_new(ctx, GCR_F32, 4, (int64_t[]){1, 2, 0, 4}, GCR_NCHW);
    p = gcr_pool2d_default(2);
    p.padding[0] = p.padding[1] = 1;
    CHECK(gcr_max_pool2d(ctx, x0, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "max pool of empty H rejected");
    CHECK(strstr(gcr_ctx_error(ctx), "max_pool2d") && strstr(gcr_ctx_error(ctx), "[1,2,0,4]"),
          "message names the op and the input: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_avg_pool2d(ctx, x0, &p) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "avg pool of empty H rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_adaptive_avg_pool2d(ctx, x0, 1, 1) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE,
          "adaptive pool of empty H rejected");
    gcr_ctx_clear_error(ctx);
    gcr_tensor *n0 = gcr_tensor_new(ctx, GCR_F32, 4, (int64_t[]){0, 2, 4, 4}, GCR_NCHW);
    gcr_tensor *y0 = gcr_max_pool2d(ctx, n0, &p);
    CHECK(y0 && gcr_tensor_numel(y0) == 0, "an empty batch still pools: %s", gcr_ctx_error(ctx));
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_max_avg);
    RUN(test_adaptive);
    RUN(test_max_nan);
    RUN(test_pool_errors);
    return h_finish();
}
