/* legal.c — the one fusion legality rule and the union-find every pass merges through. Passes
 * only propose merges; whether two nodes may share a kernel is decided here alone.
 *
 * So that a capture of n ops fuses in about O(n log n), every fact the rule needs is kept per
 * group and updated at each merge instead of being recomputed from all nodes (gcr_fuse_begin):
 * member lists, anchor count, whether all members are pointwise over one shape, how many
 * consumer edges leave the group, and a topological order of the groups (the graph with each
 * group contracted to one vertex). The cycle check then searches only the groups that lie
 * strictly between the two candidates in that order, and a merge repairs the order by moving
 * just those groups (Pearce and Kelly's dynamic topological sort, with a merge of two vertices
 * in place of an edge insertion). Group-level edges are lists of node ids; entries that point
 * back into their own group or repeat a group are dropped whenever a search walks them.
 *
 * Under an operand budget (ir->budget, the backend's: 0 none) every group also keeps the data
 * pointers its kernel will take, counted as codegen passes them, and a merge past the budget is
 * refused, so a large set of siblings becomes several kernels within it rather than one that
 * fails to compile and runs op by op. A group without anchor keeps its operand list (loads with
 * their consumer entries, then results read outside); two lists merge in time linear in their
 * lengths, which the budget bounds. An anchored group keeps only its count (see anchored_ops). */
#include "ir.h"
#include "../lib/text.h"
#include <stdlib.h>

struct gcr_fuse {
    int n;
    /* per node; the group's fields are valid at its union-find root */
    int *next;          /* member list (the root is the head): next member, -1 at the end */
    int *tail;          /* last member */
    int *size;          /* members */
    int *anchors;       /* anchor members */
    int *anchor;        /* an anchor member, -1 */
    int *pointwise;     /* every member is pointwise */
    int *uniform;       /* every member's result has the shape of rep's */
    int *rep;           /* a member whose result shape stands for the group's */
    int *n_out;         /* members whose value is a graph output */
    int *ext;           /* consumer entries from a member's value to a node outside the group */
    int *ord;           /* position in a topological order of the contracted graph */
    int *vis, epoch;    /* search marks */
    int *seen, seen_epoch; /* duplicate marks while walking one edge list */
    int *out_head, *out_tail, *in_head, *in_tail; /* group-level edge lists */
    int *e_node, *e_next; /* edge entries: target node, next entry */
    int *stack, *pool;
    int64_t *fwd, *bwd; /* (ord << 32 | group) of the groups between the candidates */
    int n_fwd, n_bwd;
    int cached_x, cached_y; /* the pair fwd/bwd were searched for (merge reuses them), -1 */
    /* operand budget (NULL arrays when ir->budget sets none) */
    int *ops;           /* per group: operands of its kernel */
    int **lst;          /* per group without anchor: its operand list (list_* below), else NULL */
    char *lst_heap;     /* lst was malloc'ed (else it lies in slab) */
    int *slab;          /* the single nodes' lists, SLAB ints each */
    int *vext;          /* per value: consumer entries outside its producer's group */
    int *vmark, *vside, *vcnt; /* per value, while two lists merge: a result of side 0 / 1 and
                                  the other side's entries that read it */
    int *kmark, *kpos;  /* per load key, while two lists merge: its slot in the merged list */
    int mark_epoch;
    int *tmp, tmp_cap;  /* a merged list a check counts */
    bool over;          /* the last gcr_fuse_legal refused for the budget */
};

/* An operand list: n_load, n_out, then n_load (key, consumer entries) pairs, then n_out result
 * values. A key is value * 2 + 1 for a batch-norm parameter (broadcast along dim 1, a load of its
 * own) and value * 2 else: over a group's one shape, codegen loads each key once. */
enum { PW_ARGS = (int)(sizeof((gcr_expr *)0)->arg / sizeof(int)), SLAB = 3 + 2 * PW_ARGS, FULL = 1 << 28 };

static int list_len(const int *l) { return 2 + 2 * l[0] + l[1]; }
static int list_load(const int *l, int j) { return l[2 + 2 * j]; }
static int list_entries(const int *l, int j) { return l[3 + 2 * j]; }
static int list_out(const int *l, int j) { return l[2 + 2 * l[0] + j]; }

int gcr_group_find(gcr_ir *ir, int n)
{
    while (ir->nodes[n].group != n) {
        ir->nodes[n].group = ir->nodes[ir->nodes[n].group].group; /* path halving */
        n = ir->nodes[n].group;
    }
    return n;
}

