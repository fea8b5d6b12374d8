/* movement.c — CPU kernels that copy elements between layouts: CONTIGUOUS (any strides into
 * out's layout; also how tensor.c scatters host data into NHWC/strided tensors, so out may be
 * strided too) and CONCAT (inputs of any strides side by side along an axis of a dense out).
 * Elements are moved as raw bytes of their dtype's size, never converted. */
#include "cpu.h"
#include "iter.h"

/* Copies the elements of shape [ndim] from src (strides ss) to dst (strides ds), es bytes each. */
static void copy_strided(char *dst, const int64_t *ds, const char *src, const int64_t *ss, int ndim,
                         const int64_t *shape, size_t es)
{
    int64_t st[2][GCR_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        st[0][d] = ds[d];
        st[1][d] = ss[d];
    }
    gcr_iter it;
    if (gcr_iter_init(&it, ndim, shape, 2, (const int64_t(*)[GCR_MAX_DIMS])st) == 0) return;
    do {
        char *o = dst + it.off[0] * (int64_t)es;
        const char *p = src + it.off[1] * (int64_t)es;
        int64_t n = it.n, so = it.inner[0], si = it.inner[1];
        if (so == 1 && si == 1) {
            memcpy(o, p, (size_t)n * es);
            continue;
        }
        /* typed moves per element size let the compiler emit plain loads/stores */
        switch (es) {
        case 1: for (int64_t i = 0; i < n; i++) o[i * so] = p[i * si]; break;
        case 2: for (int64_t i = 0; i < n; i++) ((uint16_t *)o)[i * so] = ((const uint16_t *)p)[i * si]; break;
        case 4: for (int64_t i = 0; i < n; i++) ((uint32_t *)o)[i * so] = ((const uint32_t *)p)[i * si]; break;
        case 8: for (int64_t i = 0; i < n; i++) ((uint64_t *)o)[i * so] = ((const uint64_t *)p)[i * si]; break;
        default:
            for (int64_t i = 0; i < n; i++) memcpy(o + i * so * (int64_t)es, p + i * si * (int64_t)es, es);
        }
    } while (gcr_iter_next(&it));
}

gcr_status gcr_cpu_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_meta *om = &out->m;
    size_t es = gcr_dtype_size(om->dtype);
    char *od = gcr_tensor_data(out);
    if (c->op == GCR_OP_CONTIGUOUS) {
        const gcr_tensor *x = c->in[0];
        GCR_ASSERT(ctx, x && x->m.dtype == om->dtype && gcr_meta_same_shape(&x->m, om));
        copy_strided(od, om->strides, gcr_tensor_data(x), x->m.strides, om->ndim, om->shape, es);
        return GCR_OK;
    }
    GCR_ASSERT(ctx, c->op == GCR_OP_CONCAT);
    /* each input lands in the slab of out starting at its running offset along axis */
    gcr_resolved r;
    char err[256];
    GCR_CHECK(ctx, gcr_resolve(c->op, &c->p, om, &r, err, sizeof err) == GCR_OK, GCR_ERR_INTERNAL, "cpu: %s", err);
    int axis = r.axis;
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const gcr_tensor *x = c->in[i];
        GCR_ASSERT(ctx, x && x->m.dtype == om->dtype && x->m.ndim == om->ndim);
        copy_strided(od + at * om->strides[axis] * (int64_t)es, om->strides, gcr_tensor_data(x), x->m.strides,
                     om->ndim, x->m.shape, es);
        at += x->m.shape[axis];
    }
    return GCR_OK;
}
