/* variant.c — building a graph's variant for one input signature: specialise the trace, fuse and
 * plan it, allocate its arena and output buffers, and build it with the executor, splitting a fused
 * kernel that fails to build into eager kernels and trying again; and freeing a variant. */
#include "graph.h"
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Output buffer x outlives its variant while a tensor still shares its storage (an eager view of
 * an output, a region result that views a fed-back output): the storage then owns the buffer and
 * frees it with its last user. */
static void free_output(gcr_ctx *ctx, gcr_variant *v, int x)
{
    gcr_storage *st = v->wrap ? v->wrap[x] : NULL;
    if (st && st->refs > 1) {
        st->borrowed = false;
        v->outbuf[x] = NULL;
    }
    gcr_storage_release(ctx, st);
    if (v->outbuf[x]) ctx->be->free(ctx, v->outbuf[x], v->ir->values[x].bytes);
}

void gcr_variant_free(gcr_graph *g, gcr_variant *v)
{
    if (!v) return;
    gcr_ctx *ctx = g->ctx;
    if (v->ex && v->ex->destroy) v->ex->destroy(&v->job);
    gcr_variant_stage_free(g, v);
    if (v->ir) {
        for (int x = 0; x < v->ir->n_values; x++) {
            if (v->bound && v->bound[x]) gcr_tensor_destroy(v->bound[x]);
            if (v->outbuf && v->outbuf[x]) free_output(ctx, v, x);
        }
    }
    for (int i = 0; v->incopy && v->ir && i < v->ir->n_inputs; i++)
        if (v->incopy[i].buf) ctx->be->free(ctx, v->incopy[i].buf, v->incopy[i].bytes);
    free(v->incopy);
    if (v->arena) ctx->be->free(ctx, v->arena, v->ir->arena_bytes);
    if (v->consts) ctx->be->free(ctx, v->consts, v->consts_bytes);
    free(v->cptr);
    free(v->bound);
    free(v->outbuf);
    free(v->wrap);
    free(v->ptr);
    free(v->sig);
    gcr_ir_free(v->ir);
    free(v);
}

/* knobs.l2_persist: every constant a kernel reads copied into one device buffer (256-byte aligned
 * slots), so one L2 access-policy window covers the variant's weights; views of a constant follow
 * their root. A device copy of what gcr_tensor_set_const froze for the graph anyway. */
static gcr_status pack_consts(gcr_graph *g, gcr_variant *v)
{
    gcr_ctx *ctx = g->ctx;
    const gcr_ir *ir = v->ir;
    size_t total = 0;
    for (int x = 0; x < ir->n_values; x++) {
        const gcr_value *val = &ir->values[x];
        if (val->kind == GCR_V_CONST && val->ext && val->n_cons > 0) total += (val->bytes + 255) & ~(size_t)255;
    }
    if (total == 0) return GCR_OK;
    v->cptr = calloc((size_t)ir->n_values + 1, sizeof *v->cptr);
    GCR_CHECK(ctx, v->cptr, GCR_ERR_OOM, "replay: out of host memory");
    gcr_status s = ctx->be->alloc(ctx, total, &v->consts);
    GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes for the packed constants (GCR_L2_PERSIST)", total);
    v->consts_bytes = total;
    size_t off = 0;
    for (int x = 0; x < ir->n_values; x++) {
        const gcr_value *val = &ir->values[x];
        if (!(val->kind == GCR_V_CONST && val->ext && val->n_cons > 0)) continue;
        v->cptr[x] = (char *)v->consts + off;
        GCR_TRY(ctx->be->copy(ctx, v->cptr[x], gcr_tensor_data(val->ext), val->bytes, GCR_COPY_D2D));
        off += (val->bytes + 255) & ~(size_t)255;
    }
    return GCR_OK;
}

