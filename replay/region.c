/* region.c — GCR_REGION: the first pass of a loop body captures; later passes run the body in
 * check mode, matching each op call against the recorded trace of the current variant (op,
 * params bytes, input handles, and external inputs by handle and dtype/shape/strides) and
 * returning the same handles, then replay that variant's graph at the region's end. A pass that
 * differs switches to another cached variant with the same prefix, or diverges: a new trace
 * copies the matched prefix (reusing its handles) and records the rest; at the end a new graph
 * is built for it (knobs.retrace) or its op list runs eagerly. A stale graph never runs.
 *
 * Limits: external tensors are matched by handle, so a body that creates its input tensors anew
 * each pass, or feeds a region output back in as the next pass's input (recurrent state),
 * re-traces every pass (correct, but never replays); write new data into the same tensors
 * instead. Leaving the body with break/return skips gcr_region_end and leaves the ctx in capture
 * or check mode. */
#include "graph.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct gcr_rvariant {
    gcr_ir *trace;        /* owner = the region; linked */
    gcr_graph *graph;     /* NULL: run eagerly (retrace=0 after the first variant) */
    uint64_t last_used;
    struct gcr_rvariant *next;
} gcr_rvariant;

typedef struct gcr_region gcr_region;
struct gcr_region {
    UT_hash_handle hh;
    char *name;
    gcr_ctx *ctx;
    gcr_rvariant *variants;
    gcr_rvariant *cur;    /* checked against now / last run */
    gcr_ir *open;         /* trace being recorded (capture mode) */
    int prefix_values;    /* values of `open` copied from an earlier trace */
    int cursor;           /* check mode: next node to match */
    int n_marks, cap_marks;
    gcr_tensor **marks;   /* gcr_graph_output calls of this pass */
    gcr_tensor handles;   /* sentinel of the list of every traced tensor the region made (owned;
                             stable across passes), chained through the handles' list links */
    uint64_t clock;
};

gcr_ir *gcr_region_open_trace(gcr_ctx *ctx) { return ctx->region ? ctx->region->open : NULL; }

static gcr_status push_ptr(gcr_ctx *ctx, gcr_tensor ***arr, int *n, int *cap, gcr_tensor *t)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        gcr_tensor **a = realloc(*arr, sizeof *a * (size_t)c);
        if (!a) return gcr_set_error(ctx, GCR_ERR_OOM, "region: out of host memory");
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = t;
    return GCR_OK;
}

/* ---------------------------------------------------------------- variants */

static void rvariant_free(gcr_rvariant *w)
{
    if (!w) return;
    gcr_graph_destroy(w->graph);
    gcr_ir_free(w->trace);
    free(w);
}

static int count_variants(const gcr_region *r)
{
    int n = 0;
    for (const gcr_rvariant *w = r->variants; w; w = w->next) n++;
    return n;
}

static void evict(gcr_region *r)
{
    int cap = r->ctx->knobs.graph_cache > 0 ? r->ctx->knobs.graph_cache : 1;
    while (count_variants(r) >= cap) {
        gcr_rvariant **old = NULL;
        for (gcr_rvariant **p = &r->variants; *p; p = &(*p)->next)
            if (!old || (*p)->last_used < (*old)->last_used) old = p;
        gcr_rvariant *w = *old;
        *old = w->next;
        if (r->cur == w) r->cur = NULL;
        gcr_info(r->ctx, "region %s: evicting its least recently used graph (cap %d)", r->name, cap);
        rvariant_free(w);
    }
}

static gcr_status run_variant(gcr_region *r, gcr_rvariant *w)
{
    w->last_used = ++r->clock;
    r->cur = w;
    if (w->graph) return gcr_graph_replay(w->graph);
    return gcr_ir_interpret(r->ctx, w->trace, NULL);
}

/* ---------------------------------------------------------------- matching */

static bool node_matches(const gcr_ir *tr, int i, const gcr_call *c)
{
    if (i >= tr->n_nodes) return false;
    const gcr_node *nd = &tr->nodes[i];
    if (nd->op != c->op || nd->n_in != c->n_in || memcmp(&nd->p, &c->p, sizeof nd->p)) return false;
    for (int k = 0; k < c->n_in; k++) {
        gcr_tensor *t = c->in[k];
        int v = nd->in[k];
        if (!t || v < 0) {
            if (t || v >= 0) return false;
            continue;
        }
        const gcr_value *x = &tr->values[v];
        if (x->kind == GCR_V_INPUT || x->kind == GCR_V_CONST) {
            if (x->ext != t || !gcr_meta_equal(&x->m, &t->m)) return false;
            if ((x->kind == GCR_V_CONST) != ((t->flags & GCR_TF_CONST) != 0)) return false;
        } else if (x->handle != t) {
            return false;
        }
    }
    return true;
}

/* w shares cur's first i nodes (it was derived from the same recorded prefix) */
static bool same_prefix(const gcr_ir *a, const gcr_ir *b, int i)
{
    if (a->n_nodes < i || b->n_nodes < i) return false;
    for (int j = 0; j < i; j++)
        if (a->values[a->nodes[j].out].handle != b->values[b->nodes[j].out].handle) return false;
    return true;
}

