/* conv.c — conv2d on the GPU: depthwise convs (groups == C == O) get the memory-bound depthwise
 * kernel, every other conv (1x1 included, which the engine runs as a plain GEMM) the dense
 * implicit-GEMM engine of kernels/gemm.cuh, its GEMV kernel when there are at most 8 rows, the
 * streaming tensor-core tile of kernels/gemm_tc.cuh (f16/bf16 1x1, f32 with knobs.tf32) or
 * conv.cuh's direct kernel (short reductions: the stem); gcr_cuda_dense_run picks. Also the
 * engine's launcher and program text, shared with matmul.c, and the hooked entry points capture/
 * uses to fuse prologues and epilogues: eager launches share one program per dtype with every
 * kernel, a hooked launch compiles a program of just the kernel it picked (its hooks are unique
 * to it, so the other ~15 kernels would be compiled for nothing). */
#include "dense.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The 16-byte load paths (kernels/gemm.cuh, vec_a/vec_b) of the f32 engine, the 64 and tall mma
 * tiles and the GEMV kernel: on (1) from the perf helper's run, which checks them with
 * test_cuda_dense on a GPU with a fresh GCR_CACHE_DIR; build with -DVEC_UNVERIFIED=0 to leave
 * only the mma 32x32 tile's (verified earlier) on. */
#ifndef VEC_UNVERIFIED
#define VEC_UNVERIFIED 1
#endif

/* The streaming tensor-core tile (kernels/gemm_tc.cuh) for f16/bf16 1x1 convs and GEMMs with
 * 16-byte operand chunks and enough 128-row tiles to fill the device; for f32 ones in the
 * k-contiguous layout too when knobs.tf32 asks for TF32. */
#ifndef GCR_DENSE_TC
#define GCR_DENSE_TC 1
#endif

/* channels-last depthwise with 16 bytes of channels per thread (conv.cuh gcr_dw_vec) */
#ifndef GCR_DW_VEC
#define GCR_DW_VEC 1
#endif

/* conv.cuh's direct kernel for short reductions (the stem) */
#ifndef GCR_DENSE_DIRECT
#define GCR_DENSE_DIRECT 1
#endif

static const char *dt_suffix(gcr_dtype dt) { return dt == GCR_F16 ? "f16" : dt == GCR_BF16 ? "bf16" : "f32"; }

char *gcr_cuda_dense_source(const char *file, gcr_dtype dt, int tf32, const gcr_cuda_hooks *h, const char *inst)
{
    const char *defs = h && h->defs ? h->defs : "";
    /* all defaults: the TF32 tiles only where they can be picked, an f32 program of a context whose
     * knobs ask for them (every other program text, and so its cache key, is unchanged) */
    const char *t = inst ? "#define GCR_NO_DEFAULT_KERNELS\n"
                    : tf32 && dt == GCR_F32 && !strcmp(file, "conv.cuh") ? "#define GCR_TF32 1\n" : "";
    size_t n = strlen(defs) + strlen(t) + strlen(file) + (inst ? strlen(inst) : 0) + 96;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s\n%s#define GCR_DTYPE_ONLY %d\n#include \"%s\"\n%s\n", defs, t, (int)dt, file, inst ? inst : "");
    return s;
}

