/* dense.c — the dense engine: for a problem in conv terms (gcr_dense_args, kernels/abi.h) it picks
 * the kernel and launches it: the implicit GEMM of kernels/gemm.cuh (every non-depthwise conv,
 * 1x1 included as a plain GEMM, and matmul/linear), its GEMV kernel when there are at most 8 rows,
 * the streaming tensor-core tile of kernels/gemm_tc.cuh (f16/bf16 1x1 convs and GEMMs, and every
 * other conv whose x and weights are channels-last, as an implicit GEMM; f32 with knobs.tf32; its
 * products on wgmma where programs are built for sm_90a), the patch tiles of kernels/patch.cuh
 * (f16/bf16 convs of fewer channels per group than a 16-byte chunk: the RGB stems) or
 * conv.cuh's direct kernel (short reductions). conv.c and matmul.c describe their calls
 * as problems; the kernel's program comes through hooks.c. */
#include "dense.h"
#include "autotune.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The 16-byte load paths (kernels/gemm.cuh, vec_a/vec_b) of the f32 engine, the 64 and tall mma
 * tiles and the GEMV kernel: on (1), as test_cuda_dense checks them on a GPU; build with
 * -DVEC_UNVERIFIED=0 to leave only the mma 32x32 tile's on, the first of them to be verified. */
#ifndef VEC_UNVERIFIED
#define VEC_UNVERIFIED 1
#endif

/* The streaming tensor-core tile (kernels/gemm_tc.cuh) for f16/bf16 1x1 convs and GEMMs with
 * 16-byte operand chunks and enough 128-row tiles to fill the device; for f32 ones in the
 * k-contiguous layout too when knobs.tf32 asks for TF32. */
#ifndef GCR_DENSE_TC
#define GCR_DENSE_TC 1
#endif

/* the longest reduction, in k tiles of 64 bytes, the heuristic puts on the row-stream tiles */
#ifndef GCR_TC_PS_NK
#define GCR_TC_PS_NK 5
#endif

/* conv.cuh's direct kernel for short reductions (the stem) */
#ifndef GCR_DENSE_DIRECT
#define GCR_DENSE_DIRECT 1
#endif

/* batch-1 classifier / squeeze-excite: a warp per output column streams the weights (kernels/gemm.cuh
 * gcr_gemv_*), for at most 8 rows of 1x1 taps without padding and weights contiguous along k */
static bool gemv_fits(const gcr_dense_args *a)
{
    return a->M <= 8 && a->KH * a->KW == 1 && a->ph == 0 && a->pw == 0 && a->b_kfast;
}

/* The tensor-core tile's implicit GEMM (kernels/gemm_tc.cuh, AT 3): x and w channels-last (the
 * channel stride 1, every other stride of a dim longer than 1 and every group offset a whole
 * number of 16-byte chunks of ch elements), C = K / taps channels per group a multiple of ch, both
 * pointers 16-byte aligned. Covers every tap shape, stride, padding and dilation; a 1x1 without
 * padding that also fits the plain k-contiguous tile (AT 0) takes that one (no tap decode). */
static int implicit_fits(const gcr_dense_args *a, int64_t ch, const void *x, const void *w)
{
    int64_t taps = a->KH * a->KW;
    int ok = (taps > 1 || a->ph || a->pw) && a->K % taps == 0 && (a->K / taps) % ch == 0 && a->xs[1] == 1 && a->ws[1] == 1 &&
             (uintptr_t)x % 16 == 0 && (uintptr_t)w % 16 == 0;
    /* a dim of extent 1 is never stepped along: its stride is whatever the layout says (a 1x1
     * filter's kh and kw strides, say) */
    const int64_t xe[4] = {2, 1, a->H, a->W}, we[4] = {a->N, 1, a->KH, a->KW};
    for (int i = 0; i < 4; i++)
        ok &= i == 1 || ((xe[i] == 1 || a->xs[i] % ch == 0) && (we[i] == 1 || a->ws[i] % ch == 0));
    for (int i = 0; i < a->nz; i++) ok &= a->zx[i] % ch == 0 && a->zw[i] % ch == 0;
    return ok;
}

/* Past 65535 x 32 columns the engine's tiles are at least 64 columns wide (a 32-wide tile is picked
 * only when the 64-wide ones would not give every SM a block), and grid y holds at most 65535 of
 * them; the GEMV kernel puts its columns along grid x instead. */
#define DENSE_COL_TILE 64

int gcr_cuda_dense_limits(const gcr_dense_args *a, gcr_cuda_limit *l)
{
    int n = 0;
    l[n++] = (gcr_cuda_limit){"batch dims that do not collapse (grid z)", a->nz, 4};
    if (a->nz > 4) return n; /* zshape holds 4 */
    int64_t z = 1;
    for (int i = 0; i < a->nz; i++) z *= a->zshape[i];
    l[n++] = (gcr_cuda_limit){"batch items (grid z)", z, 65535};
    l[n++] = (gcr_cuda_limit){"GEMM rows", a->M, GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"GEMM columns", a->N, GCR_CUDA_IDX_MAX};
    if (!gemv_fits(a))
        l[n++] = (gcr_cuda_limit){"GEMM column tiles of 64 (grid y)", (a->N + DENSE_COL_TILE - 1) / DENSE_COL_TILE, 65535};
    l[n++] = (gcr_cuda_limit){"GEMM reduction length", a->K, GCR_CUDA_IDX_MAX};
    return n;
}

/* The engine's candidate kernels for one problem: the heuristic's pick (def) and every other legal
 * tactic GCR_AUTOTUNE may measure instead, with the problem as the kernels get it (v: vec flags set). */
typedef struct dense_plan {
    gcr_dense_args v;
    gcr_dtype dt;
    int tf32;
    gcr_cuda_tactic t[GCR_CUDA_TUNE_MAX];
    int n, def;
    int pro; /* a fused prologue on x (gcr_cuda_hooks.prologue) */
    int64_t kt[GCR_CUDA_TUNE_MAX]; /* each split-K tactic's k tile (elements): 64 bytes, 128 on the WG tiles */
    float *part;   /* ... and its workspace (kept out of v, which keys GCR_AUTOTUNE's choices) */
    gcr_u32 *sem;
} dense_plan;

/* adds kernel <name> with grid gx x gy (x z), split ks ways along k, unless grid y is past its
 * 65535 limit; returns its index */
