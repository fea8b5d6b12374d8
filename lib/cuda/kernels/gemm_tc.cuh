/* gemm_tc.cuh — the dense engine's streaming tensor-core tile (f16/bf16, sm_80+) for the layouts
 * where every operand chunk is 16 contiguous, aligned bytes: 1x1 convs with no padding and
 * matmul/linear whose weights are k-contiguous. At MobileNet sizes these GEMMs are memory-bound
 * (K, N <= 960), so the point is to stream A and the output at full bandwidth: cp.async copies
 * global -> shared with no register round trip (2-3 stages in flight), ldmatrix feeds mma.sync
 * m16n8k16, and a block covers up to 128 output columns so A is read once for most layers.
 *
 * Same problem, args (gcr_dense_args) and FUSION CONTRACT as gemm.cuh (read its top comment): the
 * prologue runs on each thread's own freshly landed chunks in shared memory (rounded to T, padding
 * left 0) before the block reads them; the epilogue runs once per output element from a staged
 * accumulator chunk, stores running along the output's contiguous dim (8 consecutive channels a
 * call, GCR_EPILOGUE8, for channel-contiguous outputs outside split-K).
 *
 * A layouts (AT): 0 k-contiguous rows (NHWC conv, row-major matmul): A(r, k) at rowA(r) + k, with
 *   rowA decoded as in gemm.cuh; 1 pixel-contiguous (NCHW 1x1 stride-1 conv with dense spatial
 *   dims and H*W a multiple of 8): A(r, k) at n*xs[0] + k*xs[1] + pix, 8 pixels of one image per
 *   chunk, loaded [k][m] and transposed by ldmatrix.trans; 2 any other 1x1 no-padding layout (NCHW
 *   with H*W not a multiple of 8, strided or sliced inputs): A element by element through
 *   registers (each thread one row, consecutive threads consecutive rows, so pixel-contiguous
 *   inputs coalesce), the next tile's loads in flight during this tile's math, stored [k][m].
 *   B is always w[col*ws[0] + k] by cp.async.
 *   3 implicit GEMM for any KH x KW, stride, padding, dilation (and groups, through z): channels-
 *   last x (NHWC, C = K / (KH*KW) channels per group, C a multiple of a chunk) and channels-last
 *   weights (OHWI), with k ordered tap-major, k = (ky*KW + kx)*C + c, so every 16-byte chunk is
 *   EPC channels of one tap: A(r, k) at x[n, iy, ix, c..c+EPC) with iy = oy*sh - ph + ky*dh (the
 *   chunk is zero-filled by cp.async when the tap falls in the padding), B at w[col, ky, kx, c..].
 *   Each thread's chunks share one k per tile (its t % (BK/EPC)), so the tap decode is one
 *   division per tile per thread.
 *   4 implicit GEMM for convs with fewer channels per group than a chunk holds (an RGB stem: C 3):
 *   k runs over kernel rows, k = ky*RW + kx*C + c, each row's KW*C elements padded to RW, a whole
 *   number of chunks (K' = KH*RW; the padding's products are zeros): a 7x7 RGB stem's K' is 168,
 *   where padding every tap to a chunk made it 392 (2.3x the MMA work). Chunks are gathered
 *   element by element (any strides, any alignment) through registers for both A and B, the next
 *   tile's in flight while this tile's MMAs run (as AT 2's), the prologue applied as they are
 *   gathered.
 * The host (lib/cuda/dense.c) checks every alignment and layout condition before picking these. Rows
 * and taps are decoded with the host's magic dividers (p.rdiv_m / p.rdiv_s), not integer divisions:
 * on a short-K tile the decode was a large share of the instructions.
 * Row streams (PS, AT 0, 32 and 64 wide): a grid of a few blocks per SM, each walking row tiles
 * blockIdx.x, + gridDim.x, ... with its loads running over the k tiles of one row tile after another,
 * so the next tile's operands are in flight through this one's epilogue (staged in dynamic shared
 * memory of its own); for the memory-bound short-K 1x1s, where a block per tile loads, multiplies
 * and stores in turn.
 * Split-K (p.ksplit > 1, the SK tiles, 32, 64 and 128 wide): where the output tiles are fewer than
 * the SMs (batch 1, the 7x7 layers), ksplit blocks share each tile, each reducing a contiguous run of
 * k tiles; each writes its partial tile from the epilogue's staged chunks (so no accumulator lives
 * past its pass), they meet in gcr_split_arrive (common.cuh), and the last to arrive sums the f32
 * partials in split order inside the same epilogue walk as an unsplit tile (8-column runs
 * included), so fused epilogues apply unchanged and the result does not depend on block order.
 * TF32 (f32 operands, AT 0 and 3, opt-in: knobs.tf32): the same tile in bytes. A 16-byte chunk is 4
 * floats instead of 8 halves, so BK is 16 elements instead of 32 and each k step of an mma is 8
 * (m16n8k8.tf32) instead of 16; the ldmatrix addresses, fragment registers and accumulator layout
 * are byte-for-byte those of the 16-bit tile (a 32-bit element is a pair of b16 lanes), so one body
 * serves both. Operands are rounded to TF32 (cvt.rna) after ldmatrix, as cuBLAS/cuDNN do.
 * Kernels: gcr_dense_tc{128,64,32}[n|e|k]_{f16,bf16}: BM 128 x BN 128/64/32, n = AT 1, e = AT 2,
 * k = AT 3; gcr_dense_tc{128,64,32}[k]_tf32 (f32 programs built with GCR_TF32 defined); the split-K
 * tiles gcr_dense_tc{128,64,32}[k]s_{f16,bf16,tf32} (AT 0 and 3); the deep-pipeline tiles
 * gcr_dense_tc{128,64}[k]d_{f16,bf16,tf32} (AT 0 and 3, dynamic shared memory); the small-channel
 * tiles gcr_dense_tc{128,64,32}c_{f16,bf16,tf32} (AT 4); the row-stream tiles
 * gcr_dense_tc{64,32}p_{f16,bf16,tf32} (AT 0); the Hopper tiles gcr_dense_tc{128,64}[k]w[s]_{f16,bf16,tf32}
 * (AT 0 and 3, unsplit and split-K, wgmma: built for sm_90a only, a trap elsewhere). */
#ifndef GCR_GEMM_TC_CUH
#define GCR_GEMM_TC_CUH

#include "gemm.cuh"

/* 8 warps as WM x WN; 64 bytes of k per tile (BK 32 halves or 16 floats), 128 on the Hopper tiles
 * (WG); ST stages of shared operand tiles */
template <int BM_, int BN_, int WM_, int WN_, int ST_, int AT_, int MINB_, int SK_ = 0, int DYN_ = 0, int PS_ = 0,
          int WG_ = 0>
struct gcr_tc_cfg {
    enum { BM = BM_, BN = BN_, BK_BYTES = WG_ ? 128 : 64, WM = WM_, WN = WN_, ST = ST_, AT = AT_, MINB = MINB_, SK = SK_,
           DYN = DYN_, PS = PS_, WG = WG_, THREADS = 256 };
};

/* shared-memory element of the tile: the operand's bits (16-bit types) or a float (TF32) */
template <typename T> struct gcr_tc_elem { typedef unsigned short t; };
template <> struct gcr_tc_elem<float> { typedef float t; };

/* a 16-byte chunk of A through the prologue: 8 halves or 4 floats, element j is channel c + j */
template <typename T, class Pro> __device__ __forceinline__ uint4 gcr_tc_pro_chunk(uint4 q, Pro &pro, int n, int c)
{
    if constexpr (sizeof(typename gcr_tc_elem<T>::t) == 4) {
        union { uint4 q; float f[4]; } u;
        u.q = q;
#pragma unroll
        for (int j = 0; j < 4; j++) u.f[j] = pro(u.f[j], n, c + j);
        return u.q;
    } else {
        return gcr_dn_pro8<T>(q, pro, n, c);
    }
}

/* AT 4: the chunk of kernel-row elements j0 .. j0 + EPC - 1, element j = kx * C0 + c (input column
 * kx, channel c) at q[kx * sx + c * sc]; 0 where !ok, past the row's KW * C0 elements, or where the
 * column x0 + kx * xstep falls outside [0, W) (the padding); through the prologue when pre (image
 * img, channel zc + c). Element by element: any strides, any alignment; offsets within a kernel
 * row fit an int (the host checks). */
