/* capture.c — the explicit capture API (capture_begin/end, graph_output) and the recorder that
 * replay/ installs on a ctx the first time it captures or runs a region: which trace records a
 * call (the explicit capture's, the open region's, or a region pass's check), the rules for host
 * reads and writes while a trace records, and the state kept on ctx->rec_state. */
#include "graph.h"
#include <stdio.h>
#include <stdlib.h>

static gcr_tensor *record(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out);
static gcr_status host_access(const gcr_tensor *t, bool write, const char *fn);
static void state_free(gcr_ctx *ctx);

static const gcr_recorder recorder = {record, gcr_region_replayed, host_access, state_free};

gcr_capstate *gcr_capstate_get(gcr_ctx *ctx)
{
    if (!ctx->rec_state) {
        gcr_capstate *cs = ctx->rec_state = calloc(1, sizeof(gcr_capstate));
        if (cs) {
            cs->failed.next = cs->failed.prev = &cs->failed;
            ctx->rec = &recorder;
        }
    }
    return ctx->rec_state;
}

gcr_capstate *gcr_capstate_of(const gcr_ctx *ctx) { return ctx->rec_state; }

/* The trace that records calls now: the explicit capture's, or the open region's. */
static gcr_ir *open_trace(gcr_ctx *ctx)
{
    gcr_capstate *cs = gcr_capstate_of(ctx);
    if (cs && cs->cur) return cs->cur;
    return gcr_region_open_trace(ctx);
}

static gcr_tensor *record(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out)
{
    if (ctx->mode == GCR_MODE_CHECK) return gcr_region_check(ctx, c, out);
    gcr_ir *ir = open_trace(ctx);
    if (!ir) {
        gcr_set_error(ctx, GCR_ERR_INTERNAL, "%s: capture mode without an open trace", gcr_op_table[c->op].name);
        return NULL;
    }
    return gcr_trace_record_in(ir, c, out);
}

static void state_free(gcr_ctx *ctx)
{
    gcr_capstate *cs = gcr_capstate_of(ctx);
    if (!cs) return;
    gcr_regions_free(ctx);
    gcr_trace_free(cs->cur);
    while (cs->graphs) gcr_graph_free(cs->graphs);
    while (cs->failed.next != &cs->failed) gcr_tensor_release(cs->failed.next);
    free(cs);
    ctx->rec_state = NULL;
    ctx->rec = NULL;
}

/* ---------------------------------------------------------------- explicit capture */

void gcr_capture_failed(gcr_ctx *ctx, gcr_ir *ir)
{
    if (!ir) return;
    gcr_capstate *cs = gcr_capstate_of(ctx);
    for (int v = 0; cs && v < ir->n_values; v++) {
        gcr_tensor *h = ir->values[v].handle;
        if (!h) continue;
        gcr_tensor_unbind(h);
        h->trace = NULL; /* no trace's (its address may be reused): host_access names the failed capture */
        h->value = -1;
        gcr_tensor_list_push(&cs->failed, h);
        ir->values[v].handle = NULL;
    }
    gcr_trace_free(ir);
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

gcr_status gcr_capture_end(gcr_ctx *ctx, gcr_graph **graph)
{
    if (!ctx) return GCR_ERR_INVALID;
    if (graph) *graph = NULL;
    gcr_capstate *cs = gcr_capstate_of(ctx);
    GCR_CHECK(ctx, cs && cs->cur && ctx->mode == GCR_MODE_CAPTURE, GCR_ERR_CAPTURE,
              "capture_end: no explicit capture is open");
    GCR_CHECK(ctx, graph, GCR_ERR_INVALID, "capture_end: NULL graph pointer");
    gcr_ir *ir = cs->cur;
    cs->cur = NULL;
    ctx->mode = GCR_MODE_EAGER;
    /* a failed op that recorded nothing (its shape inference refused it) leaves capture_err */
    gcr_status s = ir->failed ? ir->failed : ctx->capture_err;
    if (s != GCR_OK) {
        gcr_capture_failed(ctx, ir);
        return gcr_set_error(ctx, s, "capture_end: an op failed while capturing (%s); no graph was built",
                             gcr_status_name(s));
    }
    return gcr_graph_from_trace(ctx, ir, true, graph);
}

gcr_status gcr_graph_output(gcr_ctx *ctx, gcr_tensor *t)
{
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, t, GCR_ERR_INVALID, "graph_output: NULL tensor");
    GCR_CHECK(ctx, t->ctx == ctx, GCR_ERR_INVALID, "graph_output: the tensor belongs to another context");
    if (ctx->mode == GCR_MODE_CHECK) return gcr_region_mark_output(ctx, t);
    /* eager: nothing to mark (an output of a finished capture included), so one model function
     * serves eager runs and captures alike */
    if (ctx->mode == GCR_MODE_EAGER) return GCR_OK;
    gcr_ir *ir = open_trace(ctx);
    GCR_CHECK(ctx, ir, GCR_ERR_CAPTURE, "graph_output: the context is not capturing");
    GCR_CHECK(ctx, gcr_trace_owns(ir, t), GCR_ERR_CAPTURE,
              "graph_output: the tensor is not a result of the current capture");
    ir->values[t->value].marked = 1;
    return GCR_OK;
}

/* ---------------------------------------------------------------- host access while tracing */

static gcr_status host_access(const gcr_tensor *t, bool write, const char *fn)
{
    gcr_ctx *ctx = t->ctx;
    gcr_capstate *cs = gcr_capstate_of(ctx);
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
    GCR_CHECK(ctx, t->st || !(t->flags & GCR_TF_TRACED) || t->trace || t->value >= 0, GCR_ERR_CAPTURE,
              "%s: %s is a result of a capture whose gcr_capture_end failed: it holds no data", fn, b);
    GCR_TRY(gcr_region_host_access(t, write, fn));
    GCR_CHECK(ctx, t->st, GCR_ERR_CAPTURE,
              "%s: %s is an intermediate of a captured graph, not one of its outputs: it holds no data (mark it "
              "with gcr_graph_output during the capture to read it)",
              fn, b);
    return GCR_OK;
}
