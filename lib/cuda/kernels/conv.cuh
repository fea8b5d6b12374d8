/* conv.cuh — conv2d kernels: the dense engine of gemm.cuh (implicit GEMM for 1x1, general and
 * grouped convs) plus a depthwise kernel (groups == C == O), which is memory-bound: 3x3/5x5 taps
 * with column stride 1 or 2 take 4 neighbouring outputs per thread (one pass over the input row,
 * taps in registers), anything else one output per thread; threads run along the contiguous dim
 * of the output (channels for NHWC, columns for NCHW) so loads and stores coalesce.
 *
 * FUSION CONTRACT: the same as gemm.cuh (read its top comment), for every kernel here:
 *   GCR_PROLOGUE(v, n, c)        value used for input element v of image n, input channel c
 *                                (in-bounds elements only: padding stays 0). Default (v).
 *   GCR_EPILOGUE(acc, n, o, idx) stores output channel o of image n at out[idx] (idx: element
 *                                offset in the dense NCHW/NHWC output); acc excludes the bias.
 *                                Default: gcr_dn_st(out, idx, acc + (bias ? gcr_dn_ld(bias, o) : 0)).
 *   GCR_EXTRA_PARAMS             appended to each kernel's parameters (", const float *s, ...").
 *   In scope: p (gcr_dense_args or gcr_dw_args), x, w, out, bias.
 * Kernels: gcr_dense_* (gemm.cuh, gemm_tc.cuh) and gcr_dw_{f32,f16,bf16}; GCR_DTYPE_ONLY keeps one dtype,
 * GCR_NO_DEFAULT_KERNELS none (then instantiate with GCR_DENSE_KERNEL / GCR_DW_KERNEL). */
#ifndef GCR_CONV_CUH
#define GCR_CONV_CUH

#include "gemm.cuh"
#include "gemm_tc.cuh"

/* host mirror: dw_args in lib/cuda/conv.c; all 64-bit, no padding */
struct gcr_dw_args {
    long long N, C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
    long long xs[4], ws[4], ys[4]; /* x [n,c,h,w], w [c,1,kh,kw], out [n,c,oh,ow] */
    long long total;               /* N*C*OH*OW */
    long long c_fast;              /* 1: consecutive threads take consecutive channels (NHWC out);
                                      2: and 16 bytes of channels per thread (gcr_dw_vec) */
};

/* KS > 0: square KSxKS taps known at compile time; 0: KH x KW at run time. I: the linear index
 * type, unsigned 32-bit whenever it fits (64-bit division would dominate this memory-bound loop). */
template <int KS, typename I, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_dw_body(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                            Pro &pro, Epi &epi)
{
    const int H = (int)p.H, W = (int)p.W;
    const I C = (I)p.C, OH = (I)p.OH, OW = (I)p.OW, total = (I)p.total;
    const int KH = KS ? KS : (int)p.KH, KW = KS ? KS : (int)p.KW;
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
        I q = i;
        int c, ox, oy, n;
        if (p.c_fast) {
            c = (int)(q % C); q /= C;
            ox = (int)(q % OW); q /= OW;
            oy = (int)(q % OH); n = (int)(q / OH);
        } else {
            ox = (int)(q % OW); q /= OW;
            oy = (int)(q % OH); q /= OH;
            c = (int)(q % C); n = (int)(q / C);
        }
        const T *xb = x + n * p.xs[0] + c * p.xs[1];
        const T *wb = w + c * p.ws[0];
        const int iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox * (int)p.sw - (int)p.pw;
        float acc = 0.0f;
#pragma unroll
        for (int ky = 0; ky < KH; ky++) {
            int iy = iy0 + ky * (int)p.dh;
            if ((unsigned)iy >= (unsigned)H) continue;
#pragma unroll
            for (int kx = 0; kx < KW; kx++) {
                int ix = ix0 + kx * (int)p.dw;
                if ((unsigned)ix >= (unsigned)W) continue;
                float v = pro(gcr_dn_ld(xb, iy * p.xs[2] + ix * p.xs[3]), n, c);
                acc = fmaf(v, gcr_dn_ld(wb, ky * p.ws[2] + kx * p.ws[3]), acc);
            }
        }
        epi(acc, n, c, n * p.ys[0] + c * p.ys[1] + oy * p.ys[2] + ox * p.ys[3]);
    }
}

