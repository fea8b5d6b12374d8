/* patch.cuh — the tensor-core conv for few input channels per group (an RGB stem: 3 channels into
 * 16-64, 3x3 or 7x7 taps, stride 2): gcr_patch{16,32,64}_{f16,bf16}. Same problem, args
 * (gcr_dense_args) and FUSION CONTRACT as gemm.cuh.
 *
 * Why a kernel of its own: a stem's taps overlap (a 7x7 stride-2 window shares most of its inputs
 * with its neighbours'), and with 3 channels a tap is 6 bytes, far from a 16-byte chunk. The
 * implicit GEMM (gemm_tc.cuh AT 4) gathers every tile element from global memory, about KH*KW /
 * (sh*sw) reads of each input; the direct kernel re-reads them per pixel too. Here each block
 * stages its output tile's receptive field once (the patch: GCR_PATCH_OH x GCR_PATCH_OW output
 * pixels, all C0 channels, zeros where taps fall in the padding, through the prologue), and
 * mma.sync m16n8k16 reads its A fragments straight from the patch: a kernel row's KW*C0
 * elements of one pixel are contiguous there, so k is ordered k = ky*RW + kx*C0 + c (RW: KW*C0
 * rounded up to even, so a fragment's pair of k never straddles two rows; KP: KH*RW rounded up
 * to the mma's 16), and a per-pair table gives each pair's patch offset and the mask that zeroes
 * its padding half. The weights, [BN][KP] with a row pitch of KP + 8 (the B fragments' 8 rows
 * land on distinct banks), stay in shared memory while the block walks its tiles (grid x: a few
 * blocks per SM, persistent; grid y: column tiles of BN; z: groups / batch dims).
 *
 * 4 warps; warp w multiplies output rows 2w and 2w+1 of the tile (two m16 tiles of 16 pixels) by
 * the BN columns (BN / 8 n8 tiles, their B fragments by ldmatrix). Its accumulators go through a
 * per-warp staging area so each lane stores 8 consecutive channels (GCR_EPILOGUE8) where the
 * output is channel-contiguous.
 *
 * PAIR: sw*C0 even, so every fragment pair is 4-byte aligned in the patch and loads as one word
 * (else two halves). Column dilation is 1 (the host's condition); row dilation any. Shared memory
 * (dynamic, sized by GCR_PATCH_SMEM on both sides, abi.h):
 *   B     [BN][KP + 8] 16-bit
 *   tab   [KP / 2] int2 {patch offset, mask}
 *   stage [4 warps][16][BN + 8] f32
 *   patch [GCR_PATCH_ROWS][GCR_PATCH_RS] 16-bit */
#ifndef GCR_PATCH_CUH
#define GCR_PATCH_CUH

#include "gemm.cuh"

