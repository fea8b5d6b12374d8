/* resnet.h — torchvision's ResNet with Bottleneck blocks (ResNet-50: layers [3,4,6,3]; 101:
 * [3,4,23,3]; 152: [3,8,36,3]) written only with gcr's public API, as the plain eager code a C user
 * already has: rn_forward() is an ordinary function of (ctx, model, input) that the sample runs
 * eagerly or wraps in GCR_REGION. The architecture is torchvision's v1.5: conv1 7x7 stride 2 pad 3
 * → bn1 → relu → maxpool 3x3 stride 2 pad 1; layer1..4 of Bottleneck blocks (1x1 → 3x3 → 1x1
 * convs, each followed by BN, the stride in the 3x3 conv, expansion 4, a 1x1 conv + BN downsample
 * on the first block of a stage whose shape changes, relu after the residual add); global average
 * pool; fc. BN eps 1e-5. The base width (64 in torchvision) scales every stage: planes are width,
 * 2 width, 4 width, 8 width, so reduced-width goldens keep the architecture
 * (tools/export_resnet.py). Parameters come from a safetensors file with torchvision's state_dict
 * names (conv1.weight, layer1.0.downsample.0.weight, fc.bias, ...) or from a seeded random init
 * (sample_util.h). Shared by samples/resnet50.c and test/test_resnet.c; everything is static so each
 * program compiles its own copy. */
#ifndef GCR_SAMPLE_RESNET_H
#define GCR_SAMPLE_RESNET_H

#include "gcr.h"
#include "sample_util.h"

#define RN_MAX_BLOCKS 64 /* ResNet-152 has 50 */
#define RN_EXPANSION 4

typedef struct {
    smp_cbn c1, c2, c3; /* 1x1 → relu, 3x3 (the block's stride) → relu, 1x1 (no activation before the add) */
    smp_cbn down;       /* 1x1 conv + BN on the identity path, when has_down */
    int has_down;
} rn_block;

typedef struct {
    int width, layers[4], classes, nblocks;
    rn_block b[RN_MAX_BLOCKS];
    smp_cbn stem; /* conv1 → bn1 → relu */
    gcr_pool2d_params pool;
    int features; /* fc's input: 8 * width * expansion */
    gcr_tensor *fc_w, *fc_b;
    int ops;      /* primitive ops the last forward dispatched = eager kernels per forward */
    char err[512];
    smp_params ps; /* dtype, layout, generator and the tensors this model made */
} rn_model;

/* "resnet<depth>": 3 convs per block, plus conv1 and fc (ResNet-50 for [3,4,6,3]) */
static int rn_depth(const int *layers) { return 3 * (layers[0] + layers[1] + layers[2] + layers[3]) + 2; }

static void rn_free(rn_model *m) { smp_params_free(&m->ps); }

/* Builds the model on ctx: base width (64 for torchvision's), blocks per stage, classes (taken
 * from the file when one is given). weights: a loaded file (borrowed; must outlive the model) or
 * NULL for the seeded random init. Returns 0, or -1 with m->err (or the ctx's error) set. */
