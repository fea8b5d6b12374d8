/* pass_prologue.c — fusion rule 3: a pointwise group (per-channel scale, activation) whose only
 * result feeds one conv / matmul input that nothing else reads runs in that kernel's load, e.g.
 * the squeeze-excite x * hardsigmoid(s[n,c]) before a 1x1 conv. */
#include "ir.h"

void gcr_fuse_try_prologue(gcr_ir *ir, int b)
{
    const gcr_node *nb = &ir->nodes[b];
    for (int j = 0; j < nb->n_in && j < GCR_MAX_ANCHOR_IN; j++) {
        if (nb->in[j] < 0) continue;
        int a = ir->values[nb->in[j]].producer;
        if (a < 0) continue;
        if (gcr_fuse_legal(ir, a, b, GCR_FUSE_PROLOGUE)) {
            gcr_info(ir->ctx, "fuse: prologue of %s#%d input %d from %s#%d", gcr_op_table[nb->op].name, b, j,
                     gcr_op_table[ir->nodes[a].op].name, a);
            gcr_fuse_merge(ir, a, b);
        }
    }
}

gcr_status gcr_pass_prologue(gcr_ir *ir)
{
    for (int b = 0; b < ir->n_nodes; b++) {
        const gcr_kind_info *k = gcr_kind_of(ir->nodes[b].op);
        if (!ir->nodes[b].dead && k->pass == GCR_PASS_DENSE && k->prologue) gcr_fuse_try_prologue(ir, b);
    }
    return GCR_OK;
}
