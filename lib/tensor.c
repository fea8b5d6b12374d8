/* tensor.c — tensor handles and storage: creation, ownership (ctx list, scopes, keep), host
 * transfer and accessors. Storage is refcounted so views outlive nothing they point into. */
#include "internal.h"
#include <stdio.h>
#include <stdlib.h>

void gcr_tensor_list_push(gcr_tensor *list, gcr_tensor *t)
{
    t->prev = list->prev;
    t->next = list;
    list->prev->next = t;
    list->prev = t;
}

void gcr_tensor_list_drop(gcr_tensor *t)
{
    if (!t->next) return;
    t->prev->next = t->next;
    t->next->prev = t->prev;
    t->next = t->prev = NULL;
}

static void list_push(gcr_ctx *ctx, gcr_tensor *t)
{
    t->seq = ++ctx->seq;
    gcr_tensor_list_push(&ctx->live, t);
}

static void storage_release(gcr_ctx *ctx, gcr_storage *st)
{
    if (!st || --st->refs > 0) return;
    if (!st->borrowed && st->data) ctx->be->free(ctx, st->data, st->bytes);
    free(st);
}

static gcr_tensor *handle_new(gcr_ctx *ctx, const gcr_meta *m)
{
    gcr_tensor *t = calloc(1, sizeof *t);
    if (!t) {
        gcr_set_error(ctx, GCR_ERR_OOM, "out of host memory for a tensor handle");
        return NULL;
    }
    t->ctx = ctx;
    t->m = *m;
    t->value = -1;
    return t;
}

gcr_tensor *gcr_tensor_alloc(gcr_ctx *ctx, const gcr_meta *m, const char *op)
{
    int64_t span_bytes;
    if (!gcr_size_mul(gcr_meta_span(m), (int64_t)gcr_dtype_size(m->dtype), &span_bytes)) {
        char b[128];
        gcr_set_error(ctx, GCR_ERR_OOM, "%s: %s would take more than 1 PiB", op, gcr_meta_str(m, b, sizeof b));
        return NULL;
    }
    size_t bytes = (size_t)span_bytes;
    gcr_tensor *t = handle_new(ctx, m);
    if (!t) return NULL;
    t->st = calloc(1, sizeof *t->st);
    if (!t->st) {
        free(t);
        gcr_set_error(ctx, GCR_ERR_OOM, "%s: out of host memory", op);
        return NULL;
    }
    t->st->refs = 1;
    t->st->bytes = bytes;
    if (bytes) {
        gcr_status s = ctx->be->alloc(ctx, bytes, &t->st->data);
        if (s != GCR_OK) {
            char b[128];
            free(t->st);
            free(t);
            gcr_set_error(ctx, s, "%s: cannot allocate %zu bytes for %s on %s", op, bytes,
                          gcr_meta_str(m, b, sizeof b), ctx->be->name);
            return NULL;
        }
    }
    list_push(ctx, t);
    return t;
}

gcr_tensor *gcr_tensor_view_of(gcr_ctx *ctx, gcr_tensor *src, const gcr_meta *m, int64_t off)
{
    gcr_tensor *t = handle_new(ctx, m);
    if (!t) return NULL;
    t->st = src->st;
    if (t->st) t->st->refs++;
    t->offset = off;
    list_push(ctx, t);
    return t;
}

gcr_tensor *gcr_tensor_shell(gcr_ctx *ctx, const gcr_meta *m)
{
    gcr_tensor *t = handle_new(ctx, m);
    if (t) t->flags |= GCR_TF_TRACED;
    return t;
}

gcr_status gcr_tensor_bind(gcr_tensor *t, void *data, size_t bytes)
{
    gcr_storage *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(t->ctx, GCR_ERR_OOM, "out of host memory binding a tensor");
    st->refs = 1;
    st->data = data;
    st->bytes = bytes;
    st->borrowed = true;
    storage_release(t->ctx, t->st);
    t->st = st;
    t->offset = 0;
    return GCR_OK;
}

void gcr_tensor_destroy(gcr_tensor *t)
{
    if (!t) return;
    gcr_tensor_list_drop(t);
    storage_release(t->ctx, t->st);
    free(t);
}

void gcr_tensor_share(gcr_tensor *t, gcr_storage *st, int64_t off)
{
    if (st) st->refs++;
    storage_release(t->ctx, t->st);
    t->st = st;
    t->offset = off;
}

void gcr_tensor_unbind(gcr_tensor *t) { gcr_tensor_share(t, NULL, 0); }

void gcr_storage_release(gcr_ctx *ctx, gcr_storage *st) { storage_release(ctx, st); }

void gcr_tensor_pin(gcr_tensor *t)
{
    if (t) t->pins++;
}

void gcr_tensor_unpin(gcr_tensor *t)
{
    if (!t || !t->pins) return;
    if (--t->pins == 0 && (t->flags & GCR_TF_ORPHAN)) gcr_tensor_destroy(t);
}

