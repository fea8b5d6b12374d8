/* stubs.c — placeholders for the conv/matmul/pool families until cuda2's files land (delete each
 * stub as its real launcher arrives). */
#include "cuda_ops.h"
#define STUB(fn) gcr_status fn(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out) { (void)out; \
    return gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "cuda: %s not implemented yet", gcr_op_table[c->op].name); }