template <typename T, int BN, bool PAIR, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_patch_body(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                               Pro &pro, Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    enum { NT = BN / 8, THREADS = 128, SS = BN + 8 };
    extern __shared__ __align__(16) unsigned char gcr_patch_smem[];
    const int KH = (int)p.KH, KW = (int)p.KW, C0 = (int)(p.K / (p.KH * p.KW));
    const int sh = (int)p.sh, sw = (int)p.sw, dh = (int)p.dh;
    const int RW = GCR_PATCH_RW(KW, C0), KP = GCR_PATCH_KP(KH, KW, C0), KPS = KP + 8;
    const int ROWS = GCR_PATCH_ROWS(KH, sh, dh), RS = GCR_PATCH_RS(KW, sw, C0);
    const int PCC = ((GCR_PATCH_OW - 1) * sw + KW) * C0; /* elements of a patch row that hold inputs */
    unsigned short *bs = (unsigned short *)gcr_patch_smem;
    int2 *tab = (int2 *)(bs + BN * KPS);
    float *stage = (float *)(tab + KP / 2);
    unsigned short *patch = (unsigned short *)(stage + 4 * 16 * SS);

    const int tid = threadIdx.x, wid = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
    const gcr_dn_blk blk = gcr_dn_block<0, BN>(p);
    x += blk.za;
    w += blk.zb;
    const int zo_o = gcr_dn_zo_o(p), N = (int)p.N, c0 = blk.c0;

    /* the block's weights, k ordered ky*RW + kx*C0 + c, zero past each row's KW*C0 and past KH*RW */
    for (int i = tid; i < BN * KP; i += THREADS) {
        const int n = i / KP, k = i - n * KP, ky = k / RW, j = k - ky * RW, kx = j / C0, c = j - kx * C0;
        unsigned short v = 0;
        if (ky < KH && kx < KW && c0 + n < N) v = w[(c0 + n) * p.ws[0] + c * p.ws[1] + ky * p.ws[2] + kx * p.ws[3]].u;
        bs[n * KPS + k] = v;
    }
    for (int i = tid; i < KP / 2; i += THREADS) {
        const int k = 2 * i, ky = k / RW, j = k - ky * RW;
        const bool in = ky < KH;
        const unsigned m = (j < KW * C0 ? 0xffffu : 0u) | (j + 1 < KW * C0 ? 0xffff0000u : 0u);
        tab[i] = make_int2(in ? ky * dh * RS + j : 0, in ? (int)m : 0);
    }

    const int OH = (int)p.OH, OW = (int)p.OW, H = (int)p.H, Wd = (int)p.W;
    const int tx = (OW + GCR_PATCH_OW - 1) / GCR_PATCH_OW, ty = (OH + GCR_PATCH_OH - 1) / GCR_PATCH_OH;
    const int images = (int)(p.M / ((long long)OH * OW)), tiles = images * ty * tx;
    /* this lane's A rows in the patch: m tile i is output row 2 * wid + i, its rows g and g + 8 the
     * tile's columns g and g + 8 */
    int ab[2][2];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) ab[i][h] = (2 * wid + i) * sh * RS + (g + 8 * h) * sw * C0;
    float *st = stage + wid * 16 * SS;
    /* B fragments by ldmatrix.x4: lane l addresses row l % 8 of matrix l / 8, which is n tile
     * (l / 16) of a pair, k half (l / 8) % 2 (H200, ResNet-50's stem at batch 128: 253 -> 220 us
     * against two 32-bit loads per fragment) */
    const unsigned brow = (unsigned)__cvta_generic_to_shared(bs + ((lane >> 4) * 8 + (lane & 7)) * KPS + ((lane >> 3) & 1) * 8);

    /* a tile's place: image n, its first output row and column */
    auto place = [&](int t, int &n, int &oy0, int &ox0) {
        n = t / (ty * tx);
        const int rt = t - n * (ty * tx), r = rt / tx;
        oy0 = r * GCR_PATCH_OH;
        ox0 = (rt - r * tx) * GCR_PATCH_OW;
    };
    /* Where every patch row has at most one element per thread and the patch at most PF rows (the
     * stems' 7x7 and 3x3 at stride 2: 21 and 17), each thread keeps one patch column: it issues the
     * loads of PB rows at once, then stores them, so a tile waits on ROWS / PB rounds of memory
     * latency instead of ROWS / 4 (H200, MobileNet-v3's stem at batch 128: 100 -> 72 us). Holding
     * the next tile's loads in registers across this tile's MMAs spilled instead (ResNet-50's stem
     * at batch 128: 250 -> 418 us). */
    enum { PF = 24, PB = 8 };
    const bool pf = PCC <= THREADS && ROWS <= PF;
    const int pcol = tid / C0, pch = tid - pcol * C0; /* this thread's patch column and channel (pf) */
    /* input element e (image n, channel c) into the patch at i: through the prologue where it is no
     * padding (padding stays 0) */
    auto put = [&](int i, unsigned short e, bool in, int n, int c) {
        if (!GCR_PROLOGUE_IDENTITY && in) {
            T h;
            h.u = e;
            e = gcr_dn_bits16(pro(gcr_dn_tof(h), n + blk.zn, c + blk.zc), (T *)0);
        }
        patch[i] = e;
    };

    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        int n, oy0, ox0;
        place(t, n, oy0, ox0);
        const int iy0 = oy0 * sh - (int)p.ph, ix0 = ox0 * sw - (int)p.pw;
        __syncthreads(); /* the last tile's fragments are read (and, first time, bs and tab written) */
        if (pf) {
            if (tid < PCC) {
                const int ix = ix0 + pcol;
                const bool cin = (unsigned)ix < (unsigned)Wd;
                const T *xc = x + n * p.xs[0] + pch * p.xs[1] + ix * p.xs[3];
#pragma unroll
                for (int r0 = 0; r0 < PF; r0 += PB) {
                    unsigned short v[PB];
#pragma unroll
                    for (int r = r0; r < r0 + PB; r++)
                        v[r - r0] = r < ROWS && cin && (unsigned)(iy0 + r) < (unsigned)H ? xc[(iy0 + r) * p.xs[2]].u
                                                                                        : (unsigned short)0;
#pragma unroll
                    for (int r = r0; r < r0 + PB; r++)
                        if (r < ROWS) put(r * RS + tid, v[r - r0], cin && (unsigned)(iy0 + r) < (unsigned)H, n, pch);
                }
            }
        } else {
            for (int e = tid; e < PCC; e += THREADS) {
                const int col = e / C0, c = e - col * C0, ix = ix0 + col;
                const bool cin = (unsigned)ix < (unsigned)Wd;
                const T *xc = x + n * p.xs[0] + c * p.xs[1] + ix * p.xs[3];
#pragma unroll 4
                for (int r = 0; r < ROWS; r++) {
                    const bool in = cin && (unsigned)(iy0 + r) < (unsigned)H;
                    put(r * RS + e, in ? xc[(iy0 + r) * p.xs[2]].u : (unsigned short)0, in, n, c);
                }
            }
        }
        __syncthreads();

        float acc[2][NT][4];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < NT; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;
