/* conv.cuh — conv2d kernels: the dense engine of gemm.cuh (implicit GEMM for 1x1, general and
 * grouped convs) plus depthwise kernels (groups == C == O), which are memory-bound. Channels-last
 * depthwise takes 16 bytes of channels per thread where its 3x3/5x5 shape and alignment allow
 * (gcr_dw_vec), else stages each block's input tile with its halo in shared memory (gcr_dw_tiled);
 * the rest (NCHW) runs gcr_dw_tile / gcr_dw_body: 3x3/5x5 taps with column stride 1 or 2 take 4
 * neighbouring outputs per thread (one pass over the input row, taps in registers), anything else
 * one output per thread; threads run along the contiguous dim of the output (channels for NHWC,
 * columns for NCHW) so loads and stores coalesce.
 *
 * FUSION CONTRACT: the same as gemm.cuh (read its top comment), for every kernel here:
 *   GCR_PROLOGUE(v, n, c)        value used for input element v of image n, input channel c
 *                                (in-bounds elements only: padding stays 0). Default (v).
 *   GCR_EPILOGUE(acc, n, o, idx) stores output channel o of image n at out[idx] (idx: element
 *                                offset in the dense NCHW/NHWC output); acc excludes the bias.
 *                                Default: gcr_dn_st(out, idx, acc + (bias ? gcr_dn_ld(bias, o) : 0)).
 *   GCR_EPILOGUE8(acc8, n, o, idx) optional: GCR_EPILOGUE for channels o..o+7 at idx..idx+7 in one
 *                                call (gemm.cuh says why); gcr_dwc_{f16,bf16} store through it.
 *   GCR_EXTRA_PARAMS             appended to each kernel's parameters (", const float *s, ...").
 *   In scope: p (gcr_dense_args or gcr_dw_args), x, w, out, bias.
 * Kernels: gcr_dense_* (gemm.cuh, gemm_tc.cuh), gcr_dw_{f32,f16,bf16} (depthwise, one channel per
 * thread), gcr_dwv_{f32,f16,bf16} (depthwise, channels-last tile), gcr_dwc_{f32,f16,bf16}
 * (depthwise, channels-last channel groups), gcr_dws_{f32,f16,bf16} (dwstage.cuh: depthwise,
 * channels-last tiles staged by cp.async), gcr_direct_{f32,f16,bf16} (short reductions),
 * gcr_patch{16,32,64}_{f16,bf16} (patch.cuh: tensor-core convs of fewer channels per group than a
 * 16-byte chunk, the stems, their input patch staged) and gcr_shortk{16,32,64}_{f16,bf16}
 * (shortk.cuh: 1x1s and GEMMs with K <= 32, weights in registers); GCR_DTYPE_ONLY keeps one dtype,
 * GCR_NO_DEFAULT_KERNELS none (then instantiate with GCR_DENSE_KERNEL / GCR_DW_KERNEL (or one
 * entry: GCR_DW1_KERNEL, GCR_DWV_KERNEL, GCR_DWC_KERNEL, GCR_DWS_KERNEL) / GCR_DIRECT_KERNEL /
 * GCR_PATCH_KERNEL / GCR_SHORTK_KERNEL). */
#ifndef GCR_CONV_CUH
#define GCR_CONV_CUH

/* the default epilogue (no hook defined before this file): the depthwise tile then stores 4
 * channels at once instead of calling it per element */
