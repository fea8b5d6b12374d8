/* test_pointwise.c — every pointwise op on the CPU against double-precision loops written here:
 * unary ops, binary ops (broadcasting, 0-d, scalar forms), clamp, batch_norm, the composites
 * (hardswish, hardsigmoid, relu6, silu, softmax) and cast between all dtypes; inputs dense,
 * NHWC, permuted and sliced (h_view), in f32 (tight) and f16/bf16 (~1e-2, reference from the
 * rounded inputs as read back), several seeds. */
#include "harness.h"

static const gcr_dtype FLOATS[] = {GCR_F32, GCR_F16, GCR_BF16};
#define NFLOATS 3

static float atol_of(gcr_dtype dt) { return dt == GCR_F32 ? 1e-6f : 1e-3f; }
static float rtol_of(gcr_dtype dt) { return dt == GCR_F32 ? 1e-5f : 1e-2f; }

/* rounds v as a store to dt would (round to nearest even), for step-by-step references */
static float rnd(gcr_dtype dt, double v)
{
    float f = (float)v;
    if (dt == GCR_F16) return (float)(_Float16)f;
    if (dt == GCR_BF16) {
        uint32_t u;
        memcpy(&u, &f, 4);
        u += 0x7fff + ((u >> 16) & 1);
        u &= 0xffff0000u;
        memcpy(&f, &u, 4);
    }
    return f;
}

static int64_t numel_of(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

/* row-major offset into an input of shape is[ind] that broadcasts to os[ond], for out element l */
static int64_t bidx(int64_t l, int ond, const int64_t *os, int ind, const int64_t *is)
{
    int64_t off = 0, mul = 1;
    for (int d = ond - 1; d >= 0; d--) {
        int64_t i = l % os[d];
        l /= os[d];
        int di = d - (ond - ind);
        if (di < 0) continue;
        if (is[di] != 1) off += i * mul;
        mul *= is[di];
    }
    return off;
}

/* ---------------------------------------------------------------- unary */

static double r_neg(double x) { return -x; }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

typedef gcr_tensor *(*unary_fn)(gcr_ctx *, gcr_tensor *);
static const struct {
    const char *name;
    unary_fn fn;
    double (*ref)(double);
    float lo, hi;
} UNARY[] = {
    {"neg", gcr_neg, r_neg, -3, 3},         {"abs", gcr_abs, fabs, -3, 3},
    {"relu", gcr_relu, r_relu, -3, 3},      {"sigmoid", gcr_sigmoid, r_sigmoid, -6, 6},
    {"tanh", gcr_tanh, tanh, -3, 3},        {"exp", gcr_exp, exp, -4, 3},
    {"log", gcr_log, log, 0.05f, 5},        {"sqrt", gcr_sqrt, sqrt, 0.01f, 5},
    {"rsqrt", gcr_rsqrt, r_rsqrt, 0.05f, 5},
    {"gelu", gcr_gelu, r_gelu, -5, 5},
};

static const struct { int nd; int64_t s[4]; } SHAPES[] = {
    {3, {3, 5, 7}}, {4, {2, 3, 5, 7}}, {2, {1, 1}}, {0, {0}}, {2, {0, 4}}, {1, {1}}, {4, {1, 4, 1, 3}},
};
#define NSHAPES (int)(sizeof SHAPES / sizeof *SHAPES)

static void test_unary(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (unsigned o = 0; o < sizeof UNARY / sizeof *UNARY; o++)
        for (int di = 0; di < NFLOATS; di++)
            for (int si = 0; si < NSHAPES; si++)
                for (int l = 0; l < H_LAYOUTS; l++) {
                    gcr_dtype dt = FLOATS[di];
                    int nd = SHAPES[si].nd;
                    const int64_t *s = SHAPES[si].s;
                    int64_t n = numel_of(nd, s);
                    uint64_t sc = gcr_scope_begin(ctx);
                    h_seed(100 + o * 31 + si * 7 + l);
                    float *host = h_randn(n, UNARY[o].lo, UNARY[o].hi);
                    gcr_tensor *x = h_view(ctx, dt, nd, s, l, host);
                    gcr_tensor *y = UNARY[o].fn(ctx, x);
                    if (!CHECK(h_shape_is(y, nd, s) && gcr_tensor_dtype(y) == dt, "%s %s %s: %s", UNARY[o].name,
                               gcr_dtype_name(dt), h_layout_name(l), gcr_ctx_error(ctx))) {
                        gcr_ctx_clear_error(ctx);
                        free(host);
                        gcr_scope_end(ctx, sc);
                        continue;
                    }
                    if (l == H_NHWC && nd == 4)
                        CHECK(gcr_tensor_format(y) == GCR_NHWC, "%s keeps NHWC", UNARY[o].name);
                    float *xv = h_read(x), *got = h_read(y), *ref = malloc((size_t)(n + 1) * 4);
                    for (int64_t i = 0; i < n; i++) ref[i] = (float)UNARY[o].ref(xv[i]);
                    char what[128];
                    snprintf(what, sizeof what, "%s %s %s shape#%d", UNARY[o].name, gcr_dtype_name(dt), h_layout_name(l), si);
                    CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), what);
                    free(host), free(xv), free(got), free(ref);
                    gcr_scope_end(ctx, sc);
                }
    gcr_ctx_destroy(ctx);
}

