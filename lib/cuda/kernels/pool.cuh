/* pool.cuh — max/avg/adaptive-avg pooling with PyTorch's window rules, and global average pooling
 * (adaptive 1x1) as a reduction: a warp per (n, c) row when the spatial dims are contiguous
 * (NCHW), or blocks of up to 32 channel chunks x pixel lanes, coalesced over C, when channels are
 * (NHWC): a chunk a channel, or 16 bytes of channels where every pixel's channels are aligned
 * vectors.
 *
 * Hooks as in gemm.cuh: GCR_PROLOGUE(v, n, c) on every in-bounds input element (a fused producer
 * of the pool), GCR_EPILOGUE(acc, n, c, idx) storing the pooled value (max, or the mean) of
 * channel c at out[idx]; bias is always null here. GCR_EXTRA_PARAMS appended to the parameters.
 * Kernels: gcr_pool_{f32,f16,bf16} (any window, thread per output), gcr_gap_rows_* and
 * gcr_gap_cols_* (global average). */
#ifndef GCR_POOL_CUH
#define GCR_POOL_CUH

#define GCR_GEMM_BASE_ONLY /* dtype shims and hook defaults, not the dense kernels */
#include "gemm.cuh"
#undef GCR_GEMM_BASE_ONLY


/* I: linear index type, unsigned 32-bit whenever it fits (64-bit division is slow) */
template <typename I, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_pool_loop(const gcr_pool_args &p, const T *__restrict__ x, Pro &pro, Epi &epi)
{
    const int H = (int)p.H, W = (int)p.W;
    const I C = (I)p.C, OH = (I)p.OH, OW = (I)p.OW, total = (I)p.total;
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
        int c, ox, oy, n;
        gcr_nchw_decode<I>(i, p.c_fast != 0, C, OH, OW, n, c, oy, ox);
        const T *xb = x + n * p.xs[0] + c * p.xs[1];
        float r;
        if (p.mode == 0) {
            r = -__int_as_float(0x7f800000);
            int h0 = oy * (int)p.sh - (int)p.ph, w0 = ox * (int)p.sw - (int)p.pw;
            for (int ky = 0; ky < (int)p.KH; ky++) {
                int iy = h0 + ky * (int)p.dh;
                if ((unsigned)iy >= (unsigned)H) continue;
                for (int kx = 0; kx < (int)p.KW; kx++) {
                    int ix = w0 + kx * (int)p.dw;
                    if ((unsigned)ix >= (unsigned)W) continue;
                    float v = pro(gcr_dn_ld(xb, iy * p.xs[2] + ix * p.xs[3]), n, c);
                    if (v > r || v != v) r = v; /* NaN wins, as in PyTorch */
                }
            }
        } else {
            int h0, h1, w0, w1, div;
            if (p.mode == 1) { /* PyTorch: include-pad divisor is the window clipped to input + padding */
                h0 = oy * (int)p.sh - (int)p.ph;
                w0 = ox * (int)p.sw - (int)p.pw;
                h1 = min(h0 + (int)p.KH, H + (int)p.ph);
                w1 = min(w0 + (int)p.KW, W + (int)p.pw);
                int padded = (h1 - h0) * (w1 - w0);
                h0 = max(h0, 0); w0 = max(w0, 0);
                h1 = min(h1, H); w1 = min(w1, W);
                div = p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
            } else { /* adaptive: [floor(i*in/out), ceil((i+1)*in/out)) */
                h0 = (int)((long long)oy * H / OH); h1 = (int)(((long long)(oy + 1) * H + OH - 1) / OH);
                w0 = (int)((long long)ox * W / OW); w1 = (int)(((long long)(ox + 1) * W + OW - 1) / OW);
                div = (h1 - h0) * (w1 - w0);
            }
            float s = 0.0f;
            for (int iy = h0; iy < h1; iy++)
                for (int ix = w0; ix < w1; ix++) s += pro(gcr_dn_ld(xb, iy * p.xs[2] + ix * p.xs[3]), n, c);
            r = div > 0 ? s / (float)div : 0.0f;
        }
        epi(r, n, c, n * p.ys[0] + c * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]);
    }
}

template <typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_pool_body(const gcr_pool_args &p, const T *__restrict__ x, Pro &pro, Epi &epi)
{
    if (p.total >= (1LL << 31)) gcr_pool_loop<unsigned long long, T>(p, x, pro, epi);
    else gcr_pool_loop<unsigned, T>(p, x, pro, epi);
}

/* global average, spatial dims contiguous-ish: one warp per (n, c) row, 8 rows per block */
template <typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_gap_rows_body(const gcr_pool_args &p, const T *__restrict__ x, Pro &pro, Epi &epi)
{
    const int lane = threadIdx.x & 31, W = (int)p.W, HW = (int)(p.H * p.W);
    long long row = blockIdx.x * 8LL + (threadIdx.x >> 5);
    if (row >= p.total) return;
    int n = (int)(row / p.C), c = (int)(row % p.C);
    const T *xb = x + n * p.xs[0] + c * p.xs[1];
    float s = 0.0f;
    for (int i = lane; i < HW; i += 32) {
        int iy = i / W, ix = i - iy * W;
        s += pro(gcr_dn_ld(xb, iy * p.xs[2] + ix * p.xs[3]), n, c);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) epi(s / (float)HW, n, c, n * p.ys[0] + c * p.ys[1]);
}

