/* matmul.c — CPU matmul and linear on the shared GEMM.
 * MATMUL: a [...,M,K] @ b [...,K,N] -> out [...,M,N] (contiguous), batch dims broadcast.
 * LINEAR: x [...,K] @ w[N,K]^T + bias[N] -> out [...,N] (contiguous).
 * The GEMM reads any strides, so f32 operands are used in place (w^T is just swapped strides);
 * f16/bf16 operands are staged to f32 and the result rounded once. */
#include "gemm.h"

/* dims [d0, d1] of m (with d1 the innermost of them) walk memory at one stride: true when
 * every non-trivial dim's stride is the next one's times its size. *st gets that stride. */
static int collapsible(const gcr_meta *m, int d0, int d1, int64_t *st)
{
    int64_t s = 0, expect = -1;
    for (int d = d1; d >= d0; d--) {
        if (m->shape[d] == 1) continue;
        if (expect >= 0 && m->strides[d] != expect) return 0;
        if (expect < 0) s = m->strides[d];
        expect = m->strides[d] * m->shape[d];
    }
    *st = s;
    return 1;
}

static gcr_status linear(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    int nd = x->m.ndim;
    int64_t K = x->m.shape[nd - 1], N = w->m.shape[0], R = gcr_meta_numel(&out->m) / N;
    gcr_f32v xv, wv;
    GCR_TRY(gcr_cpu_f32_view(ctx, x, GCR_SCR_IN0, &xv));
    gcr_meta xm = x->m;
    memcpy(xm.strides, xv.st, sizeof xm.strides);
    int64_t rsa = K, csa = xv.st[nd - 1];
    if (nd > 1 && !collapsible(&xm, 0, nd - 2, &rsa)) { /* rows not at one stride: stage them */
        gcr_meta d = x->m;
        gcr_meta_set_contiguous(&d);
        float *p = gcr_cpu_scratch_get(ctx, GCR_SCR_IN0, (size_t)gcr_meta_numel(&d));
        if (!p) return GCR_ERR_OOM;
        gcr_cpu_gather_f32(x, p, d.strides); /* from x itself, so reusing IN0 is safe */
        xv.p = p;
        rsa = K;
        csa = 1;
    }
    GCR_TRY(gcr_cpu_f32_view(ctx, w, GCR_SCR_IN1, &wv));
    float *o = gcr_cpu_out_f32(ctx, out);
    if (!o) return GCR_ERR_OOM;
    const float *bias = NULL;
    if (b) {
        gcr_f32v bv;
        GCR_TRY(gcr_cpu_f32_view(ctx, b, GCR_SCR_IN2, &bv));
        bias = bv.p;
        if (bv.st[0] != 1 && N > 1) { /* a strided bias: dense copy for the GEMM's store */
            float *d = gcr_cpu_scratch_get(ctx, GCR_SCR_IN2, (size_t)N);
            if (!d) return GCR_ERR_OOM;
            int64_t one = 1;
            gcr_cpu_gather_f32(b, d, &one);
            bias = d;
        }
    }
    GCR_TRY(gcr_sgemm(ctx, R, N, K, xv.p, rsa, csa, wv.p, wv.st[1], wv.st[0], o, N, 1, NULL, bias));
    gcr_cpu_out_finish(out, o);
    return GCR_OK;
}

static gcr_status matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_tensor *a = c->in[0], *b = c->in[1];
    int nd = out->m.ndim, nb = nd - 2;
    int64_t M = out->m.shape[nd - 2], N = out->m.shape[nd - 1], K = a->m.shape[a->m.ndim - 1];
    gcr_f32v av, bv;
    GCR_TRY(gcr_cpu_f32_view(ctx, a, GCR_SCR_IN0, &av));
    GCR_TRY(gcr_cpu_f32_view(ctx, b, GCR_SCR_IN1, &bv));
    float *o = gcr_cpu_out_f32(ctx, out);
    if (!o) return GCR_ERR_OOM;

    /* batch strides of a and b over out's batch dims: 0 where broadcast */
    int64_t sa[GCR_MAX_DIMS] = {0}, sb[GCR_MAX_DIMS] = {0}, nbatch = 1;
    int b_bcast = 1;
    for (int d = 0; d < nb; d++) {
        int da = d - (nd - a->m.ndim), db = d - (nd - b->m.ndim);
        if (da >= 0 && a->m.shape[da] != 1) sa[d] = av.st[da];
        if (db >= 0 && b->m.shape[db] != 1) sb[d] = bv.st[db];
        if (sb[d]) b_bcast = 0;
        nbatch *= out->m.shape[d];
    }
    int64_t rsa = av.st[a->m.ndim - 2], csa = av.st[a->m.ndim - 1];
    int64_t rsb = bv.st[b->m.ndim - 2], csb = bv.st[b->m.ndim - 1];

    /* one b for every batch and a's batch rows at one stride: a single taller GEMM */
    if (nb > 0 && b_bcast && a->m.ndim == nd) {
        gcr_meta am = a->m;
        memcpy(am.strides, av.st, sizeof am.strides);
        int64_t rs;
        if (collapsible(&am, 0, nd - 2, &rs)) {
            GCR_TRY(gcr_sgemm(ctx, nbatch * M, N, K, av.p, rs, csa, bv.p, rsb, csb, o, N, 1, NULL, NULL));
            gcr_cpu_out_finish(out, o);
            return GCR_OK;
        }
    }
    int64_t idx[GCR_MAX_DIMS] = {0};
    for (int64_t i = 0; i < nbatch; i++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < nb; d++) {
            oa += idx[d] * sa[d];
            ob += idx[d] * sb[d];
        }
        GCR_TRY(gcr_sgemm(ctx, M, N, K, av.p + oa, rsa, csa, bv.p + ob, rsb, csb, o + i * M * N, N, 1, NULL, NULL));
        for (int d = nb - 1; d >= 0; d--) {
            if (++idx[d] < out->m.shape[d]) break;
            idx[d] = 0;
        }
    }
    gcr_cpu_out_finish(out, o);
    return GCR_OK;
}

gcr_status gcr_cpu_matmul(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    if (c->op == GCR_OP_LINEAR) return linear(ctx, c, out);
    if (c->op == GCR_OP_MATMUL) return matmul(ctx, c, out);
    return gcr_set_error(ctx, GCR_ERR_INTERNAL, "cpu: %s is not a matmul op", gcr_op_table[c->op].name);
}
