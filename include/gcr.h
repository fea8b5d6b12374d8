/* gcr.h — the one public header of gcr, a graph-capture runtime for GPU inference.
 *
 * A C program calls ops on tensors. gcr runs them eagerly (CUDA when a device is present, else
 * the CPU), or, while a context captures, records them, fuses the record into few generated
 * kernels and replays the launch sequence (as one CUDA Graph on a GPU).
 *
 * Conventions that hold for every call below:
 * - Every op takes the context first and returns a new tensor, or NULL on failure. A failure
 *   records a status and a message naming the op and the shapes on the context; the first
 *   error is kept ("sticky") until gcr_ctx_clear_error(). An op given a NULL tensor returns NULL
 *   and records GCR_ERR_INVALID. The library never exits or aborts; it prints to stderr only as
 *   GCR_LOG says (by default one progress line per kernel compile, nothing else).
 * - Tensors are owned by their context. A tensor lives until gcr_tensor_free(), until the end of
 *   the innermost scope that created it (gcr_scope_begin/end, for per-iteration intermediates),
 *   or until gcr_ctx_destroy(), whichever comes first. gcr_tensor_keep() exempts one from scopes.
 * - Views (permute, reshape of a contiguous tensor, slice, flatten, expand) share storage with
 *   their source; the storage lives as long as any view of it.
 * - Host data passed in or out is always dense row-major in the tensor's logical dimension order,
 *   whatever its memory format or strides.
 * - A context is used from one thread at a time.
 */
#ifndef GCR_H
#define GCR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GCR_API __attribute__((visibility("default")))
#else
#define GCR_API
#endif

#define GCR_VERSION_MAJOR 0
#define GCR_VERSION_MINOR 1
#define GCR_MAX_DIMS 8

/* ---------------------------------------------------------------- status */

typedef enum gcr_status {
    GCR_OK = 0,
    GCR_ERR_INVALID,     /* NULL or otherwise invalid argument */
    GCR_ERR_SHAPE,       /* shapes do not agree (broadcast, matmul, conv channels, reshape) */
    GCR_ERR_DTYPE,       /* dtype not supported by the op, or operands differ */
    GCR_ERR_PARAM,       /* invalid op parameter (stride 0, groups not dividing channels, ...) */
    GCR_ERR_OOM,         /* host or device allocation failed */
    GCR_ERR_DEVICE,      /* CUDA runtime / driver error; the message holds CUDA's text */
    GCR_ERR_COMPILE,     /* NVRTC failed; the message holds the log */
    GCR_ERR_UNSUPPORTED, /* valid request this build or device cannot serve */
    GCR_ERR_CAPTURE,     /* misuse of capture (reading data while capturing, nesting, ...) */
    GCR_ERR_GUARD,       /* replay inputs differ from the capture and re-tracing is off */
    GCR_ERR_IO,          /* file missing or malformed */
    GCR_ERR_INTERNAL
} gcr_status;

/* Short name of a status ("GCR_ERR_SHAPE"); never NULL. */
GCR_API const char *gcr_status_name(gcr_status s);

/* ---------------------------------------------------------------- dtypes, devices */

typedef enum gcr_dtype { GCR_F32, GCR_F16, GCR_BF16, GCR_I32, GCR_I64, GCR_BOOL, GCR_DTYPE_COUNT } gcr_dtype;

GCR_API const char *gcr_dtype_name(gcr_dtype t); /* "f32", ... ; "?" when out of range */
GCR_API size_t gcr_dtype_size(gcr_dtype t);      /* bytes per element; 0 when out of range */

typedef enum gcr_device { GCR_DEVICE_AUTO, GCR_DEVICE_CPU, GCR_DEVICE_CUDA } gcr_device;

/* Memory format of 4-d tensors: NCHW is dense row-major; NHWC keeps the logical order N,C,H,W
 * but stores channels innermost (channels-last strides). Other ranks are always row-major. */
typedef enum gcr_format { GCR_NCHW, GCR_NHWC } gcr_format;

/* ---------------------------------------------------------------- context */

typedef struct gcr_ctx gcr_ctx;
typedef struct gcr_tensor gcr_tensor;
typedef struct gcr_graph gcr_graph;

/* Knobs. Each field set to -1 (or NULL) takes the environment variable named beside it, else the
 * default shown. gcr_ctx_opts_default() fills every field that way. */
