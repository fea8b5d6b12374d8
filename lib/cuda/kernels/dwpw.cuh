/* dwpw.cuh — a depthwise conv and the 1x1 conv that alone reads its result, as one kernel
 * (capture/pass_convconv.c makes the pair): gcr_dwpw<BN>_{f16,bf16}, sm_80+.
 *
 * Why: in a depthwise-separable block the depthwise result is the widest tensor; unfused it is
 * written once and read once more by the 1x1 conv. Here each block computes the depthwise outputs
 * of a tile of pixels straight into the shared-memory A tile of the 1x1 conv's GEMM (through the
 * prologue hook: the depthwise conv's own fused epilogue), and multiplies them by the 1x1 weights
 * on mma.sync m16n8k16. All BN >= O output channels are one column tile, so every depthwise
 * output is computed exactly once.
 *
 * Problem (gcr_dwpw_args, abi.h), channels-last x (C a multiple of 8: 16-byte channel groups):
 *     d(r, c)  = PROLOGUE(sum_taps x[n, c, iy, ix] * dw[c, 0, ky, kx] + dbias[c], n, c)  rounded to T
 *     out(r, o) = EPILOGUE(sum_c d(r, c) * w[o, c], n, o, idx)
 * with row r -> (n, oy, ox) as in gemm.cuh and the hooks of its FUSION CONTRACT: GCR_PROLOGUE gets
 * the depthwise result with its bias added (the depthwise conv's epilogue, generated), GCR_EPILOGUE
 * and GCR_EPILOGUE8 the 1x1 conv's sums without its bias (named `bias`, as there).
 *
 * Block: 256 threads walking row tiles (grid x: a few blocks per SM) of BM = GCR_DWPW_BM(BN)
 * pixels: 128 up to BN 64, as 8 warps of 16 rows each, so that a 16-channel layer still gives
 * every thread a depthwise item; 64 past it, as 4 x 2 warps, each half the columns. Channels go kc at a time (p.kc, a multiple of 16): where kc covers
 * C, a block loads the taps ([taps][kc] f32) and the 1x1 weights ([BN][kc + 8] 16-bit) into shared
 * memory once and keeps them, else once per step. A step: the threads compute the tile's depthwise
 * outputs, 8 channels of a pixel an item (one 16-byte load of x per tap, the taps unrolled for
 * 3x3 and 5x5 so that their loads are in flight together), into A ([64][kc + 8]); a barrier;
 * ldmatrix and mma. The padded rows keep ldmatrix free of bank conflicts. The accumulators leave
 * through gcr_warp_epi16 (gemm.cuh), through a staging area of each warp's own, so a tile takes
 * two barriers. Dynamic shared memory: GCR_DWPW_SMEM(BN, taps, kc) bytes (abi.h). */
#ifndef GCR_DWPW_CUH
#define GCR_DWPW_CUH

#include "gemm.cuh"

/* x's 8 channels at one tap, through a 16-byte load where legal; 0 outside the input */
template <typename T>
__device__ __forceinline__ void gcr_dwpw_x8(const gcr_dwpw_args &p, const T *src, bool ok, float (&xv)[8])
{
    if (p.xvec) {
        union { uint4 q; T h[8]; } u;
        u.q = ok ? *(const uint4 *)src : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int j = 0; j < 8; j++) xv[j] = gcr_dn_tof(u.h[j]);
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++) xv[j] = ok ? gcr_dn_tof(src[j * p.xs[1]]) : 0.0f;
    }
}

/* 8 values as 8 packed 16-bit elements */
template <typename T> __device__ __forceinline__ uint4 gcr_dwpw_pack(const float (&v)[8])
{
    unsigned short h[8];
#pragma unroll
    for (int j = 0; j < 8; j++) h[j] = gcr_dn_bits16(v[j], (T *)0);
    return make_uint4(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16, h[4] | (unsigned)h[5] << 16,
                      h[6] | (unsigned)h[7] << 16);
}