static int add_tactic(dense_plan *p, const char *name, int64_t gx, int64_t gy, int64_t z, int64_t ks)
{
    if (p->n == GCR_CUDA_TUNE_MAX || gy > 65535 || gx > 0x7fffffff) return -1;
    gcr_cuda_tactic *t = &p->t[p->n];
    *t = (gcr_cuda_tactic){
        .gx = (unsigned)gx, .gy = (unsigned)gy, .gz = (unsigned)z, .threads = 256, .ks = (unsigned)ks};
    snprintf(t->name, sizeof t->name, "%s", name);
    return p->n++;
}

/* adds the tensor-core tile gcr_dense_tc<bn><kind>_<sfx> over a's row tiles of 128, each split ks
 * ways along k (1: none); returns its index or -1 */
static int add_tc(dense_plan *p, int bn, const char *kind, const char *sfx, const gcr_dense_args *a, int64_t z,
                  int64_t ks)
{
    char name[48];
    snprintf(name, sizeof name, "gcr_dense_tc%d%s_%s", bn, kind, sfx);
    return add_tactic(p, name, (a->M + 127) / 128 * ks, (a->N + bn - 1) / bn, z, ks);
}

/* adds the row-stream tile gcr_dense_tc<bn>p_<sfx> (gemm_tc.cuh PS): GCR_TC_PS_BLOCKS(bn) blocks per
 * SM in all, each walking at least 2 of a's row tiles (a block with one has nothing to overlap);
 * returns its index or -1 */
static int add_stream(dense_plan *p, int bn, const char *sfx, const gcr_dense_args *a, int64_t z, int64_t sms)
{
    const int64_t trows = (a->M + 127) / 128, gy = (a->N + bn - 1) / bn, slots = sms * GCR_TC_PS_BLOCKS(bn);
    int64_t per = (trows * gy * z + slots - 1) / slots;
    if (per < 2) per = 2;
    char name[48];
    snprintf(name, sizeof name, "gcr_dense_tc%dp_%s", bn, sfx);
    int i = add_tactic(p, name, (trows + per - 1) / per, gy, z, 1);
    if (i >= 0) p->t[i].smem = GCR_TC_PS_SMEM(bn);
    return i;
}

/* A tactic's name for forcing and reports: the kernel's, plus "/s<ks>" when split along k. */
static const char *tactic_id(const gcr_cuda_tactic *t, char *buf, size_t n)
{
    if (t->ks > 1) snprintf(buf, n, "%s/s%u", t->name, t->ks);
    else snprintf(buf, n, "%s", t->name);
    return buf;
}

/* Split-K for the tensor-core tile of bn columns with `tiles` output tiles over nk k tiles: about
 * two blocks per SM in all (so each SM has a second block to overlap loads with), at least 4 k tiles
 * a split (the last one may have fewer, never none) and at most 8 splits (the last block of a tile
 * reads every split's partials back, a round of L2 latency each), the partials within the ctx's
 * workspace. 0: no split worth having. */
static int64_t split_ways(int64_t tiles, int64_t nk, int64_t bn, int64_t sms)
{
    if (tiles <= 0 || tiles > GCR_CUDA_SPLITK_TILES) return 0;
    int64_t ks = (2 * sms + tiles - 1) / tiles;
    if (ks > nk / 4) ks = nk / 4;
    if (ks > 8) ks = 8;
    int64_t cap = (int64_t)(GCR_CUDA_SPLITK_BYTES / ((size_t)tiles * 128 * (size_t)bn * sizeof(float)));
    if (ks > cap) ks = cap;
    if (ks < 2) return 0;
    int64_t chunk = (nk + ks - 1) / ks;
    return (nk + chunk - 1) / chunk; /* no split left without k tiles */
}

/* The split-K workspace into p for its split tactics, 1 when it exists: the workspace (16 MB) is
 * made for a split the heuristic takes, one GCR_AUTOTUNE may time or a test may force; a mere
 * candidate under heuristics uses it only if it exists. */
static int split_workspace(gcr_ctx *ctx, dense_plan *p, int takes)
{
    const int make = takes || ctx->knobs.autotune == 1 || gcr_cuda_st(ctx)->dense_force;
    return gcr_cuda_splitk_ws(ctx, make, &p->part, &p->sem);
}

/* The Hopper tile (gemm_tc.cuh WG: the 128-row tile's product on wgmma, 128-byte k tiles) bn
 * columns wide of problem a in layout at (0 or 3), f16, bf16 or f32 in TF32, into p: unsplit, and
 * split along k where split_ways offers a split; returns the unsplit one's index (or -1), and in
 * *split the split one's where its blocks give at least 3/4 of the SMs one and each split has at
 * least 8 k tiles (else -1). split_takes: the heuristic takes that split (its workspace is made
 * for it). */
static int wg_at(gcr_ctx *ctx, dense_plan *p, const gcr_dense_args *a, int at, int64_t z, int64_t sms, int bn,
                 int split_takes, int *split)
{
    const char *sfx = p->tf32 ? "tf32" : gcr_cuda_dt_suffix(p->dt);
    const int64_t tiles = (a->M + 127) / 128 * ((a->N + bn - 1) / bn) * z, bk = 128 / (int64_t)gcr_dtype_size(p->dt);
    const int64_t nk = (a->K + bk - 1) / bk, ks = split_ways(tiles, nk, bn, sms);
    const int fills = ks >= 2 && 4 * tiles * ks >= 3 * sms && nk / ks >= 8;
    *split = -1;
    int u = add_tc(p, bn, at == 3 ? "kw" : "w", sfx, a, z, 1);
    if (u < 0) return -1;
    p->t[u].smem = GCR_TC_WG_SMEM(bn);
    if (ks < 2 || !split_workspace(ctx, p, split_takes && fills)) return u;
    int i = add_tc(p, bn, at == 3 ? "kws" : "ws", sfx, a, z, ks);
    if (i < 0) return u;
    p->t[i].smem = GCR_TC_WG_SMEM(bn);
    p->kt[i] = bk;
    if (fills) *split = i;
    return u;
}

