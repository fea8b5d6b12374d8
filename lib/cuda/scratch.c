/* scratch.c — a ctx's persistent device scratch: split-K's f32 partials and per-tile arrival
 * counters (kernels/gemm_tc.cuh's split tiles, the conv->conv pair kernel's channel splits in
 * kernels/dwpw.cuh), and the two-pass reduction's partials (reduce.c).
 * Each part is made on its first use and kept until the ctx goes: a captured CUDA Graph holds its
 * address in kernel parameters, so it never moves, shrinks or returns to the allocator (a block
 * handed back during a capture would be given to a later tensor, which every replay then
 * overwrote). cudaMalloc is no stream operation, so a graph being captured (relaxed mode) gains no
 * node for it. One copy serves every kernel of the ctx (split-K tiles, and global average pooling
 * split over pixels, pool.c), since they run one after the other on its one stream: a kernel
 * launched early by programmatic dependent launch touches no memory before its predecessor has
 * finished (gcr_grid_dep, kernels/common.cuh). */
#include "dense.h"

struct gcr_cuda_scratch {
    float *part;  /* [GCR_CUDA_SPLITK_BYTES / 4] */
    gcr_u32 *sem; /* [GCR_CUDA_SPLITK_TILES], all 0 between kernels */
    int sem_zeroed; /* a memset of sem has been queued on the ctx stream outside any capture */
    double *red;  /* [GCR_CUDA_RED_PARTS] */
};

static struct gcr_cuda_scratch *scratch(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st->scratch) st->scratch = calloc(1, sizeof *st->scratch);
    return st->scratch;
}

int gcr_cuda_splitk_ws(gcr_ctx *ctx, int make, float **part, gcr_u32 **sem)
{
    struct gcr_cuda_scratch *w = scratch(ctx);
    if (!w) return 0;
    if (!w->part) {
        if (!make) return 0;
        float *p = NULL;
        gcr_u32 *s = NULL;
        cudaError_t e = cudaMalloc((void **)&p, GCR_CUDA_SPLITK_BYTES);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s, GCR_CUDA_SPLITK_TILES * sizeof(gcr_u32));
        if (e != cudaSuccess) { /* no split-K for this ctx's problems: the engine's other tactics */
            cudaFree(p);
            cudaFree(s);
            cudaGetLastError();
            return 0;
        }
        w->part = p;
        w->sem = s;
    }
    *part = w->part;
    *sem = w->sem;
    return 1;
}

gcr_status gcr_cuda_splitk_zeroed(gcr_ctx *ctx)
{
    struct gcr_cuda_scratch *w = gcr_cuda_st(ctx)->scratch;
    GCR_CHECK(ctx, w && w->sem, GCR_ERR_INTERNAL, "cuda split-K: a launch without its workspace");
    if (w->sem_zeroed) return GCR_OK;
    /* The counters start at 0 only after a memset ordered before the kernels that count: on the
     * ctx stream (the default stream's cudaMemset is not ordered with a non-blocking stream). While
     * the stream captures, the memset becomes a node of that graph, ahead of its split-K kernels
     * (harmless at each replay: they leave the counters 0), and later launches queue another until
     * one is issued outside a capture, after which every kernel on the stream finds them 0. */
    cudaStream_t st = gcr_cuda_st(ctx)->stream;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    GCR_TRY(gcr_cuda_error(ctx, cudaStreamIsCapturing(st, &cs), "cuda split-K: cudaStreamIsCapturing"));
    GCR_TRY(gcr_cuda_error(ctx, cudaMemsetAsync(w->sem, 0, GCR_CUDA_SPLITK_TILES * sizeof(gcr_u32), st),
                           "cuda split-K: zeroing the counters"));
    w->sem_zeroed = cs == cudaStreamCaptureStatusNone;
    return GCR_OK;
}

gcr_status gcr_cuda_reduce_ws(gcr_ctx *ctx, double **part)
{
    struct gcr_cuda_scratch *w = scratch(ctx);
    if (!w) return gcr_set_error(ctx, GCR_ERR_OOM, "cuda reduce: out of host memory for the scratch record");
    if (!w->red) {
        cudaError_t e = cudaMalloc((void **)&w->red, GCR_CUDA_RED_PARTS * sizeof(double));
        if (e != cudaSuccess) {
            w->red = NULL;
            return gcr_cuda_error(ctx, e, "cuda reduce: cudaMalloc of the partials' scratch");
        }
    }
    *part = w->red;
    return GCR_OK;
}

void gcr_cuda_scratch_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st->scratch) return;
    cudaFree(st->scratch->part);
    cudaFree(st->scratch->sem);
    cudaFree(st->scratch->red);
    free(st->scratch);
    st->scratch = NULL;
}
