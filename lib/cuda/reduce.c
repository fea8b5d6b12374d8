/* reduce.c — eager reduction launcher (work in progress). */
#include "cuda_ops.h"
gcr_status gcr_cuda_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{ (void)out; return gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "cuda: %s not implemented yet", gcr_op_table[c->op].name); }
