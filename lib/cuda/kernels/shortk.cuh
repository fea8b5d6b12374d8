/* shortk.cuh — the streaming tensor-core GEMM for reductions of at most 32 (the 1x1 convs of 16-24
 * channels into 16-72 of a MobileNet's first blocks): gcr_shortk{16,32,64}_{f16,bf16}. Same problem,
 * args (gcr_dense_args) and FUSION CONTRACT as gemm.cuh, in the k-contiguous layout of gemm_tc.cuh's
 * AT 0 (1x1 taps, no padding, 16-byte aligned rows of x and of w; the host's vec_a and vec_b).
 *
 * Why a kernel of its own: with K <= 32 a row of A is at most 64 bytes and its output row up to 4x
 * longer, so the layer is a stream of loads and stores with one or two mma k steps between them.
 * The shared-memory tiles stage A through a pipeline built for long reductions, half of a 64-byte
 * k tile empty at K 16, and a block loads, multiplies and stores in turn. Here the weights live in
 * registers (B fragments of the whole reduction, loaded once per warp), each warp loads A
 * fragments straight from global memory for MT m16 tiles at a time (64 rows at K 16, 32 at K 32)
 * and issues the next rows' loads before these rows' MMAs and stores, so each warp keeps a load in
 * flight while it stores; the accumulators leave through gcr_warp_epi16 (8 channels a lane).
 *
 * 8 warps, each walking its own row groups (grid x: a few blocks per SM, persistent; grid y: column
 * tiles of BN; z: groups / batch dims). KS: k steps of 16 (1 for K <= 16, 2 for K <= 32). Dynamic
 * shared memory: the staging areas, [8 warps][16][BN + 8] f32 (GCR_SHORTK_SMEM, abi.h). */
#ifndef GCR_SHORTK_CUH
#define GCR_SHORTK_CUH

#include "gemm.cuh"

template <typename T, int BN, int KS, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_shortk_body(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                                Pro &pro, Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    enum { NT = BN / 8, MT = 4 / KS, WARPS = 8, SS = BN + 8, ROWS = 16 * MT };
    extern __shared__ __align__(16) float gcr_shortk_stage[]; /* GCR_SHORTK_SMEM(BN) bytes */
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    const gcr_dn_blk blk = gcr_dn_block<0, BN>(p);
    x += blk.za;
    w += blk.zb;
    const int M = (int)p.M, N = (int)p.N, K = (int)p.K, c0 = blk.c0, zo_o = gcr_dn_zo_o(p), sp = (int)(p.OH * p.OW);
    float *st = gcr_shortk_stage + wid * 16 * SS;

    /* the weights as B fragments: n tile j's column c0 + 8j + g, k = 16ks + 2q (+ 8), 0 past N or K */
    unsigned b[KS][NT][2];
#pragma unroll
    for (int ks = 0; ks < KS; ks++)
#pragma unroll
        for (int j = 0; j < NT; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int col = c0 + j * 8 + g, k = ks * 16 + 2 * q + 8 * h;
                unsigned v = 0;
                if (col < N && k < K) v = *(const unsigned *)(w + col * p.ws[0] + k); /* K is a multiple of 8 */
                b[ks][j][h] = v;
            }

    /* the A fragments of the MT m tiles from row r0: lane rows g and g + 8, k = 16ks + 2q (+ 8),
     * through the prologue, 0 past M or K */
    auto load = [&](int r0, unsigned (&a)[MT][KS][4]) {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = r0 + mt * 16 + g + 8 * h;
                int n = 0;
                const long long o = r < M ? gcr_dn_row_x(p, sp, r, n) : 0;
#pragma unroll
                for (int ks = 0; ks < KS; ks++)
#pragma unroll
                    for (int kh = 0; kh < 2; kh++) {
                        const int k = ks * 16 + 2 * q + 8 * kh;
                        unsigned v = r < M && k < K ? *(const unsigned *)(x + o + k) : 0u;
                        if (!GCR_PROLOGUE_IDENTITY && r < M && k < K) {
                            T lo, hi;
                            lo.u = (unsigned short)v;
                            hi.u = (unsigned short)(v >> 16);
                            v = (unsigned)gcr_dn_bits16(pro(gcr_dn_tof(lo), n + blk.zn, k + blk.zc), (T *)0) |
                                (unsigned)gcr_dn_bits16(pro(gcr_dn_tof(hi), n + blk.zn, k + 1 + blk.zc), (T *)0) << 16;
                        }
                        a[mt][ks][h + 2 * kh] = v;
                    }
            }
    };

    const int step = (int)gridDim.x * WARPS * ROWS;
    unsigned a[MT][KS][4], an[MT][KS][4];
    int r0 = ((int)blockIdx.x * WARPS + wid) * ROWS;
    if (r0 < M) load(r0, a);
    for (; r0 < M; r0 += step) {
        if (r0 + step < M) load(r0 + step, an); /* in flight through this group's MMAs and stores */
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const int rt = r0 + mt * 16;
            if (rt >= M) break;
            float acc[NT][4];
#pragma unroll
            for (int j = 0; j < NT; j++) {
                acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
#pragma unroll
                for (int ks = 0; ks < KS; ks++) gcr_dn_mma16816<T>(acc[j], a[mt][ks], b[ks][j]);
            }
            gcr_warp_epi16<NT>(
                st, acc,
                [&](int i, long long &idx, int &img) {
                    const int r = rt + i;
                    if (r >= M) return false;
                    int n;
                    idx = blk.zo + gcr_dn_row_y(p, sp, r, n);
                    img = n + blk.zn;
                    return true;
                },
                N - c0, c0, c0 + zo_o, p.ys[1], epi, epi8);
        }
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int ks = 0; ks < KS; ks++)
#pragma unroll
                for (int f = 0; f < 4; f++) a[mt][ks][f] = an[mt][ks][f];
    }
#endif
}

/* grid (blocks, ceil(N / BN), z), 256 threads, GCR_SHORTK_SMEM(BN) bytes of dynamic shared memory,
 * GCR_SHORTK_BLOCKS blocks per SM (abi.h) */
#define GCR_SHORTK_KERNEL(NAME, T, BN)                                                                     \
    GCR_DN_ENTRY(NAME, T, 256, GCR_SHORTK_BLOCKS,                                                          \
                 if (p.K <= 16) gcr_shortk_body<T, BN, 1>(p, x, w, pro, epi, epi8);                        \
                 else gcr_shortk_body<T, BN, 2>(p, x, w, pro, epi, epi8))

#endif /* GCR_SHORTK_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_SHORTK_KERNELS_DONE)
#define GCR_SHORTK_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DN_WIDTHS(GCR_SHORTK_KERNEL, gcr_shortk, gcr_dn_f16, f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DN_WIDTHS(GCR_SHORTK_KERNEL, gcr_shortk, gcr_dn_bf16, bf16)
#endif
#endif