#ifdef GCR_EPILOGUE
#define GCR_DW_EPI_DEFAULT 0
#else
#define GCR_DW_EPI_DEFAULT 1
#endif
#include "gemm.cuh"
#include "gemm_tc.cuh"
#include "gemm_tma.cuh"
#include "patch.cuh"
#include "shortk.cuh"
#include "dwpw.cuh"
#include "dwstage.cuh"

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
 * once (through the prologue) into registers and runs the output channels 8 at a time against
 * the weights, which sit in shared memory as f32 [k][o] (o padded to a multiple of 8, so two
 * 16-byte broadcast loads feed a tap's 8 FMAs), storing each run of 8 from registers. The implicit
 * GEMM would re-read the 27 scattered taps per tile element and waste most of a 32-wide tile on 16
 * columns. Same args as the dense engine (KP: K rounded up to 4, the host's bound). */
#define GCR_DIRECT_K 28
#define GCR_DIRECT_W 2048
template <typename T, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_direct_body(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                                Pro &pro, Epi &epi, Epi8 &epi8)
{
    /* [k][NP] (NP: N rounded up to 8): the host's N * KP <= GCR_DIRECT_W bounds K * NP by this */
    __shared__ __align__(16) float wsm[GCR_DIRECT_W + 7 * GCR_DIRECT_K];
    const int M = (int)p.M, N = (int)p.N, K = (int)p.K, NP = (N + 7) & ~7, taps = (int)(p.KH * p.KW);
    const int zo_o = gcr_dn_zo_o(p);
    const gcr_dn_blk blk = gcr_dn_block<0, 0>(p); /* rows by grid-stride loop: no tile */
    const int zn = blk.zn, zc = blk.zc;
    const long long zo = blk.zo;
    x += blk.za;
    w += blk.zb;
    for (int i = threadIdx.x; i < K * NP; i += blockDim.x) {
        int k = i / NP, o = i - k * NP;
        float v = 0.0f;
        if (o < N) {
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
    /* a channel-contiguous output (the NHWC stem) stores runs of 8 channels from registers through
     * GCR_EPILOGUE8, consecutive lanes on consecutive pixels; other layouts element by element */
    const bool runs = p.ys[1] == 1;
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
        for (int o0 = 0; o0 < N; o0 += 8) { /* 8 output channels at a time */
            float acc[8] = {};
#pragma unroll
            for (int k = 0; k < GCR_DIRECT_K; k++) {
                if (k < K) { /* the 8 channels' weights of tap k: two 16-byte broadcast loads */
                    const float4 q0 = *(const float4 *)&wsm[k * NP + o0], q1 = *(const float4 *)&wsm[k * NP + o0 + 4];
                    acc[0] = fmaf(a[k], q0.x, acc[0]);
                    acc[1] = fmaf(a[k], q0.y, acc[1]);
                    acc[2] = fmaf(a[k], q0.z, acc[2]);
                    acc[3] = fmaf(a[k], q0.w, acc[3]);
                    acc[4] = fmaf(a[k], q1.x, acc[4]);
                    acc[5] = fmaf(a[k], q1.y, acc[5]);
                    acc[6] = fmaf(a[k], q1.z, acc[6]);
                    acc[7] = fmaf(a[k], q1.w, acc[7]);
                }
                if (k % 4 == 3) /* 4 taps' loads in flight at most: hoisting all 28 taps' spilled */
                    asm volatile("" ::: "memory");
            }
            if (!act) continue;
            if (runs && o0 + 8 <= N) {
                epi8(acc, n + zn, o0 + zo_o, rc + o0);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (o0 + j < N) epi(acc[j], n + zn, o0 + j + zo_o, rc + (long long)(o0 + j) * p.ys[1]);
            }
        }
    }
}

/* grid (blocks, 1, z), 256 threads; 2 blocks per SM (a[] stays in registers; 4 blocks at 64
 * registers measured slower on an H100: f16 b128 stem 203 -> 241 us) */
#ifndef GCR_DIRECT_MINB
#define GCR_DIRECT_MINB 2
#endif
#define GCR_DIRECT_KERNEL(NAME, T) \
    GCR_DN_ENTRY(NAME, T, 256, GCR_DIRECT_MINB, gcr_direct_body<T>(p, x, w, pro, epi, epi8))

/* Channels-last depthwise through a shared-memory tile (gcr_dwv_*; the host, conv.c, sets
 * p.c_fast = 2 and the tile fields t*): a block owns TH output rows x TW = TSX * TR output columns
 * of one image x CB = 4 * TQ consecutive channels, loads the input tile those outputs read (with
 * its halo, padding as 0) from global memory once, then computes from shared memory only.
 *
 * Shared memory (one static buffer of GCR_DWT_SMEM float4, 48 KiB, the static limit):
 *   tile  float4 [IH][IW][TQ]      input, IH = (TH-1)*sh + (KH-1)*dh + 1, IW = (TW-1)*sw + (KW-1)*dw + 1;
 *                                  element [r][c][q] holds channels c0 + 4q .. +3 as f32, after the
 *                                  prologue (run once per in-bounds element as it is loaded)
 *   taps  float4 [KH*KW][TQ]       the block's weights as f32, right after the tile
 *   stage float4 [TH][TW][TQ]      the outputs on their way to the hooked epilogue, over the tile
 * f32 in shared memory: each element is converted (and passed through the prologue) once at the
 * load instead of once per tap that reads it, and every thread reads one float4 per tap.
 *
 * Threads: thread t computes chunk q = t % TQ (4 channels) of the TR outputs of one row strip
 * (strip t / TQ: row (t / TQ) / TSX, columns (t / TQ) % TSX * TR ..). Consecutive threads take
 * consecutive chunks of one pixel, so shared-memory float4 reads are conflict-free within a pixel's
 * chunks, the loads into the tile run along contiguous channels (16-byte vectors where channels,
 * strides and pointers allow: p.tvec, else one element each, which handles any C), and the stores
 * are channel-contiguous: with the default epilogue straight from registers as one 4-channel vector
 * per output, with a hooked epilogue through the stage so consecutive threads store consecutive
 * channels (the hook contract is one call per element). With the taps known at compile time (KS
 * 3/5/7, column stride SW 1/2, no column dilation) a thread streams the (TR-1)*SW + KS input
 * columns of each tap row through registers once for all TR outputs; otherwise (KS = 0) it reads
 * each tap of each output from the tile.
 *
 * Tile sizes: the host (conv.c dw_geometry) picks TQ, TSX, TH and TR <= GCR_DWT_RMAX per shape by
 * a small cost model: per block, the bytes it moves (input tile with halo + outputs) and its
 * shared-memory reads, times the waves of blocks over the SMs. Large batches get big tiles (at
 * most 256 strips, halo re-reads ~1.2-1.5x, from L2), 4 outputs per thread (shared reads per output
 * 4.5 for 3x3 instead of 9); batch 1 gets small tiles (fewer channels, fewer outputs per thread) so
 * the 132 SMs all get blocks. Blocks walk the tiles in the order (channel block, image, tile row,
 * tile column), so neighbours that share a halo run together and find it in L2. */
#define GCR_DWT_SMEM 3072 /* float4: 48 KiB */
#define GCR_DWT_RMAX 4
#define GCR_DWT_THREADS 256

__device__ __forceinline__ void gcr_dwt_fma(float4 &a, const float4 v, const float4 w)
{
    a.x = fmaf(v.x, w.x, a.x);
    a.y = fmaf(v.y, w.y, a.y);
    a.z = fmaf(v.z, w.z, a.z);
    a.w = fmaf(v.w, w.w, a.w);
}
template <int KS, int SW, typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_dw_tiled(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                             T *__restrict__ out, const T *__restrict__ bias, float4 *__restrict__ sm,
                                             Pro &pro, Epi &epi)
{
    enum { VC = 16 / sizeof(T), RM = GCR_DWT_RMAX };
    const int C = (int)p.C, H = (int)p.H, W = (int)p.W, OH = (int)p.OH, OW = (int)p.OW;
    const int TQ = (int)p.tq, TSX = (int)p.tsx, TH = (int)p.tth, TR = (int)p.tr, TW = TSX * TR, CB = 4 * TQ;
    const int KH = KS ? KS : (int)p.KH, KW = KS ? KS : (int)p.KW;
    const int sh = (int)p.sh, sw = SW ? SW : (int)p.sw, dh = (int)p.dh, dw = SW ? 1 : (int)p.dw;
    const int IH = (TH - 1) * sh + (KH - 1) * dh + 1, IW = (TW - 1) * sw + (KW - 1) * dw + 1;
    const long long ntx = (OW + TW - 1) / TW, nty = (OH + TH - 1) / TH;
    float4 *__restrict__ taps = sm + IH * IW * TQ;
    float *const smf = (float *)sm;
    const int t = threadIdx.x, nt = blockDim.x, q = t % TQ, strip = t / TQ, sx = strip % TSX, ty = strip / TSX;
    const bool comp = ty < TH; /* threads past TQ * TSX * TH only load and store */
    for (long long tile = blockIdx.x; tile < p.ttiles; tile += gridDim.x) {
        long long r = tile;
        const int txi = (int)(r % ntx);
        r /= ntx;
        const int tyi = (int)(r % nty);
        r /= nty;
        const int n = (int)(r % p.N), c0 = (int)(r / p.N) * CB, oy0 = tyi * TH, ox0 = txi * TW;
        const int iy0 = oy0 * sh - (int)p.ph, ix0 = ox0 * sw - (int)p.pw;
        const T *__restrict__ xn = x + n * p.xs[0];
        __syncthreads(); /* the previous tile's reads of the buffer are done */
        /* consecutive threads read consecutive taps of a channel: contiguous in depthwise weights
         * (C x 1 x KH x KW, or channels-last, the same bytes), where channel-fastest reads were
         * KH*KW elements apart, a 32-byte sector per element */
        for (int i = t; i < KH * KW * CB; i += nt) {
            const int ch = i / (KH * KW), tap = i - ch * (KH * KW), c = c0 + ch, ky = tap / KW, kx = tap - ky * KW;
            smf[IH * IW * CB + tap * CB + ch] = c < C ? gcr_dn_ld(w, c * p.ws[0] + ky * p.ws[2] + kx * p.ws[3]) : 0.0f;
        }
        if (p.tvec) { /* 16-byte vectors: C % VC == 0, 16-byte aligned; 4 in flight per thread */
            const int CU = CB / VC, nv = IH * IW * CU;
            for (int i0 = t; i0 < nv; i0 += 4 * nt) {
                uint4 v[4];
                int pix[4], cu[4];
                bool ok[4];
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    const int i = i0 + u * nt;
                    cu[u] = i % CU;
                    pix[u] = i / CU;
                    const int ry = pix[u] / IW, iy = iy0 + ry, ix = ix0 + pix[u] - ry * IW, c = c0 + cu[u] * VC;
                    ok[u] = i < nv && (unsigned)iy < (unsigned)H && (unsigned)ix < (unsigned)W && c < C;
                    v[u] = ok[u] ? *(const uint4 *)(xn + iy * p.xs[2] + ix * p.xs[3] + c) : make_uint4(0, 0, 0, 0);
                }
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    if (i0 + u * nt >= nv) break;
                    float f[VC];
                    gcr_dwt_cvt<T>(v[u], f);
                    if (!GCR_PROLOGUE_IDENTITY && ok[u]) {
#pragma unroll
                        for (int j = 0; j < VC; j++) f[j] = pro(f[j], n, c0 + cu[u] * VC + j);
                    }
                    float4 *d = sm + pix[u] * TQ + cu[u] * (VC / 4);
#pragma unroll
                    for (int h = 0; h < VC / 4; h++) d[h] = make_float4(f[4 * h], f[4 * h + 1], f[4 * h + 2], f[4 * h + 3]);
                }
            }
        } else { /* one element each, consecutive threads on consecutive channels */
            const int ne = IH * IW * CB;
            for (int i = t; i < ne; i += nt) {
                const int ch = i % CB, pix = i / CB, ry = pix / IW, iy = iy0 + ry, ix = ix0 + pix - ry * IW, c = c0 + ch;
                float v = 0.0f;
                if ((unsigned)iy < (unsigned)H && (unsigned)ix < (unsigned)W && c < C)
                    v = pro(gcr_dn_ld(xn, iy * p.xs[2] + ix * p.xs[3] + c * p.xs[1]), n, c);
                smf[i] = v;
            }
        }
        __syncthreads();
        float4 acc[RM];
#pragma unroll
        for (int o = 0; o < RM; o++) acc[o] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (comp) {
            const float4 *base = sm + (ty * sh * IW + sx * TR * sw) * TQ + q;
            if (KS) {
                enum { NCOL = (RM - 1) * (SW ? SW : 1) + (KS ? KS : 1) };
                const int ncol = (TR - 1) * SW + KS;
#pragma unroll 1
                for (int ky = 0; ky < KS; ky++) {
                    float4 wr[KS ? KS : 1];
#pragma unroll
                    for (int kx = 0; kx < KS; kx++) wr[kx] = taps[(ky * KS + kx) * TQ + q];
                    const float4 *row = base + ky * dh * IW * TQ;
#pragma unroll
                    for (int jc = 0; jc < NCOL; jc++) {
                        if (jc < ncol) {
                            const float4 v = row[jc * TQ];
#pragma unroll
                            for (int o = 0; o < RM; o++) {
                                const int kx = jc - o * SW;
                                if (kx >= 0 && kx < KS && o < TR) gcr_dwt_fma(acc[o], v, wr[kx]);
                            }
                        }
                    }
                }
            } else {
#pragma unroll 1
                for (int ky = 0; ky < KH; ky++)
#pragma unroll 1
                    for (int kx = 0; kx < KW; kx++) {
                        const float4 wv = taps[(ky * KW + kx) * TQ + q];
                        const float4 *tp = base + (ky * dh * IW + kx * dw) * TQ;
#pragma unroll
                        for (int o = 0; o < RM; o++)
                            if (o < TR) gcr_dwt_fma(acc[o], tp[o * sw * TQ], wv);
                    }
            }
        }
        const int oy = oy0 + ty, c = c0 + 4 * q;
        if (GCR_DW_EPI_DEFAULT && p.tvec) { /* acc + bias, one 4-channel vector per output */
            if (comp && oy < OH && c < C) {
                float b[4];
#pragma unroll
                for (int j = 0; j < 4; j++) b[j] = bias ? gcr_dn_ld(bias, c + j) : 0.0f;
                T *yr = out + n * p.ys[0] + oy * p.ys[2] + c;
#pragma unroll
                for (int o = 0; o < RM; o++) {
                    const int ox = ox0 + sx * TR + o;
                    if (o < TR && ox < OW) {
                        const float v[4] = {acc[o].x + b[0], acc[o].y + b[1], acc[o].z + b[2], acc[o].w + b[3]};
                        gcr_dwt_st4(yr + ox * p.ys[3], v);
                    }
                }
            }
        } else { /* the hook once per element, consecutive threads on consecutive channels */
            __syncthreads(); /* every thread's tile reads are done: the stage goes over the tile */
            if (comp) {
#pragma unroll
                for (int o = 0; o < RM; o++)
                    if (o < TR) sm[(ty * TW + sx * TR + o) * TQ + q] = acc[o];
            }
            __syncthreads();
            const int ne = TH * TW * CB;
            for (int e = t; e < ne; e += nt) {
                const int ch = e % CB, pix = e / CB, ry = pix / TW, oye = oy0 + ry, oxe = ox0 + pix - ry * TW, ce = c0 + ch;
                if (ce < C && oye < OH && oxe < OW)
                    epi(smf[e], n, ce, n * p.ys[0] + ce * p.ys[1] + oye * p.ys[2] + oxe * p.ys[3]);
            }
        }
    }
}

/* Channels-last depthwise by channel groups (gcr_dwc_*: input and output channel-contiguous, C a
 * multiple of VC, 16-byte aligned, 3x3/5x5 taps, column stride 1/2; the host, conv.c, sets
 * p.c_fast = 3 where it has enough threads): each thread takes VC = 16 bytes of consecutive
 * channels (one vector load per input pixel) times OX = 4 neighbouring outputs of one row. Block =
 * CB channel groups (blockIdx.y picks which) x 256 / CB output-pixel slots, so consecutive threads
 * load consecutive 16-byte channel groups and the block's taps fit in shared memory as f32, laid
 * out [tap][VC / 4][CB][4] so each thread's float4 reads are conflict-free. A tap row's input
 * columns (16-byte vectors) are loaded at once, then each tap's weights are read once for all OX
 * outputs. Measured on an H200 (f16): loading the next row during this one's FMAs made 3x3 layers
 * 2-7% slower, and the 5x5 rows spill with it. */
/* one warp's outputs on their way to coalesced stores (gcr_dw_vec, f32): 16 floats per lane, +1 pad */
struct gcr_dw_stage {
    float v[32][17];
    long long base[32];
    int n[32], c[32], nv[32];
};
/* a block's staging areas by element size: 16-bit types store from registers (GCR_EPILOGUE8), so
 * theirs is empty and its 22 KB of shared memory stay free */
template <int S> struct gcr_dw_stages {
    gcr_dw_stage w[8];
    __device__ __forceinline__ gcr_dw_stage *get() { return w; }
};
template <> struct gcr_dw_stages<2> {
    __device__ __forceinline__ gcr_dw_stage *get() { return nullptr; }
};
#define GCR_DW_CB 32
#define GCR_DW_WSM (25 * GCR_DW_CB * 8) /* floats: 5x5 taps x 32 groups x 8 halves */
template <int KS, int SW, typename T, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_dw_vec(const gcr_dw_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                           float *__restrict__ wsm, gcr_dw_stage *stg, Pro &pro, Epi &epi, Epi8 &epi8)
{
    enum { VC = 16 / sizeof(T), OX = 4, NCOL = (OX - 1) * SW + KS };
    const int H = (int)p.H, W = (int)p.W, OW = (int)p.OW, C = (int)p.C;
    const int CV = C / VC, CB = CV < GCR_DW_CB ? CV : GCR_DW_CB, slots = 256 / CB;
    const int g0 = blockIdx.y * CB; /* first channel group of this block */
    gcr_dw_taps<KS, T>(p, w, wsm, g0, CB);
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
        /* the NCOL 16-byte input vectors of tap row ky (zeros outside the image), as raw bits */
        auto ldrow = [&](int ky, uint4 (&d)[NCOL]) {
            const int iy = iy0 + ky * (int)p.dh;
            const T *xr = xb + iy * p.xs[2];
#pragma unroll
            for (int jc = 0; jc < NCOL; jc++) {
                const int ix = ix0 + jc;
                d[jc] = (unsigned)iy < (unsigned)H && (unsigned)ix < (unsigned)W ? *(const uint4 *)(xr + ix * p.xs[3])
                                                                                 : make_uint4(0, 0, 0, 0);
            }
        };
        uint4 cur[NCOL];
#pragma unroll 1
        for (int ky = 0; ky < (act ? KS : 0); ky++) {
            const int iy = iy0 + ky * (int)p.dh;
            if ((unsigned)iy >= (unsigned)H) continue;
            ldrow(ky, cur);
            /* tap-outer: each tap's VC weights are read from shared memory once and applied to all
             * OX outputs (column jc = kx + o * SW of the row), converting a column where it is used;
             * read per output, the weights were 50 of the 65 shared/L1 requests per output of a 5x5
             * and bound the kernel (H200, f16 b128 b14.dw5: 44.5 us against cuDNN's 24.9) */
#pragma unroll
            for (int kx = 0; kx < KS; kx++) {
                float4 q[VC / 4];
#pragma unroll
                for (int h = 0; h < VC / 4; h++) q[h] = *(const float4 *)&wsm[(ky * KS + kx) * CB * VC + h * CB * 4 + g * 4];
#pragma unroll
                for (int o = 0; o < OX; o++) {
                    const int jc = kx + o * SW;
                    float v[VC];
                    gcr_dwt_cvt<T>(cur[jc], v);
                    if (!GCR_PROLOGUE_IDENTITY && (unsigned)(ix0 + jc) < (unsigned)W) {
#pragma unroll
                        for (int j = 0; j < VC; j++) v[j] = pro(v[j], n, c + j);
                    }
#pragma unroll
                    for (int h = 0; h < VC / 4; h++) {
                        acc[o][h * 4] = fmaf(v[h * 4], q[h].x, acc[o][h * 4]);
                        acc[o][h * 4 + 1] = fmaf(v[h * 4 + 1], q[h].y, acc[o][h * 4 + 1]);
                        acc[o][h * 4 + 2] = fmaf(v[h * 4 + 2], q[h].z, acc[o][h * 4 + 2]);
                        acc[o][h * 4 + 3] = fmaf(v[h * 4 + 3], q[h].w, acc[o][h * 4 + 3]);
                    }
                }
            }
        }
        if constexpr (VC == 8) {
            /* 16-bit types: each output's 8 channels from registers in one GCR_EPILOGUE8 (16-byte
             * stores where aligned; consecutive lanes hold consecutive channel groups, so a warp's
             * stores are contiguous); the output is channel-contiguous (ys[1] == 1, conv.c) */
            if (act) {
                const long long base = n * p.ys[0] + c + oy * p.ys[2] + ox0 * p.ys[3];
#pragma unroll
                for (int o = 0; o < OX; o++)
                    if (ox0 + o < OW) epi8(acc[o], n, c, base + o * p.ys[3]);
            }
        } else {
            /* f32 (4 channels a thread): stores through the warp's staging area, so consecutive
             * lanes store consecutive channels (16-byte runs) instead of each lane 16 bytes apart
             * one element at a time */
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
}

/* Three entries so each gets its own register budget and shared memory (one kernel holding every
 * path was sized by its largest): NAME the one-channel paths, for NCHW and for what neither
 * channels-last kernel takes; VNAME the channels-last tile (c_fast == 2); CNAME the channel-group
 * kernel (c_fast == 3). GCR_DW_MINB 3 (80 registers) measured slower for the channel-group path on
 * an H100 (it spilled); the tile holds 4 x 4 accumulators and one tap row. */
#ifndef GCR_DW_MINB
#define GCR_DW_MINB 2
#endif
#ifndef GCR_DWT_MINB
#define GCR_DWT_MINB 2
#endif
#define GCR_DW1_KERNEL(NAME, T)                                                                            \
    extern "C" __global__ void __launch_bounds__(256, GCR_DW_MINB)                                         \
        NAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,   \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        const int sq = p.KH == p.KW && p.dw == 1 && (p.sw == 1 || p.sw == 2) ? (int)p.KH : 0;              \
        if (p.total >= (1LL << 31)) gcr_dw_body<0, unsigned long long, T>(p, x, w, pro, epi);              \
        else if (sq == 3 && p.sw == 1) gcr_dw_tile<3, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 3) gcr_dw_tile<3, 2, T>(p, x, w, pro, epi);                                         \
        else if (sq == 5 && p.sw == 1) gcr_dw_tile<5, 1, T>(p, x, w, pro, epi);                            \
        else if (sq == 5) gcr_dw_tile<5, 2, T>(p, x, w, pro, epi);                                         \
        else gcr_dw_body<0, unsigned, T>(p, x, w, pro, epi);                                               \
    }

