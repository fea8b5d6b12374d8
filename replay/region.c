/* region.c — GCR_REGION: the first pass of a loop body captures; later passes run the body in
 * check mode, matching each op call against the current cache entry's recorded trace (op,
 * params bytes, input handles, and external inputs by handle and dtype/shape/strides) and
 * returning the same handles, then replay that entry's graph at the region's end. A pass that
 * differs switches to another cached entry with the same prefix, or diverges: a new trace
 * copies the matched prefix (reusing its handles) and records the rest; at the end a new graph
 * is built for it (knobs.retrace) or its op list runs eagerly. A stale graph never runs. A pass
 * in which an op (or any call) failed runs nothing.
 *
 * The region's cache holds ENTRIES, one per distinct pass: a recorded trace and the graph built
 * from it (not to be confused with a graph's variants, one per input signature, graph.h).
 *
 * What handles hold: only the outputs of the entry that ran last ("bound") hold data; when
 * another entry runs, the old one's outputs that the new one does not output are unbound, so
 * a tensor never shows an earlier pass's data. A new entry is built and run before the least
 * recently used one is evicted, so a pass may read the previous pass's outputs (recurrent state)
 * whatever the cache size. Handles live on the region's list while a cached entry's trace
 * holds them (as a value, or as an external input); the others (their entry was evicted, or
 * their pass failed) are retired: unbound, value -1, and freed after graph_cache further
 * retirements, so what a region keeps is bounded by its cache whatever the input pattern.
 *
 * Limits: external tensors are matched by handle, so a body that creates its input tensors anew
 * each pass, or feeds a region output back in as the next pass's input (recurrent state),
 * re-traces every pass (correct, but never replays); write new data into the same tensors
 * instead. Leaving the body with break/return skips gcr_region_end and leaves the ctx in capture
 * or check mode. */
#include "graph.h"
#include <stdio.h>
#include <stdlib.h>

/* one entry of a region's cache: a distinct pass of the body */
typedef struct gcr_rentry {
    gcr_ir *trace;        /* owner = the region; linked */
    gcr_graph *graph;     /* NULL: run eagerly (retrace=0 after the first entry) */
    gcr_lru_link lru;     /* in the region's cache */
} gcr_rentry;

#define ENTRY(p) GCR_LRU_ITEM(p, gcr_rentry, lru)

typedef struct gcr_region gcr_region;
struct gcr_region {
    UT_hash_handle hh;
    char *name;
    gcr_ctx *ctx;
    gcr_lru entries;      /* the cache, most recently run first */
    gcr_rentry *cur;      /* checked against now / last run */
    gcr_rentry *ran;      /* run last (a failed pass puts cur back to it), or NULL */
    gcr_rentry *bound;    /* whose outputs hold data (the one run last), or NULL */
    gcr_ir *open;         /* trace being recorded (capture mode) */
    int prefix_values;    /* values of `open` copied from an earlier trace */
    int cursor;           /* check mode: next node to match */
    int n_marks, cap_marks;
    gcr_tensor **marks;   /* gcr_graph_output calls of this pass */
    gcr_tensor handles;   /* sentinel of the list of the traced tensors that cached entries hold
                             (owned; stable across passes), chained through the handles' list links */
    gcr_tensor retired;   /* sentinel of the list of retired handles (seq: their retirement) */
    uint64_t retirements; /* collections that retired handles */
};

/* The region whose body runs now on ctx, or NULL. */
static gcr_region *region_now(const gcr_ctx *ctx)
{
    const gcr_capstate *cs = gcr_capstate_of(ctx);
    return cs ? cs->region : NULL;
}

/* ctx's region named name, or NULL. */
static gcr_region *region_find(const gcr_ctx *ctx, const char *name)
{
    const gcr_capstate *cs = gcr_capstate_of(ctx);
    gcr_region *r = NULL;
    if (cs) HASH_FIND_STR(cs->regions, name, r);
    return r;
}

gcr_ir *gcr_region_open_trace(gcr_ctx *ctx)
{
    gcr_region *r = region_now(ctx);
    return r ? r->open : NULL;
}

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

/* ---------------------------------------------------------------- cache entries */

static void entry_free(gcr_rentry *w)
{
    if (!w) return;
    gcr_graph_free(w->graph);
    gcr_ir_free(w->trace);
    free(w);
}

/* whether h is an output of trace tr (then a run of tr's entry binds it) */
static bool outputs_handle(const gcr_ir *tr, const gcr_tensor *h)
{
    return h->value >= 0 && h->value < tr->n_values && tr->values[h->value].handle == h &&
           tr->values[h->value].out_index >= 0;
}

