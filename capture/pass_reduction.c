/* pass_reduction.c — fusion rule 4: pointwise producers of a reduction run in its load, its
 * pointwise consumers (over the reduced shape) in its store: global average pooling of an
 * activation, a scaled mean, a norm's tail. Pools take epilogues only (their padding must read
 * the raw input). */
#include "ir.h"

gcr_status gcr_pass_reduction(gcr_ir *ir)
{
    for (int a = 0; a < ir->n_nodes; a++) {
        const gcr_kind_info *k = gcr_kind_of(ir->nodes[a].op);
        if (ir->nodes[a].dead || k->pass != GCR_PASS_REDUCTION) continue;
        if (k->epilogue) gcr_fuse_try_epilogue(ir, a);
        if (k->prologue) gcr_fuse_try_prologue(ir, a);
    }
    return GCR_OK;
}
