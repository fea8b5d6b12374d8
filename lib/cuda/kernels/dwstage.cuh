/* dwstage.cuh — channels-last depthwise conv whose input tiles reach shared memory by cp.async, two
 * tiles in flight (gcr_dws_{f32,f16,bf16}; the host, depthwise.c, sets p.c_fast = 4 and the tile).
 *
 * Why: the channel-group kernel (conv.cuh gcr_dw_vec) loads each tap row of its outputs straight
 * from global memory and waits for it before its FMAs, so every input element crosses L2 once per
 * tap row and column window that reads it (about 5-10 times for 3x3 / 5x5 taps) and each warp's
 * loads wait in series with its arithmetic. Here a block copies its tile's input with the halo
 * into shared memory once, as stored (16 bytes of channels per copy, zeros in the padding), while
 * it computes the tile before: the DRAM and L2 traffic is about the tensors' own size and the
 * copies overlap the arithmetic.
 * Measured (H200, f16, MobileNet-v3-Large's shapes, bench/results/dws-h200-2026-11-28.md): faster
 * than the channel-group kernel on 16-channel layers at every batch (0.69-0.71x) and on most 14x14
 * and 7x7 layers at batch 32 (0.79-0.92x), slower on stride-2 layers and on most layers at batch
 * 128, where both kernels are bound by instruction issue, not DRAM (the FMAs and f16 conversions
 * are a third of the instructions, the rest index math, copies and the epilogue); so depthwise.c
 * takes it by default only for the first case and lets GCR_AUTOTUNE measure the rest.
 *
 * Grid: blockIdx.y is the channel block (CB = p.tq 16-byte channel groups, VC channels each);
 * blockIdx.x walks the channel block's p.ttiles tiles, tile = blockIdx.x + k * gridDim.x. A tile is
 * TH = p.tth output rows x TW = TSX * OX output columns (TSX = p.tsx strips of OX = 4) of one image;
 * tiles run in the order (image, tile row, tile column), so blocks running together share halos in
 * L2.
 *
 * Dynamic shared memory (depthwise.c sizes the launch with it):
 *   taps  float [KS*KS][VC/4][CB][4]   the channel block's weights as f32, loaded once per block
 *   stage uint4 [2][IH][IWP][CB]        input tiles as stored; IH = (TH-1)*sh + (KS-1)*dh + 1 input
 *                                       rows of IW = (TW-1)*SW + KS columns, zeros outside the image
 *                                       and past C; column j at j + j / (OX*SW), so IWP = IW +
 *                                       (IW-1) / (OX*SW): one pixel of padding after each strip's
 *                                       first OX*SW columns
 *
 * Thread t: channel group g = t % CB of strip t / CB (output row ty = strip / TSX, columns
 * (strip % TSX) * OX ..); consecutive threads read consecutive 16-byte groups of one pixel, and
 * with fewer than 8 groups the strips of a quarter warp sit (OX*SW + 1) * CB vectors apart, which
 * the padding makes CB banks of 16 bytes apart mod 8: conflict-free (without it, 2- to 8-way
 * conflicts were a third of the shared-memory wavefronts, H200, 14x14x672 3x3 at batch 128). For
 * each tap row a thread holds that row's KS x VC weights in registers and passes each of its
 * NCOL = (OX-1)*SW + KS input columns, converted to f32 once per tap row, to the OX outputs it
 * feeds. The prologue runs once per staged element (in place, the result rounded to the storage
 * type as the unfused op stores it); the epilogue once per output from registers (GCR_EPILOGUE8
 * for 16-bit types, 4-channel vectors or GCR_EPILOGUE for f32).
 *
 * Conditions (depthwise.c): channels-last input and output with 16-byte channel groups (C % VC == 0,
 * aligned pointers and strides), square taps KS 3/5/7, column stride SW 1/2 and column dilation 1
 * (any row stride and dilation), fewer than 2^30 tiles and an image's offsets below 2^31. */
#ifndef GCR_DWSTAGE_CUH
#define GCR_DWSTAGE_CUH