static void unbind_outputs(const gcr_ir *tr)
{
    for (int o = 0; tr && o < tr->n_outputs; o++) {
        gcr_tensor *h = tr->values[tr->outputs[o]].handle;
        if (h) gcr_tensor_unbind(h);
    }
}

/* w ran: the outputs of the entry that ran before it which w does not output lose their data
 * (they hold an earlier pass's results, or point into a graph that may be evicted) */
static void now_bound(gcr_region *r, gcr_rentry *w)
{
    if (r->bound && r->bound != w) {
        const gcr_ir *old = r->bound->trace;
        for (int o = 0; o < old->n_outputs; o++) {
            gcr_tensor *h = old->values[old->outputs[o]].handle;
            if (h && !outputs_handle(w->trace, h)) gcr_tensor_unbind(h);
        }
    }
    r->bound = w;
}

/* No result of the region holds data: after a failed run of trace tr's entry (which may have
 * bound some of its outputs), a failed pass (tr NULL), or the eviction of the bound entry. */
static void unbind_all(gcr_region *r, const gcr_ir *tr)
{
    unbind_outputs(r->bound ? r->bound->trace : NULL);
    unbind_outputs(tr);
    r->bound = NULL;
}

/* Evicts least recently used entries, never keep, until the cache holds at most its cap. */
static void evict(gcr_region *r, const gcr_rentry *keep)
{
    int cap = gcr_cache_cap(r->ctx);
    for (gcr_lru_link *old; (old = gcr_lru_victim(&r->entries, cap, &keep->lru));) {
        gcr_rentry *w = ENTRY(old);
        gcr_lru_remove(&r->entries, old);
        if (r->cur == w) r->cur = NULL;
        if (r->ran == w) r->ran = NULL;
        if (r->bound == w) unbind_all(r, NULL);
        gcr_info(r->ctx, "region %s: evicting its least recently used graph (cap %d)", r->name, cap);
        entry_free(w);
    }
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return (x > y) - (x < y);
}


/* Retires the handles no cached entry's trace holds any more (a user may still hold them: they
 * lose their data and read as evicted), and frees those retired graph_cache retirements ago.
 * Without memory for the bookkeeping nothing is retired this time (the next collection does it). */
static void collect(gcr_region *r)
{
    size_t n = 0;
    GCR_LRU_FOREACH(p, &r->entries) n += 2 * (size_t)ENTRY(p)->trace->n_values;
    gcr_tensor **held = malloc(sizeof *held * (n ? n : 1));
    if (held) {
        size_t k = 0;
        GCR_LRU_FOREACH(p, &r->entries)
            for (int v = 0; v < ENTRY(p)->trace->n_values; v++) {
                const gcr_value *x = &ENTRY(p)->trace->values[v];
                if (x->handle) held[k++] = x->handle;
                /* by address only: an external tensor may be gone (only a call passing the same
                 * address again could match it) */
                if (x->ext) held[k++] = x->ext;
            }
        qsort(held, k, sizeof *held, cmp_ptr);
        uint64_t stamp = r->retirements + 1;
        for (gcr_tensor *t = r->handles.next, *nx; t != &r->handles; t = nx) {
            nx = t->next;
            if (bsearch(&t, held, k, sizeof *held, cmp_ptr)) continue;
            gcr_tensor_list_drop(t);
            gcr_tensor_unbind(t);
            t->value = -1;
            t->seq = stamp;
            gcr_tensor_list_push(&r->retired, t);
            r->retirements = stamp;
        }
        free(held);
    }
    for (gcr_tensor *t = r->retired.next, *nx; t != &r->retired; t = nx) {
        nx = t->next;
        if (r->retirements - t->seq >= (uint64_t)gcr_cache_cap(r->ctx)) gcr_tensor_release(t); /* another graph may read it */
    }
}

static gcr_status run_entry(gcr_region *r, gcr_rentry *w)
{
    gcr_lru_touch(&r->entries, &w->lru);
    r->cur = r->ran = w;
    if (w->graph) return gcr_graph_replay(w->graph); /* which reports to gcr_region_graph_ran */
    gcr_status s = gcr_ir_interpret(r->ctx, w->trace, NULL);
    if (s == GCR_OK) now_bound(r, w);
    else unbind_all(r, w->trace);
    return s;
}

