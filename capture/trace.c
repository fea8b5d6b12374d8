/* trace.c — recording op calls while a context captures: the dispatch hook, explicit
 * capture_begin/end, output marks, the rules for host reads and writes while a trace records,
 * and the capture state kept on ctx->trace. */
#include "../replay/graph.h"
#include <stdio.h>
#include <stdlib.h>

gcr_capstate *gcr_capstate_get(gcr_ctx *ctx)
{
    if (!ctx->trace) ctx->trace = calloc(1, sizeof(gcr_capstate));
    return ctx->trace;
}

/* The trace that records calls now: the explicit capture's, or the open region's. */
static gcr_ir *open_trace(gcr_ctx *ctx);

/* Value id of tensor t in trace ir (adding it as an external when first seen), or -1 with the
 * error set. Region tensors with data that are not values of this trace (an output of an
 * earlier pass fed back in) are read like any external tensor. */
static int value_of(gcr_ir *ir, gcr_tensor *t, const char *op, int k)
{
    if (t->flags & GCR_TF_TRACED) {
        if (t->trace == ir->owner && t->value >= 0 && t->value < ir->n_values && ir->values[t->value].handle == t)
            return t->value;
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
    if (v >= 0) ir->values[v].ext = t;
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
    bool view = gcr_op_table[c->op].kind == GCR_KIND_VIEW;
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

gcr_tensor *gcr_trace_record(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out)
{
    if (ctx->mode == GCR_MODE_CHECK) return gcr_region_check(ctx, c, out);
    gcr_ir *ir = open_trace(ctx);
    if (!ir) {
        gcr_set_error(ctx, GCR_ERR_INTERNAL, "%s: capture mode without an open trace", gcr_op_table[c->op].name);
        return NULL;
    }
    return gcr_trace_record_in(ir, c, out);
}

/* ---------------------------------------------------------------- explicit capture */

static gcr_ir *open_trace(gcr_ctx *ctx)
{
    gcr_capstate *cs = ctx->trace;
    if (cs && cs->cur) return cs->cur;
    return gcr_region_open_trace(ctx);
}

gcr_status gcr_capture_begin(gcr_ctx *ctx)
{
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, ctx->mode == GCR_MODE_EAGER, GCR_ERR_CAPTURE,
              "capture_begin: the context is already capturing (captures and regions do not nest)");
    gcr_capstate *cs = gcr_capstate_get(ctx);
    GCR_CHECK(ctx, cs, GCR_ERR_OOM, "capture_begin: out of host memory");
    cs->cur = gcr_ir_new(ctx, NULL);
    if (!cs->cur) return GCR_ERR_OOM;
    ctx->mode = GCR_MODE_CAPTURE;
    ctx->capture_err = GCR_OK; /* an error recorded from here to capture_end fails the capture */
    return GCR_OK;
}

int gcr_ctx_capturing(const gcr_ctx *ctx) { return ctx && ctx->mode != GCR_MODE_EAGER; }

void gcr_trace_free(gcr_ir *ir)
{
    if (!ir) return;
    for (int v = 0; v < ir->n_values; v++) gcr_tensor_destroy(ir->values[v].handle);
    gcr_ir_free(ir);
}

gcr_status gcr_capture_end(gcr_ctx *ctx, gcr_graph **graph)
{
    if (!ctx) return GCR_ERR_INVALID;
    if (graph) *graph = NULL;
    gcr_capstate *cs = ctx->trace;
    GCR_CHECK(ctx, cs && cs->cur && ctx->mode == GCR_MODE_CAPTURE, GCR_ERR_CAPTURE,
              "capture_end: no explicit capture is open");
    GCR_CHECK(ctx, graph, GCR_ERR_INVALID, "capture_end: NULL graph pointer");
    gcr_ir *ir = cs->cur;
    cs->cur = NULL;
    ctx->mode = GCR_MODE_EAGER;
    /* a failed op that recorded nothing (its shape inference refused it) leaves capture_err */
    gcr_status s = ir->failed ? ir->failed : ctx->capture_err;
    if (s != GCR_OK) {
        gcr_trace_free(ir);
        return gcr_set_error(ctx, s, "capture_end: an op failed while capturing (%s); no graph was built",
                             gcr_status_name(s));
    }
    return gcr_graph_from_trace(ctx, ir, true, graph);
}

gcr_status gcr_graph_output(gcr_ctx *ctx, gcr_tensor *t)
{
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, t, GCR_ERR_INVALID, "graph_output: NULL tensor");
    if (ctx->mode == GCR_MODE_CHECK) return gcr_region_mark_output(ctx, t);
    /* eager: nothing to mark, so one model function serves eager runs and captures alike */
    if (ctx->mode == GCR_MODE_EAGER && !(t->flags & GCR_TF_TRACED)) return GCR_OK;
    gcr_ir *ir = ctx->mode == GCR_MODE_CAPTURE ? open_trace(ctx) : NULL;
    GCR_CHECK(ctx, ir, GCR_ERR_CAPTURE, "graph_output: the context is not capturing");
    GCR_CHECK(ctx, (t->flags & GCR_TF_TRACED) && t->trace == ir->owner && t->value >= 0 &&
                       t->value < ir->n_values && ir->values[t->value].handle == t,
              GCR_ERR_CAPTURE, "graph_output: the tensor is not a result of the current capture");
    ir->values[t->value].marked = 1;
    t->flags |= GCR_TF_OUTPUT;
    return GCR_OK;
}

void gcr_capture_ctx_free(gcr_ctx *ctx)
{
    gcr_capstate *cs = ctx->trace;
    gcr_regions_free(ctx);
    if (!cs) return;
    gcr_trace_free(cs->cur);
    while (cs->graphs) gcr_graph_free(cs->graphs);
    free(cs);
    ctx->trace = NULL;
}

/* ---------------------------------------------------------------- host access while tracing */

bool gcr_trace_reads(const gcr_ir *ir, int n, const gcr_storage *st)
{
    for (int v = 0; v < n && v < ir->n_values; v++) {
        const gcr_value *x = &ir->values[v];
        if ((x->kind == GCR_V_INPUT || x->kind == GCR_V_CONST) && x->ext && x->ext->st == st) return true;
    }
    return false;
}

gcr_status gcr_trace_host_access(const gcr_tensor *t, bool write, const char *fn)
{
    gcr_ctx *ctx = t->ctx;
    gcr_capstate *cs = ctx->trace;
    gcr_ir *ir = cs && ctx->mode == GCR_MODE_CAPTURE ? cs->cur : NULL;
    char b[96];
    gcr_meta_str(&t->m, b, sizeof b);
    if (ir) { /* an explicit capture records */
        GCR_CHECK(ctx, t->st || !(t->flags & GCR_TF_TRACED) || t->trace != ir->owner, GCR_ERR_CAPTURE,
                  "%s: %s is a traced tensor with no data yet (read it after the capture ends)", fn, b);
        GCR_CHECK(ctx, !write || !t->st || !gcr_trace_reads(ir, ir->n_values, t->st), GCR_ERR_CAPTURE,
                  "%s: %s is already read by an op of this capture: the graph reads its inputs when it runs, "
                  "after this write, so that op would see it too; write inputs before the capture begins, or "
                  "into another tensor",
                  fn, b);
    }
    GCR_TRY(gcr_region_host_access(t, write, fn));
    GCR_CHECK(ctx, t->st, GCR_ERR_CAPTURE,
              "%s: %s is an intermediate of a captured graph, not one of its outputs: it holds no data (mark it "
              "with gcr_graph_output during the capture to read it)",
              fn, b);
    return GCR_OK;
}
