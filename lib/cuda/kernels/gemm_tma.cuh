/* gemm_tma.cuh — the persistent Hopper tile with TMA loads (sm_90a): gcr_tma128_{f16,bf16}, for 1x1
 * convs without padding and GEMMs whose A rows are flat (gcr_dense_args.fa: row r at r * fa) and
 * whose operands are whole 16-byte chunks (the host's vec_a, vec_b), unsplit, z 1.
 *
 * Why: gemm_tc.cuh's Hopper tiles run a block per 128 x 128 output tile that works out every chunk's
 * address, copies by cp.async from all its threads, multiplies and stores in turn, two blocks a SM.
 * On MobileNet's short-K 1x1s that is issue-bound: ncu counted 14.2 M warp instructions on a layer
 * cuDNN's persistent TMA kernel ran in 1.8 M (bench/results/flat-rows-h200-2026-11-28.md). Here one
 * block a SM walks output tiles blockIdx.x, + gridDim.x, ... (row tiles outer, so the blocks at work
 * share A's rows in L2); warpgroup 0's first thread is the producer, copying each k tile's A and B
 * boxes (128 rows x 128 bytes, 128-byte swizzle) with one TMA instruction each into a ring of
 * GCR_TMA_ST stages; warpgroups 1 and 2 multiply rows 0-63 and 64-127 on wgmma straight from the
 * stages, release each stage through its empty barrier and run the epilogue, while the producer is
 * already loading the next tile's stages.
 *
 * Same problem, args and FUSION CONTRACT as gemm.cuh. The prologue runs in place on each landed A
 * stage (the consumer warpgroup's own 64 rows, in-bounds chunks only, so TMA's zero fill past M
 * and K stays 0) before its products; the epilogue stages the accumulators in Cs with
 * gemm_tc.cuh's permuted layout and walks them (gcr_tc_walk) 8 columns a thread for channel-
 * contiguous outputs (GCR_EPILOGUE8), element by element otherwise.
 *
 * Shared memory: dynamic GCR_TMA_SMEM (abi.h): the stages [ST][A 128 x 128 B | B 128 x 128 B] on
 * 1024 bytes (the swizzle's period), then Cs [128][BN + 4] f32; static: the barriers and the tile's
 * row offsets. The tensor maps are kernel parameters (__grid_constant__), encoded by the host for
 * this launch's x and w: graph_patch.c must not move those addresses, so this family's names do not
 * start with gcr_dense_ and a graph holding one re-captures on a rebind. */
#ifndef GCR_GEMM_TMA_CUH
#define GCR_GEMM_TMA_CUH

#include "gemm_tc.cuh"

