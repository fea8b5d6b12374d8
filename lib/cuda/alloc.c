/* alloc.c — the caching device allocator: sizes round up to classes (four per power of two, so at
 * most 25% slack), freed blocks go to their class's free list and are reused by the next request
 * of that class. After warm-up an eager op costs no cudaMalloc. All work is on the ctx's single
 * stream, so a block freed after queued work may be handed out again at once: later kernels on the
 * same stream run after the ones that still read it. */
#include "cuda_internal.h"
#include <stdlib.h>
#include "../hash.h"

#define MIN_SHIFT 9 /* 512 B: keeps every block 16-byte aligned for vector loads, and cheap */
#define NCLASS 256

typedef struct blk {
    void *ptr;
    size_t size; /* class size */
    struct blk *next;
    UT_hash_handle hh;
} blk;

struct gcr_cuda_alloc {
    blk *freelist[NCLASS]; /* cached blocks per class */
    blk *live;             /* uthash by ptr: blocks handed out */
    blk *spare;            /* unused nodes, so steady state mallocs nothing on the host either */
    size_t held, live_bytes;
    uint64_t mallocs;
};

/* Class index and size for a request: 2^k < b <= 2^(k+1) rounds up to a multiple of 2^(k-2). */
static int size_class(size_t b, size_t *size)
{
    if (b <= ((size_t)1 << MIN_SHIFT)) {
        *size = (size_t)1 << MIN_SHIFT;
        return 0;
    }
    int k = 63 - __builtin_clzll((unsigned long long)(b - 1));
    size_t step = (size_t)1 << (k - 2);
    size_t r = (b + step - 1) & ~(step - 1);
    int j = (int)((r - ((size_t)1 << k)) / step); /* 1..4 */
    *size = r;
    return (k - MIN_SHIFT) * 4 + j;
}

static gcr_cuda_alloc *get(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st->alloc) st->alloc = calloc(1, sizeof *st->alloc);
    return st->alloc;
}

static blk *node(gcr_cuda_alloc *a)
{
    blk *b = a->spare;
    if (b) { a->spare = b->next; memset(b, 0, sizeof *b); return b; }
    return calloc(1, sizeof *b);
}

gcr_status gcr_cuda_alloc_block(gcr_ctx *ctx, size_t bytes, void **ptr)
{
    gcr_cuda_alloc *a = get(ctx);
    *ptr = NULL;
    if (!a) return gcr_set_error(ctx, GCR_ERR_OOM, "cuda alloc: out of host memory");
    size_t size;
    int c = size_class(bytes ? bytes : 1, &size);
    if (c >= NCLASS || size < bytes)
        return gcr_set_error(ctx, GCR_ERR_OOM, "cuda alloc: %zu bytes is beyond any device", bytes);
    blk *b = a->freelist[c];
    if (b) {
        a->freelist[c] = b->next;
    } else {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, size);
        if (e != cudaSuccess) { /* give the cache back to CUDA and try once more */
            cudaGetLastError();
            gcr_cuda_alloc_trim(ctx);
            e = cudaMalloc(&p, size);
        }
        if (e != cudaSuccess) {
            cudaGetLastError();
            return gcr_set_error(ctx, GCR_ERR_OOM, "cuda alloc: out of device memory for %zu bytes (%zu held): %s",
                                 bytes, a->held, cudaGetErrorString(e));
        }
        b = node(a);
        if (!b) {
            cudaFree(p);
            return gcr_set_error(ctx, GCR_ERR_OOM, "cuda alloc: out of host memory");
        }
        b->ptr = p;
        b->size = size;
        a->held += size;
        a->mallocs++;
    }
    b->next = NULL;
    HASH_ADD_PTR(a->live, ptr, b);
    if (GCR_HASH_ADD_FAILED(b)) { /* the block goes back to the cache, untracked blocks are never handed out */
        b->next = a->freelist[c];
        a->freelist[c] = b;
        return gcr_set_error(ctx, GCR_ERR_OOM, "cuda alloc: out of host memory tracking %zu bytes", bytes);
    }
    a->live_bytes += b->size;
    *ptr = b->ptr;
    return GCR_OK;
}

void gcr_cuda_free_block(gcr_ctx *ctx, void *ptr, size_t bytes)
{
    (void)bytes;
    gcr_cuda_alloc *a = gcr_cuda_st(ctx)->alloc;
    if (!a || !ptr) return;
    blk *b = NULL;
    HASH_FIND_PTR(a->live, &ptr, b);
    if (!b) return; /* not ours: never hand CUDA a pointer we did not allocate */
    HASH_DEL(a->live, b);
    a->live_bytes -= b->size;
    size_t size;
    int c = size_class(b->size, &size);
    b->next = a->freelist[c];
    a->freelist[c] = b;
}

void gcr_cuda_alloc_trim(gcr_ctx *ctx)
{
    gcr_cuda_alloc *a = gcr_cuda_st(ctx)->alloc;
    if (!a) return;
    for (int c = 0; c < NCLASS; c++) {
        while (a->freelist[c]) {
            blk *b = a->freelist[c];
            a->freelist[c] = b->next;
            cudaFree(b->ptr);
            a->held -= b->size;
            b->next = a->spare;
            a->spare = b;
        }
    }
}

void gcr_cuda_alloc_fini(gcr_ctx *ctx)
{
    gcr_cuda_alloc *a = gcr_cuda_st(ctx)->alloc;
    if (!a) return;
    gcr_cuda_alloc_trim(ctx);
    blk *b, *tmp;
    HASH_ITER(hh, a->live, b, tmp) { /* leaked by a caller: still give the memory back */
        HASH_DEL(a->live, b);
        cudaFree(b->ptr);
        free(b);
    }
    while (a->spare) {
        b = a->spare;
        a->spare = b->next;
        free(b);
    }
    free(a);
    gcr_cuda_st(ctx)->alloc = NULL;
}

void gcr_cuda_alloc_stats(gcr_ctx *ctx, size_t *held, size_t *live, uint64_t *mallocs)
{
    gcr_cuda_alloc *a = gcr_cuda_st(ctx)->alloc;
    if (held) *held = a ? a->held : 0;
    if (live) *live = a ? a->live_bytes : 0;
    if (mallocs) *mallocs = a ? a->mallocs : 0;
}
