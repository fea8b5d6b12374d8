/* graph.c — graphs and their variants: building a variant for an input signature (optimize,
 * plan, allocate, executor build with the unfused fallback), guards and the LRU variant cache,
 * replay, input rebinding, output binding, stats and destruction. */
#include "graph.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef GCR_HAVE_CUDA /* CPU-only builds; with CUDA, replay/cuda_exec.c defines it */
const gcr_executor *gcr_cuda_executor = NULL;
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t sig_hash(const gcr_meta *m, int n)
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

static const gcr_executor *pick_executor(gcr_ctx *ctx)
{
    /* testing only: GCR_TEST_EXECUTOR=generic runs the device-independent executor anywhere */
    const char *force = getenv("GCR_TEST_EXECUTOR");
    if (force && !strcmp(force, "generic")) return &gcr_generic_executor;
    if (ctx->device == GCR_DEVICE_CPU) return &gcr_cpu_executor;
    return gcr_cuda_executor ? gcr_cuda_executor : &gcr_generic_executor;
}

/* ---------------------------------------------------------------- bound tensors */

gcr_tensor *gcr_variant_bound(gcr_variant *v, int value)
{
    gcr_tensor *t = v->bound[value];
    const gcr_value *x = &v->ir->values[value];
    if (!t) {
        t = gcr_tensor_shell(v->ir->ctx, &x->m);
        if (!t) return NULL;
        if (gcr_tensor_bind(t, v->ptr[value], x->bytes) != GCR_OK) {
            gcr_tensor_destroy(t);
            return NULL;
        }
        v->bound[value] = t;
    }
    t->st->data = v->ptr[value];
    return t;
}

gcr_status gcr_variant_call(gcr_variant *v, const gcr_node *nd, int x0, gcr_call *c)
{
    memset(c, 0, sizeof *c);
    c->op = nd->op;
    c->p = nd->p;
    c->n_in = nd->n_in;
    for (int k = 0; k < nd->n_in; k++) {
        int x = k == 0 && x0 >= 0 ? x0 : nd->in[k];
        if (x < 0) continue;
        c->in[k] = gcr_variant_bound(v, x);
        if (!c->in[k]) return v->ir->ctx->status ? v->ir->ctx->status : GCR_ERR_OOM;
    }
    return GCR_OK;
}

gcr_status gcr_variant_run_node(gcr_graph *g, gcr_variant *v, int node)
{
    gcr_ctx *ctx = g->ctx;
    const gcr_node *nd = &v->ir->nodes[node];
    if (gcr_meta_numel(&v->ir->values[nd->out].m) == 0) return GCR_OK;
    gcr_call c;
    GCR_TRY(gcr_variant_call(v, nd, -1, &c));
    gcr_tensor *out = gcr_variant_bound(v, nd->out);
    if (!out) return ctx->status ? ctx->status : GCR_ERR_OOM;
    gcr_status s = ctx->be->run(ctx, &c, out);
    if (s != GCR_OK) {
        char b[96];
        gcr_set_error(ctx, s, "replay: %s (%s) failed on %s", gcr_op_table[nd->op].name,
                      gcr_meta_str(&v->ir->values[nd->out].m, b, sizeof b), ctx->be->name);
    }
    return s;
}

/* ---------------------------------------------------------------- variants */

/* Data pointers of values read from outside (inputs may move between replays) and of views. */
static void refresh_ptrs(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int i = 0; i < ir->n_inputs; i++) v->ptr[ir->inputs[i]] = gcr_tensor_data(g->in_t[i]);
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->kind == GCR_V_CONST && val->ext) v->ptr[x] = gcr_tensor_data(val->ext);
    }
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->buf == GCR_BUF_ALIAS && v->ptr[val->root])
            v->ptr[x] = (char *)v->ptr[val->root] + val->offset * (int64_t)gcr_dtype_size(val->m.dtype);
    }
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

