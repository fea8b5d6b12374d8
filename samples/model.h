/* model.h — MobileNet-v3 Large and Small (torchvision's architecture: its inverted residual
 * tables, _make_divisible, squeeze-excite with _make_divisible(expand / 4, 8) channels, BN eps
 * 1e-3, classifier Linear → hardswish → Dropout → Linear, width multiplier) written only with gcr's
 * public API, as the plain eager code a C user already has: mnv3_forward() is an ordinary function
 * of (ctx, model, input) that the sample runs eagerly or wraps in GCR_REGION. Parameters come from
 * a safetensors file with torchvision's state_dict names (tools/export_mobilenet.py) or from a
 * seeded random init. Shared by samples/mobilenet_v3.c and test/test_mobilenet.c; everything is
 * static so each program compiles its own copy. */
#ifndef GCR_SAMPLE_MODEL_H
#define GCR_SAMPLE_MODEL_H

#include "gcr.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MNV3_LARGE, MNV3_SMALL } mnv3_arch;
enum { MNV3_ACT_NONE, MNV3_ACT_RELU, MNV3_ACT_HS };

/* one row of torchvision's inverted residual table, before the width multiplier */
typedef struct { int in, k, exp, out, se, hs, stride; } mnv3_row;

static const mnv3_row mnv3_large_rows[] = {
    {16, 3, 16, 16, 0, 0, 1},    {16, 3, 64, 24, 0, 0, 2},    {24, 3, 72, 24, 0, 0, 1},
    {24, 5, 72, 40, 1, 0, 2},    {40, 5, 120, 40, 1, 0, 1},   {40, 5, 120, 40, 1, 0, 1},
    {40, 3, 240, 80, 0, 1, 2},   {80, 3, 200, 80, 0, 1, 1},   {80, 3, 184, 80, 0, 1, 1},
    {80, 3, 184, 80, 0, 1, 1},   {80, 3, 480, 112, 1, 1, 1},  {112, 3, 672, 112, 1, 1, 1},
    {112, 5, 672, 160, 1, 1, 2}, {160, 5, 960, 160, 1, 1, 1}, {160, 5, 960, 160, 1, 1, 1},
};
static const mnv3_row mnv3_small_rows[] = {
    {16, 3, 16, 16, 1, 0, 2},  {16, 3, 72, 24, 0, 0, 2},   {24, 3, 88, 24, 0, 0, 1},  {24, 5, 96, 40, 1, 1, 2},
    {40, 5, 240, 40, 1, 1, 1}, {40, 5, 240, 40, 1, 1, 1},  {40, 5, 120, 48, 1, 1, 1}, {48, 5, 144, 48, 1, 1, 1},
    {48, 5, 288, 96, 1, 1, 2}, {96, 5, 576, 96, 1, 1, 1},  {96, 5, 576, 96, 1, 1, 1},
};
#define MNV3_MAX_BLOCKS 15
#define MNV3_MAX_OWNED 1024

/* torchvision's _make_divisible: round to a multiple of divisor, never more than 10% down */
static int mnv3_make_divisible(double v, int divisor)
{
    int nv = (int)(v + divisor / 2.0) / divisor * divisor;
    if (nv < divisor) nv = divisor;
    if (nv < 0.9 * v) nv += divisor;
    return nv;
}

/* conv (no bias) → batch norm → optional activation */
typedef struct {
    gcr_tensor *w, *mean, *var, *gamma, *beta; /* w [O,C/groups,K,K]; the rest [O] */
    gcr_conv2d_params p;
    int act;
} mnv3_cbn;

typedef struct {
    int in, exp, out, k, stride, sq, use_se, hs, res;
    int has_expand;
    mnv3_cbn expand, dw, project;
    gcr_tensor *se_w1, *se_b1, *se_w2, *se_b2; /* [sq,exp,1,1] [sq] [exp,sq,1,1] [exp] */
} mnv3_block;