typedef struct gcr_knobs {
    int fusion;            /* GCR_FUSION: 0 disables all fusion passes (default 1) */
    int graphs;            /* GCR_GRAPHS: 0 replays as plain launches, no CUDA Graph (default 1) */
    int horizontal;        /* GCR_HORIZONTAL: merge sibling pointwise groups (default 1) */
    int single_node;       /* GCR_SINGLE_NODE: generate kernels even for lone ops (default 0) */
    int guards;            /* GCR_GUARDS: 0 skips input checks on replay; testing only (default 1) */
    int retrace;           /* GCR_RETRACE: on a guard mismatch 1 re-traces, 0 falls back to eager (default 1) */
    int graph_cache;       /* GCR_GRAPH_CACHE: graphs kept per region before LRU eviction (default 8; 0 counts
                              as 1; below -1 is GCR_ERR_INVALID) */
    const char *skip_fuse; /* GCR_SKIP_FUSE: comma list of op kinds never fused: pointwise,reduce,conv,matmul;
                              chain and convconv turn those passes off */
    const char *dump;      /* GCR_DUMP: comma list of trace,fused,source,plan, or all (default none);
                              a file that cannot be written is reported at log level 1 */
    const char *dump_dir;  /* GCR_DUMP_DIR (default "gcr_dump") */
    int log;               /* GCR_LOG: 0 silent, 1 progress lines for compiles (default), 2 verbose; stderr */
    const char *profile;   /* GCR_PROFILE: path of a Chrome-trace JSON of per-kernel timings */
    const char *cache_dir; /* GCR_CACHE_DIR: compiled kernels ("$XDG_CACHE_HOME/gcr" or ~/.cache/gcr) */
    int tf32;              /* GCR_TF32: 1 runs f32 1x1 convs and GEMMs on TF32 tensor cores (sm_80+; inputs
                              rounded to a 10-bit mantissa, f32 accumulate: ~1e-3 relative error, as
                              PyTorch's default cudnn.allow_tf32 does for convs); 0 exact FP32 (default 0).
                              CUDA only (the CPU is always exact). Eager calls use the value in force; a
                              graph keeps the value it was captured with for all its replays */
    int autotune;          /* GCR_AUTOTUNE: 1 picks the dense engine's kernel for each conv/GEMM shape, and
                              whether each conv->conv pair runs as one kernel (convconv 2), by
                              timing its candidates once on the GPU (each warmed, then the median of a
                              few runs) and keeps the fastest, cached with the compiled kernels in
                              cache_dir by shape, dtype, device, arch and driver, so a later process
                              measures nothing; 0 the built-in heuristics only, ignoring measured
                              choices (default 0). Nothing is measured while a stream is captured */
    int pdl;               /* GCR_PDL: 1 launches each gcr kernel with programmatic dependent launch on sm_90+
                              devices, so it is scheduled while the previous kernel finishes and waits for
                              that kernel's results before touching memory; results are bit-identical
                              either way. 0 plain launches (default 1; always off before sm_90). A graph
                              keeps the value in force when its launches were captured */
    int l2_persist;        /* GCR_L2_PERSIST: 1 packs the constants a graph variant reads (weights, folded BN)
                              into one device buffer of its own when the variant is built, and gives its
                              CUDA Graph's kernels an L2 access-policy window over it (persisting hits),
                              so replays keep the weights in L2 (sm_80+; raises the device's
                              persisting-L2 limit to the weights' size; weights beyond the device's
                              persisting maximum get no window). Costs a second copy of the weights per
                              variant; later writes to constant tensors do not reach the variant (as
                              gcr_tensor_set_const allows). 0 reads constants in place (default 0) */
    int convconv;          /* GCR_CONVCONV: conv->conv fusion, a depthwise conv whose result only a 1x1 conv
                              reads run as one kernel: 1 wherever the backend has a kernel for the pair
                              (CUDA: f16/bf16 channels-last), 0 never, 2 only where the backend counts that
                              kernel the faster (default 2: every pair on the CPU; on CUDA the pairs whose
                              kernel measured faster under autotune 1, none with heuristics only) */
} gcr_knobs;

typedef struct gcr_ctx_opts {
    gcr_device device; /* GCR_DEVICE_AUTO: the GCR_DEVICE variable (cpu|cuda), else CUDA if present, else CPU */
    int device_index;  /* CUDA ordinal (default 0) */
    gcr_knobs knobs;
} gcr_ctx_opts;

GCR_API gcr_ctx_opts gcr_ctx_opts_default(void);

/* Creates a context. opts may be NULL (defaults). On failure *out is NULL and the status says
 * why; a requested CUDA device that is absent is GCR_ERR_DEVICE, never a silent CPU fallback; a
 * device outside gcr_device, or a knob out of its range, is GCR_ERR_INVALID (no ctx is left to
 * hold the message: GCR_LOG=2, or knobs.log 2, prints it).
 * The caller owns *out and releases it with gcr_ctx_destroy(). */
