/* stubs.c — placeholders until each kernel family lands in its own file (delete as they do). */
#include "cpu.h"
#define STUB(fn) gcr_status fn(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out) { (void)out; \
    return gcr_set_error(ctx, GCR_ERR_UNSUPPORTED, "cpu: %s not implemented yet", gcr_op_table[c->op].name); }
STUB(gcr_cpu_conv2d)
STUB(gcr_cpu_matmul)
STUB(gcr_cpu_pool)