void gcr_fuse_end(gcr_ir *ir)
{
    gcr_fuse *f = ir->fuse;
    if (!f) return;
    free(f->next); /* every int array of the state lives in this one block */
    free(f->e_node);
    free(f->fwd);
    if (f->lst && f->lst_heap)
        for (int i = 0; i < f->n; i++)
            if (f->lst_heap[i]) free(f->lst[i]);
    free(f->ops); /* and every int array of the budget in this one */
    free(f->lst);
    free(f->lst_heap);
    free(f->tmp);
    free(f);
    ir->fuse = NULL;
}

/* node i as a group of its own: its operand count, and its list when pointwise */
static void budget_node(gcr_ir *ir, int i)
{
    gcr_fuse *f = ir->fuse;
    const gcr_node *nd = &ir->nodes[i];
    gcr_role role = gcr_kind_of(nd->op)->role;
    f->lst[i] = NULL;
    /* a reduction passes its input and its result; a hooked anchor's own operands are no extras */
    f->ops[i] = role == GCR_ROLE_OWN ? 2 : 0;
    if (role != GCR_ROLE_BODY || nd->dead) return;
    int *l = f->slab + (size_t)i * SLAB, nl = 0;
    for (int s = 0; s < nd->n_in && s < PW_ARGS; s++) {
        if (nd->in[s] < 0) continue;
        int key = nd->in[s] * 2 + (nd->op == GCR_OP_BATCH_NORM && s > 0), j = 0;
        while (j < nl && l[2 + 2 * j] != key) j++;
        if (j == nl) {
            l[2 + 2 * j] = key;
            l[3 + 2 * j] = 0;
            nl++;
        }
        l[3 + 2 * j]++;
    }
    const gcr_value *v = &ir->values[nd->out];
    l[0] = nl;
    l[1] = v->out_index >= 0 || v->n_cons > 0;
    if (l[1]) l[2 + 2 * nl] = nd->out;
    f->lst[i] = l;
    f->ops[i] = l[0] + l[1];
}

/* the budget's state, every node a group of its own (nothing to keep without a budget) */
static gcr_status budget_begin(gcr_ir *ir)
{
    if (ir->budget.own <= 0 && ir->budget.hooked <= 0) return GCR_OK;
    gcr_fuse *f = ir->fuse;
    size_t n = (size_t)f->n, nv = (size_t)ir->n_values;
    f->ops = malloc(sizeof(int) * (n * (1 + SLAB) + 8 * nv + 1));
    f->lst = malloc(sizeof(int *) * (n + 1));
    f->lst_heap = calloc(n + 1, 1);
    if (!f->ops || !f->lst || !f->lst_heap) {
        gcr_fuse_end(ir);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "fuse: out of host memory for the operand budget of %zu nodes", n);
    }
    f->slab = f->ops + n;
    f->vext = f->slab + n * SLAB;
    f->vmark = f->vext + nv;
    f->vside = f->vmark + nv;
    f->vcnt = f->vside + nv;
    f->kmark = f->vcnt + nv;
    f->kpos = f->kmark + 2 * nv;
    for (size_t v = 0; v < nv; v++) {
        f->vext[v] = ir->values[v].n_cons;
        f->vmark[v] = f->kmark[2 * v] = f->kmark[2 * v + 1] = 0;
    }
    for (int i = 0; i < f->n; i++) budget_node(ir, i);
    return GCR_OK;
}

/* appends an entry for node `to` to the list (head, tail) */
static void edge_push(gcr_fuse *f, int *head, int *tail, int e, int to)
{
    f->e_node[e] = to;
    f->e_next[e] = -1;
    if (*tail >= 0) f->e_next[*tail] = e;
    else *head = e;
    *tail = e;
}

