/* infer.c — validation and shape inference for every op: one function per op kind (kinds.def
 * names them), each returning a status and a message that names the op and the shapes. Used by
 * eager dispatch and by the trace alike, so a captured op fails exactly as its eager twin would. */
#include "internal.h"
#include <stdio.h>

#define FAIL(st, ...) do { snprintf(err, errn, __VA_ARGS__); return (st); } while (0)
#define M(i, buf) gcr_meta_str(&c->in[i]->m, buf, sizeof buf)

static const char *opname(const gcr_call *c) { return gcr_op_table[c->op].name; }

static gcr_status need_float(const gcr_call *c, int i, char *err, size_t errn)
{
    char b[96];
    if (!gcr_dtype_is_float(c->in[i]->m.dtype))
        FAIL(GCR_ERR_DTYPE, "%s: dtype of %s not supported (f32, f16, bf16 only)", opname(c), M(i, b));
    return GCR_OK;
}

static gcr_status same_dtype(const gcr_call *c, int i, int j, char *err, size_t errn)
{
    char b1[96], b2[96];
    if (c->in[i]->m.dtype != c->in[j]->m.dtype)
        FAIL(GCR_ERR_DTYPE, "%s: dtypes differ: %s and %s (cast one first)", opname(c), M(i, b1), M(j, b2));
    return GCR_OK;
}

/* dense layout for a result: NHWC when some operand of the same shape is NHWC */
static void pick_format(const gcr_call *c, gcr_meta *out)
{
    gcr_format f = GCR_NCHW;
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i] && gcr_meta_same_shape(&c->in[i]->m, out) && gcr_meta_is_nhwc(&c->in[i]->m)) f = GCR_NHWC;
    gcr_meta_set_format(out, f);
}

/* ---------------------------------------------------------------- parameters as written */

/* axis a as written (negative counts from the end) in a rank-nd input; -1 when outside it */
static int axis_in(int64_t a, int nd)
{
    if (a < 0) a += nd;
    return a >= 0 && a < nd ? (int)a : -1;
}

/* "a,b,c": the n values as written */
static char *list_str(const int64_t *v, int n, char *buf, size_t bn)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k < bn; i++) k += (size_t)snprintf(buf + k, bn - k, i ? ",%lld" : "%lld", (long long)v[i]);
    return buf;
}

static gcr_status resolve_reduce(gcr_op op, const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err,
                                 size_t errn)
{
    char b[96], l[128];
    for (int d = 0; d < x->ndim; d++) r->red[d] = p->n == 0;
    for (int i = 0; i < p->n; i++) {
        int a = axis_in(p->v[i], x->ndim);
        if (a < 0 || r->red[a])
            FAIL(GCR_ERR_PARAM, "%s: axis %lld (of axes %s) invalid or repeated for %s", gcr_op_table[op].name,
                 (long long)p->v[i], list_str(p->v, p->n, l, sizeof l), gcr_meta_str(x, b, sizeof b));
        r->red[a] = true;
    }
    return GCR_OK;
}

static gcr_status resolve_permute(const gcr_params *p, const gcr_meta *x, char *err, size_t errn)
{
    char b[96], l[128];
    bool seen[GCR_MAX_DIMS] = {0};
    if (p->n != x->ndim)
        FAIL(GCR_ERR_PARAM, "permute: perm (%s) has %d entries, input %s has %d dims", list_str(p->v, p->n, l, sizeof l),
             p->n, gcr_meta_str(x, b, sizeof b), x->ndim);
    for (int i = 0; i < p->n; i++) {
        if (p->v[i] < 0 || p->v[i] >= x->ndim || seen[p->v[i]])
            FAIL(GCR_ERR_PARAM, "permute: entry %d (%lld) of perm (%s) is not a permutation of the dims of %s", i,
                 (long long)p->v[i], list_str(p->v, p->n, l, sizeof l), gcr_meta_str(x, b, sizeof b));
        seen[p->v[i]] = true;
    }
    return GCR_OK;
}

