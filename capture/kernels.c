/* kernels.c — from fusion groups to the launch list: each group becomes one kernel (an eager
 * call, or a fused group with anchor, prologues and a pointwise expression DAG), ordered
 * topologically. */
#include "ir.h"
#include <stdio.h>
#include <stdlib.h>

/* scratch for building one group */
typedef struct builder {
    gcr_ir *ir;
    gcr_group *g;
    int *expr_of; /* per value: expression computing it in this kernel, -1 */
    int *load_of; /* per value: latest load of it in this group, -1 (chained by load_next) */
    int *load_next; /* per expression: the previous load of the same value, -1 */
    int cap_in, cap_expr, cap_out;
} builder;

static builder builder_new(gcr_ir *ir, gcr_group *g, int *expr_of, int *load_of)
{
    return (builder){ir, g, expr_of, load_of, NULL, 0, 0, 0};
}

/* forgets the group's loads in the shared per-value scratch */
static void builder_done(builder *b)
{
    for (int i = 0; i < b->g->n_in; i++) b->load_of[b->g->in[i].value] = -1;
    free(b->load_next);
    b->load_next = NULL;
}

static int push_expr(builder *b, const gcr_expr *e)
{
    gcr_group *g = b->g;
    if (g->n_expr == b->cap_expr) {
        b->cap_expr = b->cap_expr ? 2 * b->cap_expr : 16;
        gcr_expr *x = realloc(g->expr, sizeof *x * (size_t)b->cap_expr);
        if (!x) return -1;
        g->expr = x;
        int *ln = realloc(b->load_next, sizeof(int) * (size_t)b->cap_expr);
        if (!ln) return -1;
        b->load_next = ln;
    }
    g->expr[g->n_expr] = *e;
    return g->n_expr++;
}

/* expression that loads value v through strides st (deduplicated per value and strides) */
static int load_expr(builder *b, int v, const int64_t *st, gcr_expr_kind kind)
{
    gcr_group *g = b->g;
    int nd = g->space.ndim;
    for (int e = b->load_of[v]; e >= 0; e = b->load_next[e])
        if (!memcmp(g->in[g->expr[e].load].strides, st, sizeof(int64_t) * (size_t)nd)) return e;
    if (g->n_in == b->cap_in) {
        b->cap_in = b->cap_in ? 2 * b->cap_in : 8;
        gcr_gin *x = realloc(g->in, sizeof *x * (size_t)b->cap_in);
        if (!x) return -1;
        g->in = x;
    }
    gcr_gin *in = &g->in[g->n_in];
    memset(in, 0, sizeof *in);
    in->value = v;
    memcpy(in->strides, st, sizeof(int64_t) * (size_t)nd);
    gcr_expr e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.load = g->n_in++;
    e.dtype = b->ir->values[v].m.dtype;
    e.value = v;
    for (int k = 0; k < 5; k++) e.arg[k] = -1;
    int id = push_expr(b, &e);
    if (id >= 0) {
        b->load_next[id] = b->load_of[v];
        b->load_of[v] = id;
    }
    return id;
}

static int push_out(builder *b, int v, int expr)
{
    gcr_group *g = b->g;
    if (g->n_out == b->cap_out) {
        b->cap_out = b->cap_out ? 2 * b->cap_out : 4;
        gcr_gout *x = realloc(g->out, sizeof *x * (size_t)b->cap_out);
        if (!x) return -1;
        g->out = x;
    }
    g->out[g->n_out].value = v;
    g->out[g->n_out].expr = expr;
    g->n_out++;
    return 0;
}