void gcr_region_graph_ran(struct gcr_region *r, gcr_graph *g, gcr_status s)
{
    gcr_rentry *w = NULL;
    GCR_LRU_FOREACH(p, &r->entries) if (ENTRY(p)->graph == g) w = ENTRY(p);
    if (!w) return;
    if (s == GCR_OK) now_bound(r, w);
    else unbind_all(r, w->trace);
}

const char *gcr_region_name(const struct gcr_region *r) { return r->name; }

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
            if (x->ext != t || !t->st || !gcr_meta_equal(&x->m, &t->m)) return false;
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

/* values of trace tr that its first i nodes read or make */
static int prefix_values(const gcr_ir *tr, int i) { return i == 0 ? 0 : tr->nodes[i - 1].out + 1; }

/* The pass leaves entry cur at node i: record from here into a new trace with cur's prefix
 * (the caller puts the ctx in capture mode while the body still runs). */
static gcr_status diverge(gcr_region *r, int i)
{
    gcr_ctx *ctx = r->ctx;
    const gcr_ir *src = r->cur->trace;
    gcr_ir *nt = gcr_ir_copy(src);
    if (!nt) return ctx->status ? ctx->status : GCR_ERR_OOM;
    int pv = prefix_values(src, i);
    gcr_ir_pin_exts(nt, pv, nt->n_values, false); /* the values the copy drops */
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
    return GCR_OK;
}

gcr_tensor *gcr_region_replayed(gcr_ctx *ctx, const gcr_call *c)
{
    gcr_region *r = region_now(ctx);
    if (!r || !r->cur || !node_matches(r->cur->trace, r->cursor, c)) return NULL;
    int i = r->cursor++;
    return r->cur->trace->values[r->cur->trace->nodes[i].out].handle;
}

gcr_tensor *gcr_region_check(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out)
{
    gcr_region *r = region_now(ctx);
    if (!r || !r->cur) {
        gcr_set_error(ctx, GCR_ERR_INTERNAL, "%s: check mode outside a region", gcr_op_table[c->op].name);
        return NULL;
    }
    /* gcr_dispatch has already tried the node at the cursor (gcr_region_replayed): this call is
     * another one; another cached entry may share the pass's prefix and match it */
    int i = r->cursor;
    GCR_LRU_FOREACH(p, &r->entries) {
        gcr_rentry *w = ENTRY(p);
        if (w == r->cur || !same_prefix(w->trace, r->cur->trace, i) || !node_matches(w->trace, i, c)) continue;
        r->cur = w;
        r->cursor++;
        return w->trace->values[w->trace->nodes[i].out].handle;
    }
    if (diverge(r, i) != GCR_OK) return NULL;
    ctx->mode = GCR_MODE_CAPTURE;
    return gcr_trace_record_in(r->open, c, out);
}

gcr_status gcr_region_mark_output(gcr_ctx *ctx, gcr_tensor *t)
{
    gcr_region *r = region_now(ctx);
    GCR_CHECK(ctx, r && r->cur, GCR_ERR_INTERNAL, "graph_output: check mode outside a region");
    const gcr_ir *tr = r->cur->trace;
    GCR_CHECK(ctx, (t->flags & GCR_TF_TRACED) && t->trace == r && t->value >= 0 && t->value < tr->n_values &&
                       tr->values[t->value].handle == t,
              GCR_ERR_CAPTURE, "graph_output: the tensor is not a result of region %s", r->name);
    for (int i = 0; i < r->n_marks; i++)
        if (r->marks[i] == t) return GCR_OK; /* marked twice in one pass: one output, as a trace records it */
    GCR_TRY(push_ptr(ctx, &r->marks, &r->n_marks, &r->cap_marks, t));
    if (tr->values[t->value].marked) return GCR_OK;
    GCR_TRY(diverge(r, r->cursor));
    ctx->mode = GCR_MODE_CAPTURE;
    r->open->values[t->value].marked = 1;
    return GCR_OK;
}

/* ---------------------------------------------------------------- begin / end */

