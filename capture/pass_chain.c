/* pass_chain.c — kernel-level fusion of small steps: after the kernels are built, a run of
 * consecutive kernels that pass one small vector per image along (lib/chain.h: a global average
 * pool, then matrix-vector products, each with its fused pointwise tail) is marked as a chain
 * (gcr_kernel.chain), which the CUDA executor runs as one kernel: at batch 1 each of these kernels
 * is a few microseconds of ramp and tail around almost no work. The rule is stated in op kinds and
 * sizes (chain.h); a squeeze-excite block (pool -> FC -> act -> FC -> act) and a classifier head
 * (pool -> flatten -> linear -> act -> linear) are two of its instances. GCR_SKIP_FUSE=chain turns
 * it off. Every member keeps its buffers, so nothing else about the plan changes. */
#include "ir.h"
#include "../lib/chain.h"

/* every node of kernel k may fuse */
static bool members_fuse(const gcr_ir *ir, int k)
{
    const gcr_kernel *K = &ir->kernels[k];
    for (int i = 0; i < K->n_nodes; i++)
        if (!gcr_fuse_enabled(ir, K->nodes[i])) return false;
    return true;
}

gcr_status gcr_pass_chain(gcr_ir *ir)
{
    for (int k = 0; k < ir->n_kernels; k++) ir->kernels[k].chain = 0;
    if (!ir->ctx->knobs.fusion || gcr_fuse_skipped(ir, "chain")) return GCR_OK;
    for (int k = 0; k < ir->n_kernels; k++) {
        gcr_chain_step st;
        if (!gcr_chain_step_of(ir, k, -1, &st) || !members_fuse(ir, k)) continue;
        int len = 1;
        while (k + len < ir->n_kernels && len < GCR_CHAIN_MAX_STEPS && members_fuse(ir, k + len) &&
               gcr_chain_step_of(ir, k + len, ir->values[st.out].root, &st))
            len++;
        if (len < 2) continue;
        ir->kernels[k].chain = len;
        k += len - 1;
    }
    return GCR_OK;
}

int gcr_ir_launches(const gcr_ir *ir)
{
    int n = ir->n_kernels;
    for (int k = 0; k < ir->n_kernels; k++)
        if (ir->kernels[k].chain > 1) n -= ir->kernels[k].chain - 1;
    return n;
}