template <typename T, class Pro>
__device__ __forceinline__ uint4 gcr_tc_row_gather(const T *q, bool ok, int j0, int C0, int KW, int x0, int xstep, int W,
                                                   int sx, int sc, Pro &pro, bool pre, int img, int zc)
{
    enum { F32 = sizeof(typename gcr_tc_elem<T>::t) == 4, EPC = F32 ? 4 : 8 };
    int kx = j0 / C0, c = j0 - kx * C0;
    int e = kx * sx + c * sc; /* element j's offset, stepped along (read only when in) */
    union { uint4 q; float f[4]; unsigned short h[8]; } u;
#pragma unroll
    for (int j = 0; j < EPC; j++) {
        const bool in = ok && kx < KW && (unsigned)(x0 + kx * xstep) < (unsigned)W;
        if constexpr (F32) {
            const float v = in ? gcr_dn_tof(q[e]) : 0.0f;
            u.f[j] = in && pre ? pro(v, img, zc + c) : v;
        } else {
            unsigned short v = in ? q[e].u : (unsigned short)0;
            if (in && pre) v = gcr_dn_bits16(pro(gcr_dn_tof(q[e]), img, zc + c), (T *)0);
            u.h[j] = v;
        }
        e += sc;
        if (++c == C0) { /* the next input column */
            c = 0;
            kx++;
            e += sx - C0 * sc;
        }
    }
    return u.q;
}

/* round a register's float to TF32 (nearest, ties away), as the mma's operand */
__device__ __forceinline__ unsigned gcr_tc_tf32(unsigned v)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(v)));
    return r;
}
/* MINB, blocks per SM the register budget must allow: a short-K layer (MobileNet's K 16-24 at
 * batch 128) runs one k tile per block, so its loads, mma and stores barely overlap inside a block
 * and more resident blocks hide some latency. 4 x 64 / 3 x 85 registers fit the 32 / 64 wide
 * tiles without spills; the 128 tile keeps its 128 (GCR_TC_MINB=2 restores 2 everywhere).
 * Measured on an H100, f16 b128: b2.ex (tc64) 351 -> 295 us; the tc32 layers unchanged. */
#ifndef GCR_TC_MINB
#define GCR_TC_MINB 4
#endif
#define GCR_TC_MB(n) (GCR_TC_MINB < (n) ? GCR_TC_MINB : (n))
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 0, 2> gcr_cfg_tc128;  /* warp tile 64x32 */
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 0, GCR_TC_MB(3)> gcr_cfg_tc64;    /* 32x32 */
typedef gcr_tc_cfg<128, 32, 4, 2, 3, 0, GCR_TC_MB(4)> gcr_cfg_tc32;    /* 32x16 */
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 1, 2> gcr_cfg_tc128n;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 1, GCR_TC_MB(3)> gcr_cfg_tc64n;
typedef gcr_tc_cfg<128, 32, 4, 2, 3, 1, GCR_TC_MB(4)> gcr_cfg_tc32n;
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 2, 2> gcr_cfg_tc128e;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 2, GCR_TC_MB(3)> gcr_cfg_tc64e;
typedef gcr_tc_cfg<128, 32, 4, 2, 3, 2, GCR_TC_MB(4)> gcr_cfg_tc32e;
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 3, 2> gcr_cfg_tc128k;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 3, GCR_TC_MB(3)> gcr_cfg_tc64k;
typedef gcr_tc_cfg<128, 32, 4, 2, 3, 3, GCR_TC_MB(4)> gcr_cfg_tc32k;
/* split-K (SK 1): kernels of their own, so the unsplit tiles carry no split code; 32, 64 and 128
 * wide, the partials written from the epilogue's staged chunks (no accumulator outlives its pass).
 * The 32-wide ones (batch 1's long reductions) keep GCR_TC_SK_ST stages in dynamic shared memory,
 * which the host sizes by GCR_TC_STAGE_BYTES. */
typedef gcr_tc_cfg<128, 32, 4, 2, GCR_TC_SK_ST, 0, GCR_TC_MB(3), 1, 1> gcr_cfg_tc32s;
typedef gcr_tc_cfg<128, 32, 4, 2, GCR_TC_SK_ST, 3, GCR_TC_MB(3), 1, 1> gcr_cfg_tc32ks;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 0, 2, 1> gcr_cfg_tc64s;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 3, 2, 1> gcr_cfg_tc64ks;
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 0, 2, 1> gcr_cfg_tc128s;
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 3, 2, 1> gcr_cfg_tc128ks;
/* small-channel implicit GEMM (AT 4: stems) */
typedef gcr_tc_cfg<128, 128, 2, 4, 2, 4, 2> gcr_cfg_tc128c;
typedef gcr_tc_cfg<128, 64, 4, 2, 3, 4, GCR_TC_MB(2)> gcr_cfg_tc64c;
typedef gcr_tc_cfg<128, 32, 4, 2, 3, 4, GCR_TC_MB(3)> gcr_cfg_tc32c;
/* deep pipelines (DYN 1): GCR_TC_DEEP_ST stages of operand tiles in dynamic shared memory (80 KB
 * for 128 x 128 at 4 stages, past the 48 KB of static shared memory that keeps the 128-wide tiles
 * above at 2 stages), so more k tiles are in flight while one is multiplied; k-contiguous (d) and
 * implicit-GEMM (kd) layouts. The host sizes the launch with GCR_TC_DEEP_ST and GCR_TC_STAGE_BYTES
 * (abi.h). */
typedef gcr_tc_cfg<128, 128, 2, 4, GCR_TC_DEEP_ST, 0, 2, 0, 1> gcr_cfg_tc128d;
typedef gcr_tc_cfg<128, 64, 4, 2, GCR_TC_DEEP_ST, 0, GCR_TC_MB(3), 0, 1> gcr_cfg_tc64d;
typedef gcr_tc_cfg<128, 128, 2, 4, GCR_TC_DEEP_ST, 3, 2, 0, 1> gcr_cfg_tc128kd;
typedef gcr_tc_cfg<128, 64, 4, 2, GCR_TC_DEEP_ST, 3, GCR_TC_MB(3), 0, 1> gcr_cfg_tc64kd;
/* row streams (PS 1, k-contiguous A): the grid holds GCR_TC_PS_BLOCKS blocks per SM at most and
 * each block walks the row tiles blockIdx.x, + gridDim.x, ...; the next tile's operands load while
 * this one's MMAs and epilogue run, where a grid of a block per tile loads, multiplies and stores in
 * turn with little in flight. For the short-K, memory-bound 1x1s (MobileNet's at batch 32-128: one
 * or two k tiles a tile). Dynamic shared memory (GCR_TC_PS_SMEM): the stages, then the whole tile's
 * accumulators, staged at once so they die before the epilogue's registers are needed. */
typedef gcr_tc_cfg<128, 32, 4, 2, GCR_TC_PS_ST, 0, GCR_TC_PS_BLOCKS(32), 0, 1, 1> gcr_cfg_tc32p;
typedef gcr_tc_cfg<128, 64, 4, 2, GCR_TC_PS_ST, 0, GCR_TC_PS_BLOCKS(64), 0, 1, 1> gcr_cfg_tc64p;
/* Hopper tiles (WG 1, sm_90a): the 128 x 128 and 128 x 64 tiles' products on wgmma instead of
 * ldmatrix and mma.sync. Two warpgroups each multiply 64 rows by the BN columns (m64n<BN>k16)
 * straight from shared memory, whose A and B tiles are 128-byte rows swizzled in 16-byte chunks
 * (chunk c of row r at c ^ (r % 8)), as the wgmma descriptors' 128-byte swizzle reads them; the
 * same cp.async loads, taps, prologue and epilogue as the tiles above. A k step's products are
 * issued before the next stage's loads and waited for before the next barrier. Warp w's
 * accumulators are rows 16w .. 16w + 15 of the tile in the mma.sync fragment order (WM 8 x WN 1, a
 * 16 x BN warp tile), so the epilogue's staging is the same code. k-contiguous (w) and
 * implicit-GEMM (kw) layouts, f16, bf16 and TF32 (m64n<BN>k8, operands rounded in shared memory),
 * unsplit and split along k (ws, kws: p.kchunk counts their 128-byte k tiles). */
