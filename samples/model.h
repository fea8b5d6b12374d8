/* model.h — MobileNet-v3 Large and Small (torchvision's architecture: its inverted residual
 * tables, _make_divisible, squeeze-excite with _make_divisible(expand / 4, 8) channels, BN eps
 * 1e-3, classifier Linear → hardswish → Dropout → Linear, width multiplier) written only with gcr's
 * public API, as the plain eager code a C user already has: mnv3_forward() is an ordinary function
 * of (ctx, model, input) that the sample runs eagerly or wraps in GCR_REGION. Parameters come from
 * a safetensors file with torchvision's state_dict names (tools/export_mobilenet.py) or from a
 * seeded random init (sample_util.h, shared with samples/resnet.h). Shared by samples/mobilenet_v3.c
 * and test/test_mobilenet.c; everything is static so each program compiles its own copy. */
#ifndef GCR_SAMPLE_MODEL_H
#define GCR_SAMPLE_MODEL_H

#include "gcr.h"
#include "sample_util.h"

typedef enum { MNV3_LARGE, MNV3_SMALL } mnv3_arch;

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

typedef struct {
    int in, exp, out, k, stride, sq, use_se, hs, res;
    int has_expand;
    smp_cbn expand, dw, project; /* conv → BN → activation */
    gcr_tensor *se_w1, *se_b1, *se_w2, *se_b2; /* [sq,exp,1,1] [sq] [exp,sq,1,1] [exp] */
} mnv3_block;

typedef struct {
    mnv3_arch arch;
    double width;
    int classes;
    int nblocks;
    mnv3_block b[MNV3_MAX_BLOCKS];
    smp_cbn first, last;  /* 3 → first block's in (stride 2, hardswish); last block's out → 6x (hardswish) */
    int last_out, hidden;  /* classifier: Linear(last_out, hidden) → hardswish → Dropout → Linear(hidden, classes) */
    gcr_tensor *fc1_w, *fc1_b, *fc2_w, *fc2_b;
    int ops;       /* primitive ops the last forward dispatched = eager kernels per forward */
    char err[512];
    smp_params ps; /* dtype, layout, generator and the tensors this model made */
} mnv3_model;

/* ---------------------------------------------------------------- parameters */

/* conv `prefix`.0 → BN `prefix`.1 (torchvision's Conv2dNormActivation), BN eps 1e-3 */
static int mnv3_cbn_init(gcr_ctx *ctx, mnv3_model *m, const gcr_weights *w, smp_cbn *c, const char *prefix, int cin,
                         int cout, int k, int stride, int groups, int act)
{
    char conv[160], bn[160];
    snprintf(conv, sizeof conv, "%s.0.weight", prefix);
    snprintf(bn, sizeof bn, "%s.1", prefix);
    return smp_cbn_init(ctx, &m->ps, w, c, conv, bn, cin, cout, k, stride, groups, 1e-3f, act);
}

static void mnv3_free(mnv3_model *m) { smp_params_free(&m->ps); }

/* Builds the model on ctx. weights: a loaded file (borrowed; must outlive the model) or NULL for
 * the seeded random init; classes is taken from the file when one is given. Returns 0, or -1 with
 * m->err (or the ctx's error) set. */
