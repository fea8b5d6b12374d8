/* reduce.c — CPU kernels of SUM, MEAN and MAX over a set of axes (keepdim or not).
 *
 * The input is walked once in its own memory order (iter.h, input as operand 0, so any strides
 * stay cache-friendly) while a second operand addresses an accumulator laid out like the
 * result, with stride 0 on reduced dims. Sums accumulate in f64 for accuracy; max keeps NaN (as
 * PyTorch does). Empty reductions: sum 0, mean NaN (0/0); max of an empty dim is rejected by
 * inference. The accumulator [numel(out)] f64 is the one allocation per call. */
#include "cpu.h"
#include "iter.h"
#include <math.h>
#include <stdlib.h>

gcr_status gcr_cpu_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_tensor *x = c->in[0];
    const gcr_meta *xm = &x->m;
    GCR_ASSERT(ctx, gcr_op_table[c->op].kind == GCR_KIND_REDUCE && gcr_dtype_is_float(xm->dtype));
    GCR_ASSERT(ctx, gcr_meta_is_contiguous(&out->m));
    gcr_resolved r;
    char err[256];
    GCR_CHECK(ctx, gcr_resolve(c->op, &c->p, xm, &r, err, sizeof err) == GCR_OK, GCR_ERR_INTERNAL, "cpu: %s", err);
    const bool *red = r.red;

    int64_t on = gcr_meta_numel(&out->m), count = 1;
    /* acc strides over x's dims: row-major over the kept dims, 0 over reduced ones */
    int64_t st[2][GCR_MAX_DIMS], s = 1;
    for (int d = xm->ndim - 1; d >= 0; d--) {
        st[0][d] = xm->strides[d];
        if (red[d]) {
            st[1][d] = 0;
            count *= xm->shape[d];
        } else {
            st[1][d] = s;
            s *= xm->shape[d];
        }
    }
    double *acc = malloc((size_t)(on > 0 ? on : 1) * sizeof *acc);
    if (!acc) {
        char b[96];
        return gcr_set_error(ctx, GCR_ERR_OOM, "%s: no host memory for %lld accumulators of %s",
                             gcr_op_table[c->op].name, (long long)on, gcr_meta_str(xm, b, sizeof b));
    }
    bool is_max = c->op == GCR_OP_MAX;
    for (int64_t i = 0; i < on; i++) acc[i] = is_max ? -INFINITY : 0.0;

    const void *xd = gcr_tensor_data(x);
    gcr_dtype dt = xm->dtype;
    gcr_iter it;
    if (gcr_iter_init(&it, xm->ndim, xm->shape, 2, (const int64_t(*)[GCR_MAX_DIMS])st) > 0) do {
        const int64_t si = it.inner[0], sa = it.inner[1], n = it.n;
        double *a = acc + it.off[1];
        if (dt == GCR_F32 && sa == 0) { /* reducing along the row: keep the sum in a register */
            const float *p = (const float *)xd + it.off[0];
            double r = *a;
            if (is_max) {
                for (int64_t i = 0; i < n; i++) {
                    double v = p[i * si];
                    if (v > r || isnan(v)) r = isnan(r) ? r : v;
                }
            } else {
                for (int64_t i = 0; i < n; i++) r += p[i * si];
            }
            *a = r;
        } else {
            for (int64_t i = 0; i < n; i++) {
                double v = gcr_load_f32(xd, dt, it.off[0] + i * si);
                double *r = a + i * sa;
                if (!is_max) *r += v;
                else if ((v > *r || isnan(v)) && !isnan(*r)) *r = v;
            }
        }
    } while (gcr_iter_next(&it));

    void *od = gcr_tensor_data(out);
    for (int64_t i = 0; i < on; i++) {
        double v = acc[i];
        if (c->op == GCR_OP_MEAN) v = count ? v / (double)count : NAN;
        gcr_store_f32(od, out->m.dtype, i, (float)v);
    }
    free(acc);
    return GCR_OK;
}
