/* program.h — the module cache's parts, private to the files that keep it: the memory cache's
 * entries (progcache.c), their keys (progkey.c), the disk cache (diskcache.c) and the parallel
 * compile of a graph's programs (prefetch.c). Launchers use cuda_internal.h. */
#ifndef GCR_CUDA_PROGRAM_H
#define GCR_CUDA_PROGRAM_H

#include "cuda_internal.h"
#include "../hash.h"

/* One kernel fetched from a module, by name. */
struct gcr_cuda_fn {
    CUfunction fn;
    char *name;
    unsigned smem_max; /* dynamic shared memory the function is allowed beyond the default 48 KB */
    bool pdl;          /* its module defines gcr_pdl_module: it calls gcr_grid_dep() first (common.cuh) */
    struct gcr_cuda_fn *next;
};

/* A program's module in the ctx's memory cache, found by the 64-bit hash of its text; the text
 * is kept and compared on a hit, so two texts of one hash never share a module. */
typedef struct gcr_cuda_program_cache {
    uint64_t key;                               /* gcr_cuda_text_key(text): the hash table's key */
    char *text;
    CUmodule mod;
    struct gcr_cuda_fn *kernels;                /* fetched so far */
    struct gcr_cuda_program_cache *same;        /* other texts of the same key (not in the table) */
    UT_hash_handle hh;
} gcr_cuda_prog;

/* A kernel found by its name alone (gcr_cuda_program_named): the name is its fn's (kept by the
 * module). */
typedef struct gcr_cuda_named {
    const char *name;
    struct gcr_cuda_fn *fn;
    UT_hash_handle hh;
} gcr_cuda_named;

/* ---- keys (progkey.c) */
/* 64-bit FNV-1a of n bytes at p. */
uint64_t gcr_cuda_fnv1a(const char *p, size_t n);
/* The memory cache's key of a program text: its FNV-1a, never 0 (0 marks "not yet hashed"). */
uint64_t gcr_cuda_text_key(const char *text);
/* A hash of every embedded kernel source, never 0: what changes when gcr's kernel files do. */
uint64_t gcr_cuda_embedded_hash(void);
/* The disk cache's key of a program text for sm_<arch>: "format|arch|NVRTC version|embedded
 * headers' hash|options|text" in full, malloc'ed (NULL when out of memory), length in *klen. */
char *gcr_cuda_disk_key(int arch, const char *text, size_t *klen);

/* ---- disk cache (diskcache.c), in knobs.cache_dir; best effort, never an error */
/* The image stored for the full disk key, or NULL (absent, unreadable, another key, truncated). */
void *gcr_cuda_disk_load(gcr_ctx *ctx, const char *key, size_t klen, size_t *size);
void gcr_cuda_disk_store(gcr_ctx *ctx, const char *key, size_t klen, const void *img, size_t size);

/* ---- memory cache entries (progcache.c) */
/* The entry of text (key = gcr_cuda_text_key(text)), or NULL. */
gcr_cuda_prog *gcr_cuda_prog_find(gcr_cuda_state *st, uint64_t key, const char *text);
/* A new entry for text with no module yet (NULL when out of memory); not in the cache. */
gcr_cuda_prog *gcr_cuda_prog_new(uint64_t key, const char *text);
/* Puts e into the cache; on failure (out of memory) frees it and returns GCR_ERR_OOM. */
gcr_status gcr_cuda_prog_add(gcr_cuda_state *st, gcr_cuda_prog *e);
void gcr_cuda_prog_free(gcr_cuda_state *st, gcr_cuda_prog *e);
/* Frees every entry of the cache and the table of kernels by name (gcr_cuda_programs_fini on the
 * ctx's state). */
void gcr_cuda_progs_free(gcr_cuda_state *st);
/* Loads e's module from the disk cache; 1 when it did (counted as a disk hit). */
int gcr_cuda_prog_from_disk(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e);
/* Loads e's module from a freshly compiled image and stores the image on disk (counted as a
 * compile); CUDA_SUCCESS or the driver's error. */
CUresult gcr_cuda_prog_from_image(gcr_ctx *ctx, gcr_cuda_state *st, gcr_cuda_prog *e, const void *img, size_t size);

/* Seconds on a monotonic clock (compile progress lines). */
double gcr_cuda_now_s(void);

#endif
