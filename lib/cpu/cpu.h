/* cpu.h — the CPU backend's kernels, one function per op family, each in its own file. Every
 * kernel reads inputs with any strides and writes a dense out (row-major or NHWC); f16/bf16 are
 * stored as such and computed in f32. */
#ifndef GCR_CPU_H
#define GCR_CPU_H

#include "../internal.h"

gcr_status gcr_cpu_pointwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out); /* incl. cast, batch_norm */
gcr_status gcr_cpu_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
gcr_status gcr_cpu_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
gcr_status gcr_cpu_matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);    /* matmul, linear */
gcr_status gcr_cpu_pool(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);
gcr_status gcr_cpu_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out);  /* contiguous, concat */
/* Frees ctx->cpu_scratch, the kernels' reusable buffers (lib/cpu/gemm.c); called at ctx end. */
void gcr_cpu_scratch_free(gcr_ctx *ctx);
/* The backend's executor (exec.c): fused groups as tile programs (lib/exec.h). */
extern const struct gcr_executor gcr_cpu_executor;

#endif