typedef gcr_tc_cfg<128, 128, 8, 1, GCR_TC_WG_ST, 0, 2, 0, 1, 0, 1> gcr_cfg_tc128w;
typedef gcr_tc_cfg<128, 128, 8, 1, GCR_TC_WG_ST, 3, 2, 0, 1, 0, 1> gcr_cfg_tc128kw;
typedef gcr_tc_cfg<128, 128, 8, 1, GCR_TC_WG_ST, 0, 2, 1, 1, 0, 1> gcr_cfg_tc128ws;
typedef gcr_tc_cfg<128, 128, 8, 1, GCR_TC_WG_ST, 3, 2, 1, 1, 0, 1> gcr_cfg_tc128kws;
typedef gcr_tc_cfg<128, 64, 8, 1, GCR_TC_WG_ST, 0, 2, 0, 1, 0, 1> gcr_cfg_tc64w;
typedef gcr_tc_cfg<128, 64, 8, 1, GCR_TC_WG_ST, 3, 2, 0, 1, 0, 1> gcr_cfg_tc64kw;
typedef gcr_tc_cfg<128, 64, 8, 1, GCR_TC_WG_ST, 0, 2, 1, 1, 0, 1> gcr_cfg_tc64ws;
typedef gcr_tc_cfg<128, 64, 8, 1, GCR_TC_WG_ST, 3, 2, 1, 1, 0, 1> gcr_cfg_tc64kws;

/* f(i, j, q) for each of a thread's MI x NI x 4 accumulators, unrolled */
template <int MI, int NI, class F> __device__ __forceinline__ void gcr_tc_each_acc(F &&f)
{
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) f(i, j, q);
}

/* wgmma (sm_90a; the host offers the WG tiles only where programs are built for it). A descriptor
 * of a K-major operand tile in shared memory: 128-byte rows, 8-row groups 1024 bytes apart, the
 * 128-byte swizzle; addr is the first row's byte address plus the k step's offset within the row
 * (the swizzle is a function of the address bits, so the tile must sit on 1024 bytes). */
__device__ __forceinline__ unsigned long long gcr_wg_desc(unsigned addr)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}
/* the compiler must neither read nor move an accumulator while a wgmma may write it */
template <int NI> __device__ __forceinline__ void gcr_wg_fence_acc(float (&d)[NI][4])
{
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
        for (int q = 0; q < 4; q++) asm volatile("" : "+f"(d[j][q])::"memory");
}
#define GCR_WG_D4(j) "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
#define GCR_WG_D32                                                                                             \
    GCR_WG_D4(0), GCR_WG_D4(1), GCR_WG_D4(2), GCR_WG_D4(3), GCR_WG_D4(4), GCR_WG_D4(5), GCR_WG_D4(6), GCR_WG_D4(7)
#define GCR_WG_D64                                                                                             \
    GCR_WG_D32, GCR_WG_D4(8), GCR_WG_D4(9), GCR_WG_D4(10), GCR_WG_D4(11), GCR_WG_D4(12), GCR_WG_D4(13),          \
        GCR_WG_D4(14), GCR_WG_D4(15)
#define GCR_WG_R32                                                                                             \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                     \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define GCR_WG_R64                                                                                             \
    GCR_WG_R32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "              \
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
/* one wgmma of shape m64n<N>k<K> (N 64: 32 accumulators a thread, then the operands DA DB SC =
 * 32 33 34; N 128: 64, then 64 65 66): scale-d from a register that is 1 (accumulate), A and B
 * unscaled (the 16-bit types also say both K-major, TAIL ", 0, 0"; TF32 is K-major only and takes
 * no transpose flags) */
#define GCR_WG_MMA(N, K, TY, TAIL, REGS, DA, DB, SC, ...)                                                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SC ", 0;\n"                                            \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k" #K ".f32." TY "." TY " {" REGS "}, %" #DA ", %" #DB  \
                 ", p, 1, 1" TAIL ";\n}\n"                                                                   \
                 : __VA_ARGS__                                                                               \
                 : "l"(da), "l"(db), "r"(1))
/* The async-proxy fence (shared memory written by this thread, read next by wgmma) and the
 * bracket of a batch of wgmma: fence before, then commit and wait for all of it. Built only for
 * sm_90a, where gcr_wg_mma runs; elsewhere it traps first. */
__device__ __forceinline__ void gcr_wg_proxy_fence()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void gcr_wg_begin()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void gcr_wg_end()
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#endif
}
/* d (64 x 8 NI of f32, this thread's part in fragment order) += A (64 x k) * B (8 NI x k)^T, k 16
 * for the 16-bit types and 8 for TF32 (T float: operands already rounded to TF32) */
template <typename T, int NI>
__device__ __forceinline__ void gcr_wg_mma(float (&d)[NI][4], unsigned long long da, unsigned long long db)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    static_assert(NI == 8 || NI == 16, "m64n64 or m64n128");
    if constexpr (sizeof(T) == 4) {
        if constexpr (NI == 8)
            GCR_WG_MMA(64, 8, "tf32", "", GCR_WG_R32, 32, 33, 34, GCR_WG_D32);
        else
            GCR_WG_MMA(128, 8, "tf32", "", GCR_WG_R64, 64, 65, 66, GCR_WG_D64);
    } else if constexpr (NI == 8) {
        if (gcr_dn_is_bf16<T>::v)
            GCR_WG_MMA(64, 16, "bf16", ", 0, 0", GCR_WG_R32, 32, 33, 34, GCR_WG_D32);
        else
            GCR_WG_MMA(64, 16, "f16", ", 0, 0", GCR_WG_R32, 32, 33, 34, GCR_WG_D32);
    } else {
        if (gcr_dn_is_bf16<T>::v)
            GCR_WG_MMA(128, 16, "bf16", ", 0, 0", GCR_WG_R64, 64, 65, 66, GCR_WG_D64);
        else
            GCR_WG_MMA(128, 16, "f16", ", 0, 0", GCR_WG_R64, 64, 65, 66, GCR_WG_D64);
    }
#else
    (void)d; (void)da; (void)db;
    __trap(); /* built for another target: the host never picks a WG tile there */
#endif
}

/* The epilogue's walk over a staged tile's nr valid rows x nc valid columns by NT threads (this one
 * t), shared by gemm_tc.cuh's tiles and gemm_tma.cuh's: at K <= 24 the per-element epilogue is a
 * layer's cost (instruction-bound), and a partial column tile (N 72 in a 128 tile) spent its masked
 * iterations on nothing, so only valid places are visited. Channel-contiguous outputs (!rows_fast)
 * go a thread per run of 8 columns of a row, get8(r, c, v) then st8(v, r, c), consecutive threads
 * on consecutive runs so a warp's stores are contiguous, then the nc % 8 last columns element by
 * element, get1(r, c) then st1(value, r, c), rows fastest where the output is not channel-
 * contiguous; e = s * fast + f walks a region with one division. */
template <int NT, class Get1, class Get8, class St1, class St8>
__device__ __forceinline__ void gcr_tc_walk(int t, int nr, int nc, bool rows_fast, Get1 &get1, Get8 &get8, St1 &st1,
                                            St8 &st8)
{
    if (nr <= 0) return;
    int cs = 0; /* the per-element walk's first column */
    if (!rows_fast) {
        const int nv = nc >> 3;
        cs = nv * 8;
        if (nv > 0) {
            const int df = NT % nv, ds = NT / nv;
            int f = t % nv, s = t / nv;
            for (int e = t; e < nr * nv; e += NT) {
                float v[8];
                get8(s, f * 8, v);
                st8(v, s, f * 8);
                f += df;
                s += ds;
                if (f >= nv) {
                    f -= nv;
                    s++;
                }
            }
        }
    }
    if (cs < nc) {
        const int ncs = nc - cs, fast = rows_fast ? nr : ncs, df = NT % fast, ds = NT / fast;
        int f = t % fast, s = t / fast;
        for (int e = t; e < nr * ncs; e += NT) {
            const int r = rows_fast ? f : s, c = cs + (rows_fast ? s : f);
            st1(get1(r, c), r, c);
            f += df;
            s += ds;
            if (f >= fast) {
                f -= fast;
                s++;
            }
        }
    }
}

/* 8 consecutive staged values from row cr of the epilogue's staging, columns c .. c + 7 (c a
 * multiple of 8): stored as two float4 with the halves of runs past the fourth of each 8 swapped
 * (the bank order gemm_tc.cuh's finish explains), swapped back here unless `inplace` (staged with
 * the columns already permuted: read in place) */
