/* pass_horizontal.c — fusion rule 6 (knobs.horizontal): sibling pointwise groups that read the
 * same value over the same iteration space merge, so the shared input is read once. */
#include "ir.h"

gcr_status gcr_pass_horizontal(gcr_ir *ir)
{
    if (!ir->ctx->knobs.horizontal) return GCR_OK;
    for (int v = 0; v < ir->n_values; v++) {
        int nc;
        const int *cons = gcr_ir_consumers(ir, v, &nc);
        for (int i = 0; i < nc; i++)
            for (int j = i + 1; j < nc; j++) {
                int a = cons[i], b = cons[j];
                if (gcr_op_table[ir->nodes[a].op].kind != GCR_KIND_POINTWISE ||
                    gcr_op_table[ir->nodes[b].op].kind != GCR_KIND_POINTWISE)
                    continue;
                if (gcr_fuse_legal(ir, a, b, GCR_FUSE_HORIZONTAL)) {
                    gcr_info(ir->ctx, "fuse: horizontal %s#%d with %s#%d (both read value %d)",
                             gcr_op_table[ir->nodes[a].op].name, a, gcr_op_table[ir->nodes[b].op].name, b, v);
                    gcr_fuse_merge(ir, a, b);
                }
            }
    }
    return GCR_OK;
}
