/* chain.h — the steps of a kernel chain (lib/ir.h gcr_kernel.chain): the one rule of which kernels
 * may be a chain's step, read by the fuser's chain pass (capture/pass_chain.c) and the code that
 * runs a chain as one kernel (lib/cuda/codegen_chain.c). A step is a kernel of the launch list that
 * reads or writes one small vector per image:
 *   POOL:  the head, a global average: x [N, C, H, W] (any strides) -> v [N, C, 1, 1] or [N, C] (an
 *          adaptive average pool to 1 x 1, or a mean over axes 2 and 3);
 *   DENSE: a matrix-vector product per image: x [N, K] (a linear's 2-d input) or [N, K, 1, 1] (a
 *          1x1 conv, groups 1, no padding, on a 1x1 input), weights [O, K(, 1, 1)] -> [N, O(, 1, 1)],
 *          bias [O] optional; weights and bias are graph inputs or constants (no step writes them).
 * Neither takes a prologue; either may have an epilogue (its kernel's pointwise group), which runs
 * on each result element as the kernel's own store would. */
#ifndef GCR_CHAIN_H
#define GCR_CHAIN_H

#include "ir.h"

#define GCR_CHAIN_MAX_VEC 4096 /* elements of any step's input or output vector per image */
#define GCR_CHAIN_MAX_STEPS 8
/* A chain runs each image on a few SMs and reads every step's weights once per image: a step may
 * read at most 1 MB per image (the pool's input, a product's weights), and the batch at most 8 MB
 * through one step. Past that the steps' own kernels, spread over every SM and reading weights
 * once per tile, are faster: MobileNet-v3's classifier (2.4 MB of weights) and any batch of 32
 * stay separate kernels. */
#define GCR_CHAIN_MAX_STEP_BYTES ((int64_t)1 << 20)
#define GCR_CHAIN_MAX_BATCH_BYTES ((int64_t)8 << 20)

typedef enum gcr_chain_kind { GCR_CHAIN_POOL, GCR_CHAIN_DENSE } gcr_chain_kind;

typedef struct gcr_chain_step {
    gcr_chain_kind kind;
    int kernel;
    int x;           /* value read: the pool's input, the product's vector (may be a view) */
    int w, bias;     /* DENSE: weight value, bias value or -1 */
    int out;         /* the value the step writes whose root the next step reads (acc or epilogue) */
    int64_t n;       /* images */
    int64_t k, o;    /* vector lengths read and written per image (POOL: both C) */
    int64_t h, w_px; /* POOL: input height and width */
    int64_t xs[4];   /* x strides: POOL (n, c, y, x); DENSE (n, k) */
    int64_t bytes;   /* read per image: the pool's input, a product's weights */
    int64_t ws[2];   /* DENSE: weight strides (o, k) */
} gcr_chain_step;

/* Fills *st when kernel k of ir can be a chain step: the head (prev_root < 0: a POOL) or a step
 * after one whose output's root is prev_root (a DENSE reading a value of that root). */
bool gcr_chain_step_of(const gcr_ir *ir, int k, int prev_root, gcr_chain_step *st);

#endif /* GCR_CHAIN_H */
