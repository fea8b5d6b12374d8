/* mobilenet_v2.h — MobileNet-v2 (torchvision's architecture: its inverted residual table of
 * (expansion t, channels c, repeats n, stride s), _make_divisible to multiples of 8, ReLU6, BN eps
 * 1e-5, a final 1x1 conv to 1280 channels, classifier Dropout → Linear, width multiplier) written
 * only with gcr's public API, as the plain eager code a C user already has: mnv2_forward() is an
 * ordinary function of (ctx, model, input) that samples/mobilenet_v2.c runs eagerly or wraps in
 * GCR_REGION. It is a second depthwise-separable network for the conv->conv fusion: every block is
 * expand 1x1 → depthwise 3x3 → project 1x1, none with squeeze-excite. Parameters come from a
 * safetensors file with torchvision's state_dict names or from a seeded random init
 * (sample_util.h). Everything is static so each program compiles its own copy. */
#ifndef GCR_SAMPLE_MOBILENET_V2_H
#define GCR_SAMPLE_MOBILENET_V2_H

#include "gcr.h"
#include "sample_util.h"

/* one row of torchvision's inverted residual setting, before the width multiplier */
typedef struct { int t, c, n, s; } mnv2_row;

static const mnv2_row mnv2_rows[] = {
    {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
};
#define MNV2_MAX_BLOCKS 17

typedef struct {
    int in, hidden, out, stride, res, has_expand;
    smp_cbn expand, dw, project; /* conv → BN → ReLU6 (project: no activation) */
} mnv2_block;

typedef struct {
    double width;
    int classes;
    int nblocks;
    mnv2_block b[MNV2_MAX_BLOCKS];
    smp_cbn first, last; /* 3 → 32 (stride 2); last block's 320 → 1280 (1x1) */
    int last_out;
    gcr_tensor *fc_w, *fc_b; /* Linear(last_out, classes) */
    int ops;                 /* primitive ops the last forward dispatched = eager kernels per forward */
    char err[512];
    smp_params ps; /* dtype, layout, generator and the tensors this model made */
} mnv2_model;

static void mnv2_free(mnv2_model *m) { smp_params_free(&m->ps); }

/* conv `conv` and BN `bn` (torchvision's names), BN eps 1e-5, ReLU6 unless act says otherwise */
static int mnv2_cbn_init(gcr_ctx *ctx, mnv2_model *m, const gcr_weights *w, smp_cbn *c, const char *conv,
                         const char *bn, int cin, int cout, int k, int stride, int groups, int act)
{
    return smp_cbn_init(ctx, &m->ps, w, c, conv, bn, cin, cout, k, stride, groups, 1e-5f, act);
}

/* Builds the model on ctx. weights: a loaded file (borrowed; must outlive the model) or NULL for
 * the seeded random init; classes is taken from the file when one is given. Returns 0, or -1 with
 * m->err (or the ctx's error) set. */
static int mnv2_init(gcr_ctx *ctx, mnv2_model *m, double width, int classes, gcr_dtype dtype, gcr_format fmt,
                     const gcr_weights *w, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->width = width;
    smp_params_init(&m->ps, dtype, fmt, seed, "mobilenet_v2", "--width", m->err, sizeof m->err);
    if (!(width > 0 && width <= 8)) return smp_fail(&m->ps, "width %g outside (0, 8]", width);
    if (w) {
        gcr_tensor *cls = gcr_weights_get(w, "classifier.1.weight");
        if (!cls || gcr_tensor_ndim(cls) != 2) return smp_fail(&m->ps, "weights: no 2-d 'classifier.1.weight'");
        classes = (int)gcr_tensor_dim(cls, 0);
    }
    if (classes < 1) return smp_fail(&m->ps, "classes %d < 1", classes);
    m->classes = classes;
    int in = smp_make_divisible(32 * width, 8);
    m->last_out = smp_make_divisible(1280 * (width > 1.0 ? width : 1.0), 8);
    if (mnv2_cbn_init(ctx, m, w, &m->first, "features.0.0.weight", "features.0.1", 3, in, 3, 2, 1, SMP_ACT_RELU6))
        goto fail;
    int f = 1; /* features.<f>: the blocks, then the last conv */
    for (size_t r = 0; r < sizeof mnv2_rows / sizeof mnv2_rows[0]; r++) {
        const int out = smp_make_divisible(mnv2_rows[r].c * width, 8);
        for (int i = 0; i < mnv2_rows[r].n; i++, f++) {
            mnv2_block *b = &m->b[m->nblocks++];
            b->in = in;
            b->out = out;
            b->stride = i == 0 ? mnv2_rows[r].s : 1;
            b->hidden = in * mnv2_rows[r].t; /* int(round(inp * expand_ratio)), an integer ratio */
            b->has_expand = mnv2_rows[r].t != 1;
            b->res = b->stride == 1 && in == out;
            char conv[96], bn[96];
            int j = 0; /* features.<f>.conv.<j>: the layers in order */
            if (b->has_expand) {
                snprintf(conv, sizeof conv, "features.%d.conv.%d.0.weight", f, j);
                snprintf(bn, sizeof bn, "features.%d.conv.%d.1", f, j++);
                if (mnv2_cbn_init(ctx, m, w, &b->expand, conv, bn, in, b->hidden, 1, 1, 1, SMP_ACT_RELU6)) goto fail;
            }
            snprintf(conv, sizeof conv, "features.%d.conv.%d.0.weight", f, j);
            snprintf(bn, sizeof bn, "features.%d.conv.%d.1", f, j++);
            if (mnv2_cbn_init(ctx, m, w, &b->dw, conv, bn, b->hidden, b->hidden, 3, b->stride, b->hidden, SMP_ACT_RELU6))
                goto fail;
            /* the projection is a bare Conv2d then a BatchNorm2d: conv.<j>.weight, conv.<j + 1> */
            snprintf(conv, sizeof conv, "features.%d.conv.%d.weight", f, j);
            snprintf(bn, sizeof bn, "features.%d.conv.%d", f, j + 1);
            if (mnv2_cbn_init(ctx, m, w, &b->project, conv, bn, b->hidden, out, 1, 1, 1, SMP_ACT_NONE)) goto fail;
            in = out;
        }
    }
    char conv[64], bn[64];
    snprintf(conv, sizeof conv, "features.%d.0.weight", f);
    snprintf(bn, sizeof bn, "features.%d.1", f);
    if (mnv2_cbn_init(ctx, m, w, &m->last, conv, bn, in, m->last_out, 1, 1, 1, SMP_ACT_RELU6)) goto fail;
    int64_t fs[2] = {classes, m->last_out}, hs[1] = {classes};
    if (!(m->fc_w = smp_param(ctx, &m->ps, w, "classifier.1.weight", SMP_P_LINEAR, 2, fs))) goto fail;
    if (!(m->fc_b = smp_param(ctx, &m->ps, w, "classifier.1.bias", SMP_P_BIAS, 1, hs))) goto fail;
    return 0;
fail:
    return smp_init_failed(ctx, &m->ps);
}

/* an inverted residual block: [expand 1x1 → ReLU6] → depthwise 3x3 → ReLU6 → project 1x1 [+ x] */
static gcr_tensor *mnv2_block_fwd(gcr_ctx *ctx, mnv2_model *m, const mnv2_block *b, gcr_tensor *x)
{
    gcr_tensor *h = b->has_expand ? smp_cbn_fwd(ctx, &b->expand, x, &m->ops) : x;
    gcr_tensor *d = smp_cbn_fwd(ctx, &b->dw, h, &m->ops);
    if (h != x) gcr_tensor_free(h);
    gcr_tensor *y = smp_cbn_fwd(ctx, &b->project, d, &m->ops);
    gcr_tensor_free(d);
    return smp_skip(ctx, y, x, b->res, &m->ops);
}

/* x [N,3,H,W] in the model's dtype and format → logits [N,classes]; NULL on error (ctx says why) */
static gcr_tensor *mnv2_forward(gcr_ctx *ctx, mnv2_model *m, gcr_tensor *x)
{
    m->ops = 0;
    gcr_tensor *h = smp_cbn_fwd(ctx, &m->first, x, &m->ops);
    for (int i = 0; i < m->nblocks; i++) {
        gcr_tensor *n = mnv2_block_fwd(ctx, m, &m->b[i], h);
        gcr_tensor_free(h);
        h = n;
    }
    gcr_tensor *f = smp_pooled(ctx, &m->last, h, &m->ops); /* [N,last_out] */
    gcr_tensor *d = gcr_dropout(ctx, f, 0.2f);                /* inference: f itself */
    gcr_tensor *y = gcr_linear(ctx, d, m->fc_w, m->fc_b);
    m->ops += 1;
    gcr_tensor_free(f);
    return y;
}

#endif /* GCR_SAMPLE_MOBILENET_V2_H */
