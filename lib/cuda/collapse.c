/* collapse.c — the layout arithmetic the eager kernels and generated code share (collapse.h). */
#include "collapse.h"

int gcr_cuda_collapse(int nd, int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS])
{
    int perm[GCR_MAX_DIMS], n = 0;
    for (int d = 0; d < nd; d++)
        if (shape[d] != 1) perm[n++] = d; /* size-1 dims address nothing */
    /* order by operand 0's stride, outermost first (insertion sort: at most 8 dims) */
    for (int i = 1; i < n; i++) {
        int p = perm[i], j = i;
        int64_t sp = st[0][p] < 0 ? -st[0][p] : st[0][p];
        while (j > 0) {
            int64_t sq = st[0][perm[j - 1]] < 0 ? -st[0][perm[j - 1]] : st[0][perm[j - 1]];
            if (sq >= sp) break;
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = p;
    }
    int64_t sh[GCR_MAX_DIMS], s2[GCR_CUDA_KERNEL_PARAMS][GCR_MAX_DIMS]; /* eager and generated kernels' operands */
    int m = 0;
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        bool merge = m > 0;
        for (int k = 0; k < nops && merge; k++) merge = st[k][d] * shape[d] == s2[k][m - 1];
        if (merge) { /* previous (outer) dim continues this one: one longer run */
            sh[m - 1] *= shape[d];
            for (int k = 0; k < nops; k++) s2[k][m - 1] = st[k][d];
        } else {
            sh[m] = shape[d];
            for (int k = 0; k < nops; k++) s2[k][m] = st[k][d];
            m++;
        }
    }
    for (int i = 0; i < m; i++) {
        shape[i] = sh[i];
        for (int k = 0; k < nops; k++) st[k][i] = s2[k][i];
    }
    return m;
}

int gcr_cuda_fits32(int nd, const int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS])
{
    for (int k = 0; k < nops; k++) {
        int64_t span = 0;
        for (int d = 0; d < nd; d++) span += (shape[d] - 1) * (st[k][d] < 0 ? -st[k][d] : st[k][d]);
        if (span >= ((int64_t)1 << 31)) return 0;
    }
    return 1;
}
