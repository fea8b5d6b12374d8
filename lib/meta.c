/* meta.c — shapes and strides: layouts, comparisons and the one broadcasting rule. */
#include "internal.h"
#include <stdio.h>

bool gcr_size_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out) && *out <= GCR_MAX_BYTES;
}

bool gcr_shape_fits(gcr_dtype dt, int ndim, const int64_t *shape)
{
    int64_t bound = (int64_t)gcr_dtype_size(dt);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 0 || !gcr_size_mul(bound, shape[i] ? shape[i] : 1, &bound)) return false;
    return true;
}

/* a * b for sizes, saturating at INT64_MAX: a meta of a request too large for gcr_shape_fits is
 * described (messages) before it is refused, never with signed overflow */
static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t gcr_meta_numel(const gcr_meta *m)
{
    int64_t n = 1;
    for (int i = 0; i < m->ndim; i++)
        if (m->shape[i] == 0) return 0;
    for (int i = 0; i < m->ndim; i++) n = sat_mul(n, m->shape[i]);
    return n;
}

/* a dim as strides see it: a 0 dim counts as 1 (as PyTorch's), so an empty tensor's strides are
 * never 0 and its layout reads as dense (row-major or NHWC), never as an expand view */
static int64_t stride_dim(int64_t d) { return d > 0 ? d : 1; }

void gcr_meta_set_contiguous(gcr_meta *m)
{
    int64_t s = 1;
    for (int i = m->ndim - 1; i >= 0; i--) {
        m->strides[i] = s;
        s = sat_mul(s, stride_dim(m->shape[i]));
    }
}

void gcr_meta_set_format(gcr_meta *m, gcr_format f)
{
    if (f != GCR_NHWC || m->ndim != 4) { gcr_meta_set_contiguous(m); return; }
    int64_t C = stride_dim(m->shape[1]), H = stride_dim(m->shape[2]), W = stride_dim(m->shape[3]);
    m->strides[1] = 1;
    m->strides[3] = C;
    m->strides[2] = sat_mul(C, W);
    m->strides[0] = sat_mul(m->strides[2], H);
}

static bool strides_match(const gcr_meta *m, const gcr_meta *dense)
{
    for (int i = 0; i < m->ndim; i++)
        if (m->shape[i] != 1 && m->strides[i] != dense->strides[i]) return false;
    return true;
}

bool gcr_meta_is_contiguous(const gcr_meta *m)
{
    gcr_meta d = *m;
    gcr_meta_set_contiguous(&d);
    return strides_match(m, &d);
}

bool gcr_meta_is_nhwc(const gcr_meta *m)
{
    if (m->ndim != 4 || gcr_meta_is_contiguous(m)) return false;
    gcr_meta d = *m;
    gcr_meta_set_format(&d, GCR_NHWC);
    return strides_match(m, &d);
}

bool gcr_meta_is_dense(const gcr_meta *m) { return gcr_meta_is_contiguous(m) || gcr_meta_is_nhwc(m); }

bool gcr_meta_overlaps(const gcr_meta *m)
{
    if (gcr_meta_numel(m) == 0) return false; /* no elements share anything (an expand to a 0 dim) */
    for (int i = 0; i < m->ndim; i++)
        if (m->shape[i] > 1 && m->strides[i] == 0) return true;
    return false;
}

bool gcr_meta_same_shape(const gcr_meta *a, const gcr_meta *b)
{
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

bool gcr_meta_equal(const gcr_meta *a, const gcr_meta *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return false;
    return true;
}

char *gcr_meta_str(const gcr_meta *m, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s[", gcr_dtype_name(m->dtype));
    for (int i = 0; i < m->ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)m->shape[i]);
    if (k < n) k += (size_t)snprintf(buf + k, n - k, "]");
    if (k < n && !gcr_meta_is_contiguous(m))
        snprintf(buf + k, n - k, gcr_meta_is_nhwc(m) ? ":nhwc" : ":strided");
    return buf;
}

int64_t gcr_meta_span(const gcr_meta *m)
{
    int64_t span = 1;
    for (int i = 0; i < m->ndim; i++)
        if (m->shape[i] == 0) return 0;
    for (int i = 0; i < m->ndim; i++) {
        int64_t st = m->strides[i] < 0 ? sat_mul(m->strides[i], -1) : m->strides[i];
        if (__builtin_add_overflow(span, sat_mul(m->shape[i] - 1, st), &span)) return INT64_MAX;
    }
    return span;
}

void gcr_bcast_strides(gcr_op op, int input, const gcr_meta *in, const gcr_meta *out, int64_t *strides)
{
    for (int d = 0; d < out->ndim; d++) strides[d] = 0;
    if (op == GCR_OP_BATCH_NORM && input > 0) { /* [C] parameter along dim 1 */
        if (out->ndim > 1 && in->shape[0] != 1) strides[1] = in->strides[0];
        return;
    }
    /* NumPy: align trailing dims; size-1 dims broadcast */
    int off = out->ndim - in->ndim;
    for (int d = 0; d < in->ndim; d++)
        strides[off + d] = in->shape[d] == 1 ? 0 : in->strides[d];
}
