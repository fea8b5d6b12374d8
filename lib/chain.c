/* chain.c — which kernels may be a chain's step (chain.h): kinds and sizes, nothing of one model. */
#include "chain.h"

static bool float_dt(gcr_dtype dt) { return dt == GCR_F32 || dt == GCR_F16 || dt == GCR_BF16; }

/* the one value kernel K (anchored) writes: its anchor's result or its epilogue's single output;
 * -1 for several, or a prologue */
static int written(const gcr_ir *ir, const gcr_kernel *K)
{
    if (K->type == GCR_K_EAGER) return ir->nodes[K->anchor].out;
    for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
        if (K->pro[j]) return -1; /* a prologue reads the anchor's input through other loads */
    if (K->epi.n_expr == 0) return K->acc_value;
    return K->epi.n_out == 1 ? K->epi.out[0].value : -1;
}

/* the head: the mean over the last two dims of a 4-d x, as an adaptive average pool to 1 x 1 or a
 * mean over axes 2 and 3 (keeping them or not) */
static bool global_mean(const gcr_node *A, const gcr_meta *x, const gcr_meta *y)
{
    if (x->ndim != 4) return false;
    if (A->op == GCR_OP_ADAPTIVE_AVG_POOL2D) return y->ndim == 4 && y->shape[2] == 1 && y->shape[3] == 1;
    gcr_resolved r;
    char err[128];
    if (A->op != GCR_OP_MEAN || gcr_resolve(A->op, &A->p, x, &r, err, sizeof err) != GCR_OK) return false;
    return !r.red[0] && !r.red[1] && r.red[2] && r.red[3];
}

static bool pool_step(const gcr_ir *ir, const gcr_node *A, gcr_chain_step *st)
{
    const gcr_meta *x = &ir->values[A->in[0]].m, *y = &ir->values[A->out].m;
    if (!global_mean(A, x, y)) return false;
    if (x->shape[1] > GCR_CHAIN_MAX_VEC || x->shape[2] * x->shape[3] < 1 || !float_dt(x->dtype)) return false;
    st->kind = GCR_CHAIN_POOL;
    st->x = A->in[0];
    st->w = st->bias = -1;
    st->n = x->shape[0];
    st->k = st->o = x->shape[1];
    st->h = x->shape[2];
    st->w_px = x->shape[3];
    for (int d = 0; d < 4; d++) st->xs[d] = x->strides[d];
    return true;
}

/* an input or constant of the graph: no step of a chain writes it */
static bool external(const gcr_ir *ir, int v)
{
    gcr_vkind k = ir->values[ir->values[v].root].kind;
    return k == GCR_V_INPUT || k == GCR_V_CONST;
}

static bool dense_step(const gcr_ir *ir, const gcr_node *A, int prev_root, gcr_chain_step *st)
{
    if (A->op != GCR_OP_CONV2D && A->op != GCR_OP_LINEAR) return false;
    const gcr_value *xv = &ir->values[A->in[0]];
    const gcr_meta *x = &xv->m, *w = &ir->values[A->in[1]].m;
    if (xv->root != prev_root || !float_dt(x->dtype) || w->dtype != x->dtype || !external(ir, A->in[1]) ||
        (A->n_in > 2 && A->in[2] >= 0 && !external(ir, A->in[2])))
        return false;
    if (A->op == GCR_OP_CONV2D) {
        const gcr_conv2d_params *p = &A->p.conv;
        if (x->ndim != 4 || x->shape[2] != 1 || x->shape[3] != 1 || w->shape[2] != 1 || w->shape[3] != 1 || p->groups != 1 ||
            p->padding[0] || p->padding[1])
            return false;
    } else if (x->ndim != 2) {
        return false;
    }
    st->kind = GCR_CHAIN_DENSE;
    st->x = A->in[0];
    st->w = A->in[1];
    st->bias = A->n_in > 2 ? A->in[2] : -1;
    st->n = x->shape[0];
    st->k = x->shape[1];
    st->o = w->shape[0];
    st->h = st->w_px = 1;
    st->xs[0] = x->strides[0];
    st->xs[1] = x->strides[1];
    st->xs[2] = st->xs[3] = 0;
    st->ws[0] = w->strides[0];
    st->ws[1] = w->strides[1];
    return st->k <= GCR_CHAIN_MAX_VEC && st->o <= GCR_CHAIN_MAX_VEC;
}

bool gcr_chain_step_of(const gcr_ir *ir, int k, int prev_root, gcr_chain_step *st)
{
    const gcr_kernel *K = &ir->kernels[k];
    if (K->anchor < 0 || K->inner >= 0 || (K->type != GCR_K_EAGER && K->type != GCR_K_FUSED)) return false;
    const gcr_node *A = &ir->nodes[K->anchor];
    st->kernel = k;
    st->out = written(ir, K);
    if (st->out < 0 || ir->values[st->out].m.ndim < 1 || ir->values[st->out].m.shape[0] < 1) return false;
    if (!(prev_root < 0 ? pool_step(ir, A, st) : dense_step(ir, A, prev_root, st))) return false;
    int64_t es = (int64_t)gcr_dtype_size(ir->values[st->x].m.dtype);
    st->bytes = (st->kind == GCR_CHAIN_POOL ? st->k * st->h * st->w_px : st->o * st->k) * es;
    return st->bytes <= GCR_CHAIN_MAX_STEP_BYTES && st->bytes * st->n <= GCR_CHAIN_MAX_BATCH_BYTES;
}
