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
 * Block: 256 threads walking tiles (grid x: a few blocks per SM) of BM = GCR_DWPW_BM(BN) output
 * pixels of one image, (BM >> twl) rows by 1 << twl columns (the launcher picks the shape that
 * wastes least of the image): 128 up to BN 64, as 8 warps of 16 pixels each, so that a 16-channel
 * layer still gives every thread a depthwise item; 64 past it, as 4 x 2 warps, each half the
 * columns. Channels go kc at a time (p.kc, a multiple of 16). A step is a tile's kc channels:
 *   - its input halo ([hh * hw][kc], zeros in the padding) was copied by cp.async during the step
 *     before (two halo buffers), so the loads of x overlap the arithmetic;
 *   - the threads compute the depthwise outputs from the halo, 8 channels of R pixels along a row
 *     an item (gcr_dwpw_taps), into A ([BM][kc + 8]); a barrier; ldmatrix and mma.
 * The taps and 1x1 weights stay in shared memory for the block's life where all channels fit
 * (p.wc, whole steps, zeros past C), else they are loaded each step. The padded rows keep ldmatrix free of bank conflicts.
 * The accumulators leave through gcr_warp_epi16 (gemm.cuh), through a staging area of each warp's
 * own, which reuses A's shared memory: a step takes two barriers, and a tile's last step one more.
 * Where tiles are fewer than the SMs (small images, batch 1), p.ksplit blocks share a tile, each
 * taking a run of its channel steps: each stores its partial 1x1 sums through L2, and the last to
 * arrive (gcr_split_arrive, common.cuh) adds them in split order, so the result does not depend
 * on the order of arrival, and runs the epilogue.
 * Dynamic shared memory: GCR_DWPW_SMEM (abi.h). */
#ifndef GCR_DWPW_CUH
#define GCR_DWPW_CUH

#include "gemm.cuh"
#include "gemm_tc.cuh"

/* 8 values as 8 packed 16-bit elements */
template <typename T> __device__ __forceinline__ uint4 gcr_dwpw_pack(const float (&v)[8])
{
    unsigned short h[8];
#pragma unroll
    for (int j = 0; j < 8; j++) h[j] = gcr_dn_bits16(v[j], (T *)0);
    return make_uint4(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16, h[4] | (unsigned)h[5] << 16,
                      h[6] | (unsigned)h[7] << 16);
}

/* A walk over the items e = tid, tid + nt, ... of a [rows][cols][G] range (G <= nt, the block's
 * threads) without a division per item: (i, j, g) advance by the precomputed (di, dj, dg) of nt
 * items, with carries. */
struct gcr_dwpw_walk {
    int i, j, g, di, dj, dg;
    __device__ __forceinline__ gcr_dwpw_walk(int cols, int G, int nt = 256)
    {
        const int t = (int)threadIdx.x, a = t / G, d = nt / G;
        i = a / cols, j = a - i * cols, g = t - a * G;
        di = d / cols, dj = d - di * cols, dg = nt - d * G;
    }
    __device__ __forceinline__ void next(int cols, int G)
    {
        g += dg, j += dj, i += di;
        if (g >= G) g -= G, j++;
        if (j >= cols) j -= cols, i++;
    }
};

/* the halo of a step ([hh][hw][KC] at Hs) of the tile whose input corner is (iy0, ix0), channels
 * k0 ..: 16-byte cp.async copies where legal (zeros outside the input and past C, read from
 * nowhere), else plain loads; one commit group. xn: image n's x at channel k0. */
