/* abi.h — the argument layout shared by the host launchers (the .c files of lib/cuda, gcc
 * -std=c11) and the kernels (NVRTC, CUDA C++): the dtype codes and every struct a launcher passes
 * by value to a kernel. Both sides compile this one text, so the layouts can drift only through
 * the sizes and alignments of the field types; the asserts below pin those, and each struct's
 * size, on both sides (NVRTC has no offsetof in constant expressions, so field offsets are
 * asserted on the host only: with equal type sizes, alignments and total sizes the two sides lay
 * fields out alike). Plain C, no toolkit headers: embedded like the .cuh files, so kernels
 * include it by name. */
#ifndef GCR_ABI_H
#define GCR_ABI_H

#ifdef __CUDACC_RTC__
/* NVRTC has no <stdint.h>: the fixed-width types on the device, sizes asserted below */
typedef long long gcr_i64;
typedef int gcr_i32;
typedef unsigned int gcr_u32;
#define GCR_MAX_DIMS 8 /* gcr.h's value, asserted on the host */
#else
#include <stddef.h>
#include <stdint.h>
#include "gcr.h"
typedef int64_t gcr_i64;
typedef int32_t gcr_i32;
typedef uint32_t gcr_u32;
#endif

#ifdef __cplusplus
#define GCR_ABI_ASSERT(c, m) static_assert(c, m)
#define GCR_ABI_ALIGNOF(t) alignof(t)
#else
#define GCR_ABI_ASSERT(c, m) _Static_assert(c, m)
#define GCR_ABI_ALIGNOF(t) _Alignof(t)
#endif

/* dtype codes, equal to gcr_dtype (asserted on the host) */
#define GCR_DT_F32 0
#define GCR_DT_F16 1
#define GCR_DT_BF16 2
#define GCR_DT_I32 3
#define GCR_DT_I64 4
#define GCR_DT_BOOL 5
#define GCR_DT_NONE (-1) /* operand is not a tensor (scalar or missing input) */

/* reduction op codes: GCR_RED_OP of reduce.cuh (also reduce.c's kernel slots), and the OP template
 * argument of fused_reduce.cuh (the reductions capture/ codegen generates) */
#define GCR_RED_SUM 0
#define GCR_RED_MEAN 1
#define GCR_RED_MAX 2
#define GCR_FR_SUM 0
#define GCR_FR_MAX 1

#define GCR_PW_NIN 5 /* pointwise formula inputs a..e */

/* Bytes of one pipeline stage of gemm_tc.cuh's deep tiles (k-contiguous A and B, bm and bn rows of
 * a 64-byte k tile plus a 16-byte pad each): the host sizes their dynamic shared memory by it, the
 * kernel asserts its stage struct is this size. */
#define GCR_TC_STAGE_BYTES(bm, bn) (((bm) + (bn)) * 80)
#define GCR_TC_DEEP_ST 4 /* the deep tiles' stages */
/* gemm_tc.cuh's Hopper tiles (WG: wgmma, sm_90a): a stage is bm and bn rows of a 128-byte k tile,
 * unpadded (the 128-byte swizzle keeps ldmatrix-free wgmma reads off shared bank conflicts), in
 * GCR_TC_WG_ST stages; the host adds 1 KB so the kernel can align the stages to the 1024 bytes
 * the swizzle pattern repeats over. 3 stages of 128 x 128: 97 KB, two blocks per SM. */
#define GCR_TC_WG_STAGE_BYTES(bm, bn) (((bm) + (bn)) * 128)
#define GCR_TC_WG_ST 3
#define GCR_TC_WG_SMEM(bn) (GCR_TC_WG_ST * GCR_TC_WG_STAGE_BYTES(128, bn) + 1024)
/* gemm_tma.cuh's persistent TMA tile (sm_90a): GCR_TMA_ST stages of 128 A rows and GCR_TMA_BN B
 * rows of a 128-byte k tile (128 KB), the accumulators' staging [128][BN + 4] f32 (66 KB) and 1 KB
 * to align the stages to the swizzle's 1024 bytes: one block a SM, a producer warpgroup and two
 * consumer warpgroups */
