/* movement.c — eager movement launcher (work in progress). */
#include "cuda_ops.h"
gcr_status gcr_cuda_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{ (void)out; return gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "cuda: %s not implemented yet", gcr_op_table[c->op].name); }
gcr_status gcr_cuda_copy_strided(gcr_ctx *ctx, const gcr_meta *dm, void *dp, const gcr_meta *sm, const void *sp)
{ (void)dm; (void)dp; (void)sm; (void)sp; return gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "cuda: strided copy not implemented yet"); }
