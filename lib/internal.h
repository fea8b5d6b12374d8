/* internal.h — the library's private core: tensor, context, op call and backend structs shared
 * by the eager dispatch (lib/), the backends (lib/cpu, lib/cuda), capture/ and replay/.
 * Nothing here is exported: the library builds with -fvisibility=hidden. */
#ifndef GCR_INTERNAL_H
#define GCR_INTERNAL_H

#include "gcr.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- op table */

typedef enum gcr_kind {
#define K(E, name, infer, cpu, cuda, cuda_limits, cuda_hooked, ...) GCR_KIND_##E,
#include "kinds.def"
#undef K
    GCR_KIND_COUNT
} gcr_kind;

typedef enum gcr_op {
#define X(E, name, arity, kind, expr) GCR_OP_##E,
#include "ops.def"
#undef X
    GCR_OP_COUNT
} gcr_op;

typedef struct gcr_op_info {
    const char *name;  /* "add" */
    int arity;         /* -1 variadic */
    gcr_kind kind;
    const char *expr;  /* pointwise scalar formula as text (for codegen), "0" otherwise */
} gcr_op_info;

extern const gcr_op_info gcr_op_table[GCR_OP_COUNT];
/* Value a missing optional input of a pointwise op reads as (batch-norm gamma 1, beta 0). */
float gcr_op_missing_input(gcr_op op, int input);

const char *gcr_kind_name(gcr_kind k);

/* ---------------------------------------------------------------- metadata */

/* dtype, shape and strides (in elements) of a tensor or traced value */
typedef struct gcr_meta {
    gcr_dtype dtype;
    int ndim;
    int64_t shape[GCR_MAX_DIMS];
    int64_t strides[GCR_MAX_DIMS];
} gcr_meta;

/* The largest tensor gcr describes: 1 PiB, more than any host or device holds. Every meta the
 * library makes (new tensors, op results) keeps the product of max(dim, 1) times its dtype size
 * within it, so sums and products of a few such dims, strides and spans stay far from int64
 * overflow; a request beyond it fails with GCR_ERR_OOM naming the op and the shapes. */
#define GCR_MAX_BYTES ((int64_t)1 << 50)
/* a * b of non-negative sizes into *out; false when it overflows or passes GCR_MAX_BYTES */
bool gcr_size_mul(int64_t a, int64_t b, int64_t *out);
/* whether a tensor of dtype dt and these dims (none negative) keeps within GCR_MAX_BYTES */
bool gcr_shape_fits(gcr_dtype dt, int ndim, const int64_t *shape);

/* numel, strides and spans saturate at INT64_MAX for metas beyond GCR_MAX_BYTES (which exist
 * only until inference refuses them) */
int64_t gcr_meta_numel(const gcr_meta *m);
void gcr_meta_set_contiguous(gcr_meta *m);           /* row-major strides */
void gcr_meta_set_format(gcr_meta *m, gcr_format f); /* dense strides in f (NHWC needs ndim 4) */
bool gcr_meta_is_contiguous(const gcr_meta *m);
bool gcr_meta_is_nhwc(const gcr_meta *m);            /* 4-d dense channels-last (and not also row-major) */
bool gcr_meta_is_dense(const gcr_meta *m);           /* row-major or NHWC dense */
bool gcr_meta_overlaps(const gcr_meta *m);           /* two elements share memory (an expand: stride 0) */
bool gcr_meta_same_shape(const gcr_meta *a, const gcr_meta *b);
bool gcr_meta_equal(const gcr_meta *a, const gcr_meta *b); /* same dtype, shape and strides */
/* "f32[2,3,4]" with ":nhwc"/":strided" suffixes; returns buf */
char *gcr_meta_str(const gcr_meta *m, char *buf, size_t n);
/* Storage span of m, in elements: 1 + sum (shape-1)*stride (0 when numel is 0). */
int64_t gcr_meta_span(const gcr_meta *m);

/* ---------------------------------------------------------------- op parameters and calls */

