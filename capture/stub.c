/* stub.c — placeholder for capture/ until the trace lands. */
#include "../lib/internal.h"
gcr_tensor *gcr_trace_record(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out)
{
    (void)out;
    gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "%s: capture not implemented yet", gcr_op_table[c->op].name);
    return NULL;
}
void gcr_capture_ctx_free(gcr_ctx *ctx) { (void)ctx; }
