/* pass_pointwise.c — fusion rule 1: connected pointwise ops over one iteration space become one
 * group; a member's value read outside the group becomes an extra output of the kernel. */
#include "ir.h"

gcr_status gcr_pass_pointwise(gcr_ir *ir)
{
    for (int b = 0; b < ir->n_nodes; b++) {
        const gcr_node *nb = &ir->nodes[b];
        if (nb->dead || !gcr_op_is_pointwise(nb->op)) continue;
        for (int k = 0; k < nb->n_in; k++) {
            if (nb->in[k] < 0) continue;
            int a = ir->values[nb->in[k]].producer;
            if (a < 0 || !gcr_op_is_pointwise(ir->nodes[a].op)) continue;
            if (gcr_fuse_legal(ir, a, b, GCR_FUSE_POINTWISE)) {
                gcr_info(ir->ctx, "fuse: pointwise %s#%d + %s#%d", gcr_op_table[ir->nodes[a].op].name, a,
                         gcr_op_table[nb->op].name, b);
                gcr_fuse_merge(ir, a, b);
            }
        }
    }
    return GCR_OK;
}
