/* reduce.cuh — SUM, MEAN and MAX over any set of axes of an input with any strides. The host
 * (lib/cuda/reduce.c) splits the input into an output index space (kept dims, row-major like the
 * result) and a reduced index space, each with its own shape and input strides, and picks how
 * many threads share one output: G = 1 (short rows), 32 (one warp per row) or 256 (one block
 * per row, warp shuffles then shared memory). Sums accumulate in f64 as the CPU backend does;
 * max propagates NaN. No macros needed: every (op, dtype, G) is instantiated below. */
#include "common.cuh"

/* mirrors struct gcr_red_args in lib/cuda/reduce.c */
struct gcr_red_args {
    void *out;
    const void *in;
    long long n_out, n_red;
    int nd_out, nd_red;
    long long oshape[GCR_MAX_DIMS], ost[GCR_MAX_DIMS];
    long long rshape[GCR_MAX_DIMS], rst[GCR_MAX_DIMS];
    double scale; /* MEAN: 1 / n_red (nan when empty); else 1 */
};

#define GCR_RED_SUM 0
#define GCR_RED_MEAN 1
#define GCR_RED_MAX 2

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

template <int OP> struct gcr_red_acc { typedef double t; };
template <> struct gcr_red_acc<GCR_RED_MAX> { typedef float t; };

template <int OP> __device__ __forceinline__ typename gcr_red_acc<OP>::t gcr_red_comb(typename gcr_red_acc<OP>::t r,
                                                                                      typename gcr_red_acc<OP>::t v)
{
    if constexpr (OP == GCR_RED_MAX) return ((v > r || v != v) && r == r) ? v : r;
    else return r + v;
}

template <int T, int OP, int G> __device__ void gcr_reduce_body(const gcr_red_args &g)
{
    typedef typename gcr_red_acc<OP>::t A;
    typedef typename gcr_ty<T>::t U;
    const A init = OP == GCR_RED_MAX ? (A)-GCR_INF : (A)0;
    const U *in = (const U *)g.in;
    const long long per_block = blockDim.x / G;
    const int lane = threadIdx.x % G;
    __shared__ A part[32];
    /* block-uniform trip count: every thread of a block loops together (needed when G = 256) */
    for (long long base = (long long)blockIdx.x * per_block; base < g.n_out; base += (long long)gridDim.x * per_block) {
        long long o = base + threadIdx.x / G;
        A r = init;
        if (o < g.n_out) {
            long long ob = gcr_red_off(o, g.nd_out, g.oshape, g.ost);
            if (g.nd_red == 1) {
                for (long long k = lane; k < g.n_red; k += G) r = gcr_red_comb<OP>(r, (A)gcr_to_f32<T>(in[ob + k * g.rst[0]]));
            } else {
                for (long long k = lane; k < g.n_red; k += G)
                    r = gcr_red_comb<OP>(r, (A)gcr_to_f32<T>(in[ob + gcr_red_off(k, g.nd_red, g.rshape, g.rst)]));
            }
        }
        if constexpr (G > 1) {
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) r = gcr_red_comb<OP>(r, __shfl_xor_sync(0xffffffffu, r, m));
        }
        if constexpr (G > 32) {
            int w = threadIdx.x / 32;
            if ((threadIdx.x & 31) == 0) part[w] = r;
            __syncthreads();
            if (w == 0) {
                r = (int)threadIdx.x < G / 32 ? part[threadIdx.x] : init;
#pragma unroll
                for (int m = 16; m > 0; m >>= 1) r = gcr_red_comb<OP>(r, __shfl_xor_sync(0xffffffffu, r, m));
            }
            __syncthreads();
        }
        if (lane == 0 && o < g.n_out) {
            if constexpr (OP == GCR_RED_MAX) ((U *)g.out)[o] = gcr_from_f32<T>(r);
            else ((U *)g.out)[o] = gcr_from_f32<T>((float)(r * g.scale));
        }
    }
}

#define GCR_RED_K(NAME, T, OP, G) \
    extern "C" __global__ void NAME(gcr_red_args g) { gcr_reduce_body<T, OP, G>(g); }
#define GCR_RED_G(OPN, OP, DTN, T) \
    GCR_RED_K(gcr_reduce_##OPN##_##DTN##_1, T, OP, 1) \
    GCR_RED_K(gcr_reduce_##OPN##_##DTN##_32, T, OP, 32) \
    GCR_RED_K(gcr_reduce_##OPN##_##DTN##_256, T, OP, 256)
#define GCR_RED_D(OPN, OP) \
    GCR_RED_G(OPN, OP, f32, GCR_DT_F32) GCR_RED_G(OPN, OP, f16, GCR_DT_F16) GCR_RED_G(OPN, OP, bf16, GCR_DT_BF16)
GCR_RED_D(sum, GCR_RED_SUM)
GCR_RED_D(mean, GCR_RED_MEAN)
GCR_RED_D(max, GCR_RED_MAX)
