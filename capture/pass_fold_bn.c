/* pass_fold_bn.c — fusion rule 5: conv2d -> batch_norm with constant parameters, where nothing
 * else reads the conv's result, folds into the conv: w' = w * s, b' = (b - mean) * s + beta with
 * s = gamma / sqrt(var + eps) per output channel. The new weights are computed once, at
 * capture end, on the device with eager gcr ops, and become constants owned by the IR; a pair
 * whose folded weights or bias are not finite in the conv's dtype stays unfolded. */
#include "ir.h"
#include <math.h>

static bool is_const(const gcr_ir *ir, int v) { return v < 0 || ir->values[v].kind == GCR_V_CONST; }

/* f32 copy of t (or t itself): the fold is computed in f32 and rounded once to the weights'
 * dtype, as close as folding can get to the unfolded f16/bf16 conv + batch norm */
static gcr_tensor *as_f32(gcr_ctx *ctx, gcr_tensor *t, gcr_tensor **made)
{
    *made = NULL;
    if (!t || t->m.dtype == GCR_F32) return t;
    return *made = gcr_cast(ctx, t, GCR_F32);
}

/* the sum of |t|'s elements in f32 (of any float dtype; no f16 or bf16 tensor can overflow it), or
 * NULL: finite exactly when every element is */
static gcr_tensor *abs_sum(gcr_ctx *ctx, gcr_tensor *t)
{
    gcr_tensor *f = t ? gcr_cast(ctx, t, GCR_F32) : NULL, *a = f ? gcr_abs(ctx, f) : NULL;
    gcr_tensor *sum = a ? gcr_sum(ctx, a, NULL, 0, 0) : NULL;
    gcr_tensor_free(f);
    gcr_tensor_free(a);
    return sum;
}

/* whether every element of w and b is finite, read back in one copy (one sync per folded pair) */
static bool all_finite(gcr_ctx *ctx, gcr_tensor *w, gcr_tensor *b)
{
    gcr_tensor *sw = abs_sum(ctx, w), *sb = abs_sum(ctx, b), *both = sw && sb ? gcr_add(ctx, sw, sb) : NULL;
    float h = NAN;
    bool ok = both && gcr_tensor_to_host(both, &h, sizeof h) == GCR_OK && isfinite(h);
    gcr_tensor_free(sw);
    gcr_tensor_free(sb);
    gcr_tensor_free(both);
    return ok;
}

/* eager helpers that tolerate NULL (the caller's eager section catches their errors) */
static gcr_tensor *fold_f32(gcr_ctx *ctx, gcr_tensor *w, gcr_tensor *b, gcr_tensor *mean, gcr_tensor *var,
                            gcr_tensor *gamma, gcr_tensor *beta, float eps, gcr_tensor **bias_out);

static gcr_tensor *fold_weights(gcr_ctx *ctx, gcr_tensor *w, gcr_tensor *b, gcr_tensor *mean, gcr_tensor *var,
                                gcr_tensor *gamma, gcr_tensor *beta, float eps, gcr_tensor **bias_out)
{
    gcr_dtype dt = w->m.dtype;
    gcr_tensor *m[6], *bias = NULL;
    gcr_tensor *w2 = fold_f32(ctx, as_f32(ctx, w, &m[0]), as_f32(ctx, b, &m[1]), as_f32(ctx, mean, &m[2]),
                              as_f32(ctx, var, &m[3]), as_f32(ctx, gamma, &m[4]), as_f32(ctx, beta, &m[5]), eps, &bias);
    for (int i = 0; i < 6; i++) gcr_tensor_free(m[i]);
    if (dt != GCR_F32) {
        gcr_tensor *wc = w2 ? gcr_cast(ctx, w2, dt) : NULL, *bc = bias ? gcr_cast(ctx, bias, dt) : NULL;
        gcr_tensor_free(w2);
        gcr_tensor_free(bias);
        w2 = wc;
        bias = bc;
    }
    *bias_out = bias;
    return w2;
}

