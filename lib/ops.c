/* ops.c — the public op entry points: argument checks, parameters recorded as the caller wrote them
 * (gcr_resolve applies axes, negative indices and -1 dims to the input, in eager calls and in
 * graphs re-specialised for another input alike), defaults, and composites written as their
 * primitives so eager mode pays per primitive. */
#include "internal.h"
#include <stdio.h>

#define NEED(ctx, x, fn)                                                                        \
    do {                                                                                        \
        if (!(ctx)) return NULL;                                                                \
        if (!(x)) {                                                                             \
            gcr_set_error((ctx), GCR_ERR_INVALID, "%s: NULL tensor argument '%s'", fn, #x);     \
            return NULL;                                                                        \
        }                                                                                       \
    } while (0)

static gcr_call call1(gcr_op op, gcr_tensor *x)
{
    gcr_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.n_in = 1;
    c.in[0] = x;
    return c;
}

static gcr_tensor *unary(gcr_ctx *ctx, gcr_op op, gcr_tensor *x)
{
    NEED(ctx, x, gcr_op_table[op].name);
    gcr_call c = call1(op, x);
    return gcr_dispatch(ctx, &c);
}

#define UNARY(fn, OP) gcr_tensor *gcr_##fn(gcr_ctx *ctx, gcr_tensor *x) { return unary(ctx, GCR_OP_##OP, x); }
UNARY(neg, NEG)
UNARY(abs, ABS)
UNARY(relu, RELU)
UNARY(sigmoid, SIGMOID)
UNARY(tanh, TANH)
UNARY(exp, EXP)
UNARY(log, LOG)
UNARY(sqrt, SQRT)
UNARY(rsqrt, RSQRT)
UNARY(gelu, GELU)

gcr_tensor *gcr_clamp(gcr_ctx *ctx, gcr_tensor *x, float lo, float hi)
{
    NEED(ctx, x, "clamp");
    gcr_call c = call1(GCR_OP_CLAMP, x);
    c.p.f[0] = lo;
    c.p.f[1] = hi;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_cast(gcr_ctx *ctx, gcr_tensor *x, gcr_dtype to)
{
    NEED(ctx, x, "cast");
    gcr_call c = call1(GCR_OP_CAST, x);
    c.p.dtype = to;
    return gcr_dispatch(ctx, &c);
}

static gcr_tensor *binary(gcr_ctx *ctx, gcr_op op, gcr_tensor *a, gcr_tensor *b)
{
    const char *fn = gcr_op_table[op].name;
    NEED(ctx, a, fn);
    NEED(ctx, b, fn);
    gcr_call c = call1(op, a);
    c.n_in = 2;
    c.in[1] = b;
    return gcr_dispatch(ctx, &c);
}

static gcr_tensor *binary_scalar(gcr_ctx *ctx, gcr_op op, gcr_tensor *a, float s)
{
    NEED(ctx, a, gcr_op_table[op].name);
    gcr_call c = call1(op, a);
    c.n_in = 2; /* in[1] stays NULL: b is the scalar */
    c.p.has_scalar = 1;
    c.p.f[0] = s;
    return gcr_dispatch(ctx, &c);
}

#define BINARY(fn, OP)                                                                            \
    gcr_tensor *gcr_##fn(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b) { return binary(ctx, GCR_OP_##OP, a, b); } \
    gcr_tensor *gcr_##fn##_scalar(gcr_ctx *ctx, gcr_tensor *a, float s) { return binary_scalar(ctx, GCR_OP_##OP, a, s); }
BINARY(add, ADD)
BINARY(sub, SUB)
BINARY(mul, MUL)
BINARY(div, DIV)
BINARY(maximum, MAXIMUM)
BINARY(minimum, MINIMUM)

/* ---------------------------------------------------------------- composites
 * Each checks its own NULL argument and prefixes a primitive's error with its own name
 * ("softmax: max: ..."), so the message names the op the caller called. */

static gcr_tensor *hardswish(gcr_ctx *ctx, gcr_tensor *x)
{
    gcr_tensor *t = gcr_add_scalar(ctx, x, 3.0f);
    gcr_tensor *u = gcr_clamp(ctx, t, 0.0f, 6.0f);
    gcr_tensor *v = gcr_mul(ctx, x, u);
    gcr_tensor *y = gcr_div_scalar(ctx, v, 6.0f);
    gcr_tensor_free(t);
    gcr_tensor_free(u);
    gcr_tensor_free(v);
    return y;
}

static gcr_tensor *hardsigmoid(gcr_ctx *ctx, gcr_tensor *x)
{
    gcr_tensor *t = gcr_add_scalar(ctx, x, 3.0f);
    gcr_tensor *u = gcr_clamp(ctx, t, 0.0f, 6.0f);
    gcr_tensor *y = gcr_div_scalar(ctx, u, 6.0f);
    gcr_tensor_free(t);
    gcr_tensor_free(u);
    return y;
}

static gcr_tensor *relu6(gcr_ctx *ctx, gcr_tensor *x) { return gcr_clamp(ctx, x, 0.0f, 6.0f); }

static gcr_tensor *silu(gcr_ctx *ctx, gcr_tensor *x)
{
    gcr_tensor *s = gcr_sigmoid(ctx, x);
    gcr_tensor *y = gcr_mul(ctx, x, s);
    gcr_tensor_free(s);
    return y;
}

#define COMPOSITE(fn)                                                                              \
    gcr_tensor *gcr_##fn(gcr_ctx *ctx, gcr_tensor *x)                                              \
    {                                                                                              \
        NEED(ctx, x, #fn);                                                                         \
        gcr_status before = ctx->status;                                                           \
        gcr_tensor *y = fn(ctx, x);                                                                \
        gcr_error_prefix(ctx, before, #fn);                                                        \
        return y;                                                                                  \
    }
COMPOSITE(hardswish)
COMPOSITE(hardsigmoid)
COMPOSITE(relu6)
COMPOSITE(silu)

gcr_tensor *gcr_softmax(gcr_ctx *ctx, gcr_tensor *x, int axis)
{
    NEED(ctx, x, "softmax");
    gcr_status before = ctx->status;
    gcr_tensor *m = gcr_max(ctx, x, &axis, 1, 1);
    gcr_tensor *d = gcr_sub(ctx, x, m);
    gcr_tensor *e = gcr_exp(ctx, d);
    gcr_tensor *s = gcr_sum(ctx, e, &axis, 1, 1);
    gcr_tensor *y = gcr_div(ctx, e, s);
    gcr_tensor_free(m);
    gcr_tensor_free(d);
    gcr_tensor_free(e);
    gcr_tensor_free(s);
    gcr_error_prefix(ctx, before, "softmax (axis %d)", axis);
    return y;
}

/* ---------------------------------------------------------------- reductions */

static gcr_tensor *reduce(gcr_ctx *ctx, gcr_op op, gcr_tensor *x, const int *axes, int naxes, int keepdim)
{
    const char *fn = gcr_op_table[op].name;
    NEED(ctx, x, fn);
    if (naxes < 0 || naxes > GCR_MAX_DIMS || (naxes > 0 && !axes)) {
        char b[96];
        gcr_set_error(ctx, GCR_ERR_PARAM, "%s: %d axes given%s for %s", fn, naxes, axes ? "" : " (NULL array)",
                      gcr_meta_str(&x->m, b, sizeof b));
        return NULL;
    }
    gcr_call c = call1(op, x);
    c.p.n = naxes;
    for (int i = 0; i < naxes; i++) c.p.v[i] = axes[i];
    c.p.keepdim = keepdim ? 1 : 0;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_sum(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim)
{ return reduce(ctx, GCR_OP_SUM, x, axes, naxes, keepdim); }
gcr_tensor *gcr_mean(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim)
{ return reduce(ctx, GCR_OP_MEAN, x, axes, naxes, keepdim); }
gcr_tensor *gcr_max(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim)
{ return reduce(ctx, GCR_OP_MAX, x, axes, naxes, keepdim); }

/* ---------------------------------------------------------------- conv, norm, matmul, pool */

gcr_conv2d_params gcr_conv2d_default(void)
{
    gcr_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
    return p;
}

gcr_pool2d_params gcr_pool2d_default(int k)
{
    gcr_pool2d_params p = {{k, k}, {k, k}, {0, 0}, {1, 1}, 0, 1};
    return p;
}

gcr_tensor *gcr_conv2d(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *b, const gcr_conv2d_params *p)
{
    NEED(ctx, x, "conv2d");
    NEED(ctx, w, "conv2d");
    gcr_call c = call1(GCR_OP_CONV2D, x);
    c.n_in = 3;
    c.in[1] = w;
    c.in[2] = b;
    c.p.conv = p ? *p : gcr_conv2d_default();
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_batch_norm(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *mean, gcr_tensor *var, gcr_tensor *gamma,
                           gcr_tensor *beta, float eps)
{
    NEED(ctx, x, "batch_norm");
    NEED(ctx, mean, "batch_norm");
    NEED(ctx, var, "batch_norm");
    gcr_call c = call1(GCR_OP_BATCH_NORM, x);
    c.n_in = 5;
    c.in[1] = mean;
    c.in[2] = var;
    c.in[3] = gamma;
    c.in[4] = beta;
    c.p.f[0] = eps;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_linear(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *b)
{
    NEED(ctx, x, "linear");
    NEED(ctx, w, "linear");
    gcr_call c = call1(GCR_OP_LINEAR, x);
    c.n_in = 3;
    c.in[1] = w;
    c.in[2] = b;
    return gcr_dispatch(ctx, &c);
}

/* A failed matmul on a lifted 1-d operand names the operands as passed ("f32[4]"), not as lifted
 * ("f32[1,4]"); messages name a before b, so each is looked for after the one before. */
static void matmul_name_as_passed(gcr_ctx *ctx, gcr_status before, const gcr_tensor *a, const gcr_tensor *a2,
                                  const gcr_tensor *b, const gcr_tensor *b2)
{
    char fa[96], fb[96], ta[96], tb[96];
    const char *const from[] = {gcr_meta_str(&a2->m, fa, sizeof fa), gcr_meta_str(&b2->m, fb, sizeof fb)};
    const char *const to[] = {gcr_meta_str(&a->m, ta, sizeof ta), gcr_meta_str(&b->m, tb, sizeof tb)};
    gcr_error_rename(ctx, before, 2, from, to);
}

gcr_tensor *gcr_matmul(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b)
{
    NEED(ctx, a, "matmul");
    NEED(ctx, b, "matmul");
    if (a->m.ndim == 0 || b->m.ndim == 0) {
        char b1[96], b2[96];
        gcr_set_error(ctx, GCR_ERR_SHAPE, "matmul: 0-d operand in %s @ %s", gcr_meta_str(&a->m, b1, sizeof b1),
                      gcr_meta_str(&b->m, b2, sizeof b2));
        return NULL;
    }
    /* NumPy: a 1-d a is a row [1,K], a 1-d b a column [K,1]; the added dim is dropped after */
    gcr_status before = ctx->status;
    gcr_tensor *a2 = a, *b2 = b;
    /* -1, not the sizes: a captured graph bound to operands of other sizes lifts them anew */
    if (a->m.ndim == 1) a2 = gcr_reshape(ctx, a, 2, (int64_t[]){1, -1});
    if (b->m.ndim == 1) b2 = gcr_reshape(ctx, b, 2, (int64_t[]){-1, 1});
    if (!a2 || !b2) gcr_error_prefix(ctx, before, "matmul"); /* a lift failed: name the op called */
    gcr_call c = call1(GCR_OP_MATMUL, a2);
    c.n_in = 2;
    c.in[1] = b2;
    gcr_tensor *y = a2 && b2 ? gcr_dispatch(ctx, &c) : NULL;
    if (!y && a2 && b2 && (a2 != a || b2 != b)) matmul_name_as_passed(ctx, before, a, a2, b, b2);
    if (y && (a->m.ndim == 1 || b->m.ndim == 1)) {
        /* the lifted dim (size 1) merged into its neighbour: a flatten of the last two dims names
         * no size; both lifted leave one element, a 0-d result */
        gcr_tensor *r = a->m.ndim == 1 && b->m.ndim == 1 ? gcr_reshape(ctx, y, 0, NULL) : gcr_flatten(ctx, y, -2, -1);
        gcr_tensor_free(y);
        y = r;
    }
    if (a2 != a) gcr_tensor_free(a2);
    if (b2 != b) gcr_tensor_free(b2);
    return y;
}

static gcr_tensor *pool(gcr_ctx *ctx, gcr_op op, gcr_tensor *x, const gcr_pool2d_params *p)
{
    NEED(ctx, x, gcr_op_table[op].name);
    NEED(ctx, p, gcr_op_table[op].name);
    gcr_call c = call1(op, x);
    c.p.pool = *p;
    for (int i = 0; i < 2; i++)
        if (c.p.pool.stride[i] == 0) c.p.pool.stride[i] = c.p.pool.kernel[i];
    if (op == GCR_OP_MAX_POOL2D) c.p.pool.count_include_pad = 0; /* meaningless there; keep calls comparable */
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_max_pool2d(gcr_ctx *ctx, gcr_tensor *x, const gcr_pool2d_params *p) { return pool(ctx, GCR_OP_MAX_POOL2D, x, p); }
gcr_tensor *gcr_avg_pool2d(gcr_ctx *ctx, gcr_tensor *x, const gcr_pool2d_params *p) { return pool(ctx, GCR_OP_AVG_POOL2D, x, p); }

gcr_tensor *gcr_adaptive_avg_pool2d(gcr_ctx *ctx, gcr_tensor *x, int out_h, int out_w)
{
    NEED(ctx, x, "adaptive_avg_pool2d");
    gcr_call c = call1(GCR_OP_ADAPTIVE_AVG_POOL2D, x);
    c.p.n = 2;
    c.p.v[0] = out_h;
    c.p.v[1] = out_w;
    return gcr_dispatch(ctx, &c);
}

/* ---------------------------------------------------------------- movement */

gcr_tensor *gcr_contiguous(gcr_ctx *ctx, gcr_tensor *x, gcr_format fmt)
{
    NEED(ctx, x, "contiguous");
    gcr_call c = call1(GCR_OP_CONTIGUOUS, x);
    c.p.fmt = fmt;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_dispatch_reshape(gcr_ctx *ctx, gcr_call *c)
{
    gcr_tensor *x = c->in[0];
    if (gcr_meta_is_contiguous(&x->m)) return gcr_dispatch(ctx, c);
    char err[8];
    gcr_resolved r;
    if (gcr_resolve(c->op, &c->p, &x->m, &r, err, sizeof err) != GCR_OK)
        return gcr_dispatch(ctx, c); /* an invalid shape fails on x itself, before any copy */
    gcr_status before = ctx->status;
    gcr_tensor *d = gcr_contiguous(ctx, x, GCR_NCHW);
    if (!d) { /* the copy failed: name the op called, as composites do */
        gcr_error_prefix(ctx, before, "%s", c->p.flatten ? "flatten" : "reshape");
        return NULL;
    }
    c->in[0] = d;
    gcr_tensor *y = gcr_dispatch(ctx, c);
    gcr_tensor_free(d); /* the view keeps the storage alive */
    return y;
}

/* A call of op on x with a shape argument (reshape, expand), its rank and array checked first. */
static bool shape_call(gcr_ctx *ctx, gcr_op op, gcr_tensor *x, int ndim, const int64_t *shape, gcr_call *c)
{
    char b[96];
    const char *fn = gcr_op_table[op].name;
    if (ndim < 0 || ndim > GCR_MAX_DIMS) {
        gcr_set_error(ctx, GCR_ERR_SHAPE, "%s: new rank %d outside 0..%d for %s", fn, ndim, GCR_MAX_DIMS,
                      gcr_meta_str(&x->m, b, sizeof b));
        return false;
    }
    if (ndim > 0 && !shape) {
        gcr_set_error(ctx, GCR_ERR_INVALID, "%s: NULL shape for new rank %d of %s", fn, ndim,
                      gcr_meta_str(&x->m, b, sizeof b));
        return false;
    }
    *c = call1(op, x);
    c->p.n = ndim;
    for (int i = 0; i < ndim; i++) c->p.v[i] = shape[i];
    return true;
}

gcr_tensor *gcr_reshape(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *shape)
{
    NEED(ctx, x, "reshape");
    gcr_call c;
    return shape_call(ctx, GCR_OP_RESHAPE, x, ndim, shape, &c) ? gcr_dispatch_reshape(ctx, &c) : NULL;
}

gcr_tensor *gcr_expand(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *shape)
{
    NEED(ctx, x, "expand");
    gcr_call c;
    return shape_call(ctx, GCR_OP_EXPAND, x, ndim, shape, &c) ? gcr_dispatch(ctx, &c) : NULL;
}

/* x's dims (leading 1s added up to nd) each reps[d] times: the copies of a dim follow one another
 * whole (whole: repeat) or each element repeats in place (nearest upsampling). An expand of x with
 * a new leading dim per repeated dim (x's own dims kept as -1), a permute that puts each new dim
 * beside its dim (before it: whole; after it: in place), and flattens that merge each pair (the
 * first copies the strided view, the others are views of that copy). Nothing in the calls names
 * one of x's sizes, so a graph that recorded them takes an input of other sizes (gcr.h,
 * gcr_graph_bind_input). */
static gcr_tensor *replicate(gcr_ctx *ctx, gcr_tensor *x, int nd, const int64_t *reps, bool whole)
{
    const int lead = nd - x->m.ndim; /* new leading dims, of size 1 in x */
    int64_t big[2 * GCR_MAX_DIMS];
    int perm[2 * GCR_MAX_DIMS], pair[GCR_MAX_DIMS], r = 0, k = 0, np = 0;
    for (int d = 0; d < nd; d++) r += reps[d] != 1;
    if (nd + r > GCR_MAX_DIMS) {
        char b[96];
        gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "%d dims and %d repeated ones for %s: more than %d dims in all", nd, r,
                      gcr_meta_str(&x->m, b, sizeof b), GCR_MAX_DIMS);
        return NULL;
    }
    /* expanded dims: [repeat of each repeated dim d, in order] then [dim d of the result: 1 for a
     * new leading one, x's (-1) for the others] */
    for (int d = 0, q = 0; d < nd; d++) {
        if (reps[d] != 1) big[q++] = reps[d];
        big[r + d] = d < lead ? 1 : -1;
    }
    for (int d = 0, q = 0; d < nd; d++) {
        const int rep = reps[d] != 1 ? q++ : -1;
        if (rep >= 0 && whole) perm[k++] = rep;
        perm[k++] = r + d;
        if (rep >= 0 && !whole) perm[k++] = rep;
        if (rep >= 0) pair[np++] = k - 2;
    }
    gcr_tensor *e = gcr_expand(ctx, x, nd + r, big);
    gcr_tensor *t = e ? gcr_permute(ctx, e, perm) : NULL;
    gcr_tensor_free(e);
    if (t && np == 0) { /* nothing repeated: a copy where t is strided, as a reshape makes it */
        gcr_tensor *y = nd > 0 ? gcr_flatten(ctx, t, 0, 0) : gcr_reshape(ctx, t, 0, NULL);
        gcr_tensor_free(t);
        return y;
    }
    /* merge the pairs from the last, so the earlier pairs' dims stay where the permute put them */
    for (int i = np - 1; i >= 0 && t; i--) {
        gcr_tensor *y = gcr_flatten(ctx, t, pair[i], pair[i] + 1);
        gcr_tensor_free(t);
        t = y;
    }
    return t;
}

gcr_tensor *gcr_repeat(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *reps)
{
    NEED(ctx, x, "repeat");
    char b[96];
    bool ok = ndim >= x->m.ndim && ndim <= GCR_MAX_DIMS && (reps || ndim == 0);
    for (int d = 0; ok && d < ndim; d++) ok = reps[d] >= 0;
    if (!ok) {
        gcr_set_error(ctx, GCR_ERR_PARAM, "repeat: %d repeats%s for %s (one per dim, at most %d, each >= 0)", ndim,
                      reps || ndim == 0 ? "" : " (NULL array)", gcr_meta_str(&x->m, b, sizeof b), GCR_MAX_DIMS);
        return NULL;
    }
    gcr_status before = ctx->status;
    gcr_tensor *y = replicate(ctx, x, ndim, reps, true);
    gcr_error_prefix(ctx, before, "repeat");
    return y;
}

gcr_tensor *gcr_upsample_nearest2d(gcr_ctx *ctx, gcr_tensor *x, int scale_h, int scale_w)
{
    NEED(ctx, x, "upsample_nearest2d");
    char b[96];
    if (x->m.ndim != 4 || scale_h < 1 || scale_w < 1) {
        gcr_set_error(ctx, x->m.ndim != 4 ? GCR_ERR_SHAPE : GCR_ERR_PARAM,
                      "upsample_nearest2d: scale %dx%d for %s (a 4-d input, scales >= 1)", scale_h, scale_w,
                      gcr_meta_str(&x->m, b, sizeof b));
        return NULL;
    }
    /* NHWC: replicate the [N,H,W,C] view, which is dense, and permute the result back: NHWC too */
    static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    bool nhwc = gcr_meta_is_nhwc(&x->m);
    gcr_status before = ctx->status;
    gcr_tensor *p = nhwc ? gcr_permute(ctx, x, to_nhwc) : x;
    int h = nhwc ? 1 : 2;
    int64_t reps[4] = {1, 1, 1, 1};
    reps[h] = scale_h;
    reps[h + 1] = scale_w;
    gcr_tensor *y = p ? replicate(ctx, p, 4, reps, false) : NULL;
    if (nhwc) {
        gcr_tensor *r = y ? gcr_permute(ctx, y, to_nchw) : NULL;
        gcr_tensor_free(y);
        gcr_tensor_free(p);
        y = r;
    }
    gcr_error_prefix(ctx, before, "upsample_nearest2d");
    return y;
}

gcr_tensor *gcr_flatten(gcr_ctx *ctx, gcr_tensor *x, int start_dim, int end_dim)
{
    NEED(ctx, x, "flatten");
    gcr_call c = call1(GCR_OP_RESHAPE, x);
    c.p.flatten = 1;
    c.p.n = 2;
    c.p.v[0] = start_dim;
    c.p.v[1] = end_dim;
    return gcr_dispatch_reshape(ctx, &c);
}

gcr_tensor *gcr_permute(gcr_ctx *ctx, gcr_tensor *x, const int *perm)
{
    NEED(ctx, x, "permute");
    NEED(ctx, perm, "permute");
    gcr_call c = call1(GCR_OP_PERMUTE, x);
    c.p.n = x->m.ndim; /* perm holds one entry per dim of x */
    for (int i = 0; i < c.p.n; i++) c.p.v[i] = perm[i];
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_slice(gcr_ctx *ctx, gcr_tensor *x, int dim, int64_t start, int64_t end, int64_t step)
{
    NEED(ctx, x, "slice");
    gcr_call c = call1(GCR_OP_SLICE, x);
    c.p.n = 4;
    c.p.v[0] = dim;
    c.p.v[1] = start;
    c.p.v[2] = end;
    c.p.v[3] = step;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_concat(gcr_ctx *ctx, gcr_tensor *const *xs, int n, int axis)
{
    if (!ctx) return NULL;
    if (!xs || n < 1 || n > GCR_MAX_INPUTS) {
        gcr_set_error(ctx, GCR_ERR_INVALID, xs ? "concat: %d inputs (1..%d allowed)" : "concat: NULL input array (%d inputs, 1..%d allowed)",
                      n, GCR_MAX_INPUTS);
        return NULL;
    }
    gcr_call c;
    memset(&c, 0, sizeof c);
    c.op = GCR_OP_CONCAT;
    c.n_in = n;
    for (int i = 0; i < n; i++) {
        if (!xs[i]) {
            gcr_set_error(ctx, GCR_ERR_INVALID, "concat: input %d is NULL", i);
            return NULL;
        }
        c.in[i] = xs[i];
    }
    c.p.n = 1;
    c.p.v[0] = axis;
    return gcr_dispatch(ctx, &c);
}

gcr_tensor *gcr_dropout(gcr_ctx *ctx, gcr_tensor *x, float p)
{
    NEED(ctx, x, "dropout");
    if (!gcr_on_ctx(ctx, x, "dropout", 0)) return NULL; /* it returns x: no dispatch checks it */
    if (!(p >= 0.0f && p < 1.0f)) {
        char b[96];
        gcr_set_error(ctx, GCR_ERR_PARAM, "dropout: p %g outside [0, 1) for %s", p, gcr_meta_str(&x->m, b, sizeof b));
        return NULL;
    }
    return x;
}
