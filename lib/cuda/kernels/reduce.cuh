/* reduce.cuh — SUM, MEAN and MAX over any set of axes of an input with any strides; one program
 * per (op, dtype), chosen by the host (lib/cuda/reduce.c) with
 *   GCR_RED_OP  GCR_RED_SUM, _MEAN or _MAX (abi.h)      GCR_RED_T  input/output dtype (f32, f16, bf16)
 * The host splits the input into an output index space (kept dims, row-major like the result)
 * and a reduced index space, each with its own shape and input strides. Kernels differ in how
 * many threads share one output: gcr_reduce_1 (short rows), gcr_reduce_32 (a warp per row),
 * gcr_reduce_256 (a block per row: warp shuffles, then shared memory). Few outputs with very
 * long rows split each row over many blocks: gcr_reduce_part writes one partial per (row,
 * split) to a scratch buffer and gcr_reduce_fin combines them. Sums accumulate in f64 as the
 * CPU backend does; max propagates NaN. */
#include "common.cuh"

#ifndef GCR_RED_OP
#define GCR_RED_OP GCR_RED_SUM
#endif
#ifndef GCR_RED_T
#define GCR_RED_T GCR_DT_F32
#endif

__device__ __forceinline__ long long gcr_red_off(long long i, int nd, const long long *shape, const long long *st)
{
    long long off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        long long q = i / shape[d];
        off += (i - q * shape[d]) * st[d];
        i = q;
    }
    return off;
}

#if GCR_RED_OP == GCR_RED_MAX
typedef float gcr_acc;
#define GCR_ACC_INIT (-GCR_INF)
#else
typedef double gcr_acc;
#define GCR_ACC_INIT 0.0
#endif

__device__ __forceinline__ gcr_acc gcr_red_comb(gcr_acc r, gcr_acc v)
{
#if GCR_RED_OP == GCR_RED_MAX
    return ((v > r || v != v) && r == r) ? v : r;
#else
    return r + v;
#endif
}

typedef typename gcr_ty<GCR_RED_T>::t gcr_red_u;

__device__ __forceinline__ void gcr_red_store(const gcr_red_args &g, long long o, gcr_acc r)
{
#if GCR_RED_OP == GCR_RED_MAX
    ((gcr_red_u *)g.out)[o] = gcr_from_f32<GCR_RED_T>(r);
#else
    ((gcr_red_u *)g.out)[o] = gcr_from_f32<GCR_RED_T>((float)(r * g.scale));
#endif
}

/* reduced indices lo, lo+step, ... < hi of the row at input offset ob */
__device__ __forceinline__ gcr_acc gcr_red_row(const gcr_red_args &g, long long ob, long long lo, long long hi, long long step)
{
    const gcr_red_u *in = (const gcr_red_u *)g.in;
    gcr_acc r = GCR_ACC_INIT;
    if (g.nd_red == 1) {
        for (long long k = lo; k < hi; k += step) r = gcr_red_comb(r, (gcr_acc)gcr_to_f32<GCR_RED_T>(in[ob + k * g.rst[0]]));
    } else {
        for (long long k = lo; k < hi; k += step)
            r = gcr_red_comb(r, (gcr_acc)gcr_to_f32<GCR_RED_T>(in[ob + gcr_red_off(k, g.nd_red, g.rshape, g.rst)]));
    }
    return r;
}

/* combines r over the G threads of a group (G in 1, 32, or the whole block of G threads) */
template <int G> __device__ __forceinline__ gcr_acc gcr_red_group(gcr_acc r)
{
    __shared__ gcr_acc part[32];
    if constexpr (G > 1) {
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) r = gcr_red_comb(r, __shfl_xor_sync(0xffffffffu, r, m));
    }
    if constexpr (G > 32) {
        int w = threadIdx.x / 32;
        if ((threadIdx.x & 31) == 0) part[w] = r;
        __syncthreads();
        if (w == 0) {
            r = (int)threadIdx.x < G / 32 ? part[threadIdx.x] : (gcr_acc)GCR_ACC_INIT;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) r = gcr_red_comb(r, __shfl_xor_sync(0xffffffffu, r, m));
        }
        __syncthreads(); /* part is reused by the next row */
    }
    return r;
}

template <int G> __device__ void gcr_reduce_body(const gcr_red_args &g)
{
    const long long per_block = blockDim.x / G;
    const int lane = threadIdx.x % G;
    /* block-uniform trip count: every thread of a block loops together (needed when G = 256) */
    for (long long base = (long long)blockIdx.x * per_block; base < g.n_out; base += (long long)gridDim.x * per_block) {
        long long o = base + threadIdx.x / G;
        gcr_acc r = GCR_ACC_INIT;
        if (o < g.n_out) r = gcr_red_row(g, gcr_red_off(o, g.nd_out, g.oshape, g.ost), lane, g.n_red, G);
        r = gcr_red_group<G>(r);
        if (lane == 0 && o < g.n_out) gcr_red_store(g, o, r);
    }
}

extern "C" __global__ void gcr_reduce_1(gcr_red_args g) { gcr_grid_dep(); gcr_reduce_body<1>(g); }
extern "C" __global__ void gcr_reduce_32(gcr_red_args g) { gcr_grid_dep(); gcr_reduce_body<32>(g); }
extern "C" __global__ void gcr_reduce_256(gcr_red_args g) { gcr_grid_dep(); gcr_reduce_body<256>(g); }

/* one block of 256 per (row, split), grid-stride over n_out * splits */
extern "C" __global__ void gcr_reduce_part(gcr_red_args g)
{
    gcr_grid_dep();
    for (long long b = blockIdx.x; b < g.n_out * g.splits; b += gridDim.x) {
        long long o = b / g.splits, s = b - o * g.splits;
        long long lo = s * g.chunk, hi = lo + g.chunk < g.n_red ? lo + g.chunk : g.n_red;
        gcr_acc r = gcr_red_row(g, gcr_red_off(o, g.nd_out, g.oshape, g.ost), lo + threadIdx.x, hi, blockDim.x);
        r = gcr_red_group<256>(r);
        if (threadIdx.x == 0) g.part[b] = (double)r;
    }
}

/* a warp per row combines its splits partials */
extern "C" __global__ void gcr_reduce_fin(gcr_red_args g)
{
    gcr_grid_dep();
    const long long per_block = blockDim.x / 32;
    const int lane = threadIdx.x % 32;
    for (long long base = (long long)blockIdx.x * per_block; base < g.n_out; base += (long long)gridDim.x * per_block) {
        long long o = base + threadIdx.x / 32;
        gcr_acc r = GCR_ACC_INIT;
        if (o < g.n_out)
            for (long long s = lane; s < g.splits; s += 32) r = gcr_red_comb(r, (gcr_acc)g.part[o * g.splits + s]);
        r = gcr_red_group<32>(r);
        if (lane == 0 && o < g.n_out) gcr_red_store(g, o, r);
    }
}
