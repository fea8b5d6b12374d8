/* staging.c — host staging of a graph (gcr_graph_input_host / gcr_graph_output_host): host buffers
 * the graph owns (the backend's host memory: page-locked on CUDA), copied into its inputs before
 * and out of its outputs after every replay by the executor's run, inside the same CUDA Graph, so a
 * loop step (upload, forward, download) is one launch and one sync. Each variant gets the plan of
 * those copies for its own input signature (gcr_variant_stage); a replay that runs the op list
 * eagerly instead (retrace=0) does the same copies by hand (gcr_graph_stage_eager). */
#include "graph.h"

/* h freed, if it held a buffer: the staging changed, so variants plan theirs again */
static void unstage(gcr_graph *g, gcr_host_buf *h)
{
    if (!h->buf) return;
    g->ctx->be->host_free(g->ctx, h->buf);
    h->buf = NULL;
    h->bytes = 0;
    g->stage_gen++;
}

/* host buffer i of one side: made, or kept when it already has the size */
static gcr_status host_buf(gcr_graph *g, gcr_host_buf **side, int n, int i, size_t bytes, void **buf)
{
    gcr_ctx *ctx = g->ctx;
    if (!*side) {
        *side = calloc((size_t)n, sizeof **side);
        GCR_CHECK(ctx, *side, GCR_ERR_OOM, "graph host staging: out of host memory");
    }
    gcr_host_buf *h = &(*side)[i];
    if (!h->buf || h->bytes != bytes) {
        unstage(g, h);
        g->stage_gen++; /* also when there was none: a new buffer */
        GCR_TRY(ctx->be->host_alloc(ctx, bytes, &h->buf));
        h->bytes = bytes;
    }
    *buf = h->buf;
    return GCR_OK;
}

gcr_status gcr_graph_input_host(gcr_graph *g, int i, size_t bytes, void **buf)
{
    if (!g) return GCR_ERR_INVALID;
    gcr_ctx *ctx = g->ctx;
    GCR_CHECK(ctx, buf, GCR_ERR_INVALID, "graph_input_host: NULL buf");
    *buf = NULL;
    GCR_CHECK(ctx, i >= 0 && i < g->n_inputs, GCR_ERR_INVALID, "graph_input_host: input %d of %d", i, g->n_inputs);
    const gcr_tensor *t = g->in_t[i];
    char b[128];
    GCR_CHECK(ctx, t, GCR_ERR_INVALID, "graph_input_host: input %d is not bound", i);
    GCR_CHECK(ctx, bytes == gcr_tensor_nbytes(t), GCR_ERR_SHAPE, "graph_input_host: %zu bytes given, input %d (%s) holds %zu",
              bytes, i, gcr_meta_str(&t->m, b, sizeof b), gcr_tensor_nbytes(t));
    GCR_CHECK(ctx, !gcr_meta_overlaps(&t->m), GCR_ERR_INVALID,
              "graph_input_host: input %d (%s) is an expand view whose elements share memory: stage its source", i,
              gcr_meta_str(&t->m, b, sizeof b));
    return host_buf(g, &g->host_in, g->n_inputs, i, bytes, buf);
}

gcr_status gcr_graph_output_host(gcr_graph *g, int i, size_t bytes, void **buf)
{
    if (!g) return GCR_ERR_INVALID;
    gcr_ctx *ctx = g->ctx;
    GCR_CHECK(ctx, buf, GCR_ERR_INVALID, "graph_output_host: NULL buf");
    *buf = NULL;
    int n = g->trace->n_outputs;
    GCR_CHECK(ctx, i >= 0 && i < n, GCR_ERR_INVALID, "graph_output_host: output %d of %d", i, n);
    const gcr_tensor *t = gcr_graph_get_output(g, i);
    char b[128];
    GCR_CHECK(ctx, t, GCR_ERR_INVALID, "graph_output_host: output %d has no handle", i);
    GCR_CHECK(ctx, bytes == gcr_tensor_nbytes(t), GCR_ERR_SHAPE, "graph_output_host: %zu bytes given, output %d (%s) holds %zu",
              bytes, i, gcr_meta_str(&t->m, b, sizeof b), gcr_tensor_nbytes(t));
    return host_buf(g, &g->host_out, n, i, bytes, buf);
}

void gcr_variant_stage_free(gcr_graph *g, gcr_variant *v)
{
    for (int i = 0; v->stage && i < v->job.n_stage_in + v->job.n_stage_out; i++)
        if (v->stage[i].dense) gcr_tensor_destroy(v->stage[i].dense);
    free(v->stage);
    v->stage = NULL;
    v->job.stage = NULL;
    v->job.n_stage_in = v->job.n_stage_out = 0;
}

/* Host buffer h (of input or output i) against the meta m its tensor has now (NULL: not known
 * yet): a buffer of another size is freed (unstaged), and the first such one in a check names the
 * side, the index and both sizes in the GCR_ERR_SHAPE *s returns; an input that is an expand view
 * cannot take the copy (GCR_ERR_INVALID, the buffer kept). Every buffer is checked before *s is
 * returned, so one failed replay unstages all that no longer fit. */
