/* nvrtc.c — run-time compilation and the module cache. A program is compiled by NVRTC for the
 * device's own architecture, with every embedded .cuh file of lib/cuda/kernels available as a header.
 * Modules are cached per ctx in memory (uthash on the full key) and across processes on disk in
 * knobs.cache_dir. The key is "format|arch|NVRTC version|options|source" in full; the file name is
 * its 64-bit FNV-1a hash, and the file stores the key again, so a hash collision or a damaged file
 * only costs a recompile. */
#include "cuda_internal.h"
#include <errno.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include "../hash.h"

extern const struct gcr_embedded_src { const char *name; const char *text; } gcr_embedded_srcs[];

#define KEY_FORMAT "gcr-module-1"
#define FILE_MAGIC "GCRMOD1\n"

struct gcr_cuda_fn {
    CUfunction fn;
    char *name;
    struct gcr_cuda_fn *next;
};

typedef struct gcr_cuda_program_cache {
    char *key;        /* full key (hash table key) */
    size_t keylen;
    CUmodule mod;
    struct gcr_cuda_fn *kernels; /* fetched so far */
    UT_hash_handle hh;
} prog_t;

const char *gcr_cuda_embedded(const char *name)
{
    for (int i = 0; name && gcr_embedded_srcs[i].name; i++)
        if (!strcmp(gcr_embedded_srcs[i].name, name)) return gcr_embedded_srcs[i].text;
    return NULL;
}

int gcr_nvrtc_version(void)
{
    int maj = 0, min = 0;
    if (nvrtcVersion(&maj, &min) != NVRTC_SUCCESS) return 0;
    return maj * 1000 + min * 10;
}

/* The arch to emit: the device's own when NVRTC knows it (cubin), else the newest NVRTC knows
 * below it, as PTX that the driver JIT-compiles forward. */
static int pick_arch(int arch, int *ptx)
{
    int n = 0, best = 0, archs[64];
    *ptx = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 64 ||
        nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return arch;
    for (int i = 0; i < n; i++) {
        if (archs[i] == arch) return arch;
        if (archs[i] < arch && archs[i] > best) best = archs[i];
    }
    if (!best) return arch; /* older than anything NVRTC emits: let its error say so */
    *ptx = 1;
    return best;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

gcr_status gcr_nvrtc_compile(const char *source, const char *const *opts, int nopts, int arch,
                             void **image, size_t *size, int *is_ptx, char **log)
{
    *image = NULL;
    *size = 0;
    *log = NULL;
    int nh = 0;
    while (gcr_embedded_srcs[nh].name) nh++;
    const char **hdr = malloc(sizeof *hdr * (size_t)(nh + 1)), **hname = malloc(sizeof *hname * (size_t)(nh + 1));
    const char **o = malloc(sizeof *o * (size_t)(nopts + 4));
    if (!hdr || !hname || !o) {
        free(hdr); free(hname); free(o);
        *log = dupstr("out of host memory");
        return GCR_ERR_OOM;
    }
    for (int i = 0; i < nh; i++) {
        hdr[i] = gcr_embedded_srcs[i].text;
        hname[i] = gcr_embedded_srcs[i].name;
    }
    int ptx = 0, a = pick_arch(arch, &ptx);
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", ptx ? "compute" : "sm", a);
    int no = 0;
    o[no++] = archopt;
    /* approximate f32 division (within 2 ulp): IEEE division made a fused f16 hardswish
     * compute-bound at 67% of copy bandwidth; with this it streams at ~95% */
    o[no++] = "--std=c++17";
    o[no++] = "-prec-div=false";
    for (int i = 0; i < nopts; i++) o[no++] = opts[i];

    gcr_status s = GCR_OK;
    nvrtcProgram prog = NULL;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, "gcr_program.cu", nh, hdr, hname);
    if (r != NVRTC_SUCCESS) {
        *log = dupstr(nvrtcGetErrorString(r));
        s = GCR_ERR_COMPILE;
        goto done;
    }
    r = nvrtcCompileProgram(prog, no, o);
    size_t ln = 0;
    if (nvrtcGetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && ln > 1 && (*log = malloc(ln)))
        if (nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS) (*log)[0] = 0;
    if (r != NVRTC_SUCCESS) {
        if (!*log) *log = dupstr(nvrtcGetErrorString(r));
        s = GCR_ERR_COMPILE;
        goto done;
    }
    size_t n = 0;
    r = ptx ? nvrtcGetPTXSize(prog, &n) : nvrtcGetCUBINSize(prog, &n);
    if (r == NVRTC_SUCCESS && n && (*image = malloc(n)))
        r = ptx ? nvrtcGetPTX(prog, *image) : nvrtcGetCUBIN(prog, *image);
    if (r != NVRTC_SUCCESS || !*image) {
        free(*image);
        *image = NULL;
        free(*log);
        *log = dupstr(r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "out of host memory");
        s = r != NVRTC_SUCCESS ? GCR_ERR_COMPILE : GCR_ERR_OOM; /* OOM must not split a group as if it failed to compile */
        goto done;
    }
    *size = n;
    if (is_ptx) *is_ptx = ptx;
done:
    if (prog) nvrtcDestroyProgram(&prog);
    free(hdr);
    free(hname);
    free(o);
    return s;
}

