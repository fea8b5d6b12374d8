/* splitk.c — a ctx's split-K workspace (kernels/gemm_tc.cuh gcr_tc_splitk): f32 partials of the
 * blocks that share an output tile, and one arrival counter per tile. Made once, on the first
 * problem that wants it, and kept until the ctx goes: a captured CUDA Graph holds its address in
 * kernel parameters, so it never moves or shrinks. One workspace serves every split-K kernel of
 * the ctx, since they run one after the other on its one stream. */
#include "dense.h"

struct gcr_cuda_splitk {
    float *part;  /* [GCR_CUDA_SPLITK_BYTES / 4] */
    gcr_u32 *sem; /* [GCR_CUDA_SPLITK_TILES], all 0 between kernels */
};

int gcr_cuda_splitk_ws(gcr_ctx *ctx, float **part, gcr_u32 **sem)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st->splitk) {
        struct gcr_cuda_splitk *w = calloc(1, sizeof *w);
        if (!w) return 0;
        /* cudaMemset, not the ctx stream: a graph being captured (relaxed mode, a non-blocking
         * stream) gains no node for it, and the counters are 0 before any kernel reads them */
        cudaError_t e = cudaMalloc((void **)&w->part, GCR_CUDA_SPLITK_BYTES);
        if (e == cudaSuccess) e = cudaMalloc((void **)&w->sem, GCR_CUDA_SPLITK_TILES * sizeof(gcr_u32));
        if (e == cudaSuccess) e = cudaMemset(w->sem, 0, GCR_CUDA_SPLITK_TILES * sizeof(gcr_u32));
        if (e != cudaSuccess) { /* no split-K for this ctx's problems: the engine's other tactics */
            cudaFree(w->part);
            cudaFree(w->sem);
            free(w);
            cudaGetLastError();
            return 0;
        }
        st->splitk = w;
    }
    *part = st->splitk->part;
    *sem = st->splitk->sem;
    return 1;
}

void gcr_cuda_splitk_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st->splitk) return;
    cudaFree(st->splitk->part);
    cudaFree(st->splitk->sem);
    free(st->splitk);
    st->splitk = NULL;
}