/* appends node n's expression to the group; acc is the anchor's value (-1 none) */
static int add_node_expr(builder *b, int n, int acc)
{
    gcr_ir *ir = b->ir;
    const gcr_node *nd = &ir->nodes[n];
    gcr_expr e;
    memset(&e, 0, sizeof e);
    e.kind = GCR_E_OP;
    e.op = nd->op;
    e.p0 = nd->p.f[0];
    e.p1 = nd->p.f[1];
    e.has_scalar = nd->p.has_scalar;
    e.dtype = ir->values[nd->out].m.dtype;
    e.value = nd->out;
    e.load = -1;
    for (int k = 0; k < 5; k++) e.arg[k] = -1;
    for (int k = 0; k < nd->n_in && k < 5; k++) {
        int v = nd->in[k];
        if (v < 0) continue;
        if (b->expr_of[v] >= 0) {
            e.arg[k] = b->expr_of[v];
            continue;
        }
        int64_t st[GCR_MAX_DIMS];
        gcr_bcast_strides(nd->op, k, &ir->values[v].m, &ir->values[nd->out].m, st);
        e.arg[k] = load_expr(b, v, st, v == acc ? GCR_E_ACC : GCR_E_LOAD);
        if (e.arg[k] < 0) return -1;
    }
    int id = push_expr(b, &e);
    if (id >= 0) b->expr_of[nd->out] = id;
    return id;
}

/* value v leaves the kernel: a node outside `members` reads it, or it is a graph output */
static bool read_outside(gcr_ir *ir, int v, const char *member)
{
    if (ir->values[v].out_index >= 0) return true;
    int nc;
    const int *cons = gcr_ir_consumers(ir, v, &nc);
    for (int j = 0; j < nc; j++)
        if (!member[cons[j]]) return true;
    return false;
}

/* per-node and per-value scratch of gcr_ir_build_kernels, left reset (-1 / 0) between kernels
 * so that building a kernel costs its own size, not the trace's */
typedef struct scratch {
    int *expr_of, *load_of; /* per value */
    int *slot;              /* per node */
    char *member;           /* per node */
} scratch;

static gcr_status build_fused(gcr_ir *ir, gcr_kernel *K, scratch *sc)
{
    int A = K->anchor;
    int *expr_of = sc->expr_of, *slot = sc->slot;
    char *member = sc->member;
    for (int i = 0; i < K->n_nodes; i++) member[K->nodes[i]] = 1;
    /* prologue members: those whose value reaches anchor slot j through members */
    for (int i = 0; i < K->n_nodes; i++) slot[K->nodes[i]] = -1;
    if (A >= 0) {
        for (int j = 0; j < ir->nodes[A].n_in && j < GCR_MAX_ANCHOR_IN; j++) {
            int v = ir->nodes[A].in[j];
            if (v < 0) continue;
            int p = ir->values[v].producer;
            if (p < 0 || !member[p]) continue;
            slot[p] = j;
            /* members are in trace order: walk backwards, marking producers of marked nodes */
            for (int i = K->n_nodes - 1; i >= 0; i--) {
                int n = K->nodes[i];
                if (slot[n] != j) continue;
                for (int k = 0; k < ir->nodes[n].n_in; k++) {
                    int u = ir->nodes[n].in[k];
                    if (u >= 0 && ir->values[u].producer >= 0 && member[ir->values[u].producer])
                        slot[ir->values[u].producer] = j;
                }
            }
        }
    }
    gcr_status s = GCR_OK;
    int acc = A >= 0 ? ir->nodes[A].out : -1;
    K->acc_value = acc;
    /* a conv->conv pair's first conv feeds slot 0: its result is that prologue's E_ACC */
    int inner_acc = K->inner >= 0 ? ir->nodes[K->inner].out : -1;
    /* prologues */
    for (int j = 0; A >= 0 && j < GCR_MAX_ANCHOR_IN && s == GCR_OK; j++) {
        int any = 0;
        for (int i = 0; i < K->n_nodes; i++) any |= slot[K->nodes[i]] == j && K->nodes[i] != K->inner;
        if (!any) continue;
        gcr_group *g = calloc(1, sizeof *g);
        if (!g) {
            s = GCR_ERR_OOM;
            break;
        }
        K->pro[j] = g;
        int u = ir->nodes[A].in[j];
        g->space = ir->values[u].m;
        builder b = builder_new(ir, g, expr_of, sc->load_of);
        for (int i = 0; i < K->n_nodes && s == GCR_OK; i++)
            if (slot[K->nodes[i]] == j && K->nodes[i] != K->inner && add_node_expr(&b, K->nodes[i], j ? -1 : inner_acc) < 0)
                s = GCR_ERR_OOM;
        if (s == GCR_OK && push_out(&b, u, expr_of[u]) < 0) s = GCR_ERR_OOM;
        builder_done(&b);
    }
    /* epilogue (or the whole group without anchor) */
    gcr_group *g = &K->epi;
    builder b = builder_new(ir, g, expr_of, sc->load_of);
    int first = -1;
    for (int i = 0; i < K->n_nodes; i++) {
        int n = K->nodes[i];
        if (n == A || slot[n] >= 0) continue;
        if (first < 0) first = n;
    }
    g->space = A >= 0 ? ir->values[acc].m : ir->values[ir->nodes[first >= 0 ? first : K->nodes[0]].out].m;
    for (int i = 0; i < K->n_nodes && s == GCR_OK; i++) {
        int n = K->nodes[i];
        if (n == A || slot[n] >= 0) continue;
        if (add_node_expr(&b, n, acc) < 0) s = GCR_ERR_OOM;
    }
    for (int i = 0; i < K->n_nodes && s == GCR_OK; i++) {
        int n = K->nodes[i];
        if (n == A || slot[n] >= 0) continue;
        int v = ir->nodes[n].out;
        if (read_outside(ir, v, member)) {
            if (push_out(&b, v, expr_of[v]) < 0) s = GCR_ERR_OOM;
            ir->values[v].written = 1;
        }
    }
    if (A >= 0 && g->n_expr == 0) ir->values[acc].written = 1;
    builder_done(&b);
    for (int i = 0; i < K->n_nodes; i++) {
        member[K->nodes[i]] = 0;
        expr_of[ir->nodes[K->nodes[i]].out] = -1;
    }
    if (s != GCR_OK) return gcr_set_error(ir->ctx, s, "fuse: out of host memory building a kernel");
    return GCR_OK;
}