/* ---------------------------------------------------------------- disk cache */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* hash of every embedded kernel source, computed once (the sources are constants) */
static uint64_t embedded_hash(void)
{
    static _Atomic uint64_t h; /* contexts on several threads may compute it at once: same value */
    uint64_t x = atomic_load_explicit(&h, memory_order_relaxed);
    if (!x) {
        uint64_t acc = 0;
        for (int i = 0; gcr_embedded_srcs[i].name; i++)
            acc = acc * 1099511628211ull ^ fnv1a(gcr_embedded_srcs[i].text, strlen(gcr_embedded_srcs[i].text));
        x = acc | 1; /* never 0, so "computed" is distinguishable */
        atomic_store_explicit(&h, x, memory_order_relaxed);
    }
    return x;
}

static void mkdirs(const char *dir)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    mkdir(buf, 0755);
}

static void cache_path(gcr_ctx *ctx, const prog_t *e, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%016llx.mod", ctx->knobs.cache_dir, (unsigned long long)fnv1a(e->key, e->keylen));
}

/* Image stored for e's full key, or NULL (absent, unreadable, another key, truncated). */
static void *disk_load(gcr_ctx *ctx, const prog_t *e, size_t *size)
{
    if (!ctx->knobs.cache_dir || !*ctx->knobs.cache_dir) return NULL;
    char path[1100];
    cache_path(ctx, e, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char magic[8];
    uint64_t kl = 0, il = 0;
    void *img = NULL;
    char *key = NULL;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, FILE_MAGIC, 8) || fread(&kl, 8, 1, f) != 1 || kl != e->keylen)
        goto fail;
    if (!(key = malloc(kl)) || fread(key, 1, kl, f) != kl || memcmp(key, e->key, kl)) goto fail;
    if (fread(&il, 8, 1, f) != 1 || il == 0 || il > ((uint64_t)1 << 32)) goto fail;
    if (!(img = malloc(il)) || fread(img, 1, il, f) != il) goto fail;
    free(key);
    fclose(f);
    *size = il;
    return img;
fail:
    free(key);
    free(img);
    fclose(f);
    return NULL;
}

/* Best effort: a cache that cannot be written only costs a compile next time. Written to a
 * temporary name and renamed, so a reader never sees half a file. */
static void disk_store(gcr_ctx *ctx, const prog_t *e, const void *img, size_t size)
{
    if (!ctx->knobs.cache_dir || !*ctx->knobs.cache_dir) return;
    mkdirs(ctx->knobs.cache_dir);
    char path[1100], tmp[1200];
    cache_path(ctx, e, path, sizeof path);
    static atomic_uint seq; /* unique temporary names across the process's threads */
    snprintf(tmp, sizeof tmp, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        gcr_info(ctx, "cannot write kernel cache %s: %s", tmp, strerror(errno));
        return;
    }
    uint64_t kl = e->keylen, il = size;
    int ok = fwrite(FILE_MAGIC, 1, 8, f) == 8 && fwrite(&kl, 8, 1, f) == 1 && fwrite(e->key, 1, kl, f) == kl &&
             fwrite(&il, 8, 1, f) == 1 && fwrite(img, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}

/* ---------------------------------------------------------------- module cache */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void prog_free(gcr_cuda_state *st, prog_t *e)
{
    while (e->kernels) {
        struct gcr_cuda_fn *k = e->kernels;
        e->kernels = k->next;
        free(k->name);
        free(k);
    }
    if (e->mod && st->drv) st->drv->module_unload(e->mod);
    free(e->key);
    free(e);
}

/* Builds the module of e: disk cache, else NVRTC (then stored on disk). */
static gcr_status build(gcr_ctx *ctx, gcr_cuda_state *st, prog_t *e, const char *source, const char *label)
{
    size_t size = 0;
    void *img = disk_load(ctx, e, &size);
    if (img) {
        CUresult r = st->drv->module_load_data(&e->mod, img);
        free(img);
        if (r == CUDA_SUCCESS) {
            st->cache.disk_hits++;
            return GCR_OK;
        }
        e->mod = NULL; /* unusable file: fall through and recompile over it */
    }
    gcr_progress(ctx, "compiling %s for sm_%d ...", label, st->arch);
    double t0 = now_s();
    char *log = NULL;
    int ptx = 0;
    gcr_status s = gcr_nvrtc_compile(source, NULL, 0, st->arch, &img, &size, &ptx, &log);
    if (s != GCR_OK) {
        /* keep the head of the log: the first errors are the useful ones */
        gcr_set_error(ctx, s, "nvrtc: compiling %s for sm_%d failed:\n%.1600s", label, st->arch, log ? log : "");
        free(log);
        return s;
    }
    free(log);
    st->cache.compiles++;
    gcr_progress(ctx, "compiled %s in %.2f s", label, now_s() - t0);
    CUresult r = st->drv->module_load_data(&e->mod, img);
    if (r != CUDA_SUCCESS) {
        free(img);
        e->mod = NULL;
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "cuModuleLoadData(%s): %s", label, gcr_cuda_drv_error(r));
    }
    disk_store(ctx, e, img, size);
    free(img);
    return GCR_OK;
}