int gcr_cuda_dense_inst(const char *name, char *buf, size_t n)
{
    const char *sfx = strrchr(name, '_');
    if (!sfx || strncmp(name, "gcr_", 4) != 0) return -1;
    const char *T = !strcmp(sfx, "_f32") || !strcmp(sfx, "_tf32") ? "float"
                    : !strcmp(sfx, "_f16") ? "gcr_dn_f16" : !strcmp(sfx, "_bf16") ? "gcr_dn_bf16" : NULL;
    if (!T) return -1;
    const char *fam = name + 4, *dt = sfx + 1;
    int w;
    if (!strncmp(fam, "dense_", 6)) { /* gcr_dense_<cfg>_<dt>: its config type is gcr_cfg_<cfg> */
        const char *cfg = fam + 6;
        int len = (int)(sfx - cfg);
        if (len <= 0) return -1;
        w = snprintf(buf, n, "%s(%s, %s, gcr_cfg_%.*s)", strncmp(cfg, "tc", 2) ? "GCR_DENSE_KERNEL" : "GCR_DENSE_TC_KERNEL",
                     name, T, len, cfg);
    } else if (!strncmp(fam, "gemv_", 5) && sfx == fam + 4) {
        w = snprintf(buf, n, "GCR_GEMV_KERNEL(%s, %s)", name, T);
    } else if (!strncmp(fam, "direct_", 7) && sfx == fam + 6) {
        w = snprintf(buf, n, "GCR_DIRECT_KERNEL(%s, %s)", name, T);
    } else if ((!strncmp(fam, "dw_", 3) && sfx == fam + 2) || (!strncmp(fam, "dwv_", 4) && sfx == fam + 3)) {
        w = snprintf(buf, n, "GCR_DW_KERNEL(gcr_dw_%s, gcr_dwv_%s, %s)", dt, dt, T); /* one macro, both entries */
    } else {
        return -1;
    }
    return w > 0 && (size_t)w < n ? 0 : -1;
}

int gcr_cuda_tf32(gcr_ctx *ctx, const gcr_cuda_hooks *h)
{
    return (h ? h->tf32 : ctx->knobs.tf32) > 0 && gcr_cuda_arch(ctx) >= 80;
}

/* the kernel named name of file's program for dt, with hooks h */
static gcr_status get_kernel(gcr_ctx *ctx, const char *file, gcr_dtype dt, const gcr_cuda_hooks *h, const char *name,
                             gcr_cuda_fn **k)
{
    /* eager programs: static text, so no allocation on the hot path; conv.cuh f32 with TF32 last */
    static const char *const eager[2][4] = {
        {"#define GCR_DTYPE_ONLY 0\n#include \"conv.cuh\"\n", "#define GCR_DTYPE_ONLY 1\n#include \"conv.cuh\"\n",
         "#define GCR_DTYPE_ONLY 2\n#include \"conv.cuh\"\n",
         "#define GCR_TF32 1\n#define GCR_DTYPE_ONLY 0\n#include \"conv.cuh\"\n"},
        {"#define GCR_DTYPE_ONLY 0\n#include \"pool.cuh\"\n", "#define GCR_DTYPE_ONLY 1\n#include \"pool.cuh\"\n",
         "#define GCR_DTYPE_ONLY 2\n#include \"pool.cuh\"\n", NULL}};
    GCR_ASSERT(ctx, dt == GCR_F32 || dt == GCR_F16 || dt == GCR_BF16); /* gcr_infer takes only these */
    int pool = strcmp(file, "conv.cuh") != 0, tf32 = !pool && dt == GCR_F32 && gcr_cuda_tf32(ctx, h);
    *k = NULL;
    const char *text = eager[pool][tf32 ? 3 : dt];
    if (!h || !h->defs || !h->defs[0]) {
        if (h && h->src_out) { /* hooks with no text: the eager program is the one to prefetch */
            *h->src_out = strdup(text);
            GCR_CHECK(ctx, *h->src_out, GCR_ERR_OOM, "%s: out of host memory", name);
            return GCR_OK;
        }
        return gcr_cuda_program(ctx, text, &name, 1, k);
    }
    /* hooked: a program of this one kernel */
    char inst[160];
    GCR_CHECK(ctx, pool || gcr_cuda_dense_inst(name, inst, sizeof inst) == 0, GCR_ERR_INTERNAL,
              "%s: no instantiation for this kernel name", name);
    char *src = gcr_cuda_dense_source(file, dt, tf32, h, pool ? NULL : inst);
    GCR_CHECK(ctx, src, GCR_ERR_OOM, "%s: out of host memory", name);
    if (h->src_out) { /* prefetch: the text, no launch (*k stays NULL) */
        *h->src_out = src;
        return GCR_OK;
    }
    gcr_status s = gcr_cuda_program(ctx, src, &name, 1, k);
    free(src);
    return s;
}