/* KS: 3 or 5 for square taps unrolled, 0 for any other (loops) */
template <typename T, int BN, int KS, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_dwpw_body(const gcr_dwpw_args &p, const T *__restrict__ x, const T *__restrict__ dw,
                                              const T *__restrict__ dbias, const T *__restrict__ w, float *smem, Pro &pro,
                                              Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    /* 8 warps as WM (16 rows each) x WN (BN / WN columns each) */
    enum { BM = GCR_DWPW_BM(BN), WM = BM / 16, WN = 8 / WM, NT = BN / (8 * WN) };
    const int C = (int)p.C, M = (int)p.M, O = (int)p.O, KC = (int)p.kc, LD = KC + 8, G = KC / 8;
    const int KH = KS ? KS : (int)p.KH, KW = KS ? KS : (int)p.KW, taps = KH * KW;
    float *Wt = smem;                                     /* [taps][KC] */
    unsigned short *Bs = (unsigned short *)(Wt + taps * KC); /* [BN][LD] */
    unsigned short *As = Bs + BN * LD;                    /* [BM][LD] */
    float *stage = (float *)(As + BM * LD);               /* [8 warps][16][BN / WN + 8] */
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, wm = wid % WM, wn = wid / WM;
    const int H = (int)p.H, W = (int)p.W, sp = (int)(p.OH * p.OW), OW = (int)p.OW;
    const int cb = wn * (BN / WN); /* this warp's first column */
    const unsigned a_addr = (unsigned)__cvta_generic_to_shared(&As[(wm * 16 + (lane & 15)) * LD + (lane >> 4) * 8]);
    const unsigned b_addr = (unsigned)__cvta_generic_to_shared(&Bs[(cb + (lane & 7)) * LD + ((lane >> 3) & 1) * 8]);
    /* the taps and 1x1 weights of channels k0 .. k0 + KC - 1 (0 past C) */
    auto weights = [&](int k0) {
        for (int e = tid; e < taps * KC; e += 256) {
            const int tap = e / KC, c = k0 + e - tap * KC, ky = tap / KW, kx = tap - ky * KW;
            Wt[e] = c < C ? gcr_dn_ld(dw, c * p.ds[0] + ky * p.ds[2] + kx * p.ds[3]) : 0.0f;
        }
        for (int e = tid; e < BN * G; e += 256) {
            const int o = e / G, kc = (e - o * G) * 8, c = k0 + kc;
            uint4 v = make_uint4(0u, 0u, 0u, 0u);
            if (o < O && c < C) {
                const T *src = w + o * p.ws[0] + c * p.ws[1];
                if (p.wvec) {
                    v = *(const uint4 *)src;
                } else {
                    float f[8];
#pragma unroll
                    for (int j = 0; j < 8; j++) f[j] = gcr_dn_tof(src[j * p.ws[1]]);
                    v = gcr_dwpw_pack<T>(f);
                }
            }
            *(uint4 *)&Bs[o * LD + kc] = v;
        }
    };
    const bool resident = KC >= C; /* one step covers C: the weights are loaded once per block */
    if (resident) weights(0);
    for (int r0 = (int)blockIdx.x * BM; r0 < M; r0 += (int)gridDim.x * BM) {
        float acc[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
        for (int k0 = 0; k0 < C; k0 += KC) {
            __syncthreads(); /* the weights are in; the last step's MMAs are done with A */
            if (!resident) {
                weights(k0);
                __syncthreads();
            }
            /* the depthwise stage: item e is pixel e / G's channels k0 + 8 (e % G) .. + 7, so that
             * consecutive threads load consecutive 16-byte channel groups of a pixel */
            for (int e = tid; e < BM * G; e += 256) {
                const int px = e / G, g8 = (e - px * G) * 8, c0 = k0 + g8, r = r0 + px;
                uint4 packed = make_uint4(0u, 0u, 0u, 0u);
                if (r < M && c0 < C) { /* C is a multiple of 8 */
                    const int n = r / sp, rem = r - n * sp, oy = rem / OW, ox = rem - oy * OW;
                    const int iy0 = oy * (int)p.sh - (int)p.ph, ix0 = ox * (int)p.sw - (int)p.pw;
                    const T *xn = x + n * p.xs[0] + c0 * p.xs[1];
                    float v[8];
#pragma unroll
                    for (int j = 0; j < 8; j++) v[j] = 0.0f;
                    /* KS 3 / 5: the taps unrolled, so that their loads are in flight together */
#pragma unroll
                    for (int ky = 0; ky < KH; ky++) {
                        const int iy = iy0 + ky * (int)p.dh;
#pragma unroll
                        for (int kx = 0; kx < KW; kx++) {
                            const int ix = ix0 + kx * (int)p.dw;
                            const bool ok = (unsigned)iy < (unsigned)H && (unsigned)ix < (unsigned)W;
                            float xv[8];
                            gcr_dwpw_x8<T>(p, xn + (ok ? iy * p.xs[2] + ix * p.xs[3] : 0), ok, xv);
                            const float4 w0 = *(const float4 *)&Wt[(ky * KW + kx) * KC + g8];
                            const float4 w1 = *(const float4 *)&Wt[(ky * KW + kx) * KC + g8 + 4];
                            v[0] = fmaf(xv[0], w0.x, v[0]); v[1] = fmaf(xv[1], w0.y, v[1]);
                            v[2] = fmaf(xv[2], w0.z, v[2]); v[3] = fmaf(xv[3], w0.w, v[3]);
                            v[4] = fmaf(xv[4], w1.x, v[4]); v[5] = fmaf(xv[5], w1.y, v[5]);
                            v[6] = fmaf(xv[6], w1.z, v[6]); v[7] = fmaf(xv[7], w1.w, v[7]);
                        }
                    }
#pragma unroll
                    for (int j = 0; j < 8; j++) v[j] = pro(v[j] + (dbias ? gcr_dn_ld(dbias, c0 + j) : 0.0f), n, c0 + j);
                    packed = gcr_dwpw_pack<T>(v);
                }
                *(uint4 *)&As[px * LD + g8] = packed;
            }
            __syncthreads();
            /* the 1x1 conv: this warp's 16 rows x BN / WN columns over the step's KC channels */
#pragma unroll 2
            for (int ks = 0; ks < KC / 16; ks++) {
                unsigned a[4];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                             : "r"(a_addr + ks * 32));
#pragma unroll
                for (int j = 0; j < NT; j++) {
                    unsigned b[2];
                    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                                 : "=r"(b[0]), "=r"(b[1])
                                 : "r"(b_addr + (j * 8 * LD + ks * 16) * 2));
                    gcr_dn_mma16816<T>(acc[j], a, b);
                }
            }
        }
        gcr_warp_epi16<NT>( /* a warp's own staging: no barrier (the next tile's first waits for the MMAs) */
            stage + wid * 16 * (NT * 8 + 8), acc,
            [&](int i, long long &idx, int &img) {
                const int rr = r0 + wm * 16 + i;
                if (rr >= M) return false;
                const int nn = rr / sp, rem = rr - nn * sp, oy = rem / OW, ox = rem - oy * OW;
                idx = nn * p.ys[0] + oy * p.ys[2] + ox * p.ys[3];
                img = nn;
                return true;
            },
            O - cb, cb, cb, p.ys[1], epi, epi8);
    }
