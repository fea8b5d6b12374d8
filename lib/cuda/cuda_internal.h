/* cuda_internal.h — the CUDA backend's private interface, shared by the lib/cuda sources:
 * per-context device state, the NVRTC module cache and kernel launch.
 * Driver API entry points come through cudaGetDriverEntryPoint, so the library links only
 * cudart and NVRTC and still loads on machines without a GPU driver. */
#ifndef GCR_CUDA_INTERNAL_H
#define GCR_CUDA_INTERNAL_H

#include "../internal.h"
#include <cuda_runtime.h>
#include <stdatomic.h>

/* A compiled kernel: one function of a loaded module (owned by the ctx's module cache). */
typedef struct gcr_cuda_fn gcr_cuda_fn;

/* A program text with its memory-cache key, hashed at first use and kept: a launcher that runs
 * the same text again keeps it in one of these (static for a fixed text, GCR_CUDA_SRC), and its
 * launches then find their module without hashing or copying the text. */
typedef struct gcr_cuda_src {
    const char *text;
    _Atomic uint64_t key; /* 0: not hashed yet */
} gcr_cuda_src;
#define GCR_CUDA_SRC(t) {(t), 0}
/* The key of s, hashing its text only the first time (*hashed, may be NULL: whether it did). */
uint64_t gcr_cuda_src_key(gcr_cuda_src *s, int *hashed);

/* Compiles (or finds in the memory / disk cache) a program and returns its kernels.
 * src->text: the full CUDA C text; it may #include any embedded file of lib/cuda/kernels by name
 * ("common.cuh"). names[i]: extern "C" kernel names to fetch. Compiles for the device's own
 * architecture; the disk cache's key covers text, options, architecture and NVRTC version.
 * On failure returns GCR_ERR_COMPILE with the NVRTC log in the ctx message. */
gcr_status gcr_cuda_program_src(gcr_ctx *ctx, gcr_cuda_src *src, const char *const *names, int n,
                                gcr_cuda_fn **out);
/* The same for a text used once (a graph build's program): hashes source on every call. */
gcr_status gcr_cuda_program(gcr_ctx *ctx, const char *source, const char *const *names, int n,
                            gcr_cuda_fn **out);
/* For a kernel whose name alone determines its program's text (an eager conv.cuh kernel): the
 * kernel the ctx already fetched under that name (a memory hit: nothing built or hashed), or
 * NULL; then gcr_cuda_program_named with the text fetches it (as gcr_cuda_program) and keeps it
 * under its name for the ctx's life. */
gcr_cuda_fn *gcr_cuda_named_find(gcr_ctx *ctx, const char *name);
gcr_status gcr_cuda_program_named(gcr_ctx *ctx, const char *source, const char *name, gcr_cuda_fn **out);
/* Makes sure every source has a module, compiling the missing ones in parallel threads (NVRTC
 * per program; loading and caching stay on this thread). Sources that fail are skipped: a later
 * gcr_cuda_program on them compiles again and reports the log. For graph builds, where dozens of
 * templated programs would otherwise compile one after another. */
gcr_status gcr_cuda_programs_prefetch(gcr_ctx *ctx, const char *const *sources, int n);
/* Launches k on the ctx stream; args as for cuLaunchKernel. No device query, no allocation. A
 * kernel of a module that includes common.cuh (every gcr kernel) is launched with programmatic
 * stream serialization when the ctx's knobs.pdl is on and the device is sm_90+: it may start
 * before the previous kernel ends, and waits for it in gcr_grid_dep(). */
gcr_status gcr_cuda_launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned smem, void **args);
/* The ctx's stream (for graph capture) and device facts. */
cudaStream_t gcr_cuda_stream(gcr_ctx *ctx);
int gcr_cuda_sm_count(gcr_ctx *ctx);
int gcr_cuda_arch(gcr_ctx *ctx); /* e.g. 90 */
/* Text of an embedded kernel source by file name, or NULL. */
const char *gcr_cuda_embedded(const char *name);

/* ---------------------------------------------------------------- driver API */
#include <cuda.h> /* types only: the driver is reached through entry points, never linked */

/* Driver API entry points, fetched once per process with cudaGetDriverEntryPointByVersion. */
typedef struct gcr_cuda_drv {
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);
    CUresult (*get_error_string)(CUresult, const char **);
    CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
    /* optional (NULL when the driver lacks them): programmatic dependent launch needs both */
    CUresult (*launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*module_get_global)(CUdeviceptr *, size_t *, CUmodule, const char *);
    /* optional: without it no chain runs in clusters past the portable 8 blocks */
    CUresult (*occupancy_max_active_clusters)(int *, CUfunction, const CUlaunchConfig *);
    /* optional: without it no TMA tile is offered (kernels/gemm_tma.cuh) */
    CUresult (*tensor_map_encode_tiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                        const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                        CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
} gcr_cuda_drv;
/* The process's driver table, or NULL with the error recorded on ctx (ctx may be NULL). */
const gcr_cuda_drv *gcr_cuda_driver(gcr_ctx *ctx);
/* Text of a driver error code (never NULL). */
const char *gcr_cuda_drv_error(CUresult r);

/* The CUfunction behind a kernel (the CUDA executor matches it in a graph's kernel nodes). */
CUfunction gcr_kernel_function(const gcr_cuda_fn *k);

/* Device-free NVRTC compile of one program for sm_<arch> (arch e.g. 90; sm_90a, see below): the embedded sources
 * are available as headers. On success *image is a cubin (or PTX when NVRTC does not know the
 * arch; *is_ptx says which), malloc'ed; *log (malloc'ed, may be NULL) holds the NVRTC log.
 * Returns GCR_ERR_COMPILE on a compile failure, with the log. */
