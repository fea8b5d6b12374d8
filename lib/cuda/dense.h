/* dense.h — the conv2d / matmul / pool launchers' interface beyond cuda_ops.h: the hooked launchers
 * through which capture/ codegen runs those kernels with a fused prologue and epilogue, the dense
 * engine's entry points on a gcr_dense_args block (kernels/abi.h, dense.c) and the programs of
 * the conv.cuh / pool.cuh kernel families (hooks.c). */
#ifndef GCR_CUDA_DENSE_H
#define GCR_CUDA_DENSE_H

#include "cuda_ops.h"

/* Fusion hooks. defs: CUDA text placed before the kernel file, defining any of GCR_PROLOGUE,
 * GCR_EPILOGUE and GCR_EXTRA_PARAMS (contract: top of kernels/gemm.cuh), plus helpers they need.
 * extra[i] points at the value of the i-th parameter GCR_EXTRA_PARAMS declares (as for
 * cuLaunchKernel); at most GCR_CUDA_MAX_EXTRA. NULL hooks = the eager kernels. A hooked conv /
 * matmul program instantiates only the kernel the launcher picks (one NVRTC compile of one kernel,
 * not the dtype's ~15), and is compiled once per distinct text (module cache).
 * src_out: when set, the launcher picks its kernel, stores the program text it would compile in
 * *src_out (malloc'ed, the caller frees) and launches nothing: a graph build prefetches exactly the
 * programs its launches will ask for. */
#define GCR_CUDA_MAX_EXTRA GCR_CUDA_HOOK_PARAMS
/* A hooked launch's last pick, kept by its owner across launches: a launch that picks the same
 * kernel again (every replay that runs without a CUDA Graph) builds no program text and looks
 * nothing up. An empty name: nothing picked yet. */
typedef struct gcr_cuda_pick {
    char name[48];
    gcr_cuda_fn *fn;
} gcr_cuda_pick;
typedef struct gcr_cuda_hooks {
    const char *defs;
    void *const *extra;
    int n_extra;
    char **src_out;
    gcr_cuda_pick *pick; /* may be NULL */
    /* f32 1x1 convs and GEMMs may run on TF32 tensor cores (on sm_80+): the setting of the graph
     * the launch belongs to, passed by its executor; a launch without hooks reads knobs.tf32 */
    int tf32;
    /* a conv->conv pair (capture/pass_convconv.c): the depthwise conv whose result, through the
     * prologue, is the conv2d call's input 0, which is then not read (kernels/dwpw.cuh); NULL none */
    const gcr_call *inner;
    /* the launch's program applies a fused prologue to x's elements (not a pair's inner conv): the
     * heuristic then spreads a small problem over more blocks (dense.c wg_tactics) */
    int prologue;
} gcr_cuda_hooks;

/* As gcr_cuda_conv2d / gcr_cuda_matmul / gcr_cuda_pool, with hooks (NULL: plain). The epilogue
 * decides what is stored; out still gives the output's layout (idx) and the default store. */
gcr_status gcr_cuda_conv2d_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h);
gcr_status gcr_cuda_matmul_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h);
gcr_status gcr_cuda_pool_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h);
/* A depthwise conv (groups == C == O; depthwise.c), as gcr_cuda_conv2d_hooked. */
gcr_status gcr_cuda_depthwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h);

/* The limits of the dense engine's kernels on problem a (gcr_cuda_limit, cuda_ops.h): grid z
 * dims and batch items, rows, columns and their tiles (grid y), reduction length. */
int gcr_cuda_dense_limits(const gcr_dense_args *a, gcr_cuda_limit *l);