GCR_API gcr_status gcr_ctx_create(gcr_ctx **out, const gcr_ctx_opts *opts);
/* Frees the context and every tensor and graph it still owns; handles to them become invalid. This
 * includes the tensors of weights loaded on it (gcr_weights_load); the gcr_weights objects
 * themselves stay the caller's, to free with gcr_weights_free, before or after this call. */
GCR_API void gcr_ctx_destroy(gcr_ctx *ctx);

GCR_API gcr_device gcr_ctx_device(const gcr_ctx *ctx);
GCR_API const char *gcr_ctx_device_name(const gcr_ctx *ctx); /* "cpu" or the GPU's name */
GCR_API gcr_status gcr_ctx_status(const gcr_ctx *ctx);        /* first error since last clear */
GCR_API const char *gcr_ctx_error(const gcr_ctx *ctx);        /* its message, "" when none */
GCR_API void gcr_ctx_clear_error(gcr_ctx *ctx);
/* Waits for all queued device work. */
GCR_API gcr_status gcr_ctx_sync(gcr_ctx *ctx);
/* The knobs in force (environment applied). The pointer stays valid for the ctx's life; a string
 * field, until a gcr_ctx_set_knobs gives that field another value. */
GCR_API const gcr_knobs *gcr_ctx_knobs(const gcr_ctx *ctx);
/* Changes knobs for graphs captured from now on; fields left at -1 / NULL are kept; a string set to
 * "" takes its default, as an empty variable does (profile "" and dump "" turn them off). */
GCR_API gcr_status gcr_ctx_set_knobs(gcr_ctx *ctx, const gcr_knobs *k);

/* ---------------------------------------------------------------- tensors */

/* A new tensor with uninitialised data. shape has ndim entries (0 <= ndim <= GCR_MAX_DIMS).
 * fmt GCR_NHWC needs ndim == 4. */
GCR_API gcr_tensor *gcr_tensor_new(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape, gcr_format fmt);
/* A new tensor filled from host memory (dense row-major, numel * dtype size bytes). */
GCR_API gcr_tensor *gcr_tensor_from_data(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape,
                                         gcr_format fmt, const void *host);
/* Copies bytes (must equal numel * dtype size) from host memory into t, which keeps its layout. */
GCR_API gcr_status gcr_tensor_from_host(gcr_tensor *t, const void *src, size_t bytes);
/* Copies t to host memory as dense row-major; waits for pending work that produces t. */
GCR_API gcr_status gcr_tensor_to_host(const gcr_tensor *t, void *dst, size_t bytes);

/* Releases t now (a view releases only its own handle). NULL is a no-op. */
GCR_API void gcr_tensor_free(gcr_tensor *t);
/* Exempts t from scopes: it then lives until gcr_tensor_free() or the ctx's end. Returns t. */
GCR_API gcr_tensor *gcr_tensor_keep(gcr_tensor *t);
/* Marks t (weights, BN statistics) as constant: captured graphs may fold it at capture time and
 * then never read it again, so later writes to t do not reach such graphs. Returns t. */
GCR_API gcr_tensor *gcr_tensor_set_const(gcr_tensor *t);

/* Scopes free per-iteration intermediates: gcr_scope_end() frees every tensor created since the
 * matching gcr_scope_begin() that was not kept or freed already. Scopes nest. */
GCR_API uint64_t gcr_scope_begin(gcr_ctx *ctx);
GCR_API void gcr_scope_end(gcr_ctx *ctx, uint64_t scope);

GCR_API gcr_dtype gcr_tensor_dtype(const gcr_tensor *t);
GCR_API int gcr_tensor_ndim(const gcr_tensor *t);
GCR_API int64_t gcr_tensor_dim(const gcr_tensor *t, int i);    /* negative i counts from the end */
GCR_API int64_t gcr_tensor_stride(const gcr_tensor *t, int i); /* in elements */
GCR_API int64_t gcr_tensor_numel(const gcr_tensor *t);
GCR_API size_t gcr_tensor_nbytes(const gcr_tensor *t); /* numel * dtype size */
GCR_API int gcr_tensor_is_contiguous(const gcr_tensor *t); /* dense row-major */
GCR_API gcr_format gcr_tensor_format(const gcr_tensor *t); /* NHWC when 4-d channels-last, else NCHW */
GCR_API gcr_ctx *gcr_tensor_ctx(const gcr_tensor *t);
/* Writes "f32[2,3,4]" (plus ":nhwc" or ":strided") into buf; returns buf. */
GCR_API char *gcr_tensor_describe(const gcr_tensor *t, char *buf, size_t n);