typedef struct gcr_params {
    float f[4];          /* CLAMP lo,hi; scalar operand in f[0]; BATCH_NORM eps in f[0] */
    int has_scalar;      /* binary op whose b is the scalar f[0] */
    gcr_dtype dtype;     /* CAST target */
    int n;               /* entries used in v */
    int64_t v[GCR_MAX_DIMS]; /* as the caller wrote them, so that a graph bound to an input of another
                                rank or size applies them anew (gcr_resolve): SUM/MEAN/MAX axes (n 0:
                                all); PERMUTE perm; RESHAPE shape (one -1 allowed), or with flatten set
                                start_dim, end_dim; SLICE dim, start, end, step; EXPAND shape
                                (-1 keeps a dim); CONCAT axis;
                                ADAPTIVE_AVG_POOL2D out h, w */
    int keepdim;
    int flatten;         /* RESHAPE written as gcr_flatten */
    gcr_format fmt;      /* CONTIGUOUS target */
    gcr_conv2d_params conv;
    gcr_pool2d_params pool;
} gcr_params; /* always zero-initialised in full, so memcmp compares two calls */

#define GCR_MAX_INPUTS 64

/* One op application: what dispatch validates, the trace records and a backend runs. */
typedef struct gcr_call {
    gcr_op op;
    int n_in;
    gcr_tensor *in[GCR_MAX_INPUTS]; /* optional inputs may be NULL */
    gcr_params p;
} gcr_call;

/* A call's parameters applied to its input's meta x: axes and indices counted from the end, slice
 * bounds clamped, the new shape of a reshape or flatten worked out. */
typedef struct gcr_resolved {
    bool red[GCR_MAX_DIMS];   /* SUM/MEAN/MAX: the dims reduced */
    int axis;                 /* CONCAT axis, SLICE dim */
    int64_t start, len, step; /* SLICE: first index and number of elements taken */
    int ndim;                 /* RESHAPE, EXPAND: the new shape */
    int64_t shape[GCR_MAX_DIMS];
} gcr_resolved;
/* The one place parameters as written meet the input they apply to: eager calls, gcr_infer, the
 * backends and re-inference for a new input signature all resolve through it. Fails (naming the
 * op, the values as written and x) where they cannot apply to x. */
gcr_status gcr_resolve(gcr_op op, const gcr_params *p, const gcr_meta *x, gcr_resolved *r, char *err, size_t errn);

/* Infers the result's meta (dtype, shape, dense strides in the format the op yields) and
 * validates dtypes and parameters; on failure fills err (op name and shapes). */
gcr_status gcr_infer(const gcr_call *c, gcr_meta *out, char *err, size_t errn);
/* Strides (elements) to read pointwise input i of call c when iterating over out's shape: 0 on
 * broadcast dims, and dim 1 only for BATCH_NORM's parameter vectors. */
void gcr_bcast_strides(gcr_op op, int input, const gcr_meta *in, const gcr_meta *out, int64_t *strides);

/* ---------------------------------------------------------------- kinds */

/* What the capture layer may do with a node of a kind. */
typedef enum gcr_role {
    GCR_ROLE_COPY,   /* a kernel of its own, never fused (movement) */
    GCR_ROLE_VIEW,   /* metadata only: aliases its input, never a kernel */
    GCR_ROLE_BODY,   /* pointwise: fused into groups, and into anchors as prologue or epilogue */
    GCR_ROLE_OWN,    /* anchors a generated kernel of its own (a reduction) */
    GCR_ROLE_HOOKED, /* anchors a backend kernel that takes prologue and epilogue hooks (conv, matmul, pool) */
} gcr_role;

/* The pass that gives an anchor its epilogue and prologue: the dense passes (pass_epilogue.c,
 * pass_prologue.c) run before the reduction pass, so a group both could take goes to a conv or
 * matmul first. */
typedef enum gcr_anchor_pass { GCR_PASS_NONE, GCR_PASS_DENSE, GCR_PASS_REDUCTION } gcr_anchor_pass;

/* The output coordinates a hooked anchor's prologue and epilogue get besides the flat index: n and
 * the channel at dims 0 and 1 (NC: conv, pool), or the channel at the last dim (LAST: matmul). */
typedef enum gcr_hook_coords { GCR_HOOK_NONE, GCR_HOOK_NC, GCR_HOOK_LAST } gcr_hook_coords;

/* One row of kinds.def: a kind's shape inference and fusion role. The backends index their own
 * columns of the same rows (lib/cpu/backend.c, lib/cuda/backend.c). */