/* The common depthwise case (square 3x3 or 5x5 taps, column stride 1 or 2, no column dilation):
 * each thread makes OX neighbouring outputs of one row, so an input row segment is loaded once
 * for all of them and the taps sit in registers. */
template <int KS, int SW, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_dw_tile(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                            Pro &pro, Epi &epi)
{
    enum { OX = 4, NCOL = (OX - 1) * SW + KS };
    const int H = (int)p.H, W = (int)p.W, OW = (int)p.OW;
    const unsigned C = (unsigned)p.C, OH = (unsigned)p.OH, OWB = (unsigned)((p.OW + OX - 1) / OX);
    const unsigned total = (unsigned)(p.N * p.C * p.OH * OWB);
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        unsigned q = i;
        int c, ob, oy, n;
        if (p.c_fast) {
            c = (int)(q % C); q /= C;
            ob = (int)(q % OWB); q /= OWB;
            oy = (int)(q % OH); n = (int)(q / OH);
        } else {
            ob = (int)(q % OWB); q /= OWB;
            oy = (int)(q % OH); q /= OH;
            c = (int)(q % C); n = (int)(q / C);
        }
        const T *xb = x + n * p.xs[0] + c * p.xs[1];
        const T *wb = w + c * p.ws[0];
        float wr[KS * KS];
#pragma unroll
        for (int ky = 0; ky < KS; ky++)
#pragma unroll
            for (int kx = 0; kx < KS; kx++) wr[ky * KS + kx] = gcr_dn_ld(wb, ky * p.ws[2] + kx * p.ws[3]);
        const int ox0 = ob * OX, iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox0 * SW - (int)p.pw;
        float acc[OX];
#pragma unroll
        for (int o = 0; o < OX; o++) acc[o] = 0.0f;
#pragma unroll
        for (int ky = 0; ky < KS; ky++) {
            int iy = iy0 + ky * (int)p.dh;
            if ((unsigned)iy >= (unsigned)H) continue;
            const T *xr = xb + iy * p.xs[2];
            float col[NCOL];
#pragma unroll
            for (int j = 0; j < NCOL; j++) {
                int ix = ix0 + j;
                col[j] = (unsigned)ix < (unsigned)W ? pro(gcr_dn_ld(xr, ix * p.xs[3]), n, c) : 0.0f;
            }
#pragma unroll
            for (int o = 0; o < OX; o++)
#pragma unroll
                for (int kx = 0; kx < KS; kx++) acc[o] = fmaf(col[o * SW + kx], wr[ky * KS + kx], acc[o]);
        }
        const long long base = n * p.ys[0] + c * p.ys[1] + oy * p.ys[2];
#pragma unroll
        for (int o = 0; o < OX; o++)
            if (ox0 + o < OW) epi(acc[o], n, c, base + (ox0 + o) * p.ys[3]);
    }
}

/* 16 bytes of consecutive channels as f32: 4 floats or 8 halves */
__device__ __forceinline__ void gcr_dw_ld16(const float *p, float (&o)[4])
{
    float4 v = *(const float4 *)p;
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
}
template <typename T> __device__ __forceinline__ void gcr_dw_ld16(const T *p, float (&o)[8])
{
    union { uint4 q; T h[8]; } u;
    u.q = *(const uint4 *)p;
#pragma unroll
    for (int j = 0; j < 8; j++) o[j] = gcr_dn_tof(u.h[j]);
}

/* Channels-last depthwise (input and output channel-contiguous, C a multiple of VC, 16-byte
 * aligned): each thread takes VC = 16 bytes of consecutive channels (one vector load per input
 * pixel) times OX neighbouring outputs of one row (4 for f32, 2 for 16-bit types, for registers);
 * input columns stream through one at a time (VC floats) against one row of taps (KS x VC
 * floats), so 5x5 fits in registers too. The host
 * (conv.c) sets p.c_fast = 2 for this path. */
