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
 * Kernels: gcr_dense_* (gemm.cuh, gemm_tc.cuh), gcr_dw_{f32,f16,bf16} and gcr_direct_{f32,f16,bf16}
 * (short reductions: the stem); GCR_DTYPE_ONLY keeps one dtype, GCR_NO_DEFAULT_KERNELS none (then
 * instantiate with GCR_DENSE_KERNEL / GCR_DW_KERNEL / GCR_DIRECT_KERNEL). */
#ifndef GCR_CONV_CUH
#define GCR_CONV_CUH

#include "gemm.cuh"
#include "gemm_tc.cuh"

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
        int c, ox, oy, n;
        gcr_nchw_decode<I>(i, p.c_fast != 0, C, OH, OW, n, c, oy, ox);
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
        int c, ob, oy, n;
        gcr_nchw_decode<unsigned>(i, p.c_fast != 0, C, OH, OWB, n, c, oy, ob);
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

/* Direct conv for a short reduction (the stem: 3 channels x 3x3 taps; GCR_DIRECT_K at most) into
 * few output channels (N * KP <= GCR_DIRECT_W): a thread per output pixel gathers its K inputs
 * once (through the prologue) into registers and runs every output channel against the weights,
 * which sit in shared memory as f32 [o][k] (k padded to KP, a multiple of 4, so one 16-byte
 * broadcast load feeds 4 FMAs). The implicit GEMM would re-read the 27 scattered taps per tile
 * element and waste most of a 32-wide tile on 16 columns. Same args as the dense engine. */
#define GCR_DIRECT_K 28
#define GCR_DIRECT_W 2048
template <typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_direct_body(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                                Pro &pro, Epi &epi)
{
    __shared__ __align__(16) float wsm[GCR_DIRECT_W];
    const int M = (int)p.M, N = (int)p.N, K = (int)p.K, KP = (K + 3) & ~3, taps = (int)(p.KH * p.KW);
    const int zo_o = gcr_dn_zo_o(p);
    const gcr_dn_blk blk = gcr_dn_block<0, 0>(p); /* rows by grid-stride loop: no tile */
    const int zn = blk.zn, zc = blk.zc;
    const long long zo = blk.zo;
    x += blk.za;
    w += blk.zb;
    for (int i = threadIdx.x; i < N * KP; i += blockDim.x) {
        int o = i / KP, k = i - o * KP;
        float v = 0.0f;
        if (k < K) {
            int c = k / taps, rem = k - c * taps, ky = rem / (int)p.KW, kx = rem - ky * (int)p.KW;
            v = gcr_dn_ld(w, o * p.ws[0] + c * p.ws[1] + ky * p.ws[2] + kx * p.ws[3]);
        }
        wsm[i] = v;
    }
    /* per-k input offsets, decoded once per block */
    __shared__ long long koff[GCR_DIRECT_K];
    __shared__ int kdy[GCR_DIRECT_K], kdx[GCR_DIRECT_K], kc[GCR_DIRECT_K];
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        int c = k / taps, rk = k - c * taps, ky = rk / (int)p.KW, kx = rk - ky * (int)p.KW;
        kdy[k] = ky * (int)p.dh;
        kdx[k] = kx * (int)p.dw;
        kc[k] = c;
        koff[k] = c * p.xs[1] + kdy[k] * p.xs[2] + kdx[k] * p.xs[3];
    }
    __syncthreads();
    const int sp = (int)(p.OH * p.OW), H = (int)p.H, W = (int)p.W;
    /* channel-contiguous output with at most 16 channels (the NHWC stem): stores go through a
     * per-warp staging area so consecutive lanes store consecutive elements */
    __shared__ float stg[8][32][17];
    const bool staged = p.ys[1] == 1 && N <= 16 && blockDim.x <= 256;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    for (int r0 = blockIdx.x * blockDim.x; r0 < M; r0 += gridDim.x * blockDim.x) { /* uniform per block */
        const int r = r0 + threadIdx.x;
        const bool act = r < M;
        const int rr = act ? r : M - 1;
        const int n = rr / sp, rem = rr - n * sp, oy = rem / (int)p.OW, ox = rem - oy * (int)p.OW;
        const int iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox * (int)p.sw - (int)p.pw;
        const long long x0 = n * p.xs[0] + iy0 * p.xs[2] + ix0 * p.xs[3]; /* tap (0, 0), maybe outside */
        float a[GCR_DIRECT_K];
#pragma unroll
        for (int k = 0; k < GCR_DIRECT_K; k++) {
            float v = 0.0f;
            if (k < K) {
                int iy = iy0 + kdy[k], ix = ix0 + kdx[k];
                if ((unsigned)iy < (unsigned)H && (unsigned)ix < (unsigned)W)
                    v = pro(gcr_dn_ld(x, x0 + koff[k]), n + zn, kc[k] + zc);
            }
            a[k] = v;
        }
        const long long rc = zo + n * p.ys[0] + oy * p.ys[2] + ox * p.ys[3];
#pragma unroll 1
        for (int o = 0; o < N; o++) {
            const float4 *wo = (const float4 *)&wsm[o * KP];
            float acc = 0.0f;
#pragma unroll
            for (int k4 = 0; k4 < GCR_DIRECT_K / 4; k4++) {
                if (k4 * 4 < K) {
                    float4 q = wo[k4];
                    acc = fmaf(a[k4 * 4], q.x, acc);
                    acc = fmaf(a[k4 * 4 + 1], q.y, acc);
                    acc = fmaf(a[k4 * 4 + 2], q.z, acc);
                    acc = fmaf(a[k4 * 4 + 3], q.w, acc);
                }
            }
            if (staged) stg[wid][lane][o] = acc;
            else if (act) epi(acc, n + zn, o + zo_o, rc + o * p.ys[1]);
        }
        if (staged) {
            /* lane L's pixel: rc and n by shuffle; element e = (pixel e / N, channel e % N) */
            __syncwarp();
            for (int e = lane; e < 32 * N; e += 32) {
                const int L = e / N, o = e - L * N;
                const long long rcL = __shfl_sync(0xffffffffu, rc, L);
                const int nL = __shfl_sync(0xffffffffu, n, L), okL = __shfl_sync(0xffffffffu, (int)act, L);
                if (okL) epi(stg[wid][L][o], nL + zn, o + zo_o, rcL + o);
            }
            __syncwarp();
        }
    }
}