static void kernel_name(gcr_ir *ir, gcr_kernel *K, int index)
{
    size_t k = (size_t)snprintf(K->name, sizeof K->name, "k%d_", index);
    /* the anchor first, then the pointwise ops in order; a conv->conv pair in trace order */
    const bool first = K->anchor >= 0 && K->inner < 0;
    if (first && k < sizeof K->name) k += (size_t)snprintf(K->name + k, sizeof K->name - k, "%s", gcr_op_table[ir->nodes[K->anchor].op].name);
    for (int i = 0; i < K->n_nodes && k < sizeof K->name; i++) {
        if (first && K->nodes[i] == K->anchor) continue;
        k += (size_t)snprintf(K->name + k, sizeof K->name - k, "%s%s", k > 0 && K->name[k - 1] != '_' ? "+" : "",
                              gcr_op_table[ir->nodes[K->nodes[i]].op].name);
    }
}

/* the node whose result holds the bytes value v reads: views resolve to their root's producer
 * (a view of an input has none: -1) */
static int bytes_producer(const gcr_ir *ir, int v)
{
    int root = ir->values[v].root;
    int p = ir->values[root].producer;
    while (p >= 0 && gcr_op_is_view(ir->nodes[p].op)) {
        root = ir->values[ir->nodes[p].in[0]].root;
        p = ir->values[root].producer;
    }
    return p;
}

static void heap_push(int *h, int *n, int x)
{
    int i = (*n)++;
    for (; i > 0 && h[(i - 1) / 2] > x; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = x;
}

static int heap_pop(int *h, int *n)
{
    int top = h[0], x = h[--*n], i = 0;
    for (int c; (c = 2 * i + 1) < *n; i = c) {
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= x) break;
        h[i] = h[c];
    }
    h[i] = x;
    return top;
}

/* Kahn's algorithm, smallest kernel id first (keeps the trace order where possible), over the
 * nk kernels whose successors are succ[start[k] .. start[k+1]); fills order[], false on a cycle */
