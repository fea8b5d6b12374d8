/* cuda_ops.h — the CUDA backend's per-family eager launchers, one file per family. Each runs one
 * validated call into out (dense row-major or NHWC, storage allocated; inputs any strides) on
 * the ctx stream and returns without waiting. */
#ifndef GCR_CUDA_OPS_H
#define GCR_CUDA_OPS_H

#include "cuda_internal.h"

gcr_status gcr_cuda_pointwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out); /* incl. cast, batch_norm */
gcr_status gcr_cuda_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* sum, mean, max */
gcr_status gcr_cuda_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);  /* contiguous, concat */
gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* cuda2 */
gcr_status gcr_cuda_matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* matmul, linear (cuda2) */
gcr_status gcr_cuda_pool(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);      /* cuda2 */

/* A strided copy of every element of src (meta sm, data at sp) into dst (meta dm, any strides,
 * same shape and dtype) on the ctx stream; used by contiguous, concat and host staging. */
gcr_status gcr_cuda_copy_strided(gcr_ctx *ctx, const gcr_meta *dm, void *dp, const gcr_meta *sm, const void *sp);

/* Sorts dims into operand 0's memory order (outermost first), drops size-1 dims and merges
 * neighbours that are dense for every operand; rewrites shape/st in place and returns the new
 * rank (0 when every dim was 1). st[k]: strides of operand k, in elements. */
int gcr_cuda_collapse(int nd, int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS]);
/* Host mirror of struct gcr_divs (kernels/common.cuh): magic dividers of the dims of a
 * collapsed shape. Returns 1 when the fast (32-bit) path applies: n < 2^31 and every dim fits. */
typedef struct gcr_cuda_divs {
    unsigned magic[GCR_MAX_DIMS], shift[GCR_MAX_DIMS];
} gcr_cuda_divs;
int gcr_cuda_divs_init(gcr_cuda_divs *dv, int nd, const int64_t *shape, int64_t n);
/* 1 when every operand's span (sum of (shape-1)*|stride|) is below 2^31 elements. */
int gcr_cuda_fits32(int nd, const int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS]);
/* Blocks for `work` items at `block` threads each, capped at a few waves (grid-stride loops). */
unsigned gcr_cuda_grid(gcr_ctx *ctx, int64_t work, unsigned block);
/* Runs an arbitrary pointwise formula over float a.. (nin inputs broadcast NumPy-style to out's
 * shape, p0/p1 from params) into out; compiles through the program cache on first use. */
gcr_status gcr_cuda_pointwise_expr(gcr_ctx *ctx, const char *expr, int nin, gcr_tensor *const *inputs, gcr_tensor *out,
                                   const float *params);
/* The program text of the eager kernels of a pointwise op with input dtypes ti[0..4] (-1: not a
 * tensor) into buf; returns its length (>= n: truncated). test_nvrtc compiles these in CI. */
int gcr_cuda_pw_source(char *buf, size_t n, gcr_op op, gcr_dtype to, const int *ti, int has_scalar);
/* The key of the per-ctx table of eager pointwise kernels: one per (op, output dtype, input dtypes
 * ti[0..4] (-1: not a tensor), scalar operand), distinct for every op id below 2^16. */
uint64_t gcr_cuda_pw_key(int op, gcr_dtype to, const int *ti, int has_scalar);

#endif
