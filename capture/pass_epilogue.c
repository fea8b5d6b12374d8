/* pass_epilogue.c — fusion rule 2: a pointwise group fed by a conv / linear / matmul result that
 * nothing else reads runs in that kernel's store (bias, folded BN affine, activation, residual). */
#include "ir.h"

void gcr_fuse_try_epilogue(gcr_ir *ir, int a)
{
    int nc;
    const int *cons = gcr_ir_consumers(ir, ir->nodes[a].out, &nc);
    if (nc == 0) return;
    if (gcr_fuse_legal(ir, a, cons[0], GCR_FUSE_EPILOGUE)) {
        gcr_info(ir->ctx, "fuse: epilogue of %s#%d starting at %s#%d", gcr_op_table[ir->nodes[a].op].name, a,
                 gcr_op_table[ir->nodes[cons[0]].op].name, cons[0]);
        gcr_fuse_merge(ir, a, cons[0]);
    }
}

gcr_status gcr_pass_epilogue(gcr_ir *ir)
{
    for (int a = 0; a < ir->n_nodes; a++) {
        const gcr_kind_info *k = gcr_kind_of(ir->nodes[a].op);
        if (!ir->nodes[a].dead && k->pass == GCR_PASS_DENSE && k->epilogue) gcr_fuse_try_epilogue(ir, a);
    }
    return GCR_OK;
}