#define GCR_TMA_BN 128
#define GCR_TMA_ST 4
#define GCR_TMA_THREADS 384
#define GCR_TMA_SMEM (GCR_TMA_ST * GCR_TC_WG_STAGE_BYTES(128, GCR_TMA_BN) + 128 * (GCR_TMA_BN + 4) * 4 + 1024)
#define GCR_CHAIN_THREADS 256 /* a chain kernel's block (kernels/chain.cuh: 8 warps) */
/* the 32-wide split-K tiles' stages, in dynamic shared memory (4: 51 KB, past the static 48 KB).
 * H100, f16, batch 1 in a replayed graph (bench/kernel_trace.sh, 2026-11-26): ResNet-50's 43 split
 * layers 474 -> 461 us (the forward 569 -> 556 us) at 4 stages against 3; 6 stages 461 us too;
 * MobileNet-v3's 6 unchanged (55 us), ResNet-50 at batch 32 unchanged */
#define GCR_TC_SK_ST 4
/* gemm_tc.cuh's row-stream tiles (128 rows by bn 32 or 64 columns): blocks per SM (their launch
 * bound, and the host's grid, which holds that many per SM at most), stages, and dynamic shared
 * memory: the stages and the whole tile's f32 accumulators staged for the epilogue (row pitch
 * bn + 4). */
#define GCR_TC_PS_BLOCKS(bn) ((bn) == 32 ? 4 : 3)
#define GCR_TC_PS_ST 2
#define GCR_TC_PS_SMEM(bn) (GCR_TC_PS_ST * GCR_TC_STAGE_BYTES(128, bn) + 128 * ((bn) + 4) * 4)

/* conv.cuh's patch tiles (kernels/patch.cuh, gcr_patch*): a block's output tile of GCR_PATCH_OH x
 * GCR_PATCH_OW pixels, its input patch of GCR_PATCH_ROWS rows at a pitch of GCR_PATCH_RS elements
 * (every input column of the tile's taps, C0 channels each, plus a spare element and rounded to
 * even), k ordered ky * RW + kx * C0 + c (RW: a kernel row's KW * C0 rounded up to even) and
 * padded to KP, a multiple of the mma's 16; the host sizes the dynamic shared memory with
 * GCR_PATCH_SMEM, the kernel lays it out the same way (patch.cuh's top comment). */
#define GCR_PATCH_BLOCKS 4 /* blocks per SM: the launch bound, and the most the host puts on one */
#define GCR_PATCH_OH 8
#define GCR_PATCH_OW 16
#define GCR_PATCH_RW(kw, c0) (((kw) * (c0) + 1) & ~1)
#define GCR_PATCH_KP(kh, kw, c0) (((kh) * GCR_PATCH_RW(kw, c0) + 15) & ~15)
#define GCR_PATCH_ROWS(kh, sh, dh) ((GCR_PATCH_OH - 1) * (sh) + ((kh) - 1) * (dh) + 1)
#define GCR_PATCH_RS(kw, sw, c0) ((((GCR_PATCH_OW - 1) * (sw) + (kw)) * (c0) + 2) & ~1)
#define GCR_PATCH_SMEM(bn, kh, kw, c0, sh, sw, dh)                                                          \
    ((bn) * (GCR_PATCH_KP(kh, kw, c0) + 8) * 2 + GCR_PATCH_KP(kh, kw, c0) * 4 + 4 * 16 * ((bn) + 8) * 4 +    \
     GCR_PATCH_ROWS(kh, sh, dh) * GCR_PATCH_RS(kw, sw, c0) * 2)
/* kernels/shortk.cuh: blocks per SM (launch bound; the host's grid), and the dynamic shared memory of
 * the bn-wide kernel (8 warps' staging areas of 16 rows at a pitch of bn + 8 floats) */
#define GCR_SHORTK_BLOCKS 2
#define GCR_SHORTK_SMEM(bn) (8 * 16 * ((bn) + 8) * 4)

/* Magic dividers of the dims of a collapsed shape (common.cuh gcr_div, host gcr_cuda_divs_init). */
typedef struct gcr_divs {
    gcr_u32 magic[GCR_MAX_DIMS], shift[GCR_MAX_DIMS];
} gcr_divs;