template <bool inplace> __device__ __forceinline__ void gcr_tc_get8(const float *cr, int c, float (&v)[8])
{
    const float4 *q = (const float4 *)(cr + c);
    const int sw = (c >> 5) & 1;
    float4 lo, hi;
    if constexpr (!inplace) {
        const float4 a = q[sw], b = q[sw ^ 1];
        lo = sw ? b : a;
        hi = sw ? a : b;
    } else {
        lo = q[sw];
        hi = q[sw ^ 1];
    }
    v[0] = lo.x; v[1] = lo.y; v[2] = lo.z; v[3] = lo.w;
    v[4] = hi.x; v[5] = hi.y; v[6] = hi.z; v[7] = hi.w;
}

/* rows r0 .. r0 + count of the problem: each one's offset in the output (gemm.cuh gcr_dn_row_y) into
 * rowC and its image into rown, 0 past M; by threads t, + nt, ... */
__device__ __forceinline__ void gcr_tc_set_rows(const gcr_dense_args &p, int sp, int M, int r0, int count, int t, int nt,
                                                long long *rowC, int *rown)
{
    for (int i = t; i < count; i += nt) {
        const int r = r0 + i;
        if (r < M) {
            int n;
            rowC[i] = gcr_dn_row_y(p, sp, r, n);
            rown[i] = n;
        } else {
            rowC[i] = 0;
            rown[i] = 0;
        }
    }
}

template <typename T, class CFG, class Pro, class Epi, class Epi8>
__device__ __forceinline__ void gcr_dense_tc(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                             Pro &pro, Epi &epi, Epi8 &epi8)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    typedef typename gcr_tc_elem<T>::t E;
    enum { TF32 = sizeof(E) == 4, EPC = 16 / (int)sizeof(E) }; /* EPC: elements per 16-byte chunk */
    static_assert(!TF32 || CFG::AT == 0 || CFG::AT >= 3, "the TF32 tile has the channel-contiguous A layouts only");
    enum { BM = CFG::BM, BN = CFG::BN, BK = CFG::BK_BYTES / (int)sizeof(E), ST = CFG::ST, AT = CFG::AT, NT = CFG::THREADS };
    enum { KS = TF32 ? 8 : 16 }; /* k per mma */
    enum { TWM = BM / CFG::WM, TWN = BN / CFG::WN, MI = TWM / 16, NI = TWN / 8 };
    /* shared tiles: A [m][k] (AT 0) or [k][m] (AT 1), B [n][k]; the one-chunk pads keep the 8 row
     * addresses of each ldmatrix on distinct banks; the Hopper tiles' rows are unpadded and swizzled
     * (sa, sb below) */
    enum { TM = AT == 1 || AT == 2, WG = CFG::WG }; /* TM: A stored transposed, [k][m] */
    enum { LDA = WG ? BK : TM ? BM + EPC : BK + EPC, A_ROWS = TM ? BK : BM, LDB = WG ? BK : BK + EPC };
    static_assert(!WG || ((AT == 0 || AT == 3) && BM == 128 && (BN == 128 || BN == 64) && CFG::WM == 8 &&
                          CFG::WN == 1 && BK * (int)sizeof(E) == 128 && !CFG::PS && CFG::DYN),
                  "the Hopper tile: channel-contiguous A, 128 x 128 or 64, 128-byte k rows, dynamic stages");
    enum { A_CH = BM * BK / EPC, B_CH = BN * BK / EPC, NCA = AT == 2 ? 1 : A_CH / NT, NCB = (B_CH + NT - 1) / NT };
    enum { NE = BM * BK / NT, KE = NT / BM }; /* AT 2: elements per thread, k step between them */
    enum { LDC = BN + 4 }; /* the staged chunk's longer row pitch (the epilogue picks one) */
    static_assert(NI % 2 == 0 && A_CH % NT == 0, "tile shape");
    struct stage {
        E a[A_ROWS][LDA];
        E b[BN][LDB];
    };
    static_assert(CFG::PS || sizeof(stage) * ST >= sizeof(float) * (WG ? BM : TWM) * LDC,
                  "epilogue chunk must fit the operand stages");
    static_assert(!CFG::DYN ||
                      (!TM && sizeof(stage) == (WG ? GCR_TC_WG_STAGE_BYTES(BM, BN) : GCR_TC_STAGE_BYTES(BM, BN))),
                  "a deep tile's stage is what the host sizes its launch by");
    enum { PS = CFG::PS };
    static_assert(!PS || (AT == 0 && !CFG::SK && CFG::DYN && ST == GCR_TC_PS_ST && BM == 128 &&
                          sizeof(stage) * ST + sizeof(float) * BM * LDC == GCR_TC_PS_SMEM(BN)),
                  "row streams: k-contiguous A, unsplit, in the dynamic shared memory the host sizes");
    unsigned char *raw;
    if constexpr (CFG::DYN) {
        extern __shared__ __align__(16) unsigned char gcr_tc_dyn[]; /* ST * GCR_TC_STAGE_BYTES(BM, BN) */
        raw = gcr_tc_dyn;
        if constexpr (WG) /* on the swizzle's 1024 bytes (the host gives 1 KB more: GCR_TC_WG_SMEM) */
            raw += (1024 - (gcr_tc_smem(gcr_tc_dyn) & 1023)) & 1023;
    } else {
        __shared__ __align__(16) unsigned char stat[sizeof(stage) * ST];
        raw = stat;
    }
    __shared__ long long rowC[BM];
    __shared__ int rown[BM];
    /* the epilogue's staged accumulators: TWM rows at a time [TWM][ldc] in the operand stages once
     * the k loop is done, or (row streams, whose next tile is loading into the stages) the whole tile
     * [BM][ldc] after them */
    stage *sg = (stage *)raw;
    float *Cs = (float *)(PS ? raw + sizeof(stage) * ST : raw);
    /* the shared address of A(r, k) and B(n, k), k a whole chunk: the Hopper tiles' 128-byte rows
     * keep chunk c at c ^ (r % 8), so the 8 rows an 8 x 16-byte wgmma core matrix reads are on
     * distinct banks */
    auto sa = [](stage &s, int r, int k) -> E * {
        if constexpr (WG) return &s.a[r][((k / EPC) ^ (r & 7)) * EPC];
        if constexpr (TM) return &s.a[k][r];
        return &s.a[r][k];
    };
    auto sb = [](stage &s, int n, int k) -> E * {
        if constexpr (WG) return &s.b[n][((k / EPC) ^ (n & 7)) * EPC];
        return &s.b[n][k];
    };

    const int t = threadIdx.x, M = (int)p.M, N = (int)p.N, K = (int)p.K;
    /* split-K: grid x is the row tiles times p.ksplit, split s = blockIdx.x / row tiles */
    const int ks = CFG::SK && p.ksplit > 1 ? (int)p.ksplit : 1, rt = (int)gridDim.x / ks, split = (int)blockIdx.x / rt;
    gcr_dn_blk blk = gcr_dn_block<BM, BN>(p);
    blk.r0 = ((int)blockIdx.x - split * rt) * BM;
    const int c0 = blk.c0, zn = blk.zn, zc = blk.zc, sp = (int)(p.OH * p.OW);
    x += blk.za;
    w += blk.zb;
    auto rowdec = [&](int r, int &n, int &oy, int &ox) { gcr_dn_rowdec(p, sp, r, n, oy, ox); };
    /* the output offset and image of each row of the tile at r0, for the epilogue */
    auto set_rows = [&](int r0) { gcr_tc_set_rows(p, sp, M, r0, BM, t, NT, rowC, rown); };
    if constexpr (!PS) set_rows(blk.r0);

    /* this thread's chunks: fixed rows / columns, k advancing by BK per tile */
    const T *pa[NCA];
    int ka[NCA], na[NCA], la[NCA]; /* chunk's k within the tile, image, smem row/col; na < 0: out of range */
    enum { IMP = AT == 3 || AT == 4 }; /* implicit GEMM: A by taps of channels-last x */
    int iy0[IMP ? NCA : 1] = {}, ix0[IMP ? NCA : 1] = {}; /* the row's top-left input tap */
    /* C0: channels per tap; KK: the k the tiles run over (AT 4: KH kernel rows of RW, a row's
     * KW * C0 elements padded to whole chunks) */
    const int C0 = IMP ? K / (int)(p.KH * p.KW) : K, C = C0;
    const int RW = AT == 4 ? ((int)p.KW * C0 + EPC - 1) / EPC * EPC : 1;
    const int KK = AT == 4 ? (int)p.KH * RW : K;
    /* the A chunks' places for the tile at r0 (a row stream sets them again for each tile it loads) */
    auto set_a = [&](int r0) {
#pragma unroll
        for (int i = 0; i < NCA; i++) {
            int e = t + i * NT;
            if (AT == 2) { /* one row: this thread's elements are k = t / BM + j * KE of it */
                int r = r0 + t % BM;
                long long off = 0;
                if (r < M) {
                    off = gcr_dn_row_x(p, sp, r, na[i]);
                } else {
                    na[i] = -1;
                }
                ka[i] = t / BM;
                la[i] = t % BM;
                pa[i] = x + off;
            } else if (AT == 1) { /* chunk = 8 rows (pixels) of one k */
                int kl = e / (BM / 8), mc = (e % (BM / 8)) * 8, r = r0 + mc;
                int n = (int)gcr_div((unsigned)r, p.rdiv_m[0], p.rdiv_s[0]), pix = r - n * sp;
                ka[i] = kl;
                la[i] = mc;
                na[i] = r < M ? n : -1;
                pa[i] = x + (r < M ? n * p.xs[0] + pix + kl * p.xs[1] : 0);
            } else { /* chunk = EPC k of one row; AT 3: EPC channels of one tap of the row, moved per tile */
                int rl = e / (BK / EPC), kl = (e % (BK / EPC)) * EPC, r = r0 + rl;
                ka[i] = kl;
                la[i] = rl;
                na[i] = -1;
                pa[i] = x;
                if constexpr (IMP) iy0[i] = ix0[i] = GCR_DN_OUT;
                if (r < M) {
                    if constexpr (IMP) { /* the row's top-left tap, maybe in the padding */
                        int n, oy, ox;
                        rowdec(r, n, oy, ox);
                        na[i] = n;
                        iy0[i] = oy * (int)p.sh - (int)p.ph;
                        ix0[i] = ox * (int)p.sw - (int)p.pw;
                        pa[i] = x + n * p.xs[0] + (long long)iy0[i] * p.xs[2] + (long long)ix0[i] * p.xs[3];
                    } else {
                        pa[i] = x + gcr_dn_row_x(p, sp, r, na[i]) + kl;
                    }
                }
            }
        }
    };
    set_a(blk.r0);
    /* row streams: the image of each A chunk's row in the tile being multiplied (the prologue's),
     * which na no longer holds once the loads have moved on to the next tile; -1 past M */
    int cna[PS ? NCA : 1];
    auto set_cna = [&](int r0) {
#pragma unroll
        for (int i = 0; i < (PS ? NCA : 0); i++) {
            const int r = r0 + la[i];
            cna[i] = r < M ? (int)gcr_div((unsigned)r, p.rdiv_m[0], p.rdiv_s[0]) : -1;
        }
    };
    if (PS && !GCR_PROLOGUE_IDENTITY) set_cna(blk.r0);
    static_assert(NT % (BK / EPC) == 0, "every chunk of a thread has the same k in the tile (t % (BK / EPC))");
    /* AT 3: the tap of this thread's chunks in tile kt (the same for its A and B chunks), as the
     * A offset from the row's top-left tap, the B offset from the column's first weight, and the
     * tap's displacement in rows and columns; k >= K gives dy = GCR_DN_OUT (every test fails) */
    struct tapoff { long long a, b; int dy, dx, c; };
    auto tap_of = [&](int kt) -> tapoff {
        tapoff o;
        const int k = kt * BK + (t % (BK / EPC)) * EPC;
        if (k >= KK) {
            o.a = o.b = 0;
            o.dy = o.dx = GCR_DN_OUT;
            o.c = 0;
            return o;
        }
        const int tap = (int)gcr_div((unsigned)k, p.rdiv_m[2], p.rdiv_s[2]), c = k - tap * C;
        const int ky = (int)gcr_div((unsigned)tap, p.rdiv_m[3], p.rdiv_s[3]), kx = tap - ky * (int)p.KW;
        o.dy = ky * (int)p.dh;
        o.dx = kx * (int)p.dw;
        o.c = c;
        o.a = (long long)o.dy * p.xs[2] + (long long)o.dx * p.xs[3] + c;
        o.b = (long long)ky * p.ws[2] + (long long)kx * p.ws[3] + c;
        return o;
    };
    auto in_img = [&](int i, const tapoff &o) {
        return (unsigned)(iy0[i] + o.dy) < (unsigned)p.H && (unsigned)(ix0[i] + o.dx) < (unsigned)p.W;
    };
    const T *pb[NCB];
    int kb[NCB];
    bool okb[NCB];
