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

#endif