gcr_status gcr_fuse_begin(gcr_ir *ir)
{
    gcr_fuse_end(ir);
    int n = ir->n_nodes, m = 0;
    for (int i = 0; i < n; i++)
        if (!ir->nodes[i].dead) m += ir->values[ir->nodes[i].out].n_cons;
    gcr_fuse *f = calloc(1, sizeof *f);
    enum { N_ARRAYS = 20 };
    int *block = f ? malloc(sizeof(int) * (size_t)N_ARRAYS * (size_t)(n + 2)) : NULL;
    int *edges = block ? malloc(sizeof(int) * 2 * (size_t)(2 * m + 1)) : NULL;
    int64_t *keys = edges ? malloc(sizeof(int64_t) * 2 * (size_t)(n + 1)) : NULL;
    if (!keys) {
        free(f);
        free(block);
        free(edges);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "fuse: out of host memory for %d nodes", n);
    }
    ir->fuse = f;
    f->n = n;
    int **arrays[N_ARRAYS] = {&f->next, &f->tail, &f->size, &f->anchors, &f->anchor, &f->pointwise, &f->uniform,
                              &f->rep, &f->n_out, &f->ext, &f->ord, &f->vis, &f->seen, &f->out_head, &f->out_tail,
                              &f->in_head, &f->in_tail, &f->stack, &f->pool, NULL};
    for (int k = 0; arrays[k]; k++) *arrays[k] = block + (size_t)k * (size_t)(n + 2);
    f->e_node = edges;
    f->e_next = edges + 2 * m + 1;
    f->fwd = keys;
    f->bwd = keys + n + 1;
    f->cached_x = f->cached_y = -1;
    for (int i = 0; i < n; i++) {
        const gcr_node *nd = &ir->nodes[i];
        ir->nodes[i].group = i;
        f->next[i] = -1;
        f->tail[i] = i;
        f->size[i] = 1;
        f->anchors[i] = gcr_op_is_anchor(nd->op);
        f->anchor[i] = f->anchors[i] ? i : -1;
        f->pointwise[i] = gcr_op_is_pointwise(nd->op);
        f->uniform[i] = 1;
        f->rep[i] = i;
        f->n_out[i] = ir->values[nd->out].out_index >= 0;
        f->ext[i] = 0;
        f->ord[i] = i; /* trace order is topological */
        f->vis[i] = f->seen[i] = 0;
        f->out_head[i] = f->out_tail[i] = f->in_head[i] = f->in_tail[i] = -1;
    }
    int e = 0;
    for (int i = 0; i < n; i++) {
        if (ir->nodes[i].dead) continue; /* a folded node's value belongs to its new producer */
        int nc;
        const int *cons = gcr_ir_consumers(ir, ir->nodes[i].out, &nc);
        f->ext[i] = nc;
        for (int j = 0; j < nc; j++) {
            edge_push(f, &f->out_head[i], &f->out_tail[i], e++, cons[j]);
            edge_push(f, &f->in_head[cons[j]], &f->in_tail[cons[j]], e++, i);
        }
    }
    return budget_begin(ir);
}

bool gcr_fuse_skipped(const gcr_ir *ir, const char *want) { return gcr_list_has(ir->ctx->knobs.skip_fuse, want); }

/* skip_fuse tokens: each kind's own (kinds.def): pointwise, reduce (reductions and pools), conv, matmul */
static bool kind_skipped(const gcr_ir *ir, const gcr_kind_info *k) { return gcr_fuse_skipped(ir, k->skip); }

/* a 32- or 64-bit integer: generated kernels compute in float, exact only to 2^24, and saturate
 * where a cast of integers wraps; such a node runs on the backend's own kernel */
static bool wide_int(const gcr_ir *ir, int v)
{
    return v >= 0 && (ir->values[v].m.dtype == GCR_I32 || ir->values[v].m.dtype == GCR_I64);
}

bool gcr_fuse_enabled(const gcr_ir *ir, int n)
{
    const gcr_node *nd = &ir->nodes[n];
    const gcr_kind_info *k = gcr_kind_of(nd->op);
    if (!ir->ctx->knobs.fusion || nd->dead || nd->nofuse) return false;
    if (!gcr_op_is_pointwise(nd->op) && !gcr_op_is_anchor(nd->op)) return false;
    if (wide_int(ir, nd->out)) return false;
    for (int i = 0; i < nd->n_in; i++)
        if (wide_int(ir, nd->in[i])) return false;
    return !kind_skipped(ir, k);
}

/* every member of group root is pointwise with output shape equal to shape */
static bool group_space_is(const gcr_ir *ir, int root, const gcr_meta *shape)
{
    const gcr_fuse *f = ir->fuse;
    return f->pointwise[root] && f->uniform[root] && gcr_meta_same_shape(&ir->values[ir->nodes[f->rep[root]].out].m, shape);
}

/* Walks group g's out (forward) or in list once, dropping entries that point into g or repeat a
 * group; for every other group h reached, stores h in f->stack[*sp] when it is `to`'s side of
 * the window and unvisited. Returns true when a group other than `from` has an edge to `to`. */
