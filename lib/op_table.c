/* op_table.c — the op table expanded from ops.def, and per-op facts derived from it. */
#include "internal.h"

#define GCR_STR_(x) #x
#define GCR_STR(x) GCR_STR_(x)

const gcr_op_info gcr_op_table[GCR_OP_COUNT] = {
#define X(E, nm, ar, kd, ex) [GCR_OP_##E] = {#nm, ar, GCR_KIND_##kd, GCR_STR(ex)},
#include "ops.def"
#undef X
};

const char *gcr_kind_name(gcr_kind k)
{
    static const char *names[GCR_KIND_COUNT] = {"pointwise", "reduce", "conv", "matmul",
                                                "pool", "view", "movement"};
    return (unsigned)k < GCR_KIND_COUNT ? names[k] : "?";
}

float gcr_op_missing_input(gcr_op op, int input)
{
    if (op == GCR_OP_BATCH_NORM && input == 3) return 1.0f; /* gamma */
    return 0.0f;                                              /* beta, conv/linear bias */
}
