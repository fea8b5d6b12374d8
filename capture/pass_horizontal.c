/* pass_horizontal.c — fusion rule 6 (knobs.horizontal): sibling pointwise groups that read the
 * same value over the same iteration space merge, so the shared input is read once.
 *
 * For each value, its pointwise readers are reduced to one per group and sorted by shape (only
 * groups over one shape may merge); each group then tries the later ones of its shape. A value
 * read by thousands of siblings must not cost a try per pair, so once the tries refused there
 * exceed a budget linear in the number of groups, the rest stay apart: that leaves kernels
 * unfused, never wrong. A group refused because its kernel would pass the backend's operand
 * budget takes no more siblings (the next one starts a kernel of its own), so a large set becomes
 * a few kernels within the budget at a refusal each. */
#include "ir.h"
#include <stdlib.h>

typedef struct cand {
    int node;  /* a reader of the value standing for its group */
    int order; /* position among the value's readers (keeps the sort stable) */
    const gcr_meta *m;
    int joined; /* merged into an earlier candidate's group */
} cand;

static int by_shape(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->m->ndim != b->m->ndim) return a->m->ndim < b->m->ndim ? -1 : 1;
    int c = memcmp(a->m->shape, b->m->shape, sizeof(int64_t) * (size_t)a->m->ndim);
    if (c) return c;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* tries the pairs of one shape's candidates c[0..n), earlier first (one that joined an earlier
 * candidate's group tries nothing more of its own); returns the refusals left in the budget */
static int merge_bucket(gcr_ir *ir, cand *c, int n, int v, int budget)
{
    for (int i = 0; i < n && budget > 0; i++) {
        int a = c[i].node;
        if (c[i].joined) continue;
        for (int j = i + 1; j < n && budget > 0; j++) {
            int b = c[j].node;
            if (c[j].joined) continue;
            if (!gcr_fuse_legal(ir, a, b, GCR_FUSE_HORIZONTAL)) {
                budget--;
                if (gcr_fuse_over_budget(ir)) break; /* a's kernel is full: the next starts its own */
                continue;
            }
            gcr_info(ir->ctx, "fuse: horizontal %s#%d with %s#%d (both read value %d)", gcr_op_table[ir->nodes[a].op].name,
                     a, gcr_op_table[ir->nodes[b].op].name, b, v);
            gcr_fuse_merge(ir, a, b);
            c[j].joined = 1;
        }
    }
    return budget;
}

gcr_status gcr_pass_horizontal(gcr_ir *ir)
{
    if (!ir->ctx->knobs.horizontal) return GCR_OK;
    int n = ir->n_nodes;
    cand *c = malloc(sizeof *c * (size_t)(n + 1));
    int *stamp = calloc((size_t)n + 1, sizeof(int)); /* per group root: v + 1 once a reader stands for it */
    if (!c || !stamp) {
        free(c);
        free(stamp);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "fuse: out of host memory (horizontal pass, %d nodes)", n);
    }
    for (int v = 0; v < ir->n_values; v++) {
        int nc, k = 0;
        const int *cons = gcr_ir_consumers(ir, v, &nc);
        for (int i = 0; i < nc; i++) {
            int r = gcr_group_find(ir, cons[i]);
            if (stamp[r] == v + 1 || !gcr_op_is_pointwise(ir->nodes[cons[i]].op)) continue;
            stamp[r] = v + 1;
            c[k++] = (cand){cons[i], i, &ir->values[ir->nodes[cons[i]].out].m, 0};
        }
        if (k < 2) continue;
        qsort(c, (size_t)k, sizeof *c, by_shape);
        int budget = 4 * k + 64;
        for (int i = 0, j; i < k && budget > 0; i = j) {
            for (j = i + 1; j < k && gcr_meta_same_shape(c[i].m, c[j].m); j++) {}
            budget = merge_bucket(ir, c + i, j - i, v, budget);
        }
    }
    free(c);
    free(stamp);
    return GCR_OK;
}
