/* plan.c — the memory plan: every materialised intermediate gets an offset in one arena, reused
 * once its lifetime (in kernel indices) has ended; greedy, largest first, lowest fitting offset.
 * Outputs keep their own static buffers (never reused), views alias their root, inputs and
 * constants stay the user's. */
#include "ir.h"
#include <stdlib.h>

#define GCR_ALIGN 256

static size_t align_up(size_t x) { return (x + GCR_ALIGN - 1) & ~(size_t)(GCR_ALIGN - 1); }

typedef struct { size_t off, end; } span;

static int by_off(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* the arena values in placement order: largest first, then by value id */
typedef struct { size_t bytes; int v; } by_size;

static int larger_first(const void *a, const void *b)
{
    const by_size *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* Lifetimes as a static query structure, so that placing a value costs O(log T + k) for the k
 * values whose lifetimes overlap its own, not a look at every value placed before it. Times are
 * kernel indices + 1 (a value no kernel touches has -1 .. -1), T of them. A segment tree over
 * times holds each lifetime at its canonical nodes; the nodes on the path from time t's leaf to
 * the root hold exactly the lifetimes containing t. Those starting after t are listed by start. */
typedef struct lifetimes {
    int leaves;                     /* power of two >= T */
    int *node_start, *node_items;   /* tree node j: node_items[node_start[j] .. node_start[j+1]) */
    int *start_at, *by_start;       /* starting at time t: by_start[start_at[t] .. start_at[t+1]) */
} lifetimes;

/* the canonical tree nodes of times [f, l] into out (at most 2 per level); returns their count */
static int canonical(const lifetimes *L, int f, int l, int *out)
{
    int n = 0;
    for (int lo = f + L->leaves, hi = l + L->leaves + 1; lo < hi; lo >>= 1, hi >>= 1) {
        if (lo & 1) out[n++] = lo++;
        if (hi & 1) out[n++] = --hi;
    }
    return n;
}

/* builds L over the lifetimes of vals[0..na), indexed by position in vals; the caller frees
 * L's arrays, also on failure */
static gcr_status lifetimes_build(lifetimes *L, const gcr_ir *ir, const int *vals, int na, int times)
{
    int nodes = 2 * L->leaves, canon[128];
    L->node_start = calloc((size_t)nodes + 1, sizeof(int));
    L->start_at = calloc((size_t)times + 1, sizeof(int));
    int *fill = calloc((size_t)nodes + 1, sizeof(int)); /* nodes > times */
    if (!L->node_start || !L->start_at || !fill) goto oom;
    for (int i = 0; i < na; i++) {
        const gcr_value *x = &ir->values[vals[i]];
        int nc = canonical(L, x->first + 1, x->last + 1, canon);
        for (int c = 0; c < nc; c++) L->node_start[canon[c] + 1]++;
        L->start_at[x->first + 1 + 1]++;
    }
    for (int j = 0; j < nodes; j++) L->node_start[j + 1] += L->node_start[j];
    for (int t = 0; t < times; t++) L->start_at[t + 1] += L->start_at[t];
    L->node_items = malloc(sizeof(int) * (size_t)(L->node_start[nodes] + 1));
    L->by_start = malloc(sizeof(int) * (size_t)(na + 1));
    if (!L->node_items || !L->by_start) goto oom;
    for (int i = 0; i < na; i++) {
        const gcr_value *x = &ir->values[vals[i]];
        int nc = canonical(L, x->first + 1, x->last + 1, canon);
        for (int c = 0; c < nc; c++) L->node_items[L->node_start[canon[c]] + fill[canon[c]]++] = i;
    }
    memset(fill, 0, sizeof(int) * (size_t)times);
    for (int i = 0; i < na; i++) {
        int t = ir->values[vals[i]].first + 1;
        L->by_start[L->start_at[t] + fill[t]++] = i;
    }
    free(fill);
    return GCR_OK;
oom:
    free(fill);
    return GCR_ERR_OOM;
}

/* appends the span of vals[i] when it is already placed */
static void take(const gcr_ir *ir, const int *vals, const char *placed, int i, span *sp, int *ns)
{
    if (!placed[i]) return;
    const gcr_value *y = &ir->values[vals[i]];
    sp[(*ns)++] = (span){y->buf_off, y->buf_off + align_up(y->bytes)};
}

/* the lowest offset where need bytes fit between the ns spans (sorted here) */
static size_t first_fit(span *sp, int ns, size_t need)
{
    qsort(sp, (size_t)ns, sizeof *sp, by_off);
    size_t off = 0;
    for (int j = 0; j < ns; j++) {
        if (sp[j].off >= off + need) break;
        if (sp[j].end > off) off = sp[j].end;
    }
    return off;
}

/* Greedy placement of the na values idx[] (reordered here), largest first, each at the lowest
 * offset clear of the values already placed whose lifetimes overlap its own; *arena gets the
 * high-water mark. */
static gcr_status place(gcr_ir *ir, int *idx, int na, size_t *arena)
{
    int times = ir->n_kernels + 1;
    lifetimes L = {1, NULL, NULL, NULL, NULL};
    while (L.leaves < times) L.leaves *= 2;
    by_size *order = malloc(sizeof *order * (size_t)(na + 1));
    span *sp = malloc(sizeof(span) * (size_t)(na + 1));
    char *placed = calloc((size_t)na + 1, 1);
    gcr_status s = order && sp && placed ? GCR_OK : GCR_ERR_OOM;
    if (s == GCR_OK) {
        for (int i = 0; i < na; i++) order[i] = (by_size){ir->values[idx[i]].bytes, idx[i]};
        qsort(order, (size_t)na, sizeof *order, larger_first);
        for (int i = 0; i < na; i++) idx[i] = order[i].v;
        s = lifetimes_build(&L, ir, idx, na, times);
    }
    for (int i = 0; i < na && s == GCR_OK; i++) {
        gcr_value *x = &ir->values[idx[i]];
        int ns = 0, f = x->first + 1, l = x->last + 1;
        for (int j = f + L.leaves; j >= 1; j >>= 1) /* containing f */
            for (int k = L.node_start[j]; k < L.node_start[j + 1]; k++) take(ir, idx, placed, L.node_items[k], sp, &ns);
        for (int k = L.start_at[f + 1]; k < L.start_at[l + 1]; k++) /* starting in (f, l] */
            take(ir, idx, placed, L.by_start[k], sp, &ns);
        size_t need = align_up(x->bytes);
        x->buf_off = first_fit(sp, ns, need);
        placed[i] = 1;
        if (x->buf_off + need > *arena) *arena = x->buf_off + need;
    }
    free(L.node_start);
    free(L.node_items);
    free(L.start_at);
    free(L.by_start);
    free(order);
    free(sp);
    free(placed);
    if (s != GCR_OK) return gcr_set_error(ir->ctx, s, "plan: out of host memory placing %d intermediates", na);
    return GCR_OK;
}

gcr_status gcr_plan(gcr_ir *ir)
{
    int nv = ir->n_values;
    for (int v = 0; v < nv; v++) {
        gcr_value *x = &ir->values[v];
        x->first = x->last = -1;
        x->buf_off = 0;
        x->bytes = gcr_value_bytes(x);
    }
    /* roots of output views must keep their bytes for the user */
    char *out_root = calloc((size_t)nv + 1, 1);
    int *idx = malloc(sizeof(int) * (size_t)(nv + 1));
    if (!out_root || !idx) {
        free(out_root);
        free(idx);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "plan: out of host memory");
    }
    for (int o = 0; o < ir->n_outputs; o++) out_root[ir->values[ir->outputs[o]].root] = 1;
    /* lifetimes: produced by the kernel storing it, alive until the last kernel reading it or a
     * view of it */
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        for (int i = 0; i < K->n_nodes; i++) {
            const gcr_node *nd = &ir->nodes[K->nodes[i]];
            gcr_value *o = &ir->values[nd->out];
            if (o->first < 0) o->first = k;
            if (o->last < k) o->last = k;
            for (int j = 0; j < nd->n_in; j++) {
                if (nd->in[j] < 0) continue;
                gcr_value *r = &ir->values[ir->values[nd->in[j]].root];
                if (r->last < k) r->last = k;
            }
        }
    }
    ir->intermediate_bytes = ir->output_bytes = 0;
    int na = 0;
    for (int v = 0; v < nv; v++) {
        gcr_value *x = &ir->values[v];
        bool live = x->producer >= 0 && !ir->nodes[x->producer].dead;
        switch (x->kind) {
        case GCR_V_INPUT:
        case GCR_V_CONST: x->buf = GCR_BUF_EXTERNAL; break;
        case GCR_V_VIEW: x->buf = GCR_BUF_ALIAS; break;
        case GCR_V_INTER:
            if (!live) { x->buf = GCR_BUF_NONE; break; }
            if (x->out_index >= 0 || out_root[v]) {
                x->buf = GCR_BUF_OUTPUT;
                ir->output_bytes += align_up(x->bytes);
                break;
            }
            ir->intermediate_bytes += align_up(x->bytes);
            if (!x->written) { x->buf = GCR_BUF_NONE; break; }
            x->buf = GCR_BUF_ARENA;
            idx[na++] = v;
            break;
        }
    }
    size_t arena = 0;
    gcr_status st = place(ir, idx, na, &arena);
    if (st == GCR_OK) ir->arena_bytes = arena;
    free(out_root);
    free(idx);
    return st;
}