/* Tests: the dense engine runs the legal tactic whose name contains name (e.g. "tc64k", "mma32",
 * "/s" for a split-K one; the heuristic's or GCR_AUTOTUNE's pick when none matches; NULL: no
 * forcing); "dwv" keeps channels-last depthwise convs on the shared-memory tile (gcr_dwv_*), "dwc"
 * puts them on the channel-group kernel (gcr_dwc_*) and "dws" on the staged tile (gcr_dws_*)
 * wherever it can run. A tactic's name is its kernel's, plus "/s<ksplit>" when split-K. name must
 * outlive its use. gcr_cuda_last_kernel: the name of the ctx's last launched kernel;
 * gcr_cuda_dense_last: the name of the dense engine's last tactic ("" before the first). */
void gcr_cuda_dense_force(gcr_ctx *ctx, const char *name);
const char *gcr_cuda_last_kernel(gcr_ctx *ctx);
const char *gcr_cuda_dense_last(gcr_ctx *ctx);

/* The split-K workspace (scratch.c): GCR_CUDA_SPLITK_BYTES of f32 partials and one counter per
 * output tile for GCR_CUDA_SPLITK_TILES tiles, allocated on the first call with make set and kept
 * until the ctx is destroyed (gcr_cuda_scratch_fini), so graphs may hold its address. 1 and the two
 * pointers, or 0 where it does not exist (make 0) or cannot be allocated (the ctx's error state
 * untouched: split-K is then not offered). */
#define GCR_CUDA_SPLITK_BYTES ((size_t)16 << 20)
#define GCR_CUDA_SPLITK_TILES 65536
int gcr_cuda_splitk_ws(gcr_ctx *ctx, int make, float **part, gcr_u32 **sem);
/* Before a launch that counts on the workspace's counters: orders their zeroing ahead of it on the
 * ctx stream until a zeroing has been queued outside any capture (scratch.c says how). */
gcr_status gcr_cuda_splitk_zeroed(gcr_ctx *ctx);

/* Runs the dense engine on a filled args block: x, w, out, bias (may be NULL) of dtype dt. */
gcr_status gcr_cuda_dense_run(gcr_ctx *ctx, gcr_dtype dt, const gcr_dense_args *a, const void *x, const void *w,
                              void *out, const void *bias, const gcr_cuda_hooks *h);

/* Program text for dtype dt of kernel file "conv.cuh" or "pool.cuh" with hooks h (may be NULL),
 * malloc'ed (NULL when out of memory). inst NULL: every default kernel of the dtype (tf32: the TF32
 * tiles too, f32 conv.cuh only; the library builds such programs of pool.cuh only); else only the
 * kernel the instantiation line inst makes (e.g.
 * "GCR_DENSE_TC_KERNEL(gcr_dense_tc64_f16, gcr_dn_f16, gcr_cfg_tc64)"; gcr_cuda_dense_inst). */
char *gcr_cuda_dense_source(const char *file, gcr_dtype dt, int tf32, const gcr_cuda_hooks *h, const char *inst);

/* The instantiation line of conv.cuh's kernel called name into buf, from the names' scheme
 * gcr_<family>[_<config>]_<f32|tf32|f16|bf16>: every name gcr_cuda_dense_run and the depthwise
 * launchers pick (gcr_dense_{tc,fma,mma}<cfg>_*, gcr_gemv_*, gcr_direct_*, gcr_dw[v|c|s]_*,
 * gcr_dwpw<bn>_*; the config type is gcr_cfg_<cfg>). Returns 0, or -1 for a name outside it. */
int gcr_cuda_dense_inst(const char *name, char *buf, size_t n);

/* Whether f32 1x1 convs / GEMMs may run on TF32 tensor cores: h->tf32 (knobs.tf32 when h is NULL)
 * and an sm_80+ device. */
int gcr_cuda_tf32(gcr_ctx *ctx, const gcr_cuda_hooks *h);

/* The kernel called name of kernel file "conv.cuh" or "pool.cuh" for dtype dt (f32, f16, bf16),
 * from a program of that kernel alone: with the hooks when h has defs (h->pick, when set,
 * remembers it), else eager, kept by its name for the ctx's life (pool.cuh: the dtype's program of
 * every default kernel). With h->src_out set it stores the program text there instead and leaves
 * *k NULL. */
