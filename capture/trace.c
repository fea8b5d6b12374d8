/* trace.c — recording op calls into a capture IR: each call's inputs become values of the trace
 * (external tensors as inputs or constants on first use), its result a new value with a traced
 * handle. The capture API that decides which trace records (replay/capture.c) calls in here. */
#include "trace.h"
#include <stdio.h>
#include <stdlib.h>

bool gcr_trace_owns(const gcr_ir *ir, const gcr_tensor *t)
{
    return (t->flags & GCR_TF_TRACED) && t->trace == ir->owner && t->value >= 0 && t->value < ir->n_values &&
           ir->values[t->value].handle == t;
}

/* Value id of tensor t in trace ir (adding it as an external when first seen), or -1 with the
 * error set. Region tensors with data that are not values of this trace (an output of an
 * earlier pass fed back in) are read like any external tensor. */
static int value_of(gcr_ir *ir, gcr_tensor *t, const char *op, int k)
{
    if (gcr_trace_owns(ir, t)) return t->value;
    if (t->flags & GCR_TF_TRACED) {
        if (!t->st) {
            char b[96];
            gcr_set_error(ir->ctx, GCR_ERR_CAPTURE,
                          "%s: input %d (%s) is a traced tensor without data (of another capture, an "
                          "intermediate, or a region result that its last pass did not output)",
                          op, k, gcr_meta_str(&t->m, b, sizeof b));
            return -1;
        }
    }
    int known = gcr_ir_find_ext(ir, t);
    if (known >= 0) return known;
    if (!t->st) {
        gcr_set_error(ir->ctx, GCR_ERR_CAPTURE, "%s: input %d has no data", op, k);
        return -1;
    }
    int v = gcr_ir_add_value(ir, &t->m, (t->flags & GCR_TF_CONST) ? GCR_V_CONST : GCR_V_INPUT);
    if (v >= 0) {
        ir->values[v].ext = t;
        gcr_tensor_pin(t); /* the trace may read it until it is freed (gcr_ir_free unpins) */
    }
    return v;
}

gcr_tensor *gcr_trace_record_in(gcr_ir *ir, const gcr_call *c, const gcr_meta *out)
{
    const char *name = gcr_op_table[c->op].name;
    int in[GCR_MAX_INPUTS];
    for (int k = 0; k < c->n_in; k++) {
        in[k] = -1;
        if (!c->in[k]) continue;
        in[k] = value_of(ir, c->in[k], name, k);
        if (in[k] < 0) {
            if (!ir->failed) ir->failed = ir->ctx->status ? ir->ctx->status : GCR_ERR_CAPTURE;
            return NULL;
        }
    }
    bool view = gcr_op_is_view(c->op);
    int v = gcr_ir_add_value(ir, out, view ? GCR_V_VIEW : GCR_V_INTER);
    if (v < 0) {
        ir->failed = GCR_ERR_OOM;
        return NULL;
    }
    if (view) {
        const gcr_value *src = &ir->values[in[0]];
        ir->values[v].root = src->root;
        ir->values[v].offset = src->offset + gcr_view_offset(c);
    }
    gcr_tensor *h = gcr_tensor_shell(ir->ctx, out);
    if (!h || gcr_ir_add_node(ir, c, in, v) < 0) {
        gcr_tensor_destroy(h);
        ir->n_values--;
        ir->failed = GCR_ERR_OOM;
        return NULL;
    }
    h->trace = ir->owner;
    h->value = v;
    ir->values[v].handle = h;
    return h;
}

void gcr_trace_free(gcr_ir *ir)
{
    if (!ir) return;
    for (int v = 0; v < ir->n_values; v++) gcr_tensor_release(ir->values[v].handle); /* another trace may read it */
    gcr_ir_free(ir);
}

bool gcr_trace_reads(const gcr_ir *ir, int n, const gcr_storage *st)
{
    for (int v = 0; v < n && v < ir->n_values; v++) {
        const gcr_value *x = &ir->values[v];
        if ((x->kind == GCR_V_INPUT || x->kind == GCR_V_CONST) && x->ext && x->ext->st == st) return true;
    }
    return false;
}