/* The Hopper tiles of problem a: the width N asks for (128 or 64), unsplit and split (wg_at), and
 * where N is wider than 64 but its 128-wide tiles are fewer than the SMs, the 64-wide unsplit tile
 * too. The heuristic takes them over every mma.sync tile, f16 and bf16 with K at least a k tile
 * (64), by the counts of unsplit tiles T128 and T64 of each width against the SMs and the k tiles
 * nk:
 *  - T128 >= sms (N > 64; T64 for N <= 64): that width's tile (H200, f16, ResNet-50 at batch 32
 *    and 128: 1.4-1.9x faster on every such layer with N > 64 but the 7x7 3x3s, 1.09-1.12x over
 *    the row streams on its K-64 1x1);
 *  - else T64 > sms: still the 128-wide one, one partial wave of wide tiles over two of narrow ones
 *    (ResNet-50's 14x14 layers at batch 32, 98 tiles: 15.3 us against 17.5 at 64 wide and 26.2
 *    split two ways; MobileNet-v3's 7x7 1x1s into 160 at batch 128: 12.9 against 14.2);
 *  - else T64 >= sms / 4: the 64-wide tile, one wave (ResNet-50's 7x7 layers at batch 32, 104
 *    tiles: 17.8 against 23.7 at 128 wide and 28.4 split; MobileNet-v3's 1x1s into 40-960 at batch
 *    8 and 32, 39-98 tiles: 0.48-0.69x the tiles they took before);
 *  - else over an mma.sync split pick where nk <= 12, or nk <= 16 with T64 >= sms / 12: the 64-wide
 *    tile still (ResNet-50's 1x1s and 56x56 3x3 at batch 1, 14-32 tiles: 0.48-0.82x the split;
 *    MobileNet-v3's 1x1s into 80 and 112 at batch 1, 4 tiles of 4 and 11 k tiles: 0.64-0.94x), but
 *    not over a small unsplit mma.sync tile (MobileNet-v3's batch-1 1x1s with 2-3 k tiles: 1.11x)
 *    nor over splits of longer reductions (1.07-1.24x with 15 or 16 k tiles over 3-8 tiles), nor
 *    where a fused prologue rewrites x's chunks, which the split spreads over more SMs (the
 *    squeeze-excite projections 480 / 672 -> 112 / 160 at batch 1, 3-4 tiles, in the replayed
 *    model: 10.3 / 11.5 / 8.7 us on the mma.sync split against 11.1 / 14.9 / 11.5 on this tile);
 *  - else the split tile, where it gives 3/4 of the SMs a block with 8 k tiles a split (ResNet-50's
 *    7x7 3x3 at batch 8, 16 tiles 8 ways: 25.2 against 28.7 on the mma.sync split); where even that
 *    leaves SMs idle, the mma.sync split tiles (the same 3x3 at batch 1: 15.0 against 17.8).
 * Those figures are graph-timed per layer (H200, bench/ab_conv.sh and bench/tactics.sh,
 * 2026-11-27). In TF32 these tiles are candidates only (GCR_AUTOTUNE, forcing): a k step is 32
 * floats, half the 16-bit one's work for the same barrier and loads, and they reached 62-84
 * TFLOP/s on ResNet-50's batch-128 layers (H200, 13-17% of the TF32 peak). */
static void wg_tactics(gcr_ctx *ctx, dense_plan *p, const gcr_dense_args *a, int at, int64_t z, int64_t sms)
{
    const int64_t trows = (a->M + 127) / 128, bk = 128 / (int64_t)gcr_dtype_size(p->dt), nk = (a->K + bk - 1) / bk;
    const int64_t t128 = trows * ((a->N + 127) / 128) * z, t64 = trows * ((a->N + 63) / 64) * z;
    const int wide = a->N > 64;
    const int64_t t0 = wide ? t128 : t64;
    /* the heuristic's take: 0 none (TF32, K under a k tile), 1 the first width's unsplit tile, 2 its
     * split, 3 the 64-wide unsplit one */
    const int over_split = !p->pro && p->def >= 0 && p->t[p->def].ks > 1 && (nk <= 12 || (nk <= 16 && 12 * t64 >= sms));
    int rule = p->tf32 || a->K < bk ? 0 : t0 >= sms || (wide && t64 > sms) ? 1 : 4 * t64 >= sms || over_split ? 3 : 2;
    if (rule == 3 && !wide) rule = 1;
    int s, u = wg_at(ctx, p, a, at, z, sms, wide ? 128 : 64, rule == 2, &s);
    if (rule == 1 && u >= 0) p->def = u;
    if (rule == 2 && s >= 0) p->def = s;
    if (!wide || t128 >= sms) return;
    int i = add_tc(p, 64, at == 3 ? "kw" : "w", p->tf32 ? "tf32" : gcr_cuda_dt_suffix(p->dt), a, z, 1);
    if (i < 0) return;
    p->t[i].smem = GCR_TC_WG_SMEM(64);
    if (rule == 3) p->def = i;
}

/* The patch tiles (kernels/patch.cuh) of problem a, c0 channels per group, into p: f16 and bf16
 * convs with fewer channels per group than a 16-byte chunk, taps, column dilation 1 and a patch
 * that leaves room for 2 blocks per SM; 16, 32 and 64 columns wide (no wider than N needs), each
 * block walking tiles of GCR_PATCH_OH x GCR_PATCH_OW output pixels, as many blocks as fit the SMs
 * (GCR_PATCH_BLOCKS). The heuristic takes them over every other tactic, the widest whose blocks
 * give every SM two, else the narrowest. H200, f16, graph-timed per layer (bench/conv_bench.c,
 * 2026-11-27): MobileNet-v3's 3x3 stem into 16 at batch 32 / 128 18.7 / 73.9 us, 42.6 / 164 on the
 * direct kernel before (cuDNN 19.9 / 76.4); ResNet-50's 7x7 into 64 at batch 1 / 32 / 128 11.5 /
 * 84.7 / 220 us, 14.2 / 172 / 671 on the implicit GEMM's small-channel tile (AT 4) before (cuDNN
 * 14.3 / 82.5 / 278). At batch 1 ResNet-50's stem has 98 output tiles: 16 wide, 392 blocks, took
 * half the 64-wide tile's time. */
static void patch_tactics(gcr_ctx *ctx, dense_plan *p, const gcr_dense_args *a, int64_t c0, int64_t z, int64_t sms)
{
    const int64_t taps = a->KH * a->KW;
    if (p->dt == GCR_F32 || gcr_cuda_arch(ctx) < 80 || taps < 2 || c0 < 1 || c0 >= 8 || a->K != c0 * taps ||
        a->dw != 1 || a->M <= 0 || a->OH * a->OW <= 0 || a->KH > 64 || a->KW > 64 || a->sh > 64 || a->sw > 64 ||
        a->dh > 64)
        return;
    /* output tiles per z (one image's times the images), the grid's x at most */
    const int64_t tiles = a->M / (a->OH * a->OW) * ((a->OH + GCR_PATCH_OH - 1) / GCR_PATCH_OH) *
                          ((a->OW + GCR_PATCH_OW - 1) / GCR_PATCH_OW);
    int pick = -1;
    for (int bn = 16; bn <= 64; bn *= 2) {
        if (bn > 16 && a->N <= bn / 2) break; /* a wider tile than N needs */
        const int64_t smem = GCR_PATCH_SMEM((int64_t)bn, a->KH, a->KW, c0, a->sh, a->sw, a->dh);
        if (smem > 96 * 1024) break;
        int64_t per = GCR_PATCH_BLOCKS, cols = (a->N + bn - 1) / bn;
        while (per > 2 && per * smem > 200 * 1024) per--;
        char name[48];
        snprintf(name, sizeof name, "gcr_patch%d_%s", bn, gcr_cuda_dt_suffix(p->dt));
        int i = add_tactic(p, name, tiles < per * sms ? tiles : per * sms, cols, z, 1);
        if (i < 0) break;
        p->t[i].threads = 128;
        p->t[i].smem = (unsigned)smem;
        if (pick < 0 || tiles * cols * z >= 2 * sms) pick = i;
    }
    if (pick >= 0) p->def = pick;
}