#pragma unroll
    for (int i = 0; i < NCB; i++) {
        int e = t + i * NT, cl = e / (BK / EPC), kl = (e % (BK / EPC)) * EPC;
        okb[i] = e < B_CH && c0 + cl < N;
        kb[i] = kl;
        pb[i] = w + (okb[i] ? (long long)(c0 + cl) * p.ws[0] + kl : 0);
    }
    const long long astep = TM ? BK * p.xs[1] : BK; /* AT 0, 1: A chunk's step per k tile */

    /* AT 2 and 4: the next tile's A elements / A and B chunks, in flight in registers while this
     * tile's MMAs run, stored to shared memory after them */
    unsigned short ea[AT == 2 ? NE : 1];
    uint4 ga[AT == 4 ? NCA : 1], gb[AT == 4 ? NCB : 1];
    auto eload = [&](int kt) {
        if constexpr (AT == 4) { /* this thread's chunks: elements j0.. of kernel row ky, one by one */
            const int k = kt * BK + (t % (BK / EPC)) * EPC, ky = k / RW, j0 = k - ky * RW;
            const int dy = k < KK ? ky * (int)p.dh : GCR_DN_OUT; /* k >= KK: every test fails */
            const int kw = (int)p.KW, dw = (int)p.dw, W = (int)p.W;
#pragma unroll
            for (int i = 0; i < NCA; i++) { /* a row past M has iy0 = GCR_DN_OUT */
                const bool ok = (unsigned)(iy0[i] + dy) < (unsigned)p.H;
                ga[i] = gcr_tc_row_gather<T>(ok ? pa[i] + (long long)dy * p.xs[2] : x, ok, j0, C0, kw, ix0[i], dw, W,
                                             dw * (int)p.xs[3], (int)p.xs[1], pro, !GCR_PROLOGUE_IDENTITY, na[i] + zn, zc);
            }
#pragma unroll
            for (int i = 0; i < NCB; i++) {
                const bool ok = okb[i] && dy != GCR_DN_OUT;
                if (t + i * NT < B_CH)
                    gb[i] = gcr_tc_row_gather<T>(ok ? pb[i] - kb[i] + (long long)ky * p.ws[2] : w, ok, j0, C0, kw, 0, 1, kw,
                                                 (int)p.ws[3], (int)p.ws[1], pro, false, 0, 0);
            }
        }
        if constexpr (AT == 2) {
#pragma unroll
        for (int j = 0; j < NE; j++) {
            const int k = kt * BK + ka[0] + j * KE;
            unsigned short v = 0;
            if (na[0] >= 0 && k < K) {
                v = pa[0][k * p.xs[1]].u;
                if (!GCR_PROLOGUE_IDENTITY) {
                    T e;
                    e.u = v;
                    v = gcr_dn_bits16(pro(gcr_dn_tof(e), na[0] + zn, k + zc), (T *)0);
                }
            }
            ea[j] = v;
        }
        }
    };
    auto estore = [&](int j) {
        if constexpr (AT == 4) {
            stage &s = sg[j % ST];
#pragma unroll
            for (int i = 0; i < NCA; i++) *(uint4 *)sa(s, la[i], ka[i]) = ga[i];
#pragma unroll
            for (int i = 0; i < NCB; i++)
                if (t + i * NT < B_CH) *(uint4 *)sb(s, (t + i * NT) / (BK / EPC), kb[i]) = gb[i];
        }
        if constexpr (AT == 2) {
        stage &s = sg[j % ST];
#pragma unroll
        for (int j = 0; j < NE; j++) s.a[ka[0] + j * KE][la[0]] = ea[j];
        }
    };
    auto issue = [&](int j, int kt) {
        stage &s = sg[j % ST];
        const int k0 = kt * BK;
        tapoff o;
        if constexpr (AT == 3) o = tap_of(kt);
        if constexpr (AT == 4) return; /* gathered through registers: eload / estore */
#pragma unroll
        for (int i = 0; i < (AT == 2 ? 0 : NCA); i++) {
            void *dst = sa(s, la[i], ka[i]);
            if constexpr (AT == 3) {
                bool ok = in_img(i, o); /* a row past M has iy0 = GCR_DN_OUT */
                gcr_tc_cp16(dst, ok ? (const void *)(pa[i] + o.a) : (const void *)x, ok);
            } else {
                bool ok = na[i] >= 0 && k0 + ka[i] < K;
                gcr_tc_cp16(dst, ok ? (const void *)(pa[i] + kt * astep) : (const void *)x, ok);
            }
        }
#pragma unroll
        for (int i = 0; i < NCB; i++) {
            int e = t + i * NT;
            if (e < B_CH) {
                bool ok = okb[i] && k0 + kb[i] < K;
                const T *src = AT == 3 ? pb[i] - kb[i] + o.b : pb[i] + k0;
                gcr_tc_cp16(sb(s, e / (BK / EPC), kb[i]), ok ? (const void *)src : (const void *)w, ok);
            }
        }
    };
    /* The prologue's operands staged in shared memory with the operand tiles: a table of the k
     * tile's 8-channel chunks for each image the tile's rows span, at most PIMG (gemm.cuh
     * GCR_PROLOGUE_FETCH8_ASYNC; the plain 16-bit A chunks of the tiles that keep their rows). The
     * table of step j is copied in step j - 1's commit group by PIMG * CPR threads, so it is
     * visible to every thread past step j - 1's barrier; step 0's goes in a group of its own before
     * the preamble, read past one barrier more. [ST][PIMG images][CPR chunks] */
