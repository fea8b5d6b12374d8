/* sigcache.c — the guards and the signature cache of a graph: each run reads its inputs' metas,
 * finds the variant built for that signature (by hash, then compared in full), or builds one
 * (re-specialises; retrace=0: runs the op list eagerly instead), runs it, and evicts the least
 * recently used variants beyond the cache's cap. A signature the recorded graph cannot take (a
 * view the trace recorded, such as a reshape of a slice that was contiguous only because its
 * dims were 1, no longer a view for the new shapes) runs the op list eagerly, as the API would
 * run it; where that fails too, its error is the run's and nothing changes. */
#include "graph.h"

uint64_t gcr_sig_hash(const gcr_meta *m, int n)
{
    uint64_t h = 1469598103934665603ull;
#define MIX(x) do { h ^= (uint64_t)(x); h *= 1099511628211ull; } while (0)
    for (int i = 0; i < n; i++) {
        MIX(m[i].dtype);
        MIX(m[i].ndim);
        for (int d = 0; d < m[i].ndim; d++) {
            MIX(m[i].shape[d]);
            MIX(m[i].strides[d]);
        }
    }
#undef MIX
    return h;
}

int gcr_cache_cap(const gcr_ctx *ctx) { return ctx->knobs.graph_cache > 0 ? ctx->knobs.graph_cache : 1; }

static void drop(gcr_graph *g, gcr_variant *v)
{
    HASH_DEL(g->variants, v);
    gcr_lru_remove(&g->lru, &v->lru);
    if (g->cur == v) g->cur = NULL;
    gcr_variant_free(g, v);
}

void gcr_sigcache_clear(gcr_graph *g)
{
    gcr_variant *v, *tmp;
    HASH_ITER(hh, g->variants, v, tmp) drop(g, v);
}

static gcr_status variant_run(gcr_graph *g, gcr_variant *v)
{
    gcr_lru_touch(&g->lru, &v->lru);
    gcr_variant_refresh_ptrs(g, v);
    GCR_TRY(gcr_variant_stage(g, v));
    GCR_TRY(gcr_variant_unalias_inputs(g, v));
    v->job.set = gcr_graph_settings(g);
    GCR_TRY(v->ex->run(&v->job));
    g->cur = v;
    return gcr_variant_bind_outputs(g, v);
}

/* Evicts least recently used variants, never keep, until the cache holds at most its cap. */
static void evict_lru(gcr_graph *g, gcr_variant *keep)
{
    int cap = gcr_cache_cap(g->ctx);
    for (gcr_lru_link *old; (old = gcr_lru_victim(&g->lru, cap, &keep->lru));) {
        gcr_info(g->ctx, "replay: evicting the least recently used variant (%d cached, cap %d)", g->lru.count, cap);
        drop(g, GCR_LRU_ITEM(old, gcr_variant, lru));
    }
}

/* the recorded op list on the current inputs, eagerly, with the host staging's copies by hand */
static gcr_status run_eager(gcr_graph *g)
{
    GCR_TRY(gcr_graph_stage_eager(g, true));
    GCR_TRY(gcr_ir_interpret(g->ctx, g->trace, g->in_t));
    return gcr_graph_stage_eager(g, false);
}

gcr_status gcr_graph_run(gcr_graph *g)
{
    gcr_ctx *ctx = g->ctx;
    gcr_meta *sig = g->sig_now;
    for (int i = 0; i < g->n_inputs; i++) {
        gcr_tensor *t = g->in_t[i];
        char b[96];
        GCR_CHECK(ctx, t && t->ctx == ctx, GCR_ERR_INVALID, "replay: input %d is missing or on another context", i);
        GCR_CHECK(ctx, t->st, GCR_ERR_CAPTURE, "replay: input %d (%s) has no data (a traced tensor)", i,
                  gcr_meta_str(&t->m, b, sizeof b));
        sig[i] = t->m;
    }
    if (g->cur && !ctx->knobs.guards) return variant_run(g, g->cur);
    uint64_t key = gcr_sig_hash(sig, g->n_inputs);
    gcr_variant *v = NULL;
    if (g->cur && g->cur->key == key) v = g->cur;
    else HASH_FIND(hh, g->variants, &key, sizeof key, v);
    if (v) {
        for (int i = 0; i < g->n_inputs && v; i++)
            if (!gcr_meta_equal(&v->sig[i], &sig[i])) v = NULL; /* hash collision: treat as new */
    }
    if (v) return variant_run(g, v);
    if (g->cur && !ctx->knobs.retrace) {
        gcr_info(ctx, "replay: input signature changed; running the op list eagerly (retrace=0)");
        return run_eager(g);
    }
    if (g->cur) gcr_info(ctx, "replay: input signature changed; re-specialising the graph");
    /* The new variant is built and run before anything is evicted: a failed build or run leaves
     * the cache, and the outputs bound to the current variant's buffers, as they were. */
    gcr_status before = ctx->status;
    gcr_status bs = gcr_variant_build(g, sig, &v);
    if (bs == GCR_ERR_SHAPE && g->cur) { /* the shapes do not fit the recorded graph: the API's way */
        gcr_info(ctx, "replay: the graph cannot take the new signature (%s); running the op list eagerly",
                 before == GCR_OK ? ctx->err : gcr_status_name(bs));
        if (before == GCR_OK) gcr_ctx_clear_error(ctx); /* only the build's error: an earlier one is sticky */
        return run_eager(g);
    }
    GCR_TRY(bs);
    HASH_ADD(hh, g->variants, key, sizeof v->key, v);
    if (GCR_HASH_ADD_FAILED(v)) {
        gcr_variant_free(g, v);
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory caching the graph's new variant");
    }
    gcr_lru_add(&g->lru, &v->lru);
    gcr_status s = variant_run(g, v);
    if (g->cur != v) { /* the run failed before binding any output */
        drop(g, v);
        return s;
    }
    gcr_variant *it, *tmp;
    HASH_ITER(hh, g->variants, it, tmp)
    if (it != v && it->key == v->key) drop(g, it); /* collision with another signature: the newer wins the slot */
    evict_lru(g, v);
    return s;
}

