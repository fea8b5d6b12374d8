/* progcache.c — the ctx's memory cache of compiled modules and of the kernels fetched from them.
 * A launcher that keeps its program text in a gcr_cuda_src has the text's key computed once, and
 * one whose kernel name determines its text finds the kernel by name (gcr_cuda_named_find), so a
 * launch that finds its module hashes, copies and allocates nothing (and asks NVRTC nothing); a
 * miss loads the module from the disk cache or compiles it. */
#include "program.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double gcr_cuda_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

gcr_cuda_prog *gcr_cuda_prog_find(gcr_cuda_state *st, uint64_t key, const char *text)
{
    gcr_cuda_prog *e = NULL;
    HASH_FIND(hh, st->programs, &key, sizeof key, e);
    while (e && strcmp(e->text, text)) e = e->same;
    return e;
}

gcr_cuda_prog *gcr_cuda_prog_new(uint64_t key, const char *text)
{
    gcr_cuda_prog *e = calloc(1, sizeof *e);
    if (!e || !(e->text = strdup(text))) {
        free(e);
        return NULL;
    }
    e->key = key;
    return e;
}

gcr_status gcr_cuda_prog_add(gcr_cuda_state *st, gcr_cuda_prog *e)
{
    gcr_cuda_prog *head = NULL;
    HASH_FIND(hh, st->programs, &e->key, sizeof e->key, head);
    if (head) { /* another text of the same key: chained behind the one in the table */
        e->same = head->same;
        head->same = e;
        return GCR_OK;
    }
    HASH_ADD(hh, st->programs, key, sizeof e->key, e);
    if (!GCR_HASH_ADD_FAILED(e)) return GCR_OK;
    gcr_cuda_prog_free(st, e);
    return GCR_ERR_OOM;
}

void gcr_cuda_prog_free(gcr_cuda_state *st, gcr_cuda_prog *e)
{
    while (e->kernels) {
        struct gcr_cuda_fn *k = e->kernels;
        e->kernels = k->next;
        free(k->name);
        free(k);
    }
    if (e->mod && st->drv) st->drv->module_unload(e->mod);
    free(e->text);
    free(e);
}

int gcr_cuda_prog_from_disk(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e)
{
    size_t kl = 0, size = 0;
    char *key = gcr_cuda_disk_key(st->arch, e->text, &kl);
    void *img = key ? gcr_cuda_disk_load(ctx, key, kl, &size) : NULL;
    free(key);
    if (!img) return 0;
    CUresult r = st->drv->module_load_data(&e->mod, img);
    free(img);
    if (r != CUDA_SUCCESS) {
        e->mod = NULL; /* unusable file: the caller compiles and stores over it */
        return 0;
    }
    st->cache.disk_hits++;
    return 1;
}

CUresult gcr_cuda_prog_from_image(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e, const void *img, size_t size)
{
    st->cache.compiles++;
    CUresult r = st->drv->module_load_data(&e->mod, img);
    if (r != CUDA_SUCCESS) {
        e->mod = NULL;
        return r;
    }
    size_t kl = 0;
    char *key = gcr_cuda_disk_key(st->arch, e->text, &kl);
    if (key) gcr_cuda_disk_store(ctx, key, kl, img, size);
    free(key);
    return r;
}

/* Builds the module of e: disk cache, else NVRTC (then stored on disk). */
static gcr_status build(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e, const char *label)
{
    if (gcr_cuda_prog_from_disk(ctx, st, e)) return GCR_OK;
    gcr_progress(ctx, "compiling %s for sm_%d ...", label, st->arch);
    double t0 = gcr_cuda_now_s();
    char *log = NULL;
    void *img = NULL;
    size_t size = 0;
    int ptx = 0;
    gcr_status s = gcr_nvrtc_compile(e->text, NULL, 0, st->arch, &img, &size, &ptx, &log);
    if (s != GCR_OK) {
        /* keep the head of the log: the first errors are the useful ones */
        gcr_set_error(ctx, s, "nvrtc: compiling %s for sm_%d failed:\n%.1600s", label, st->arch, log ? log : "");
        free(log);
        return s;
    }
    free(log);
    gcr_progress(ctx, "compiled %s in %.2f s", label, gcr_cuda_now_s() - t0);
    CUresult r = gcr_cuda_prog_from_image(ctx, st, e, img, size);
    free(img);
    if (r != CUDA_SUCCESS)
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "cuModuleLoadData(%s): %s", label, gcr_cuda_drv_error(r));
    return GCR_OK;
}