/* ---------------------------------------------------------------- op parameters */

/* Window parameters: stride and dilation in 1..2^20, padding in 0..2^20 (and for pools at most
 * half the kernel), pool kernels and adaptive output sizes in 1..2^20; anything else is
 * GCR_ERR_PARAM naming the op and the values. A result of more than 1 PiB (of any op, or a
 * gcr_tensor_new) is GCR_ERR_OOM, refused before any size computation could wrap.
 * The CUDA backend's conv2d, matmul, linear and pool kernels also have index limits: dims and
 * GEMM sides of at most 2^31 - 2^22; at most 65535 batch items (matmul batches, conv groups),
 * pooled images, and tiles of 64 GEMM columns (a GEMV of at most 8 rows excepted); at most 4
 * matmul batch dims that do not merge. A call past one is GCR_ERR_UNSUPPORTED naming the op, the
 * shapes and the limit: at the call, eagerly and while capturing alike, and at the replay of a
 * graph bound to such inputs. */
typedef struct gcr_conv2d_params {
    int stride[2], padding[2], dilation[2]; /* (h, w) */
    int groups;                             /* 1 dense; in_channels for depthwise */
} gcr_conv2d_params;
/* stride 1, padding 0, dilation 1, groups 1 */
GCR_API gcr_conv2d_params gcr_conv2d_default(void);

typedef struct gcr_pool2d_params {
    int kernel[2], stride[2], padding[2], dilation[2]; /* stride 0 means stride = kernel; avg pools
                                                          take dilation 1 only (else GCR_ERR_UNSUPPORTED) */
    int ceil_mode;
    int count_include_pad; /* avg pool only */
} gcr_pool2d_params;
/* kernel k x k, stride = kernel, padding 0, dilation 1, floor mode, count_include_pad 1 */
GCR_API gcr_pool2d_params gcr_pool2d_default(int k);

/* ---------------------------------------------------------------- ops
 * Shapes are written [dims]; every op returns a new tensor owned by ctx, or NULL. Pointwise ops
 * take f32/f16/bf16 and compute in f32; binary ops broadcast NumPy-style and need equal dtypes.
 * The result of a pointwise op on one NHWC operand is NHWC. */

