/* sample_util.h — what the sample models share (samples/model.h: MobileNet-v3, samples/resnet.h:
 * ResNet): parameters by their torchvision state_dict names, loaded from a safetensors file (shape
 * checked) or drawn from a seeded generator, cast to the model's dtype and, for conv weights of an
 * NHWC model, stored channels-last; the tensors a model made, owned until it is freed; conv → batch
 * norm → activation; and the logits comparison the samples and their parity tests judge by. Public
 * API only; everything is static so each program compiles its own copy. */
#ifndef GCR_SAMPLE_UTIL_H
#define GCR_SAMPLE_UTIL_H

#include "gcr.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a ResNet-152 at f16 NHWC owns each of its ~780 parameters up to three times (random f32, cast,
 * relayout) */
#define SMP_MAX_OWNED 4096

/* What building a model's parameters needs: the model embeds one and sets it up before its first
 * smp_param call. err points into the model (its callers read the message there). */
typedef struct {
    gcr_dtype dtype;
    gcr_format fmt;
    uint64_t rng;
    const char *family; /* in messages: "is the file a torchvision <family> state_dict?" */
    const char *hint;   /* in messages: which options decide the shapes, e.g. "--model and --width" */
    char *err;
    size_t errsz;
    gcr_tensor *owned[SMP_MAX_OWNED]; /* tensors the model made (random init, casts, relayouts) */
    int nowned;
} smp_params;

enum { SMP_ACT_NONE, SMP_ACT_RELU, SMP_ACT_HS, SMP_ACT_RELU6 };

/* torchvision's _make_divisible: round to a multiple of divisor, never more than 10% down (inline: the
 * MobileNets use it, ResNet does not) */
static inline int smp_make_divisible(double v, int divisor)
{
    int nv = (int)(v + divisor / 2.0) / divisor * divisor;
    if (nv < divisor) nv = divisor;
    if (nv < 0.9 * v) nv += divisor;
    return nv;
}

/* how a random parameter is drawn */
enum { SMP_P_CONV, SMP_P_BN_MEAN, SMP_P_BN_VAR, SMP_P_BN_GAMMA, SMP_P_BN_BETA, SMP_P_BIAS, SMP_P_LINEAR };

static void smp_params_init(smp_params *p, gcr_dtype dtype, gcr_format fmt, uint64_t seed, const char *family,
                            const char *hint, char *err, size_t errsz)
{
    memset(p, 0, sizeof *p);
    p->dtype = dtype;
    p->fmt = fmt;
    p->rng = seed ? seed : 1;
    p->family = family;
    p->hint = hint;
    p->err = err;
    p->errsz = errsz;
    if (errsz) err[0] = 0;
}

static int smp_fail(smp_params *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, p->errsz, fmt, ap);
    va_end(ap);
    return -1;
}