gcr_status gcr_nvrtc_compile(const char *source, const char *const *opts, int nopts, int arch,
                             void **image, size_t *size, int *is_ptx, char **log);
/* "maj.min" of the NVRTC in use, packed as maj*1000+min*10 (0 when unavailable). */
int gcr_nvrtc_version(void);
/* 1 when gcr_nvrtc_compile builds arch's programs for its arch-specific target (sm_90a for arch
 * 90, as a cubin), so kernels may use that target's instructions (wgmma: gemm_tc.cuh's WG tiles). */
int gcr_nvrtc_arch_specific(int arch);

/* Module-cache counters of a ctx since its creation (for graph stats and tests). */
typedef struct gcr_cuda_cache_stats {
    int mem_hits;   /* found in the ctx's memory cache */
    int disk_hits;  /* loaded from cache_dir */
    int compiles;   /* compiled by NVRTC */
    int hashes;     /* program texts hashed to find their module (a gcr_cuda_src: once per process) */
} gcr_cuda_cache_stats;
void gcr_cuda_cache_get_stats(gcr_ctx *ctx, gcr_cuda_cache_stats *out);

/* Caching device allocator (alloc.c): blocks in size classes, kept and reused on free. */
typedef struct gcr_cuda_alloc gcr_cuda_alloc;
gcr_status gcr_cuda_alloc_block(gcr_ctx *ctx, size_t bytes, void **ptr);
void gcr_cuda_free_block(gcr_ctx *ctx, void *ptr, size_t bytes);
/* Returns every cached (free) block to CUDA; live blocks stay. */
void gcr_cuda_alloc_trim(gcr_ctx *ctx);
void gcr_cuda_alloc_fini(gcr_ctx *ctx);
/* Bytes obtained from cudaMalloc so far and currently held (live + cached), and cudaMalloc calls. */
void gcr_cuda_alloc_stats(gcr_ctx *ctx, size_t *held, size_t *live, uint64_t *mallocs);

struct gcr_cuda_program_cache;
struct gcr_cuda_named;
struct gcr_cuda_pw_entry;
struct gcr_cuda_tune;
struct gcr_cuda_scratch;

/* Per-ctx backend state (ctx->be_state). */
typedef struct gcr_cuda_state {
    int device;
    int arch;                 /* 10*major + minor */
    int sm_count;
    cudaStream_t stream;      /* non-blocking, one per ctx */
    const gcr_cuda_drv *drv;
    gcr_cuda_alloc *alloc;
    struct gcr_cuda_program_cache *programs; /* uthash by the hash of the text (program.h) */
    struct gcr_cuda_named *named;            /* kernels whose name alone gives their program, by name */
    struct gcr_cuda_pw_entry *pw;            /* eager pointwise kernels by packed key (pointwise.c) */
    gcr_cuda_fn *red[3][3][5];                /* reduce kernels [op][dtype][1,32,256,part,fin] (reduce.c, lazy) */
    gcr_cuda_fn *copy[8];                     /* strided copy, then tiled transpose, by element size 1,2,4,8 (movement.c) */
    gcr_cuda_cache_stats cache;
    const char *last_fn;                      /* name of the last launched kernel (owned by its module) */
    struct gcr_cuda_tune *tune;               /* measured tactic choices and their counters (autotune.c, lazy) */
    const char *dense_force;                  /* tests: the dense engine runs the tactic whose name
                                                 contains this, when legal (gcr_cuda_dense_force) */
    int dwpw_split;                           /* tests: the pair kernel's channel split, 0: the
                                                 launcher's (gcr_cuda_dwpw_force_split) */
    char dense_last[64];                      /* the dense engine's last tactic (gcr_cuda_dense_last) */
    struct gcr_cuda_scratch *scratch;         /* persistent device scratch (scratch.c, lazy) */
} gcr_cuda_state;

static inline gcr_cuda_state *gcr_cuda_st(gcr_ctx *ctx) { return (gcr_cuda_state *)ctx->be_state; }

/* A channels-last operand of C channels (strides st: n, c, y, x) that a kernel may read or write
 * as 16-byte vectors of 16 / es elements: the channel stride is 1, C and every other stride are
 * whole vectors, so each pixel's channels start at a 16-byte boundary of p. */
static inline bool gcr_cuda_vec16(const int64_t *st, int64_t C, size_t es, const void *p)
{
    const int64_t vc = 16 / (int64_t)es;
    return st[1] == 1 && C % vc == 0 && st[0] % vc == 0 && st[2] % vc == 0 && st[3] % vc == 0 && (uintptr_t)p % 16 == 0;
}

/* The two-pass reduction's partials (scratch.c): GCR_CUDA_RED_PARTS doubles of device memory made
 * on the first call and kept until gcr_cuda_scratch_fini (graphs hold the address), shared by the
 * ctx's reductions one after the other on its stream. */
#define GCR_CUDA_RED_PARTS 16384
gcr_status gcr_cuda_reduce_ws(gcr_ctx *ctx, double **part);
/* Frees the ctx's scratch (backend fini, after the stream is idle). */
void gcr_cuda_scratch_fini(gcr_ctx *ctx);

/* Records a CUDA runtime error as GCR_ERR_DEVICE ("what: cudaErrorX: text"); returns the status. */
gcr_status gcr_cuda_error(gcr_ctx *ctx, cudaError_t e, const char *what);
/* The backend's executor (exec.c): a launch list as generated kernels in a CUDA Graph (lib/exec.h). */
extern const struct gcr_executor gcr_cuda_executor;
/* Frees the ctx's pointwise table and program cache (backend fini). */
void gcr_cuda_pointwise_fini(gcr_ctx *ctx);
void gcr_cuda_programs_fini(gcr_ctx *ctx);

#endif