/* PyTorch's rules: negative start/end count from the end, both clamp to [0, n] */
static gcr_status resolve_slice(const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn)
{
    char b[96];
    int64_t start = p->v[1], end = p->v[2], step = p->v[3];
    r->axis = axis_in(p->v[0], x->ndim);
    if (r->axis < 0 || step < 1)
        FAIL(GCR_ERR_PARAM, "slice: dim %lld / step %lld invalid for %s", (long long)p->v[0], (long long)step,
             gcr_meta_str(x, b, sizeof b));
    int64_t n = x->shape[r->axis];
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = start < 0 ? 0 : start > n ? n : start;
    end = end < start ? start : end > n ? n : end;
    r->start = start;
    r->step = step;
    r->len = end > start ? (end - start - 1) / step + 1 : 0; /* (end - start + step - 1) / step overflows */
    return GCR_OK;
}

static gcr_status resolve_flatten(const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn)
{
    char b[96];
    if (x->ndim == 0) { /* a scalar flattens to [1], whatever the dims */
        r->ndim = 1;
        r->shape[0] = 1;
        return GCR_OK;
    }
    int s = axis_in(p->v[0], x->ndim), e = axis_in(p->v[1], x->ndim);
    if (s < 0 || e < 0 || s > e)
        FAIL(GCR_ERR_PARAM, "flatten: dims %lld..%lld invalid for %s", (long long)p->v[0], (long long)p->v[1],
             gcr_meta_str(x, b, sizeof b));
    r->ndim = 0;
    for (int d = 0; d < s; d++) r->shape[r->ndim++] = x->shape[d];
    int64_t f = 1;
    for (int d = s; d <= e; d++)
        if (!gcr_size_mul(f, x->shape[d], &f)) FAIL(GCR_ERR_SHAPE, "flatten: %s too large", gcr_meta_str(x, b, sizeof b));
    r->shape[r->ndim++] = f;
    for (int d = e + 1; d < x->ndim; d++) r->shape[r->ndim++] = x->shape[d];
    return GCR_OK;
}

static gcr_status resolve_reshape(const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn)
{
    if (p->flatten) return resolve_flatten(p, x, r, err, errn);
    char b[96], l[200];
    int infer = -1;
    int64_t known = 1, bound = 1, numel = gcr_meta_numel(x); /* bound: product of max(dim, 1), for the strides */
    r->ndim = p->n;
    for (int i = 0; i < p->n; i++) {
        r->shape[i] = p->v[i];
        if (p->v[i] == -1 && infer < 0) {
            infer = i;
            continue;
        }
        if (p->v[i] < 0)
            FAIL(GCR_ERR_SHAPE, "reshape: dim %d of [%s] is %lld (only one -1 allowed) for %s", i,
                 list_str(p->v, p->n, l, sizeof l), (long long)p->v[i], gcr_meta_str(x, b, sizeof b));
        if (!gcr_size_mul(bound, p->v[i] ? p->v[i] : 1, &bound))
            FAIL(GCR_ERR_SHAPE, "reshape: new shape [%s] too large for %s", list_str(p->v, p->n, l, sizeof l),
                 gcr_meta_str(x, b, sizeof b));
        known *= p->v[i];
    }
    if (infer >= 0) r->shape[infer] = known ? numel / known : 0;
    if (infer >= 0 ? (known ? numel % known != 0 : numel != 0) : known != numel)
        FAIL(GCR_ERR_SHAPE, "reshape: %s has %lld elements, the new shape [%s] does not hold them", gcr_meta_str(x, b, sizeof b),
             (long long)numel, list_str(p->v, p->n, l, sizeof l));
    return GCR_OK;
}