/* A new region named name in ctx's table (cs, its recorder state), or NULL with GCR_ERR_OOM recorded. */
static gcr_region *region_new(gcr_ctx *ctx, gcr_capstate *cs, const char *name)
{
    gcr_region *r = calloc(1, sizeof *r);
    if (r) r->name = strdup(name);
    if (r && r->name) {
        r->ctx = ctx;
        gcr_lru_init(&r->entries);
        r->handles.next = r->handles.prev = &r->handles;
        r->retired.next = r->retired.prev = &r->retired;
        HASH_ADD_KEYPTR(hh, cs->regions, r->name, strlen(r->name), r);
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
        const gcr_region *open = region_now(ctx);
        if (open)
            gcr_set_error(ctx, GCR_ERR_CAPTURE,
                          "region %s: begins while the body of region %s is open (regions do not nest; a break, "
                          "return or goto out of a body leaves it open until gcr_region_end)",
                          name, open->name);
        else
            gcr_set_error(ctx, GCR_ERR_CAPTURE, "region %s: begins inside a capture (they do not nest)", name);
        return 0;
    }
    gcr_capstate *cs = gcr_capstate_get(ctx);
    if (!cs) {
        gcr_set_error(ctx, GCR_ERR_OOM, "region %s: out of host memory", name);
        return 0;
    }
    gcr_region *r = region_find(ctx, name);
    if (!r && !(r = region_new(ctx, cs, name))) return 0;
    r->n_marks = 0;
    r->cursor = 0;
    ctx->capture_err = GCR_OK; /* an error recorded from here to the body's end fails the pass */
    if (!r->cur) {
        r->open = gcr_ir_new(ctx, r);
        if (!r->open) return 0;
        r->prefix_values = 0;
        cs->region = r;
        ctx->mode = GCR_MODE_CAPTURE;
        return 1;
    }
    if (!ctx->knobs.guards) { /* unchecked: the last entry replays, the body is skipped */
        run_entry(r, r->cur);
        return 0;
    }
    cs->region = r;
    ctx->mode = GCR_MODE_CHECK;
    return 1;
}

/* The region takes the handles trace tr made. Traced handles are on no other list, so chaining
 * them never allocates (nothing can leak here) and gcr_tensor_destroy unlinks them. */
static void adopt_handles(gcr_region *r, gcr_ir *tr)
{
    for (int v = r->prefix_values; v < tr->n_values; v++)
        if (tr->values[v].handle) gcr_tensor_list_push(&r->handles, tr->values[v].handle);
}

/* capture (or diverged) pass: build, or interpret, the open trace as a new entry. It joins the
 * cache only once it ran, and the least recently used entry is evicted only then, so a failed
 * build leaves the cache as it was and a pass may read the previous pass's outputs. On failure
 * the open trace stays for fail_pass. */
static gcr_status finish_capture(gcr_region *r)
{
    gcr_ctx *ctx = r->ctx;
    gcr_ir *tr = r->open;
    if (tr->failed) return tr->failed;
    GCR_TRY(gcr_ir_link(tr));
    gcr_rentry *w = calloc(1, sizeof *w);
    if (!w) return gcr_set_error(ctx, GCR_ERR_OOM, "region %s: out of host memory", r->name);
    w->trace = tr;
    gcr_status s;
    if (!r->entries.count || ctx->knobs.retrace) {
        s = gcr_graph_from_trace(ctx, tr, false, &w->graph);
    } else {
        gcr_info(ctx, "region %s: running the new trace eagerly (retrace=0)", r->name);
        s = gcr_ir_interpret(ctx, tr, NULL);
    }
    if (s != GCR_OK) { /* the graph that held the outputs is gone */
        unbind_outputs(tr);
        free(w);
        return s;
    }
    if (w->graph) w->graph->region = r;
    adopt_handles(r, tr);
    r->open = NULL;
    gcr_lru_add(&r->entries, &w->lru);
    r->cur = r->ran = w;
    now_bound(r, w);
    evict(r, w);
    collect(r);
    return GCR_OK;
}

/* The pass failed (status s): its trace is dropped, and no result of the region holds data. The
 * entry it had switched to while checking did not run: the one run last is current again. */
static void fail_pass(gcr_region *r, gcr_status s)
{
    r->cur = r->ran;
    if (r->open) {
        adopt_handles(r, r->open);
        gcr_ir_free(r->open);
        r->open = NULL;
    }
    unbind_all(r, NULL);
    collect(r);
    gcr_set_error(r->ctx, s, "region %s: the pass failed; nothing ran and its tensors hold no data", r->name);
}

/* The body ended in check mode: run the entry that matches the whole pass, or record a new one
 * from the point where the pass left the recorded ones. */
static gcr_status end_check(gcr_region *r)
{
    int i = r->cursor;
    gcr_rentry *hit = NULL;
    if (r->cur->trace->n_nodes == i && marks_match(r, r->cur->trace)) hit = r->cur;
    GCR_LRU_FOREACH(p, &r->entries) {
        const gcr_ir *tr = ENTRY(p)->trace;
        if (!hit && tr->n_nodes == i && same_prefix(tr, r->cur->trace, i) && marks_match(r, tr)) hit = ENTRY(p);
    }
    return hit ? run_entry(r, hit) : diverge(r, i);
}