/* the layouts in the data really are what they claim (else the strided cases test nothing) */
static void test_layouts_are_strided(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7};
    float *host = h_randn(210, -1, 1);
    gcr_tensor *p = h_view(ctx, GCR_F32, 4, s, H_PERMUTED, host);
    gcr_tensor *q = h_view(ctx, GCR_F16, 4, s, H_SLICED, host);
    gcr_tensor *r = h_view(ctx, GCR_BF16, 4, s, H_NHWC, host);
    CHECK(p && !gcr_tensor_is_contiguous(p) && gcr_tensor_stride(p, 0) == 1, "permuted is strided");
    CHECK(q && !gcr_tensor_is_contiguous(q) && gcr_tensor_stride(q, 3) == 2, "sliced is strided");
    CHECK(r && gcr_tensor_format(r) == GCR_NHWC, "nhwc");
    float *back = h_read(p);
    CHECK(memcmp(back, host, 210 * 4) == 0, "permuted view holds the logical values");
    free(back);
    free(host);
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- binary */

typedef gcr_tensor *(*binary_fn)(gcr_ctx *, gcr_tensor *, gcr_tensor *);
typedef gcr_tensor *(*scalar_fn)(gcr_ctx *, gcr_tensor *, float);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_min(double a, double b) { return a < b ? a : b; }
static const struct {
    const char *name;
    binary_fn fn;
    scalar_fn sfn;
    double (*ref)(double, double);
} BINARY[] = {
    {"add", gcr_add, gcr_add_scalar, r_add}, {"sub", gcr_sub, gcr_sub_scalar, r_sub},
    {"mul", gcr_mul, gcr_mul_scalar, r_mul}, {"div", gcr_div, gcr_div_scalar, r_div},
    {"maximum", gcr_maximum, gcr_maximum_scalar, r_max}, {"minimum", gcr_minimum, gcr_minimum_scalar, r_min},
};
#define NBINARY (int)(sizeof BINARY / sizeof *BINARY)

static const struct { int na; int64_t a[4]; int nb; int64_t b[4]; int no; int64_t o[4]; } PAIRS[] = {
    {3, {3, 1, 5}, 2, {4, 1}, 3, {3, 4, 5}},
    {3, {3, 5, 7}, 3, {3, 5, 7}, 3, {3, 5, 7}},
    {4, {2, 3, 4, 5}, 1, {5}, 4, {2, 3, 4, 5}},
    {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}, 4, {2, 3, 4, 5}},
    {4, {2, 3, 4, 5}, 4, {2, 3, 4, 5}, 4, {2, 3, 4, 5}},
    {1, {7}, 4, {2, 3, 1, 1}, 4, {2, 3, 1, 7}},
    {0, {0}, 2, {3, 5}, 2, {3, 5}},
    {2, {3, 5}, 0, {0}, 2, {3, 5}},
    {0, {0}, 0, {0}, 0, {0}},
    {2, {1, 1}, 2, {1, 1}, 2, {1, 1}},
    {2, {0, 3}, 1, {3}, 2, {0, 3}},
};
#define NPAIRS (int)(sizeof PAIRS / sizeof *PAIRS)