/* args = the standard ones then the hook extras */
static gcr_status launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                         void **std, int nstd, const gcr_cuda_hooks *h)
{
    void *args[8 + GCR_CUDA_MAX_EXTRA];
    int n = 0;
    for (int i = 0; i < nstd; i++) args[n++] = std[i];
    if (h && h->n_extra) {
        GCR_CHECK(ctx, h->n_extra <= GCR_CUDA_MAX_EXTRA && h->extra, GCR_ERR_INVALID,
                  "cuda dense: %d extra kernel arguments (at most %d)", h->n_extra, GCR_CUDA_MAX_EXTRA);
        for (int i = 0; i < h->n_extra; i++) args[n++] = h->extra[i];
    }
    return gcr_cuda_launch(ctx, k, gx, gy, gz, threads, 1, 1, 0, args);
}

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
        snprintf(name, sizeof name, "gcr_direct_%s", dt_suffix(dt));
        int64_t blocks = (a->M + 255) / 256, cap = sms * 8;
        gx = (unsigned)(blocks < cap ? blocks : cap);
        gy = 1;
        threads = 256;
    } else if (at >= 0 && a->M > 8 && ttiles >= sms) {
        snprintf(name, sizeof name, "gcr_dense_tc%d%s_%s", (int)tbn, at == 2 ? "e" : at ? "n" : "",
                 tf32 ? "tf32" : dt_suffix(dt));
        gx = (unsigned)trows;
        gy = (unsigned)((a->N + tbn - 1) / tbn);
        threads = 256;
    } else if (gemv_fits(a)) {
        snprintf(name, sizeof name, "gcr_gemv_%s", dt_suffix(dt));
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
        snprintf(name, sizeof name, "gcr_dense_%s%s_%s", tc ? "mma" : "fma", cfg, dt_suffix(dt));
        gx = (unsigned)((a->M + bm - 1) / bm);
        gy = (unsigned)((a->N + bn - 1) / bn);
        threads = 256;
    }
    gcr_cuda_fn *k;
    GCR_TRY(get_kernel(ctx, "conv.cuh", dt, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    void *std[] = {(void *)a, &x, &w, &out, &bias};
    return launch(ctx, k, gx, gy, (unsigned)z, threads, std, 5, h);
}

static gcr_status depthwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m, *y = &out->m;
    const gcr_conv2d_params *p = &c->p.conv;
    gcr_dw_args a = {.N = x->shape[0], .C = x->shape[1], .H = x->shape[2], .W = x->shape[3], .OH = y->shape[2],
                 .OW = y->shape[3], .KH = w->shape[2], .KW = w->shape[3], .sh = p->stride[0], .sw = p->stride[1],
                 .ph = p->padding[0], .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1]};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ws[i] = w->strides[i];
        a.ys[i] = y->strides[i];
    }
    a.total = a.N * a.C * a.OH * a.OW;
    a.c_fast = y->strides[1] == 1 && a.C > 1;
    const void *xp = gcr_tensor_data(c->in[0]), *wp = gcr_tensor_data(c->in[1]);
    const void *bp = c->in[2] ? gcr_tensor_data(c->in[2]) : NULL;
    void *yp = gcr_tensor_data(out);
    /* the kernel's 4-outputs-per-thread paths (conv.cuh gcr_dw_tile, gcr_dw_vec) need a quarter
     * of the threads; the channels-last one also 16 bytes of channels per thread, every offset of
     * them a multiple of 16 bytes, and at most 65535 blocks of 32 channel groups (grid y) */
    int tile = a.KH == a.KW && (a.KH == 3 || a.KH == 5) && a.dw == 1 && (a.sw == 1 || a.sw == 2) && a.total < (1LL << 31);
    int64_t vc = 16 / (int64_t)gcr_dtype_size(x->dtype);
    if (GCR_DW_VEC && tile && a.c_fast && a.xs[1] == 1 && a.C % vc == 0 && a.C / vc <= 65535LL * 32 && a.xs[0] % vc == 0 &&
        a.xs[2] % vc == 0 && a.xs[3] % vc == 0 && a.ys[0] % vc == 0 && a.ys[2] % vc == 0 && a.ys[3] % vc == 0 &&
        (uintptr_t)xp % 16 == 0 && (uintptr_t)yp % 16 == 0 &&
        a.N * a.OH * ((a.OW + 1) / 2) * (a.C / vc) >= (int64_t)gcr_cuda_sm_count(ctx) * 512)
        a.c_fast = 2; /* ... and enough threads: at batch 1 the one-channel tiles fill the device better */
    gcr_cuda_fn *k;
    char name[32];
    snprintf(name, sizeof name, "gcr_dw%s_%s", a.c_fast == 2 ? "v" : "", dt_suffix(x->dtype));
    GCR_TRY(get_kernel(ctx, "conv.cuh", x->dtype, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    int64_t work = tile ? a.N * a.C * a.OH * ((a.OW + 3) / 4) : a.total;
    int64_t blocks = (work + 255) / 256, cap = (int64_t)gcr_cuda_sm_count(ctx) * 16, gy = 1;
    if (a.c_fast == 2) { /* gcr_dw_vec: blocks of CB channel groups x 256 / CB pixel slots */
        int64_t ox = vc == 8 ? 2 : 4, cv = a.C / vc, cb = cv < 32 ? cv : 32, slots = 256 / cb;
        gy = (cv + cb - 1) / cb;
        blocks = (a.N * a.OH * ((a.OW + ox - 1) / ox) + slots - 1) / slots;
        cap = (cap + gy - 1) / gy;
    }
    void *std[] = {&a, &xp, &wp, &yp, &bp};
    return launch(ctx, k, (unsigned)(blocks < cap ? blocks : cap), (unsigned)gy, 1, 256, std, 5, h);
}

static bool is_depthwise(const gcr_call *c)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    int64_t C = x->shape[1], O = w->shape[0], G = c->p.conv.groups;
    return G == C && O == C && w->shape[1] == 1;
}