static struct gcr_cuda_fn *kernel_of(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e, const char *name)
{
    for (struct gcr_cuda_fn *k = e->kernels; k; k = k->next)
        if (!strcmp(k->name, name)) return k;
    CUfunction fn;
    CUresult r = st->drv->module_get_function(&fn, e->mod, name);
    if (r != CUDA_SUCCESS) {
        gcr_set_error(ctx, GCR_ERR_COMPILE, "nvrtc: kernel %s not found in its program: %s", name, gcr_cuda_drv_error(r));
        return NULL;
    }
    struct gcr_cuda_fn *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) {
        free(k);
        gcr_set_error(ctx, GCR_ERR_OOM, "nvrtc: out of host memory");
        return NULL;
    }
    k->fn = fn;
    CUdeviceptr marker;
    size_t bytes;
    k->pdl = st->drv->module_get_global && st->drv->module_get_global(&marker, &bytes, e->mod, "gcr_pdl_module") == CUDA_SUCCESS;
    k->next = e->kernels;
    e->kernels = k;
    return k;
}

static gcr_status program(gcr_ctx *ctx, gcr_cuda_state *st, uint64_t key, const char *text, const char *const *names,
                          int n, gcr_cuda_fn **out)
{
    gcr_cuda_prog *e = gcr_cuda_prog_find(st, key, text);
    if (e) {
        st->cache.mem_hits++;
    } else {
        e = gcr_cuda_prog_new(key, text);
        GCR_CHECK(ctx, e, GCR_ERR_OOM, "cuda program: out of host memory");
        const char *label = n > 0 ? names[0] : "program";
        gcr_status s = build(ctx, st, e, label);
        if (s != GCR_OK) {
            gcr_cuda_prog_free(st, e);
            return s;
        }
        if (gcr_cuda_prog_add(st, e) != GCR_OK)
            return gcr_set_error(ctx, GCR_ERR_OOM, "cuda program %s: out of host memory caching its module", label);
    }
    for (int i = 0; i < n; i++)
        if (!(out[i] = kernel_of(ctx, st, e, names[i]))) return ctx->status ? ctx->status : GCR_ERR_COMPILE;
    return GCR_OK;
}

gcr_status gcr_cuda_program_src(gcr_ctx *ctx, gcr_cuda_src *src, const char *const *names, int n, gcr_cuda_fn **out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    GCR_CHECK(ctx, st && src && src->text && (n == 0 || (names && out)), GCR_ERR_INVALID, "cuda program: invalid arguments");
    int hashed = 0;
    uint64_t key = gcr_cuda_src_key(src, &hashed);
    st->cache.hashes += hashed;
    return program(ctx, st, key, src->text, names, n, out);
}

gcr_status gcr_cuda_program(gcr_ctx *ctx, const char *source, const char *const *names, int n, gcr_cuda_fn **out)
{
    gcr_cuda_src src = GCR_CUDA_SRC(source);
    return gcr_cuda_program_src(ctx, &src, names, n, out);
}

gcr_cuda_fn *gcr_cuda_named_find(gcr_ctx *ctx, const char *name)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    gcr_cuda_named *e = NULL;
    if (st && name) HASH_FIND_STR(st->named, name, e);
    if (!e) return NULL;
    st->cache.mem_hits++;
    return e->fn;
}

gcr_status gcr_cuda_program_named(gcr_ctx *ctx, const char *source, const char *name, gcr_cuda_fn **out)
{
    GCR_TRY(gcr_cuda_program(ctx, source, &name, 1, out));
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    gcr_cuda_named *e = NULL;
    HASH_FIND_STR(st->named, name, e);
    if (e) return GCR_OK;
    /* best effort: out of memory here only means finding the kernel through its text next time */
    if (!(e = calloc(1, sizeof *e))) return GCR_OK;
    e->name = (*out)->name;
    e->fn = *out;
    HASH_ADD_KEYPTR(hh, st->named, e->name, strlen(e->name), e);
    if (GCR_HASH_ADD_FAILED(e)) free(e);
    return GCR_OK;
}

void gcr_cuda_progs_free(gcr_cuda_state *st)
{
    gcr_cuda_named *n, *ntmp;
    HASH_ITER(hh, st->named, n, ntmp) {
        HASH_DEL(st->named, n);
        free(n);
    }
    gcr_cuda_prog *e, *tmp;
    HASH_ITER(hh, st->programs, e, tmp) {
        HASH_DEL(st->programs, e);
        while (e->same) {
            gcr_cuda_prog *s = e->same;
            e->same = s->same;
            gcr_cuda_prog_free(st, s);
        }
        gcr_cuda_prog_free(st, e);
    }
}

void gcr_cuda_programs_fini(gcr_ctx *ctx) { gcr_cuda_progs_free(gcr_cuda_st(ctx)); }

void gcr_cuda_cache_get_stats(gcr_ctx *ctx, gcr_cuda_cache_stats *out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (st) *out = st->cache;
    else memset(out, 0, sizeof *out);
}