typedef struct gcr_kind_info {
    const char *name; /* "pointwise" */
    gcr_status (*infer)(const gcr_call *c, gcr_meta *out, char *err, size_t errn);
    gcr_role role;
    gcr_anchor_pass pass;
    bool epilogue;    /* an anchor that takes a pointwise epilogue */
    /* an anchor whose input slot may be read through a pointwise prologue, with params p (NULL:
     * none may) */
    bool (*prologue)(const gcr_params *p, int slot);
    const char *skip; /* its GCR_SKIP_FUSE token (NULL: never fused anyway) */
    gcr_hook_coords hook;
} gcr_kind_info;

extern const gcr_kind_info gcr_kind_table[GCR_KIND_COUNT];
static inline const gcr_kind_info *gcr_kind_of(gcr_op op) { return &gcr_kind_table[gcr_op_table[op].kind]; }
static inline bool gcr_op_is_view(gcr_op op) { return gcr_kind_of(op)->role == GCR_ROLE_VIEW; }
static inline bool gcr_op_is_pointwise(gcr_op op) { return gcr_kind_of(op)->role == GCR_ROLE_BODY; }
/* conv, matmul, pool, reduce: the one node a fused kernel may be built around */
static inline bool gcr_op_is_anchor(gcr_op op)
{
    gcr_role r = gcr_kind_of(op)->role;
    return r == GCR_ROLE_OWN || r == GCR_ROLE_HOOKED;
}
/* the per-kind inference functions that kinds.def names (lib/infer.c) */
#define K(E, name, infer, ...) gcr_status infer(const gcr_call *c, gcr_meta *out, char *err, size_t errn);
#include "kinds.def"
#undef K

/* ---------------------------------------------------------------- tensors */

enum {
    GCR_TF_KEEP = 1u << 0,   /* exempt from scopes */
    GCR_TF_CONST = 1u << 1,  /* constant (weights): capture may fold it */
    GCR_TF_TRACED = 1u << 2, /* created while capturing: owned by a trace/graph, not the ctx list */
    GCR_TF_ORPHAN = 1u << 3, /* freed by its owner while pinned: destroyed at its last unpin */
};

typedef struct gcr_storage {
    int refs;
    void *data;        /* host or device pointer */
    size_t bytes;
    bool borrowed;     /* memory owned elsewhere (a graph's arena): not freed with the storage */
} gcr_storage;

struct gcr_tensor {
    gcr_ctx *ctx;
    gcr_meta m;
    int64_t offset;       /* elements from storage base */
    gcr_storage *st;      /* NULL for traced tensors without data */
    uint32_t flags;
    uint32_t pins;        /* traces and graphs that read it (an external input or constant) */
    /* ctx ownership list (untraced tensors), or the owning region's lists (its traced tensors:
     * replay/region.c, which keeps in seq when it retired one) */
    gcr_tensor *prev, *next;
    uint64_t seq;
    /* owned by the recorder (the ctx's gcr_recorder, which replay/ installs): the trace
     * and value a traced tensor stands for, plain data lib/ only initialises (value -1) */
    void *trace;
    int value;
};

/* Data pointer of t's first element (NULL when it has no storage). */
static inline void *gcr_tensor_data(const gcr_tensor *t)
{
    if (!t->st) return NULL;
    return (char *)t->st->data + t->offset * (int64_t)gcr_dtype_size(t->m.dtype);
}

/* A tensor with storage of meta m on ctx's device, owned by the ctx list (NULL + error on OOM). */
gcr_tensor *gcr_tensor_alloc(gcr_ctx *ctx, const gcr_meta *m, const char *op);
/* to's elements copied from from (same shape and dtype, any layouts) by the backend's contiguous
 * kernel: the gather and scatter behind tensor_to_host / tensor_from_host of strided tensors */
