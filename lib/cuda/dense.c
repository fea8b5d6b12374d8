/* dense.c — the dense engine: for a problem in conv terms (gcr_dense_args, kernels/abi.h) it picks
 * the kernel and launches it: the implicit GEMM of kernels/gemm.cuh (every non-depthwise conv,
 * 1x1 included as a plain GEMM, and matmul/linear), its GEMV kernel when there are at most 8 rows,
 * the streaming tensor-core tile of kernels/gemm_tc.cuh (f16/bf16 1x1, f32 with knobs.tf32) or
 * conv.cuh's direct kernel (short reductions: the stem). conv.c and matmul.c describe their calls
 * as problems; the kernel's program comes through hooks.c. */
#include "dense.h"
#include <stdint.h>
#include <stdio.h>

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
    int64_t z = 1;
    for (int i = 0; i < a->nz; i++) z *= a->zshape[i];
    int tc = dt != GCR_F32 && gcr_cuda_arch(ctx) >= 80, tf32 = dt == GCR_F32 && gcr_cuda_tf32(ctx, h);
    int64_t sms = gcr_cuda_sm_count(ctx);
    /* 16-byte operand loads where every chunk of k lies in one aligned run (1x1 taps, no padding,
     * k contiguous); the FMA engine's 16-bit variant (below sm_80) has no vector path */
    gcr_dense_args v = *a;
    int64_t ch = dt == GCR_F32 ? 4 : 8;
    int vec_ok = (dt == GCR_F32 ? VEC_UNVERIFIED : tc) && a->KH * a->KW == 1 && a->K % ch == 0;
    int za_ok = 1, zw_ok = 1;
    for (int i = 0; i < a->nz; i++) {
        za_ok &= a->zx[i] % ch == 0;
        zw_ok &= a->zw[i] % ch == 0;
    }
    v.vec_a = vec_ok && za_ok && a->ph == 0 && a->pw == 0 && a->xs[1] == 1 && a->xs[0] % ch == 0 && a->xs[2] % ch == 0 &&
              a->xs[3] % ch == 0 && (uintptr_t)x % 16 == 0;
    v.vec_b = vec_ok && zw_ok && a->ws[1] == 1 && a->ws[0] % ch == 0 && (uintptr_t)w % 16 == 0;
    /* A pixel-contiguous (NCHW 1x1 stride 1, or a column-major matmul operand): the tc tile loads
     * 8 rows of one image per chunk, so H*W % 8 == 0 and every offset a multiple of 8 elements */
    int64_t sp = a->OH * a->OW;
    int a_pix = tc && a->KH * a->KW == 1 && a->ph == 0 && a->pw == 0 && a->sh == 1 && a->sw == 1 && a->K % 8 == 0 &&
                ((a->OW == 1 && a->xs[2] == 1) || (a->xs[3] == 1 && a->xs[2] == a->OW)) && sp % 8 == 0 &&
                a->xs[1] % 8 == 0 && a->xs[0] % 8 == 0 && za_ok && (uintptr_t)x % 16 == 0;
    /* else any 1x1 no-padding layout: A element by element (AT 2) */
    int a_elem = a->KH * a->KW == 1 && a->ph == 0 && a->pw == 0;
    /* TF32: the k-contiguous layout (AT 0) only; its 16-byte chunks are 4 floats (vec_a/vec_b) */
    int at = !GCR_DENSE_TC || !(tc || tf32) || !v.vec_b ? -1 : v.vec_a ? 0 : !tc ? -1 : a_pix ? 1 : a_elem ? 2 : -1;
    int64_t tbn = a->N <= 32 ? 32 : a->N <= 64 ? 64 : 128;
    int64_t trows = (a->M + 127) / 128, ttiles = trows * ((a->N + tbn - 1) / tbn) * z;
    if (tbn == 128 && ttiles < sms) {
        tbn = 64;
        ttiles = trows * ((a->N + 63) / 64) * z;
    }
    a = &v;
    char name[48];
    unsigned gx, gy, threads;
    /* short reductions into few columns (the stem; f32 1x1 with K <= 28 = GCR_DIRECT_K into NCHW):
     * conv.cuh's direct kernel, a thread per output pixel, where there are enough pixels (at
     * batch 1 the implicit GEMM's split tiles fill the device better) */
    int64_t kp = (a->K + 3) & ~3LL;
    int direct = GCR_DENSE_DIRECT && a->K <= 28 && a->N * kp <= 2048 && a->M >= sms * 512 &&
                 (a->KH * a->KW > 1 || (dt == GCR_F32 && a->ys[1] != 1));
    if (direct) {
        snprintf(name, sizeof name, "gcr_direct_%s", gcr_cuda_dt_suffix(dt));
        int64_t blocks = (a->M + 255) / 256, cap = sms * 8;
        gx = (unsigned)(blocks < cap ? blocks : cap);
        gy = 1;
        threads = 256;
    } else if (at >= 0 && a->M > 8 && ttiles >= sms) {
        snprintf(name, sizeof name, "gcr_dense_tc%d%s_%s", (int)tbn, at == 2 ? "e" : at ? "n" : "",
                 tf32 ? "tf32" : gcr_cuda_dt_suffix(dt));
        gx = (unsigned)trows;
        gy = (unsigned)((a->N + tbn - 1) / tbn);
        threads = 256;
    } else if (gemv_fits(a)) {
        snprintf(name, sizeof name, "gcr_gemv_%s", gcr_cuda_dt_suffix(dt));
        if (!VEC_UNVERIFIED) v.vec_a = v.vec_b = 0;
        gx = (unsigned)((a->N + 7) / 8);
        gy = 1;
        threads = 256;
    } else {
        /* the largest tile that still gives every SM a block; the 32 tile splits K inside the block */
        int64_t t64 = ((a->M + 63) / 64) * ((a->N + 63) / 64) * z, tt = ((a->M + 127) / 128) * ((a->N + 31) / 32) * z;
        const char *cfg = a->N <= 32 && tt >= sms ? "t" : t64 >= sms ? "64" : "32";
        if (!VEC_UNVERIFIED && cfg[0] != '3') v.vec_a = v.vec_b = 0;
        int bm = cfg[0] == 't' ? 128 : cfg[0] == '6' ? 64 : 32, bn = cfg[0] == '6' ? 64 : 32;
        snprintf(name, sizeof name, "gcr_dense_%s%s_%s", tc ? "mma" : "fma", cfg, gcr_cuda_dt_suffix(dt));
        gx = (unsigned)((a->M + bm - 1) / bm);
        gy = (unsigned)((a->N + bn - 1) / bn);
        threads = 256;
    }
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", dt, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    void *std[] = {(void *)a, &x, &w, &out, &bias};
    return gcr_cuda_hooked_launch(ctx, k, gx, gy, (unsigned)z, threads, std, 5, h);
}