static void variant_free(gcr_graph *g, gcr_variant *v)
{
    if (!v) return;
    gcr_ctx *ctx = g->ctx;
    if (v->ex && v->ex->destroy) v->ex->destroy(g, v);
    if (v->ir) {
        for (int x = 0; x < v->ir->n_values; x++) {
            if (v->bound && v->bound[x]) gcr_tensor_destroy(v->bound[x]);
            if (v->outbuf && v->outbuf[x]) free_output(ctx, v, x);
        }
    }
    if (v->arena) ctx->be->free(ctx, v->arena, v->ir->arena_bytes);
    free(v->bound);
    free(v->outbuf);
    free(v->wrap);
    free(v->ptr);
    free(v->sig);
    gcr_ir_free(v->ir);
    free(v);
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
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->buf == GCR_BUF_ARENA) v->ptr[x] = (char *)v->arena + val->buf_off;
        if (val->buf == GCR_BUF_OUTPUT) {
            gcr_status s = ctx->be->alloc(ctx, val->bytes ? val->bytes : 1, &v->outbuf[x]);
            GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate a %zu-byte output on %s", val->bytes, ctx->be->name);
            v->ptr[x] = v->outbuf[x];
        }
    }
    refresh_ptrs(g, v);
    return GCR_OK;
}

/* Builds the variant for input metas sig; a fused kernel the executor cannot build is split
 * into eager kernels and the variant built again (each group is split once; a kernel that
 * still fails is an error). */
static gcr_status variant_build(gcr_graph *g, const gcr_meta *sig, gcr_variant **out)
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
        v->key = sig_hash(sig, g->n_inputs);
        for (int i = 0; i < v->ir->n_nodes; i++) v->ir->nodes[i].nofuse = nofuse[i];
        if (changed && (s = gcr_ir_reinfer(v->ir, sig)) != GCR_OK) break;
        if ((s = gcr_ir_optimize(v->ir)) != GCR_OK) break;
        if ((s = variant_alloc(g, v)) != GCR_OK) break;
        v->ex = pick_executor(ctx);
        int failed = -1;
        gcr_status saved = ctx->status;
        s = v->ex->build(g, v, &failed);
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
            variant_free(g, v);
            v = NULL;
            continue;
        }
        break;
    }
    free(nofuse);
    if (s != GCR_OK) {
        variant_free(g, v);
        return s;
    }
    v->build_seconds = now_s() - t0;
    g->stats.compile_seconds += v->build_seconds;
    g->stats.variants++;
    gcr_dump_variant(g, v);
    *out = v;
    return GCR_OK;
}

/* The storage that outputs rooted at value x share, with the element offset of x's first element
 * in it (NULL with OOM recorded): x's output buffer, lent by v (made at the first bind), or the
 * storage of the external tensor that x is. */
static gcr_storage *root_storage(gcr_graph *g, gcr_variant *v, int x, int64_t *off)
{
    const gcr_value *val = &v->ir->values[x];
    const gcr_tensor *src = val->kind == GCR_V_CONST ? val->ext : NULL;
    for (int i = 0; val->kind == GCR_V_INPUT && i < v->ir->n_inputs && !src; i++)
        if (v->ir->inputs[i] == x) src = g->in_t[i];
    *off = src ? src->offset : 0;
    if (src) return src->st;
    if (!v->outbuf[x]) {
        gcr_set_error(g->ctx, GCR_ERR_INTERNAL, "replay: output root v%d has no buffer", x);
        return NULL;
    }
    if (!v->wrap[x]) {
        gcr_storage *st = calloc(1, sizeof *st);
        if (!st) {
            gcr_set_error(g->ctx, GCR_ERR_OOM, "replay: out of host memory binding outputs");
            return NULL;
        }
        st->refs = 1;
        st->data = v->outbuf[x];
        st->bytes = val->bytes;
        st->borrowed = true;
        v->wrap[x] = st;
    }
    return v->wrap[x];
}

gcr_status gcr_variant_bind_outputs(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int o = 0; o < ir->n_outputs; o++) {
        const gcr_value *val = &ir->values[ir->outputs[o]];
        gcr_tensor *h = val->handle;
        if (!h) continue;
        int64_t off;
        gcr_storage *st = root_storage(g, v, val->root, &off);
        if (!st) return g->ctx->status;
        h->m = val->m;
        if (h->st != st) gcr_tensor_share(h, st, off + val->offset);
        else h->offset = off + val->offset;
    }
    return GCR_OK;
}

static gcr_status variant_run(gcr_graph *g, gcr_variant *v)
{
    v->last_used = ++g->clock;
    refresh_ptrs(g, v);
    GCR_TRY(v->ex->run(g, v));
    g->cur = v;
    return gcr_variant_bind_outputs(g, v);
}

int gcr_cache_cap(const gcr_ctx *ctx) { return ctx->knobs.graph_cache > 0 ? ctx->knobs.graph_cache : 1; }