/* The short-reduction tiles (kernels/shortk.cuh) of problem a into p: f16 and bf16 1x1s and GEMMs
 * with K <= 32 in the k-contiguous layout with 16-byte loads (v: vec_a and vec_b), 16, 32 and 64
 * columns wide (no wider than N needs), each warp walking groups of 64 rows (32 at K > 16), as many
 * blocks as GCR_SHORTK_BLOCKS per SM hold. The heuristic takes them over every other tactic for N
 * <= 64, and for wider N where the 32-wide one gives each warp of the grid fewer than 8 groups of
 * rows (past that the shared-memory tiles read A once for more columns): 32 wide where those
 * blocks fill the SMs, else 16 wide (more blocks). The 64-wide one is a candidate only (128
 * registers a thread: 2 blocks of 8 warps). H200, f16, MobileNet-v3's short-K 1x1s
 * (bench/tactics.sh and bench/conv_layers-h200-2026-11-27.md): K 16 into 16 at batch 1 / 32 / 128
 * 5.8 / 13.0 / 40.3 us against 7.8 / 24.9 / 89.7 on the mma and row-stream tiles (cuDNN 13.8 at
 * 32, 44.6 at 128); K 16 into 64 at batch 8 / 32 / 128 11.7 / 30.8 / 112 against 15.0 / 40.9 / 150
 * (64 wide 13.8 / 40.0 / 126); K 24 into 72 at batch 1 / 8 / 32 5.0 / 8.2 / 17.2 against 7.6 / 9.2 /
 * 19.9 on the mma and tc tiles, but at batch 128 the row stream's 65.1 against 76.5 on the
 * 64-wide shortk. */
static void shortk_tactics(gcr_ctx *ctx, dense_plan *p, const gcr_dense_args *v, int64_t z, int64_t sms)
{
    if (p->dt == GCR_F32 || gcr_cuda_arch(ctx) < 80 || !v->vec_a || !v->vec_b || v->KH * v->KW != 1 || v->ph ||
        v->pw || v->K > 32 || v->M <= 8)
        return;
    const int64_t rows = v->K <= 16 ? 64 : 32, groups = (v->M + rows - 1) / rows, slots = sms * GCR_SHORTK_BLOCKS;
    for (int bn = 16; bn <= 64; bn *= 2) {
        if (bn > 16 && v->N <= bn / 2) break; /* a wider tile than N needs */
        const int64_t cols = (v->N + bn - 1) / bn, blocks = (groups + 7) / 8;
        char name[48];
        snprintf(name, sizeof name, "gcr_shortk%d_%s", bn, gcr_cuda_dt_suffix(p->dt));
        int i = add_tactic(p, name, blocks < slots ? blocks : slots, cols, z, 1);
        if (i < 0) return;
        p->t[i].smem = GCR_SHORTK_SMEM(bn);
        if (bn == 64 || (v->N > 64 && groups * ((v->N + 31) / 32) * z >= 64 * slots)) continue;
        if (bn == 16 || blocks * cols * z >= slots) p->def = i;
    }
}

/* The persistent TMA tile (kernels/gemm_tma.cuh) of plan p's problem: f16 and bf16 in the
 * k-contiguous layout (vec_a, vec_b) with flat rows, x's row stride and the weights' whole 16-byte
 * chunks, one z, rows and columns below 2^31, where the driver encodes tensor maps; a block a SM,
 * no more than the output tiles. A candidate only (GCR_AUTOTUNE, or a test forcing "tma"): on an
 * H200 it beat the heuristic's tiles only where K and N are both large, and lost up to 5x on short K
 * or narrow N (bench/results/tma-prologue-h200-2026-11-28.md). */
static void tma_tactic(dense_plan *p, const void *x, const void *w, int64_t z, int64_t sms)
{
    const gcr_dense_args *v = &p->v;
    const gcr_cuda_drv *d = gcr_cuda_driver(NULL);
    if (!d || !d->tensor_map_encode_tiled || z != 1 || !v->vec_a || !v->vec_b || v->fa <= 0 || v->fa % 8 ||
        v->ws[1] != 1 || v->ws[0] <= 0 || v->ws[0] % 8 || v->K < 8 || v->M <= 0 || v->N <= 0 || v->M > INT32_MAX ||
        v->N > INT32_MAX || (uintptr_t)x % 16 || (uintptr_t)w % 16)
        return;
    const int64_t tiles = (v->M + 127) / 128 * ((v->N + GCR_TMA_BN - 1) / GCR_TMA_BN);
    char name[48];
    snprintf(name, sizeof name, "gcr_tma128_%s", gcr_cuda_dt_suffix(p->dt));
    int i = add_tactic(p, name, tiles < sms ? tiles : sms, 1, 1, 1);
    if (i < 0) return;
    p->t[i].threads = GCR_TMA_THREADS;
    p->t[i].smem = GCR_TMA_SMEM;
}

/* The TMA tile's tensor maps of x (K x M rows of stride fa) and w (K x N rows of stride ws[0]), in
 * the 128-byte boxes and swizzle the kernel reads; zeros past M, N and K */