/* The dense engine's problem (gemm.cuh, whose top comment maps it to conv and GEMM terms). */
typedef struct gcr_dense_args {
    gcr_i64 M, N, K;                  /* rows, cols, reduction length (per z) */
    gcr_i64 OH, OW, H, W, KH, KW;     /* conv geometry; GEMM: OH = rows per batch item, OW = KH = KW = 1 */
    gcr_i64 sh, sw, ph, pw, dh, dw;
    gcr_i64 xs[4], ws[4], ys[4];      /* strides (elements): x [n,c,h,w], w [o,c,kh,kw], out [n,o,oh,ow] */
    gcr_i64 nz, zshape[4], zx[4], zw[4], zy[4]; /* z decomposed row-major over zshape: operand offsets */
    gcr_i64 zn, zc, zo;               /* hook coordinates: n += z*zn, c += z*zc, o += z*zo */
    gcr_i64 a_kfast, b_kfast;         /* operand contiguous along k: selects the coalesced load order */
    gcr_i64 vec_a, vec_b;             /* 16-byte loads along k: 1x1 taps, no padding, k contiguous, every
                                         offset a multiple of 16 bytes (gcr_cuda_dense_run checks and sets) */
    /* split-K (the tensor-core tile only, gemm_tc.cuh): ksplit > 1 blocks share each output tile,
     * split s reducing k tiles [s*kchunk, (s+1)*kchunk); grid x = row tiles * ksplit. part: f32
     * partials [tile][split][BM*BN]; sem: one arrival counter per output tile, 0 between kernels
     * (the last block to arrive resets it). Both the ctx's split-K workspace (dense.c). */
    gcr_i64 ksplit, kchunk;
    float *part;
    gcr_u32 *sem;
    /* magic dividers (common.cuh gcr_div) the tensor-core tile decodes with, set by
     * gcr_cuda_dense_run: a row index r < M by OH*OW (the image), its remainder by OW (the output
     * row); a reduction index k < K by K / (KH*KW) (the tap), the tap by KW (the kernel row) */
    gcr_u32 rdiv_m[4], rdiv_s[4];
    /* flat rows (set by gcr_cuda_dense_run, 0 where not): every row r < M of a 1x1 conv without
     * padding (or a GEMM) has x's offset r * fa (n*xs[0] + oy*sh*xs[2] + ox*sw*xs[3] is r * fa) and
     * its output's r * fc (n*ys[0] + oy*ys[2] + ox*ys[3]), so the tiles skip that decode */
    gcr_i64 fa, fc;
} gcr_dense_args;

/* Depthwise conv (conv.cuh gcr_dw_*). */
typedef struct gcr_dw_args {
    gcr_i64 N, C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
    gcr_i64 xs[4], ws[4], ys[4]; /* x [n,c,h,w], w [c,1,kh,kw], out [n,c,oh,ow] */
    gcr_i64 total;               /* N*C*OH*OW */
    gcr_i64 c_fast;              /* 1: consecutive threads take consecutive channels (NHWC out);
                                    2: the channels-last shared-memory tile (conv.cuh gcr_dw_tiled);
                                    3: 16-byte channel groups (conv.cuh gcr_dw_vec);
                                    4: the staged tile (dwstage.cuh gcr_dw_staged) */
    /* the tile (c_fast 2): 4-channel chunks per block, strips per tile row, tile rows, outputs per
     * strip, 16-byte loads/stores legal (C, strides and pointers), tiles in all; the staged tile
     * (c_fast 4): 16-byte channel groups per block, strips per tile row, tile rows, -, tvec,
     * tiles per channel block */
    gcr_i64 tq, tsx, tth, tr, tvec, ttiles;
} gcr_dw_args;