static bool topo_order(int nk, const int *start, const int *succ, int *indeg, int *heap, int *order)
{
    int nh = 0, done = 0;
    for (int k = 0; k < nk; k++)
        if (indeg[k] == 0) heap_push(heap, &nh, k);
    while (nh > 0) {
        int k = heap_pop(heap, &nh);
        order[done++] = k;
        for (int j = start[k]; j < start[k + 1]; j++)
            if (--indeg[succ[j]] == 0) heap_push(heap, &nh, succ[j]);
    }
    return done == nk;
}

static void log_cycle(gcr_ir *ir)
{
    if (ir->ctx->knobs.log < 2) return;
    size_t len = gcr_ir_describe(ir, NULL, 0);
    char *txt = malloc(len);
    if (!txt) return;
    gcr_ir_describe(ir, txt, len);
    gcr_info(ir->ctx, "fuse: cyclic grouping of\n%s", txt);
    for (int i = 0; i < ir->n_nodes; i++) gcr_info(ir->ctx, "  n%d in group %d", i, gcr_group_find(ir, i));
    free(txt);
}

/* the kernels in launch order: members in trace order, anchors found, nothing built yet */
static gcr_status order_kernels(gcr_ir *ir, int *kof, int nk, const int *count, gcr_kernel *out)
{
    int n = ir->n_nodes, ne = 0;
    for (int i = 0; i < n; i++) ne += kof[i] >= 0 ? ir->nodes[i].n_in : 0;
    gcr_kernel *ks = calloc((size_t)nk + 1, sizeof *ks);
    int *efrom = malloc(sizeof(int) * (size_t)(ne + 1)), *succ = malloc(sizeof(int) * (size_t)(ne + 1));
    int *start = calloc((size_t)nk + 2, sizeof(int)), *indeg = calloc((size_t)nk + 1, sizeof(int));
    int *heap = malloc(sizeof(int) * (size_t)(nk + 1)), *order = malloc(sizeof(int) * (size_t)(nk + 1));
    gcr_status s = GCR_OK;
    if (!ks || !efrom || !succ || !start || !indeg || !heap || !order) s = GCR_ERR_OOM;
    /* members, and one edge per read of another kernel's result (through views to their roots) */
    int *eto = succ; /* edge targets first, then the same array sorted by source */
    ne = 0;
    for (int i = 0; i < n && s == GCR_OK; i++) {
        if (kof[i] < 0) continue;
        gcr_kernel *K = &ks[kof[i]];
        if (!K->nodes) {
            K->anchor = K->inner = -1;
            if (!(K->nodes = malloc(sizeof(int) * (size_t)count[gcr_group_find(ir, i)]))) s = GCR_ERR_OOM;
            if (s != GCR_OK) break;
        }
        K->nodes[K->n_nodes++] = i;
        if (gcr_op_is_anchor(ir->nodes[i].op)) { /* members in trace order: a conv->conv pair's second is the anchor */
            K->inner = K->anchor;
            K->anchor = i;
        }
        const gcr_node *nd = &ir->nodes[i];
        for (int k = 0; k < nd->n_in; k++) {
            int p = nd->in[k] < 0 ? -1 : bytes_producer(ir, nd->in[k]);
            if (p < 0 || kof[p] < 0 || kof[p] == kof[i]) continue;
            efrom[ne] = kof[p];
            eto[ne++] = kof[i];
        }
    }
    if (s == GCR_OK) {
        int *tmp = malloc(sizeof(int) * (size_t)(ne + 1));
        if (!tmp) s = GCR_ERR_OOM;
        for (int e = 0; e < ne && tmp; e++) {
            start[efrom[e] + 1]++;
            indeg[eto[e]]++;
            tmp[e] = eto[e];
        }
        for (int k = 0; k < nk && tmp; k++) start[k + 1] += start[k];
        int *fill = tmp ? calloc((size_t)nk + 1, sizeof(int)) : NULL;
        if (tmp && !fill) s = GCR_ERR_OOM;
        for (int e = 0; e < ne && fill; e++) succ[start[efrom[e]] + fill[efrom[e]]++] = tmp[e];
        free(fill);
        free(tmp);
    }
    if (s == GCR_OK && !topo_order(nk, start, succ, indeg, heap, order)) {
        log_cycle(ir);
        s = gcr_set_error(ir->ctx, GCR_ERR_INTERNAL, "fuse: the kernel graph has a cycle");
    }
    if (s == GCR_OK)
        for (int k = 0; k < nk; k++) out[k] = ks[order[k]];
    else
        for (int k = 0; k < nk && ks; k++) free(ks[k].nodes);
    if (s == GCR_ERR_OOM) gcr_set_error(ir->ctx, s, "fuse: out of host memory ordering %d kernels", nk);
    free(ks);
    free(efrom);
    free(succ);
    free(start);
    free(indeg);
    free(heap);
    free(order);
    return s;
}