/* grid (blocks, 1, z), 256 threads; 2 blocks per SM (a[] stays in registers; 4 blocks at 64
 * registers measured slower on an H100: f16 b128 stem 203 -> 241 us) */
#ifndef GCR_DIRECT_MINB
#define GCR_DIRECT_MINB 2
#endif
#define GCR_DIRECT_KERNEL(NAME, T)                                                                         \
    extern "C" __global__ void __launch_bounds__(256, GCR_DIRECT_MINB)                                     \
        NAME(const gcr_dense_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out, \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        GCR_HOOK_LAMBDAS;                                                                                  \
        gcr_direct_body<T>(p, x, w, pro, epi);                                                             \
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
 * aligned; the host (conv.c) sets p.c_fast = 2): each thread takes VC = 16 bytes of consecutive
 * channels (one vector load per input pixel) times OX neighbouring outputs of one row (4 for f32,
 * 2 for 16-bit types: registers). Block = CB channel groups (blockIdx.y picks which) x 256 / CB
 * output-pixel slots, so consecutive threads load consecutive 16-byte channel groups and the
 * block's taps fit in shared memory as f32, laid out [tap][VC / 4][CB][4] so each thread's
 * float4 reads are conflict-free; per input row the thread holds KS x VC taps in registers while
 * the row's input columns stream through one at a time. */
