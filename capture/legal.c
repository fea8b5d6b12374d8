/* legal.c — the one fusion legality rule and the union-find every pass merges through. Passes
 * only propose merges; whether two nodes may share a kernel is decided here alone. */
#include "ir.h"
#include <stdlib.h>

int gcr_group_find(gcr_ir *ir, int n)
{
    while (ir->nodes[n].group != n) {
        ir->nodes[n].group = ir->nodes[ir->nodes[n].group].group; /* path halving */
        n = ir->nodes[n].group;
    }
    return n;
}

void gcr_fuse_merge(gcr_ir *ir, int a, int b)
{
    int ra = gcr_group_find(ir, a), rb = gcr_group_find(ir, b);
    if (ra == rb) return;
    /* the smaller id stays root so a group's root is its first node */
    if (ra < rb) ir->nodes[rb].group = ra;
    else ir->nodes[ra].group = rb;
}

static bool is_anchor_kind(gcr_kind k)
{
    return k == GCR_KIND_CONV || k == GCR_KIND_MATMUL || k == GCR_KIND_REDUCE || k == GCR_KIND_POOL;
}

/* skip_fuse tokens: pointwise, reduce (reductions and pools), conv, matmul */
static bool kind_skipped(const gcr_ir *ir, gcr_kind k)
{
    const char *s = ir->ctx->knobs.skip_fuse;
    if (!s) return false;
    const char *want = k == GCR_KIND_POINTWISE ? "pointwise" : k == GCR_KIND_CONV ? "conv"
                       : k == GCR_KIND_MATMUL  ? "matmul"    : "reduce";
    size_t n = strlen(want);
    for (const char *p = s; (p = strstr(p, want)); p += n)
        if ((p == s || p[-1] == ',' || p[-1] == ' ') && (p[n] == 0 || p[n] == ',' || p[n] == ' ')) return true;
    return false;
}

bool gcr_fuse_enabled(const gcr_ir *ir, int n)
{
    const gcr_node *nd = &ir->nodes[n];
    gcr_kind k = gcr_op_table[nd->op].kind;
    if (!ir->ctx->knobs.fusion || nd->dead || nd->nofuse) return false;
    if (k != GCR_KIND_POINTWISE && !is_anchor_kind(k)) return false;
    return !kind_skipped(ir, k);
}

/* the group's anchor node, or -1; *count gets the number of anchors (legality keeps it <= 1) */
static int group_anchor(gcr_ir *ir, int root, int *count)
{
    int a = -1, c = 0;
    for (int i = root; i < ir->n_nodes; i++) {
        if (ir->nodes[i].dead || gcr_group_find(ir, i) != root) continue;
        if (is_anchor_kind(gcr_op_table[ir->nodes[i].op].kind)) {
            a = i;
            c++;
        }
    }
    if (count) *count = c;
    return a;
}

/* every member of group root is pointwise with output shape equal to shape */
static bool group_space_is(gcr_ir *ir, int root, const gcr_meta *shape)
{
    for (int i = root; i < ir->n_nodes; i++) {
        if (ir->nodes[i].dead || gcr_group_find(ir, i) != root) continue;
        if (gcr_op_table[ir->nodes[i].op].kind != GCR_KIND_POINTWISE) return false;
        if (!gcr_meta_same_shape(&ir->values[ir->nodes[i].out].m, shape)) return false;
    }
    return true;
}

/* Would groups ra and rb merged form a cycle: does a path leave the union and come back? Other
 * groups count as contracted (one kernel each), so reaching any member of a group reaches all of
 * it, earlier members included; hence no id bound can prune the search. */