void gcr_tensor_release(gcr_tensor *t)
{
    if (!t) return;
    if (!t->pins) {
        gcr_tensor_destroy(t);
        return;
    }
    gcr_tensor_list_drop(t); /* off its owner's list: nothing but the last unpin frees it now */
    t->flags |= GCR_TF_ORPHAN;
}

void gcr_tensor_free(gcr_tensor *t)
{
    /* traced tensors belong to their trace or graph, which frees them */
    if (!t || (t->flags & GCR_TF_TRACED)) return;
    gcr_tensor_release(t);
}

gcr_tensor *gcr_tensor_keep(gcr_tensor *t)
{
    if (t) t->flags |= GCR_TF_KEEP;
    return t;
}

gcr_tensor *gcr_tensor_set_const(gcr_tensor *t)
{
    if (t) t->flags |= GCR_TF_CONST;
    return t;
}

uint64_t gcr_scope_begin(gcr_ctx *ctx) { return ctx ? ctx->seq : 0; }

void gcr_scope_end(gcr_ctx *ctx, uint64_t scope)
{
    if (!ctx) return;
    gcr_tensor *t = ctx->live.prev;
    while (t != &ctx->live && t->seq > scope) {
        gcr_tensor *prev = t->prev;
        if (!(t->flags & GCR_TF_KEEP)) gcr_tensor_release(t);
        t = prev;
    }
}

/* ---------------------------------------------------------------- creation from the API */

static gcr_status make_meta(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape,
                            gcr_format fmt, gcr_meta *m, const char *fn)
{
    GCR_CHECK(ctx, (unsigned)dt < GCR_DTYPE_COUNT, GCR_ERR_DTYPE, "%s: invalid dtype %d", fn, (int)dt);
    GCR_CHECK(ctx, ndim >= 0 && ndim <= GCR_MAX_DIMS, GCR_ERR_SHAPE, "%s: ndim %d outside 0..%d", fn,
              ndim, GCR_MAX_DIMS);
    GCR_CHECK(ctx, ndim == 0 || shape, GCR_ERR_INVALID, "%s: NULL shape", fn);
    GCR_CHECK(ctx, fmt == GCR_NCHW || fmt == GCR_NHWC, GCR_ERR_PARAM, "%s: format %d is neither GCR_NCHW (%d) nor GCR_NHWC (%d)",
              fn, (int)fmt, (int)GCR_NCHW, (int)GCR_NHWC);
    GCR_CHECK(ctx, fmt == GCR_NCHW || ndim == 4, GCR_ERR_PARAM, "%s: NHWC format needs a 4-d shape, got %d-d", fn, ndim);
    memset(m, 0, sizeof *m);
    m->dtype = dt;
    m->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        GCR_CHECK(ctx, shape[i] >= 0, GCR_ERR_SHAPE, "%s: negative dim %lld at %d", fn, (long long)shape[i], i);
        m->shape[i] = shape[i];
    }
    gcr_meta_set_format(m, fmt);
    /* absurd requests fail here instead of inside the allocator (which ASan would abort on) */
    char b[256];
    GCR_CHECK(ctx, gcr_shape_fits(dt, ndim, shape), GCR_ERR_OOM, "%s: %s is too large (1 PiB at most)", fn,
              gcr_meta_str(m, b, sizeof b));
    return GCR_OK;
}

gcr_tensor *gcr_tensor_new(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape, gcr_format fmt)
{
    if (!ctx) return NULL;
    gcr_meta m;
    if (make_meta(ctx, dt, ndim, shape, fmt, &m, "tensor_new") != GCR_OK) return NULL;
    return gcr_tensor_alloc(ctx, &m, "tensor_new");
}

gcr_tensor *gcr_tensor_from_data(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape,
                                 gcr_format fmt, const void *host)
{
    if (!ctx) return NULL;
    GCR_CHECK_NULL(ctx, host, GCR_ERR_INVALID, "tensor_from_data: NULL host pointer");
    gcr_tensor *t = gcr_tensor_new(ctx, dt, ndim, shape, fmt);
    if (t && gcr_tensor_from_host(t, host, gcr_tensor_nbytes(t)) != GCR_OK) {
        gcr_tensor_free(t);
        return NULL;
    }
    return t;
}

gcr_status gcr_layout_copy(gcr_ctx *ctx, gcr_tensor *from, gcr_tensor *to)
{
    gcr_call c;
    memset(&c, 0, sizeof c);
    c.op = GCR_OP_CONTIGUOUS;
    c.n_in = 1;
    c.in[0] = from;
    c.p.fmt = GCR_NCHW;
    return ctx->be->run(ctx, &c, to);
}

/* A dense row-major tensor on the device holding a copy of t's logical contents. */
static gcr_tensor *dense_copy(gcr_tensor *t)
{
    gcr_meta m = t->m;
    gcr_meta_set_contiguous(&m);
    gcr_tensor *out = gcr_tensor_alloc(t->ctx, &m, "contiguous");
    if (out && gcr_layout_copy(t->ctx, t, out) != GCR_OK) {
        gcr_tensor_destroy(out);
        return NULL;
    }
    return out;
}