/* b away from 0 so that div is well conditioned: |b| in [0.5, 2.5] */
static float *denominators(int64_t n)
{
    float *p = h_randn(n, 0.5f, 2.5f);
    for (int64_t i = 0; i < n; i++)
        if (h_next() & 1) p[i] = -p[i];
    return p;
}

static void test_binary(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int o = 0; o < NBINARY; o++)
        for (int di = 0; di < NFLOATS; di++)
            for (int pi = 0; pi < NPAIRS; pi++)
                for (int la = 0; la < H_LAYOUTS; la++)
                    for (int lb = 0; lb < H_LAYOUTS; lb++) {
                        gcr_dtype dt = FLOATS[di];
                        const int64_t *sa = PAIRS[pi].a, *sb = PAIRS[pi].b, *so = PAIRS[pi].o;
                        int na = PAIRS[pi].na, nb = PAIRS[pi].nb, no = PAIRS[pi].no;
                        int64_t ca = numel_of(na, sa), cb = numel_of(nb, sb), co = numel_of(no, so);
                        uint64_t sc = gcr_scope_begin(ctx);
                        h_seed(7 + o * 1000 + pi * 50 + la * 5 + lb);
                        float *ha = h_randn(ca, -3, 3), *hb = denominators(cb);
                        gcr_tensor *a = h_view(ctx, dt, na, sa, la, ha), *b = h_view(ctx, dt, nb, sb, lb, hb);
                        gcr_tensor *y = BINARY[o].fn(ctx, a, b);
                        char what[160];
                        snprintf(what, sizeof what, "%s %s pair#%d %s x %s", BINARY[o].name, gcr_dtype_name(dt), pi,
                                 h_layout_name(la), h_layout_name(lb));
                        if (CHECK(h_shape_is(y, no, so) && gcr_tensor_dtype(y) == dt, "%s: %s", what, gcr_ctx_error(ctx))) {
                            float *av = h_read(a), *bv = h_read(b), *got = h_read(y), *ref = malloc((size_t)(co + 1) * 4);
                            for (int64_t i = 0; i < co; i++)
                                ref[i] = (float)BINARY[o].ref(av[bidx(i, no, so, na, sa)], bv[bidx(i, no, so, nb, sb)]);
                            CHECK_CLOSE(got, ref, co, atol_of(dt), rtol_of(dt), what);
                            if (no == 4 && la == H_NHWC && na == 4)
                                CHECK(gcr_tensor_format(y) == GCR_NHWC, "%s: result NHWC", what);
                            free(av), free(bv), free(got), free(ref);
                        }
                        gcr_ctx_clear_error(ctx);
                        free(ha), free(hb);
                        gcr_scope_end(ctx, sc);
                    }
    gcr_ctx_destroy(ctx);
}

static void test_scalar(void)
{
    const float svals[] = {1.75f, -2.5f, 0.0f};
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int o = 0; o < NBINARY; o++)
        for (int di = 0; di < NFLOATS; di++)
            for (int si = 0; si < NSHAPES; si++)
                for (int l = 0; l < H_LAYOUTS; l++)
                    for (int k = 0; k < 3; k++) {
                        float s = svals[k];
                        if (o == 3 && s == 0.0f) continue; /* x / 0 */
                        gcr_dtype dt = FLOATS[di];
                        int nd = SHAPES[si].nd;
                        const int64_t *sh = SHAPES[si].s;
                        int64_t n = numel_of(nd, sh);
                        uint64_t sc = gcr_scope_begin(ctx);
                        h_seed(5 + o * 100 + si * 10 + l + k * 1000);
                        float *host = h_randn(n, -3, 3);
                        gcr_tensor *x = h_view(ctx, dt, nd, sh, l, host);
                        gcr_tensor *y = BINARY[o].sfn(ctx, x, s);
                        char what[128];
                        snprintf(what, sizeof what, "%s_scalar(%g) %s %s shape#%d", BINARY[o].name, s, gcr_dtype_name(dt),
                                 h_layout_name(l), si);
                        if (CHECK(h_shape_is(y, nd, sh), "%s: %s", what, gcr_ctx_error(ctx))) {
                            float *xv = h_read(x), *got = h_read(y), *ref = malloc((size_t)(n + 1) * 4);
                            for (int64_t i = 0; i < n; i++) ref[i] = (float)BINARY[o].ref(xv[i], s);
                            CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), what);
                            if (l == H_NHWC && nd == 4) CHECK(gcr_tensor_format(y) == GCR_NHWC, "%s: NHWC", what);
                            free(xv), free(got), free(ref);
                        }
                        gcr_ctx_clear_error(ctx);
                        free(host);
                        gcr_scope_end(ctx, sc);
                    }
    gcr_ctx_destroy(ctx);
}

