/* codegen.h — CUDA C for the fused kernels of a planned IR's launch list (lib/ir.h). Codegen only
 * writes text: it calls no CUDA API, so CI (no GPU) can generate every kernel and compile it with
 * NVRTC, and the CUDA executor (lib/cuda/exec.c) compiles and launches it. The emitter
 * (codegen_emit.c) writes expressions and names; a generator per kernel shape writes the rest:
 * codegen_pointwise.c, codegen_hooked.c, codegen_reduce.c, and codegen_chain.c for a chain of
 * kernels run as one.
 *
 * A fused kernel becomes one of:
 * - OWN: a complete extern "C" __global__ function in the shared program text (pointwise groups,
 *   reductions with fused producers/consumers). Its parameters are data pointers only, in the
 *   order of params[] (value ids); shapes and strides are compile-time constants, since a variant
 *   is specialised to one input signature.
 * - HOOKED: an anchor (conv2d, linear, matmul, pool) run by its eager launcher (lib/cuda/dense.h)
 *   with GCR_PROLOGUE / GCR_EPILOGUE / GCR_EXTRA_PARAMS defined from the group (contract at the top
 *   of lib/cuda/kernels/gemm.cuh); params[] are then the extra parameters' value ids. */
#ifndef GCR_CUDA_CODEGEN_H
#define GCR_CUDA_CODEGEN_H

#include "../ir.h"

typedef enum gcr_cg_type { GCR_CG_OWN, GCR_CG_HOOKED } gcr_cg_type;

typedef struct gcr_cg_kernel {
    gcr_cg_type type;
    char fn[128];      /* OWN: the function's name ("gcr_k3_add_clamp_mul_div") */
    char *src;         /* OWN: the function's text; HOOKED: the hook definitions (malloc'ed) */
    int n_params;
    int params[GCR_CUDA_KERNEL_PARAMS]; /* value ids whose data pointers are passed, in order */
    /* OWN launch shape: grid-stride kernels want `threads` threads in blocks of `block` (the
     * executor caps the grid at a few waves); block-per-row kernels (rows > 0) get `rows` blocks. */
    int64_t threads;
    int64_t rows;
    unsigned block;
    int cluster;       /* OWN: blocks per cluster its text asks for (__cluster_dims__), 0 none */
    /* HOOKED: the value the anchor reads at slot 0 instead of its traced input (a prologue's
     * source), or -1; and the value whose buffer is the anchor's `out` argument (its meta gives
     * the epilogue's idx layout: the anchor's result meta, data may be an output of the group). */
    int x_value;
    int out_value;
    char why[256];     /* unsupported pattern: why (the executor reports GCR_ERR_COMPILE) */
} gcr_cg_kernel;

/* Generates kernel k (type GCR_K_FUSED) of ir. Returns GCR_OK, GCR_ERR_COMPILE with cg->why when
 * the group has a shape codegen cannot express (the graph then runs it unfused), or GCR_ERR_OOM.
 * Free with gcr_cg_kernel_free. */
gcr_status gcr_codegen_kernel(const gcr_ir *ir, int k, gcr_cg_kernel *cg);
void gcr_cg_kernel_free(gcr_cg_kernel *cg);
/* Generates the one kernel of the chain that starts at kernel k (ir->kernels[k].chain steps,
 * lib/chain.h) as an OWN kernel for clusters of at most max_cluster blocks (1: no clusters; else a
 * power of two; past 8 the launch needs the non-portable cluster size allowed): rows is the grid it
 * wants (the executor may cap it at a multiple of the cluster, cg->cluster), block GCR_CHAIN_THREADS. Its src is a whole program (it includes kernels/chain.cuh), compiled on
 * its own. GCR_ERR_COMPILE with cg->why where it cannot (the executor then runs the steps one by
 * one), GCR_ERR_OOM. */
gcr_status gcr_codegen_chain(const gcr_ir *ir, int k, int max_cluster, gcr_cg_kernel *cg);
/* One program text holding the OWN kernels of cgs[0..n) (HOOKED ones are skipped), with the
 * includes they need; NULL when out of memory. Caller frees. */
char *gcr_codegen_program(const gcr_cg_kernel *cgs, int n);

#endif /* GCR_CUDA_CODEGEN_H */