static gcr_status tma_maps(gcr_ctx *ctx, gcr_dtype dt, const gcr_dense_args *v, const void *x, const void *w,
                           CUtensorMap *ma, CUtensorMap *mb)
{
    const gcr_cuda_drv *d = gcr_cuda_driver(ctx);
    if (!d) return GCR_ERR_DEVICE;
    GCR_CHECK(ctx, d->tensor_map_encode_tiled, GCR_ERR_INTERNAL, "cuda dense: a TMA tile without cuTensorMapEncodeTiled");
    const CUtensorMapDataType ty = dt == GCR_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const cuuint64_t da[2] = {(cuuint64_t)v->K, (cuuint64_t)v->M}, db[2] = {(cuuint64_t)v->K, (cuuint64_t)v->N};
    const cuuint64_t sa[1] = {(cuuint64_t)v->fa * 2}, sb[1] = {(cuuint64_t)v->ws[0] * 2};
    const cuuint32_t boxa[2] = {64, 128}, boxb[2] = {64, GCR_TMA_BN}, one[2] = {1, 1};
    CUresult r = d->tensor_map_encode_tiled(ma, ty, 2, (void *)x, da, sa, boxa, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r == CUDA_SUCCESS)
        r = d->tensor_map_encode_tiled(mb, ty, 2, (void *)w, db, sb, boxb, one, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    GCR_CHECK(ctx, r == CUDA_SUCCESS, GCR_ERR_DEVICE,
              "cuda dense: TMA tensor maps of x (%lld rows of %lld, stride %lld) and w (%lld rows, stride %lld): %s",
              (long long)v->M, (long long)v->K, (long long)v->fa, (long long)v->N, (long long)v->ws[0],
              gcr_cuda_drv_error(r));
    return GCR_OK;
}

/* The stride f with s0*n + m2*s2*oy + m3*s3*ox == f*r for every row r = (n*OH + oy)*OW + ox < M of
 * problem a (m2, m3: the conv's strides for x, 1 for the output), or 0 (none, a zero stride, or a
 * product past int64): a dim of one index constrains nothing. Where it exists the tiles take a
 * row's offset as one product instead of two divisions and three products (gemm.cuh
 * gcr_dn_row_x / gcr_dn_row_y). */
static int64_t flat_rows(const gcr_dense_args *a, int64_t s0, int64_t s2, int64_t s3, int64_t m2, int64_t m3)
{
    int64_t sp, row, img; /* OH*OW; f times OW, times OH*OW (an overflow: not flat) */
    if (__builtin_mul_overflow(a->OH, a->OW, &sp) || sp <= 0 || __builtin_mul_overflow(s2, m2, &s2) ||
        __builtin_mul_overflow(s3, m3, &s3))
        return 0;
    const int64_t f = a->OW > 1 ? s3 : a->OH > 1 ? s2 : s0;
    if (f == 0 || __builtin_mul_overflow(a->OW, f, &row) || __builtin_mul_overflow(sp, f, &img)) return 0;
    const int ok = (a->OW <= 1 || s3 == f) && (a->OH <= 1 || s2 == row) && (a->M <= sp || s0 == img);
    return ok ? f : 0;
}

/* The tactics of problem a (x, w: the operands, for alignment) into p. */
static void dense_tactics(gcr_ctx *ctx, gcr_dtype dt, const gcr_dense_args *a, const void *x, const void *w, int tf32,
                          int pro, dense_plan *p)
{
    int64_t z = 1;
    for (int i = 0; i < a->nz; i++) z *= a->zshape[i];
    int tc = dt != GCR_F32 && gcr_cuda_arch(ctx) >= 80;
    int64_t sms = gcr_cuda_sm_count(ctx);
    const char *sfx = gcr_cuda_dt_suffix(dt), *tsfx = tf32 ? "tf32" : sfx; /* the tc tiles' suffix */
    p->dt = dt;
    p->tf32 = tf32;
    p->pro = pro;
    p->n = 0;
    p->def = -1;
    p->part = NULL;
    p->sem = NULL;
    /* 16-byte operand loads where every chunk of k lies in one aligned run (1x1 taps, no padding,
     * k contiguous); the FMA engine's 16-bit variant (below sm_80) has no vector path */
    gcr_dense_args *v = &p->v;
    *v = *a;
    /* the tc tile's decodes: a row r / (OH*OW), then / OW; a k / (K / taps), then the tap / KW
     * (every r < M and k < K below 2^31; an empty problem decodes nothing) */
    gcr_divs rd;
    const int64_t taps = a->KH * a->KW;
    v->fa = v->fc = 0;
    if (taps > 0 && gcr_cuda_divs_init(&rd, 4, (const int64_t[]){a->OH * a->OW, a->OW, a->K / taps, a->KW},
                                       a->M > a->K ? a->M : a->K)) {
        for (int i = 0; i < 4; i++) {
            v->rdiv_m[i] = rd.magic[i];
            v->rdiv_s[i] = rd.shift[i];
        }
        /* flat rows: x's only where its rows are 1x1 taps without padding (the tiles that read
         * p.fa) */
        if (taps == 1 && a->ph == 0 && a->pw == 0)
            v->fa = flat_rows(a, a->xs[0], a->xs[2], a->xs[3], a->sh, a->sw);
        v->fc = flat_rows(a, a->ys[0], a->ys[2], a->ys[3], 1, 1);
    }
    int64_t ch = dt == GCR_F32 ? 4 : 8;
    int vec_ok = (dt == GCR_F32 ? VEC_UNVERIFIED : tc) && a->KH * a->KW == 1 && a->K % ch == 0;
    int za_ok = 1, zw_ok = 1;
    for (int i = 0; i < a->nz; i++) {
        za_ok &= a->zx[i] % ch == 0;
        zw_ok &= a->zw[i] % ch == 0;
    }
    v->vec_a = vec_ok && za_ok && a->ph == 0 && a->pw == 0 && a->xs[1] == 1 && a->xs[0] % ch == 0 &&
               a->xs[2] % ch == 0 && a->xs[3] % ch == 0 && (uintptr_t)x % 16 == 0;
    v->vec_b = vec_ok && zw_ok && a->ws[1] == 1 && a->ws[0] % ch == 0 && (uintptr_t)w % 16 == 0;
    /* A pixel-contiguous (NCHW 1x1 stride 1, or a column-major matmul operand): the tc tile loads
     * 8 rows of one image per chunk, so H*W % 8 == 0 and every offset a multiple of 8 elements */
    int64_t sp = a->OH * a->OW;
    int a_pix = tc && a->KH * a->KW == 1 && a->ph == 0 && a->pw == 0 && a->sh == 1 && a->sw == 1 && a->K % 8 == 0 &&
                ((a->OW == 1 && a->xs[2] == 1) || (a->xs[3] == 1 && a->xs[2] == a->OW)) && sp % 8 == 0 &&
                a->xs[1] % 8 == 0 && a->xs[0] % 8 == 0 && za_ok && (uintptr_t)x % 16 == 0;
    /* else any 1x1 no-padding layout: A element by element (AT 2) */
    int a_elem = a->KH * a->KW == 1 && a->ph == 0 && a->pw == 0;
    /* any other taps, strides, padding, dilation: the implicit GEMM over channels-last x and
     * weights (AT 3), each 16-byte chunk ch channels of one tap */
    int a_taps = implicit_fits(a, ch, x, w);
    /* TF32: the channel-contiguous layouts (AT 0, 3) only; their 16-byte chunks are 4 floats */
    int at = -1;
    if (GCR_DENSE_TC && (tc || tf32)) {
        if (v->vec_b) at = v->vec_a ? 0 : !tc ? -1 : a_pix ? 1 : a_elem ? 2 : -1;
        if (at < 0 && a_taps) at = 3;
    }
    char name[48];

    /* short reductions into few columns (the stem; f32 1x1 with K <= 28 = GCR_DIRECT_K into NCHW):
     * conv.cuh's direct kernel, a thread per output pixel; the heuristic takes it where there are
     * enough pixels (at batch 1 the implicit GEMM's split tiles fill the device better) */
    int64_t kp = (a->K + 3) & ~3LL;
    if (GCR_DENSE_DIRECT && a->K <= 28 && a->N * kp <= 2048 && (a->KH * a->KW > 1 || (dt == GCR_F32 && a->ys[1] != 1))) {
        int64_t blocks = (a->M + 255) / 256, cap = sms * 8;
        snprintf(name, sizeof name, "gcr_direct_%s", sfx);
        int i = add_tactic(p, name, blocks < cap ? blocks : cap, 1, z, 1);
        if (a->M >= sms * 512) p->def = i;
    }
    /* the streaming tensor-core tile: 128 rows by 32, 64 or 128 columns (no wider than N needs);
     * the heuristic takes the widest that still gives every SM a block. Where none does, or where
     * that tile leaves a second block per SM missing, split-K (channel-contiguous layouts, AT 0 and
     * 3): ks blocks per tile of a split tile of each width, offered to GCR_AUTOTUNE; the heuristic
     * takes the widest split that gives every SM a block where no unsplit tile does, and over a
     * narrower unsplit tile on the terms below (a 128-wide split reads A once per 128 columns, the
     * 32-wide tile 4 times) */
    int deep128 = 0; /* the unsplit 128-wide pick goes to its deep twin (below) */
    if (at >= 0 && a->M > 8) {
        const int64_t trows = (a->M + 127) / 128, bk = 64 / (int64_t)gcr_dtype_size(dt), nk = (a->K + bk - 1) / bk;
        const char *ats = (const char *[]){"", "n", "e", "k"}[at];
        int wide = -1, wide_bn = 0;
        int64_t wide_tiles = 0;
        for (int bn = 32; bn <= 128; bn *= 2) {
            if (bn > 32 && a->N <= bn / 2) break; /* a wider tile than N needs */
            const int64_t tiles = trows * ((a->N + bn - 1) / bn) * z;
            int i = add_tc(p, bn, ats, tsfx, a, z, 1);
            if (i >= 0 && tiles >= sms) {
                wide = i;
                wide_bn = bn;
                wide_tiles = tiles;
            }
        }
        if (wide >= 0 && p->def < 0) p->def = wide;
        /* best: the widest split that fills the SMs with at least 8 k tiles a split, else the
         * narrowest that fills them, else the narrowest (H100, f16: MobileNet's b14.pw at b32 took
         * 14.8 us split 5 ways on the 32-wide tile, 21.2 split 7 ways on the 128-wide, 4 k tiles a
         * split) */
        int64_t kss[3] = {0, 0, 0};
        int best = -1, fill = -1, first = -1, any = 0;
        for (int w = 0; w < 3 && (at == 0 || at == 3) && (wide < 0 || wide_tiles < 2 * sms); w++) {
            const int bn = 32 << w;
            if (bn > 32 && a->N <= bn / 2) break;
            const int64_t tiles = trows * ((a->N + bn - 1) / bn) * z;
            kss[w] = split_ways(tiles, nk, bn, sms);
            if (kss[w] < 2) continue;
            any = 1;
            if (first < 0) first = w;
            if (tiles * kss[w] < sms) continue;
            if (fill < 0) fill = w;
            if (nk / kss[w] >= 8) best = w;
        }
        if (best < 0) best = fill >= 0 ? fill : first;
        /* over an unsplit tile that fills the SMs, a split only where it is much wider or its splits
         * keep long reductions (H100, f16 b32: ResNet-50's l4 3x3 at 32 -> 128 wide, 36 k tiles a
         * split, 103 -> 54 us, its l4 1x1 at 16 a split 36 -> 30 us; l3's 3x3 at 64 -> 128, 36 a split,
         * 64 -> 54 us; but l3's 1x1 at 64 -> 128 with 16 a split 24 -> 30 us, and MobileNet's short-K
         * 1x1s slower split in two) */
        const int64_t per = best >= 0 ? nk / kss[best] : 0, wider = best >= 0 && wide_bn ? (32 << best) / wide_bn : 0;
        const int takes = best >= 0 && (wide < 0 || (wider >= 4 && per >= 8) || (wider >= 2 && per >= 32));
        if (any && split_workspace(ctx, p, takes)) {
            for (int w = 0; w < 3; w++) {
                if (kss[w] < 2) continue;
                int i = add_tc(p, 32 << w, at == 3 ? "ks" : "s", tsfx, a, z, kss[w]);
                if (i < 0) continue;
                p->kt[i] = bk;
                if (w == 0) p->t[i].smem = GCR_TC_SK_ST * GCR_TC_STAGE_BYTES(128, 32);
                if (w == best && takes && (p->def < 0 || p->def == wide)) p->def = i;
            }
        }
        /* row streams (k-contiguous A, 32 and 64 wide; after the splits, which a full candidate list
         * keeps), for short reductions (at most GCR_TC_PS_NK k tiles: the memory-bound 1x1s): the
         * heuristic takes the 32-wide one over the unsplit 32-wide pick with a wave of tiles to walk
         * (a block of each of its slots walks at least 2; H200, GCR_AUTOTUNE: MobileNet-v3's 56x56
         * 1x1s into 24 at batch 32, 784 tiles, 12.0 against 14.2 us and 15.2 against 18.7), and the 64-wide one over an unsplit pick of at most 128 columns where its column
         * tiles fill the SMs, are at most 4 and, over a 128-wide pick, waste at most a quarter of
         * their columns (each column tile reads A again). H100, f16, MobileNet-v3's 1x1s at batch
         * 128: K 16 into 16 (b1.pw) 125 -> 96 us; 72 into 40 22.5 -> 18.5; 40 into 240 43.5 -> 38.3;
         * 80 into 200 15.0 -> 13.5; but 24 into 72 (two 64-wide tiles for one 128) 66 -> 85, and
         * K 184 and more slower on every layer (2 stages) */
        const int64_t c64 = (a->N + 63) / 64;
        for (int bn = 32; bn <= 64 && at == 0; bn *= 2) {
            if (bn > 32 && a->N <= bn / 2) break;
            int i = add_stream(p, bn, tsfx, a, z, sms);
            if (i < 0 || p->def != wide || nk > GCR_TC_PS_NK) continue;
            if (bn == 32 ? wide_bn == 32 && wide_tiles >= sms * GCR_TC_PS_BLOCKS(32)
                         : wide_bn >= 64 && c64 <= 4 && trows * c64 * z >= sms && (wide_bn == 64 || 4 * a->N >= 3 * 64 * c64))
                p->def = i;
        }
        deep128 = p->def == wide && wide_bn == 128 && (at == 3 || (at == 0 && nk >= 8 && wide_tiles >= 2 * sms));
    }
    /* batch-1 classifier / squeeze-excite */
    if (gemv_fits(a)) {
        snprintf(name, sizeof name, "gcr_gemv_%s", sfx);
        int i = add_tactic(p, name, (a->N + 7) / 8, 1, z, 1);
        if (p->def < 0) p->def = i;
    }
    /* the implicit GEMM of gemm.cuh, for every problem: the heuristic takes the largest tile that
     * still gives every SM a block (the 32 tile splits K inside the block) */
    int64_t t64 = ((a->M + 63) / 64) * ((a->N + 63) / 64) * z, tt = ((a->M + 127) / 128) * ((a->N + 31) / 32) * z;
    const char *hcfg = a->N <= 32 && tt >= sms ? "t" : t64 >= sms ? "64" : "32";
    static const char *cfgs[] = {"t", "64", "32"};
    for (int c = 0; c < 3; c++) {
        if (c == 0 && a->N > 32) continue;
        int bm = c == 0 ? 128 : c == 1 ? 64 : 32, bn = c == 1 ? 64 : 32;
        snprintf(name, sizeof name, "gcr_dense_%s%s_%s", tc ? "mma" : "fma", cfgs[c], sfx);
        int i = add_tactic(p, name, (a->M + bm - 1) / bm, (a->N + bn - 1) / bn, z, 1);
        if (!strcmp(cfgs[c], hcfg) && p->def < 0) p->def = i;
    }
    /* the small-channel implicit GEMM (gemm_tc.cuh AT 4: fewer channels per group than a 16-byte
     * chunk, e.g. an RGB stem, KH x KW > 1; k runs over kernel rows, gathered element by element, so
     * any strides do): the heuristic's pick over the mma tiles, the widest that gives every SM a
     * block, but not over the direct kernel where that has its pixels. H100, f16 (2026-11-26):
     * ResNet-50's 7x7 stem (64 outputs) 407 -> 171 us at batch 32 against the mma tile;
     * MobileNet-v3's 3x3 stem (16 outputs) 7.5 -> 5.7 us at batch 1, but 55 -> 67 us at batch 32
     * against the direct kernel. The patch tiles (patch_tactics, next) take over in 16-bit types. */
    const int64_t c0 = taps > 0 ? a->K / taps : 0;
    /* the kernel steps through a kernel row's elements with int offsets */
    const int row_int = (a->KW - 1) * a->dw * llabs(a->xs[3]) + (c0 - 1) * llabs(a->xs[1]) < INT32_MAX &&
                        (a->KW - 1) * llabs(a->ws[3]) + (c0 - 1) * llabs(a->ws[1]) < INT32_MAX;
    if (GCR_DENSE_TC && (tc || tf32) && taps > 1 && a->M > 8 && a->K % taps == 0 && c0 < ch && row_int) {
        const int64_t trows = (a->M + 127) / 128;
        int pick = -1;
        for (int bn = 32; bn <= 128; bn *= 2) {
            if (bn > 32 && a->N <= bn / 2) break; /* a wider tile than N needs */
            int i = add_tc(p, bn, "c", tsfx, a, z, 1);
            if (i >= 0 && (pick < 0 || trows * ((a->N + bn - 1) / bn) * z >= sms)) pick = i;
        }
        if (pick >= 0 && (p->def < 0 || !strstr(p->t[p->def].name, "_direct_"))) p->def = pick;
    }
    patch_tactics(ctx, p, a, c0, z, sms);
    shortk_tactics(ctx, p, v, z, sms);
    /* the deep-pipeline tiles (gemm_tc.cuh DYN: 4 stages in dynamic shared memory), k-contiguous
     * and implicit-GEMM layouts. The heuristic swaps the 128-wide implicit tile for its deep twin
     * (H100, f16, ResNet-50's 3x3 convs at batch 128: 0.88-0.94x the time), and the 128-wide
     * k-contiguous one where it has at least 8 k tiles and two tiles per SM (ResNet-50's 1x1s at
     * batch 128: 0.81-0.94x, but 1.05x for 512 -> 2048 at 7x7; with fewer tiles or k tiles,
     * MobileNet's and batch 32's measured up to 1.1-1.4x slower); the 64-wide deep tile measured
     * slower than the 3-stage one on every 1x1 layer, so only GCR_AUTOTUNE or a test picks it */
    const int deep = (at == 0 || at == 3) && a->M > 8;
    for (int bn = 64; bn <= 128 && deep; bn *= 2) {
        if (bn == 128 && a->N <= 64) break; /* a wider tile than N needs */
        int i = add_tc(p, bn, at == 3 ? "kd" : "d", tsfx, a, z, 1);
        if (i < 0) continue;
        p->t[i].smem = GCR_TC_DEEP_ST * GCR_TC_STAGE_BYTES(128, bn);
        if (bn == 128 && deep128) p->def = i;
    }
    if (deep && (tc || tf32) && a->N > 32 && gcr_nvrtc_arch_specific(gcr_cuda_arch(ctx))) wg_tactics(ctx, p, a, at, z, sms);
    if (at == 0 && tc && !tf32 && gcr_nvrtc_arch_specific(gcr_cuda_arch(ctx))) tma_tactic(p, x, w, z, sms);
}

/* the problem as tactic t's kernel gets it: with -DVEC_UNVERIFIED=0 only the mma 32x32 tile and the
 * tc tiles keep their 16-byte loads */
static gcr_dense_args tactic_args(const dense_plan *p, const gcr_cuda_tactic *t)
{
    gcr_dense_args v = p->v;
    if (!VEC_UNVERIFIED && !strstr(t->name, "32_") && !strstr(t->name, "_tc")) v.vec_a = v.vec_b = 0;
    if (t->ks > 1) {
        const int64_t nk = (v.K + p->kt[t - p->t] - 1) / p->kt[t - p->t];
        v.ksplit = t->ks;
        v.kchunk = (nk + t->ks - 1) / t->ks;
        v.part = p->part;
        v.sem = p->sem;
    }
    return v;
}

int64_t gcr_cuda_span(const int64_t *ext, const int64_t *st, int nd)
{
    int64_t s = 1;
    for (int i = 0; i < nd; i++) s += (ext[i] - 1) * st[i];
    return s;
}

/* elements from an operand's first to its last, for strides st over extents ext and z offsets */
static int64_t span(const int64_t *ext, const int64_t *st, int nd, const gcr_dense_args *a, const int64_t *zst)
{
    return gcr_cuda_span(ext, st, nd) + gcr_cuda_span(a->zshape, zst, a->nz) - 1;
}

/* Launches tactic t of plan p, its kernel k, on the operands (h: the hooks, may be NULL). */
static gcr_status launch_tactic(gcr_ctx *ctx, const dense_plan *p, const gcr_cuda_tactic *t, gcr_cuda_fn *k,
                                const void *x, const void *w, void *out, const void *bias, const gcr_cuda_hooks *h)
{
    if (t->ks > 1) GCR_TRY(gcr_cuda_splitk_zeroed(ctx));
    gcr_dense_args v = tactic_args(p, t);
    CUtensorMap ma, mb; /* the TMA tile's, by value after the standard five */
    if (!strncmp(t->name, "gcr_tma", 7)) GCR_TRY(tma_maps(ctx, p->dt, &v, x, w, &ma, &mb));
    void *std[] = {&v, &x, &w, &out, &bias, &ma, &mb};
    return gcr_cuda_hooked_launch(ctx, k, t->gx, t->gy, t->gz, t->threads, t->smem, std,
                                  strncmp(t->name, "gcr_tma", 7) ? 5 : 7, h);
}

/* GCR_AUTOTUNE runs a tactic's eager kernel (no hooks, no bias) on scratch operands */
static gcr_status run_tactic(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w, void *out)
{
    const dense_plan *p = arg;
    gcr_cuda_hooks eh = {.tf32 = p->tf32};
    const char *names[GCR_CUDA_TUNE_MAX];
    for (int i = 0; i < p->n; i++) names[i] = p->t[i].name;
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_candidate_kernel(ctx, p->dt, &eh, names, p->n, t->name, &k));
    return launch_tactic(ctx, p, t, k, x, w, out, NULL, NULL);
}