gcr_status gcr_ir_build_kernels(gcr_ir *ir)
{
    int n = ir->n_nodes, nv = ir->n_values;
    for (int v = 0; v < nv; v++) ir->values[v].written = 0;
    /* kernel of each group root; view nodes launch nothing */
    int *kof = malloc(sizeof(int) * (size_t)(n + 1)), *count = calloc((size_t)n + 1, sizeof(int));
    scratch sc = {malloc(sizeof(int) * (size_t)(nv + 1)), malloc(sizeof(int) * (size_t)(nv + 1)),
                  malloc(sizeof(int) * (size_t)(n + 1)), calloc((size_t)n + 1, 1)};
    gcr_status s = GCR_OK;
    if (!kof || !count || !sc.expr_of || !sc.load_of || !sc.slot || !sc.member) {
        s = gcr_set_error(ir->ctx, GCR_ERR_OOM, "fuse: out of host memory");
        goto out;
    }
    for (int v = 0; v < nv; v++) sc.expr_of[v] = sc.load_of[v] = -1;
    int nk = 0;
    for (int i = 0; i < n; i++) {
        kof[i] = -1;
        if (ir->nodes[i].dead || gcr_op_is_view(ir->nodes[i].op)) continue;
        int r = gcr_group_find(ir, i);
        if (r == i) kof[i] = nk++;
        count[r]++;
    }
    for (int i = 0; i < n; i++)
        if (kof[i] < 0 && !ir->nodes[i].dead && !gcr_op_is_view(ir->nodes[i].op))
            kof[i] = kof[gcr_group_find(ir, i)];
    gcr_kernel *ks = calloc((size_t)(nk ? nk : 1), sizeof *ks);
    if (!ks) {
        s = gcr_set_error(ir->ctx, GCR_ERR_OOM, "fuse: out of host memory");
        goto out;
    }
    if ((s = order_kernels(ir, kof, nk, count, ks)) != GCR_OK) {
        free(ks);
        goto out;
    }
    free(ir->kernels);
    ir->kernels = ks;
    ir->n_kernels = nk;
    for (int k = 0; k < nk && s == GCR_OK; k++) {
        gcr_kernel *K = &ir->kernels[k];
        int first = K->nodes[0];
        bool lone = K->n_nodes == 1;
        bool pw = gcr_op_is_pointwise(ir->nodes[first].op);
        if (lone && !(pw && ir->ctx->knobs.single_node && ir->ctx->knobs.fusion && gcr_fuse_enabled(ir, first))) {
            K->type = GCR_K_EAGER;
            K->anchor = first;
            K->inner = -1;
            K->acc_value = -1;
            ir->values[ir->nodes[first].out].written = 1;
        } else {
            K->type = GCR_K_FUSED;
            s = build_fused(ir, K, &sc);
        }
        kernel_name(ir, K, k);
    }
out:
    free(kof);
    free(count);
    free(sc.expr_of);
    free(sc.load_of);
    free(sc.slot);
    free(sc.member);
    return s;
}