template <int KS, int SW, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_dw_vec(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                           Pro &pro, Epi &epi)
{
    enum { VC = 16 / sizeof(T), OX = VC == 8 ? 2 : 4, NCOL = (OX - 1) * SW + KS };
    const int H = (int)p.H, W = (int)p.W, OW = (int)p.OW;
    const unsigned CV = (unsigned)(p.C / VC), OH = (unsigned)p.OH, OWB = (unsigned)((p.OW + OX - 1) / OX);
    const unsigned total = (unsigned)(p.N * OH * OWB) * CV;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        unsigned q = i;
        const int c = (int)(q % CV) * VC;
        q /= CV;
        const int ob = (int)(q % OWB);
        q /= OWB;
        const int oy = (int)(q % OH), n = (int)(q / OH);
        const T *xb = x + n * p.xs[0] + c;
        const T *wb = w + c * p.ws[0];
        const int ox0 = ob * OX, iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox0 * SW - (int)p.pw;
        float acc[OX][VC];
#pragma unroll
        for (int o = 0; o < OX; o++)
#pragma unroll
            for (int j = 0; j < VC; j++) acc[o][j] = 0.0f;
#pragma unroll 1
        for (int ky = 0; ky < KS; ky++) {
            const int iy = iy0 + ky * (int)p.dh;
            if ((unsigned)iy >= (unsigned)H) continue;
            float wr[KS][VC];
#pragma unroll
            for (int kx = 0; kx < KS; kx++)
#pragma unroll
                for (int j = 0; j < VC; j++) wr[kx][j] = gcr_dn_ld(wb, j * p.ws[0] + ky * p.ws[2] + kx * p.ws[3]);
            const T *xr = xb + iy * p.xs[2];
#pragma unroll
            for (int jc = 0; jc < NCOL; jc++) {
                const int ix = ix0 + jc;
                float v[VC];
                if ((unsigned)ix < (unsigned)W) {
                    gcr_dw_ld16(xr + ix * p.xs[3], v);
                    if (!GCR_PROLOGUE_IDENTITY) {
#pragma unroll
                        for (int j = 0; j < VC; j++) v[j] = pro(v[j], n, c + j);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < VC; j++) v[j] = 0.0f;
                }
#pragma unroll
                for (int o = 0; o < OX; o++) {
                    const int kx = jc - o * SW;
                    if (kx >= 0 && kx < KS) {
#pragma unroll
                        for (int j = 0; j < VC; j++) acc[o][j] = fmaf(v[j], wr[kx][j], acc[o][j]);
                    }
                }
            }
        }
        const long long base = n * p.ys[0] + c + oy * p.ys[2];
#pragma unroll
        for (int o = 0; o < OX; o++)
            if (ox0 + o < OW) {
#pragma unroll
                for (int j = 0; j < VC; j++) epi(acc[o][j], n, c + j, base + j + (ox0 + o) * p.ys[3]);
            }
    }
}

#define GCR_DW_KERNEL(NAME, T)                                                                             \
    extern "C" __global__ void __launch_bounds__(256)                                                     \
        NAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,   \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        auto pro = [&](float v, int n, int c) -> float { return GCR_PROLOGUE(v, n, c); };                \
        auto epi = [&](float acc, int n, int o, long long idx) { GCR_EPILOGUE(acc, n, o, idx); };        \
        const int sq = p.KH == p.KW && p.dw == 1 && (p.sw == 1 || p.sw == 2) ? (int)p.KH : 0;              \
        if (p.total >= (1LL << 31)) gcr_dw_body<0, unsigned long long, T>(p, x, w, pro, epi);              \
        else if (p.c_fast == 2 && sq == 3 && p.sw == 1) gcr_dw_vec<3, 1, T>(p, x, w, pro, epi);            \
        else if (p.c_fast == 2 && sq == 3) gcr_dw_vec<3, 2, T>(p, x, w, pro, epi);                         \
        else if (p.c_fast == 2 && sq == 5 && p.sw == 1) gcr_dw_vec<5, 1, T>(p, x, w, pro, epi);            \
        else if (p.c_fast == 2) gcr_dw_vec<5, 2, T>(p, x, w, pro, epi);                                    \
        else if (sq == 3 && p.sw == 1) gcr_dw_tile<3, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 3) gcr_dw_tile<3, 2, T>(p, x, w, pro, epi);                                         \
        else if (sq == 5 && p.sw == 1) gcr_dw_tile<5, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 5) gcr_dw_tile<5, 2, T>(p, x, w, pro, epi);                                         \
        else gcr_dw_body<0, unsigned, T>(p, x, w, pro, epi);                                               \
    }

#endif /* GCR_CONV_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_CONV_KERNELS_DONE)
#define GCR_CONV_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_DW_KERNEL(gcr_dw_f32, float)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DW_KERNEL(gcr_dw_f16, gcr_dn_f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DW_KERNEL(gcr_dw_bf16, gcr_dn_bf16)
#endif
#endif