/* NumPy's alignment: x's dims are the trailing ones; only a size-1 dim takes a new size */
static gcr_status resolve_expand(const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn)
{
    char b[96], l[200];
    if (p->n < x->ndim)
        FAIL(GCR_ERR_SHAPE, "expand: shape [%s] has fewer dims than %s", list_str(p->v, p->n, l, sizeof l),
             gcr_meta_str(x, b, sizeof b));
    r->ndim = p->n;
    for (int d = 0; d < p->n; d++) {
        int xd = d - (p->n - x->ndim);
        int64_t want = p->v[d], have = xd >= 0 ? x->shape[xd] : 1;
        if (want == -1 && xd >= 0) want = have;
        if (want < 0 || (have != 1 && want != have))
            FAIL(GCR_ERR_SHAPE, "expand: dim %d of [%s] is %lld, %s for %s", d, list_str(p->v, p->n, l, sizeof l),
                 (long long)p->v[d], xd < 0 ? "a new leading dim needs a size >= 0" : "only a size-1 dim takes a new size",
                 gcr_meta_str(x, b, sizeof b));
        r->shape[d] = want;
    }
    return GCR_OK;
}

gcr_status gcr_resolve(gcr_op op, const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn)
{
    char b[96];
    memset(r, 0, sizeof *r);
    switch (op) {
    case GCR_OP_SUM: case GCR_OP_MEAN: case GCR_OP_MAX: return resolve_reduce(op, p, x, r, err, errn);
    case GCR_OP_PERMUTE: return resolve_permute(p, x, err, errn);
    case GCR_OP_SLICE: return resolve_slice(p, x, r, err, errn);
    case GCR_OP_RESHAPE: return resolve_reshape(p, x, r, err, errn);
    case GCR_OP_EXPAND: return resolve_expand(p, x, r, err, errn);
    case GCR_OP_CONCAT:
        r->axis = axis_in(p->v[0], x->ndim);
        if (r->axis < 0)
            FAIL(GCR_ERR_PARAM, "concat: axis %lld invalid for inputs like %s", (long long)p->v[0], gcr_meta_str(x, b, sizeof b));
        return GCR_OK;
    default: return GCR_OK;
    }
}

/* ---------------------------------------------------------------- inference per op kind */

gcr_status gcr_infer_pointwise(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96], b2[96];
    const gcr_meta *x = &c->in[0]->m;
    *out = *x;
    if (c->op == GCR_OP_CAST) {
        if ((unsigned)c->p.dtype >= GCR_DTYPE_COUNT) FAIL(GCR_ERR_DTYPE, "cast: invalid target dtype %d", (int)c->p.dtype);
        out->dtype = c->p.dtype;
        pick_format(c, out);
        return GCR_OK;
    }
    GCR_TRY(need_float(c, 0, err, errn));
    if (c->op == GCR_OP_CLAMP && !(c->p.f[0] <= c->p.f[1]))
        FAIL(GCR_ERR_PARAM, "clamp: min %g > max %g on %s", c->p.f[0], c->p.f[1], M(0, b1));
    if (c->op == GCR_OP_BATCH_NORM) {
        if (x->ndim < 2) FAIL(GCR_ERR_SHAPE, "batch_norm: input %s needs at least 2 dims", M(0, b1));
        for (int i = 1; i < c->n_in; i++) {
            if (!c->in[i]) continue;
            GCR_TRY(need_float(c, i, err, errn));
            const gcr_meta *p = &c->in[i]->m;
            if (p->ndim != 1 || p->shape[0] != x->shape[1])
                FAIL(GCR_ERR_SHAPE, "batch_norm: parameter %d is %s, expected [%lld] for input %s", i,
                     M(i, b2), (long long)x->shape[1], M(0, b1));
        }
        if (!(c->p.f[0] >= 0)) FAIL(GCR_ERR_PARAM, "batch_norm: eps %g < 0", c->p.f[0]);
        pick_format(c, out);
        return GCR_OK;
    }
    if (gcr_op_table[c->op].arity == 2 && !c->p.has_scalar) {
        const gcr_meta *y = &c->in[1]->m;
        GCR_TRY(need_float(c, 1, err, errn));
        GCR_TRY(same_dtype(c, 0, 1, err, errn));
        int nd = x->ndim > y->ndim ? x->ndim : y->ndim;
        out->ndim = nd;
        for (int d = 0; d < nd; d++) {
            int dx = d - (nd - x->ndim), dy = d - (nd - y->ndim);
            int64_t sx = dx >= 0 ? x->shape[dx] : 1, sy = dy >= 0 ? y->shape[dy] : 1;
            if (sx != sy && sx != 1 && sy != 1)
                FAIL(GCR_ERR_SHAPE, "%s: shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", opname(c),
                     M(0, b1), M(1, b2), d, (long long)sx, (long long)sy);
            out->shape[d] = sx == 1 ? sy : sx;
        }
    }
    pick_format(c, out);
    return GCR_OK;
}