static bool walk_edges(gcr_ir *ir, int g, int from, int to, bool forward, int *sp, int64_t *found, int *nf)
{
    gcr_fuse *f = ir->fuse;
    int *head = forward ? &f->out_head[g] : &f->in_head[g], *tail = forward ? &f->out_tail[g] : &f->in_tail[g];
    int prev = -1;
    f->seen_epoch++;
    for (int e = *head; e >= 0;) {
        int nx = f->e_next[e], h = gcr_group_find(ir, f->e_node[e]);
        if (h == g || f->seen[h] == f->seen_epoch) { /* internal or repeated: drop it */
            if (prev >= 0) f->e_next[prev] = nx;
            else *head = nx;
            if (*tail == e) *tail = prev;
            e = nx;
            continue;
        }
        f->seen[h] = f->seen_epoch;
        prev = e;
        e = nx;
        if (h == to) {
            if (g != from) return true; /* from reaches to through another group */
            continue;
        }
        bool inside = forward ? f->ord[h] < f->ord[to] : f->ord[h] > f->ord[to];
        if (!inside || f->vis[h] == f->epoch) continue;
        f->vis[h] = f->epoch;
        f->stack[(*sp)++] = h;
        found[(*nf)++] = (int64_t)f->ord[h] << 32 | h;
    }
    return false;
}

/* Groups reachable from `from` (forward: along edges; else against them) that lie strictly
 * between from and to in the order, into found; true when `to` is among their neighbours. */
static bool search(gcr_ir *ir, int from, int to, bool forward, int64_t *found, int *nf)
{
    gcr_fuse *f = ir->fuse;
    int sp = 0;
    *nf = 0;
    f->epoch++;
    f->vis[from] = f->epoch;
    f->stack[sp++] = from;
    while (sp > 0)
        if (walk_edges(ir, f->stack[--sp], from, to, forward, &sp, found, nf)) return true;
    return false;
}

/* Would groups ra and rb merged form a cycle, a path that leaves the union and comes back? In a
 * topological order such a path runs from the earlier group to the later through groups between
 * them; the groups met on both sides are kept for the merge's reordering. */
static bool would_cycle(gcr_ir *ir, int ra, int rb)
{
    gcr_fuse *f = ir->fuse;
    int x = f->ord[ra] < f->ord[rb] ? ra : rb, y = x == ra ? rb : ra;
    f->cached_x = f->cached_y = -1;
    if (search(ir, x, y, true, f->fwd, &f->n_fwd) || search(ir, y, x, false, f->bwd, &f->n_bwd)) return true;
    f->cached_x = x;
    f->cached_y = y;
    return false;
}

/* the slot of anchor b that reads value u and may take a prologue, or -1 */
static int prologue_slot(const gcr_ir *ir, int b, int u)
{
    const gcr_node *nb = &ir->nodes[b];
    int slot = -1;
    for (int j = 0; j < nb->n_in; j++)
        if (nb->in[j] == u) {
            if (slot >= 0) return -1; /* read at two slots */
            slot = j;
        }
    if (slot < 0 || slot >= GCR_MAX_ANCHOR_IN) return -1;
    const gcr_kind_info *k = gcr_kind_of(nb->op);
    return k->prologue && k->prologue(&nb->p, slot) ? slot : -1;
}

/* Writes the operand list of groups ls and lo as one kernel into out (room for both) and returns
 * its operand count: a value one side computes is no load of the other, a load both make counts
 * once, and a result stays an operand only while it is a graph output or read outside both. */
static int list_union(gcr_ir *ir, const int *ls, const int *lo, int *out)
{
    gcr_fuse *f = ir->fuse;
    int ep = ++f->mark_epoch;
    const int *side[2] = {ls, lo};
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < side[s][1]; j++) {
            int v = list_out(side[s], j);
            f->vmark[v] = ep;
            f->vside[v] = s;
            f->vcnt[v] = 0;
        }
    int nl = 0, no = 0;
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < side[s][0]; j++) {
            int key = list_load(side[s], j), e = list_entries(side[s], j), v = key >> 1;
            if (f->vmark[v] == ep && f->vside[v] != s) {
                f->vcnt[v] += e;
            } else if (f->kmark[key] == ep) {
                out[3 + 2 * f->kpos[key]] += e;
            } else {
                f->kmark[key] = ep;
                f->kpos[key] = nl;
                out[2 + 2 * nl] = key;
                out[3 + 2 * nl] = e;
                nl++;
            }
        }
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < side[s][1]; j++) {
            int v = list_out(side[s], j);
            if (ir->values[v].out_index >= 0 || f->vext[v] > f->vcnt[v]) out[2 + 2 * nl + no++] = v;
        }
    out[0] = nl;
    out[1] = no;
    return nl + no;
}