static void test_clamp(void)
{
    const float lims[][2] = {{-0.5f, 0.7f}, {0, 6}, {1, 1}, {-10, 10}};
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int k = 0; k < 4; k++)
        for (int di = 0; di < NFLOATS; di++)
            for (int l = 0; l < H_LAYOUTS; l++) {
                gcr_dtype dt = FLOATS[di];
                int64_t s[] = {2, 3, 5, 7}, n = 210;
                uint64_t sc = gcr_scope_begin(ctx);
                h_seed(77 + k * 10 + l);
                float *host = h_randn(n, -3, 3);
                gcr_tensor *x = h_view(ctx, dt, 4, s, l, host);
                gcr_tensor *y = gcr_clamp(ctx, x, lims[k][0], lims[k][1]);
                if (CHECK(h_shape_is(y, 4, s), "clamp: %s", gcr_ctx_error(ctx))) {
                    float *xv = h_read(x), *got = h_read(y), ref[210];
                    for (int64_t i = 0; i < n; i++)
                        ref[i] = xv[i] < lims[k][0] ? lims[k][0] : xv[i] > lims[k][1] ? lims[k][1] : xv[i];
                    CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), "clamp");
                    free(xv), free(got);
                }
                free(host);
                gcr_scope_end(ctx, sc);
            }
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- batch_norm */

static void test_batch_norm(void)
{
    static const struct { int nd; int64_t s[4]; } bs[] = {{4, {2, 3, 5, 7}}, {2, {4, 6}}, {3, {2, 5, 3}}, {4, {1, 8, 1, 1}}};
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    const float eps = 1e-3f;
    for (int si = 0; si < 4; si++)
        for (int di = 0; di < NFLOATS; di++)
            for (int l = 0; l < H_LAYOUTS; l++)
                for (int opt = 0; opt < 4; opt++)      /* bit 0: gamma, bit 1: beta */
                    for (int pf = 0; pf < 2; pf++) {   /* params in x's dtype, or f32 (sliced) */
                        gcr_dtype dt = FLOATS[di], pdt = pf ? GCR_F32 : dt;
                        int nd = bs[si].nd;
                        const int64_t *s = bs[si].s;
                        int64_t n = numel_of(nd, s), C = s[1];
                        uint64_t sc = gcr_scope_begin(ctx);
                        h_seed(300 + si * 100 + l * 10 + opt + pf * 1000);
                        float *hx = h_randn(n, -3, 3), *hm = h_randn(C, -1, 1), *hv = h_randn(C, 0.1f, 2),
                              *hg = h_randn(C, 0.5f, 1.5f), *hb = h_randn(C, -1, 1);
                        int pl = pf ? H_SLICED : H_DENSE;
                        gcr_tensor *x = h_view(ctx, dt, nd, s, l, hx), *m = h_view(ctx, pdt, 1, &C, pl, hm),
                                   *v = h_view(ctx, pdt, 1, &C, pl, hv);
                        gcr_tensor *g = opt & 1 ? h_view(ctx, pdt, 1, &C, pl, hg) : NULL;
                        gcr_tensor *b = opt & 2 ? h_view(ctx, pdt, 1, &C, pl, hb) : NULL;
                        gcr_tensor *y = gcr_batch_norm(ctx, x, m, v, g, b, eps);
                        char what[128];
                        snprintf(what, sizeof what, "batch_norm %s shape#%d %s gamma=%d beta=%d params %s",
                                 gcr_dtype_name(dt), si, h_layout_name(l), opt & 1, opt >> 1, gcr_dtype_name(pdt));
                        if (CHECK(h_shape_is(y, nd, s), "%s: %s", what, gcr_ctx_error(ctx))) {
                            float *xv = h_read(x), *mv = h_read(m), *vv = h_read(v);
                            float *gv = g ? h_read(g) : NULL, *bv = b ? h_read(b) : NULL;
                            float *got = h_read(y), *ref = malloc((size_t)n * 4);
                            int64_t inner = n / s[0] / C;
                            for (int64_t i = 0; i < n; i++) {
                                int64_t c = i / inner % C;
                                ref[i] = (float)((xv[i] - mv[c]) / sqrt((double)vv[c] + eps) * (gv ? gv[c] : 1.0) +
                                                 (bv ? bv[c] : 0.0));
                            }
                            CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), what);
                            if (l == H_NHWC && nd == 4 && s[2] * s[3] > 1) /* [1,C,1,1] is both layouts */
                                CHECK(gcr_tensor_format(y) == GCR_NHWC, "%s: NHWC", what);
                            free(xv), free(mv), free(vv), free(gv), free(bv), free(got), free(ref);
                        }
                        gcr_ctx_clear_error(ctx);
                        free(hx), free(hm), free(hv), free(hg), free(hb);
                        gcr_scope_end(ctx, sc);
                    }
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- composites */