/* one warp's outputs on their way to coalesced stores (gcr_dw_vec): 16 floats per lane, +1 pad */
struct gcr_dw_stage {
    float v[32][17];
    long long base[32];
    int n[32], c[32], nv[32];
};
#define GCR_DW_CB 32
#define GCR_DW_WSM (25 * GCR_DW_CB * 8) /* floats: 5x5 taps x 32 groups x 8 halves */
template <int KS, int SW, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_dw_vec(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                           float *__restrict__ wsm, gcr_dw_stage *stg, Pro &pro, Epi &epi)
{
    enum { VC = 16 / sizeof(T), OX = VC == 8 ? 2 : 4, NCOL = (OX - 1) * SW + KS, TAPS = KS * KS };
    const int H = (int)p.H, W = (int)p.W, OW = (int)p.OW, C = (int)p.C;
    const int CV = C / VC, CB = CV < GCR_DW_CB ? CV : GCR_DW_CB, slots = 256 / CB;
    const int g0 = blockIdx.y * CB; /* first channel group of this block */
    for (int i = threadIdx.x; i < TAPS * CB * VC; i += blockDim.x) {
        int tap = i / (CB * VC), rem = i - tap * CB * VC, g = rem / VC, j = rem - g * VC;
        int c = (g0 + g) * VC + j, ky = tap / KS, kx = tap - ky * KS;
        wsm[tap * CB * VC + (j >> 2) * CB * 4 + g * 4 + (j & 3)] =
            c < C ? gcr_dn_ld(w, c * p.ws[0] + ky * p.ws[2] + kx * p.ws[3]) : 0.0f;
    }
    __syncthreads();
    const int g = threadIdx.x % CB, slot = threadIdx.x / CB, lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const bool on = slot < slots && g0 + g < CV;
    const int c = (g0 + g) * VC;
    const unsigned OH = (unsigned)p.OH, OWB = (unsigned)((OW + OX - 1) / OX);
    const unsigned total = (unsigned)(p.N * OH * OWB);
    for (unsigned q0 = blockIdx.x * slots + slot;; q0 += gridDim.x * slots) {
        const bool act = on && q0 < total;
        if (!__any_sync(0xffffffffu, act)) break; /* whole warps leave together: __syncwarp below */
        unsigned q = act ? q0 : 0;
        const int ob = (int)(q % OWB);
        q /= OWB;
        const int oy = (int)(q % OH), n = (int)(q / OH);
        const T *xb = x + n * p.xs[0] + c;
        const int ox0 = ob * OX, iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox0 * SW - (int)p.pw;
        float acc[OX][VC];
#pragma unroll
        for (int o = 0; o < OX; o++)
#pragma unroll
            for (int j = 0; j < VC; j++) acc[o][j] = 0.0f;
#pragma unroll 1
        for (int ky = 0; ky < (act ? KS : 0); ky++) {
            const int iy = iy0 + ky * (int)p.dh;
            if ((unsigned)iy >= (unsigned)H) continue;
            float wr[KS][VC];
#pragma unroll
            for (int kx = 0; kx < KS; kx++)
#pragma unroll
                for (int h = 0; h < VC / 4; h++) {
                    float4 v = *(const float4 *)&wsm[(ky * KS + kx) * CB * VC + h * CB * 4 + g * 4];
                    wr[kx][h * 4] = v.x; wr[kx][h * 4 + 1] = v.y; wr[kx][h * 4 + 2] = v.z; wr[kx][h * 4 + 3] = v.w;
                }
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
        /* Stores through the warp's staging area, so consecutive lanes store consecutive
         * channels (16-byte runs) instead of each lane 16 bytes apart one element at a time. */
        gcr_dw_stage &st = stg[wid];
#pragma unroll
        for (int o = 0; o < OX; o++)
#pragma unroll
            for (int j = 0; j < VC; j++) st.v[lane][o * VC + j] = acc[o][j];
        st.base[lane] = n * p.ys[0] + c + oy * p.ys[2] + ox0 * p.ys[3];
        st.n[lane] = n;
        st.c[lane] = c;
        st.nv[lane] = act ? (OW - ox0 < OX ? OW - ox0 : OX) : 0;
        __syncwarp();
#pragma unroll
        for (int e = lane; e < 32 * OX * VC; e += 32) {
            const int j = e % VC, L = (e / VC) % 32, o = e / (VC * 32);
            if (o < st.nv[L]) epi(st.v[L][o * VC + j], st.n[L], st.c[L] + j, st.base[L] + o * p.ys[3] + j);
        }
        __syncwarp();
    }
}

/* Two entries so each gets its own register budget (one kernel holding every path was sized by
 * its largest, 124 registers): NAME the one-channel paths (94), VNAME the channels-last 16-byte
 * channel groups (c_fast == 2; 119). GCR_DW_MINB 3 (80 registers) measured slower on an H100: the
 * f16 VNAME spills and b128 depthwise went 1053 -> 1264 us. */
#ifndef GCR_DW_MINB
#define GCR_DW_MINB 2
#endif
#define GCR_DW_KERNEL(NAME, VNAME, T)                                                                      \
    extern "C" __global__ void __launch_bounds__(256, GCR_DW_MINB)                                         \
        NAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,   \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        GCR_HOOK_LAMBDAS;                                                                                  \
        const int sq = p.KH == p.KW && p.dw == 1 && (p.sw == 1 || p.sw == 2) ? (int)p.KH : 0;              \
        if (p.total >= (1LL << 31)) gcr_dw_body<0, unsigned long long, T>(p, x, w, pro, epi);              \
        else if (sq == 3 && p.sw == 1) gcr_dw_tile<3, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 3) gcr_dw_tile<3, 2, T>(p, x, w, pro, epi);                                         \
        else if (sq == 5 && p.sw == 1) gcr_dw_tile<5, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 5) gcr_dw_tile<5, 2, T>(p, x, w, pro, epi);                                         \
        else gcr_dw_body<0, unsigned, T>(p, x, w, pro, epi);                                               \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(256, GCR_DW_MINB)                                         \
        VNAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,  \
              const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                 \
    {                                                                                                      \
        GCR_HOOK_LAMBDAS;                                                                                  \
        __shared__ __align__(16) float wsm[GCR_DW_WSM]; /* taps and store staging */                      \
        __shared__ gcr_dw_stage stg[8];                                                                    \
        if (p.KH == 3 && p.sw == 1) gcr_dw_vec<3, 1, T>(p, x, w, wsm, stg, pro, epi);                      \
        else if (p.KH == 3) gcr_dw_vec<3, 2, T>(p, x, w, wsm, stg, pro, epi);                              \
        else if (p.sw == 1) gcr_dw_vec<5, 1, T>(p, x, w, wsm, stg, pro, epi);                              \
        else gcr_dw_vec<5, 2, T>(p, x, w, wsm, stg, pro, epi);                                             \
    }

#endif /* GCR_CONV_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_CONV_KERNELS_DONE)
#define GCR_CONV_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_DW_KERNEL(gcr_dw_f32, gcr_dwv_f32, float)
GCR_DIRECT_KERNEL(gcr_direct_f32, float)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DW_KERNEL(gcr_dw_f16, gcr_dwv_f16, gcr_dn_f16)
GCR_DIRECT_KERNEL(gcr_direct_f16, gcr_dn_f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DW_KERNEL(gcr_dw_bf16, gcr_dwv_bf16, gcr_dn_bf16)
GCR_DIRECT_KERNEL(gcr_direct_bf16, gcr_dn_bf16)
#endif
#endif