template <typename T>
__device__ __forceinline__ void gcr_dwpw_halo(const gcr_dwpw_args &p, const T *__restrict__ xn, const T *__restrict__ x,
                                              unsigned short *Hs, int iy0, int ix0, int kleft, gcr_dwpw_walk w)
{
    const int KC = (int)p.kc, G = KC / 8, HW = (int)p.hw, HH = (int)p.hh, xs2 = (int)p.xs[2], xs3 = (int)p.xs[3];
    for (; w.i < HH; w.next(HW, G)) {
        const int iy = iy0 + w.i, ix = ix0 + w.j, c = w.g * 8;
        const bool ok = (unsigned)iy < (unsigned)p.H && (unsigned)ix < (unsigned)p.W && c < kleft;
        const T *src = ok ? xn + (iy * xs2 + ix * xs3 + c) : x;
        unsigned short *dst = Hs + (w.i * HW + w.j) * KC + c;
        if (p.xvec) {
            gcr_tc_cp16(dst, src, ok);
        } else {
            float v[8];
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = ok ? gcr_dn_tof(src[j]) : 0.0f;
            *(uint4 *)dst = gcr_dwpw_pack<T>(v);
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

/* a tap's 8 channel weights (f32, 16-byte aligned) */
__device__ __forceinline__ void gcr_dwpw_w8(const float *w, float (&v)[8])
{
    const float4 a = *(const float4 *)w, b = *(const float4 *)(w + 4);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}

/* The depthwise sums of R outputs along a row, 8 channels, from the halo at h0 (the first output's
 * first tap). KS 3 or 5 with S 1 or 2 (no dilation): a tap row's weights are held in registers and
 * each of the row's (R - 1) * S + KS input columns is loaded and converted once for all R outputs.
 * KS 0: any taps, stride and dilation, R 1. R (1, 2 or 4, at most GCR_DWPW_RMAX) is chosen so
 * that a tile still has an item for each thread where it can. */
template <typename T, int KS, int S, int R>
__device__ __forceinline__ void gcr_dwpw_taps(const gcr_dwpw_args &p, const unsigned short *h0, const float *wt, int WC,
                                              float (&acc)[R][8])
{
    const int KC = (int)p.kc, HW = (int)p.hw;
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[r][j] = 0.0f;
    if (KS) {
        enum { K = KS ? KS : 1, NCOL = (R - 1) * S + K };
#pragma unroll
        for (int ky = 0; ky < K; ky++) {
            float wr[K][8];
#pragma unroll
            for (int kx = 0; kx < K; kx++) gcr_dwpw_w8(wt + (ky * K + kx) * WC, wr[kx]);
#pragma unroll
            for (int col = 0; col < NCOL; col++) {
                float xv[8];
                gcr_dn_ld16((const T *)(h0 + (ky * HW + col) * KC), xv);
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const int kx = col - r * S;
                    if (kx >= 0 && kx < K)
#pragma unroll
                        for (int j = 0; j < 8; j++) acc[r][j] = fmaf(xv[j], wr[kx][j], acc[r][j]);
                }
            }
        }
    } else {
        const int KH = (int)p.KH, KW = (int)p.KW, dh = (int)p.dh, dw = (int)p.dw;
        for (int ky = 0; ky < KH; ky++)
            for (int kx = 0; kx < KW; kx++) {
                float xv[8], wv[8];
                gcr_dn_ld16((const T *)(h0 + (ky * dh * HW + kx * dw) * KC), xv);
                gcr_dwpw_w8(wt + (ky * KW + kx) * WC, wv);
#pragma unroll
                for (int j = 0; j < 8; j++) acc[0][j] = fmaf(xv[j], wv[j], acc[0][j]);
            }
    }
}

/* KS, S, R: see gcr_dwpw_taps (the launcher names the variant) */
template <typename T, int BN, int KS, int S, int R, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_dwpw_body(const gcr_dwpw_args &p, const T *__restrict__ x, const T *__restrict__ dw,
                                              const T *__restrict__ dbias, const T *__restrict__ w, float *smem, Pro &pro,
                                              Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    /* 8 warps as WM (16 rows each) x WN (BN / WN columns each); R depthwise outputs an item */
    enum { BM = GCR_DWPW_BM(BN), WM = BM / 16, WN = 8 / WM, NT = BN / (8 * WN) };
    const int C = (int)p.C, O = (int)p.O, KC = (int)p.kc, LD = KC + 8, G = KC / 8, WC = (int)p.wc, LW = WC + 8;
    const int taps = (int)(p.KH * p.KW), KW = (int)p.KW, SH = S ? S : (int)p.sh, SW = S ? S : (int)p.sw;
    const int TWL = (int)p.twl, TW = 1 << TWL, TH = BM >> TWL, HW = (int)p.hw, HP = (int)p.hh * HW;
    const int tiles = (int)p.tiles, TX = (int)p.tiles_x, per = TX * (int)p.tiles_y, nk = (C + KC - 1) / KC;
    float *Wt = smem;                                     /* [taps][WC] */
    float *Db = Wt + taps * WC;                           /* [WC] */
    unsigned short *Bs = (unsigned short *)(Db + WC);     /* [BN][LW] */
    unsigned short *Hs = Bs + BN * LW;                    /* [2][HP][KC] */
    unsigned short *As = Hs + 2 * HP * KC;                /* [BM][LD] */
    float *stage = (float *)As;                           /* [8 warps][16][BN / WN + 8], after the MMAs */
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, wm = wid % WM, wn = wid / WM;
    const int OH = (int)p.OH, OW = (int)p.OW;
    const int cb = wn * (BN / WN); /* this warp's first column */
    const unsigned a_addr = (unsigned)__cvta_generic_to_shared(&As[(wm * 16 + (lane & 15)) * LD + (lane >> 4) * 8]);
    const unsigned b_addr = (unsigned)__cvta_generic_to_shared(&Bs[(cb + (lane & 7)) * LW + ((lane >> 3) & 1) * 8]);
    /* the taps, depthwise bias and 1x1 weights of channels k0 .. k0 + WC - 1 (0 past C) */
    auto weights = [&](int k0) {
        for (int e = tid; e < (taps + 1) * WC; e += 256) {
            const int tap = e / WC, c = k0 + e - tap * WC, ky = tap / KW, kx = tap - ky * KW;
            Wt[e] = c >= C ? 0.0f : tap < taps ? gcr_dn_ld(dw, c * p.ds[0] + ky * p.ds[2] + kx * p.ds[3])
                                  : dbias ? gcr_dn_ld(dbias, c) : 0.0f;
        }
        for (int e = tid; e < BN * (WC / 8); e += 256) {
            const int o = e / (WC / 8), kc = (e - o * (WC / 8)) * 8, c = k0 + kc;
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
            *(uint4 *)&Bs[o * LW + kc] = v;
        }
    };
    const bool resident = WC >= C; /* the weights of every channel are loaded once per block */
    if (resident) weights(0);
    const gcr_dwpw_walk hwalk(HW, G), dwalk(TW / R, G); /* over halo [hh][hw][G], items [TH][TW / R][G] */
    /* the block's steps: its items (blockIdx.x, + gridDim.x, ...; an item is a tile, or a split of
     * its channel chunks where p.ksplit > 1) by their chunks; step s + 1's halo is in flight while
     * step s computes. item(): image, output corner and chunks [klo, khi) of item w */
    const int NS = (int)p.ksplit, KCH = (int)p.kchunk, items = tiles * NS;
    auto item = [&](int wi, int &n, int &oy0, int &ox0, int &klo, int &khi) {
        const int t = wi / NS, sp = wi - t * NS;
        n = t / per;
        const int r = t - n * per, ty = r / TX;
        oy0 = ty * TH, ox0 = (r - ty * TX) * TW;
        klo = sp * KCH, khi = min(nk, klo + KCH);
    };
    auto halo = [&](int s, int n, int oy0, int ox0, int k0) {
        gcr_dwpw_halo<T>(p, x + n * p.xs[0] + k0, x, Hs + (s & 1) * HP * KC, oy0 * SH - (int)p.ph, ox0 * SW - (int)p.pw,
                         C - k0, hwalk);
    };
    int wi = (int)blockIdx.x, n, oy0, ox0, klo, khi; /* step s's item, its corner and chunks */
    if (wi >= items) return;
    item(wi, n, oy0, ox0, klo, khi);
    int kk = klo; /* step s's chunk */
    halo(0, n, oy0, ox0, kk * KC);
    float acc[NT][4];
    for (int s = 0;; s++) {
        const int k0 = kk * KC;
        int wi1 = wi, kk1 = kk + 1, n1 = n, oy1 = oy0, ox1 = ox0, klo1 = klo, khi1 = khi; /* step s + 1 */
        if (kk1 == khi) {
            wi1 += (int)gridDim.x;
            if (wi1 < items) item(wi1, n1, oy1, ox1, klo1, khi1), kk1 = klo1;
        }
        const bool more = wi1 < items;
        if (more) {
            halo(s + 1, n1, oy1, ox1, kk1 * KC);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads(); /* step s's halo is in; the last step's MMAs are done with A (and B) */
        if (!resident) {
            weights(k0);
            __syncthreads();
        }
        const int wk = resident ? k0 : 0; /* k0's column in Wt and Bs */
        if (kk == klo) {
#pragma unroll
            for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
        }
        /* the depthwise stage: item (row i, column group j, channel group g) is outputs (i, R j ..
         * R j + R - 1)'s channels k0 + 8 g .. + 7 (consecutive threads take consecutive channel
         * groups) */
        const unsigned short *H = Hs + (s & 1) * HP * KC;
        for (gcr_dwpw_walk it = dwalk; it.i < TH; it.next(TW / R, G)) {
            const int px = (it.i << TWL) + it.j * R, g8 = it.g * 8, oy = oy0 + it.i, ox = ox0 + it.j * R;
            float v[R][8];
            const bool live = oy < OH && ox < OW && k0 + g8 < C; /* C is a multiple of 8 */
            if (live) gcr_dwpw_taps<T, KS, S, R>(p, H + (it.i * SH * HW + it.j * R * SW) * KC + g8, Wt + wk + g8, WC, v);
#pragma unroll
            for (int r = 0; r < R; r++) {
                uint4 packed = make_uint4(0u, 0u, 0u, 0u);
                if (live && ox + r < OW) {
#pragma unroll
                    for (int j = 0; j < 8; j++) v[r][j] = pro(v[r][j] + Db[wk + g8 + j], n, k0 + g8 + j);
                    packed = gcr_dwpw_pack<T>(v[r]);
                }
                *(uint4 *)&As[(px + r) * LD + g8] = packed;
            }
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
                             : "r"(b_addr + (j * 8 * LW + wk + ks * 16) * 2));
                gcr_dn_mma16816<T>(acc[j], a, b);
            }
        }
        bool last = kk == khi - 1;
        if (last && NS > 1) { /* a split: its partial out through L2; the tile's last split sums them */
            float *part = p.part + (long long)wi * GCR_DWPW_PART(BN) + (wid * NT * 32 + lane) * 4;
#pragma unroll
            for (int j = 0; j < NT; j++) __stcg((float4 *)(part + j * 128), make_float4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]));
            const int t = wi / NS;
            last = gcr_split_arrive(p.sem, t, NS);
            if (last) {
                const float *sum = p.part + (long long)t * NS * GCR_DWPW_PART(BN) + (wid * NT * 32 + lane) * 4;
#pragma unroll
                for (int j = 0; j < NT; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
                for (int sp = 0; sp < NS; sp++)
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const float4 v = __ldcg((const float4 *)(sum + (long long)sp * GCR_DWPW_PART(BN) + j * 128));
                        acc[j][0] += v.x, acc[j][1] += v.y, acc[j][2] += v.z, acc[j][3] += v.w;
                    }
            }
        }
        if (last) {
            __syncthreads(); /* every warp is done with A, which the staging reuses */
            gcr_warp_epi16<NT>( /* a warp's own staging (the next step's first barrier waits for it) */
                stage + wid * 16 * (NT * 8 + 8), acc,
                [&](int i, long long &idx, int &img) {
                    const int px = wm * 16 + i, py = px >> TWL, oy = oy0 + py, ox = ox0 + px - (py << TWL);
                    if (oy >= OH || ox >= OW) return false;
                    idx = n * p.ys[0] + oy * p.ys[2] + ox * p.ys[3];
                    img = n;
                    return true;
                },
                O - cb, cb, cb, p.ys[1], epi, epi8);
        }
        if (!more) break;
        wi = wi1, kk = kk1, n = n1, oy0 = oy1, ox0 = ox1, klo = klo1, khi = khi1;
    }
#endif
}

/* grid: tiles (capped at a few blocks per SM, which walk the rest), 256 threads, GCR_DWPW_SMEM
 * bytes of dynamic shared memory; BN a multiple of 16 up to 256, >= O; KS, S, R as gcr_dwpw_taps */
#define GCR_DWPW_KERNEL(NAME, T, BN, KS, S, R)                                                              \
    extern "C" __global__ void __launch_bounds__(256, GCR_DWPW_MINB(BN))                                   \
        NAME(const gcr_dwpw_args p, const T *__restrict__ x, const T *__restrict__ dw,                     \
             const T *__restrict__ dbias, const T *__restrict__ w, const T *__restrict__ bias,             \
             T *__restrict__ out GCR_EXTRA_PARAMS)                                                         \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        extern __shared__ __align__(16) float gcr_dwpw_smem[];                                             \
        gcr_dwpw_body<T, BN, KS, S, R>(p, x, dw, dbias, w, gcr_dwpw_smem, pro, epi, epi8);                 \
    }

#endif /* GCR_DWPW_CUH */