/* references round after each primitive as the decomposition does, so f16/bf16 stay at ~1e-2 */
static void test_composites(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7}, n = 210;
    for (int di = 0; di < NFLOATS; di++)
        for (int l = 0; l < H_LAYOUTS; l++)
            for (int seed = 1; seed <= 2; seed++) {
                gcr_dtype dt = FLOATS[di];
                uint64_t sc = gcr_scope_begin(ctx);
                h_seed(seed * 91 + l);
                float *host = h_randn(n, -5, 5);
                gcr_tensor *x = h_view(ctx, dt, 4, s, l, host);
                gcr_tensor *ys[4] = {gcr_hardswish(ctx, x), gcr_hardsigmoid(ctx, x), gcr_relu6(ctx, x), gcr_silu(ctx, x)};
                const char *names[4] = {"hardswish", "hardsigmoid", "relu6", "silu"};
                float *xv = h_read(x);
                for (int k = 0; k < 4; k++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s %s %s", names[k], gcr_dtype_name(dt), h_layout_name(l));
                    if (!CHECK(h_shape_is(ys[k], 4, s), "%s: %s", what, gcr_ctx_error(ctx))) continue;
                    float *got = h_read(ys[k]), ref[210];
                    for (int64_t i = 0; i < n; i++) {
                        float v = xv[i], t = rnd(dt, v + 3.0f);
                        float u = t < 0 ? 0 : t > 6 ? 6 : t;
                        switch (k) {
                        case 0: ref[i] = rnd(dt, rnd(dt, v * u) / 6.0f); break;
                        case 1: ref[i] = rnd(dt, u / 6.0f); break;
                        case 2: ref[i] = v < 0 ? 0 : v > 6 ? 6 : v; break;
                        default: ref[i] = rnd(dt, v * rnd(dt, 1.0 / (1.0 + exp(-(double)v)))); break;
                        }
                    }
                    CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), what);
                    if (l == H_NHWC) CHECK(gcr_tensor_format(ys[k]) == GCR_NHWC, "%s: NHWC", what);
                    free(got);
                }
                free(xv), free(host);
                gcr_ctx_clear_error(ctx);
                gcr_scope_end(ctx, sc);
            }
    gcr_ctx_destroy(ctx);
}