gcr_status gcr_cuda_hooked_kernel(gcr_ctx *ctx, const char *file, gcr_dtype dt, const gcr_cuda_hooks *h, const char *name,
                                  gcr_cuda_fn **k);

/* Compiles the eager programs of conv.cuh's kernels names[0..n) for dtype dt (TF32 as h says, h
 * may be NULL) that no cache holds yet, all at once on a pool of threads (prefetch.c), so that
 * gcr_cuda_hooked_kernel then finds them: a measurement (GCR_AUTOTUNE) runs its candidates one after
 * another, and each one's compile on a cold cache would come in turn (MobileNet-v3 f16 at batch 1:
 * some 25 programs of 0.4-2.5 s each). Best effort: a name outside gcr_cuda_dense_inst's scheme or
 * a program that fails to compile is left for its launch, which reports it. */
gcr_status gcr_cuda_eager_prefetch(gcr_ctx *ctx, gcr_dtype dt, const gcr_cuda_hooks *h, const char *const *names, int n);
/* The eager kernel called name, one of a measurement's candidates names[0..n) (conv.cuh, dtype dt,
 * TF32 as h says, h may be NULL): where it is not compiled yet, every candidate's program is
 * compiled first, all at once (gcr_cuda_eager_prefetch). */
gcr_status gcr_cuda_candidate_kernel(gcr_ctx *ctx, gcr_dtype dt, const gcr_cuda_hooks *h, const char *const *names, int n,
                                     const char *name, gcr_cuda_fn **k);
/* Elements from an operand's first to one past its last, over nd dims of extents ext and strides st. */
int64_t gcr_cuda_span(const int64_t *ext, const int64_t *st, int nd);
/* Launches k (threads x 1 x 1 blocks, smem bytes of dynamic shared memory: past the default 48 KB
 * the function is allowed that much once, on its first such launch) with the nstd (at most 8)
 * standard arguments, then h's extras. */
gcr_status gcr_cuda_hooked_launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                                  unsigned smem, void *const *std, int nstd, const gcr_cuda_hooks *h);
/* "f32", "f16" or "bf16": the dtype suffix of the kernels' names */
const char *gcr_cuda_dt_suffix(gcr_dtype dt);

/* The name of the conv->conv pair kernel (kernels/dwpw.cuh) for a depthwise conv with kh x kw taps,
 * strides sh, sw and dilations dh, dw into bn (a multiple of 16) output channels of dt, its depthwise
 * stage taking items (8 channels) of its BM-pixel tile (GCR_DWPW_BM), written to buf (n bytes):
 * "gcr_dwpw<bn>k<ks>s<st>r<r>_<dt>". The variant shares loads along a row where the taps are 3x3
 * or 5x5 at stride 1 or 2 without dilation, else it is the general one (k0s0); r outputs an item,
 * as many as leave each of the 256 threads an item. */
void gcr_cuda_dwpw_name(char *buf, size_t n, int bn, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                        int64_t dw, int64_t items, gcr_dtype dt);

/* Tests: the pair kernel splits each tile's channel steps over this many blocks (at most one a
 * step; 1: none), whatever the grid; 0 returns the choice to the launcher. */
void gcr_cuda_dwpw_force_split(gcr_ctx *ctx, int splits);

/* gcr_convconv_caps.faster of the CUDA backend (convconv.c): whether the pair kernel beats the
 * depthwise and 1x1 convs apart on this pair. Measured once per shape with GCR_AUTOTUNE=1 (kept
 * with the kernel cache); false with heuristics only. Never fails: a measurement that cannot run
 * answers false and leaves the ctx's error state as it was. */
bool gcr_cuda_convconv_faster(gcr_ctx *ctx, const gcr_convconv_pair *p);

#endif