static int rn_init(gcr_ctx *ctx, rn_model *m, int width, const int layers[4], int classes, gcr_dtype dtype,
                   gcr_format fmt, const gcr_weights *w, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    smp_params_init(&m->ps, dtype, fmt, seed, "resnet", "--width and --layers", m->err, sizeof m->err);
    if (width < 1 || width > 4096) return smp_fail(&m->ps, "base width %d outside [1, 4096]", width);
    for (int s = 0; s < 4; s++) {
        if (layers[s] < 1) return smp_fail(&m->ps, "stage %d has %d blocks (at least 1)", s + 1, layers[s]);
        m->layers[s] = layers[s];
        m->nblocks += layers[s];
    }
    if (m->nblocks > RN_MAX_BLOCKS) return smp_fail(&m->ps, "%d blocks, at most %d", m->nblocks, RN_MAX_BLOCKS);
    m->width = width;
    if (w) {
        gcr_tensor *fc = gcr_weights_get(w, "fc.weight");
        if (!fc || gcr_tensor_ndim(fc) != 2) return smp_fail(&m->ps, "weights: no 2-d 'fc.weight'");
        classes = (int)gcr_tensor_dim(fc, 0);
    }
    if (classes < 1) return smp_fail(&m->ps, "classes %d < 1", classes);
    m->classes = classes;
    const float eps = 1e-5f;
    if (smp_cbn_init(ctx, &m->ps, w, &m->stem, "conv1.weight", "bn1", 3, width, 7, 2, 1, eps, SMP_ACT_RELU)) goto fail;
    m->pool = gcr_pool2d_default(3);
    m->pool.stride[0] = m->pool.stride[1] = 2;
    m->pool.padding[0] = m->pool.padding[1] = 1;
    int in = width, i = 0;
    for (int s = 0; s < 4; s++) {
        int planes = width << s, out = planes * RN_EXPANSION;
        for (int j = 0; j < layers[s]; j++, i++) {
            rn_block *b = &m->b[i];
            int stride = j == 0 && s > 0 ? 2 : 1;
            char conv[96], bn[96];
#define CBN(c, n, cin, cout, k, st, act)                                                                            \
    snprintf(conv, sizeof conv, "layer%d.%d.conv%d.weight", s + 1, j, n);                                         \
    snprintf(bn, sizeof bn, "layer%d.%d.bn%d", s + 1, j, n);                                                      \
    if (smp_cbn_init(ctx, &m->ps, w, c, conv, bn, cin, cout, k, st, 1, eps, act)) goto fail;
            CBN(&b->c1, 1, in, planes, 1, 1, SMP_ACT_RELU)
            CBN(&b->c2, 2, planes, planes, 3, stride, SMP_ACT_RELU)
            CBN(&b->c3, 3, planes, out, 1, 1, SMP_ACT_NONE)
#undef CBN
            b->has_down = stride != 1 || in != out;
            if (b->has_down) {
                snprintf(conv, sizeof conv, "layer%d.%d.downsample.0.weight", s + 1, j);
                snprintf(bn, sizeof bn, "layer%d.%d.downsample.1", s + 1, j);
                if (smp_cbn_init(ctx, &m->ps, w, &b->down, conv, bn, in, out, 1, stride, 1, eps, SMP_ACT_NONE)) goto fail;
            }
            in = out;
        }
    }
    m->features = in;
    int64_t fs[2] = {classes, in}, bs[1] = {classes};
    if (!(m->fc_w = smp_param(ctx, &m->ps, w, "fc.weight", SMP_P_LINEAR, 2, fs))) goto fail;
    if (!(m->fc_b = smp_param(ctx, &m->ps, w, "fc.bias", SMP_P_BIAS, 1, bs))) goto fail;
    return 0;
fail:
    return smp_init_failed(ctx, &m->ps);
}

/* Each helper frees what it no longer needs, as careful eager C code does (while capturing the
 * frees are no-ops: traced tensors belong to the graph). m->ops counts primitive ops, i.e. the
 * kernels eager mode launches (flatten is a view: 0). */
static gcr_tensor *rn_block_fwd(gcr_ctx *ctx, rn_model *m, const rn_block *b, gcr_tensor *x)
{
    gcr_tensor *h1 = smp_cbn_fwd(ctx, &b->c1, x, &m->ops);
    gcr_tensor *h2 = smp_cbn_fwd(ctx, &b->c2, h1, &m->ops);
    gcr_tensor_free(h1);
    gcr_tensor *h3 = smp_cbn_fwd(ctx, &b->c3, h2, &m->ops);
    gcr_tensor_free(h2);
    gcr_tensor *id = b->has_down ? smp_cbn_fwd(ctx, &b->down, x, &m->ops) : x;
    gcr_tensor *s = gcr_add(ctx, h3, id);
    gcr_tensor_free(h3);
    if (id != x) gcr_tensor_free(id);
    gcr_tensor *y = gcr_relu(ctx, s);
    gcr_tensor_free(s);
    m->ops += 2;
    return y;
}

/* x [N,3,H,W] in the model's dtype and format → logits [N,classes]; NULL on error (ctx says why) */
static gcr_tensor *rn_forward(gcr_ctx *ctx, rn_model *m, gcr_tensor *x)
{
    m->ops = 0;
    gcr_tensor *s = smp_cbn_fwd(ctx, &m->stem, x, &m->ops);
    gcr_tensor *h = gcr_max_pool2d(ctx, s, &m->pool);
    gcr_tensor_free(s);
    m->ops += 1;
    for (int i = 0; i < m->nblocks; i++) {
        gcr_tensor *n = rn_block_fwd(ctx, m, &m->b[i], h);
        gcr_tensor_free(h);
        h = n;
    }
    gcr_tensor *p = gcr_adaptive_avg_pool2d(ctx, h, 1, 1); /* [N,features,1,1] */
    gcr_tensor_free(h);
    gcr_tensor *f = gcr_flatten(ctx, p, 1, -1); /* view [N,features] */
    gcr_tensor *y = gcr_linear(ctx, f, m->fc_w, m->fc_b);
    m->ops += 1 + 1;
    gcr_tensor_free(f);
    gcr_tensor_free(p);
    return y;
}

#endif /* GCR_SAMPLE_RESNET_H */