static void fit(gcr_graph *g, gcr_host_buf *h, const gcr_meta *m, bool input, int i, gcr_status *s)
{
    gcr_ctx *ctx = g->ctx;
    const char *which = input ? "input" : "output";
    if (!h->buf || !m) return;
    char b[128];
    size_t need = (size_t)gcr_meta_numel(m) * gcr_dtype_size(m->dtype), had = h->bytes;
    if (h->bytes != need) {
        unstage(g, h);
        if (*s == GCR_OK)
            *s = gcr_set_error(ctx, GCR_ERR_SHAPE,
                               "replay: the host buffer of %s %d holds %zu bytes, the %s is now %s (%zu bytes); it is "
                               "unstaged: stage it again with the new size", which, i, had, which, gcr_meta_str(m, b, sizeof b), need);
    } else if (input && gcr_meta_overlaps(m) && *s == GCR_OK) {
        *s = gcr_set_error(ctx, GCR_ERR_INVALID,
                           "replay: input %d (%s) is staged from a host buffer but is an expand view whose elements share "
                           "memory: bind a tensor of its own", i, gcr_meta_str(m, b, sizeof b));
    }
}

/* stage entry for value x of v and host buffer h, whose size fit() checked */
static gcr_status stage_entry(gcr_graph *g, gcr_variant *v, int x, gcr_host_buf *h, gcr_exec_stage *e)
{
    gcr_ctx *ctx = g->ctx;
    const gcr_meta *m = &v->ir->values[x].m;
    *e = (gcr_exec_stage){x, h->buf, h->bytes, NULL};
    if (!gcr_meta_is_contiguous(m)) {
        gcr_meta d = *m;
        gcr_meta_set_contiguous(&d);
        e->dense = gcr_tensor_alloc(ctx, &d, "graph host staging");
        if (!e->dense) return ctx->status ? ctx->status : GCR_ERR_OOM;
        /* the variant's, freed with its staging: off the ctx's list, so the end of a caller's scope
         * open at this replay cannot free it */
        gcr_tensor_list_drop(e->dense);
    }
    return GCR_OK;
}

gcr_status gcr_variant_stage(gcr_graph *g, gcr_variant *v)
{
    if (v->stage_gen == g->stage_gen) return GCR_OK;
    gcr_variant_stage_free(g, v);
    int n_o = g->trace->n_outputs;
    gcr_status fits = GCR_OK;
    for (int i = 0; g->host_in && i < g->n_inputs; i++)
        fit(g, &g->host_in[i], &v->ir->values[v->ir->inputs[i]].m, true, i, &fits);
    for (int o = 0; g->host_out && o < n_o; o++)
        fit(g, &g->host_out[o], &v->ir->values[v->ir->outputs[o]].m, false, o, &fits);
    GCR_TRY(fits);
    int n_in = 0, n_out = 0;
    for (int i = 0; g->host_in && i < g->n_inputs; i++) n_in += g->host_in[i].buf != NULL;
    for (int o = 0; g->host_out && o < n_o; o++) n_out += g->host_out[o].buf != NULL;
    if (n_in + n_out) {
        v->stage = calloc((size_t)(n_in + n_out), sizeof *v->stage);
        GCR_CHECK(g->ctx, v->stage, GCR_ERR_OOM, "replay: out of host memory planning the host staging");
    }
    gcr_status s = GCR_OK;
    int k = 0;
    for (int i = 0; s == GCR_OK && g->host_in && i < g->n_inputs; i++)
        if (g->host_in[i].buf) s = stage_entry(g, v, v->ir->inputs[i], &g->host_in[i], &v->stage[k++]);
    for (int o = 0; s == GCR_OK && g->host_out && o < n_o; o++)
        if (g->host_out[o].buf) s = stage_entry(g, v, v->ir->outputs[o], &g->host_out[o], &v->stage[k++]);
    v->job.stage = v->stage;
    v->job.n_stage_in = n_in;
    v->job.n_stage_out = n_out;
    if (s != GCR_OK) { /* entries not made are zero: the free walks them all */
        gcr_variant_stage_free(g, v);
        return s;
    }
    v->stage_gen = g->stage_gen;
    v->job.stage_gen = g->stage_gen;
    return GCR_OK;
}

gcr_status gcr_graph_stage_eager(gcr_graph *g, bool in)
{
    gcr_status fits = GCR_OK;
    if (in) {
        for (int i = 0; g->host_in && i < g->n_inputs; i++) fit(g, &g->host_in[i], &g->in_t[i]->m, true, i, &fits);
        GCR_TRY(fits);
        for (int i = 0; g->host_in && i < g->n_inputs; i++)
            if (g->host_in[i].buf) GCR_TRY(gcr_tensor_from_host(g->in_t[i], g->host_in[i].buf, g->host_in[i].bytes));
    } else {
        for (int o = 0; g->host_out && o < g->trace->n_outputs; o++) {
            const gcr_tensor *t = gcr_graph_get_output(g, o);
            fit(g, &g->host_out[o], t ? &t->m : NULL, false, o, &fits); /* known once the op list ran */
        }
        GCR_TRY(fits);
        for (int o = 0; g->host_out && o < g->trace->n_outputs; o++)
            if (g->host_out[o].buf)
                GCR_TRY(gcr_tensor_to_host(gcr_graph_get_output(g, o), g->host_out[o].buf, g->host_out[o].bytes));
    }
    return GCR_OK;
}

void gcr_graph_staging_free(gcr_graph *g)
{
    gcr_ctx *ctx = g->ctx;
    for (int i = 0; g->host_in && i < g->n_inputs; i++)
        if (g->host_in[i].buf) ctx->be->host_free(ctx, g->host_in[i].buf);
    for (int o = 0; g->host_out && o < g->trace->n_outputs; o++)
        if (g->host_out[o].buf) ctx->be->host_free(ctx, g->host_out[o].buf);
    free(g->host_in);
    free(g->host_out);
    g->host_in = g->host_out = NULL;
}
