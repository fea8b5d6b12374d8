/* matmul.c — matmul and linear on the GPU through the dense engine (kernels/gemm.cuh): FMA in f32
 * (no TF32: parity needs 1e-4), mma.sync tensor cores for f16/bf16. Batch dims fold into the rows
 * when the right operand is shared and the left one's batch dims collapse (linear on [B,T,K],
 * matmul by a weight), else they become grid z with broadcast strides. */
#include "dense.h"
#include <stdio.h>

#define MAXB (GCR_MAX_DIMS - 2)

typedef struct batch {
    int n;
    int64_t shape[MAXB], sa[MAXB], sb[MAXB], sc[MAXB];
} batch;

/* merges neighbouring batch dims that are one run of memory in all three operands, drops size 1 */
static void collapse(batch *b)
{
    batch o = {0};
    for (int d = 0; d < b->n; d++) {
        if (b->shape[d] == 1) continue;
        int j = o.n - 1;
        if (j >= 0 && o.sa[j] == b->sa[d] * b->shape[d] && o.sb[j] == b->sb[d] * b->shape[d] &&
            o.sc[j] == b->sc[d] * b->shape[d]) {
            o.shape[j] *= b->shape[d];
            o.sa[j] = b->sa[d];
            o.sb[j] = b->sb[d];
            o.sc[j] = b->sc[d];
            continue;
        }
        o.shape[o.n] = b->shape[d];
        o.sa[o.n] = b->sa[d];
        o.sb[o.n] = b->sb[d];
        o.sc[o.n] = b->sc[d];
        o.n++;
    }
    *b = o;
}

/* The engine's problem for a matmul or linear call on operands A, B with result Y: a GEMM in its
 * conv terms (1x1 taps, OH = rows per batch item, OW = 1, no bounds). Batch dims fold into the
 * rows when they collapse to one and B is shared, else become grid z; nz counts them even past
 * the 4 that zshape holds (then the rest of z is left unset: gcr_cuda_dense_limits refuses it). */
static gcr_dense_args gemm_args(const gcr_call *c, const gcr_meta *A, const gcr_meta *B, const gcr_meta *Y)
{
    int nd = Y->ndim;
    int64_t M, N, K, sam, sak, sbk, sbn;
    batch b = {0};
    if (c->op == GCR_OP_LINEAR) { /* x [..., K] w [N, K]: the last leading dim is M, the rest batch */
        K = A->shape[A->ndim - 1];
        sak = A->strides[A->ndim - 1];
        N = B->shape[0];
        sbn = B->strides[0];
        sbk = B->strides[1];
        M = A->ndim >= 2 ? A->shape[A->ndim - 2] : 1;
        sam = A->ndim >= 2 ? A->strides[A->ndim - 2] : 0;
        b.n = A->ndim >= 2 ? A->ndim - 2 : 0;
        for (int d = 0; d < b.n; d++) {
            b.shape[d] = A->shape[d];
            b.sa[d] = A->strides[d];
            b.sb[d] = 0;
            b.sc[d] = Y->strides[d];
        }
    } else { /* a [..., M, K] b [..., K, N]; batch dims aligned from the right, size 1 broadcasts */
        M = A->shape[A->ndim - 2];
        K = A->shape[A->ndim - 1];
        N = B->shape[B->ndim - 1];
        sam = A->strides[A->ndim - 2];
        sak = A->strides[A->ndim - 1];
        sbk = B->strides[B->ndim - 2];
        sbn = B->strides[B->ndim - 1];
        b.n = nd - 2;
        for (int d = 0; d < b.n; d++) {
            int da = d - (nd - A->ndim), db = d - (nd - B->ndim);
            b.shape[d] = Y->shape[d];
            b.sa[d] = da >= 0 && A->shape[da] != 1 ? A->strides[da] : 0;
            b.sb[d] = db >= 0 && B->shape[db] != 1 ? B->strides[db] : 0;
            b.sc[d] = Y->strides[d];
        }
    }
    collapse(&b);
    int shared_b = 1;
    for (int d = 0; d < b.n; d++) shared_b &= b.sb[d] == 0;

    gcr_dense_args a = {.N = N, .K = K, .OH = M, .OW = 1, .H = 1LL << 30, .W = 1LL << 30, .KH = 1, .KW = 1,
                             .sh = 1, .sw = 1, .dh = 1, .dw = 1};
    a.xs[1] = sak;
    a.xs[2] = sam;
    a.ws[0] = sbn;
    a.ws[1] = sbk;
    a.ys[1] = Y->strides[nd - 1];
    a.ys[2] = nd >= 2 ? Y->strides[nd - 2] : 0;
    a.a_kfast = sak == 1;
    a.b_kfast = sbk == 1;
    if (b.n == 0) {
        a.M = M;
    } else if (b.n == 1 && shared_b) { /* fold the batch into rows: n = batch item */
        a.M = b.shape[0] * M;
        a.xs[0] = b.sa[0];
        a.ys[0] = b.sc[0];
    } else {
        a.M = M;
        a.nz = b.n;
        for (int d = 0; d < b.n && d < 4; d++) {
            a.zshape[d] = b.shape[d];
            a.zx[d] = b.sa[d];
            a.zw[d] = b.sb[d];
            a.zy[d] = b.sc[d];
        }
        a.zn = 1; /* hooks see the flattened batch index as n */
    }
    return a;
}

int gcr_cuda_matmul_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l)
{
    gcr_dense_args a = gemm_args(c, &c->in[0]->m, &c->in[1]->m, out);
    return gcr_cuda_dense_limits(&a, l);
}

gcr_status gcr_cuda_matmul_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *A = &c->in[0]->m, *B = &c->in[1]->m;
    gcr_dense_args a = gemm_args(c, A, B, &out->m);
    gcr_cuda_limit lim[GCR_CUDA_MAX_LIMITS];
    bool hooked = h && h->defs && h->defs[0];
    const gcr_cuda_limit *bad = hooked ? gcr_cuda_limit_broken(lim, gcr_cuda_dense_limits(&a, lim)) : NULL;
    if (bad) {
        /* Dispatch refused calls past the limits (gcr_cuda_check). A fused prologue hands over its
         * source, of A's shape but maybe with strides whose batch dims collapse less (more grid z
         * dims, or a batch no longer folded into the rows): that fused kernel cannot be built, and
         * GCR_ERR_COMPILE makes the graph run its ops unfused (the matmul then reads the
         * prologue's dense result, as at the call). */
        char b1[96], b2[96], b3[160];
        return gcr_set_error(ctx, GCR_ERR_COMPILE, "%s: a fused prologue's source %s x %s: %s", gcr_op_table[c->op].name,
                             gcr_meta_str(A, b1, sizeof b1), gcr_meta_str(B, b2, sizeof b2),
                             gcr_cuda_limit_str(bad, b3, sizeof b3));
    }
    const void *bias = c->op == GCR_OP_LINEAR && c->in[2] ? gcr_tensor_data(c->in[2]) : NULL;
    return gcr_cuda_dense_run(ctx, A->dtype, &a, gcr_tensor_data(c->in[0]), gcr_tensor_data(c->in[1]),
                              gcr_tensor_data(out), bias, h);
}

gcr_status gcr_cuda_matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_matmul_hooked(ctx, c, out, NULL);
}