#pragma unroll 1
        for (int s = 0; s < KP / 16; s++) {
            const int2 t0 = tab[s * 8 + q], t1 = tab[s * 8 + 4 + q];
            unsigned a[2][4];
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int f = 0; f < 4; f++) {
                    const int2 tt = f < 2 ? t0 : t1;
                    const int o = ab[i][f & 1] + tt.x;
                    unsigned v;
                    if (PAIR) v = *(const unsigned *)(patch + o);
                    else v = (unsigned)patch[o] | (unsigned)patch[o + 1] << 16;
                    a[i][f] = v & (unsigned)tt.y;
                }
#pragma unroll
            for (int j = 0; j < NT; j += 2) { /* n tiles j and j + 1: both halves of k of each, one ldmatrix */
                unsigned b[4];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                             : "r"(brow + (unsigned)((j * 8 * KPS + s * 16) * 2)));
                const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
                gcr_dn_mma16816<T>(acc[0][j], a[0], b0);
                gcr_dn_mma16816<T>(acc[1][j], a[1], b0);
                gcr_dn_mma16816<T>(acc[0][j + 1], a[0], b1);
                gcr_dn_mma16816<T>(acc[1][j + 1], a[1], b1);
            }
        }

        /* epilogue: each m tile's 16 pixels through the warp's staging area */
#pragma unroll
        for (int i = 0; i < 2; i++) {
            const int oy = oy0 + 2 * wid + i;
            gcr_warp_epi16<NT>(
                st, acc[i],
                [&](int px, long long &idx, int &img) {
                    const int ox = ox0 + px;
                    idx = blk.zo + n * p.ys[0] + oy * p.ys[2] + ox * p.ys[3];
                    img = n + blk.zn;
                    return oy < OH && ox < OW;
                },
                N - c0, c0, c0 + zo_o, p.ys[1], epi, epi8);
        }
    }
#endif
}

/* grid (blocks, ceil(N / BN), z), 128 threads, GCR_PATCH_SMEM bytes of dynamic shared memory,
 * GCR_PATCH_BLOCKS blocks per SM (abi.h) */
#define GCR_PATCH_KERNEL(NAME, T, BN)                                                                      \
    GCR_DN_ENTRY(NAME, T, 128, GCR_PATCH_BLOCKS,                                                           \
                 if (p.sw * (p.K / (p.KH * p.KW)) % 2 == 0) gcr_patch_body<T, BN, true>(p, x, w, pro, epi, epi8); \
                 else gcr_patch_body<T, BN, false>(p, x, w, pro, epi, epi8))

#endif /* GCR_PATCH_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_PATCH_KERNELS_DONE)
#define GCR_PATCH_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DN_WIDTHS(GCR_PATCH_KERNEL, gcr_patch, gcr_dn_f16, f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DN_WIDTHS(GCR_PATCH_KERNEL, gcr_patch, gcr_dn_bf16, bf16)
#endif
#endif