typedef struct {
    mnv3_arch arch;
    double width;
    int classes;
    gcr_dtype dtype;
    gcr_format fmt;
    int nblocks;
    mnv3_block b[MNV3_MAX_BLOCKS];
    mnv3_cbn first, last;  /* 3 → first block's in (stride 2, hardswish); last block's out → 6x (hardswish) */
    int last_out, hidden;  /* classifier: Linear(last_out, hidden) → hardswish → Dropout → Linear(hidden, classes) */
    gcr_tensor *fc1_w, *fc1_b, *fc2_w, *fc2_b;
    gcr_tensor *owned[MNV3_MAX_OWNED]; /* tensors this model made (random init, casts, relayouts) */
    int nowned;
    int ops;       /* primitive ops the last forward dispatched = eager kernels per forward */
    uint64_t rng;
    char err[512];
} mnv3_model;

/* ---------------------------------------------------------------- parameters */

static int mnv3_fail(mnv3_model *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, sizeof m->err, fmt, ap);
    va_end(ap);
    return -1;
}

static double mnv3_uniform(mnv3_model *m) /* [0, 1), xorshift64* */
{
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return (double)((m->rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double mnv3_normal(mnv3_model *m)
{
    double u = mnv3_uniform(m), v = mnv3_uniform(m);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

enum { MNV3_P_CONV, MNV3_P_BN_MEAN, MNV3_P_BN_VAR, MNV3_P_BN_GAMMA, MNV3_P_BN_BETA, MNV3_P_BIAS, MNV3_P_LINEAR };

static gcr_tensor *mnv3_own(mnv3_model *m, gcr_tensor *t)
{
    if (t && m->nowned < MNV3_MAX_OWNED) m->owned[m->nowned++] = gcr_tensor_keep(gcr_tensor_set_const(t));
    return t;
}

/* A parameter by its state_dict name: from the file (checked against the shape the architecture
 * wants) or random; then cast to the model's dtype and, for conv weights of an NHWC model, stored
 * channels-last as PyTorch's model.to(memory_format=channels_last) does. */
static gcr_tensor *mnv3_param(gcr_ctx *ctx, mnv3_model *m, const gcr_weights *w, const char *name, int kind,
                              int ndim, const int64_t *shape)
{
    gcr_tensor *t;
    if (w) {
        t = gcr_weights_get(w, name);
        if (!t) {
            mnv3_fail(m, "weights: no tensor '%s' (is the file a torchvision mobilenet_v3 state_dict?)", name);
            return NULL;
        }
        int ok = gcr_tensor_ndim(t) == ndim;
        for (int i = 0; ok && i < ndim; i++) ok = gcr_tensor_dim(t, i) == shape[i];
        if (!ok) {
            char got[96], want[96] = "[";
            gcr_tensor_describe(t, got, sizeof got);
            for (int i = 0; i < ndim; i++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "", (long long)shape[i]);
            mnv3_fail(m, "weights: '%s' is %s in the file, the model wants %s] (do --model and --width match?)", name,
                      got, want);
            return NULL;
        }
    } else {
        int64_t n = 1;
        for (int i = 0; i < ndim; i++) n *= shape[i];
        float *h = malloc((size_t)n * sizeof *h);
        if (!h) {
            mnv3_fail(m, "out of host memory");
            return NULL;
        }
        /* He-style for convs (fan_in = C/groups * K * K keeps activations O(1) through depth);
         * BN statistics far from identity so a BN read wrongly shows in the logits */
        double fan_in = ndim > 1 ? (double)(n / shape[0]) : 1.0;
        for (int64_t i = 0; i < n; i++) {
            double u = mnv3_uniform(m);
            switch (kind) {
            case MNV3_P_CONV: h[i] = (float)(mnv3_normal(m) * sqrt(2.0 / fan_in)); break;
            case MNV3_P_BN_MEAN: h[i] = (float)(0.4 * u - 0.2); break;
            case MNV3_P_BN_VAR: h[i] = (float)(0.5 + 1.5 * u); break;
            case MNV3_P_BN_GAMMA: h[i] = (float)(0.5 + u); break;
            case MNV3_P_BN_BETA: case MNV3_P_BIAS: h[i] = (float)(0.2 * u - 0.1); break;
            default: h[i] = (float)((2 * u - 1) / sqrt(fan_in)); break; /* nn.Linear's default range */
            }
        }
        t = mnv3_own(m, gcr_tensor_from_data(ctx, GCR_F32, ndim, shape, GCR_NCHW, h));
        free(h);
        if (!t) return NULL;
    }
    if (gcr_tensor_dtype(t) != m->dtype) t = mnv3_own(m, gcr_cast(ctx, t, m->dtype));
    if (t && kind == MNV3_P_CONV && m->fmt == GCR_NHWC) t = mnv3_own(m, gcr_contiguous(ctx, t, GCR_NHWC));
    return t;
}

static int mnv3_cbn_init(gcr_ctx *ctx, mnv3_model *m, const gcr_weights *w, mnv3_cbn *c, const char *prefix, int cin,
                         int cout, int k, int stride, int groups, int act)
{
    char n[160];
    int64_t ws[4] = {cout, cin / groups, k, k}, vs[1] = {cout};
    snprintf(n, sizeof n, "%s.0.weight", prefix);
    c->w = mnv3_param(ctx, m, w, n, MNV3_P_CONV, 4, ws);
    static const char *bn[4] = {"running_mean", "running_var", "weight", "bias"};
    gcr_tensor **dst[4] = {&c->mean, &c->var, &c->gamma, &c->beta};
    for (int i = 0; i < 4 && c->w; i++) {
        snprintf(n, sizeof n, "%s.1.%s", prefix, bn[i]);
        *dst[i] = mnv3_param(ctx, m, w, n, MNV3_P_BN_MEAN + i, 1, vs);
        if (!*dst[i]) return -1;
    }
    if (!c->w) return -1;
    c->p = gcr_conv2d_default();
    c->p.stride[0] = c->p.stride[1] = stride;
    c->p.padding[0] = c->p.padding[1] = (k - 1) / 2;
    c->p.groups = groups;
    c->act = act;
    return 0;
}

static void mnv3_free(mnv3_model *m)
{
    for (int i = 0; i < m->nowned; i++) gcr_tensor_free(m->owned[i]);
    m->nowned = 0;
}

/* Builds the model on ctx. weights: a loaded file (borrowed; must outlive the model) or NULL for
 * the seeded random init; classes is taken from the file when one is given. Returns 0, or -1 with
 * m->err (or the ctx's error) set. */
static int mnv3_init(gcr_ctx *ctx, mnv3_model *m, mnv3_arch arch, double width, int classes, gcr_dtype dtype,
                     gcr_format fmt, const gcr_weights *w, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->arch = arch;
    m->width = width;
    m->dtype = dtype;
    m->fmt = fmt;
    m->rng = seed ? seed : 1;
    if (!(width > 0 && width <= 8)) return mnv3_fail(m, "width %g outside (0, 8]", width);
    const mnv3_row *rows = arch == MNV3_LARGE ? mnv3_large_rows : mnv3_small_rows;
    m->nblocks = arch == MNV3_LARGE ? 15 : 11;
    if (w) {
        gcr_tensor *cls = gcr_weights_get(w, "classifier.3.weight");
        if (!cls || gcr_tensor_ndim(cls) != 2) return mnv3_fail(m, "weights: no 2-d 'classifier.3.weight'");
        classes = (int)gcr_tensor_dim(cls, 0);
    }
    if (classes < 1) return mnv3_fail(m, "classes %d < 1", classes);
    m->classes = classes;
#define ADJ(c) mnv3_make_divisible((c) * width, 8)
    int first = ADJ(rows[0].in);
    if (mnv3_cbn_init(ctx, m, w, &m->first, "features.0", 3, first, 3, 2, 1, MNV3_ACT_HS)) goto fail;
    for (int i = 0; i < m->nblocks; i++) {
        mnv3_block *b = &m->b[i];
        const mnv3_row *r = &rows[i];
        b->in = ADJ(r->in);
        b->exp = ADJ(r->exp);
        b->out = ADJ(r->out);
        b->k = r->k;
        b->stride = r->stride;
        b->use_se = r->se;
        b->hs = r->hs;
        b->sq = mnv3_make_divisible(b->exp / 4, 8); /* integer division first, as torchvision */
        b->res = r->stride == 1 && b->in == b->out;
        b->has_expand = b->exp != b->in;
        int act = r->hs ? MNV3_ACT_HS : MNV3_ACT_RELU, j = 0;
        char pre[96];
        if (b->has_expand) {
            snprintf(pre, sizeof pre, "features.%d.block.%d", i + 1, j++);
            if (mnv3_cbn_init(ctx, m, w, &b->expand, pre, b->in, b->exp, 1, 1, 1, act)) goto fail;
        }
        snprintf(pre, sizeof pre, "features.%d.block.%d", i + 1, j++);
        if (mnv3_cbn_init(ctx, m, w, &b->dw, pre, b->exp, b->exp, b->k, b->stride, b->exp, act)) goto fail;
        if (b->use_se) {
            char n[128];
            int64_t s1[4] = {b->sq, b->exp, 1, 1}, s2[4] = {b->exp, b->sq, 1, 1}, v1[1] = {b->sq}, v2[1] = {b->exp};
            snprintf(n, sizeof n, "features.%d.block.%d.fc1.weight", i + 1, j);
            if (!(b->se_w1 = mnv3_param(ctx, m, w, n, MNV3_P_CONV, 4, s1))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc1.bias", i + 1, j);
            if (!(b->se_b1 = mnv3_param(ctx, m, w, n, MNV3_P_BIAS, 1, v1))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc2.weight", i + 1, j);
            if (!(b->se_w2 = mnv3_param(ctx, m, w, n, MNV3_P_CONV, 4, s2))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc2.bias", i + 1, j++);
            if (!(b->se_b2 = mnv3_param(ctx, m, w, n, MNV3_P_BIAS, 1, v2))) goto fail;
        }
        snprintf(pre, sizeof pre, "features.%d.block.%d", i + 1, j++);
        if (mnv3_cbn_init(ctx, m, w, &b->project, pre, b->exp, b->out, 1, 1, 1, MNV3_ACT_NONE)) goto fail;
    }
    int last_in = m->b[m->nblocks - 1].out;
    m->last_out = 6 * last_in;
    m->hidden = ADJ(arch == MNV3_LARGE ? 1280 : 1024);
#undef ADJ
    char pre[64];
    snprintf(pre, sizeof pre, "features.%d", m->nblocks + 1);
    if (mnv3_cbn_init(ctx, m, w, &m->last, pre, last_in, m->last_out, 1, 1, 1, MNV3_ACT_HS)) goto fail;
    int64_t f1[2] = {m->hidden, m->last_out}, f2[2] = {classes, m->hidden}, h1[1] = {m->hidden}, h2[1] = {classes};
    if (!(m->fc1_w = mnv3_param(ctx, m, w, "classifier.0.weight", MNV3_P_LINEAR, 2, f1))) goto fail;
    if (!(m->fc1_b = mnv3_param(ctx, m, w, "classifier.0.bias", MNV3_P_BIAS, 1, h1))) goto fail;
    if (!(m->fc2_w = mnv3_param(ctx, m, w, "classifier.3.weight", MNV3_P_LINEAR, 2, f2))) goto fail;
    if (!(m->fc2_b = mnv3_param(ctx, m, w, "classifier.3.bias", MNV3_P_BIAS, 1, h2))) goto fail;
    return 0;
fail:
    if (!m->err[0]) mnv3_fail(m, "%s", gcr_ctx_error(ctx));
    mnv3_free(m);
    return -1;
}

/* ---------------------------------------------------------------- forward */

/* Each helper frees what it no longer needs, as careful eager C code does (while capturing the
 * frees are no-ops: traced tensors belong to the graph). m->ops counts primitive ops, i.e. the
 * kernels eager mode launches: hardswish is 4 (add, clamp, mul, div), hardsigmoid 3, views 0. */
static gcr_tensor *mnv3_cbn_fwd(gcr_ctx *ctx, mnv3_model *m, const mnv3_cbn *c, gcr_tensor *x)
{
    gcr_tensor *y = gcr_conv2d(ctx, x, c->w, NULL, &c->p);
    gcr_tensor *z = gcr_batch_norm(ctx, y, c->mean, c->var, c->gamma, c->beta, 1e-3f);
    gcr_tensor_free(y);
    m->ops += 2;
    if (c->act == MNV3_ACT_NONE) return z;
    y = c->act == MNV3_ACT_HS ? gcr_hardswish(ctx, z) : gcr_relu(ctx, z);
    m->ops += c->act == MNV3_ACT_HS ? 4 : 1;
    gcr_tensor_free(z);
    return y;
}

/* squeeze-excite: x * hardsigmoid(fc2(relu(fc1(avgpool(x))))) */
static gcr_tensor *mnv3_se_fwd(gcr_ctx *ctx, mnv3_model *m, const mnv3_block *b, gcr_tensor *x)
{
    gcr_tensor *p = gcr_adaptive_avg_pool2d(ctx, x, 1, 1); /* [N,exp,1,1] */
    gcr_conv2d_params one = gcr_conv2d_default();
    gcr_tensor *s1 = gcr_conv2d(ctx, p, b->se_w1, b->se_b1, &one); /* [N,sq,1,1] */
    gcr_tensor *r = gcr_relu(ctx, s1);
    gcr_tensor *s2 = gcr_conv2d(ctx, r, b->se_w2, b->se_b2, &one); /* [N,exp,1,1] */
    gcr_tensor *sc = gcr_hardsigmoid(ctx, s2);
    gcr_tensor *y = gcr_mul(ctx, x, sc);
    m->ops += 1 + 1 + 1 + 1 + 3 + 1;
    gcr_tensor_free(p);
    gcr_tensor_free(s1);
    gcr_tensor_free(r);
    gcr_tensor_free(s2);
    gcr_tensor_free(sc);
    return y;
}

static gcr_tensor *mnv3_block_fwd(gcr_ctx *ctx, mnv3_model *m, const mnv3_block *b, gcr_tensor *x)
{
    gcr_tensor *h = b->has_expand ? mnv3_cbn_fwd(ctx, m, &b->expand, x) : x;
    gcr_tensor *d = mnv3_cbn_fwd(ctx, m, &b->dw, h);
    if (h != x) gcr_tensor_free(h);
    if (b->use_se) {
        gcr_tensor *s = mnv3_se_fwd(ctx, m, b, d);
        gcr_tensor_free(d);
        d = s;
    }
    gcr_tensor *y = mnv3_cbn_fwd(ctx, m, &b->project, d);
    gcr_tensor_free(d);
    if (!b->res) return y;
    gcr_tensor *r = gcr_add(ctx, y, x);
    m->ops += 1;
    gcr_tensor_free(y);
    return r;
}

/* x [N,3,H,W] in the model's dtype and format → logits [N,classes]; NULL on error (ctx says why) */
static gcr_tensor *mnv3_forward(gcr_ctx *ctx, mnv3_model *m, gcr_tensor *x)
{
    m->ops = 0;
    gcr_tensor *h = mnv3_cbn_fwd(ctx, m, &m->first, x);
    for (int i = 0; i < m->nblocks; i++) {
        gcr_tensor *n = mnv3_block_fwd(ctx, m, &m->b[i], h);
        gcr_tensor_free(h);
        h = n;
    }
    gcr_tensor *l = mnv3_cbn_fwd(ctx, m, &m->last, h);
    gcr_tensor_free(h);
    gcr_tensor *p = gcr_adaptive_avg_pool2d(ctx, l, 1, 1); /* [N,last_out,1,1] */
    gcr_tensor_free(l);
    gcr_tensor *f = gcr_flatten(ctx, p, 1, -1); /* view [N,last_out] */
    gcr_tensor *c1 = gcr_linear(ctx, f, m->fc1_w, m->fc1_b);
    gcr_tensor *a = gcr_hardswish(ctx, c1);
    gcr_tensor *d = gcr_dropout(ctx, a, 0.2f); /* inference: a itself */
    gcr_tensor *y = gcr_linear(ctx, d, m->fc2_w, m->fc2_b);
    m->ops += 1 + 1 + 4 + 1;
    gcr_tensor_free(f);
    gcr_tensor_free(p);
    gcr_tensor_free(c1);
    gcr_tensor_free(a);
    return y;
}

/* Comparing logits: both the sample and test/test_mobilenet.c judge a run this way. */

/* max |a - ref| / max |ref| over n values: one figure for a whole logits batch, insensitive to
 * logits that happen to be near zero */
static double mnv3_rel_diff(const float *a, const float *ref, int64_t n)
{
    double d = 0, r = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - ref[i]);
        if (!(e <= d)) d = e; /* NaN propagates */
        if (fabs(ref[i]) > r) r = fabs(ref[i]);
    }
    return r > 0 ? d / r : d;
}

/* index of the largest of p[0..n) (the first on ties): the top-1 class */
static int mnv3_argmax(const float *p, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        if (p[i] > p[k]) k = i;
    return k;
}

#endif /* GCR_SAMPLE_MODEL_H */