static int mnv3_init(gcr_ctx *ctx, mnv3_model *m, mnv3_arch arch, double width, int classes, gcr_dtype dtype,
                     gcr_format fmt, const gcr_weights *w, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->arch = arch;
    m->width = width;
    smp_params_init(&m->ps, dtype, fmt, seed, "mobilenet_v3", "--model and --width", m->err, sizeof m->err);
    if (!(width > 0 && width <= 8)) return smp_fail(&m->ps, "width %g outside (0, 8]", width);
    const mnv3_row *rows = arch == MNV3_LARGE ? mnv3_large_rows : mnv3_small_rows;
    m->nblocks = arch == MNV3_LARGE ? 15 : 11;
    if (w) {
        gcr_tensor *cls = gcr_weights_get(w, "classifier.3.weight");
        if (!cls || gcr_tensor_ndim(cls) != 2) return smp_fail(&m->ps, "weights: no 2-d 'classifier.3.weight'");
        classes = (int)gcr_tensor_dim(cls, 0);
    }
    if (classes < 1) return smp_fail(&m->ps, "classes %d < 1", classes);
    m->classes = classes;
#define ADJ(c) smp_make_divisible((c) * width, 8)
    int first = ADJ(rows[0].in);
    if (mnv3_cbn_init(ctx, m, w, &m->first, "features.0", 3, first, 3, 2, 1, SMP_ACT_HS)) goto fail;
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
        b->sq = smp_make_divisible(b->exp / 4, 8); /* integer division first, as torchvision */
        b->res = r->stride == 1 && b->in == b->out;
        b->has_expand = b->exp != b->in;
        int act = r->hs ? SMP_ACT_HS : SMP_ACT_RELU, j = 0;
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
            if (!(b->se_w1 = smp_param(ctx, &m->ps, w, n, SMP_P_CONV, 4, s1))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc1.bias", i + 1, j);
            if (!(b->se_b1 = smp_param(ctx, &m->ps, w, n, SMP_P_BIAS, 1, v1))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc2.weight", i + 1, j);
            if (!(b->se_w2 = smp_param(ctx, &m->ps, w, n, SMP_P_CONV, 4, s2))) goto fail;
            snprintf(n, sizeof n, "features.%d.block.%d.fc2.bias", i + 1, j++);
            if (!(b->se_b2 = smp_param(ctx, &m->ps, w, n, SMP_P_BIAS, 1, v2))) goto fail;
        }
        snprintf(pre, sizeof pre, "features.%d.block.%d", i + 1, j++);
        if (mnv3_cbn_init(ctx, m, w, &b->project, pre, b->exp, b->out, 1, 1, 1, SMP_ACT_NONE)) goto fail;
    }
    int last_in = m->b[m->nblocks - 1].out;
    m->last_out = 6 * last_in;
    m->hidden = ADJ(arch == MNV3_LARGE ? 1280 : 1024);
#undef ADJ
    char pre[64];
    snprintf(pre, sizeof pre, "features.%d", m->nblocks + 1);
    if (mnv3_cbn_init(ctx, m, w, &m->last, pre, last_in, m->last_out, 1, 1, 1, SMP_ACT_HS)) goto fail;
    int64_t f1[2] = {m->hidden, m->last_out}, f2[2] = {classes, m->hidden}, h1[1] = {m->hidden}, h2[1] = {classes};
    if (!(m->fc1_w = smp_param(ctx, &m->ps, w, "classifier.0.weight", SMP_P_LINEAR, 2, f1))) goto fail;
    if (!(m->fc1_b = smp_param(ctx, &m->ps, w, "classifier.0.bias", SMP_P_BIAS, 1, h1))) goto fail;
    if (!(m->fc2_w = smp_param(ctx, &m->ps, w, "classifier.3.weight", SMP_P_LINEAR, 2, f2))) goto fail;
    if (!(m->fc2_b = smp_param(ctx, &m->ps, w, "classifier.3.bias", SMP_P_BIAS, 1, h2))) goto fail;
    return 0;
fail:
    return smp_init_failed(ctx, &m->ps);
}

/* ---------------------------------------------------------------- forward */

/* Each helper frees what it no longer needs, as careful eager C code does (while capturing the
 * frees are no-ops: traced tensors belong to the graph). m->ops counts primitive ops, i.e. the
 * kernels eager mode launches: hardswish is 4 (add, clamp, mul, div), hardsigmoid 3, views 0. */

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
    gcr_tensor *h = b->has_expand ? smp_cbn_fwd(ctx, &b->expand, x, &m->ops) : x;
    gcr_tensor *d = smp_cbn_fwd(ctx, &b->dw, h, &m->ops);
    if (h != x) gcr_tensor_free(h);
    if (b->use_se) {
        gcr_tensor *s = mnv3_se_fwd(ctx, m, b, d);
        gcr_tensor_free(d);
        d = s;
    }
    gcr_tensor *y = smp_cbn_fwd(ctx, &b->project, d, &m->ops);
    gcr_tensor_free(d);
    return smp_skip(ctx, y, x, b->res, &m->ops);
}

/* x [N,3,H,W] in the model's dtype and format → logits [N,classes]; NULL on error (ctx says why) */
static gcr_tensor *mnv3_forward(gcr_ctx *ctx, mnv3_model *m, gcr_tensor *x)
{
    m->ops = 0;
    gcr_tensor *h = smp_cbn_fwd(ctx, &m->first, x, &m->ops);
    for (int i = 0; i < m->nblocks; i++) {
        gcr_tensor *n = mnv3_block_fwd(ctx, m, &m->b[i], h);
        gcr_tensor_free(h);
        h = n;
    }
    gcr_tensor *f = smp_pooled(ctx, &m->last, h, &m->ops); /* [N,last_out] */
    gcr_tensor *c1 = gcr_linear(ctx, f, m->fc1_w, m->fc1_b);
    gcr_tensor *a = gcr_hardswish(ctx, c1);
    gcr_tensor *d = gcr_dropout(ctx, a, 0.2f); /* inference: a itself */
    gcr_tensor *y = gcr_linear(ctx, d, m->fc2_w, m->fc2_b);
    m->ops += 1 + 4 + 1;
    gcr_tensor_free(f);
    gcr_tensor_free(c1);
    gcr_tensor_free(a);
    return y;
}

/* the logits comparison of sample_util.h under the names test/test_mobilenet.c uses */
#define mnv3_rel_diff smp_rel_diff
#define mnv3_argmax smp_argmax

#endif /* GCR_SAMPLE_MODEL_H */