/* the dense engine's problem for a (non-depthwise) conv with result meta y */
static gcr_dense_args conv_dense_args(const gcr_call *c, const gcr_meta *y)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    const gcr_conv2d_params *p = &c->p.conv;
    int64_t O = w->shape[0], G = p->groups, Cg = w->shape[1], Og = O / G;
    gcr_dense_args a = {.M = x->shape[0] * y->shape[2] * y->shape[3], .N = Og, .K = Cg * w->shape[2] * w->shape[3],
                             .OH = y->shape[2], .OW = y->shape[3], .H = x->shape[2], .W = x->shape[3],
                             .KH = w->shape[2], .KW = w->shape[3], .sh = p->stride[0], .sw = p->stride[1],
                             .ph = p->padding[0], .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1]};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ws[i] = w->strides[i];
        a.ys[i] = y->strides[i];
    }
    if (G > 1) { /* z = group: each a GEMM over its own channel slices */
        a.nz = 1;
        a.zshape[0] = G;
        a.zx[0] = Cg * a.xs[1];
        a.zw[0] = Og * a.ws[0];
        a.zy[0] = Og * a.ys[1];
        a.zc = Cg;
        a.zo = Og;
    }
    /* coalesced load order: NHWC inputs run along channels (k), NCHW along output pixels (rows) */
    a.a_kfast = a.xs[1] == 1;
    a.b_kfast = (a.KH * a.KW == 1 ? a.ws[1] : a.ws[3]) == 1;
    return a;
}

int gcr_cuda_conv2d_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    const gcr_conv2d_params *p = &c->p.conv;
    int n = 0;
    l[n++] = (gcr_cuda_limit){"images", x->shape[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"input channels", x->shape[1], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"output channels", w->shape[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"padded input height", x->shape[2] + 2 * (int64_t)p->padding[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"padded input width", x->shape[3] + 2 * (int64_t)p->padding[1], GCR_CUDA_IDX_MAX};
    if (is_depthwise(c)) return n; /* it indexes outputs in 64 bits past 2^31 */
    gcr_dense_args a = conv_dense_args(c, out);
    return n + gcr_cuda_dense_limits(&a, l + n);
}

gcr_status gcr_cuda_conv2d_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    if (is_depthwise(c)) return depthwise(ctx, c, out, h);
    gcr_dense_args a = conv_dense_args(c, &out->m);
    return gcr_cuda_dense_run(ctx, c->in[0]->m.dtype, &a, gcr_tensor_data(c->in[0]), gcr_tensor_data(c->in[1]),
                              gcr_tensor_data(out), c->in[2] ? gcr_tensor_data(c->in[2]) : NULL, h);
}

gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_conv2d_hooked(ctx, c, out, NULL);
}