static struct gcr_cuda_fn *kernel_of(gcr_ctx *ctx, gcr_cuda_state *st, prog_t *e, const char *name)
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
    if (!k || !(k->name = dupstr(name))) {
        free(k);
        gcr_set_error(ctx, GCR_ERR_OOM, "nvrtc: out of host memory");
        return NULL;
    }
    k->fn = fn;
    k->next = e->kernels;
    e->kernels = k;
    return k;
}

/* The module cache key of source: format, arch, NVRTC version, the embedded headers it may
 * include, the fixed options, then the text itself. Caller frees; NULL on OOM. */
static char *make_key(const gcr_cuda_state *st, const char *source, size_t *klen)
{
    char head[160];
    /* the key covers the embedded headers a program may include: a library with changed kernel
     * files must never load modules compiled from the old ones */
    int hl = snprintf(head, sizeof head, "%s|sm_%d|nvrtc%d|hdr%016llx|--std=c++17 -prec-div=false|", KEY_FORMAT,
                      st->arch, gcr_nvrtc_version(), (unsigned long long)embedded_hash());
    size_t sl = strlen(source), kl = (size_t)hl + sl;
    char *key = malloc(kl + 1);
    if (!key) return NULL;
    memcpy(key, head, (size_t)hl);
    memcpy(key + hl, source, sl + 1);
    *klen = kl;
    return key;
}

gcr_status gcr_cuda_program(gcr_ctx *ctx, const char *source, const char *const *names, int n, gcr_cuda_fn **out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    GCR_CHECK(ctx, st && source && (n == 0 || (names && out)), GCR_ERR_INVALID, "cuda program: invalid arguments");
    size_t kl;
    char *key = make_key(st, source, &kl);
    GCR_CHECK(ctx, key, GCR_ERR_OOM, "cuda program: out of host memory");
    prog_t *e = NULL;
    HASH_FIND(hh, st->programs, key, kl, e);
    if (e) {
        free(key);
        st->cache.mem_hits++;
    } else {
        e = calloc(1, sizeof *e);
        if (!e) {
            free(key);
            return gcr_set_error(ctx, GCR_ERR_OOM, "cuda program: out of host memory");
        }
        e->key = key;
        e->keylen = kl;
        const char *label = n > 0 ? names[0] : "program";
        gcr_status s = build(ctx, st, e, source, label);
        if (s != GCR_OK) {
            prog_free(st, e);
            return s;
        }
        HASH_ADD_KEYPTR(hh, st->programs, e->key, e->keylen, e);
        if (GCR_HASH_ADD_FAILED(e)) {
            prog_free(st, e);
            return gcr_set_error(ctx, GCR_ERR_OOM, "cuda program %s: out of host memory caching its module", label);
        }
    }
    for (int i = 0; i < n; i++)
        if (!(out[i] = kernel_of(ctx, st, e, names[i]))) return ctx->status ? ctx->status : GCR_ERR_COMPILE;
    return GCR_OK;
}

/* ---------------------------------------------------------------- parallel prefetch */

typedef struct job {
    const char *source;
    int arch;
    void *img;
    size_t size;
    int ptx;
    char *log;
    gcr_status s;
} job_t;

typedef struct pool {
    job_t *jobs;
    int n;
    int next; /* guarded by mu */
    pthread_mutex_t mu;
} pool_t;

static void *compile_worker(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        job_t *j = &p->jobs[i];
        /* NVRTC is thread-safe across programs; nothing here touches the ctx */
        j->s = gcr_nvrtc_compile(j->source, NULL, 0, j->arch, &j->img, &j->size, &j->ptx, &j->log);
    }
}