static gcr_status check_io(const gcr_tensor *t, const void *p, size_t bytes, bool write, const char *fn)
{
    if (!t) return GCR_ERR_INVALID;
    char b[128];
    GCR_CHECK(t->ctx, p, GCR_ERR_INVALID, "%s: NULL host pointer for %s", fn, gcr_meta_str(&t->m, b, sizeof b));
    GCR_CHECK(t->ctx, bytes == gcr_tensor_nbytes(t), GCR_ERR_SHAPE, "%s: %zu bytes given, %s holds %zu", fn,
              bytes, gcr_meta_str(&t->m, b, sizeof b), gcr_tensor_nbytes(t));
    GCR_CHECK(t->ctx, !write || !gcr_meta_overlaps(&t->m), GCR_ERR_INVALID,
              "%s: %s is an expand view whose elements share memory: write into its source", fn,
              gcr_meta_str(&t->m, b, sizeof b));
    /* traced tensors, and any tensor while a capture or region body records, follow the recorder's
     * rules; a tensor without data needs one to have been made */
    if (!t->st || t->ctx->mode != GCR_MODE_EAGER) {
        GCR_CHECK(t->ctx, t->ctx->rec, GCR_ERR_INTERNAL, "%s: %s holds no data and no recorder made it", fn,
                  gcr_meta_str(&t->m, b, sizeof b));
        return t->ctx->rec->host_access(t, write, fn);
    }
    return GCR_OK;
}

gcr_status gcr_tensor_from_host(gcr_tensor *t, const void *src, size_t bytes)
{
    GCR_TRY(check_io(t, src, bytes, true, "tensor_from_host"));
    gcr_ctx *ctx = t->ctx;
    if (bytes == 0) return GCR_OK;
    if (gcr_meta_is_contiguous(&t->m))
        return ctx->be->copy(ctx, gcr_tensor_data(t), src, bytes, GCR_COPY_H2D);
    /* strided destination: stage dense, then let the backend scatter it into t's layout */
    gcr_meta m = t->m;
    gcr_meta_set_contiguous(&m);
    gcr_tensor *tmp = gcr_tensor_alloc(ctx, &m, "tensor_from_host");
    if (!tmp) return ctx->status;
    gcr_status s = ctx->be->copy(ctx, gcr_tensor_data(tmp), src, bytes, GCR_COPY_H2D);
    if (s == GCR_OK) s = gcr_layout_copy(ctx, tmp, t);
    gcr_tensor_destroy(tmp);
    return s;
}

gcr_status gcr_tensor_to_host(const gcr_tensor *t, void *dst, size_t bytes)
{
    GCR_TRY(check_io(t, dst, bytes, false, "tensor_to_host"));
    gcr_ctx *ctx = t->ctx;
    if (bytes == 0) return GCR_OK;
    if (gcr_meta_is_contiguous(&t->m))
        return ctx->be->copy(ctx, dst, gcr_tensor_data(t), bytes, GCR_COPY_D2H);
    gcr_tensor *tmp = dense_copy((gcr_tensor *)t);
    if (!tmp) return ctx->status ? ctx->status : GCR_ERR_INTERNAL;
    gcr_status s = ctx->be->copy(ctx, dst, gcr_tensor_data(tmp), bytes, GCR_COPY_D2H);
    gcr_tensor_destroy(tmp);
    return s;
}

/* ---------------------------------------------------------------- accessors */

gcr_dtype gcr_tensor_dtype(const gcr_tensor *t) { return t ? t->m.dtype : GCR_F32; }
int gcr_tensor_ndim(const gcr_tensor *t) { return t ? t->m.ndim : 0; }
int64_t gcr_tensor_dim(const gcr_tensor *t, int i)
{
    if (!t) return 0;
    if (i < 0) i += t->m.ndim;
    return i >= 0 && i < t->m.ndim ? t->m.shape[i] : 0;
}
int64_t gcr_tensor_stride(const gcr_tensor *t, int i)
{
    if (!t) return 0;
    if (i < 0) i += t->m.ndim;
    return i >= 0 && i < t->m.ndim ? t->m.strides[i] : 0;
}
int64_t gcr_tensor_numel(const gcr_tensor *t) { return t ? gcr_meta_numel(&t->m) : 0; }
size_t gcr_tensor_nbytes(const gcr_tensor *t)
{
    return t ? (size_t)gcr_meta_numel(&t->m) * gcr_dtype_size(t->m.dtype) : 0;
}
int gcr_tensor_is_contiguous(const gcr_tensor *t) { return t && gcr_meta_is_contiguous(&t->m); }
gcr_format gcr_tensor_format(const gcr_tensor *t) { return t && gcr_meta_is_nhwc(&t->m) ? GCR_NHWC : GCR_NCHW; }
gcr_ctx *gcr_tensor_ctx(const gcr_tensor *t) { return t ? t->ctx : NULL; }
char *gcr_tensor_describe(const gcr_tensor *t, char *buf, size_t n)
{
    if (!buf || !n) return buf;
    if (!t) {
        snprintf(buf, n, "NULL");
        return buf;
    }
    return gcr_meta_str(&t->m, buf, n);
}