/* Evicts least recently used variants, never keep, until the cache holds at most its cap. */
static void evict_lru(gcr_graph *g, const gcr_variant *keep)
{
    int cap = gcr_cache_cap(g->ctx);
    while ((int)HASH_COUNT(g->variants) > cap) {
        gcr_variant *old = NULL, *it, *tmp;
        HASH_ITER(hh, g->variants, it, tmp)
            if (it != keep && (!old || it->last_used < old->last_used)) old = it;
        if (!old) break;
        gcr_info(g->ctx, "replay: evicting the least recently used variant (%d cached, cap %d)",
                 (int)HASH_COUNT(g->variants), cap);
        HASH_DEL(g->variants, old);
        if (g->cur == old) g->cur = NULL;
        variant_free(g, old);
    }
}

static gcr_status graph_run(gcr_graph *g)
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
    uint64_t key = sig_hash(sig, g->n_inputs);
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
        return gcr_ir_interpret(ctx, g->trace, g->in_t);
    }
    if (g->cur) gcr_info(ctx, "replay: input signature changed; re-specialising the graph");
    /* The new variant is built and run before anything is evicted: a failed build or run leaves
     * the cache, and the outputs bound to the current variant's buffers, as they were. */
    GCR_TRY(variant_build(g, sig, &v));
    HASH_ADD(hh, g->variants, key, sizeof v->key, v);
    if (GCR_HASH_ADD_FAILED(v)) {
        variant_free(g, v);
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory caching the graph's new variant");
    }
    gcr_status s = variant_run(g, v);
    if (g->cur != v) { /* the run failed before binding any output */
        HASH_DEL(g->variants, v);
        variant_free(g, v);
        return s;
    }
    gcr_variant *it, *tmp;
    HASH_ITER(hh, g->variants, it, tmp)
    if (it != v && it->key == v->key) { /* collision with another signature: the newer wins the slot */
        HASH_DEL(g->variants, it);
        variant_free(g, it);
    }
    evict_lru(g, v);
    return s;
}

gcr_status gcr_graph_run(gcr_graph *g)
{
    /* kernels are picked (and hooked programs found in the module cache) at every plain-launch
     * replay and graph re-capture: they must see the numeric mode the graph was captured with,
     * not a knobs.tf32 changed since (which would switch its math and compile on the hot path) */
    int now = g->ctx->knobs.tf32;
    g->ctx->knobs.tf32 = g->tf32;
    gcr_status s = graph_run(g);
    g->ctx->knobs.tf32 = now;
    return s;
}

/* ---------------------------------------------------------------- graphs */

gcr_status gcr_graph_from_trace(gcr_ctx *ctx, gcr_ir *trace, bool owns_handles, gcr_graph **out)
{
    *out = NULL;
    gcr_graph *g = calloc(1, sizeof *g);
    if (!g) {
        if (owns_handles) gcr_trace_free(trace);
        return gcr_set_error(ctx, GCR_ERR_OOM, "capture_end: out of host memory");
    }
    g->ctx = ctx;
    g->tf32 = ctx->knobs.tf32;
    g->trace = trace;
    g->owns_handles = owns_handles;
    g->n_inputs = trace->n_inputs;
    g->in_t = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *g->in_t);
    g->sig_now = calloc((size_t)(g->n_inputs ? g->n_inputs : 1), sizeof *g->sig_now);
    gcr_status s = g->in_t && g->sig_now ? gcr_ir_link(trace) : gcr_set_error(ctx, GCR_ERR_OOM, "capture_end: out of host memory");
    for (int i = 0; i < g->n_inputs && s == GCR_OK; i++) g->in_t[i] = trace->values[trace->inputs[i]].ext;
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
        if (!owns_handles) g->trace = NULL; /* the region keeps its trace */
        gcr_graph_free(g);
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
        out->kernels = v->ir->n_kernels;
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
    gcr_variant *v, *tmp;
    HASH_ITER(hh, g->variants, v, tmp)
    {
        HASH_DEL(g->variants, v);
        variant_free(g, v);
    }
    gcr_capstate *cs = gcr_capstate_of(g->ctx);
    if (cs && (cs->graphs == g || g->prev)) {
        if (g->prev) g->prev->next = g->next;
        else cs->graphs = g->next;
        if (g->next) g->next->prev = g->prev;
    }
    if (g->owns_handles) gcr_trace_free(g->trace);
    free(g->in_t);
    free(g->sig_now);
    free(g->prof);
    free(g);
}