static int count_marked(const gcr_ir *tr)
{
    int n = 0;
    for (int v = 0; v < tr->n_values; v++) n += tr->values[v].marked;
    return n;
}

static bool marks_match(const gcr_region *r, const gcr_ir *tr)
{
    if (count_marked(tr) != r->n_marks) return false;
    for (int i = 0; i < r->n_marks; i++) {
        const gcr_tensor *t = r->marks[i];
        if (t->value < 0 || t->value >= tr->n_values || tr->values[t->value].handle != t || !tr->values[t->value].marked)
            return false;
    }
    return true;
}

/* The pass leaves variant cur at node i: record from here into a new trace with cur's prefix. */
static gcr_status diverge(gcr_region *r, int i)
{
    gcr_ctx *ctx = r->ctx;
    const gcr_ir *src = r->cur->trace;
    gcr_ir *nt = gcr_ir_copy(src);
    if (!nt) return ctx->status ? ctx->status : GCR_ERR_OOM;
    int pv = i == 0 ? 0 : src->nodes[i - 1].out + 1;
    nt->n_nodes = i;
    nt->n_values = pv;
    int ni = 0;
    for (int k = 0; k < nt->n_inputs; k++)
        if (nt->inputs[k] < pv) nt->inputs[ni++] = nt->inputs[k];
    nt->n_inputs = ni;
    for (int v = 0; v < pv; v++) nt->values[v].marked = 0;
    for (int m = 0; m < r->n_marks; m++)
        if (r->marks[m]->value < pv) nt->values[r->marks[m]->value].marked = 1;
    gcr_info(ctx, "region %s: pass differs from the recorded trace at op %d; re-tracing", r->name, i);
    r->open = nt;
    r->prefix_values = pv;
    ctx->mode = GCR_MODE_CAPTURE;
    return GCR_OK;
}

gcr_tensor *gcr_region_check(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out)
{
    gcr_region *r = ctx->region;
    if (!r || !r->cur) {
        gcr_set_error(ctx, GCR_ERR_INTERNAL, "%s: check mode outside a region", gcr_op_table[c->op].name);
        return NULL;
    }
    int i = r->cursor;
    if (node_matches(r->cur->trace, i, c)) {
        r->cursor++;
        return r->cur->trace->values[r->cur->trace->nodes[i].out].handle;
    }
    for (gcr_rvariant *w = r->variants; w; w = w->next) {
        if (w == r->cur || !same_prefix(w->trace, r->cur->trace, i) || !node_matches(w->trace, i, c)) continue;
        r->cur = w;
        r->cursor++;
        return w->trace->values[w->trace->nodes[i].out].handle;
    }
    if (diverge(r, i) != GCR_OK) return NULL;
    return gcr_trace_record_in(r->open, c, out);
}

gcr_status gcr_region_mark_output(gcr_ctx *ctx, gcr_tensor *t)
{
    gcr_region *r = ctx->region;
    GCR_CHECK(ctx, r && r->cur, GCR_ERR_INTERNAL, "graph_output: check mode outside a region");
    const gcr_ir *tr = r->cur->trace;
    GCR_CHECK(ctx, (t->flags & GCR_TF_TRACED) && t->trace == r && t->value >= 0 && t->value < tr->n_values &&
                       tr->values[t->value].handle == t,
              GCR_ERR_CAPTURE, "graph_output: the tensor is not a result of region %s", r->name);
    GCR_TRY(push_ptr(ctx, &r->marks, &r->n_marks, &r->cap_marks, t));
    if (tr->values[t->value].marked) return GCR_OK;
    GCR_TRY(diverge(r, r->cursor));
    r->open->values[t->value].marked = 1;
    return GCR_OK;
}

/* ---------------------------------------------------------------- begin / end */

/* A new region named name in ctx's table, or NULL with GCR_ERR_OOM recorded. */
static gcr_region *region_new(gcr_ctx *ctx, const char *name)
{
    gcr_region *r = calloc(1, sizeof *r);
    if (r) r->name = strdup(name);
    if (r && r->name) {
        r->ctx = ctx;
        r->handles.next = r->handles.prev = &r->handles;
        HASH_ADD_KEYPTR(hh, ctx->regions, r->name, strlen(r->name), r);
        if (!GCR_HASH_ADD_FAILED(r)) return r;
    }
    if (r) free(r->name);
    free(r);
    gcr_set_error(ctx, GCR_ERR_OOM, "region %s: out of host memory", name);
    return NULL;
}