static void test_softmax(void)
{
    static const struct { int nd; int64_t s[4]; } ss[] = {{3, {3, 4, 5}}, {4, {2, 3, 5, 7}}, {1, {9}}, {2, {1, 1}}};
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int si = 0; si < 4; si++)
        for (int di = 0; di < NFLOATS; di++)
            for (int l = 0; l < H_LAYOUTS; l++)
                for (int ax = -1; ax < ss[si].nd; ax++) {
                    gcr_dtype dt = FLOATS[di];
                    int nd = ss[si].nd;
                    const int64_t *s = ss[si].s;
                    int64_t n = numel_of(nd, s);
                    int a = ax < 0 ? nd - 1 : ax; /* -1 checks negative axes too */
                    uint64_t sc = gcr_scope_begin(ctx);
                    h_seed(500 + si * 50 + l * 5 + ax);
                    float *host = h_randn(n, -4, 4);
                    gcr_tensor *x = h_view(ctx, dt, nd, s, l, host);
                    gcr_tensor *y = gcr_softmax(ctx, x, ax);
                    char what[128];
                    snprintf(what, sizeof what, "softmax axis %d %s shape#%d %s", ax, gcr_dtype_name(dt), si, h_layout_name(l));
                    if (CHECK(h_shape_is(y, nd, s), "%s: %s", what, gcr_ctx_error(ctx))) {
                        float *xv = h_read(x), *got = h_read(y), *ref = malloc((size_t)n * 4);
                        int64_t len = s[a], inner = 1;
                        for (int d = a + 1; d < nd; d++) inner *= s[d];
                        double worst = 0;
                        for (int64_t o = 0; o < n / len; o++) {
                            int64_t base = o / inner * inner * len + o % inner;
                            double mx = -INFINITY, sum = 0, tot = 0;
                            for (int64_t j = 0; j < len; j++) mx = fmax(mx, xv[base + j * inner]);
                            for (int64_t j = 0; j < len; j++) sum += rnd(dt, exp(rnd(dt, xv[base + j * inner] - mx)));
                            float rs = rnd(dt, sum);
                            for (int64_t j = 0; j < len; j++) {
                                int64_t i = base + j * inner;
                                ref[i] = rnd(dt, rnd(dt, exp(rnd(dt, xv[i] - mx))) / rs);
                                tot += got[i];
                            }
                            worst = fmax(worst, fabs(tot - 1));
                        }
                        CHECK_CLOSE(got, ref, n, atol_of(dt), rtol_of(dt), what);
                        CHECK(worst <= (dt == GCR_F32 ? 1e-5 : 3e-2), "%s: rows sum to 1 (off by %g)", what, worst);
                        free(xv), free(got), free(ref);
                    }
                    gcr_ctx_clear_error(ctx);
                    free(host);
                    gcr_scope_end(ctx, sc);
                }
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- cast */

static const gcr_dtype ALL[] = {GCR_F32, GCR_F16, GCR_BF16, GCR_I32, GCR_I64, GCR_BOOL};