gcr_status gcr_infer_reduce(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    GCR_TRY(need_float(c, 0, err, errn));
    const gcr_meta *x = &c->in[0]->m;
    gcr_resolved r;
    GCR_TRY(gcr_resolve(c->op, &c->p, x, &r, err, errn));
    *out = *x;
    out->ndim = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!r.red[d]) out->shape[out->ndim++] = x->shape[d];
        else if (c->p.keepdim) out->shape[out->ndim++] = 1;
    }
    if (c->op == GCR_OP_MAX) {
        for (int d = 0; d < x->ndim; d++)
            if (r.red[d] && x->shape[d] == 0) {
                char b[96];
                FAIL(GCR_ERR_SHAPE, "max: reducing empty dim %d of %s", d, M(0, b));
            }
    }
    gcr_meta_set_contiguous(out);
    return GCR_OK;
}

/* Stride, padding and dilation of conv2d and the pools, pool kernels and adaptive output sizes are
 * at most 2^20 (gcr.h says so): far beyond any model, and small enough that window arithmetic on
 * tensors within GCR_MAX_BYTES stays far from int64 overflow. */
#define WINDOW_MAX (1 << 20)

static bool window_ok(int64_t v, int64_t lo) { return v >= lo && v <= WINDOW_MAX; }

/* Output length of a conv window walk along one axis, or 0 when the dilated kernel (k >= 1 taps,
 * k up to any tensor dim) does not fit the padded input; the extent is checked for overflow. */
static int64_t conv_out(int64_t in, int64_t k, int stride, int pad, int dil)
{
    int64_t ext;
    if (__builtin_mul_overflow(k - 1, (int64_t)dil, &ext) || ext >= in + 2 * (int64_t)pad) return 0;
    return (in + 2 * (int64_t)pad - ext - 1) / stride + 1;
}

gcr_status gcr_infer_conv(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96], b2[96], b3[96];
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    const gcr_conv2d_params *p = &c->p.conv;
    GCR_TRY(need_float(c, 0, err, errn));
    GCR_TRY(same_dtype(c, 0, 1, err, errn));
    if (x->ndim != 4 || w->ndim != 4)
        FAIL(GCR_ERR_SHAPE, "conv2d: input %s and weight %s must be 4-d", M(0, b1), M(1, b2));
    for (int i = 0; i < 2; i++)
        if (!window_ok(p->stride[i], 1) || !window_ok(p->dilation[i], 1) || !window_ok(p->padding[i], 0))
            FAIL(GCR_ERR_PARAM, "conv2d: stride %dx%d, padding %dx%d, dilation %dx%d invalid for input %s "
                 "(stride and dilation 1..%d, padding 0..%d)", p->stride[0], p->stride[1], p->padding[0],
                 p->padding[1], p->dilation[0], p->dilation[1], M(0, b1), WINDOW_MAX, WINDOW_MAX);
    int64_t C = x->shape[1], O = w->shape[0];
    if (p->groups < 1 || C % p->groups || O % p->groups)
        FAIL(GCR_ERR_PARAM, "conv2d: groups %d must divide input channels %lld and output channels %lld (input %s, weight %s)",
             p->groups, (long long)C, (long long)O, M(0, b1), M(1, b2));
    if (w->shape[1] != C / p->groups)
        FAIL(GCR_ERR_SHAPE, "conv2d: weight %s expects %lld input channels per group, input %s has %lld (groups %d)",
             M(1, b2), (long long)w->shape[1], M(0, b1), (long long)(C / p->groups), p->groups);
    if (c->in[2]) {
        GCR_TRY(same_dtype(c, 0, 2, err, errn));
        if (c->in[2]->m.ndim != 1 || c->in[2]->m.shape[0] != O)
            FAIL(GCR_ERR_SHAPE, "conv2d: bias %s must be [%lld]", M(2, b3), (long long)O);
    }
    if (w->shape[2] < 1 || w->shape[3] < 1) FAIL(GCR_ERR_SHAPE, "conv2d: weight %s has an empty kernel", M(1, b2));
    int64_t oh = conv_out(x->shape[2], w->shape[2], p->stride[0], p->padding[0], p->dilation[0]);
    int64_t ow = conv_out(x->shape[3], w->shape[3], p->stride[1], p->padding[1], p->dilation[1]);
    if (oh < 1 || ow < 1)
        FAIL(GCR_ERR_SHAPE, "conv2d: kernel %s (dilation %dx%d) larger than padded input %s (padding %dx%d)", M(1, b2),
             p->dilation[0], p->dilation[1], M(0, b1), p->padding[0], p->padding[1]);
    *out = *x;
    out->shape[1] = O;
    out->shape[2] = oh;
    out->shape[3] = ow;
    gcr_meta_set_format(out, gcr_meta_is_nhwc(x) ? GCR_NHWC : GCR_NCHW);
    return GCR_OK;
}

