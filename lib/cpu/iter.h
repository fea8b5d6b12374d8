/* iter.h — an N-d strided iterator for CPU kernels: walks one shape with several operands, each
 * with its own element strides (0 on broadcast dims), row by row. Dims are ordered so that
 * operand 0's smallest stride is innermost (cache order), size-1 dims are dropped and dims that
 * are contiguous for every operand are merged, so a dense case collapses into one flat row.
 * Advancing is a counter with carries: no per-element division.
 *
 *     gcr_iter it;
 *     if (gcr_iter_init(&it, ndim, shape, nops, strides) > 0)
 *         do { row(it.off[k] .. it.off[k] + (it.n - 1) * it.inner[k]) } while (gcr_iter_next(&it));
 *
 * Self-contained (needs only GCR_MAX_DIMS); kernels of any family may include it. */
#ifndef GCR_CPU_ITER_H
#define GCR_CPU_ITER_H

#include "gcr.h"
#include <stdbool.h>
#include <stdint.h>

#define GCR_ITER_OPS 8 /* operands per iterator */

typedef struct gcr_iter {
    int ndim;                                     /* outer dims after reordering/merging */
    int nops;
    int64_t shape[GCR_MAX_DIMS];                  /* [ndim], outermost first; inner dim not included */
    int64_t stride[GCR_ITER_OPS][GCR_MAX_DIMS];   /* [nops][ndim] */
    int64_t idx[GCR_MAX_DIMS];                    /* counter over the outer dims */
    int64_t n;                                    /* length of the current row (inner dim) */
    int64_t inner[GCR_ITER_OPS];                  /* stride of each operand along the row */
    int64_t off[GCR_ITER_OPS];                    /* element offset of each operand's row start */
} gcr_iter;

/* shape [ndim]; strides[k] [ndim] for operand k < nops. Returns the element count (0: nothing
 * to visit; the iterator must then not be walked). */
static inline int64_t gcr_iter_init(gcr_iter *it, int ndim, const int64_t *shape, int nops,
                                    const int64_t (*strides)[GCR_MAX_DIMS])
{
    int64_t numel = 1;
    int order[GCR_MAX_DIMS], nd = 0;
    for (int d = 0; d < ndim; d++) {
        numel *= shape[d];
        if (shape[d] != 1) order[nd++] = d;
    }
    it->nops = nops;
    for (int k = 0; k < nops; k++) it->off[k] = 0;
    if (numel == 0) return 0;
    /* insertion sort: larger |stride of operand 0| outer; ties keep the logical order */
    for (int i = 1; i < nd; i++) {
        int d = order[i], j = i;
        int64_t s = strides[0][d] < 0 ? -strides[0][d] : strides[0][d];
        while (j > 0) {
            int64_t t = strides[0][order[j - 1]];
            if ((t < 0 ? -t : t) >= s) break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = d;
    }
    /* merge dim order[i] into the following one when every operand steps over it densely */
    int64_t sh[GCR_MAX_DIMS], st[GCR_ITER_OPS][GCR_MAX_DIMS];
    int m = 0;
    for (int i = 0; i < nd; i++) {
        int d = order[i];
        if (m > 0) {
            bool ok = true;
            for (int k = 0; k < nops && ok; k++) ok = st[k][m - 1] == strides[k][d] * shape[d];
            if (ok) {
                sh[m - 1] *= shape[d];
                for (int k = 0; k < nops; k++) st[k][m - 1] = strides[k][d];
                continue;
            }
        }
        sh[m] = shape[d];
        for (int k = 0; k < nops; k++) st[k][m] = strides[k][d];
        m++;
    }
    if (m == 0) { /* a single element */
        sh[0] = 1;
        for (int k = 0; k < nops; k++) st[k][0] = 0;
        m = 1;
    }
    it->n = sh[m - 1];
    for (int k = 0; k < nops; k++) it->inner[k] = st[k][m - 1];
    it->ndim = m - 1;
    for (int i = 0; i < it->ndim; i++) {
        it->shape[i] = sh[i];
        it->idx[i] = 0;
        for (int k = 0; k < nops; k++) it->stride[k][i] = st[k][i];
    }
    return numel;
}

/* Moves to the next row; false after the last one. */
static inline bool gcr_iter_next(gcr_iter *it)
{
    for (int d = it->ndim - 1; d >= 0; d--) {
        if (++it->idx[d] < it->shape[d]) {
            for (int k = 0; k < it->nops; k++) it->off[k] += it->stride[k][d];
            return true;
        }
        it->idx[d] = 0;
        for (int k = 0; k < it->nops; k++) it->off[k] -= it->stride[k][d] * (it->shape[d] - 1);
    }
    return false;
}

#endif /* GCR_CPU_ITER_H */