/* The tactic to run: a test's forced one (gcr_cuda_dense_force) when legal, else the choice of
 * gcr_cuda_tune_pick: with GCR_AUTOTUNE=1 the fastest measured on this problem's shape (tuned on
 * the plain kernels: a fused prologue or epilogue adds about the same to every tactic), else the
 * heuristic's. */
static int dense_choose(gcr_ctx *ctx, dense_plan *p)
{
    const char *force = gcr_cuda_st(ctx)->dense_force;
    char id[64];
    if (force)
        for (int i = 0; i < p->n; i++)
            if (strstr(tactic_id(&p->t[i], id, sizeof id), force)) return i;
    const gcr_dense_args *a = &p->v;
    /* one candidate, or an empty problem (a graph's program fetched for a binding with no rows) */
    if (p->n < 2 || a->M <= 0 || a->OH * a->OW <= 0 || a->N <= 0) return p->def;
    /* heuristics only: the pick answers def (and counts it) without a key, so build none */
    if (ctx->knobs.autotune != 1)
        return gcr_cuda_tune_pick(ctx, NULL, 0, p->t, p->n, p->def, 0, 0, 0, run_tactic, p);
    int64_t N = a->M / (a->OH * a->OW), C = a->K / (a->KH * a->KW), es = gcr_dtype_size(p->dt);
    int64_t iy = a->H < (a->OH - 1) * a->sh + (a->KH - 1) * a->dh + 1 ? a->H : (a->OH - 1) * a->sh + (a->KH - 1) * a->dh + 1;
    int64_t ix = a->W < (a->OW - 1) * a->sw + (a->KW - 1) * a->dw + 1 ? a->W : (a->OW - 1) * a->sw + (a->KW - 1) * a->dw + 1;
    int64_t xe[4] = {N, C, iy, ix}, we[4] = {a->N, C, a->KH, a->KW}, ye[4] = {N, a->N, a->OH, a->OW};
    int64_t xb = span(xe, a->xs, 4, a, a->zx), wb = span(we, a->ws, 4, a, a->zw), yb = span(ye, a->ys, 4, a, a->zy);
    struct { gcr_dense_args v; int32_t dt, tf32; } key;
    memset(&key, 0, sizeof key);
    key.v = *a;
    key.dt = p->dt;
    key.tf32 = p->tf32;
    return gcr_cuda_tune_pick(ctx, &key, sizeof key, p->t, p->n, p->def, (size_t)(xb * es), (size_t)(wb * es),
                              (size_t)(yb * es), run_tactic, p);
}