gcr_status gcr_cuda_programs_prefetch(gcr_ctx *ctx, const char *const *sources, int n)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    GCR_CHECK(ctx, st && (n == 0 || sources), GCR_ERR_INVALID, "cuda prefetch: invalid arguments");
    prog_t **todo = calloc((size_t)n + 1, sizeof *todo);
    job_t *jobs = calloc((size_t)n + 1, sizeof *jobs);
    if (!todo || !jobs) {
        free(todo);
        free(jobs);
        return gcr_set_error(ctx, GCR_ERR_OOM, "cuda prefetch: out of host memory");
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        size_t kl;
        char *key = make_key(st, sources[i], &kl);
        prog_t *e = NULL;
        if (key) HASH_FIND(hh, st->programs, key, kl, e);
        for (int t = 0; !e && key && t < m; t++) /* the same source twice in one batch */
            if (todo[t]->keylen == kl && !memcmp(todo[t]->key, key, kl)) e = todo[t];
        if (e || !key || !(e = calloc(1, sizeof *e))) {
            free(key);
            continue;
        }
        e->key = key;
        e->keylen = kl;
        size_t size = 0;
        void *img = disk_load(ctx, e, &size);
        if (img && st->drv->module_load_data(&e->mod, img) == CUDA_SUCCESS) {
            free(img);
            st->cache.disk_hits++;
            HASH_ADD_KEYPTR(hh, st->programs, e->key, e->keylen, e);
            if (GCR_HASH_ADD_FAILED(e)) prog_free(st, e); /* best effort, like a failed compile */
            continue;
        }
        free(img);
        e->mod = NULL;
        jobs[m] = (job_t){.source = sources[i], .arch = st->arch};
        todo[m++] = e;
    }
    if (m > 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        int nt = (int)(cpus < 1 ? 1 : cpus > 32 ? 32 : cpus);
        if (nt > m) nt = m;
        gcr_progress(ctx, "compiling %d kernel program%s for sm_%d on %d thread%s ...", m, m > 1 ? "s" : "", st->arch,
                     nt, nt > 1 ? "s" : "");
        double t0 = now_s();
        pool_t p = {jobs, m, 0, PTHREAD_MUTEX_INITIALIZER};
        pthread_t th[32];
        int started = 0;
        for (int t = 1; t < nt; t++)
            if (pthread_create(&th[started], NULL, compile_worker, &p) == 0) started++;
        compile_worker(&p); /* this thread works too, so a failed pthread_create only slows it */
        for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
        int ok = 0;
        for (int i = 0; i < m; i++) {
            prog_t *e = todo[i];
            /* a failure is left for gcr_cuda_program, which compiles it again and reports the log */
            if (jobs[i].s == GCR_OK && st->drv->module_load_data(&e->mod, jobs[i].img) == CUDA_SUCCESS) {
                disk_store(ctx, e, jobs[i].img, jobs[i].size);
                st->cache.compiles++;
                HASH_ADD_KEYPTR(hh, st->programs, e->key, e->keylen, e);
                if (GCR_HASH_ADD_FAILED(e)) prog_free(st, e);
                else ok++;
            } else {
                e->mod = NULL;
                prog_free(st, e);
            }
            free(jobs[i].img);
            free(jobs[i].log);
        }
        gcr_progress(ctx, "compiled %d of %d kernel programs in %.2f s", ok, m, now_s() - t0);
    }
    free(todo);
    free(jobs);
    return GCR_OK;
}

void gcr_cuda_programs_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    prog_t *e, *tmp;
    HASH_ITER(hh, st->programs, e, tmp) {
        HASH_DEL(st->programs, e);
        prog_free(st, e);
    }
}

CUfunction gcr_kernel_function(const gcr_cuda_fn *k) { return k->fn; }

gcr_status gcr_cuda_launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned smem, void **args)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    st->last_fn = k->name; /* profiles name the function a fused kernel's launcher picked */
    CUresult r = st->drv->launch_kernel(k->fn, gx, gy, gz, bx, by, bz, smem, (CUstream)st->stream, args, NULL);
    if (r != CUDA_SUCCESS)
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "launch of %s (grid %ux%ux%u, block %ux%ux%u): %s", k->name, gx, gy,
                             gz, bx, by, bz, gcr_cuda_drv_error(r));
    return GCR_OK;
}

void gcr_cuda_cache_get_stats(gcr_ctx *ctx, gcr_cuda_cache_stats *out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (st) *out = st->cache;
    else memset(out, 0, sizeof *out);
}