static bool would_cycle(gcr_ir *ir, int ra, int rb)
{
    int n = ir->n_nodes;
    int *root = malloc(sizeof(int) * (size_t)(n + 1)), *start = calloc((size_t)n + 2, sizeof(int));
    int *mem = malloc(sizeof(int) * (size_t)(n + 1)), *stack = malloc(sizeof(int) * (size_t)(n + 1));
    char *seen = calloc((size_t)n + 1, 1); /* per group root */
    bool cyc = true; /* OOM: refuse the merge */
    if (!root || !start || !mem || !stack || !seen) goto out;
    for (int i = 0; i < n; i++) {
        root[i] = ir->nodes[i].dead ? -1 : gcr_group_find(ir, i);
        if (root[i] == rb) root[i] = ra; /* the union is one group */
        if (root[i] >= 0) start[root[i] + 1]++;
    }
    for (int i = 0; i < n; i++) start[i + 1] += start[i];
    {
        int *fill = calloc((size_t)n + 1, sizeof(int));
        if (!fill) goto out;
        for (int i = 0; i < n; i++)
            if (root[i] >= 0) mem[start[root[i]] + fill[root[i]]++] = i;
        free(fill);
    }
    int sp = 0;
    cyc = false;
    seen[ra] = 1;
    stack[sp++] = ra;
    while (sp > 0 && !cyc) {
        int g = stack[--sp];
        for (int m = start[g]; m < start[g + 1] && !cyc; m++) {
            int x = mem[m];
            int nc;
            const int *cons = gcr_ir_consumers(ir, ir->nodes[x].out, &nc);
            for (int j = 0; j < nc; j++) {
                int y = cons[j], gy = root[y];
                if (gy < 0 || gy == g) continue;
                if (gy == ra) { /* back into the union from outside */
                    if (g != ra) { cyc = true; break; }
                    continue;
                }
                if (!seen[gy]) {
                    seen[gy] = 1;
                    stack[sp++] = gy;
                }
            }
        }
    }
out:
    free(root);
    free(start);
    free(mem);
    free(stack);
    free(seen);
    return cyc;
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
    switch (gcr_op_table[nb->op].kind) {
    case GCR_KIND_CONV: /* padded zeros must stay zeros: only unpadded convs transform their loads */
        return slot == 0 && nb->p.conv.padding[0] == 0 && nb->p.conv.padding[1] == 0 ? 0 : -1;
    case GCR_KIND_MATMUL: return slot <= 1 ? slot : -1;
    case GCR_KIND_REDUCE: return slot == 0 ? 0 : -1;
    default: return -1; /* pools pad with -inf / count padding: keep their loads plain */
    }
}

bool gcr_fuse_legal(gcr_ir *ir, int a, int b, gcr_fuse_how how)
{
    if (a == b || !gcr_fuse_enabled(ir, a) || !gcr_fuse_enabled(ir, b)) return false;
    int ra = gcr_group_find(ir, a), rb = gcr_group_find(ir, b);
    if (ra == rb) return false;
    const gcr_node *na = &ir->nodes[a], *nb = &ir->nodes[b];
    gcr_kind ka = gcr_op_table[na->op].kind, kb = gcr_op_table[nb->op].kind;
    const gcr_value *va = &ir->values[na->out];
    int n_anchor_a, n_anchor_b;
    group_anchor(ir, ra, &n_anchor_a);
    int anchor_b = group_anchor(ir, rb, &n_anchor_b);

    switch (how) {
    case GCR_FUSE_POINTWISE:
    case GCR_FUSE_HORIZONTAL:
        /* two unanchored pointwise groups over one space; extra outputs are allowed */
        if (ka != GCR_KIND_POINTWISE || kb != GCR_KIND_POINTWISE || n_anchor_a || n_anchor_b) return false;
        if (!group_space_is(ir, ra, &ir->values[nb->out].m) || !group_space_is(ir, rb, &va->m)) return false;
        break;
    case GCR_FUSE_EPILOGUE: {
        /* anchor a's result read only by b's pointwise group, which iterates over that result */
        if (!is_anchor_kind(ka) || kb != GCR_KIND_POINTWISE || n_anchor_b) return false;
        if (va->out_index >= 0 || va->n_cons == 0) return false;
        int nc;
        const int *cons = gcr_ir_consumers(ir, na->out, &nc);
        for (int j = 0; j < nc; j++)
            if (gcr_group_find(ir, cons[j]) != rb) return false;
        if (!group_space_is(ir, rb, &va->m)) return false;
        /* a's group may hold prologues but no epilogue yet: only the anchor's own value leaves it */
        for (int i = ra; i < ir->n_nodes; i++) {
            if (ir->nodes[i].dead || gcr_group_find(ir, i) != ra || i == a) continue;
            int n2;
            const int *c2 = gcr_ir_consumers(ir, ir->nodes[i].out, &n2);
            for (int j = 0; j < n2; j++)
                if (gcr_group_find(ir, c2[j]) != ra) return false;
        }
        break;
    }
    case GCR_FUSE_PROLOGUE: {
        /* a's pointwise group computes only u = a's value, which anchor b alone reads, at a slot
         * whose loads may be transformed */
        if (ka != GCR_KIND_POINTWISE || !is_anchor_kind(kb) || n_anchor_a) return false;
        if (anchor_b != b) return false;
        if (prologue_slot(ir, b, na->out) < 0) return false;
        if (va->out_index >= 0 || va->n_cons != 1) return false;
        for (int i = ra; i < ir->n_nodes; i++) {
            if (ir->nodes[i].dead || gcr_group_find(ir, i) != ra || i == a) continue;
            const gcr_value *vi = &ir->values[ir->nodes[i].out];
            if (vi->out_index >= 0) return false;
            int n2;
            const int *c2 = gcr_ir_consumers(ir, ir->nodes[i].out, &n2);
            for (int j = 0; j < n2; j++)
                if (gcr_group_find(ir, c2[j]) != ra) return false;
        }
        if (!group_space_is(ir, ra, &va->m)) return false;
        break;
    }
    default: return false;
    }
    return !would_cycle(ir, ra, rb);
}