#define GCR_DWV_KERNEL(VNAME, T)                                                                           \
    extern "C" __global__ void __launch_bounds__(GCR_DWT_THREADS, GCR_DWT_MINB)                            \
        VNAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,  \
              const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                 \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        __shared__ float4 sm[GCR_DWT_SMEM];                                                                \
        const int sq = p.KH == p.KW && p.dw == 1 && (p.sw == 1 || p.sw == 2) ? (int)p.KH : 0;              \
        if (sq == 3 && p.sw == 1) gcr_dw_tiled<3, 1, T>(p, x, w, out, bias, sm, pro, epi);                 \
        else if (sq == 3) gcr_dw_tiled<3, 2, T>(p, x, w, out, bias, sm, pro, epi);                         \
        else if (sq == 5 && p.sw == 1) gcr_dw_tiled<5, 1, T>(p, x, w, out, bias, sm, pro, epi);            \
        else if (sq == 5) gcr_dw_tiled<5, 2, T>(p, x, w, out, bias, sm, pro, epi);                         \
        else if (sq == 7 && p.sw == 1) gcr_dw_tiled<7, 1, T>(p, x, w, out, bias, sm, pro, epi);            \
        else if (sq == 7) gcr_dw_tiled<7, 2, T>(p, x, w, out, bias, sm, pro, epi);                         \
        else gcr_dw_tiled<0, 0, T>(p, x, w, out, bias, sm, pro, epi);                                      \
    }