static double smp_uniform(uint64_t *rng) /* [0, 1), xorshift64* */
{
    *rng ^= *rng >> 12;
    *rng ^= *rng << 25;
    *rng ^= *rng >> 27;
    return (double)((*rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double smp_normal(uint64_t *rng)
{
    double u = smp_uniform(rng), v = smp_uniform(rng);
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

/* keeps t (a constant) until smp_params_free; a full list is an error, not a silent leak */
static gcr_tensor *smp_own(smp_params *p, gcr_tensor *t)
{
    if (!t) return NULL;
    if (p->nowned == SMP_MAX_OWNED) {
        smp_fail(p, "more than %d parameter tensors", SMP_MAX_OWNED);
        gcr_tensor_free(t);
        return NULL;
    }
    p->owned[p->nowned++] = gcr_tensor_keep(gcr_tensor_set_const(t));
    return t;
}

static void smp_params_free(smp_params *p)
{
    for (int i = 0; i < p->nowned; i++) gcr_tensor_free(p->owned[i]);
    p->nowned = 0;
}

/* the end of a failed build: the ctx's error unless a message is set already; frees what the
 * build made. Returns -1. */
static int smp_init_failed(gcr_ctx *ctx, smp_params *p)
{
    if (!p->err[0]) smp_fail(p, "%s", gcr_ctx_error(ctx));
    smp_params_free(p);
    return -1;
}

/* A parameter by its state_dict name: from the file (checked against the shape the architecture
 * wants) or random; then cast to the model's dtype and, for conv weights of an NHWC model, stored
 * channels-last as PyTorch's model.to(memory_format=channels_last) does. */
static gcr_tensor *smp_param(gcr_ctx *ctx, smp_params *p, const gcr_weights *w, const char *name, int kind, int ndim,
                             const int64_t *shape)
{
    gcr_tensor *t;
    if (w) {
        t = gcr_weights_get(w, name);
        if (!t) {
            smp_fail(p, "weights: no tensor '%s' (is the file a torchvision %s state_dict?)", name, p->family);
            return NULL;
        }
        int ok = gcr_tensor_ndim(t) == ndim;
        for (int i = 0; ok && i < ndim; i++) ok = gcr_tensor_dim(t, i) == shape[i];
        if (!ok) {
            char got[96], want[96] = "[";
            gcr_tensor_describe(t, got, sizeof got);
            for (int i = 0; i < ndim; i++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "", (long long)shape[i]);
            smp_fail(p, "weights: '%s' is %s in the file, the model wants %s] (do %s match?)", name, got, want, p->hint);
            return NULL;
        }
    } else {
        int64_t n = 1;
        for (int i = 0; i < ndim; i++) n *= shape[i];
        float *h = malloc((size_t)n * sizeof *h);
        if (!h) {
            smp_fail(p, "out of host memory");
            return NULL;
        }
        /* He-style for convs (fan_in = C/groups * K * K keeps activations O(1) through depth);
         * BN statistics far from identity so a BN read wrongly shows in the logits */
        double fan_in = ndim > 1 ? (double)(n / shape[0]) : 1.0;
        for (int64_t i = 0; i < n; i++) {
            double u = smp_uniform(&p->rng);
            switch (kind) {
            case SMP_P_CONV: h[i] = (float)(smp_normal(&p->rng) * sqrt(2.0 / fan_in)); break;
            case SMP_P_BN_MEAN: h[i] = (float)(0.4 * u - 0.2); break;
            case SMP_P_BN_VAR: h[i] = (float)(0.5 + 1.5 * u); break;
            case SMP_P_BN_GAMMA: h[i] = (float)(0.5 + u); break;
            case SMP_P_BN_BETA: case SMP_P_BIAS: h[i] = (float)(0.2 * u - 0.1); break;
            default: h[i] = (float)((2 * u - 1) / sqrt(fan_in)); break; /* nn.Linear's default range */
            }
        }
        t = smp_own(p, gcr_tensor_from_data(ctx, GCR_F32, ndim, shape, GCR_NCHW, h));
        free(h);
        if (!t) return NULL;
    }
    if (gcr_tensor_dtype(t) != p->dtype) t = smp_own(p, gcr_cast(ctx, t, p->dtype));
    if (t && kind == SMP_P_CONV && p->fmt == GCR_NHWC) t = smp_own(p, gcr_contiguous(ctx, t, GCR_NHWC));
    return t;
}

/* conv (no bias) → batch norm → optional activation */
typedef struct {
    gcr_tensor *w, *mean, *var, *gamma, *beta; /* w [O,C/groups,K,K]; the rest [O] */
    gcr_conv2d_params p;
    float eps;
    int act;
} smp_cbn;

/* conv weight `conv` [cout, cin/groups, k, k] and the BN parameters `bn`.running_mean,
 * .running_var, .weight, .bias; padding (k - 1) / 2 as both families use */
static int smp_cbn_init(gcr_ctx *ctx, smp_params *p, const gcr_weights *w, smp_cbn *c, const char *conv,
                        const char *bn, int cin, int cout, int k, int stride, int groups, float eps, int act)
{
    char n[192];
    int64_t ws[4] = {cout, cin / groups, k, k}, vs[1] = {cout};
    if (!(c->w = smp_param(ctx, p, w, conv, SMP_P_CONV, 4, ws))) return -1;
    static const char *names[4] = {"running_mean", "running_var", "weight", "bias"};
    gcr_tensor **dst[4] = {&c->mean, &c->var, &c->gamma, &c->beta};
    for (int i = 0; i < 4; i++) {
        snprintf(n, sizeof n, "%s.%s", bn, names[i]);
        if (!(*dst[i] = smp_param(ctx, p, w, n, SMP_P_BN_MEAN + i, 1, vs))) return -1;
    }
    c->p = gcr_conv2d_default();
    c->p.stride[0] = c->p.stride[1] = stride;
    c->p.padding[0] = c->p.padding[1] = (k - 1) / 2;
    c->p.groups = groups;
    c->eps = eps;
    c->act = act;
    return 0;
}

/* Frees what it no longer needs, as careful eager C code does (while capturing the frees are
 * no-ops: traced tensors belong to the graph). *ops counts primitive ops, i.e. the kernels eager
 * mode launches: hardswish is 4 (add, clamp, mul, div). */
static gcr_tensor *smp_cbn_fwd(gcr_ctx *ctx, const smp_cbn *c, gcr_tensor *x, int *ops)
{
    gcr_tensor *y = gcr_conv2d(ctx, x, c->w, NULL, &c->p);
    gcr_tensor *z = gcr_batch_norm(ctx, y, c->mean, c->var, c->gamma, c->beta, c->eps);
    gcr_tensor_free(y);
    *ops += 2;
    if (c->act == SMP_ACT_NONE) return z;
    y = c->act == SMP_ACT_HS ? gcr_hardswish(ctx, z) : c->act == SMP_ACT_RELU6 ? gcr_relu6(ctx, z) : gcr_relu(ctx, z);
    *ops += c->act == SMP_ACT_HS ? 4 : 1;
    gcr_tensor_free(z);
    return y;
}

/* an inverted residual's end: y + x where res (stride 1, as many channels out as in), freeing y;
 * else y itself */
static inline gcr_tensor *smp_skip(gcr_ctx *ctx, gcr_tensor *y, gcr_tensor *x, int res, int *ops)
{
    if (!res) return y;
    gcr_tensor *r = gcr_add(ctx, y, x);
    *ops += 1;
    gcr_tensor_free(y);
    return r;
}

/* the MobileNets' last conv block over h (freed), then its global average pool flattened: [N,C],
 * a view whose storage lives as long as it does */
static inline gcr_tensor *smp_pooled(gcr_ctx *ctx, const smp_cbn *last, gcr_tensor *h, int *ops)
{
    gcr_tensor *l = smp_cbn_fwd(ctx, last, h, ops);
    gcr_tensor_free(h);
    gcr_tensor *p = gcr_adaptive_avg_pool2d(ctx, l, 1, 1); /* [N,C,1,1] */
    gcr_tensor_free(l);
    gcr_tensor *f = gcr_flatten(ctx, p, 1, -1);
    gcr_tensor_free(p);
    *ops += 1;
    return f;
}

/* Comparing logits: the samples and their parity tests judge a run this way. */


/* max |a - ref| / max |ref| over n values: one figure for a whole logits batch, insensitive to
 * logits that happen to be near zero */
static double smp_rel_diff(const float *a, const float *ref, int64_t n)
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
static int smp_argmax(const float *p, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        if (p[i] > p[k]) k = i;
    return k;
}

#endif /* GCR_SAMPLE_UTIL_H */