/* A depthwise conv and the 1x1 conv that reads its result, in one kernel (dwpw.cuh). */
typedef struct gcr_dwpw_args {
    gcr_i64 N, C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw; /* the depthwise conv */
    gcr_i64 O;                    /* the 1x1 conv's output channels */
    gcr_i64 M;                    /* output pixels, N * OH * OW (< 2^31) */
    gcr_i64 xs[4], ds[4], ys[4];  /* x [n,c,h,w], depthwise w [c,1,kh,kw], out [n,o,oh,ow] */
    gcr_i64 ws[2];                /* 1x1 w [o,c] */
    gcr_i64 xvec, wvec;           /* 16-byte loads of x's channel groups / of w's rows are legal */
    gcr_i64 kc;                   /* channels a step (a multiple of 16); x's offsets within an image
                                   * are below 2^31 */
    gcr_i64 wc;                   /* channels of the weights in shared memory: C rounded up to a
                                   * multiple of kc where they stay for the block's life (zeros past
                                   * C, which the last step's MMA reads), else kc (loaded a step) */
    gcr_i64 twl;                  /* a tile is (BM >> twl) output rows by 1 << twl columns */
    gcr_i64 hh, hw;               /* its input halo: rows, columns */
    gcr_i64 tiles_x, tiles_y, tiles; /* tiles across a row, down an image, in all (N images) */
    /* a tile's channel steps split over ksplit blocks (1: none), split s taking steps
     * [s * kchunk, min(nk, (s + 1) * kchunk)), none empty; the grid walks tiles * ksplit items
     * (item w: tile w / ksplit, split w % ksplit). part: each item's f32 partial 1x1 sums in the
     * MMA fragments' order, [item][8 warps][NT][32 lanes][4]; sem: one arrival counter per tile,
     * 0 between kernels; the last split of a tile to arrive sums them in split order and runs the
     * epilogue. Both from the ctx's split-K scratch (scratch.c). */
    gcr_i64 ksplit, kchunk;
    float *part;
    gcr_u32 *sem;
} gcr_dwpw_args;
/* its tile: GCR_DWPW_BM(bn) pixels of one image (128 up to bn 64, its 8 warps taking every column;
 * else 64, as 4 x 2 warps) by kc channels a step, rows padded by 8 halves. Dynamic shared memory:
 * the taps [taps][wc] and the depthwise bias [wc] f32, the 1x1 weights [bn][wc + 8] 16-bit, two
 * input halos [hh * hw][kc] 16-bit (one filling by cp.async while the other is read), and the A
 * tile [BM][kc + 8] 16-bit, which the epilogue's staging [8 warps][16][bn / WN + 8] f32 reuses. Blocks per SM its
 * registers allow: GCR_DWPW_MINB(bn). */
#define GCR_DWPW_BM(bn) ((bn) <= 64 ? 128 : 64)
/* what the kernel takes (the CUDA backend's gcr_convconv_caps, the launcher's check, the names):
 * depthwise channels a multiple of 8 (16-byte groups of 16-bit values), at most 256 outputs (bn) */
#define GCR_DWPW_C_ALIGN 8
#define GCR_DWPW_MAX_OUT 256
#define GCR_DWPW_WN(bn) ((bn) <= 64 ? 1 : 2)
#define GCR_DWPW_STAGE(bn) (8 * 16 * ((bn) / GCR_DWPW_WN(bn) + 8) * 4)
#define GCR_DWPW_SMEM(bn, taps, wc, kc, halo)                                                           \
    ((taps) * (wc) * 4 + (wc) * 4 + (bn) * ((wc) + 8) * 2 + 2 * (halo) * (kc) * 2 +                    \
     (GCR_DWPW_BM(bn) * ((kc) + 8) * 2 > GCR_DWPW_STAGE(bn) ? GCR_DWPW_BM(bn) * ((kc) + 8) * 2 : GCR_DWPW_STAGE(bn)))
#define GCR_DWPW_MINB(bn) ((bn) <= 128 ? 2 : 1)
/* an item's partial sums under a split (ksplit > 1): 8 warps x NT 8-column MMA tiles x 32 lanes x 4 */
#define GCR_DWPW_PART(bn) (8 * ((bn) / (8 * GCR_DWPW_WN(bn))) * 32 * 4)
/* the most depthwise outputs a thread computes along a row, sharing their input columns, in the
 * kernel variant of ks x ks taps at stride st (0: any taps, stride and dilation) */
#define GCR_DWPW_RMAX(ks, st) ((ks) && (st) ? ((ks) == 3 && (st) == 1 ? 4 : 2) : 1)