gcr_status gcr_layout_copy(gcr_ctx *ctx, gcr_tensor *from, gcr_tensor *to);
/* A handle sharing src's storage with meta m and element offset off (for views). */
gcr_tensor *gcr_tensor_view_of(gcr_ctx *ctx, gcr_tensor *src, const gcr_meta *m, int64_t off);
/* A handle with no storage, not on the ctx list (for traces; freed with gcr_tensor_destroy). */
gcr_tensor *gcr_tensor_shell(gcr_ctx *ctx, const gcr_meta *m);
/* Wraps memory owned elsewhere (arena) as a borrowed storage; replaces t's storage. */
gcr_status gcr_tensor_bind(gcr_tensor *t, void *data, size_t bytes);
/* Frees a handle regardless of list membership. */
void gcr_tensor_destroy(gcr_tensor *t);
/* A trace or graph that reads t as an external input or constant pins it for as long as it may
 * read it: its owner's free (gcr_tensor_free, a scope's end, a finished capture's trace) then only
 * takes it off its list (an orphan), and the last unpin destroys it, so a replay never reads a
 * freed handle or storage. NULL is a no-op for both. */
void gcr_tensor_pin(gcr_tensor *t);
void gcr_tensor_unpin(gcr_tensor *t);
/* Destroys t, or orphans it while pinned: what every owner's free calls. */
void gcr_tensor_release(gcr_tensor *t);
/* Appends t to the handle list whose sentinel is list (the ctx's live list, a region's lists),
 * and takes it off its list (a no-op when on none), through t->prev / t->next. */
void gcr_tensor_list_push(gcr_tensor *list, gcr_tensor *t);
void gcr_tensor_list_drop(gcr_tensor *t);
/* Drops t's storage (t then holds no data, like a traced tensor before its graph runs). */
void gcr_tensor_unbind(gcr_tensor *t);
/* Points t at storage st (taking a reference), element offset off; drops t's old storage. */
void gcr_tensor_share(gcr_tensor *t, gcr_storage *st, int64_t off);
/* Drops one reference to st; the last frees it (and its data unless borrowed). NULL: nothing. */
void gcr_storage_release(gcr_ctx *ctx, gcr_storage *st);

/* ---------------------------------------------------------------- backend */

/* _QUEUED: the host side is the backend's own host memory (host_alloc), so the copy is queued
 * on the device's stream and may be captured into a CUDA Graph; the others wait for a host copy
 * (the caller's memory is its own again at return). */
typedef enum { GCR_COPY_H2D, GCR_COPY_D2H, GCR_COPY_D2D, GCR_COPY_H2D_QUEUED, GCR_COPY_D2H_QUEUED } gcr_copy_kind;

/* Data pointers one generated CUDA kernel takes: a kernel of its own (a pointwise group or a
 * reduction: capture/codegen_cuda.c), and the extra parameters a hooked conv / matmul / pool
 * launcher passes to its prologue and epilogue (lib/cuda/dense.h). One definition for codegen,
 * the launchers and the fusion passes that must not build a kernel past them. */
#define GCR_CUDA_KERNEL_PARAMS 64
#define GCR_CUDA_HOOK_PARAMS 32

/* The most operands (distinct data pointers) the fusion passes may give one kernel; 0: no limit.
 * own: a generated kernel (pointwise group, reduction); hooked: the extra parameters of an
 * anchored conv / matmul / pool kernel's prologue and epilogue. */
typedef struct gcr_operand_budget {
    int own, hooked;
} gcr_operand_budget;

/* A conv->conv pair as the fuser offers it to its backend (gcr_convconv_caps.faster): its form
 * (one GCR_CONVCONV_ bit, below); the first conv's input x, the depthwise and 1x1 convs' weights
 * wd and wp, the value between the convs (mid) and the pair's result y; the depthwise conv's
 * parameters. Plain data: a backend may key a cache with it. */
typedef struct gcr_convconv_pair {
    unsigned form;
    gcr_meta x, wd, wp, mid, y;
    gcr_conv2d_params dp;
} gcr_convconv_pair;

/* The conv->conv groups (capture/pass_convconv.c) a backend's executor runs as one kernel: a conv
 * whose result, through its own epilogue, only the next conv reads. forms: GCR_CONVCONV_DW_PW (a
 * depthwise conv into a 1x1 conv) and GCR_CONVCONV_PW_DW (a 1x1 conv into a depthwise conv), a bit
 * each; dtypes: a bit per gcr_dtype (0: the pass fuses nothing); channels_last: the first conv's
 * input and the second conv's result must have channel stride 1; c_align: the depthwise conv's
 * channels a multiple of it; max_out: the second conv's output channels at most (0: any); faster:
 * whether the pair's kernel beats the two apart on this pair, which GCR_CONVCONV's default (2)
 * asks of every pair within the caps (NULL: always; it may measure, and must not fail). */