static double decode(const void *p, gcr_dtype t, int64_t i)
{
    switch (t) {
    case GCR_F32: return ((const float *)p)[i];
    case GCR_F16: { _Float16 h; memcpy(&h, (const uint16_t *)p + i, 2); return (double)h; }
    case GCR_BF16: { uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16; float f; memcpy(&f, &u, 4); return f; }
    case GCR_I32: return ((const int32_t *)p)[i];
    case GCR_I64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static int is_int(gcr_dtype t) { return t == GCR_I32 || t == GCR_I64 || t == GCR_BOOL; }

/* source values per dtype, held on the host in that dtype; zeros included for the bool rules */
static void *cast_source(gcr_dtype t, int64_t n)
{
    void *p = calloc((size_t)n, 8);
    for (int64_t i = 0; i < n; i++) {
        double v = i % 5 == 0 ? 0.0 : h_uniform(-300, 300);
        switch (t) {
        case GCR_F32: ((float *)p)[i] = (float)v; break;
        case GCR_F16: { _Float16 h = (_Float16)v; memcpy((uint16_t *)p + i, &h, 2); break; }
        case GCR_BF16: { float f = rnd(GCR_BF16, v); uint32_t u; memcpy(&u, &f, 4); ((uint16_t *)p)[i] = (uint16_t)(u >> 16); break; }
        case GCR_I32: ((int32_t *)p)[i] = i % 5 == 0 ? 0 : i % 3 == 0 ? 16777217 + (int32_t)i : (int32_t)(h_next() % 2001) - 1000; break;
        case GCR_I64: ((int64_t *)p)[i] = i % 5 == 0 ? 0 : i % 3 == 0 ? ((int64_t)1 << 40) + 1 + i
                                        : i % 7 == 0 ? -((int64_t)1 << 53) - 3 : (int64_t)(h_next() % 2001) - 1000; break;
        default: ((uint8_t *)p)[i] = i % 5 != 0 && (h_next() & 1); break;
        }
    }
    return p;
}

static void test_cast(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {3, 5, 7}, n = 105;
    for (int a = 0; a < 6; a++)
        for (int b = 0; b < 6; b++)
            for (int perm = 0; perm < 2; perm++) {
                gcr_dtype ti = ALL[a], to = ALL[b];
                uint64_t sc = gcr_scope_begin(ctx);
                h_seed(900 + a * 6 + b);
                void *src = cast_source(ti, n);
                /* the permuted case stores the transpose and views it back, so the same logical values */
                gcr_tensor *x;
                if (!perm) {
                    x = gcr_tensor_from_data(ctx, ti, 3, s, GCR_NCHW, src);
                } else {
                    int64_t rs[] = {7, 5, 3};
                    size_t es = gcr_dtype_size(ti);
                    char *tr = malloc((size_t)n * es);
                    for (int64_t i = 0; i < 3; i++)
                        for (int64_t j = 0; j < 5; j++)
                            for (int64_t k = 0; k < 7; k++)
                                memcpy(tr + ((k * 5 + j) * 3 + i) * es, (char *)src + ((i * 5 + j) * 7 + k) * es, es);
                    gcr_tensor *base = gcr_tensor_from_data(ctx, ti, 3, rs, GCR_NCHW, tr);
                    x = gcr_permute(ctx, base, (int[]){2, 1, 0});
                    gcr_tensor_free(base);
                    free(tr);
                }
                gcr_tensor *y = gcr_cast(ctx, x, to);
                char what[64];
                snprintf(what, sizeof what, "cast %s->%s%s", gcr_dtype_name(ti), gcr_dtype_name(to), perm ? " permuted" : "");
                if (CHECK(h_shape_is(y, 3, s) && gcr_tensor_dtype(y) == to, "%s: %s", what, gcr_ctx_error(ctx))) {
                    void *dst = calloc((size_t)n, 8);
                    CHECK_OK(ctx, gcr_tensor_to_host(y, dst, (size_t)n * gcr_dtype_size(to)));
                    int64_t bad = -1;
                    for (int64_t i = 0; i < n && bad < 0; i++) {
                        double v = decode(src, ti, i), g = decode(dst, to, i);
                        int ok;
                        if (to == GCR_BOOL) ok = g == (v != 0);
                        else if (ti == to) ok = memcmp((char *)src + i * gcr_dtype_size(ti), (char *)dst + i * gcr_dtype_size(to),
                                                       gcr_dtype_size(ti)) == 0;
                        else if (to == GCR_I32 && ti == GCR_I64) ok = ((int32_t *)dst)[i] == (int32_t)((int64_t *)src)[i];
                        else if (to == GCR_I64 && ti == GCR_I32) ok = ((int64_t *)dst)[i] == ((int32_t *)src)[i];
                        else if (is_int(to)) ok = g == trunc(is_int(ti) ? v : (float)v);
                        else if (to == GCR_F32) ok = g == (float)v;
                        else if (to == GCR_F16 && fabs(v) >= 65520) ok = g == copysign(INFINITY, v); /* past f16's max */
                        else ok = fabs(g - v) <= fabs(v) * (to == GCR_F16 ? 1.0 / 1024 : 1.0 / 128);
                        if (!ok) bad = i;
                    }
                    CHECK(bad < 0, "%s: element %lld: %.17g -> %.17g", what, (long long)bad, bad < 0 ? 0 : decode(src, ti, bad),
                          bad < 0 ? 0 : decode(dst, to, bad));
                    free(dst);
                }
                gcr_ctx_clear_error(ctx);
                free(src);
                gcr_scope_end(ctx, sc);
            }
    /* float to int truncates toward zero; NHWC stays NHWC */
    int64_t s4[] = {1, 2, 1, 3};
    float v[] = {2.9f, -2.9f, 0.4f, -0.6f, 7.0f, -0.0f};
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, s4, GCR_NHWC, v);
    gcr_tensor *y = gcr_cast(ctx, x, GCR_I32);
    int32_t got[6] = {0}, want[] = {2, -2, 0, 0, 7, 0};
    CHECK(y && gcr_tensor_format(y) == GCR_NHWC, "cast keeps NHWC");
    CHECK_OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
    CHECK(memcmp(got, want, sizeof got) == 0, "truncation toward zero: %d %d %d %d", got[0], got[1], got[2], got[3]);
    gcr_ctx_destroy(ctx);
}

/* a large flat case exercises rows longer than one staging chunk */
static void test_long_rows(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {3, 1001};
    for (int di = 0; di < NFLOATS; di++)
        for (int l = 0; l < H_LAYOUTS; l++) {
            gcr_dtype dt = FLOATS[di];
            h_seed(41 + l);
            float *ha = h_randn(3003, -2, 2), *hb = h_randn(1001, -2, 2);
            gcr_tensor *a = h_view(ctx, dt, 2, s, l, ha), *b = h_view(ctx, dt, 1, s + 1, l, hb);
            gcr_tensor *y = gcr_mul(ctx, a, b);
            if (CHECK(h_shape_is(y, 2, s), "long mul: %s", gcr_ctx_error(ctx))) {
                float *av = h_read(a), *bv = h_read(b), *got = h_read(y), *ref = malloc(3003 * 4);
                for (int64_t i = 0; i < 3003; i++) ref[i] = av[i] * bv[i % 1001];
                CHECK_CLOSE(got, ref, 3003, atol_of(dt), rtol_of(dt), "long rows");
                free(av), free(bv), free(got), free(ref);
            }
            free(ha), free(hb);
        }
    gcr_ctx_destroy(ctx);
}

/* NaN propagates through relu, clamp (relu6, hardsigmoid), maximum and minimum, as in PyTorch and
 * as gcr_max and max_pool2d do, eagerly and in a fused capture; infinities still clamp */
static void test_nan_propagates(void)
{
    for (int di = 0; di < NFLOATS; di++)
        for (int cap = 0; cap < 2; cap++) {
            gcr_dtype dt = FLOATS[di];
            gcr_ctx_opts o = gcr_ctx_opts_default();
            o.device = GCR_DEVICE_CPU;
            o.knobs.single_node = 1; /* a lone op of the capture runs as a fused group too */
            gcr_ctx *ctx = NULL;
            if (!CHECK_OK(ctx, gcr_ctx_create(&ctx, &o))) return;
            float hx[4] = {NAN, 1.0f, INFINITY, -INFINITY}, hy[4] = {1.0f, NAN, 0.0f, 0.0f};
            int64_t s[] = {4};
            gcr_tensor *x = h_view(ctx, dt, 1, s, 0, hx), *y = h_view(ctx, dt, 1, s, 0, hy);
            if (cap) CHECK_OK(ctx, gcr_capture_begin(ctx));
            gcr_tensor *r[8] = {gcr_relu(ctx, x), gcr_clamp(ctx, x, 0, 6), gcr_relu6(ctx, x), gcr_hardsigmoid(ctx, x),
                                gcr_maximum(ctx, x, y), gcr_minimum(ctx, x, y), gcr_maximum_scalar(ctx, x, 0),
                                gcr_minimum_scalar(ctx, x, 0)};
            /* nan, 1, inf, -inf against y = 1, nan, 0, 0 (scalar 0 for the last two) */
            const float want[8][4] = {{NAN, 1, INFINITY, 0}, {NAN, 1, 6, 0}, {NAN, 1, 6, 0}, {NAN, 4.0f / 6, 1, 0},
                                      {NAN, NAN, INFINITY, 0}, {NAN, NAN, 0, -INFINITY}, {NAN, 1, INFINITY, 0},
                                      {NAN, 0, 0, -INFINITY}};
            const char *names[8] = {"relu", "clamp", "relu6", "hardsigmoid", "maximum", "minimum", "maximum_scalar",
                                    "minimum_scalar"};
            gcr_graph *g = NULL;
            if (cap) {
                for (int k = 0; k < 8; k++) gcr_graph_output(ctx, r[k]);
                CHECK_OK(ctx, gcr_capture_end(ctx, &g));
            }
            for (int k = 0; k < 8; k++) {
                if (!CHECK(r[k], "%s: %s", names[k], gcr_ctx_error(ctx))) continue;
                float *got = h_read(r[k]);
                for (int i = 0; got && i < 4; i++) {
                    float w = rnd(dt, want[k][i]);
                    CHECK(isnan(w) ? isnan(got[i]) : fabsf(got[i] - w) <= 1e-3f || got[i] == w,
                          "%s %s (%s): element %d is %g, expected %g", names[k], gcr_dtype_name(dt),
                          cap ? "captured" : "eager", i, got[i], w);
                }
                free(got);
            }
            gcr_graph_destroy(g);
            gcr_ctx_destroy(ctx);
        }
}

int main(void)
{
    RUN(test_layouts_are_strided);
    RUN(test_unary);
    RUN(test_binary);
    RUN(test_scalar);
    RUN(test_clamp);
    RUN(test_batch_norm);
    RUN(test_composites);
    RUN(test_softmax);
    RUN(test_cast);
    RUN(test_long_rows);
    RUN(test_nan_propagates);
    return h_finish();
}
