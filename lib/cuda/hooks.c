/* hooks.c — the programs of the conv.cuh and pool.cuh kernel families, for their launchers (the
 * dense engine, the depthwise conv, pooling): a conv.cuh launch takes a program of just the kernel
 * it picked, eager (kept by the kernel's name) or hooked (capture's fused prologue and epilogue:
 * its hooks are unique to it), since the family holds some 40 kernels a dtype; a pool.cuh eager
 * launch takes its dtype's program of every default kernel (a static text); then the launch with
 * the hooks' extra arguments. */
#include "dense.h"
#include <stdio.h>
#include <stdlib.h>

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
    const char *fam = name + 4;
    int w;
    if (!strncmp(fam, "dense_", 6)) { /* gcr_dense_<cfg>_<dt>: its config type is gcr_cfg_<cfg> */
        const char *cfg = fam + 6;
        int len = (int)(sfx - cfg);
        if (len <= 0) return -1;
        w = snprintf(buf, n, "%s(%s, %s, gcr_cfg_%.*s)", strncmp(cfg, "tc", 2) ? "GCR_DENSE_KERNEL" : "GCR_DENSE_TC_KERNEL",
                     name, T, len, cfg);
    } else if (!strncmp(fam, "tma128", 6) && sfx == fam + 6 && strcmp(sfx, "_f32") && strcmp(sfx, "_tf32")) {
        w = snprintf(buf, n, "GCR_TMA_KERNEL(%s, %s)", name, T); /* gcr_tma128_<f16|bf16> */
    } else if (!strncmp(fam, "gemv_", 5) && sfx == fam + 4) {
        w = snprintf(buf, n, "GCR_GEMV_KERNEL(%s, %s)", name, T);
    } else if (!strncmp(fam, "direct_", 7) && sfx == fam + 6) {
        w = snprintf(buf, n, "GCR_DIRECT_KERNEL(%s, %s)", name, T);
    } else if ((!strncmp(fam, "patch", 5) && sfx == fam + 7) || (!strncmp(fam, "shortk", 6) && sfx == fam + 8)) {
        /* gcr_patch<bn>_<dt>, gcr_shortk<bn>_<dt> */
        const int sk = fam[0] == 's', bn = atoi(fam + 5 + sk);
        if (bn != 16 && bn != 32 && bn != 64) return -1;
        w = snprintf(buf, n, "GCR_%s_KERNEL(%s, %s, %d)", sk ? "SHORTK" : "PATCH", name, T, bn);
    } else if (!strncmp(fam, "dwpw", 4) && sfx > fam + 4) {
        /* gcr_dwpw<bn>k<ks>s<st>r<r>_<dt>: bn 16 .. 256 by 16; ks 3 or 5 with st 1 or 2, or both 0;
         * r 1, 2 or 4 up to the variant's GCR_DWPW_RMAX */
        int bn, ks, st, r, len = 0;
        if (sscanf(fam + 4, "%dk%ds%dr%d%n", &bn, &ks, &st, &r, &len) != 4 || fam + 4 + len != sfx) return -1;
        if (bn < 16 || bn > GCR_DWPW_MAX_OUT || bn % 16) return -1;
        if (!((ks == 3 || ks == 5) && (st == 1 || st == 2)) && (ks || st)) return -1;
        if ((r != 1 && r != 2 && r != 4) || r > GCR_DWPW_RMAX(ks, st)) return -1;
        w = snprintf(buf, n, "GCR_DWPW_KERNEL(%s, %s, %d, %d, %d, %d)", name, T, bn, ks, st, r);
    } else if (!strncmp(fam, "dw_", 3) && sfx == fam + 2) {
        w = snprintf(buf, n, "GCR_DW1_KERNEL(%s, %s)", name, T);
    } else if ((!strncmp(fam, "dwv_", 4) || !strncmp(fam, "dwc_", 4) || !strncmp(fam, "dws_", 4)) && sfx == fam + 3) {
        w = snprintf(buf, n, "GCR_DW%c_KERNEL(%s, %s)", fam[2] - 'a' + 'A', name, T);
    } else {
        return -1;
    }
    return w > 0 && (size_t)w < n ? 0 : -1;
}

const char *gcr_cuda_dt_suffix(gcr_dtype dt) { return dt == GCR_F16 ? "f16" : dt == GCR_BF16 ? "bf16" : "f32"; }

int gcr_cuda_tf32(gcr_ctx *ctx, const gcr_cuda_hooks *h)
{
    return (h ? h->tf32 : ctx->knobs.tf32) > 0 && gcr_cuda_arch(ctx) >= 80;
}