/* Pooling (pool.cuh). */
typedef struct gcr_pool_args {
    gcr_i64 N, C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw;
    gcr_i64 xs[4], ys[4]; /* x [n,c,h,w], out [n,c,oh,ow] */
    gcr_i64 total;        /* N*C*OH*OW (gap kernels: N*C) */
    gcr_i64 c_fast;       /* 1: consecutive threads take consecutive channels */
    gcr_i64 mode;         /* 0 max, 1 avg, 2 adaptive avg */
    gcr_i64 count_include_pad;
    /* gap_cols split over pixels (grid z = splits > 1): f32 partials [group][split][channels of a
     * block] and one arrival counter per group (image x block of channels), 0 between kernels
     * (split-K's scratch) */
    float *part;
    gcr_u32 *sem;
    gcr_i64 splits;
    gcr_i64 vec; /* gap_cols: 1 where every pixel's channels load as 16-byte vectors (pool.c) */
} gcr_pool_args;

/* Strided copy by element size (movement.cuh gcr_copy_*). */
typedef struct gcr_copy_args {
    void *dst;
    const void *src;
    gcr_i64 n;
    gcr_i32 nd;
    gcr_i32 fast; /* n and both spans < 2^31: magic dividers, 32-bit offsets */
    gcr_i64 shape[GCR_MAX_DIMS], dst_st[GCR_MAX_DIMS], src_st[GCR_MAX_DIMS];
    gcr_divs divs;
} gcr_copy_args;

/* Batched 2-d transpose (movement.cuh gcr_transpose_*): dst[a][p][q] = src element (a, p, q) at
 * a*sa + p + q*P (the source is [A][Q][P] with its own batch stride). */
typedef struct gcr_transpose_args {
    void *dst;
    const void *src;
    gcr_i64 P, Q, sa, da;
} gcr_transpose_args;

/* Pointwise over operands of one layout (pointwise.cuh gcr_pw_flat / gcr_pw_vec). */
typedef struct gcr_pw_flat_args {
    void *out;
    const void *in[GCR_PW_NIN];
    gcr_i64 n;
    float p0, p1, s;
    gcr_i32 bmask;
} gcr_pw_flat_args;

/* Pointwise over strided operands (pointwise.cuh gcr_pw_nd): st[0] is out, st[1..5] inputs a..e. */
typedef struct gcr_pw_nd_args {
    void *out;
    const void *in[GCR_PW_NIN];
    gcr_i64 n;
    float p0, p1, s;
    gcr_i32 ndim;
    gcr_i32 fast; /* n and every operand's span < 2^31: magic dividers, 32-bit offsets */
    gcr_i64 shape[GCR_MAX_DIMS];
    gcr_i64 st[1 + GCR_PW_NIN][GCR_MAX_DIMS];
    gcr_divs divs;
} gcr_pw_nd_args;

/* SUM / MEAN / MAX over any axes (reduce.cuh). */
typedef struct gcr_red_args {
    void *out;
    const void *in;
    gcr_i64 n_out, n_red;
    gcr_i32 nd_out, nd_red;
    gcr_i64 oshape[GCR_MAX_DIMS], ost[GCR_MAX_DIMS];
    gcr_i64 rshape[GCR_MAX_DIMS], rst[GCR_MAX_DIMS];
    double scale;            /* MEAN: 1 / n_red (nan when empty); else 1 */
    double *part;            /* gcr_reduce_part/fin: [n_out, splits] partials */
    gcr_i64 splits, chunk;   /* split s of a row covers reduced indices [s*chunk, (s+1)*chunk) */
} gcr_red_args;

