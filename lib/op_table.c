/* op_table.c — the op table expanded from ops.def, the kind table from kinds.def, and per-op
 * facts derived from them. */
#include "internal.h"

#define GCR_STR_(x) #x
#define GCR_STR(x) GCR_STR_(x)

const gcr_op_info gcr_op_table[GCR_OP_COUNT] = {
#define X(E, nm, ar, kd, ex) [GCR_OP_##E] = {#nm, ar, GCR_KIND_##kd, GCR_STR(ex)},
#include "ops.def"
#undef X
};

/* the input slots of an anchor that a pointwise prologue may transform */
static bool prologue_first(const gcr_params *p, int slot)
{
    (void)p;
    return slot == 0;
}

/* padded zeros must stay zeros: only an unpadded conv transforms its loads */
static bool prologue_conv(const gcr_params *p, int slot)
{
    return slot == 0 && p->conv.padding[0] == 0 && p->conv.padding[1] == 0;
}

static bool prologue_matmul(const gcr_params *p, int slot)
{
    (void)p;
    return slot <= 1;
}

const gcr_kind_info gcr_kind_table[GCR_KIND_COUNT] = {
#define K(E, nm, inf, cpu, cuda, lim, hooked, ...) [GCR_KIND_##E] = {.name = #nm, .infer = inf, __VA_ARGS__},
#include "kinds.def"
#undef K
};

const char *gcr_kind_name(gcr_kind k) { return (unsigned)k < GCR_KIND_COUNT ? gcr_kind_table[k].name : "?"; }

float gcr_op_missing_input(gcr_op op, int input)
{
    if (op == GCR_OP_BATCH_NORM && input == 3) return 1.0f; /* gamma */
    return 0.0f;                                              /* beta, conv/linear bias */
}
