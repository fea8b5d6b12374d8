/* movement.c — eager CONTIGUOUS and CONCAT on the GPU: both are strided copies by element size
 * (kernels/movement.cuh); a copy that collapses to one dense run is a cudaMemcpyAsync, one that
 * collapses to a batch of 2-d transposes (NCHW <-> NHWC) a tiled transpose. */
#include "cuda_ops.h"
#include <stdio.h>

#define BLOCK 256

static gcr_status load(gcr_ctx *ctx, gcr_cuda_state *st)
{
    static const char *const names[8] = {"gcr_copy_1", "gcr_copy_2", "gcr_copy_4", "gcr_copy_8",
                                         "gcr_transpose_1", "gcr_transpose_2", "gcr_transpose_4", "gcr_transpose_8"};
    return gcr_cuda_program(ctx, "#include \"movement.cuh\"\n", names, 8, st->copy);
}

/* A collapsed copy that is a batch of 2-d transposes: dst [A][P][Q] dense, src (a, p, q) at
 * a*sa + p + q*P. NCHW <-> NHWC of any 4-d tensor collapses to this. */
static bool is_transpose(int nd, const int64_t *shape, int64_t s[2][GCR_MAX_DIMS], struct gcr_transpose_args *t)
{
    if (nd != 2 && nd != 3) return false;
    int o = nd - 2; /* index of P */
    int64_t P = shape[o], Q = shape[o + 1], A = nd == 3 ? shape[0] : 1;
    if (s[0][o + 1] != 1 || s[0][o] != Q || s[1][o] != 1 || s[1][o + 1] != P) return false;
    if (A > 65535 || (P + 31) / 32 > 65535) return false;
    t->P = P;
    t->Q = Q;
    t->da = nd == 3 ? s[0][0] : 0;
    t->sa = nd == 3 ? s[1][0] : 0;
    return true;
}

gcr_status gcr_cuda_copy_strided(gcr_ctx *ctx, const gcr_meta *dm, void *dp, const gcr_meta *sm, const void *sp)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    size_t es = gcr_dtype_size(dm->dtype);
    GCR_ASSERT(ctx, gcr_meta_same_shape(dm, sm) && es == gcr_dtype_size(sm->dtype));
    int64_t n = gcr_meta_numel(dm);
    if (n == 0) return GCR_OK;
    int64_t shape[GCR_MAX_DIMS], s[2][GCR_MAX_DIMS];
    for (int d = 0; d < dm->ndim; d++) {
        shape[d] = dm->shape[d];
        s[0][d] = dm->strides[d];
        s[1][d] = sm->strides[d];
    }
    int nd = gcr_cuda_collapse(dm->ndim, shape, 2, s);
    if (nd == 0 || (nd == 1 && s[0][0] == 1 && s[1][0] == 1))
        return gcr_cuda_error(ctx, cudaMemcpyAsync(dp, sp, (size_t)n * es, cudaMemcpyDeviceToDevice, st->stream),
                              "copy: cudaMemcpyAsync");
    /* st->copy by element size: 1, 2, 4, 8 bytes (an element of another size has no kernel) */
    _Static_assert(sizeof st->copy / sizeof st->copy[0] == 8, "st->copy holds copy and transpose kernels of 4 sizes");
    int k = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : es == 8 ? 3 : -1;
    GCR_CHECK(ctx, k >= 0, GCR_ERR_INTERNAL, "copy: no kernel for %zu-byte elements (%s)", es, gcr_dtype_name(dm->dtype));
    if (!st->copy[0]) GCR_TRY(load(ctx, st));
    struct gcr_transpose_args t;
    if (is_transpose(nd, shape, s, &t)) {
        t.dst = dp;
        t.src = sp;
        void *targs[] = {&t};
        return gcr_cuda_launch(ctx, st->copy[4 + k], (unsigned)((t.Q + 31) / 32), (unsigned)((t.P + 31) / 32),
                               nd == 3 ? (unsigned)shape[0] : 1, 32, 8, 1, 0, targs);
    }
    struct gcr_copy_args a;
    memset(&a, 0, sizeof a);
    a.dst = dp;
    a.src = sp;
    a.n = n;
    a.nd = nd;
    a.fast = gcr_cuda_divs_init(&a.divs, nd, shape, n) && gcr_cuda_fits32(nd, shape, 2, s);
    for (int d = 0; d < nd; d++) {
        a.shape[d] = shape[d];
        a.dst_st[d] = s[0][d];
        a.src_st[d] = s[1][d];
    }
    void *args[] = {&a};
    return gcr_cuda_launch(ctx, st->copy[k], gcr_cuda_grid(ctx, n, BLOCK), 1, 1, BLOCK, 1, 1, 0, args);
}

gcr_status gcr_cuda_movement(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    if (c->op == GCR_OP_CONTIGUOUS)
        return gcr_cuda_copy_strided(ctx, &out->m, gcr_tensor_data(out), &c->in[0]->m, gcr_tensor_data(c->in[0]));
    GCR_ASSERT(ctx, c->op == GCR_OP_CONCAT);
    gcr_resolved r;
    char err[256];
    GCR_CHECK(ctx, gcr_resolve(c->op, &c->p, &out->m, &r, err, sizeof err) == GCR_OK, GCR_ERR_INTERNAL, "cuda: %s", err);
    int axis = r.axis;
    size_t es = gcr_dtype_size(out->m.dtype);
    int64_t at = 0;
    for (int i = 0; i < c->n_in; i++) {
        const gcr_tensor *x = c->in[i];
        gcr_meta slab = out->m; /* the part of out that input i fills */
        slab.shape[axis] = x->m.shape[axis];
        char *dp = (char *)gcr_tensor_data(out) + (size_t)(at * out->m.strides[axis]) * es;
        GCR_TRY(gcr_cuda_copy_strided(ctx, &slab, dp, &x->m, gcr_tensor_data(x)));
        at += x->m.shape[axis];
    }
    return GCR_OK;
}