/* Both sides: the field types' sizes and alignments, then each struct's size. */
#define GCR_ABI_TYPE(t, n)                                                                                \
    GCR_ABI_ASSERT(sizeof(t) == n && GCR_ABI_ALIGNOF(t) == n, "abi.h: " #t " must be " #n " bytes, aligned")
GCR_ABI_TYPE(gcr_i64, 8);
GCR_ABI_TYPE(gcr_i32, 4);
GCR_ABI_TYPE(gcr_u32, 4);
GCR_ABI_TYPE(float, 4);
GCR_ABI_TYPE(double, 8);
GCR_ABI_TYPE(void *, 8);
#undef GCR_ABI_TYPE

#define GCR_ABI_SIZE(t, n) GCR_ABI_ASSERT(sizeof(t) == n, "abi.h: " #t " is " #n " bytes on host and device")
GCR_ABI_SIZE(gcr_divs, 64);
GCR_ABI_SIZE(gcr_dense_args, 488);
GCR_ABI_SIZE(gcr_dw_args, 272);
GCR_ABI_SIZE(gcr_pool_args, 240);
GCR_ABI_SIZE(gcr_dwpw_args, 352);
GCR_ABI_SIZE(gcr_copy_args, 288);
GCR_ABI_SIZE(gcr_transpose_args, 48);
GCR_ABI_SIZE(gcr_pw_flat_args, 72);
GCR_ABI_SIZE(gcr_pw_nd_args, 592);
GCR_ABI_SIZE(gcr_red_args, 328);
#undef GCR_ABI_SIZE

#ifndef __CUDACC_RTC__
/* Host only: the codes and dims the kernels are built with equal gcr.h's, and the offsets of the
 * fields that follow a change of field size (where padding rules could differ). */
GCR_ABI_ASSERT(GCR_DT_F32 == GCR_F32 && GCR_DT_F16 == GCR_F16 && GCR_DT_BF16 == GCR_BF16 && GCR_DT_I32 == GCR_I32 &&
                   GCR_DT_I64 == GCR_I64 && GCR_DT_BOOL == GCR_BOOL && GCR_DTYPE_COUNT == 6,
               "abi.h: the kernels' dtype codes must equal gcr_dtype");
GCR_ABI_ASSERT(GCR_MAX_DIMS == 8, "abi.h: the kernels are built for GCR_MAX_DIMS 8 (the NVRTC branch above)");
#define GCR_ABI_AT(t, f, n) GCR_ABI_ASSERT(offsetof(t, f) == n, "abi.h: " #t "." #f " at byte " #n)
GCR_ABI_AT(gcr_divs, shift, 32);
GCR_ABI_AT(gcr_dense_args, vec_b, 400);
GCR_ABI_AT(gcr_dense_args, sem, 432);
GCR_ABI_AT(gcr_dense_args, rdiv_m, 440);
GCR_ABI_AT(gcr_dense_args, fa, 472);
GCR_ABI_AT(gcr_dw_args, c_fast, 216);
GCR_ABI_AT(gcr_dw_args, ttiles, 264);
GCR_ABI_AT(gcr_pool_args, count_include_pad, 200);
GCR_ABI_AT(gcr_pool_args, splits, 224);
GCR_ABI_AT(gcr_pool_args, vec, 232);
GCR_ABI_AT(gcr_copy_args, nd, 24);
GCR_ABI_AT(gcr_copy_args, fast, 28);
GCR_ABI_AT(gcr_copy_args, shape, 32);
GCR_ABI_AT(gcr_copy_args, divs, 224);
GCR_ABI_AT(gcr_transpose_args, P, 16);
GCR_ABI_AT(gcr_pw_flat_args, n, 48);
GCR_ABI_AT(gcr_pw_flat_args, p0, 56);
GCR_ABI_AT(gcr_pw_flat_args, bmask, 68);
GCR_ABI_AT(gcr_pw_nd_args, n, 48);
GCR_ABI_AT(gcr_pw_nd_args, p0, 56);
GCR_ABI_AT(gcr_pw_nd_args, ndim, 68);
GCR_ABI_AT(gcr_pw_nd_args, fast, 72);
GCR_ABI_AT(gcr_pw_nd_args, shape, 80);
GCR_ABI_AT(gcr_pw_nd_args, st, 144);
GCR_ABI_AT(gcr_pw_nd_args, divs, 528);
GCR_ABI_AT(gcr_red_args, nd_out, 32);
GCR_ABI_AT(gcr_red_args, nd_red, 36);
GCR_ABI_AT(gcr_red_args, oshape, 40);
GCR_ABI_AT(gcr_red_args, scale, 296);
GCR_ABI_AT(gcr_red_args, part, 304);
GCR_ABI_AT(gcr_red_args, splits, 312);
#undef GCR_ABI_AT
#endif

#endif