#include "gemm.cuh"
#include "gemm_tc.cuh"
#include "dwpw.cuh"

#define GCR_DWS_OX 4 /* outputs along a row per thread */
/* a staged column's place in its padded row (above) */
template <int SW> __device__ __forceinline__ int gcr_dws_col(int j) { return j + j / (GCR_DWS_OX * SW); }

/* 4 consecutive channels stored at once (8 bytes of 16-bit types, 16 of f32) */
__device__ __forceinline__ void gcr_dwt_st4(float *p, const float (&v)[4]) { *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]); }
template <typename T> __device__ __forceinline__ void gcr_dwt_st4(T *p, const float (&v)[4])
{
    union { uint2 q; unsigned short h[4]; } u;
#pragma unroll
    for (int j = 0; j < 4; j++) u.h[j] = gcr_dn_bits16(v[j], p);
    *(uint2 *)p = u.q;
}
/* 16 bytes of channels as f32 */
template <typename T> __device__ __forceinline__ void gcr_dwt_cvt(const uint4 q, float (&o)[4])
{
    o[0] = __uint_as_float(q.x); o[1] = __uint_as_float(q.y); o[2] = __uint_as_float(q.z); o[3] = __uint_as_float(q.w);
}
template <typename T> __device__ __forceinline__ void gcr_dwt_cvt(const uint4 q, float (&o)[8]) { gcr_dn_unpack8<T>(q, o); }

/* A depthwise conv's taps of channel groups g0 .. g0 + CB - 1 as f32, laid out [tap][VC/4][CB][4]
 * (zeros past C) so that a thread's float4 reads of its group are conflict-free. Consecutive
 * threads read consecutive taps of a channel: contiguous in the weights (C x 1 x KS x KS). */
template <int KS, typename T>
__device__ __forceinline__ void gcr_dw_taps(const gcr_dw_args &p, const T *__restrict__ w, float *__restrict__ wsm, int g0,
                                            int CB)
{
    enum { VC = 16 / sizeof(T), TAPS = KS * KS };
    const int C = (int)p.C;
    for (int i = threadIdx.x; i < TAPS * CB * VC; i += blockDim.x) {
        const int cl = i / TAPS, tap = i - cl * TAPS, g = cl / VC, j = cl - g * VC;
        const int c = (g0 + g) * VC + j, ky = tap / KS, kx = tap - ky * KS;
        wsm[tap * CB * VC + (j >> 2) * CB * 4 + g * 4 + (j & 3)] =
            c < C ? gcr_dn_ld(w, c * p.ws[0] + ky * p.ws[2] + kx * p.ws[3]) : 0.0f;
    }
}

/* a tile's place: image n, first output row and column (32-bit: a 64-bit division per tile was
 * 13% of the kernel's instructions) */
struct gcr_dws_tile {
    int n, oy0, ox0;
    __device__ __forceinline__ gcr_dws_tile(int tile, int ntx, int nty, int TH, int TW)
    {
        const int r = tile / ntx, ty = r % nty;
        n = r / nty, oy0 = ty * TH, ox0 = (tile - r * ntx) * TW;
    }
};