int gcr_region_end(gcr_ctx *ctx)
{
    if (!ctx) return 0;
    gcr_region *r = region_now(ctx);
    if (!r) return 0;
    gcr_status s = ctx->capture_err;
    gcr_mode mode = ctx->mode;
    ctx->mode = GCR_MODE_EAGER;
    gcr_capstate_of(ctx)->region = NULL;
    if (s == GCR_OK && mode == GCR_MODE_CHECK) s = end_check(r);
    if (s == GCR_OK && r->open) s = finish_capture(r);
    if (s != GCR_OK) fail_pass(r, s);
    return 0;
}

gcr_graph *gcr_region_graph(gcr_ctx *ctx, const char *name)
{
    if (!ctx || !name) return NULL;
    gcr_region *r = region_find(ctx, name);
    return r && r->cur ? r->cur->graph : NULL;
}

void gcr_regions_free(gcr_ctx *ctx)
{
    gcr_capstate *cs = gcr_capstate_of(ctx);
    if (!cs) return;
    gcr_region *r, *tmp;
    HASH_ITER(hh, cs->regions, r, tmp)
    {
        HASH_DEL(cs->regions, r);
        if (r->open) {
            adopt_handles(r, r->open);
            gcr_ir_free(r->open);
        }
        while (r->entries.count) {
            gcr_rentry *w = ENTRY(r->entries.head.next);
            gcr_lru_remove(&r->entries, &w->lru);
            entry_free(w);
        }
        while (r->handles.next != &r->handles) gcr_tensor_release(r->handles.next);
        while (r->retired.next != &r->retired) gcr_tensor_release(r->retired.next);
        free(r->marks);
        free(r->name);
        free(r);
    }
    cs->region = NULL;
}

int gcr_region_handle_count(gcr_ctx *ctx, const char *name)
{
    gcr_region *r = region_find(ctx, name);
    int n = 0;
    for (const gcr_tensor *t = r ? r->handles.next : NULL; t && t != &r->handles; t = t->next) n++;
    for (const gcr_tensor *t = r ? r->retired.next : NULL; t && t != &r->retired; t = t->next) n++;
    return n;
}

/* ---------------------------------------------------------------- host access */

/* the region whose tensor t is, or NULL */
static gcr_region *region_of(gcr_ctx *ctx, const gcr_tensor *t)
{
    const gcr_capstate *cs = gcr_capstate_of(ctx);
    if (!(t->flags & GCR_TF_TRACED) || !t->trace || !cs) return NULL;
    gcr_region *r, *tmp;
    HASH_ITER(hh, cs->regions, r, tmp)
    if (t->trace == r) return r;
    return NULL;
}

gcr_status gcr_region_host_access(const gcr_tensor *t, bool write, const char *fn)
{
    gcr_ctx *ctx = t->ctx;
    gcr_region *r = region_now(ctx), *own = region_of(ctx, t);
    char b[96];
    gcr_meta_str(&t->m, b, sizeof b);
    if (r) { /* a body runs: its pass runs at the body's end */
        GCR_CHECK(ctx, own != r, GCR_ERR_CAPTURE,
                  "%s: %s is a result of region %s, used inside its body: the pass runs at the end of the "
                  "body, so it holds no data of this pass yet (read or write it after the body)",
                  fn, b, r->name);
        const gcr_ir *tr = r->open ? r->open : r->cur->trace;
        int n = r->open ? tr->n_values : prefix_values(tr, r->cursor);
        GCR_CHECK(ctx, !write || !t->st || !gcr_trace_reads(tr, n, t->st), GCR_ERR_CAPTURE,
                  "%s: %s is already read by an op of region %s's body: the pass reads its inputs when it "
                  "runs, at the end of the body, so that op would see this write too; write inputs before "
                  "the region, or into another tensor",
                  fn, b, r->name);
    }
    if (!own || t->st) return GCR_OK;
    GCR_CHECK(ctx, t->value >= 0, GCR_ERR_CAPTURE,
              "%s: %s is a result of region %s from a pass since evicted from the region's cache "
              "(graph_cache %d): it holds no data",
              fn, b, own->name, gcr_cache_cap(own->ctx));
    return gcr_set_error(ctx, GCR_ERR_CAPTURE,
                         "%s: %s is a result of region %s that its last pass did not output (an intermediate, "
                         "or a result of another branch or input signature): it holds no data (mark a tensor "
                         "the body only uses inside with gcr_graph_output to read it)",
                         fn, b, own->name);
}
