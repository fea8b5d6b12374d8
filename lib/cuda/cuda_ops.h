/* cuda_ops.h — the CUDA backend's per-family eager launchers, one file per family. Each runs one
 * validated call into out (dense row-major or NHWC, storage allocated; inputs any strides) on
 * the ctx stream and returns without waiting. */
#ifndef GCR_CUDA_OPS_H
#define GCR_CUDA_OPS_H

#include "cuda_internal.h"
#include "collapse.h"
#include "kernels/abi.h"

gcr_status gcr_cuda_pointwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out); /* incl. cast, batch_norm */
gcr_status gcr_cuda_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* sum, mean, max */
gcr_status gcr_cuda_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);  /* contiguous, concat */
gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
gcr_status gcr_cuda_matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* matmul, linear */
gcr_status gcr_cuda_pool(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);      /* max, avg and adaptive-avg pooling */

/* Limits of the kernels, checked for every call before it runs or is recorded (the backend's check,
 * backend.c), so a captured call fails at the call as its eager twin would. A limit is a quantity
 * of the call and the most the kernels take; the family functions below fill an array of at most
 * GCR_CUDA_MAX_LIMITS from the call's metas (no data, no device) and return how many they wrote. */
typedef struct gcr_cuda_limit {
    const char *what;
    int64_t value, max;
} gcr_cuda_limit;
#define GCR_CUDA_MAX_LIMITS 16
/* The largest row, column, channel, pixel or padded coordinate the conv, matmul and pool kernels
 * index in 32-bit ints: 2^31 less 2^22 of headroom, so that a tile (at most 128), a loop step or a
 * window's reach (padding and windows are at most 2^20) past an index in range still fits. */
#define GCR_CUDA_IDX_MAX (((int64_t)1 << 31) - ((int64_t)1 << 22))
int gcr_cuda_conv2d_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l);
int gcr_cuda_matmul_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l); /* matmul, linear */
int gcr_cuda_pool_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l);
/* The first of l[0..n) whose value passes its max, or NULL. */
const gcr_cuda_limit *gcr_cuda_limit_broken(const gcr_cuda_limit *l, int n);
/* "<what> is <value>, beyond the CUDA kernels' limit of <max>" into buf; returns buf. */
char *gcr_cuda_limit_str(const gcr_cuda_limit *l, char *buf, size_t n);

/* A strided copy of every element of src (meta sm, data at sp) into dst (meta dm, any strides,
 * same shape and dtype) on the ctx stream; used by contiguous, concat and host staging. */
gcr_status gcr_cuda_copy_strided(gcr_ctx *ctx, const gcr_meta *dm, void *dp, const gcr_meta *sm, const void *sp);

/* The magic dividers (gcr_divs, kernels/abi.h) of the dims of a collapsed shape. Returns 1 when
 * the fast (32-bit) path applies: n < 2^31 and every dim fits. */
int gcr_cuda_divs_init(gcr_divs *dv, int nd, const int64_t *shape, int64_t n);
/* Blocks for `work` items at `block` threads each, capped at a few waves (grid-stride loops). */
unsigned gcr_cuda_grid(gcr_ctx *ctx, int64_t work, unsigned block);
/* The program text of the eager kernels of a pointwise op with input dtypes ti[0..4] (-1: not a
 * tensor) into buf; returns its length (>= n: truncated). test_nvrtc compiles these in CI. */
int gcr_cuda_pw_source(char *buf, size_t n, gcr_op op, gcr_dtype to, const int *ti, int has_scalar);
/* The key of the per-ctx table of eager pointwise kernels: one per (op, output dtype, input dtypes
 * ti[0..4] (-1: not a tensor), scalar operand), distinct for every op id below 2^16. */
uint64_t gcr_cuda_pw_key(int op, gcr_dtype to, const int *ti, int has_scalar);

#endif