/* unary */
GCR_API gcr_tensor *gcr_neg(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_abs(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_relu(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_sigmoid(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_tanh(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_exp(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_log(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_sqrt(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_rsqrt(gcr_ctx *ctx, gcr_tensor *x);
/* x * Phi(x) in the erf form, 0.5 x (1 + erf(x / sqrt(2))) (PyTorch's default, not the tanh estimate) */
GCR_API gcr_tensor *gcr_gelu(gcr_ctx *ctx, gcr_tensor *x);
GCR_API gcr_tensor *gcr_clamp(gcr_ctx *ctx, gcr_tensor *x, float lo, float hi); /* lo <= hi */
/* Any dtype to any dtype (float to int truncates toward zero; to bool is x != 0). */
GCR_API gcr_tensor *gcr_cast(gcr_ctx *ctx, gcr_tensor *x, gcr_dtype to);

/* binary, tensor-tensor with broadcasting */
GCR_API gcr_tensor *gcr_add(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
GCR_API gcr_tensor *gcr_sub(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
GCR_API gcr_tensor *gcr_mul(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
GCR_API gcr_tensor *gcr_div(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
GCR_API gcr_tensor *gcr_maximum(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
GCR_API gcr_tensor *gcr_minimum(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);
/* binary, tensor-scalar: a OP s. While capturing, s is frozen into the graph. */
GCR_API gcr_tensor *gcr_add_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);
GCR_API gcr_tensor *gcr_sub_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);
GCR_API gcr_tensor *gcr_mul_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);
GCR_API gcr_tensor *gcr_div_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);
GCR_API gcr_tensor *gcr_maximum_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);
GCR_API gcr_tensor *gcr_minimum_scalar(gcr_ctx *ctx, gcr_tensor *a, float s);

/* composites: decomposed into the primitives above at the API, so eager pays per primitive */
GCR_API gcr_tensor *gcr_hardswish(gcr_ctx *ctx, gcr_tensor *x);   /* x * clamp(x + 3, 0, 6) / 6 */
GCR_API gcr_tensor *gcr_hardsigmoid(gcr_ctx *ctx, gcr_tensor *x); /* clamp(x + 3, 0, 6) / 6 */
GCR_API gcr_tensor *gcr_relu6(gcr_ctx *ctx, gcr_tensor *x);       /* clamp(x, 0, 6) */
GCR_API gcr_tensor *gcr_silu(gcr_ctx *ctx, gcr_tensor *x);        /* x * sigmoid(x) */
GCR_API gcr_tensor *gcr_softmax(gcr_ctx *ctx, gcr_tensor *x, int axis); /* max, sub, exp, sum, div */

/* reductions over axes (naxes == 0: all axes); keepdim keeps reduced axes as size 1 */
GCR_API gcr_tensor *gcr_sum(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim);
GCR_API gcr_tensor *gcr_mean(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim);
GCR_API gcr_tensor *gcr_max(gcr_ctx *ctx, gcr_tensor *x, const int *axes, int naxes, int keepdim);

/* x [N,C,H,W], w [O,C/groups,KH,KW], b [O] or NULL -> [N,O,OH,OW]; NHWC x gives NHWC out */
GCR_API gcr_tensor *gcr_conv2d(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *b,
                               const gcr_conv2d_params *p);
/* inference batch norm over dim 1: (x - mean) / sqrt(var + eps) * gamma + beta; params [C];
 * gamma/beta may be NULL (1 and 0) */
GCR_API gcr_tensor *gcr_batch_norm(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *mean, gcr_tensor *var,
                                   gcr_tensor *gamma, gcr_tensor *beta, float eps);
/* x [..., K], w [N, K], b [N] or NULL -> [..., N] */
GCR_API gcr_tensor *gcr_linear(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *w, gcr_tensor *b);
/* a [..., M, K] @ b [..., K, N] -> [..., M, N], batch dims broadcast; 1-d operands as in NumPy */
GCR_API gcr_tensor *gcr_matmul(gcr_ctx *ctx, gcr_tensor *a, gcr_tensor *b);

GCR_API gcr_tensor *gcr_max_pool2d(gcr_ctx *ctx, gcr_tensor *x, const gcr_pool2d_params *p);
GCR_API gcr_tensor *gcr_avg_pool2d(gcr_ctx *ctx, gcr_tensor *x, const gcr_pool2d_params *p);
GCR_API gcr_tensor *gcr_adaptive_avg_pool2d(gcr_ctx *ctx, gcr_tensor *x, int out_h, int out_w);

/* movement: reshape/flatten/permute/slice/expand return views when the layout allows, else copies */
GCR_API gcr_tensor *gcr_reshape(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *shape); /* one -1 allowed */
GCR_API gcr_tensor *gcr_flatten(gcr_ctx *ctx, gcr_tensor *x, int start_dim, int end_dim);
GCR_API gcr_tensor *gcr_permute(gcr_ctx *ctx, gcr_tensor *x, const int *perm);
/* elements start, start+step, ... < end along dim; negative start/end count from the end */
GCR_API gcr_tensor *gcr_slice(gcr_ctx *ctx, gcr_tensor *x, int dim, int64_t start, int64_t end, int64_t step);
/* x broadcast to shape (ndim at least x's rank; x's dims are the trailing ones): a size-1 dim of x
 * takes any size (0 too), -1 keeps a dim of x, other dims must equal x's. Always a view, like
 * permute: no copy, stride 0 on the broadcast dims, sharing x's storage; so its elements alias one
 * another, and writing into it (gcr_tensor_from_host) is refused with GCR_ERR_INVALID. */
GCR_API gcr_tensor *gcr_expand(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *shape);
/* x tiled reps[d] times along each dim d, as PyTorch's repeat: ndim at least x's rank (x's dims
 * are the trailing ones), reps >= 0. An expand of x and one dense copy, a new tensor. */
GCR_API gcr_tensor *gcr_repeat(gcr_ctx *ctx, gcr_tensor *x, int ndim, const int64_t *reps);
/* x [N,C,H,W] -> [N,C,H*scale_h,W*scale_w], each pixel repeated (nearest neighbour, integer scales
 * >= 1); NHWC x gives NHWC out. An expand of x and one dense copy, a new tensor. */
GCR_API gcr_tensor *gcr_upsample_nearest2d(gcr_ctx *ctx, gcr_tensor *x, int scale_h, int scale_w);
GCR_API gcr_tensor *gcr_concat(gcr_ctx *ctx, gcr_tensor *const *xs, int n, int axis);
/* a dense copy in the given memory format */
GCR_API gcr_tensor *gcr_contiguous(gcr_ctx *ctx, gcr_tensor *x, gcr_format fmt);
/* inference: returns x itself (no copy, no new handle) */
GCR_API gcr_tensor *gcr_dropout(gcr_ctx *ctx, gcr_tensor *x, float p);

/* ---------------------------------------------------------------- capture and replay
 * While a ctx captures, the op calls above record nodes and run nothing; the tensors they return
 * have shapes but no data (reading them is GCR_ERR_CAPTURE). gcr_capture_end() fuses the record,
 * plans one arena for intermediates, compiles kernels and runs the graph once, so the outputs of
 * the capture pass hold real results. A call that fails while capturing returns NULL at the call,
 * as eagerly; unless the caller clears that error (gcr_ctx_clear_error) before gcr_capture_end,
 * gcr_capture_end returns its status and builds nothing, also when an earlier error was already
 * on the ctx. The tensors a failed capture returned stay valid handles without data (reading one
 * is GCR_ERR_CAPTURE) until gcr_ctx_destroy().
 *
 * Host writes: a graph reads its inputs when it runs (at gcr_capture_end and at each replay), not
 * when an op is recorded. So gcr_tensor_from_host into a tensor that an op of the open capture
 * has already read (or into a view sharing its storage) is refused with GCR_ERR_CAPTURE: that op
 * would see the later write. Write inputs before gcr_capture_begin, as before each replay; a
 * write before the first op that reads the tensor is the same and is accepted.
 *
 * Inputs of a graph are the tensors created before capture that the trace reads and that are not
 * marked constant. Outputs are the tensors passed to gcr_graph_output() during capture, plus every
 * traced tensor that nothing in the trace consumes. Outputs are static buffers owned by the graph:
 * each replay overwrites them (copy them out with gcr_tensor_to_host or gcr_contiguous to keep a
 * result). Traced tensors that are not outputs hold no data: reading one fails with
 * GCR_ERR_CAPTURE. Scalars (clamp bounds, *_scalar operands) are frozen at capture.
 * gcr_graph_destroy() invalidates every tensor handle the capture returned. An eager view of an
 * output (reshape, slice, ... called after the capture) shares its static buffer like any view:
 * it sees later replays, and keeps the buffer (with the last results) after the graph, or the
 * region cache entry, that wrote it is gone.
 *
 * Numerics: fused kernels compute in f32; on CUDA, f16 intermediates of a fused group stay in f32
 * until stored (results may differ from eager by about one f16 ulp), bf16 ones are rounded per op
 * like eager. CUDA kernels are compiled with approximate f32 division (within 2 ulp).
 */
GCR_API gcr_status gcr_capture_begin(gcr_ctx *ctx);
/* Ends capture and builds the graph; the caller owns *graph (gcr_graph_destroy). */
GCR_API gcr_status gcr_capture_end(gcr_ctx *ctx, gcr_graph **graph);
GCR_API int gcr_ctx_capturing(const gcr_ctx *ctx);
/* Marks t, a tensor traced in the current capture or region pass, as an output of the graph. On an
 * eager ctx it does nothing and returns GCR_OK, so one model function serves both modes. */
GCR_API gcr_status gcr_graph_output(gcr_ctx *ctx, gcr_tensor *t);

GCR_API int gcr_graph_num_inputs(const gcr_graph *g);
GCR_API int gcr_graph_num_outputs(const gcr_graph *g);
GCR_API gcr_tensor *gcr_graph_get_input(gcr_graph *g, int i);  /* borrowed */
GCR_API gcr_tensor *gcr_graph_get_output(gcr_graph *g, int i); /* borrowed; static buffer */
/* Replaces input i by t for later replays: same signature patches pointers, no re-capture; a
 * different dtype/shape/strides/device re-traces or falls back to eager (knobs.retrace) at the
 * next replay. The graph holds t while it is bound, as it holds the tensors its capture read
 * (inputs and constants): freeing one (gcr_tensor_free, its scope's end, gcr_weights_free, or
 * destroying the graph whose output it is) while a graph holds it frees it only when the graph
 * lets it go (a later bind, gcr_graph_destroy), and replays read the data it held; an open
 * capture or region pass holds what it read the same way. A re-specialisation that fails (the new
 * signature cannot be built) returns the error from gcr_graph_replay and leaves the graph as it
 * was: its cached variants, and its outputs with their last results; bind the old input back to
 * replay it. A region's graph (gcr_region_graph) refuses this call: its passes bind its inputs.
 * t may have another rank or size: each captured call then applies its parameters as written,
 * as the same call on t would eagerly. Axes and negative indices count from t's end (a sum over
 * axis -1 of a [3,5] capture sums t's last dim), slice bounds clamp to t's dims, reshape's -1
 * and flatten's dims are worked out anew. Where a parameter as written cannot apply (a literal
 * reshape to another element count, a permutation or axis beyond t's rank), that replay fails
 * with the op's GCR_ERR_SHAPE / GCR_ERR_PARAM message naming the op and the values, as the eager
 * call would, and runs nothing. Choices the API made from the captured input stay as made:
 * matmul's lifting of a 1-d operand, and whether a reshape or flatten is a view or a copy (one
 * captured on a strided input copies whatever t is). A reshape or flatten captured on a contiguous
 * input is recorded as a view, which a strided t cannot take (also a slice that was contiguous
 * only because its dims were 1, bound to a bigger batch): that replay runs the graph's op list
 * eagerly, as the API would (a copy, then the view), with eager's results, and builds no variant.
 * t may be one of the graph's own outputs (state fed back: bind y, replay, bind y again): each
 * replay then first copies t into a device buffer of the graph's and reads that copy, so it
 * computes from the values t held before the replay, as the eager calls would; an input staged
 * from a host buffer (gcr_graph_input_host) that shares memory with an output is refused with
 * GCR_ERR_INVALID. */
GCR_API gcr_status gcr_graph_bind_input(gcr_graph *g, int i, gcr_tensor *t);
/* Runs the graph on the current contents of its inputs; outputs are overwritten. */
GCR_API gcr_status gcr_graph_replay(gcr_graph *g);
/* Host staging: the whole step of an inference loop (host input -> forward -> host output) as one
 * replay. gcr_graph_input_host gives *buf, a host buffer owned by g (page-locked on CUDA) of
 * exactly the bytes of graph input i; from then on every gcr_graph_replay first copies it into
 * that input, as gcr_tensor_from_host would (dense row-major in the input's logical order, whatever
 * its layout). gcr_graph_output_host gives the buffer of output i, into which every later replay
 * copies that output (as gcr_tensor_to_host) and waits for the copy before it returns. On CUDA the
 * copies are nodes of the replay's CUDA Graph: one launch and one sync for the whole step. Calling
 * either again for the same index returns the same buffer. bytes other than the tensor's size is
 * GCR_ERR_SHAPE; an input that is an expand view is GCR_ERR_INVALID. A buffer lives until g is
 * destroyed; write inputs and read outputs only between replays. A later replay whose input shapes
 * make a staged buffer the wrong size fails with GCR_ERR_SHAPE, naming the input or output and
 * both sizes, runs nothing and frees every buffer that no longer fits: the next replay runs without
 * them, and a buffer can be staged again with the new size (an output's, once a replay has given
 * it). With knobs.retrace 0 (the op list run eagerly) an output's new size is known only once the
 * op list has run: that replay's outputs then hold its results, and the copies to the host are
 * skipped. An input bound to an expand view is GCR_ERR_INVALID at the replay too. For a region,
 * stage the graph gcr_region_graph returns; a re-trace into a new graph starts unstaged. */
GCR_API gcr_status gcr_graph_input_host(gcr_graph *g, int i, size_t bytes, void **buf);
GCR_API gcr_status gcr_graph_output_host(gcr_graph *g, int i, size_t bytes, void **buf);
/* Frees a graph from gcr_capture_end. A region's graph (gcr_region_graph) is the region's: passing
 * it here records GCR_ERR_INVALID on the ctx and frees nothing. */
GCR_API void gcr_graph_destroy(gcr_graph *g);

typedef struct gcr_graph_stats {
    int ops_traced;         /* primitive ops recorded */
    int kernels;            /* launches per replay after fusion */
    int fused_groups;       /* generated kernels that fuse two or more ops */
    int variants;           /* signatures compiled so far (re-traces + 1) */
    size_t arena_bytes;     /* planned arena for intermediates */
    size_t intermediate_bytes; /* sum of all intermediates, unplanned */
    double compile_seconds; /* codegen + NVRTC, this graph */
    int cache_hits;         /* kernels found in the memory or disk cache */
    int cache_misses;       /* kernels compiled */
    uint64_t replays;
} gcr_graph_stats;
GCR_API gcr_status gcr_graph_get_stats(const gcr_graph *g, gcr_graph_stats *out);
/* Writes the graph's current fused trace as text (nodes, groups, kernels); returns bytes needed. */
GCR_API size_t gcr_graph_describe(const gcr_graph *g, char *buf, size_t n);

/* Regions wrap the body of an existing inference loop:
 *
 *     GCR_REGION(ctx, "forward") { logits = forward(ctx, &model, input); }
 *
 * The first pass traces the body and builds a graph. Later passes run the body in "check" mode:
 * each op call is matched against the recorded trace (op, parameters, scalars, input tensors and
 * their dtype/shape/strides) without running anything and returns the same tensor handle as on
 * the first pass; at the region's end the graph replays. A pass that differs (new input shape,
 * another branch taken, another scalar) re-traces into a new graph for that signature (kept in a
 * capped LRU cache per region), or runs eagerly when knobs.retrace is 0: a stale graph never runs.
 * With knobs.guards == 0 later passes skip the body entirely (faster, unchecked; testing only).
 * Leave the body normally: a break, return or goto out of it leaves the ctx capturing.
 *
 * Inside the body nothing runs until its end, so:
 * - a call that fails fails the pass unless the body clears the error: the pass runs nothing,
 *   no tensor of the region holds data until a later pass succeeds, and the status stays on
 *   the ctx;
 * - reading or writing (gcr_tensor_to_host / from_host) a tensor the region made is refused
 *   with GCR_ERR_CAPTURE;
 * - host writes follow the capture rule above: writing into a tensor that an op of this pass has
 *   already read is refused with GCR_ERR_CAPTURE (a graph reads its inputs when it runs, at the
 *   body's end). Write inputs before the region, or in the body before the first op reads them.
 *
 * Tensors the body creates belong to the region (gcr_tensor_free ignores them). After a pass, the
 * outputs of that pass (its sinks and gcr_graph_output() tensors) hold its results, with the
 * static-buffer rule above: the next pass overwrites them. Every other tensor the region made
 * holds no data, and reading it fails with GCR_ERR_CAPTURE: an intermediate of the pass, or a
 * result of an earlier pass that this pass did not output (another branch, another input
 * signature). A tensor never shows an earlier pass's data; the same call on a later pass that
 * runs the same cache entry returns the same handle, holding that pass's data again.
 *
 * Eviction: a region keeps knobs.graph_cache entries, one per distinct pass (its trace and its
 * graph; a graph's own variants, one per input signature, are apart). A new entry is built and
 * run before the least recently used one is evicted, so a pass may read the previous pass's
 * outputs, e.g. state fed back (h = step(ctx, x, h)); such a body re-traces on every pass, as its
 * input is a new tensor each time. A failed pass leaves the cache as it was. The tensors of an evicted entry
 * (that no cached entry shares) are retired: they hold no data and reading them fails with
 * GCR_ERR_CAPTURE saying they were evicted. The region frees retired tensors once graph_cache
 * more retirements have followed, so its memory is bounded by its cache whatever the inputs: a
 * tensor of an entry evicted that long ago must not be used (copy results out to keep them). */
GCR_API int gcr_region_begin(gcr_ctx *ctx, const char *name); /* 1: run the body */
GCR_API int gcr_region_end(gcr_ctx *ctx);                     /* always 0 */
/* The graph last run for region name, or NULL (borrowed: the region frees it when it evicts its
 * entry; it refuses gcr_graph_bind_input). */
GCR_API gcr_graph *gcr_region_graph(gcr_ctx *ctx, const char *name);
#define GCR_REGION(ctx, name) \
    for (int gcr_region_once_ = gcr_region_begin((ctx), (name)); gcr_region_once_; \
         gcr_region_once_ = gcr_region_end(ctx))

/* ---------------------------------------------------------------- weights */

/* Loads every tensor of a safetensors file (F32, F16, BF16, I32, I64, BOOL) onto ctx's device,
 * marked constant. The caller owns *out (gcr_weights_free); tensors are owned by the weights and
 * freed with them. */
typedef struct gcr_weights gcr_weights;
GCR_API gcr_status gcr_weights_load(gcr_ctx *ctx, const char *path, gcr_weights **out);
GCR_API gcr_tensor *gcr_weights_get(const gcr_weights *w, const char *name); /* borrowed, or NULL */
GCR_API int gcr_weights_count(const gcr_weights *w);
GCR_API const char *gcr_weights_name(const gcr_weights *w, int i);
/* Frees w and its tensors. Either order with gcr_ctx_destroy is fine: once w's ctx is destroyed
 * its tensors are gone (gcr_weights_get returns NULL, count and names stay) and this frees only
 * w's own memory. NULL is a no-op. */
GCR_API void gcr_weights_free(gcr_weights *w);

#ifdef __cplusplus
}
#endif
#endif /* GCR_H */