#define GCR_DWC_KERNEL(CNAME, T)                                                                           \
    extern "C" __global__ void __launch_bounds__(256, GCR_DW_MINB)                                         \
        CNAME(const gcr_dw_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out,  \
              const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                 \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        __shared__ __align__(16) float wsm[GCR_DW_WSM]; /* taps */                                        \
        __shared__ gcr_dw_stages<sizeof(T)> stg; /* store staging (f32) */                                 \
        if (p.KH == 3 && p.sw == 1) gcr_dw_vec<3, 1, T>(p, x, w, wsm, stg.get(), pro, epi, epi8);          \
        else if (p.KH == 3) gcr_dw_vec<3, 2, T>(p, x, w, wsm, stg.get(), pro, epi, epi8);                  \
        else if (p.sw == 1) gcr_dw_vec<5, 1, T>(p, x, w, wsm, stg.get(), pro, epi, epi8);                  \
        else gcr_dw_vec<5, 2, T>(p, x, w, wsm, stg.get(), pro, epi, epi8);                                 \
    }

/* all three entries of one dtype (the default kernels); a hooked program takes only the one it runs */
#define GCR_DW_KERNEL(NAME, VNAME, CNAME, SNAME, T)                                                         \
    GCR_DW1_KERNEL(NAME, T) GCR_DWV_KERNEL(VNAME, T) GCR_DWC_KERNEL(CNAME, T) GCR_DWS_KERNEL(SNAME, T)

#endif /* GCR_CONV_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_CONV_KERNELS_DONE)
#define GCR_CONV_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_DW_KERNEL(gcr_dw_f32, gcr_dwv_f32, gcr_dwc_f32, gcr_dws_f32, float)
GCR_DIRECT_KERNEL(gcr_direct_f32, float)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DW_KERNEL(gcr_dw_f16, gcr_dwv_f16, gcr_dwc_f16, gcr_dws_f16, gcr_dn_f16)
GCR_DIRECT_KERNEL(gcr_direct_f16, gcr_dn_f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DW_KERNEL(gcr_dw_bf16, gcr_dwv_bf16, gcr_dwc_bf16, gcr_dws_bf16, gcr_dn_bf16)
GCR_DIRECT_KERNEL(gcr_direct_bf16, gcr_dn_bf16)
#endif
#endif