#ifdef GCR_PROLOGUE_FETCH8_ASYNC
    constexpr bool PFS = !GCR_PROLOGUE_IDENTITY && sizeof(E) == 2 && AT != 2 && AT != 3 && AT != 4 && !TM && !PS;
#else
    constexpr bool PFS = false;
#endif
    enum { PIMG = 8, CPR = BK / EPC };
    __shared__ GCR_PRO_FETCH_T ptab[PFS ? ST : 1][PFS ? PIMG * CPR : 1];
    int n_lo = -1; /* the tile's first image where its rows span at most PIMG images, else -1 */
    if constexpr (PFS) {
        const int r1 = min(blk.r0 + BM, M) - 1, n0 = (int)gcr_div((unsigned)blk.r0, p.rdiv_m[0], p.rdiv_s[0]);
        if (blk.r0 <= r1 && (int)gcr_div((unsigned)r1, p.rdiv_m[0], p.rdiv_s[0]) - n0 < PIMG) n_lo = n0;
    }
    const bool stab = n_lo >= 0;
    auto stage_pro = [&](int j, int kt) { /* step j's table (tile kt) */
        if constexpr (PFS) {
            const int e = t, img = n_lo + e / CPR, c = kt * BK + (e % CPR) * EPC;
            if (e < PIMG * CPR && img * sp < M && c < K) pro(&ptab[j % ST][e], img + zn, c + zc);
        }
    };
    /* the prologue on this thread's own chunks of tile kt (visible to it after its wait_group) */
    auto prologue = [&](int j, int kt) {
        stage &s = sg[j % ST];
        const int k0 = kt * BK;
        tapoff o;
        if constexpr (AT == 3) o = tap_of(kt);
#pragma unroll
        for (int i = 0; i < (AT == 2 || AT == 4 ? 0 : NCA); i++) { /* AT 4 applies it as it gathers */
            const int n = PS ? cna[i] : na[i]; /* the chunk row's image, < 0 past M */
            if (n < 0 || k0 + ka[i] >= K) continue;
            if constexpr (AT == 3) { /* EPC channels of one tap; the padding stays 0 */
                if (!in_img(i, o)) continue;
                uint4 *q = (uint4 *)sa(s, la[i], ka[i]);
                *q = gcr_tc_pro_chunk<T>(*q, pro, n + zn, o.c + zc);
            } else if constexpr (TM) { /* 8 pixels of one channel */
                union { uint4 q; T h[8]; } u;
                u.q = *(uint4 *)sa(s, la[i], ka[i]);
                const int c = k0 + ka[i] + zc, nz = n + zn;
#pragma unroll
                for (int h = 0; h < 8; h++) u.h[h].u = gcr_dn_bits16(pro(gcr_dn_tof(u.h[h]), nz, c), (T *)0);
                *(uint4 *)sa(s, la[i], ka[i]) = u.q;
            } else if constexpr (PFS) {
                uint4 *q = (uint4 *)sa(s, la[i], ka[i]);
                *q = stab ? gcr_dn_pro8s<T>(*q, pro, n + zn, k0 + ka[i] + zc, ptab[j % ST][(n - n_lo) * CPR + ka[i] / EPC])
                          : gcr_tc_pro_chunk<T>(*q, pro, n + zn, k0 + ka[i] + zc);
            } else {
                uint4 *q = (uint4 *)sa(s, la[i], ka[i]);
                *q = gcr_tc_pro_chunk<T>(*q, pro, n + zn, k0 + ka[i] + zc);
            }
        }
    };

    /* The Hopper tiles in TF32: wgmma reads the operands from shared memory as they are, so each
     * thread rounds its own landed chunks of step j (nearest, ties away, as cvt.rna after ldmatrix
     * does on the mma.sync tile) before the barrier */
    auto round_tf32 = [&](int j) {
        stage &s = sg[j % ST];
        auto rnd = [](uint4 *q) {
            q->x = gcr_tc_tf32(q->x);
            q->y = gcr_tc_tf32(q->y);
            q->z = gcr_tc_tf32(q->z);
            q->w = gcr_tc_tf32(q->w);
        };
#pragma unroll
        for (int i = 0; i < NCA; i++) rnd((uint4 *)sa(s, la[i], ka[i]));
#pragma unroll
        for (int i = 0; i < NCB; i++)
            if (t + i * NT < B_CH) rnd((uint4 *)sb(s, (t + i * NT) / (BK / EPC), kb[i]));
    };

    float acc[MI][NI][4];
    gcr_tc_each_acc<MI, NI>([&](int i, int j, int q) { acc[i][j][q] = 0.0f; });
    const int warp = t >> 5, lane = t & 31;
    const int wm = warp / CFG::WN, wr = wm * TWM, wc = (warp % CFG::WN) * TWN;
    /* this block's k tiles [k_lo, k_hi): all of them, or its split's */
    const int nk = (KK + BK - 1) / BK, k_lo = ks > 1 ? split * (int)p.kchunk : 0;
    const int k_hi = ks > 1 ? min(nk, k_lo + (int)p.kchunk) : nk;
    /* The loads run over J steps, step j into stage j % ST: this tile's k tiles, or (row streams) the
     * k tiles of each of the block's row tiles blockIdx.x, + gridDim.x, ... in turn (the host gives
     * every block at least one). pt, pkt: the tile and k tile the next load reads. */
    const int mt = (M + BM - 1) / BM;
    const int J = PS ? (mt - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x * (k_hi - k_lo) : k_hi - k_lo;
    int pt = (int)blockIdx.x, pkt = k_lo;
    auto load = [&](int j) {
        if constexpr (PS) {
            issue(j, pkt);
            if (++pkt == k_hi) { /* on to the next row tile */
                pkt = k_lo;
                pt += (int)gridDim.x;
                if (pt < mt) set_a(pt * BM);
            }
        } else {
            issue(j, k_lo + j); /* no counters: the 128-wide tiles sit at their register bound */
            if (PFS && stab && j + 1 < J) stage_pro(j + 1, k_lo + j + 1);
        }
    };

    /* the MMAs of the k tile in stage s */
    auto multiply = [&](const stage &s) {
        if constexpr (WG) { /* warpgroup warp / 4 issues the products of the tile's rows 64 (warp / 4) ..;
                               * gcr_wg_end waits for them */
            const unsigned a0 = gcr_tc_smem(&s.a[(warp >> 2) * 64][0]), b0 = gcr_tc_smem(&s.b[0][0]);
            gcr_wg_fence_acc(acc[0]);
            gcr_wg_begin();
#pragma unroll
            for (int kk = 0; kk < BK; kk += KS) /* a k step is 32 bytes further along the swizzled rows */
                gcr_wg_mma<T>(acc[0], gcr_wg_desc(a0 + kk * (int)sizeof(E)), gcr_wg_desc(b0 + kk * (int)sizeof(E)));
            return;
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk += KS) {
            unsigned a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++) {
                const int m0 = wr + i * 16;
                const void *ad;
                if constexpr (TM) {
                    const int mi = lane >> 3;
                    ad = &s.a[kk + (lane & 7) + (mi >> 1) * 8][m0 + (mi & 1) * 8];
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                                 : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                                 : "r"(gcr_tc_smem(ad)));
                } else {
                    ad = &s.a[m0 + (lane & 15)][kk + (lane >> 4) * EPC];
                    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                                 : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                                 : "r"(gcr_tc_smem(ad)));
                }
            }
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                const int mi = lane >> 3;
                const void *bd = &s.b[wc + j * 8 + (lane & 7) + (mi >> 1) * 8][kk + (mi & 1) * EPC];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1])
                             : "r"(gcr_tc_smem(bd)));
            }
            if constexpr (TF32) {
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int q = 0; q < 4; q++) a[i][q] = gcr_tc_tf32(a[i][q]);
#pragma unroll
                for (int j = 0; j < NI; j++) {
                    b[j][0] = gcr_tc_tf32(b[j][0]);
                    b[j][1] = gcr_tc_tf32(b[j][1]);
                }
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) {
                    if constexpr (TF32)
                        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                                     "{%8,%9}, {%0,%1,%2,%3};"
                                     : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                     : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
                    else
                        gcr_dn_mma16816<T>(acc[i][j], a[i], b[j]);
                }
        }
    };
    /* The tile at r0 out: the accumulators staged through Cs TWM rows at a time into the epilogue (or,
     * split, into this split's partial tile, and the last split's epilogue over the sum). */
    auto finish = [&](int r0) {
        if constexpr (PS) set_rows(r0);
        const bool rows_fast = p.ys[1] != 1;
        /* the staged chunk's row pitch in floats: odd for NCHW outputs, whose warps read down a column
         * (conflict-free); BN + 4 for channel-contiguous ones, whose threads read 8 consecutive columns
         * as two 16-byte vectors: rows stay 16-byte aligned, and with a pitch of BN / 4 + 1 vectors and
         * the threads past the fourth of each 8 reading their second vector first, the 8 threads of a
         * vector access hit distinct banks in every full tile. Where the tile's registers allow (PERM:
         * not the row streams nor the small-channel tiles, which spilled more), those runs are staged
         * with their two halves swapped (col: a column's place), so that read is in place and needs no
         * register shuffle to put the halves back in order (H200, f16: 0.93-0.97x the time on the
         * Hopper tiles' 1x1s) */
        enum { PERM = !PS && AT != 4 };
        const int ldc = rows_fast ? BN + 1 : BN + 4;
        const bool perm = PERM && !rows_fast;
        auto col = [&](int c) { return perm ? c ^ ((c >> 3) & 4) : c; };
        /* split-K: the tile's index among the grid's, this block's partial tile, and all ks of them */
        const bool splitting = CFG::SK && ks > 1;
        const long long tile =
            splitting ? ((int)blockIdx.x - split * rt) + (long long)rt * (blockIdx.y + (long long)gridDim.y * blockIdx.z) : 0;
        float *mine = splitting ? p.part + (tile * ks + split) * (long long)(BM * BN) : nullptr;
        const float *all = splitting ? p.part + tile * ks * (long long)(BM * BN) : nullptr;
        /* a value of the tile (row r from the walk's first row, column c), and 8 consecutive ones: from
         * the staged chunk, or (parts) the ks partials summed in split order, so the result is
         * bit-identical whichever split came last */
        auto get1 = [&](bool parts, int r, int c) -> float {
            if (!CFG::SK || !parts) return Cs[r * ldc + col(c)];
            float v = 0.0f;
            for (int q = 0; q < ks; q++) v += __ldcg(&all[q * (BM * BN) + r * BN + c]);
            return v;
        };
        auto get8 = [&](bool parts, int r, int c, float (&v)[8]) {
            if (!CFG::SK || !parts) {
                gcr_tc_get8<PERM>(Cs + r * ldc, c, v);
                return;
            }
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = 0.0f;
            for (int q = 0; q < ks; q++) {
                const float4 *pq = (const float4 *)&all[q * (BM * BN) + r * BN + c];
                const float4 a = __ldcg(pq), b = __ldcg(pq + 1);
                v[0] += a.x; v[1] += a.y; v[2] += a.z; v[3] += a.w;
                v[4] += b.x; v[5] += b.y; v[6] += b.z; v[7] += b.w;
            }
        };
        /* The epilogue over rows rb .. rb + nr of the tile (gcr_tc_walk), values from get1 / get8 */
        auto walk = [&](int rb, int nr, bool parts) {
            auto g1 = [&](int r, int c) { return get1(parts, r, c); };
            auto g8 = [&](int r, int c, float (&v)[8]) { get8(parts, r, c, v); };
            auto s1 = [&](float v, int r, int c) {
                epi(v, rown[rb + r] + zn, c0 + c + gcr_dn_zo_o(p), blk.zo + rowC[rb + r] + (long long)(c0 + c) * p.ys[1]);
            };
            auto s8 = [&](const float *v, int r, int c) {
                epi8(v, rown[rb + r] + zn, c0 + c + gcr_dn_zo_o(p), blk.zo + rowC[rb + r] + (c0 + c));
            };
            gcr_tc_walk<NT>(t, nr, min(BN, N - c0), rows_fast, g1, g8, s1, s8);
        };
        /* passes of TWM rows, a warp row's accumulators each; row streams and the Hopper tiles (whose
         * stages hold the whole tile) stage them all in one */
        enum { ONE = PS || WG };
        for (int pass = 0; pass < (ONE ? 1 : CFG::WM); pass++) {
            if (ONE || wm == pass) {
                const int g = lane >> 2, q2 = (lane & 3) * 2, cr0 = ONE ? wr : 0;
#pragma unroll
                for (int i = 0; i < MI; i++)
#pragma unroll
                    for (int j = 0; j < NI; j++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            float *cr = Cs + (cr0 + i * 16 + g + h * 8) * ldc + col(wc + j * 8 + q2);
                            if (rows_fast) { /* an odd pitch: 4-byte stores */
                                cr[0] = acc[i][j][h * 2];
                                cr[1] = acc[i][j][h * 2 + 1];
                            } else {
                                *(float2 *)cr = make_float2(acc[i][j][h * 2], acc[i][j][h * 2 + 1]);
                            }
                        }
            }
            __syncthreads();
            const int rb = pass * TWM, nr = min(ONE ? BM : TWM, M - r0 - rb);
            if (!splitting) {
                walk(rb, nr, false);
            } else { /* the valid region of these rows into the partial tile, a row's columns contiguous */
                const int nc = min(BN, N - c0);
                for (int e = t; e < nr * nc; e += NT) {
                    const int r = e / nc, c = e - r * nc;
                    __stcg(&mine[(rb + r) * BN + c], Cs[r * ldc + col(c)]);
                }
            }
            __syncthreads();
        }
        if constexpr (CFG::SK) {
            if (!splitting || !gcr_split_arrive(p.sem, tile, ks)) return; /* another split stores it */
            walk(0, min(BM, M - r0), true); /* the last split */
        }
    };
    if (PFS && stab && J > 0) { /* step 0's table: the oldest group, done when step 0's is */
        stage_pro(0, k_lo);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    /* preamble: ST - 1 loads in flight */
#pragma unroll
    for (int s = 0; s < ST - 1; s++) {
        if (s < J) {
            load(s);
            if constexpr (AT == 2 || AT == 4) {
                eload(k_lo + s);
                estore(s);
            }
        }
        asm volatile("cp.async.commit_group;\n" ::);
    }
    int ckt = k_lo, ct = (int)blockIdx.x; /* the k tile and row tile being multiplied */
    /* A step's own rewrite of its stage (the prologue on this thread's chunks, the TF32 rounding).
     * EARLY: step j + 1's prologue runs while the tensor cores multiply step j, instead of between
     * step j's products and step j + 1's, when they sat idle. Stage j + 1 is neither the one
     * multiplied (j) nor the one refilled (j - 1) with 3 stages or more; step j + 1's table came in
     * step j's group, which every thread waited for before step j's barrier. On the 64-wide Hopper
     * tiles only: the 128-wide ones spilled 72 bytes with it and ran 2-11% slower (H200, f16,
     * MobileNet-v3's squeeze-excite projections at batch 128), where the 64-wide ones ran 0-9%
     * faster (batch 32 and 128). Not in TF32, which the heuristic keeps off these tiles and which
     * was not measured so. */
    constexpr bool EARLY = WG && !PS && BN <= 64 && AT != 2 && AT != 4 && ST >= 3 && !TF32 && !GCR_PROLOGUE_IDENTITY;
    auto rewrite = [&](int j) {
        if (AT != 2 && AT != 4 && !GCR_PROLOGUE_IDENTITY) prologue(j, PS ? ckt : k_lo + j);
        if constexpr (WG && TF32) round_tf32(j);
    };
    for (int j = 0; j < J; j++) {
        if (!EARLY || j == 0) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(ST - 2));
            if (PFS && stab && j == 0) __syncthreads(); /* step 0's table, landed in every thread's wait */
            rewrite(j);
        }
        /* wgmma reads shared memory through the async proxy: this thread's copies and its prologue
         * and rounding stores are made visible to it before the barrier */
        if constexpr (WG) gcr_wg_proxy_fence();
        __syncthreads(); /* step j is in; every warp is done with step j - 1, whose stage refills now */
        const bool more = j + ST - 1 < J;
        /* the Hopper tiles issue this step's products first, then the loads into the stage step j - 1
         * left (every warpgroup waited for its products before the barrier), so the copies are
         * issued while the tensor cores run */
        if constexpr (WG) multiply(sg[j % ST]);
        if (more) load(j + ST - 1);
        asm volatile("cp.async.commit_group;\n" ::);
        if (EARLY && j + 1 < J) { /* groups j + 1 .. j + ST - 1 in flight: step j + 1's is in */
            asm volatile("cp.async.wait_group %0;\n" ::"n"(ST - 2));
            rewrite(j + 1);
        }
        if constexpr (WG) {
            gcr_wg_end();
            gcr_wg_fence_acc(acc[0]);
        }
        if constexpr (AT == 2 || AT == 4) {
            if (more) eload(k_lo + j + ST - 1); /* lands while this tile's math runs; stored below */
        }
        if constexpr (!WG) multiply(sg[j % ST]);
        if constexpr (AT == 2 || AT == 4) {
            if (more) estore(j + ST - 1); /* that stage's last readers passed this iteration's barrier */
        }
        if constexpr (PS) {
            if (++ckt == k_hi) { /* the row tile is done: its epilogue runs while the next one loads */
                finish(ct * BM);
                gcr_tc_each_acc<MI, NI>([&](int i, int jj, int q) { acc[i][jj][q] = 0.0f; });
                ckt = k_lo;
                ct += (int)gridDim.x;
                if (!GCR_PROLOGUE_IDENTITY && ct < mt) set_cna(ct * BM);
            }
        }
    }
    if constexpr (!PS) {
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads(); /* operand stages are free: the accumulators go through them, TWM rows at a time */
        finish(blk.r0);
    }
