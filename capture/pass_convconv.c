/* pass_convconv.c — fusion rule 6: a conv whose result, through its own epilogue (BN folded into
 * it, an activation), only the next conv reads runs inside that conv's kernel, so the value
 * between them never goes through memory. Two forms: a depthwise conv into a 1x1 conv (the second
 * half of an inverted-residual block, the first of a depthwise-separable one) and a 1x1 conv into
 * a depthwise conv (the expansion into its depthwise conv). The legality rule (legal.c) states
 * them in shapes and the backend's gcr_convconv_caps (which forms its executor runs); the pass
 * runs after the epilogue and prologue passes, so each conv arrives with its own epilogue. A conv
 * joins one pair: of expand -> depthwise -> project, the pair met first in trace order forms. */
#include "ir.h"

gcr_status gcr_pass_convconv(gcr_ir *ir)
{
    if (gcr_fuse_skipped(ir, "convconv")) return GCR_OK;
    for (int b = 0; b < ir->n_nodes; b++) {
        const gcr_node *nb = &ir->nodes[b];
        if (nb->dead || nb->op != GCR_OP_CONV2D || nb->in[0] < 0) continue;
        int p = ir->values[nb->in[0]].producer;
        if (p < 0 || ir->nodes[p].dead) continue;
        int a = gcr_fuse_anchor(ir, p);
        if (a < 0 || !gcr_fuse_legal(ir, a, b, GCR_FUSE_CONVCONV)) continue;
        gcr_info(ir->ctx, "fuse: conv->conv of %s#%d into %s#%d", gcr_op_table[ir->nodes[a].op].name, a,
                 gcr_op_table[nb->op].name, b);
        gcr_fuse_merge(ir, a, b);
    }
    return GCR_OK;
}