static gcr_tensor *fold_f32(gcr_ctx *ctx, gcr_tensor *w, gcr_tensor *b, gcr_tensor *mean, gcr_tensor *var,
                            gcr_tensor *gamma, gcr_tensor *beta, float eps, gcr_tensor **bias_out)
{
    if (!w || !mean || !var) {
        *bias_out = NULL;
        return NULL;
    }
    int64_t O = w->m.shape[0];
    gcr_tensor *ve = gcr_add_scalar(ctx, var, eps);
    gcr_tensor *s = ve ? gcr_rsqrt(ctx, ve) : NULL;            /* [O] */
    gcr_tensor *sg = s && gamma ? gcr_mul(ctx, s, gamma) : s;  /* [O] */
    gcr_tensor *s4 = sg ? gcr_reshape(ctx, sg, 4, (int64_t[]){O, 1, 1, 1}) : NULL;
    gcr_tensor *w2 = s4 ? gcr_mul(ctx, w, s4) : NULL;          /* [O,C/g,KH,KW] */
    gcr_tensor *bm = NULL, *bs = NULL, *b2 = NULL;
    if (sg) {
        gcr_tensor *m = b ? gcr_sub(ctx, b, mean) : gcr_neg(ctx, mean); /* [O] */
        bm = m;
        bs = m ? gcr_mul(ctx, m, sg) : NULL;
        b2 = bs && beta ? gcr_add(ctx, bs, beta) : bs;
    }
    gcr_tensor_free(ve);
    if (sg != s) gcr_tensor_free(sg);
    gcr_tensor_free(s);
    gcr_tensor_free(s4);
    gcr_tensor_free(bm);
    if (b2 != bs) gcr_tensor_free(bs);
    *bias_out = b2;
    return w2;
}

gcr_status gcr_pass_fold_bn(gcr_ir *ir)
{
    gcr_ctx *ctx = ir->ctx;
    int folded = 0;
    for (int bn = 0; bn < ir->n_nodes; bn++) {
        gcr_node *nb = &ir->nodes[bn];
        if (nb->dead || nb->nofuse || nb->op != GCR_OP_BATCH_NORM) continue;
        int cv = ir->values[nb->in[0]].producer;
        if (cv < 0) continue;
        gcr_node *nc = &ir->nodes[cv];
        gcr_value *cout = &ir->values[nc->out];
        if (nc->op != GCR_OP_CONV2D || nc->dead || nc->nofuse || !gcr_fuse_enabled(ir, cv)) continue;
        if (cout->n_cons != 1 || cout->out_index >= 0) continue;
        if (!is_const(ir, nc->in[1]) || !is_const(ir, nc->in[2])) continue;
        bool consts = true;
        for (int k = 1; k < 5; k++) consts = consts && is_const(ir, nb->in[k]);
        if (!consts || nb->in[1] < 0 || nb->in[2] < 0) continue;

        /* the folding runs eagerly; a failure leaves the pair unfolded and the ctx's error as it was */
        gcr_eager_section sec;
        gcr_eager_begin(ctx, &sec);
#define EXT(k) (nb->in[k] >= 0 ? ir->values[nb->in[k]].ext : NULL)
        gcr_tensor *bias = NULL;
        gcr_tensor *w2 = fold_weights(ctx, ir->values[nc->in[1]].ext, nc->in[2] >= 0 ? ir->values[nc->in[2]].ext : NULL,
                                      EXT(1), EXT(2), EXT(3), EXT(4), nb->p.f[0], &bias);
#undef EXT
        /* a scale past the dtype's range (var + eps 0, or a large mean and scale in f16) would
         * leave inf or NaN where the unfolded pair's values are finite: such a pair stays unfolded */
        const bool finite = w2 && bias && all_finite(ctx, w2, bias);
        gcr_status st = gcr_eager_end(ctx, &sec);
        if (st != GCR_OK || !w2 || !bias || !finite) {
            gcr_tensor_free(w2);
            gcr_tensor_free(bias);
            gcr_info(ctx, "fold_bn: conv#%d + batch_norm#%d not folded (%s)", cv, bn,
                     st != GCR_OK || !w2 || !bias ? "eager folding failed" : "folded weights or bias not finite in their dtype");
            continue;
        }
        gcr_tensor_keep(gcr_tensor_set_const(w2));
        gcr_tensor_keep(gcr_tensor_set_const(bias));
        int vw = gcr_ir_add_value(ir, &w2->m, GCR_V_CONST);
        int vb = vw >= 0 ? gcr_ir_add_value(ir, &bias->m, GCR_V_CONST) : -1;
        if (vb < 0 || gcr_ir_own(ir, w2) != GCR_OK || gcr_ir_own(ir, bias) != GCR_OK) return ctx->status;
        nb = &ir->nodes[bn];
        nc = &ir->nodes[cv];
        ir->values[vw].ext = w2;
        ir->values[vb].ext = bias;
        gcr_ir_pin_exts(ir, vw, vb + 1, true); /* as every ext of an IR; gcr_ir_free unpins, then destroys them */
        nc->in[1] = vw;
        nc->in[2] = vb;
        /* the conv now produces the batch norm's value; its own value and the BN node go away */
        ir->values[nc->out].producer = -1;
        nc->out = nb->out;
        ir->values[nb->out].producer = cv;
        nb->dead = 1;
        gcr_info(ctx, "fold_bn: batch_norm#%d folded into conv2d#%d", bn, cv);
        folded++;
    }
    /* once at the end (a link per fold made the pass quadratic): a fold changes no consumer
     * count or output mark that a later fold reads (those of other convs' results) */
    return folded ? gcr_ir_link(ir) : GCR_OK;
}