#else
    (void)p; (void)x; (void)w; (void)pro; (void)epi; (void)epi8;
    __trap(); /* the host never picks this engine below sm_80 */
#endif
}

#define GCR_DENSE_TC_KERNEL(NAME, T, CFG)                                                                   \
    GCR_DN_ENTRY(NAME, T, CFG::THREADS, CFG::MINB, gcr_dense_tc<T, CFG>(p, x, w, pro, epi, epi8))

/* the tiles of one 16-bit dtype: gcr_dense_tc{128,64,32}[n|e|k]_<SFX> */
#define GCR_DENSE_TC_KERNELS(SFX, T)                                                                       \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128_##SFX, T, gcr_cfg_tc128)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64_##SFX, T, gcr_cfg_tc64)                                             \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32_##SFX, T, gcr_cfg_tc32)                                             \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128n_##SFX, T, gcr_cfg_tc128n)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64n_##SFX, T, gcr_cfg_tc64n)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32n_##SFX, T, gcr_cfg_tc32n)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128e_##SFX, T, gcr_cfg_tc128e)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64e_##SFX, T, gcr_cfg_tc64e)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32e_##SFX, T, gcr_cfg_tc32e)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128k_##SFX, T, gcr_cfg_tc128k)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64k_##SFX, T, gcr_cfg_tc64k)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32k_##SFX, T, gcr_cfg_tc32k)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32s_##SFX, T, gcr_cfg_tc32s)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32ks_##SFX, T, gcr_cfg_tc32ks)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64s_##SFX, T, gcr_cfg_tc64s)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64ks_##SFX, T, gcr_cfg_tc64ks)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128s_##SFX, T, gcr_cfg_tc128s)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128ks_##SFX, T, gcr_cfg_tc128ks)                                       \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128d_##SFX, T, gcr_cfg_tc128d)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64d_##SFX, T, gcr_cfg_tc64d)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128kd_##SFX, T, gcr_cfg_tc128kd)                                       \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64kd_##SFX, T, gcr_cfg_tc64kd)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128c_##SFX, T, gcr_cfg_tc128c)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64c_##SFX, T, gcr_cfg_tc64c)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32c_##SFX, T, gcr_cfg_tc32c)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc32p_##SFX, T, gcr_cfg_tc32p)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64p_##SFX, T, gcr_cfg_tc64p)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128w_##SFX, T, gcr_cfg_tc128w)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128kw_##SFX, T, gcr_cfg_tc128kw)                                       \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128ws_##SFX, T, gcr_cfg_tc128ws)                                       \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc128kws_##SFX, T, gcr_cfg_tc128kws)                                     \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64w_##SFX, T, gcr_cfg_tc64w)                                           \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64kw_##SFX, T, gcr_cfg_tc64kw)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64ws_##SFX, T, gcr_cfg_tc64ws)                                         \
    GCR_DENSE_TC_KERNEL(gcr_dense_tc64kws_##SFX, T, gcr_cfg_tc64kws)

#endif /* GCR_GEMM_TC_CUH */

#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_GEMM_BASE_ONLY) && !defined(GCR_GEMM_TC_KERNELS_DONE)
#define GCR_GEMM_TC_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DENSE_TC_KERNELS(f16, gcr_dn_f16)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DENSE_TC_KERNELS(bf16, gcr_dn_bf16)
#endif
#if defined(GCR_TF32) && (!defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128_tf32, float, gcr_cfg_tc128)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64_tf32, float, gcr_cfg_tc64)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32_tf32, float, gcr_cfg_tc32)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128k_tf32, float, gcr_cfg_tc128k)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64k_tf32, float, gcr_cfg_tc64k)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32k_tf32, float, gcr_cfg_tc32k)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32s_tf32, float, gcr_cfg_tc32s)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32ks_tf32, float, gcr_cfg_tc32ks)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64s_tf32, float, gcr_cfg_tc64s)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64ks_tf32, float, gcr_cfg_tc64ks)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128s_tf32, float, gcr_cfg_tc128s)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128ks_tf32, float, gcr_cfg_tc128ks)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128d_tf32, float, gcr_cfg_tc128d)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64d_tf32, float, gcr_cfg_tc64d)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128kd_tf32, float, gcr_cfg_tc128kd)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64kd_tf32, float, gcr_cfg_tc64kd)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128c_tf32, float, gcr_cfg_tc128c)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64c_tf32, float, gcr_cfg_tc64c)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32c_tf32, float, gcr_cfg_tc32c)
GCR_DENSE_TC_KERNEL(gcr_dense_tc32p_tf32, float, gcr_cfg_tc32p)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64p_tf32, float, gcr_cfg_tc64p)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128w_tf32, float, gcr_cfg_tc128w)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128kw_tf32, float, gcr_cfg_tc128kw)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128ws_tf32, float, gcr_cfg_tc128ws)
GCR_DENSE_TC_KERNEL(gcr_dense_tc128kws_tf32, float, gcr_cfg_tc128kws)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64w_tf32, float, gcr_cfg_tc64w)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64kw_tf32, float, gcr_cfg_tc64kw)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64ws_tf32, float, gcr_cfg_tc64ws)
GCR_DENSE_TC_KERNEL(gcr_dense_tc64kws_tf32, float, gcr_cfg_tc64kws)
#endif
#endif