int gcr_region_begin(gcr_ctx *ctx, const char *name)
{
    if (!ctx) return 0;
    if (!name) {
        gcr_set_error(ctx, GCR_ERR_INVALID, "region_begin: NULL name");
        return 0;
    }
    if (ctx->mode != GCR_MODE_EAGER) {
        gcr_set_error(ctx, GCR_ERR_CAPTURE, "region %s: begins inside a capture or another region (they do not nest)",
                      name);
        return 0;
    }
    gcr_region *r = NULL;
    HASH_FIND_STR(ctx->regions, name, r);
    if (!r && !(r = region_new(ctx, name))) return 0;
    r->n_marks = 0;
    r->cursor = 0;
    if (!r->cur) {
        r->open = gcr_ir_new(ctx, r);
        if (!r->open) return 0;
        r->prefix_values = 0;
        ctx->region = r;
        ctx->mode = GCR_MODE_CAPTURE;
        return 1;
    }
    if (!ctx->knobs.guards) { /* unchecked: the last variant replays, the body is skipped */
        run_variant(r, r->cur);
        return 0;
    }
    ctx->region = r;
    ctx->mode = GCR_MODE_CHECK;
    return 1;
}

/* The region takes the handles trace tr made. Traced handles are on no other list, so chaining
 * them never allocates (nothing can leak here) and gcr_tensor_destroy unlinks them. */
static void adopt_handles(gcr_region *r, gcr_ir *tr)
{
    for (int v = r->prefix_values; v < tr->n_values; v++) {
        gcr_tensor *t = tr->values[v].handle;
        if (!t) continue;
        t->prev = r->handles.prev;
        t->next = &r->handles;
        r->handles.prev->next = t;
        r->handles.prev = t;
    }
}

/* capture (or diverged) pass: build, or interpret, the new trace */
static gcr_status finish_capture(gcr_region *r)
{
    gcr_ctx *ctx = r->ctx;
    gcr_ir *tr = r->open;
    r->open = NULL;
    ctx->mode = GCR_MODE_EAGER;
    adopt_handles(r, tr);
    if (tr->failed) {
        gcr_status s = tr->failed;
        gcr_ir_free(tr);
        return gcr_set_error(ctx, s, "region %s: an op failed while tracing; nothing ran", r->name);
    }
    gcr_status s = gcr_ir_link(tr);
    gcr_rvariant *w = s == GCR_OK ? calloc(1, sizeof *w) : NULL;
    if (!w) {
        gcr_ir_free(tr);
        return s != GCR_OK ? s : gcr_set_error(ctx, GCR_ERR_OOM, "region %s: out of host memory", r->name);
    }
    bool first = r->variants == NULL;
    evict(r);
    w->trace = tr;
    w->next = r->variants;
    r->variants = w;
    w->last_used = ++r->clock;
    r->cur = w;
    if (first || ctx->knobs.retrace) {
        s = gcr_graph_from_trace(ctx, tr, false, &w->graph);
        if (s == GCR_OK) {
            w->graph->region = r;
        } else { /* no graph: the next pass traces again rather than keep a variant that cannot run */
            r->variants = w->next;
            r->cur = NULL;
            rvariant_free(w);
        }
        return s;
    }
    gcr_info(ctx, "region %s: running the new trace eagerly (retrace=0)", r->name);
    return gcr_ir_interpret(ctx, tr, NULL);
}

int gcr_region_end(gcr_ctx *ctx)
{
    if (!ctx) return 0;
    gcr_region *r = ctx->region;
    if (!r) return 0;
    if (ctx->mode == GCR_MODE_CHECK) {
        int i = r->cursor;
        gcr_rvariant *hit = NULL;
        if (r->cur->trace->n_nodes == i && marks_match(r, r->cur->trace)) hit = r->cur;
        for (gcr_rvariant *w = r->variants; w && !hit; w = w->next)
            if (w->trace->n_nodes == i && same_prefix(w->trace, r->cur->trace, i) && marks_match(r, w->trace)) hit = w;
        if (hit) {
            ctx->mode = GCR_MODE_EAGER;
            ctx->region = NULL;
            run_variant(r, hit);
            return 0;
        }
        if (diverge(r, i) != GCR_OK) {
            ctx->mode = GCR_MODE_EAGER;
            ctx->region = NULL;
            return 0;
        }
    }
    if (ctx->mode == GCR_MODE_CAPTURE && r->open) finish_capture(r);
    ctx->mode = GCR_MODE_EAGER;
    ctx->region = NULL;
    return 0;
}

gcr_graph *gcr_region_graph(gcr_ctx *ctx, const char *name)
{
    if (!ctx || !name) return NULL;
    gcr_region *r = NULL;
    HASH_FIND_STR(ctx->regions, name, r);
    return r && r->cur ? r->cur->graph : NULL;
}

void gcr_regions_free(gcr_ctx *ctx)
{
    gcr_region *r, *tmp;
    HASH_ITER(hh, ctx->regions, r, tmp)
    {
        HASH_DEL(ctx->regions, r);
        if (r->open) {
            adopt_handles(r, r->open);
            gcr_ir_free(r->open);
        }
        while (r->variants) {
            gcr_rvariant *w = r->variants;
            r->variants = w->next;
            rvariant_free(w);
        }
        while (r->handles.next != &r->handles) gcr_tensor_destroy(r->handles.next);
        free(r->marks);
        free(r->name);
        free(r);
    }
    ctx->region = NULL;
}
