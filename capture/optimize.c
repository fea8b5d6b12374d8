/* optimize.c — the pass pipeline: from a recorded IR to a planned launch list. Links the IR, runs
 * the fusion passes in order (when the fusion knob is on), builds the kernels, marks their chains
 * and plans memory. */
#include "ir.h"

gcr_status gcr_ir_optimize(gcr_ir *ir)
{
    GCR_TRY(gcr_ir_link(ir));
    for (int i = 0; i < ir->n_nodes; i++) ir->nodes[i].group = i;
    if (ir->ctx->knobs.fusion) {
        GCR_TRY(gcr_pass_fold_bn(ir));
        GCR_TRY(gcr_fuse_begin(ir));
        GCR_TRY(gcr_pass_pointwise(ir));
        GCR_TRY(gcr_pass_epilogue(ir));
        GCR_TRY(gcr_pass_prologue(ir));
        GCR_TRY(gcr_pass_convconv(ir));
        GCR_TRY(gcr_pass_reduction(ir));
        GCR_TRY(gcr_pass_horizontal(ir));
        gcr_fuse_end(ir);
    }
    GCR_TRY(gcr_ir_build_kernels(ir));
    GCR_TRY(gcr_pass_chain(ir));
    return gcr_plan(ir);
}