/* global average, channels contiguous: block (up to 32 chunks of V channels, 256 / chunks pixel
 * lanes: gcr_chan_sums, common.cuh) of image blockIdx.y, over pixels [z HW / splits, (z + 1) HW /
 * splits) of split z = blockIdx.z; V is 1, or a 16-byte vector's channels (8 halves, 4 floats)
 * where p.vec says every pixel's channels are aligned vectors: a warp's load is then 512
 * contiguous bytes, where a channel a lane was 64 (f16) and the loads, not the bytes, bounded the
 * kernel. A block with fewer chunks than 32 (C below 256 halves) spreads its threads over more
 * pixels instead of leaving lanes idle: with a lane per chunk and 8 pixel slices, MobileNet-v3's
 * 72- and 120-channel pools at batch 128 ran 9 and 15 lanes of 32 (H200, 20 us against a 3-5 us
 * floor). With splits > 1 (few images and channels: too few blocks to fill the GPU) each block
 * stores its sums through L2 and counts itself in (gcr_split_arrive, common.cuh); the last of the
 * group's splits to arrive adds the splits' sums in split order (the same result whichever arrives
 * last) and runs the epilogue. */
template <int V, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_gap_cols_v(const gcr_pool_args &p, const T *__restrict__ x, Pro &pro, Epi &epi)
{
    enum { CB = 32 * V, NT = 256 }; /* channels a block at most; its threads */
    __shared__ __align__(16) float part[NT * V]; /* [pixel lane][chunk][V] */
    const int W = (int)p.W, HW = (int)(p.H * p.W), C = (int)p.C, c0 = blockIdx.x * CB, n = blockIdx.y;
    const int S = (int)p.splits, z = blockIdx.z, CG = min(32, (C - c0) / V); /* C is a multiple of V */
    const int lo = (int)((long long)HW * z / S), hi = (int)((long long)HW * (z + 1) / S);
    const T *xb = x + n * p.xs[0] + c0 * p.xs[1];
    auto ld = [&](int ch, int i, float (&f)[V]) {
        const int iy = i / W, ix = i - iy * W, c = c0 + ch * V;
        const long long o = ch * V * p.xs[1] + iy * p.xs[2] + ix * p.xs[3];
        if constexpr (V == 1) {
            f[0] = pro(gcr_dn_ld(xb, o), n, c);
        } else {
            union { uint4 q; T e[V]; } u;
            u.q = *(const uint4 *)(xb + o);
#pragma unroll
            for (int j = 0; j < V; j++) f[j] = pro(gcr_dn_tof(u.e[j]), n, c + j);
        }
    };
    float r = 0.0f;
    auto done = [&](int, float v) { r = v; }; /* channel c0 + threadIdx.x (CG * V <= NT) */
    if (CG == 32) gcr_chan_sums<V, NT, 32>(CG, lo, hi, part, ld, done); /* every block but a partial last */
    else gcr_chan_sums<V, NT, 0>(CG, lo, hi, part, ld, done);
    const int e = (int)threadIdx.x, ce = c0 + e, CV = CG * V;
    if (S > 1) {
        const long long grp = (long long)n * gridDim.x + blockIdx.x;
        if (e < CV) __stcg(&p.part[(grp * S + z) * CB + e], r);
        if (!gcr_split_arrive(p.sem, grp, S)) return;
        if (e < CV) {
            r = 0.0f;
            for (int k = 0; k < S; k++) r += __ldcg(&p.part[(grp * S + k) * CB + e]);
        }
    }
    if (e < CV && ce < C) epi(r / (float)HW, n, ce, n * p.ys[0] + ce * p.ys[1]);
}
template <typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_gap_cols_body(const gcr_pool_args &p, const T *__restrict__ x, Pro &pro, Epi &epi)
{
    if (p.vec) gcr_gap_cols_v<16 / (int)sizeof(T)>(p, x, pro, epi);
    else gcr_gap_cols_v<1>(p, x, pro, epi);
}

#define GCR_POOL_KERNEL(NAME, T, BODY)                                                                     \
    extern "C" __global__ void __launch_bounds__(256)                                                     \
        NAME(const gcr_pool_args p, const T *__restrict__ x, T *__restrict__ out GCR_EXTRA_PARAMS)        \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        const T *bias = nullptr;                                                                           \
        GCR_HOOK_LAMBDAS;                                                                                  \
        (void)bias;                                                                                        \
        BODY<T>(p, x, pro, epi);                                                                           \
    }

#endif /* GCR_POOL_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_POOL_KERNELS_DONE)
#define GCR_POOL_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_POOL_KERNEL(gcr_pool_f32, float, gcr_pool_body)
GCR_POOL_KERNEL(gcr_gap_rows_f32, float, gcr_gap_rows_body)
GCR_POOL_KERNEL(gcr_gap_cols_f32, float, gcr_gap_cols_body)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_POOL_KERNEL(gcr_pool_f16, gcr_dn_f16, gcr_pool_body)
GCR_POOL_KERNEL(gcr_gap_rows_f16, gcr_dn_f16, gcr_gap_rows_body)
GCR_POOL_KERNEL(gcr_gap_cols_f16, gcr_dn_f16, gcr_gap_cols_body)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_POOL_KERNEL(gcr_pool_bf16, gcr_dn_bf16, gcr_pool_body)
GCR_POOL_KERNEL(gcr_gap_rows_bf16, gcr_dn_bf16, gcr_gap_rows_body)
GCR_POOL_KERNEL(gcr_gap_cols_bf16, gcr_dn_bf16, gcr_gap_cols_body)
#endif
#endif