/* CUtensorMap's 128 opaque bytes, filled by cuTensorMapEncodeTiled on the host */
struct __align__(64) gcr_tmap {
    unsigned long long v[16];
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void gcr_mb_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
/* the producer's arrival, announcing the bytes its copies will complete */
__device__ __forceinline__ void gcr_mb_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void gcr_mb_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* until the phase of parity `parity` has completed (a fresh barrier's phase "1" counts as done) */
__device__ __forceinline__ void gcr_mb_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nGCR_MB_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra GCR_MB_WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}
/* box (c0, c1) of tensor map m into shared dst, completing on bar */
__device__ __forceinline__ void gcr_tma_2d(unsigned dst, const gcr_tmap *m, int c0, int c1, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"(m), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
/* the consumers' barrier (warpgroups 1 and 2), apart from the producer's warpgroup */
__device__ __forceinline__ void gcr_tma_consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }
/* one consumer warpgroup's barrier (ids 2, 3) */
__device__ __forceinline__ void gcr_tma_wg_sync(int cw) { asm volatile("bar.sync %0, 128;\n" ::"r"(2 + cw) : "memory"); }
#endif

template <typename T, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_tma_body(const gcr_dense_args &p, const gcr_tmap &tma, const gcr_tmap &tmb, Pro &pro,
                                             Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    enum { BM = 128, BN = GCR_TMA_BN, BK = 64, ST = GCR_TMA_ST, LDC = BN + 4, NI = BN / 8 };
    enum { A_BYTES = BM * 128, STAGE = (BM + BN) * 128 };
    extern __shared__ __align__(16) unsigned char gcr_tma_dyn[]; /* GCR_TMA_SMEM bytes */
    unsigned char *raw = gcr_tma_dyn + ((1024 - (gcr_tc_smem(gcr_tma_dyn) & 1023)) & 1023);
    float *Cs = (float *)(raw + ST * STAGE); /* [BM][LDC] */
    __shared__ __align__(8) unsigned long long full[ST], empty[ST];
    __shared__ long long rowC[BM];
    __shared__ int rown[BM];
    const int t = threadIdx.x, warp = t >> 5, lane = t & 31, wg = warp >> 2;
    const int M = (int)p.M, N = (int)p.N, K = (int)p.K, sp = (int)(p.OH * p.OW);
    const int nt = (N + BN - 1) / BN, nk = (K + BK - 1) / BK, tiles = (M + BM - 1) / BM * nt;
    if (t == 0) {
        for (int s = 0; s < ST; s++) {
            gcr_mb_init(gcr_tc_smem(&full[s]), 1);  /* the producer's expect_tx */
            gcr_mb_init(gcr_tc_smem(&empty[s]), 8); /* each consumer warp's release */
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) { /* the producer: one thread; no __syncthreads after this point */
        if (t != 0) return;
        int s = 0;
        unsigned ph = 0;
        for (int tile = (int)blockIdx.x; tile < tiles; tile += (int)gridDim.x) {
            const int r0 = tile / nt * BM, c0 = tile % nt * BN;
            for (int kt = 0; kt < nk; kt++) {
                gcr_mb_wait(gcr_tc_smem(&empty[s]), ph ^ 1);
                const unsigned bar = gcr_tc_smem(&full[s]), st = gcr_tc_smem(raw + s * STAGE);
                gcr_mb_expect(bar, STAGE);
                gcr_tma_2d(st, &tma, kt * BK, r0, bar);
                gcr_tma_2d(st + A_BYTES, &tmb, kt * BK, c0, bar);
                if (++s == ST) {
                    s = 0;
                    ph ^= 1;
                }
            }
        }
        return;
    }

    const int cw = wg - 1, ct = t - 128, w4 = warp & 3, g = lane >> 2, q2 = (lane & 3) * 2;
    const bool rows_fast = p.ys[1] != 1;
    /* gemm_tc.cuh's staging layout: runs past the fourth of each 8 columns with their halves swapped */
    auto col = [&](int c) { return rows_fast ? c : c ^ ((c >> 3) & 4); };
    const int ldc = rows_fast ? BN + 1 : LDC;
    float acc[NI][4];
    int s = 0;
    unsigned ph = 0;
    for (int tile = (int)blockIdx.x; tile < tiles; tile += (int)gridDim.x) {
        const int r0 = tile / nt * BM, c0 = tile % nt * BN;
#pragma unroll
        for (int j = 0; j < NI; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
        for (int kt = 0; kt < nk; kt++) {
            gcr_mb_wait(gcr_tc_smem(&full[s]), ph);
            unsigned char *st = raw + s * STAGE;
            if (!GCR_PROLOGUE_IDENTITY) { /* this warpgroup's 64 rows in place: chunk at place q of row
                                             rr holds k chunk q ^ (rr % 8) (the swizzle) */
                for (int e = ct - cw * 128; e < 64 * 8; e += 128) {
                    const int rr = cw * 64 + (e >> 3), q = e & 7, r = r0 + rr, k = kt * BK + ((q ^ (rr & 7)) << 3);
                    if (r >= M || k >= K) continue;
                    uint4 *c = (uint4 *)(st + rr * 128 + q * 16);
                    *c = gcr_dn_pro8<T>(*c, pro, (int)gcr_div((unsigned)r, p.rdiv_m[0], p.rdiv_s[0]), k);
                }
                gcr_wg_proxy_fence();
                gcr_tma_wg_sync(cw);
            }
            const unsigned a0 = gcr_tc_smem(st + cw * 64 * 128), b0 = gcr_tc_smem(st + A_BYTES);
            gcr_wg_fence_acc(acc);
            gcr_wg_begin();
#pragma unroll
            for (int kk = 0; kk < BK; kk += 16) /* a k step is 32 bytes further along the swizzled rows */
                gcr_wg_mma<T, NI>(acc, gcr_wg_desc(a0 + kk * 2), gcr_wg_desc(b0 + kk * 2));
            gcr_wg_end();
            gcr_wg_fence_acc(acc);
            if (lane == 0) gcr_mb_arrive(gcr_tc_smem(&empty[s])); /* this warp is done with stage s */
            if (++s == ST) {
                s = 0;
                ph ^= 1;
            }
        }
        gcr_tma_consumers_sync(); /* the previous tile's walk is done with Cs and the rows */
        gcr_tc_set_rows(p, sp, M, r0, BM, ct, 256, rowC, rown);
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float *cr = Cs + (cw * 64 + w4 * 16 + g + h * 8) * ldc + col(j * 8 + q2);
                cr[0] = acc[j][h * 2];
                cr[1] = acc[j][h * 2 + 1];
            }
        gcr_tma_consumers_sync();
        auto g1 = [&](int r, int c) { return Cs[r * ldc + col(c)]; };
        auto g8 = [&](int r, int c, float (&v)[8]) { gcr_tc_get8<true>(Cs + r * ldc, c, v); };
        auto s1 = [&](float v, int r, int c) { epi(v, rown[r], c0 + c, rowC[r] + (long long)(c0 + c) * p.ys[1]); };
        auto s8 = [&](const float *v, int r, int c) { epi8(v, rown[r], c0 + c, rowC[r] + c0 + c); };
        gcr_tc_walk<256>(ct, min(BM, M - r0), min(BN, N - c0), rows_fast, g1, g8, s1, s8);
    }
#else
    (void)p; (void)tma; (void)tmb; (void)pro; (void)epi; (void)epi8;
    __trap(); /* built for another target: the host offers this tile only where programs are sm_90a */
#endif
}

/* grid (blocks, 1, 1): at most one a SM and no more than the tiles; GCR_TMA_THREADS threads,
 * GCR_TMA_SMEM bytes of dynamic shared memory (abi.h) */
#define GCR_TMA_KERNEL(NAME, T)                                                                            \
    extern "C" __global__ void __launch_bounds__(GCR_TMA_THREADS, 1)                                       \
        NAME(const gcr_dense_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out, \
             const T *__restrict__ bias, const __grid_constant__ gcr_tmap tma,                             \
             const __grid_constant__ gcr_tmap tmb GCR_EXTRA_PARAMS)                                        \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        (void)x;                                                                                           \
        (void)w;                                                                                           \
        gcr_tma_body<T>(p, tma, tmb, pro, epi, epi8);                                                      \
    }

#endif /* GCR_GEMM_TMA_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_GEMM_TMA_KERNELS_DONE)
#define GCR_GEMM_TMA_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_TMA_KERNEL(gcr_tma128_f16, gcr_dn_f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_TMA_KERNEL(gcr_tma128_bf16, gcr_dn_bf16)
#endif
#endif