/* Operands of groups ra and rb (neither anchored) as one kernel: their sum bounds it, as merging
 * adds none; past the budget the merged list counts it exactly (FULL when there is none). */
static int pointwise_ops(gcr_ir *ir, int ra, int rb)
{
    gcr_fuse *f = ir->fuse;
    int sum = f->ops[ra] + f->ops[rb];
    if (sum <= ir->budget.own) return sum;
    if (!f->lst[ra] || !f->lst[rb]) return FULL;
    int need = list_len(f->lst[ra]) + list_len(f->lst[rb]);
    if (need > f->tmp_cap) {
        int *t = realloc(f->tmp, sizeof(int) * (size_t)need);
        if (!t) return FULL; /* refused: kernels left apart, never wrong */
        f->tmp = t;
        f->tmp_cap = need;
    }
    return list_union(ir, f->lst[ra], f->lst[rb], f->tmp);
}

/* Operands of anchor group ra with pointwise group rp joined, as codegen passes them. As a
 * prologue (rp comes first) rp's loads join the kernel's (its one result feeds the anchor and is
 * none); as an epilogue its loads (the anchor's result among them) and results do; a reduction's
 * own input or result parameter gives way to them. Read before the merge reorders the groups. */
static int anchored_ops(const gcr_ir *ir, int ra, int rp)
{
    const gcr_fuse *f = ir->fuse;
    int prologue = f->ord[rp] < f->ord[ra];
    int reduce = gcr_kind_of(ir->nodes[f->anchor[ra]].op)->role == GCR_ROLE_OWN;
    return f->ops[ra] + f->ops[rp] - prologue - reduce;
}

/* would groups ra and rb as one kernel stay within the budget? (a reduction makes a kernel of
 * its own; conv, matmul and pool kernels take the prologue's and epilogue's operands as extras;
 * a conv->conv pair takes both groups' extras) */
static bool within_budget(gcr_ir *ir, int ra, int rb)
{
    gcr_fuse *f = ir->fuse;
    if (!f->ops) return true;
    if (!f->anchors[ra] && !f->anchors[rb]) return ir->budget.own <= 0 || pointwise_ops(ir, ra, rb) <= ir->budget.own;
    if (f->anchors[ra] && f->anchors[rb]) return ir->budget.hooked <= 0 || f->ops[ra] + f->ops[rb] <= ir->budget.hooked;
    int a = f->anchors[ra] ? ra : rb;
    int max = gcr_kind_of(ir->nodes[f->anchor[a]].op)->role == GCR_ROLE_OWN ? ir->budget.own : ir->budget.hooked;
    return max <= 0 || anchored_ops(ir, a, a == ra ? rb : ra) <= max;
}

bool gcr_fuse_over_budget(const gcr_ir *ir) { return ir->fuse && ir->fuse->over; }

int gcr_fuse_anchor(gcr_ir *ir, int n) { return ir->fuse ? ir->fuse->anchor[gcr_group_find(ir, n)] : -1; }

/* a conv of one group per channel, one filter each */
static bool conv_depthwise(const gcr_ir *ir, const gcr_node *n)
{
    const gcr_meta *x = &ir->values[n->in[0]].m, *w = &ir->values[n->in[1]].m;
    return n->p.conv.groups == x->shape[1] && w->shape[0] == x->shape[1] && w->shape[1] == 1;
}

/* a 1x1 conv of one group at stride 1 without padding */
static bool conv_pointwise(const gcr_ir *ir, const gcr_node *n)
{
    const gcr_meta *w = &ir->values[n->in[1]].m;
    const gcr_conv2d_params *p = &n->p.conv;
    return w->shape[2] == 1 && w->shape[3] == 1 && p->groups == 1 && p->stride[0] == 1 && p->stride[1] == 1 &&
           p->padding[0] == 0 && p->padding[1] == 0;
}

/* The conv->conv pair of conv a then conv b: a depthwise conv into a 1x1 stride-1 unpadded
 * ungrouped conv, or such a 1x1 conv into a depthwise one, in a form the backend runs as one
 * kernel (ir->convconv): their dtypes one of its, channels-last where it needs it, the depthwise
 * channels and the outputs within its counts; and GCR_CONVCONV not 0 (convconv_chosen asks the
 * rest). */