enum { GCR_CONVCONV_DW_PW = 1u << 0, GCR_CONVCONV_PW_DW = 1u << 1 };
typedef struct gcr_convconv_caps {
    unsigned forms;
    unsigned dtypes;
    bool channels_last;
    int c_align, max_out;
    bool (*faster)(gcr_ctx *ctx, const gcr_convconv_pair *pair);
} gcr_convconv_caps;

typedef struct gcr_backend {
    const char *name;
    gcr_device device;
    gcr_status (*init)(gcr_ctx *ctx, int device_index); /* sets ctx->be_state, ctx->device_name */
    void (*fini)(gcr_ctx *ctx);
    gcr_status (*alloc)(gcr_ctx *ctx, size_t bytes, void **ptr);
    void (*free)(gcr_ctx *ctx, void *ptr, size_t bytes);
    gcr_status (*copy)(gcr_ctx *ctx, void *dst, const void *src, size_t bytes, gcr_copy_kind k);
    /* Host memory that queued copies may use (CUDA: page-locked); host_free waits for none. */
    gcr_status (*host_alloc)(gcr_ctx *ctx, size_t bytes, void **ptr);
    void (*host_free)(gcr_ctx *ctx, void *ptr);
    /* Runs one non-view call eagerly into out, whose storage is allocated and whose strides are
     * dense (row-major or NHWC); inputs may have any strides. */
    gcr_status (*run)(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
    gcr_status (*sync)(gcr_ctx *ctx);
    /* Refuses a call that gcr_infer accepted (result meta out) but this backend's kernels cannot
     * serve (index ranges, grid sizes), filling err with the op, the shapes and the limit. Needs
     * no device: gcr_validate runs it in every mode, so a captured call fails at the call exactly
     * as its eager twin, and a graph re-specialised for new input metas fails at the bind. NULL:
     * the backend runs every call gcr_infer accepts. */
    gcr_status (*check)(const gcr_call *c, const gcr_meta *out, char *err, size_t errn);
    /* what one kernel of this backend's executor takes: capture IRs carry it to the passes */
    gcr_operand_budget operands;
    /* the conv->conv groups its executor runs as one kernel: capture IRs carry it to the passes */
    gcr_convconv_caps convconv;
    /* runs a planned IR's launch list (lib/exec.h); NULL: the generic executor */
    const struct gcr_executor *executor;
} gcr_backend;

/* A backend's eager kernel for one kind: its column of kinds.def. */
typedef gcr_status (*gcr_run_fn)(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
/* Runs c with kernels[its kind] (a backend's column of kinds.def, which names backend be); a kind
 * without a kernel there (views) fails with GCR_ERR_INTERNAL. */
gcr_status gcr_run_kind(gcr_ctx *ctx, const char *be, const gcr_run_fn *kernels, const gcr_call *c, gcr_tensor *out);

extern const gcr_backend gcr_cpu_backend;
/* NULL when the library was built without CUDA */
const gcr_backend *gcr_cuda_backend_get(void);

/* ---------------------------------------------------------------- context */

typedef enum { GCR_MODE_EAGER, GCR_MODE_CAPTURE, GCR_MODE_CHECK } gcr_mode;

/* What lib/ calls while a ctx records instead of running (mode not EAGER), or when a tensor holds
 * no data. The layer above (replay/) installs it on the ctx, with its state in ctx->rec_state, the
 * first time the ctx captures or runs a region; lib/ names no function of that layer. */
typedef struct gcr_recorder {
    /* Records c (already validated to meta out); returns the traced tensor, or NULL with the
     * error set. */
    gcr_tensor *(*record)(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out);
    /* A region pass's check (mode CHECK), before any validation: the traced result when c is the
     * very call the pass expects next (same op, parameters and inputs, so the same validation and
     * result meta as when it was recorded), else NULL and c goes through validation and record(). */
    gcr_tensor *(*replayed)(gcr_ctx *ctx, const gcr_call *c);
    /* Whether fn (tensor_to_host / tensor_from_host, write true for the latter) may touch t now:
     * refuses, with the reason recorded on t's ctx, a tensor without data (saying why it has
     * none), a region's tensor inside its own body, and a write into a tensor that the open
     * capture or region pass has already read (the graph reads its inputs when it runs). */
    gcr_status (*host_access)(const gcr_tensor *t, bool write, const char *fn);
    /* Frees ctx->rec_state and everything it holds (graphs, regions, an open trace). */
    void (*free)(gcr_ctx *ctx);
} gcr_recorder;

struct gcr_ctx {
    gcr_device device;
    const gcr_backend *be;
    void *be_state;
    char device_name[256];
    gcr_knobs knobs;       /* strings owned by the ctx */
    gcr_status status;
    char err[2048];
    gcr_tensor live;       /* sentinel of the list of ctx-owned tensors, oldest first */
    gcr_weights *weights;  /* the weights loaded on the ctx and not yet freed (lib/weights.c's list):
                              the caller owns them, so the ctx's end detaches them, never frees them */
    uint64_t seq;
    gcr_mode mode;
    gcr_status capture_err; /* first error recorded while capturing or checking since the capture or
                               region pass began or the error was cleared: it fails that capture */
    const gcr_recorder *rec; /* NULL until the ctx first captures or runs a region */
    void *rec_state;       /* the recorder's: open trace, regions, explicit graphs */
    const struct gcr_executor *exec_forced; /* testing: the executor graphs run on (gcr_exec_force), or NULL */
    void *cpu_scratch;     /* CPU backend's reusable buffers */
};

/* Detaches every weights object loaded on ctx (gcr_ctx_destroy, which frees their tensors with
 * the rest of its list): each then holds no tensor, and gcr_weights_free frees only its own memory. */
void gcr_weights_detach_all(gcr_ctx *ctx);

/* Logging levels (knobs.log, GCR_LOG): 0 silent; 1 (default) progress lines for long work such as
 * kernel compiles; 2 every decision and error. All output goes to stderr. */
/* Records the first error on ctx (later ones are dropped until cleared); returns s. With GCR_LOG=2
 * the message is printed to stderr. */
gcr_status gcr_set_error(gcr_ctx *ctx, gcr_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefixes "<fmt>: " to the message of an error recorded since ctx's status was before (only when
 * that was GCR_OK), so a composite's or a loader's failure names what the caller called:
 * "softmax: max: axis 5 ...", "weights: model.safetensors: tensor 'w': ...". */
void gcr_error_prefix(gcr_ctx *ctx, gcr_status before, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Rewrites the message of an error recorded since ctx's status was before (only when that was
 * GCR_OK) that names operands the API made for the caller (matmul's 1-d operands lifted to 2-d):
 * the first from[i] after the previous one replaced becomes to[i], so the message names the
 * values as passed. A from[i] not found is skipped. */
void gcr_error_rename(gcr_ctx *ctx, gcr_status before, int n, const char *const *from, const char *const *to);
void gcr_info(const gcr_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));     /* level 2 */
/* An eager section inside library work (a pass computing constants, e.g. BN folding, while a
 * capture may be open): gcr_eager_begin saves ctx's mode, status and message and clears them, so
 * the ops in between run eagerly and any one that fails is seen; gcr_eager_end returns the first
 * error of the section and puts ctx's mode, status and message back as they were. The section's
 * error is the caller's to report: it never reaches the user's ctx. Sections do not nest. */
typedef struct gcr_eager_section {
    gcr_mode mode;
    gcr_status status;
    char err[sizeof ((gcr_ctx *)0)->err];
} gcr_eager_section;
void gcr_eager_begin(gcr_ctx *ctx, gcr_eager_section *s);
gcr_status gcr_eager_end(gcr_ctx *ctx, gcr_eager_section *s);

void gcr_progress(const gcr_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* level 1 */

/* files.c: dir/name, allocated (dir NULL: a copy of name); NULL when out of memory */
char *gcr_path_join(const char *dir, const char *name);
/* A file written whole or not at all: gcr_file_begin opens a temporary file beside path (*tmp its
 * name, owned until the commit), gcr_file_commit closes it and renames it over path; either logs a
 * failure at level 1 (what names the writer) and returns NULL / false, leaving no temporary file. */
FILE *gcr_file_begin(gcr_ctx *ctx, const char *path, char **tmp, const char *what);
bool gcr_file_commit(gcr_ctx *ctx, FILE *f, char *tmp, const char *path, const char *what);
/* Directory dir for such files, made where it does not exist (its parent must); false, logged at
 * level 1 as those, where it cannot be. */
bool gcr_dir_make(gcr_ctx *ctx, const char *dir, const char *what);

/* Internal check macros: record the failed expression with file:line on ctx and return. */
#define GCR_CHECK(ctx, cond, st, ...)                                                          \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            gcr_set_error((ctx), (st), __VA_ARGS__);                                           \
            return (st);                                                                       \
        }                                                                                      \
    } while (0)
#define GCR_CHECK_NULL(ctx, cond, st, ...)                                                     \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            gcr_set_error((ctx), (st), __VA_ARGS__);                                           \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)
#define GCR_TRY(expr)                                                                          \
    do {                                                                                       \
        gcr_status gcr_try_s_ = (expr);                                                        \
        if (gcr_try_s_ != GCR_OK) return gcr_try_s_;                                           \
    } while (0)
/* For "cannot happen" states: names the expression and file:line. */
#define GCR_ASSERT(ctx, cond)                                                                  \
    GCR_CHECK(ctx, cond, GCR_ERR_INTERNAL, "internal: %s failed at %s:%d", #cond, __FILE__, __LINE__)

/* Runs a validated call: eager through the backend, or recorded while capturing/checking.
 * Returns the result or NULL with the error set. */
gcr_tensor *gcr_dispatch(gcr_ctx *ctx, gcr_call *c);
/* A RESHAPE call (reshape, flatten) as the API makes it: a view of a contiguous input, and of a
 * contiguous copy of a strided one (the copy's storage lives on in the view). For the API and for
 * a recorded op list run eagerly on inputs its trace did not see (replay/interp.c). */
gcr_tensor *gcr_dispatch_reshape(gcr_ctx *ctx, gcr_call *c);
/* Whether t (NULL: yes) is a tensor of ctx; if not, records GCR_ERR_INVALID naming op and input i:
 * gcr_dispatch's check of every input, and an op's that returns without dispatching. */
bool gcr_on_ctx(gcr_ctx *ctx, const gcr_tensor *t, const char *op, int i);
/* gcr_infer, then ctx's backend's check: what every call must pass before it runs or is recorded,
 * and every node of a graph re-specialised for new input metas (gcr_ir_reinfer). */
gcr_status gcr_validate(const gcr_ctx *ctx, const gcr_call *c, gcr_meta *out, char *err, size_t errn);
/* Element offset a view call adds to its source (SLICE start * stride; 0 otherwise). */
int64_t gcr_view_offset(const gcr_call *c);

/* ---------------------------------------------------------------- dtype helpers */

float gcr_f16_to_f32(uint16_t h);
uint16_t gcr_f32_to_f16(float f);
float gcr_bf16_to_f32(uint16_t h);
uint16_t gcr_f32_to_bf16(float f);
/* n f16 values src[i * ss] -> dst[i * ds], and back: the same results as the scalar conversions
 * (round to nearest even; subnormals, infinities alike), 8 at a time with F16C where the CPU has it
 * (a NaN then keeps its payload's top bits instead of becoming the canonical quiet NaN) */
void gcr_f16_to_f32_n(float *dst, int64_t ds, const uint16_t *src, int64_t ss, int64_t n);
void gcr_f32_to_f16_n(uint16_t *dst, int64_t ds, const float *src, int64_t ss, int64_t n);
bool gcr_dtype_is_float(gcr_dtype t);
/* element i of a typed buffer as f32 / stored from f32 (rounding to nearest even for f16/bf16) */
float gcr_load_f32(const void *p, gcr_dtype t, int64_t i);
void gcr_store_f32(void *p, gcr_dtype t, int64_t i, float v);
/* the same for a run of n elements: p[off + i * ps] -> dst[i * ds], and src[i * ss] -> p[off + i * ps]
 * (f16 in bulk: gcr_f16_to_f32_n / gcr_f32_to_f16_n) */
void gcr_load_f32_n(float *dst, int64_t ds, const void *p, gcr_dtype t, int64_t off, int64_t ps, int64_t n);
void gcr_store_f32_n(void *p, gcr_dtype t, int64_t off, int64_t ps, const float *src, int64_t ss, int64_t n);

#endif /* GCR_INTERNAL_H */