#endif
}

/* grid: row tiles (capped at a few blocks per SM, which walk the rest), 256 threads,
 * GCR_DWPW_SMEM(BN, taps, kc) bytes of dynamic shared memory; BN a multiple of 16 up to 256, >= O */
#define GCR_DWPW_KERNEL(NAME, T, BN)                                                                       \
    extern "C" __global__ void __launch_bounds__(256, GCR_DWPW_MINB(BN))                                   \
        NAME(const gcr_dwpw_args p, const T *__restrict__ x, const T *__restrict__ dw,                     \
             const T *__restrict__ dbias, const T *__restrict__ w, const T *__restrict__ bias,             \
             T *__restrict__ out GCR_EXTRA_PARAMS)                                                         \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        extern __shared__ __align__(16) float gcr_dwpw_smem[];                                             \
        if (p.KH == 3 && p.KW == 3) gcr_dwpw_body<T, BN, 3>(p, x, dw, dbias, w, gcr_dwpw_smem, pro, epi, epi8); \
        else if (p.KH == 5 && p.KW == 5) gcr_dwpw_body<T, BN, 5>(p, x, dw, dbias, w, gcr_dwpw_smem, pro, epi, epi8); \
        else gcr_dwpw_body<T, BN, 0>(p, x, dw, dbias, w, gcr_dwpw_smem, pro, epi, epi8);                   \
    }

#endif /* GCR_DWPW_CUH */