static bool convconv_offered(const gcr_ir *ir, const gcr_node *na, const gcr_node *nb)
{
    if (na->op != GCR_OP_CONV2D || nb->op != GCR_OP_CONV2D || na->in[0] < 0 || na->in[1] < 0 || nb->in[0] < 0 ||
        nb->in[1] < 0)
        return false;
    const gcr_convconv_caps *cc = &ir->convconv;
    const bool dw_pw = conv_depthwise(ir, na) && conv_pointwise(ir, nb);
    const bool pw_dw = !dw_pw && conv_pointwise(ir, na) && conv_depthwise(ir, nb);
    if (!((dw_pw && (cc->forms & GCR_CONVCONV_DW_PW)) || (pw_dw && (cc->forms & GCR_CONVCONV_PW_DW)))) return false;
    const gcr_meta *x = &ir->values[na->in[0]].m, *wa = &ir->values[na->in[1]].m;
    const gcr_meta *wb = &ir->values[nb->in[1]].m, *y = &ir->values[nb->out].m, *u = &ir->values[nb->in[0]].m;
    const int knob = ir->ctx->knobs.convconv;
    if (knob == 0) return false;
    gcr_dtype dt = x->dtype;
    if (!(cc->dtypes >> dt & 1u) || wa->dtype != dt || wb->dtype != dt || u->dtype != dt || y->dtype != dt) return false;
    if ((na->n_in > 2 && na->in[2] >= 0 && ir->values[na->in[2]].m.dtype != dt) ||
        (nb->n_in > 2 && nb->in[2] >= 0 && ir->values[nb->in[2]].m.dtype != dt))
        return false; /* the biases */
    if (cc->channels_last && ((x->shape[1] > 1 && x->strides[1] != 1) || (y->shape[1] > 1 && y->strides[1] != 1)))
        return false;
    const int64_t C = u->shape[1]; /* the depthwise conv's channels: the value between the two */
    if (cc->c_align > 1 && C % cc->c_align != 0) return false;
    return cc->max_out <= 0 || y->shape[1] <= cc->max_out;
}

/* GCR_CONVCONV's answer for an offered pair that is otherwise legal: 1 yes; 2 (the default) where
 * the backend answers that its kernel is the faster on this pair. Asked last of all the rules,
 * since the backend may measure the pair to answer. */
static bool convconv_chosen(const gcr_ir *ir, const gcr_node *na, const gcr_node *nb)
{
    const gcr_convconv_caps *cc = &ir->convconv;
    if (ir->ctx->knobs.convconv != 2 || !cc->faster) return true;
    const bool dw_pw = conv_depthwise(ir, na) && conv_pointwise(ir, nb); /* as convconv_offered decides */
    const gcr_node *dw = dw_pw ? na : nb, *pw = dw_pw ? nb : na;
    const gcr_convconv_pair pair = {.form = dw_pw ? GCR_CONVCONV_DW_PW : GCR_CONVCONV_PW_DW,
                                    .x = ir->values[na->in[0]].m, .wd = ir->values[dw->in[1]].m,
                                    .wp = ir->values[pw->in[1]].m, .mid = ir->values[nb->in[0]].m,
                                    .y = ir->values[nb->out].m, .dp = dw->p.conv};
    return cc->faster(ir->ctx, &pair);
}