gcr_status gcr_infer_matmul(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96], b2[96], b3[96];
    const gcr_meta *a = &c->in[0]->m, *w = &c->in[1]->m;
    GCR_TRY(need_float(c, 0, err, errn));
    GCR_TRY(same_dtype(c, 0, 1, err, errn));
    *out = *a;
    if (c->op == GCR_OP_LINEAR) {
        if (a->ndim < 1 || w->ndim != 2 || a->shape[a->ndim - 1] != w->shape[1])
            FAIL(GCR_ERR_SHAPE, "linear: input %s and weight %s do not agree (weight must be [out, %lld])", M(0, b1),
                 M(1, b2), (long long)(a->ndim ? a->shape[a->ndim - 1] : 0));
        if (c->in[2]) {
            GCR_TRY(same_dtype(c, 0, 2, err, errn));
            if (c->in[2]->m.ndim != 1 || c->in[2]->m.shape[0] != w->shape[0])
                FAIL(GCR_ERR_SHAPE, "linear: bias %s must be [%lld]", M(2, b3), (long long)w->shape[0]);
        }
        out->shape[a->ndim - 1] = w->shape[0];
        gcr_meta_set_contiguous(out);
        return GCR_OK;
    }
    /* matmul: both >= 2-d here (the API lifts 1-d operands); batch dims broadcast */
    if (a->ndim < 2 || w->ndim < 2 || a->shape[a->ndim - 1] != w->shape[w->ndim - 2])
        FAIL(GCR_ERR_SHAPE, "matmul: shapes %s and %s do not agree", M(0, b1), M(1, b2));
    int nd = a->ndim > w->ndim ? a->ndim : w->ndim;
    out->ndim = nd;
    for (int d = 0; d < nd - 2; d++) {
        int da = d - (nd - a->ndim), dw = d - (nd - w->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sw = dw >= 0 ? w->shape[dw] : 1;
        if (sa != sw && sa != 1 && sw != 1)
            FAIL(GCR_ERR_SHAPE, "matmul: batch dims of %s and %s do not broadcast", M(0, b1), M(1, b2));
        out->shape[d] = sa == 1 ? sw : sa;
    }
    out->shape[nd - 2] = a->shape[a->ndim - 2];
    out->shape[nd - 1] = w->shape[w->ndim - 1];
    gcr_meta_set_contiguous(out);
    return GCR_OK;
}

/* all of k, s, pad and dil within WINDOW_MAX: no product here nears int64's range */
static int64_t pool_out(int64_t in, int k, int s, int pad, int dil, int ceil_mode)
{
    int64_t span = in + 2 * (int64_t)pad - (int64_t)dil * (k - 1) - 1;
    if (span < 0) return 0; /* window larger than the padded input: C division truncates toward 0 and would give 1 output */
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    /* PyTorch: the last window must start inside the input or left padding */
    if (ceil_mode && (o - 1) * s >= in + pad) o--;
    return o;
}

