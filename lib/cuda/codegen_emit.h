/* codegen_emit.h — what the CUDA generators (codegen_pointwise.c, codegen_hooked.c,
 * codegen_reduce.c) share: the CUDA dialect of the one expression emitter (lib/emit.h), exact
 * float constants, kernel names, parameter lists and refusals. Every generator's state lives in
 * structs passed in, never in globals, so contexts on several threads generate code at once.
 *
 * Every expression is evaluated in f32 and rounded to its dtype where it is stored and at
 * explicit casts. Between fused ops:
 * - f16 intermediates stay f32 (as in nvFuser and TorchInductor): rounding each one costs two
 *   conversions on the conversion pipe and made the fused f16 hardswish conversion-bound at 62%
 *   of copy bandwidth on an H100 (98% without). Results are at least as accurate as eager and
 *   may differ from it by about an f16 ulp.
 * - bf16 intermediates are rounded as eager stores them (integer ops only, cheap): with an 8-bit
 *   mantissa, skipping the roundings of a chain moved results several bf16 ulps from eager.
 * Shapes and strides of one variant are fixed, so they are written as constants: index math
 * divides by constants (multiply-shift) and uses 32-bit integers whenever every offset fits. */
#ifndef GCR_CUDA_CODEGEN_EMIT_H
#define GCR_CUDA_CODEGEN_EMIT_H

#include "codegen.h"
#include "../emit.h"

#define put gcr_text_put

/* A CUDA emitter over group g: loads through load, the anchor's result (if any) as acc. */
gcr_emit gcr_cg_emit(const gcr_group *g, const void *gen, void (*load)(gcr_text *, const gcr_emit *, int),
                     const char *ind);
/* a float constant, exactly (bit pattern), with its value as a comment for the reader */
void gcr_cg_float(gcr_text *b, float f);
/* "int" when every offset fits 32 bits, else "long long" */
static inline const char *gcr_cg_ity(bool fits32) { return fits32 ? "int" : "long long"; }
/* "gcr_<kernel name>", every character outside [A-Za-z0-9_] made '_' */
void gcr_cg_fn_name(const gcr_kernel *K, char *out, size_t n);
/* Appends value's pointer to cg's parameters; its index, or -1 when they are full. */
int gcr_cg_add_param(gcr_cg_kernel *cg, int value);
/* cg->why from fmt; returns GCR_ERR_COMPILE (the graph runs the group unfused). */
gcr_status gcr_cg_unsupported(gcr_cg_kernel *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cg->src = b's text; GCR_ERR_OOM when b ran out of memory. */
gcr_status gcr_cg_finish(gcr_text *b, gcr_cg_kernel *cg);

/* the generators, one per kernel shape */
gcr_status gcr_cg_pointwise(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg);
gcr_status gcr_cg_hooked(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg);
gcr_status gcr_cg_reduce(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg);

#endif /* GCR_CUDA_CODEGEN_EMIT_H */
