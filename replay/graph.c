/* graph.c — the public graph API: a graph made from a finished trace (explicit capture or a
 * region's pass), replay, input binding, inputs and outputs, stats, description and destruction.
 * Running a graph (guards and its variants) is sigcache.c's; building a variant, variant.c's. */
#include "graph.h"
#include <stdlib.h>

gcr_status gcr_graph_from_trace(gcr_ctx *ctx, gcr_ir *trace, bool owns_handles, gcr_graph **out)
{
    *out = NULL;
    gcr_graph *g = calloc(1, sizeof *g);
    if (!g) {
        if (owns_handles) gcr_capture_failed(ctx, trace);
        return gcr_set_error(ctx, GCR_ERR_OOM, "capture_end: out of host memory");
    }
    g->ctx = ctx;
    gcr_lru_init(&g->lru);
    g->tf32 = ctx->knobs.tf32;
    g->trace = trace;
    g->owns_handles = owns_handles;
    g->n_inputs = trace->n_inputs;
    g->in_t = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *g->in_t);
    g->sig_now = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *g->sig_now);
    gcr_status s = g->in_t && g->sig_now ? gcr_ir_link(trace) : gcr_set_error(ctx, GCR_ERR_OOM, "capture_end: out of host memory");
    for (int i = 0; i < g->n_inputs && s == GCR_OK; i++) {
        g->in_t[i] = trace->values[trace->inputs[i]].ext;
        gcr_tensor_pin(g->in_t[i]); /* held while bound: a freed input lives on until unbound */
    }
    for (int i = 0; i < trace->n_nodes; i++) g->stats.ops_traced++;
    if (owns_handles && s == GCR_OK) {
        gcr_capstate *cs = gcr_capstate_get(ctx);
        if (!cs) s = GCR_ERR_OOM;
        else {
            g->next = cs->graphs;
            if (cs->graphs) cs->graphs->prev = g;
            cs->graphs = g;
        }
    }
    if (s == GCR_OK) s = gcr_graph_run(g);
    if (s != GCR_OK) {
        if (!ctx->status) gcr_set_error(ctx, s, "capture_end: building the graph failed");
        gcr_ir *tr = owns_handles ? g->trace : NULL; /* the region keeps its trace */
        g->trace = NULL;
        g->owns_handles = false;
        gcr_graph_free(g);
        gcr_capture_failed(ctx, tr);
        return s;
    }
    *out = g;
    return GCR_OK;
}

gcr_status gcr_graph_replay(gcr_graph *g)
{
    if (!g) return GCR_ERR_INVALID;
    GCR_CHECK(g->ctx, g->ctx->mode == GCR_MODE_EAGER, GCR_ERR_CAPTURE,
              "graph_replay: the context is capturing; replay after the capture ends");
    gcr_status s = gcr_graph_run(g);
    if (s == GCR_OK) g->stats.replays++;
    if (g->region) gcr_region_graph_ran(g->region, g, s);
    return s;
}

gcr_status gcr_graph_bind_input(gcr_graph *g, int i, gcr_tensor *t)
{
    if (!g) return GCR_ERR_INVALID;
    GCR_CHECK(g->ctx, i >= 0 && i < g->n_inputs, GCR_ERR_INVALID, "graph_bind_input: input %d of %d", i, g->n_inputs);
    GCR_CHECK(g->ctx, t && t->ctx == g->ctx, GCR_ERR_INVALID, "graph_bind_input: NULL tensor or another context");
    GCR_CHECK(g->ctx, t->st, GCR_ERR_CAPTURE, "graph_bind_input: the tensor has no data (a traced tensor)");
    /* a region's passes pick its graphs' inputs by matching the body's calls */
    GCR_CHECK(g->ctx, !g->region, GCR_ERR_CAPTURE, "graph_bind_input: the graph belongs to region %s, whose passes bind its inputs",
              gcr_region_name(g->region));
    gcr_tensor_pin(t);
    gcr_tensor_unpin(g->in_t[i]);
    g->in_t[i] = t;
    return GCR_OK;
}

int gcr_graph_num_inputs(const gcr_graph *g) { return g ? g->n_inputs : 0; }
int gcr_graph_num_outputs(const gcr_graph *g) { return g ? g->trace->n_outputs : 0; }
gcr_tensor *gcr_graph_get_input(gcr_graph *g, int i) { return g && i >= 0 && i < g->n_inputs ? g->in_t[i] : NULL; }
gcr_tensor *gcr_graph_get_output(gcr_graph *g, int i)
{
    if (!g || i < 0 || i >= g->trace->n_outputs) return NULL;
    return g->trace->values[g->trace->outputs[i]].handle;
}

gcr_status gcr_graph_get_stats(const gcr_graph *g, gcr_graph_stats *out)
{
    if (!g || !out) return GCR_ERR_INVALID;
    *out = g->stats;
    const gcr_variant *v = g->cur;
    if (v) {
        out->kernels = v->ex && v->ex->launches && v->job.state ? v->ex->launches(&v->job) : gcr_ir_launches(v->ir);
        out->fused_groups = 0;
        for (int k = 0; k < v->ir->n_kernels; k++)
            if (v->ir->kernels[k].type == GCR_K_FUSED && v->ir->kernels[k].n_nodes >= 2) out->fused_groups++;
        out->arena_bytes = v->ir->arena_bytes;
        out->intermediate_bytes = v->ir->intermediate_bytes;
    }
    return GCR_OK;
}

size_t gcr_graph_describe(const gcr_graph *g, char *buf, size_t n)
{
    if (!g) return 0;
    return gcr_ir_describe(g->cur ? g->cur->ir : g->trace, buf, n);
}

void gcr_graph_destroy(gcr_graph *g)
{
    if (!g) return;
    /* a region's graph is borrowed (gcr_region_graph): the region frees it when it evicts it */
    if (g->region) {
        gcr_set_error(g->ctx, GCR_ERR_INVALID, "graph_destroy: the graph belongs to region %s (borrowed from gcr_region_graph); the region frees it",
                      gcr_region_name(g->region));
        return;
    }
    gcr_graph_free(g);
}

void gcr_graph_free(gcr_graph *g)
{
    if (!g) return;
    gcr_prof_write(g);
    gcr_sigcache_clear(g);
    gcr_capstate *cs = gcr_capstate_of(g->ctx);
    if (cs && (cs->graphs == g || g->prev)) {
        if (g->prev) g->prev->next = g->next;
        else cs->graphs = g->next;
        if (g->next) g->next->prev = g->prev;
    }
    gcr_graph_staging_free(g);
    for (int i = 0; g->in_t && i < g->n_inputs; i++) gcr_tensor_unpin(g->in_t[i]);
    if (g->owns_handles) gcr_trace_free(g->trace);
    free(g->in_t);
    free(g->sig_now);
    free(g->prof);
    free(g);
}