gcr_status gcr_infer_pool(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96];
    const gcr_meta *x = &c->in[0]->m;
    GCR_TRY(need_float(c, 0, err, errn));
    if (x->ndim != 4) FAIL(GCR_ERR_SHAPE, "%s: input %s must be 4-d", opname(c), M(0, b1));
    /* as PyTorch: a padded window over an empty H or W covers no input element, and would give
     * -inf (max) or 0 (averages, where a mean over nothing is NaN) for an input with no values */
    if (x->shape[2] < 1 || x->shape[3] < 1)
        FAIL(GCR_ERR_SHAPE, "%s: input %s has an empty spatial dim (H and W must be >= 1)", opname(c), M(0, b1));
    *out = *x;
    if (c->op == GCR_OP_ADAPTIVE_AVG_POOL2D) {
        if (!window_ok(c->p.v[0], 1) || !window_ok(c->p.v[1], 1))
            FAIL(GCR_ERR_PARAM, "adaptive_avg_pool2d: output size %lldx%lld invalid for %s (1..%d)", (long long)c->p.v[0],
                 (long long)c->p.v[1], M(0, b1), WINDOW_MAX);
        out->shape[2] = c->p.v[0];
        out->shape[3] = c->p.v[1];
    } else {
        const gcr_pool2d_params *p = &c->p.pool;
        for (int i = 0; i < 2; i++)
            if (!window_ok(p->kernel[i], 1) || !window_ok(p->stride[i], 1) || !window_ok(p->dilation[i], 1) ||
                p->padding[i] < 0 || 2 * (int64_t)p->padding[i] > p->kernel[i])
                FAIL(GCR_ERR_PARAM, "%s: kernel %dx%d, stride %dx%d, padding %dx%d, dilation %dx%d invalid for %s "
                     "(kernel, stride and dilation 1..%d, padding at most half the kernel)", opname(c), p->kernel[0],
                     p->kernel[1], p->stride[0], p->stride[1], p->padding[0], p->padding[1], p->dilation[0],
                     p->dilation[1], M(0, b1), WINDOW_MAX);
        if (c->op == GCR_OP_AVG_POOL2D && (p->dilation[0] != 1 || p->dilation[1] != 1))
            FAIL(GCR_ERR_UNSUPPORTED, "avg_pool2d: dilation %dx%d on %s (only max_pool2d dilates)",
                 p->dilation[0], p->dilation[1], M(0, b1));
        for (int i = 0; i < 2; i++) {
            int64_t o = pool_out(x->shape[2 + i], p->kernel[i], p->stride[i], p->padding[i], p->dilation[i], p->ceil_mode);
            if (o < 1) FAIL(GCR_ERR_SHAPE, "%s: window %dx%d larger than input %s", opname(c), p->kernel[0], p->kernel[1], M(0, b1));
            out->shape[2 + i] = o;
        }
    }
    gcr_meta_set_format(out, gcr_meta_is_nhwc(x) ? GCR_NHWC : GCR_NCHW);
    return GCR_OK;
}