void gcr_cuda_dense_force(gcr_ctx *ctx, const char *name) { gcr_cuda_st(ctx)->dense_force = name; }
const char *gcr_cuda_last_kernel(gcr_ctx *ctx) { return gcr_cuda_st(ctx)->last_fn; }
const char *gcr_cuda_dense_last(gcr_ctx *ctx) { return gcr_cuda_st(ctx)->dense_last; }

gcr_status gcr_cuda_dense_run(gcr_ctx *ctx, gcr_dtype dt, const gcr_dense_args *a, const void *x, const void *w,
                              void *out, const void *bias, const gcr_cuda_hooks *h)
{
    /* dispatch refused calls past these (gcr_cuda_check), and gcr_cuda_matmul_hooked a fused
     * prologue whose source lays the operand out otherwise: only a caller that skipped both gets here */
    gcr_cuda_limit lim[GCR_CUDA_MAX_LIMITS];
    const gcr_cuda_limit *bad = gcr_cuda_limit_broken(lim, gcr_cuda_dense_limits(a, lim));
    if (bad) {
        char b[160];
        return gcr_set_error(ctx, GCR_ERR_INTERNAL, "cuda dense: an unchecked problem: %s",
                             gcr_cuda_limit_str(bad, b, sizeof b));
    }
    dense_plan p;
    dense_tactics(ctx, dt, a, x, w, dt == GCR_F32 && gcr_cuda_tf32(ctx, h), h && h->prologue, &p);
    GCR_CHECK(ctx, p.def >= 0, GCR_ERR_INTERNAL, "cuda dense: no kernel for the problem");
    const gcr_cuda_tactic *t = &p.t[dense_choose(ctx, &p)];
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    tactic_id(t, st->dense_last, sizeof st->dense_last);
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", dt, h, t->name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    return launch_tactic(ctx, &p, t, k, x, w, out, bias, h);
}