template <int KS, int SW, typename T, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_dw_staged(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              T *__restrict__ out, const T *__restrict__ bias, unsigned char *smem,
                                              Pro &pro, Epi &epi, Epi8 &epi8)
{
    enum { VC = 16 / sizeof(T), OX = GCR_DWS_OX, NCOL = (OX - 1) * SW + KS };
    const int H = (int)p.H, W = (int)p.W, OH = (int)p.OH, OW = (int)p.OW, C = (int)p.C, CV = C / VC;
    const int CB = (int)p.tq, TSX = (int)p.tsx, TH = (int)p.tth, TW = TSX * OX, sh = (int)p.sh, dh = (int)p.dh;
    const int IH = (TH - 1) * sh + (KS - 1) * dh + 1, IW = (TW - 1) * SW + KS, IWP = gcr_dws_col<SW>(IW - 1) + 1;
    const int tile_u4 = IH * IWP * CB;
    const int ntx = (OW + TW - 1) / TW, nty = (OH + TH - 1) / TH, xs2 = (int)p.xs[2], xs3 = (int)p.xs[3];
    const int g0 = (int)blockIdx.y * CB, ttiles = (int)p.ttiles, t = (int)threadIdx.x, nt = (int)blockDim.x;
    float *wsm = (float *)smem;
    uint4 *stage = (uint4 *)(smem + KS * KS * CB * VC * sizeof(float));
    const T *xc = x + g0 * VC;

    /* A thread's share of a tile's copies. A staged row holds R = IW * CB (column, group) pairs:
     * with R <= threads, thread t copies pair t % R of rows t / R, t / R + RS, ... (RS = threads /
     * R rows a step), else pairs t, t + threads, ... of every row; a pair's column, source offset
     * and bounds test are worked out once a tile, a row's once a copy. */
    const int R = IW * CB, RS = R <= nt ? nt / R : 1, q0 = R <= nt ? t % R : t, qs = R <= nt ? R : nt;
    const int r0 = R <= nt ? t / R : 0;
    /* the copies of tile `tile`, placed at tl, into buf, one commit group (empty past the last tile) */
    auto load = [&](int tile, const gcr_dws_tile &tl, uint4 *buf) {
        if (tile < ttiles && r0 < RS) {
            const int iy0 = tl.oy0 * sh - (int)p.ph, ix0 = tl.ox0 * SW - (int)p.pw;
            const T *xn = xc + tl.n * p.xs[0];
            for (int q = q0; q < R; q += qs) {
                const int j = q / CB, gq = q - j * CB, ix = ix0 + j;
                const bool cok = (unsigned)ix < (unsigned)W && g0 + gq < CV;
                const T *src = xn + (ix * xs3 + gq * VC);
                uint4 *dst = buf + gcr_dws_col<SW>(j) * CB + gq;
                for (int r = r0; r < IH; r += RS) {
                    const int iy = iy0 + r;
                    const bool ok = cok && (unsigned)iy < (unsigned)H;
                    gcr_tc_cp16(dst + r * IWP * CB, ok ? src + iy * xs2 : x, ok);
                }
            }
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };
    int tile = (int)blockIdx.x;
    gcr_dws_tile tl(tile, ntx, nty, TH, TW); /* each tile's place is worked out once, for its copies */
    load(tile, tl, stage);
    gcr_dw_taps<KS, T>(p, w, wsm, g0, CB); /* while the first tile's copies fly */

    const int g = t % CB, strip = t / CB, sx = strip % TSX, ty = strip / TSX;
    const bool comp = ty < TH && g0 + g < CV; /* threads past CB * TSX * TH only copy */
    const float4 *w4 = (const float4 *)wsm + g;
    for (int b = 0; tile < ttiles; tile += (int)gridDim.x, b ^= 1) {
        uint4 *buf = stage + b * tile_u4;
        const gcr_dws_tile next(tile + (int)gridDim.x, ntx, nty, TH, TW);
        load(tile + (int)gridDim.x, next, stage + (b ^ 1) * tile_u4); /* the buffer the tile before used */
        asm volatile("cp.async.wait_group 1;\n" ::);
        __syncthreads(); /* this tile's copies (every thread's) have landed */
        const int iy0 = tl.oy0 * sh - (int)p.ph, ix0 = tl.ox0 * SW - (int)p.pw;
        if (!GCR_PROLOGUE_IDENTITY) { /* in place, in-bounds elements only: the padding stays 0 */
            for (gcr_dwpw_walk e(IW, CB, nt); e.i < IH; e.next(IW, CB)) {
                const int iy = iy0 + e.i, ix = ix0 + e.j, c = (g0 + e.g) * VC;
                if ((unsigned)iy >= (unsigned)H || (unsigned)ix >= (unsigned)W || c >= C) continue;
                uint4 &q = buf[(e.i * IWP + gcr_dws_col<SW>(e.j)) * CB + e.g];
                if constexpr (VC == 8) {
                    q = gcr_dn_pro8<T>(q, pro, tl.n, c);
                } else {
                    q = make_uint4(__float_as_uint(pro(__uint_as_float(q.x), tl.n, c)),
                                   __float_as_uint(pro(__uint_as_float(q.y), tl.n, c + 1)),
                                   __float_as_uint(pro(__uint_as_float(q.z), tl.n, c + 2)),
                                   __float_as_uint(pro(__uint_as_float(q.w), tl.n, c + 3)));
                }
            }
            __syncthreads();
        }
        if (comp) {
            float acc[OX][VC];
#pragma unroll
            for (int o = 0; o < OX; o++)
#pragma unroll
                for (int j = 0; j < VC; j++) acc[o][j] = 0.0f;
            const uint4 *sb = buf + (ty * sh * IWP + sx * (OX * SW + 1)) * CB + g;
#pragma unroll 1
            for (int ky = 0; ky < KS; ky++) {
                if ((unsigned)(iy0 + ty * sh + ky * dh) >= (unsigned)H) continue; /* a row of padding */
                float wr[KS][VC];
#pragma unroll
                for (int kx = 0; kx < KS; kx++)
#pragma unroll
                    for (int h = 0; h < VC / 4; h++) {
                        const float4 q = w4[((ky * KS + kx) * (VC / 4) + h) * CB];
                        wr[kx][4 * h] = q.x, wr[kx][4 * h + 1] = q.y, wr[kx][4 * h + 2] = q.z, wr[kx][4 * h + 3] = q.w;
                    }
                const uint4 *row = sb + ky * dh * IWP * CB;
#pragma unroll
                for (int jc = 0; jc < NCOL; jc++) {
                    float v[VC];
                    gcr_dwt_cvt<T>(row[(jc + jc / (OX * SW)) * CB], v);
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
            const int oy = tl.oy0 + ty, c = (g0 + g) * VC, oxs = tl.ox0 + sx * OX;
            if (oy < OH) {
                const long long base = tl.n * p.ys[0] + oy * p.ys[2] + c;
#pragma unroll
                for (int o = 0; o < OX; o++) {
                    if (oxs + o >= OW) break;
                    const long long idx = base + (oxs + o) * p.ys[3];
                    if constexpr (VC == 8) {
                        epi8(acc[o], tl.n, c, idx);
                    } else if (GCR_DW_EPI_DEFAULT) {
                        float v[4];
#pragma unroll
                        for (int j = 0; j < 4; j++) v[j] = acc[o][j] + (bias ? gcr_dn_ld(bias, c + j) : 0.0f);
                        gcr_dwt_st4(out + idx, v);
                    } else {
#pragma unroll
                        for (int j = 0; j < 4; j++) epi(acc[o][j], tl.n, c + j, idx + j);
                    }
                }
            }
        }
        __syncthreads(); /* every read of buf is done before the next round copies into it */
        tl = next;
    }
    asm volatile("cp.async.wait_group 0;\n" ::); /* no copy outlives the block */
}

#define GCR_DWS_KERNEL(SNAME, T)                                                                           \
    extern "C" __global__ void __launch_bounds__(256, 2)                                                   \
        SNAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,  \
              const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                 \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        extern __shared__ __align__(16) unsigned char gcr_dws_smem[];                                      \
        if (p.KH == 3 && p.sw == 1) gcr_dw_staged<3, 1, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8); \
        else if (p.KH == 3) gcr_dw_staged<3, 2, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8);     \
        else if (p.KH == 5 && p.sw == 1) gcr_dw_staged<5, 1, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8); \
        else if (p.KH == 5) gcr_dw_staged<5, 2, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8);     \
        else if (p.sw == 1) gcr_dw_staged<7, 1, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8);     \
        else gcr_dw_staged<7, 2, T>(p, x, w, out, bias, gcr_dws_smem, pro, epi, epi8);                    \
    }

#endif /* GCR_DWSTAGE_CUH */