gcr_status gcr_infer_view(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96];
    const gcr_meta *x = &c->in[0]->m;
    gcr_resolved r;
    GCR_TRY(gcr_resolve(c->op, &c->p, x, &r, err, errn));
    *out = *x;
    switch (c->op) {
    case GCR_OP_RESHAPE:
        /* the API copies a strided input first; a graph bound to a strided input lands here */
        if (!gcr_meta_is_contiguous(x))
            FAIL(GCR_ERR_SHAPE, "%s: input %s is not contiguous (the call was made on a contiguous one)",
                 c->p.flatten ? "flatten" : "reshape", M(0, b1));
        out->ndim = r.ndim;
        memcpy(out->shape, r.shape, sizeof r.shape);
        gcr_meta_set_contiguous(out);
        return GCR_OK;
    case GCR_OP_PERMUTE:
        for (int i = 0; i < x->ndim; i++) {
            out->shape[i] = x->shape[c->p.v[i]];
            out->strides[i] = x->strides[c->p.v[i]];
        }
        return GCR_OK;
    case GCR_OP_SLICE:
        out->shape[r.axis] = r.len;
        /* with two or more elements step is below the dim's size, so the stride stays within x's span */
        if (r.len > 1) out->strides[r.axis] = x->strides[r.axis] * r.step;
        return GCR_OK;
    case GCR_OP_EXPAND: /* a broadcast dim reads one element: stride 0 */
        out->ndim = r.ndim;
        for (int d = 0; d < r.ndim; d++) {
            int xd = d - (r.ndim - x->ndim);
            out->shape[d] = r.shape[d];
            out->strides[d] = xd >= 0 && x->shape[xd] == r.shape[d] ? x->strides[xd] : 0;
        }
        return GCR_OK;
    default: FAIL(GCR_ERR_INTERNAL, "%s: not a view", opname(c));
    }
}

gcr_status gcr_infer_movement(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    char b1[96], b2[96];
    *out = c->in[0]->m;
    if (c->op == GCR_OP_CONTIGUOUS) {
        if (c->p.fmt != GCR_NCHW && c->p.fmt != GCR_NHWC)
            FAIL(GCR_ERR_PARAM, "contiguous: format %d is neither GCR_NCHW (%d) nor GCR_NHWC (%d), for %s", (int)c->p.fmt,
                 (int)GCR_NCHW, (int)GCR_NHWC, M(0, b1));
        if (c->p.fmt == GCR_NHWC && out->ndim != 4)
            FAIL(GCR_ERR_PARAM, "contiguous: NHWC needs a 4-d tensor, got %s", M(0, b1));
        gcr_meta_set_format(out, c->p.fmt);
        return GCR_OK;
    }
    /* CONCAT */
    gcr_resolved r;
    GCR_TRY(gcr_resolve(c->op, &c->p, out, &r, err, errn));
    int axis = r.axis;
    bool all_nhwc = true;
    out->shape[axis] = 0;
    for (int i = 0; i < c->n_in; i++) {
        const gcr_meta *m = &c->in[i]->m;
        if (m->dtype != out->dtype) GCR_TRY(same_dtype(c, 0, i, err, errn));
        if (m->ndim != out->ndim) FAIL(GCR_ERR_SHAPE, "concat: %s and %s differ in rank", M(0, b1), M(i, b2));
        for (int d = 0; d < m->ndim; d++)
            if (d != axis && m->shape[d] != out->shape[d])
                FAIL(GCR_ERR_SHAPE, "concat: %s and %s differ outside axis %d", M(0, b1), M(i, b2), axis);
        out->shape[axis] += m->shape[axis];
        all_nhwc = all_nhwc && gcr_meta_is_nhwc(m);
    }
    gcr_meta_set_format(out, all_nhwc ? GCR_NHWC : GCR_NCHW);
    return GCR_OK;
}

gcr_status gcr_infer(const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    if ((unsigned)c->op >= GCR_OP_COUNT) FAIL(GCR_ERR_INTERNAL, "unknown op %d", (int)c->op);
    GCR_TRY(gcr_kind_of(c->op)->infer(c, out, err, errn));
    if (!gcr_shape_fits(out->dtype, out->ndim, out->shape)) { /* e.g. [a,0] @ [0,b]: a*b*4 bytes may wrap */
        char bo[96], b0[96], b1[96], rest[100] = "";
        if (c->n_in > 1 && c->in[1]) snprintf(rest, sizeof rest, ", %s%s", M(1, b1), c->n_in > 2 ? ", ..." : "");
        FAIL(GCR_ERR_OOM, "%s: result %s would take more than 1 PiB (inputs %s%s)", opname(c),
             gcr_meta_str(out, bo, sizeof bo), M(0, b0), rest);
    }
    return GCR_OK;
}