static gcr_status variant_alloc(gcr_graph *g, gcr_variant *v)
{
    gcr_ctx *ctx = g->ctx;
    gcr_ir *ir = v->ir;
    size_t n = (size_t)ir->n_values + 1;
    v->ptr = calloc(n, sizeof *v->ptr);
    v->outbuf = calloc(n, sizeof *v->outbuf);
    v->wrap = calloc(n, sizeof *v->wrap);
    v->bound = calloc(n, sizeof *v->bound);
    if (!v->ptr || !v->outbuf || !v->wrap || !v->bound)
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    if (ir->arena_bytes) {
        gcr_status s = ctx->be->alloc(ctx, ir->arena_bytes, &v->arena);
        GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate the %zu-byte arena on %s", ir->arena_bytes, ctx->be->name);
    }
    if (ctx->knobs.l2_persist > 0 && ctx->device == GCR_DEVICE_CUDA) GCR_TRY(pack_consts(g, v));
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->buf == GCR_BUF_ARENA) v->ptr[x] = (char *)v->arena + val->buf_off;
        if (val->buf == GCR_BUF_OUTPUT) {
            gcr_status s = ctx->be->alloc(ctx, val->bytes ? val->bytes : 1, &v->outbuf[x]);
            GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate a %zu-byte output on %s", val->bytes, ctx->be->name);
            v->ptr[x] = v->outbuf[x];
        }
    }
    gcr_variant_refresh_ptrs(g, v);
    return GCR_OK;
}

gcr_status gcr_variant_build(gcr_graph *g, const gcr_meta *sig, gcr_variant **out)
{
    gcr_ctx *ctx = g->ctx;
    double t0 = now_s();
    char *nofuse = calloc((size_t)g->trace->n_nodes + 1, 1);
    if (!nofuse) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    gcr_status s = GCR_OK;
    gcr_variant *v = NULL;
    for (int attempt = 0; attempt <= g->trace->n_nodes; attempt++) {
        v = calloc(1, sizeof *v);
        if (!v) { s = gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory"); break; }
        v->n_sig = g->n_inputs;
        v->sig = malloc(sizeof *v->sig * (size_t)(g->n_inputs ? g->n_inputs : 1));
        v->ir = gcr_ir_copy(g->trace);
        if (!v->sig || !v->ir) {
            s = gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory specialising the graph");
            break;
        }
        bool changed = false;
        for (int i = 0; i < g->n_inputs; i++) {
            v->sig[i] = sig[i];
            if (!gcr_meta_equal(&v->ir->values[v->ir->inputs[i]].m, &sig[i])) changed = true;
        }
        v->key = gcr_sig_hash(sig, g->n_inputs);
        for (int i = 0; i < v->ir->n_nodes; i++) v->ir->nodes[i].nofuse = nofuse[i];
        if (changed && (s = gcr_ir_reinfer(v->ir, sig)) != GCR_OK) break;
        if ((s = gcr_ir_optimize(v->ir)) != GCR_OK) break;
        if ((s = variant_alloc(g, v)) != GCR_OK) break;
        v->ex = gcr_exec_pick(ctx);
        v->job = (gcr_exec_job){.ctx = ctx, .ir = v->ir, .ptr = v->ptr, .bound = v->bound, .key = v->key,
                                .set = gcr_graph_settings(g), .persist = v->consts, .persist_bytes = v->consts_bytes};
        int failed = -1;
        gcr_status saved = ctx->status;
        s = v->ex->build(&v->job, &failed);
        const gcr_kernel *K = failed >= 0 && failed < v->ir->n_kernels ? &v->ir->kernels[failed] : NULL;
        bool fresh = K && K->type == GCR_K_FUSED;
        for (int i = 0; fresh && i < K->n_nodes; i++)
            if (K->nodes[i] < g->trace->n_nodes && nofuse[K->nodes[i]]) fresh = false;
        if (s == GCR_ERR_COMPILE && fresh) {
            gcr_progress(ctx, "fused kernel %s failed to build (%s); running its %d ops unfused", K->name,
                         ctx->err, K->n_nodes);
            for (int i = 0; i < K->n_nodes; i++)
                if (K->nodes[i] < g->trace->n_nodes) nofuse[K->nodes[i]] = 1;
            if (saved == GCR_OK) gcr_ctx_clear_error(ctx);
            gcr_variant_free(g, v);
            v = NULL;
            continue;
        }
        break;
    }
    free(nofuse);
    if (s != GCR_OK) {
        gcr_variant_free(g, v);
        return s;
    }
    v->build_seconds = now_s() - t0;
    g->stats.compile_seconds += v->build_seconds;
    g->stats.variants++;
    gcr_dump_variant(g, v);
    *out = v;
    return GCR_OK;
}