bool gcr_fuse_legal(gcr_ir *ir, int a, int b, gcr_fuse_how how)
{
    gcr_fuse *f = ir->fuse;
    if (f) f->over = false;
    if (!f || a == b || !gcr_fuse_enabled(ir, a) || !gcr_fuse_enabled(ir, b)) return false;
    int ra = gcr_group_find(ir, a), rb = gcr_group_find(ir, b);
    if (ra == rb) return false;
    const gcr_node *na = &ir->nodes[a], *nb = &ir->nodes[b];
    bool pa = gcr_op_is_pointwise(na->op), pb = gcr_op_is_pointwise(nb->op);
    const gcr_value *va = &ir->values[na->out];

    switch (how) {
    case GCR_FUSE_POINTWISE:
    case GCR_FUSE_HORIZONTAL:
        /* two unanchored pointwise groups over one space; extra outputs are allowed */
        if (!pa || !pb || f->anchors[ra] || f->anchors[rb]) return false;
        if (!group_space_is(ir, ra, &ir->values[nb->out].m) || !group_space_is(ir, rb, &va->m)) return false;
        break;
    case GCR_FUSE_EPILOGUE: {
        /* anchor a's result read only by b's pointwise group, which iterates over that result */
        if (!gcr_op_is_anchor(na->op) || !pb || f->anchors[rb]) return false;
        if (va->out_index >= 0 || va->n_cons == 0) return false;
        int nc;
        const int *cons = gcr_ir_consumers(ir, na->out, &nc);
        for (int j = 0; j < nc; j++)
            if (gcr_group_find(ir, cons[j]) != rb) return false;
        if (!group_space_is(ir, rb, &va->m)) return false;
        /* a's group may hold prologues but no epilogue yet: only the anchor's own value leaves
         * it (its nc consumers, all in b's group) */
        if (f->ext[ra] != nc) return false;
        break;
    }
    case GCR_FUSE_PROLOGUE:
        /* a's pointwise group computes only u = a's value, which anchor b alone reads, at a slot
         * whose loads may be transformed: no other member is an output or read outside */
        if (!pa || !gcr_op_is_anchor(nb->op) || f->anchors[ra]) return false;
        if (f->anchors[rb] != 1 || f->anchor[rb] != b) return false;
        if (prologue_slot(ir, b, na->out) < 0) return false;
        if (va->out_index >= 0 || va->n_cons != 1) return false;
        if (f->n_out[ra] != 0 || f->ext[ra] != 1) return false;
        if (!group_space_is(ir, ra, &va->m)) return false;
        break;
    case GCR_FUSE_CONVCONV: {
        /* a's group (the first conv, its epilogue, no prologue) computes only u, which conv b
         * alone reads, at input 0; b's group holds b and at most its epilogue */
        if (f->anchors[ra] != 1 || f->anchor[ra] != a || f->anchors[rb] != 1 || f->anchor[rb] != b) return false;
        if (!convconv_offered(ir, na, nb)) return false;
        int u = nb->in[0], pu = ir->values[u].producer, px = ir->values[na->in[0]].producer;
        if (pu < 0 || gcr_group_find(ir, pu) != ra || (px >= 0 && gcr_group_find(ir, px) == ra)) return false;
        /* one reader (b at input 0: a second read by b counts too) and no graph output in a's group */
        if (ir->values[u].n_cons != 1 || f->n_out[ra] != 0 || f->ext[ra] != 1) return false;
        break;
    }
    default: return false;
    }
    if (!within_budget(ir, ra, rb)) {
        f->over = true;
        return false;
    }
    if (would_cycle(ir, ra, rb)) return false;
    return how != GCR_FUSE_CONVCONV || convconv_chosen(ir, na, nb);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Repairs the order for x and y (x earlier) becoming group u: the positions of x, y and the
 * groups found between them go, in order, to the groups that reach y (before), u, and the
 * groups x reaches (after); every other group keeps its position. */
static void reorder(gcr_fuse *f, int x, int y, int u)
{
    int np = 0;
    f->pool[np++] = f->ord[x];
    f->pool[np++] = f->ord[y];
    for (int i = 0; i < f->n_bwd; i++) f->pool[np++] = (int)(f->bwd[i] >> 32);
    for (int i = 0; i < f->n_fwd; i++) f->pool[np++] = (int)(f->fwd[i] >> 32);
    qsort(f->pool, (size_t)np, sizeof(int), cmp_int);
    qsort(f->bwd, (size_t)f->n_bwd, sizeof(int64_t), cmp_i64);
    qsort(f->fwd, (size_t)f->n_fwd, sizeof(int64_t), cmp_i64);
    int k = 0;
    for (int i = 0; i < f->n_bwd; i++) f->ord[(int)(f->bwd[i] & 0xffffffff)] = f->pool[k++];
    f->ord[u] = f->pool[k++];
    k++; /* the one position left over */
    for (int i = 0; i < f->n_fwd; i++) f->ord[(int)(f->fwd[i] & 0xffffffff)] = f->pool[k++];
}

/* consumer entries between groups s and o in either direction, by a walk over s's members */
static int cross_entries(gcr_ir *ir, int s, int o)
{
    const gcr_fuse *f = ir->fuse;
    int count = 0;
    for (int m = s; m >= 0; m = f->next[m]) {
        const gcr_node *nd = &ir->nodes[m];
        int nc;
        const int *cons = gcr_ir_consumers(ir, nd->out, &nc);
        for (int j = 0; j < nc; j++) count += gcr_group_find(ir, cons[j]) == o;
        for (int k = 0; k < nd->n_in; k++) {
            if (nd->in[k] < 0) continue;
            int p = ir->values[nd->in[k]].producer;
            count += p >= 0 && !ir->nodes[p].dead && gcr_group_find(ir, p) == o;
        }
    }
    return count;
}

static void list_drop(gcr_fuse *f, int g)
{
    if (f->lst_heap[g]) free(f->lst[g]);
    f->lst[g] = NULL;
    f->lst_heap[g] = 0;
}

/* The operands of groups ra and rb merged, kept at root: a count for an anchored group, else the
 * merged list, whose results' outside readers lose the entries the merge took inside. Runs
 * before the merge reorders the groups. */
static void budget_merge(gcr_ir *ir, int ra, int rb, int root)
{
    gcr_fuse *f = ir->fuse;
    if (!f->ops) return;
    int ops, *l = NULL;
    if (f->anchors[ra] && f->anchors[rb]) {
        ops = f->ops[ra] + f->ops[rb];
    } else if (f->anchors[ra] || f->anchors[rb]) {
        int a = f->anchors[ra] ? ra : rb;
        ops = anchored_ops(ir, a, a == ra ? rb : ra);
    } else if (f->lst[ra] && f->lst[rb] &&
               (l = malloc(sizeof(int) * (size_t)(list_len(f->lst[ra]) + list_len(f->lst[rb]))))) {
        ops = list_union(ir, f->lst[ra], f->lst[rb], l);
        for (int s = 0; s < 2; s++) {
            const int *x = s ? f->lst[rb] : f->lst[ra];
            for (int j = 0; j < x[1]; j++) f->vext[list_out(x, j)] -= f->vcnt[list_out(x, j)];
        }
    } else {
        ops = FULL; /* out of host memory: the group takes no more members */
    }
    list_drop(f, ra);
    list_drop(f, rb);
    f->ops[root] = ops;
    f->lst[root] = l;
    f->lst_heap[root] = l != NULL;
}

static void list_append(int *head_a, int *tail_a, int head_b, int tail_b, int *next)
{
    if (head_b < 0) return;
    if (*tail_a >= 0) next[*tail_a] = head_b;
    else *head_a = head_b;
    *tail_a = tail_b;
}

void gcr_fuse_merge(gcr_ir *ir, int a, int b)
{
    gcr_fuse *f = ir->fuse;
    int ra = gcr_group_find(ir, a), rb = gcr_group_find(ir, b);
    if (ra == rb || !f) return;
    int x = f->ord[ra] < f->ord[rb] ? ra : rb, y = x == ra ? rb : ra;
    if ((f->cached_x != x || f->cached_y != y) && would_cycle(ir, ra, rb)) {
        gcr_info(ir->ctx, "fuse: merge of groups %d and %d refused (it would form a cycle)", ra, rb);
        return;
    }
    /* the smaller id stays root so a group's root is its first node; of two anchors (a conv->conv
     * pair) the later one, which the other's result feeds, is the kernel's */
    int root = ra < rb ? ra : rb, other = root == ra ? rb : ra;
    int anchor = f->anchors[y] ? f->anchor[y] : f->anchor[x];
    int small = f->size[ra] <= f->size[rb] ? ra : rb;
    int cross = cross_entries(ir, small, small == ra ? rb : ra);
    budget_merge(ir, ra, rb, root);
    reorder(f, x, y, root);
    f->cached_x = f->cached_y = -1;
    ir->nodes[other].group = root;
    f->next[f->tail[root]] = other;
    f->tail[root] = f->tail[other];
    f->size[root] += f->size[other];
    f->anchor[root] = anchor;
    f->anchors[root] += f->anchors[other];
    f->uniform[root] = f->uniform[root] && f->uniform[other] &&
                       gcr_meta_same_shape(&ir->values[ir->nodes[f->rep[root]].out].m,
                                           &ir->values[ir->nodes[f->rep[other]].out].m);
    f->pointwise[root] = f->pointwise[root] && f->pointwise[other];
    f->n_out[root] += f->n_out[other];
    f->ext[root] += f->ext[other] - cross;
    list_append(&f->out_head[root], &f->out_tail[root], f->out_head[other], f->out_tail[other], f->e_next);
    list_append(&f->in_head[root], &f->in_tail[root], f->in_head[other], f->in_tail[other], f->e_next);
}