gcr_status gcr_cuda_hooked_kernel(gcr_ctx *ctx, const char *file, gcr_dtype dt, const gcr_cuda_hooks *h, const char *name,
                                  gcr_cuda_fn **k)
{
    /* pool.cuh's eager programs: static texts keyed once (its kernels are few and light, so one
     * program holds all of a dtype's) */
    static gcr_cuda_src pool_eager[3] = {GCR_CUDA_SRC("#define GCR_DTYPE_ONLY 0\n#include \"pool.cuh\"\n"),
                                         GCR_CUDA_SRC("#define GCR_DTYPE_ONLY 1\n#include \"pool.cuh\"\n"),
                                         GCR_CUDA_SRC("#define GCR_DTYPE_ONLY 2\n#include \"pool.cuh\"\n")};
    GCR_ASSERT(ctx, dt == GCR_F32 || dt == GCR_F16 || dt == GCR_BF16); /* gcr_infer takes only these */
    const bool pool = strcmp(file, "conv.cuh") != 0, hooked = h && h->defs && h->defs[0], text_only = h && h->src_out;
    const int tf32 = !pool && dt == GCR_F32 && gcr_cuda_tf32(ctx, h);
    *k = NULL;
    if (pool && !hooked) {
        if (text_only) { /* hooks with no text: the eager program is the one to prefetch */
            *h->src_out = strdup(pool_eager[dt].text);
            GCR_CHECK(ctx, *h->src_out, GCR_ERR_OOM, "%s: out of host memory", name);
            return GCR_OK;
        }
        return gcr_cuda_program_src(ctx, &pool_eager[dt], &name, 1, k);
    }
    /* a program of this one kernel (the conv.cuh family holds some 40 a dtype, and compiling them
     * all took 35-57 s with NVRTC for sm_90, one takes 1-4 s): hooked, remembered by h->pick for
     * its launch; eager, kept by its name, which alone gives its text; pool.cuh hooked, with the
     * family's few kernels */
    gcr_cuda_pick *pick = hooked && !text_only ? h->pick : NULL;
    if (pick && pick->fn && !strcmp(pick->name, name)) { /* this launch's kernel again: its hooks are the same */
        *k = pick->fn;
        return GCR_OK;
    }
    if (!hooked && !text_only && (*k = gcr_cuda_named_find(ctx, name))) return GCR_OK;
    char inst[160];
    GCR_CHECK(ctx, pool || gcr_cuda_dense_inst(name, inst, sizeof inst) == 0, GCR_ERR_INTERNAL,
              "%s: no instantiation for this kernel name", name);
    char *src = gcr_cuda_dense_source(file, dt, tf32, hooked ? h : NULL, pool ? NULL : inst);
    GCR_CHECK(ctx, src, GCR_ERR_OOM, "%s: out of host memory", name);
    if (text_only) { /* prefetch: the text, no launch (*k stays NULL) */
        *h->src_out = src;
        return GCR_OK;
    }
    gcr_status s = hooked ? gcr_cuda_program(ctx, src, &name, 1, k) : gcr_cuda_program_named(ctx, src, name, k);
    free(src);
    if (s == GCR_OK && pick && strlen(name) < sizeof pick->name) {
        strcpy(pick->name, name);
        pick->fn = *k;
    }
    return s;
}

gcr_status gcr_cuda_eager_prefetch(gcr_ctx *ctx, gcr_dtype dt, const gcr_cuda_hooks *h, const char *const *names, int n)
{
    GCR_CHECK(ctx, n >= 0 && (n == 0 || names), GCR_ERR_INVALID, "cuda eager prefetch: invalid arguments");
    const int tf32 = dt == GCR_F32 && gcr_cuda_tf32(ctx, h);
    char **srcs = calloc((size_t)n + 1, sizeof *srcs);
    GCR_CHECK(ctx, srcs, GCR_ERR_OOM, "cuda eager prefetch: out of host memory");
    int m = 0;
    gcr_status s = GCR_OK;
    for (int i = 0; i < n && s == GCR_OK; i++) {
        char inst[160];
        if (!names[i] || gcr_cuda_dense_inst(names[i], inst, sizeof inst) != 0) continue;
        if (!(srcs[m] = gcr_cuda_dense_source("conv.cuh", dt, tf32, NULL, inst)))
            s = gcr_set_error(ctx, GCR_ERR_OOM, "%s: out of host memory", names[i]);
        else
            m++;
    }
    /* texts already compiled (kept in memory or on disk) cost a lookup here, not a compile */
    if (s == GCR_OK) s = gcr_cuda_programs_prefetch(ctx, (const char *const *)srcs, m);
    for (int i = 0; i < m; i++) free(srcs[i]);
    free(srcs);
    return s;
}

gcr_status gcr_cuda_candidate_kernel(gcr_ctx *ctx, gcr_dtype dt, const gcr_cuda_hooks *h, const char *const *names, int n,
                                     const char *name, gcr_cuda_fn **k)
{
    if ((*k = gcr_cuda_named_find(ctx, name))) return GCR_OK;
    GCR_TRY(gcr_cuda_eager_prefetch(ctx, dt, h, names, n));
    return gcr_cuda_hooked_kernel(ctx, "conv.cuh", dt, h, name, k);
}

gcr_status gcr_cuda_hooked_launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                                  unsigned smem, void *const *std, int nstd, const gcr_cuda_hooks *h)
{
    void *args[8 + GCR_CUDA_MAX_EXTRA];
    GCR_ASSERT(ctx, nstd <= 8);
    int n = 0;
    for (int i = 0; i < nstd; i++) args[n++] = std[i];
    if (h && h->n_extra) {
        GCR_CHECK(ctx, h->n_extra <= GCR_CUDA_MAX_EXTRA && h->extra, GCR_ERR_INVALID,
                  "cuda hooked launch: %d extra kernel arguments (at most %d)", h->n_extra, GCR_CUDA_MAX_EXTRA);
        for (int i = 0; i < h->n_extra; i++) args[n++] = h->extra[i];
    }
    return gcr_cuda_launch(ctx, k, gx, gy, gz, threads, 1, 1, smem, args);
}
