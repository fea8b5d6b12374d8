/* emit.c — the expression emitter (emit.h): every expression is computed in f32 from its
 * arguments a..e (missing optional inputs read as the op table says) and the parameters p0, p1,
 * then rounded where the emitter's dialect says. */
#include "emit.h"

void gcr_emit_exprs(gcr_text *b, const gcr_emit *em)
{
    const gcr_group *g = em->g;
    const char *ind = em->ind;
    for (int i = 0; i < g->n_expr; i++) {
        const gcr_expr *e = &g->expr[i];
        switch (e->kind) {
        case GCR_E_LOAD:
            gcr_text_put(b, "%sconst float e%d = ", ind, i);
            em->load(b, em, e->load);
            gcr_text_put(b, ";\n");
            break;
        case GCR_E_ACC:
            gcr_text_put(b, "%sfloat e%d = %s;\n", ind, i, em->acc);
            em->round(b, ind, i, em->acc_dtype, false);
            break;
        case GCR_E_OP: {
            const gcr_op_info *oi = &gcr_op_table[e->op];
            gcr_text_put(b, "%sfloat e%d; /* %s */\n%s{\n", ind, i, oi->name, ind);
            static const char nm[5] = {'a', 'b', 'c', 'd', 'e'};
            for (int k = 0; k < 5; k++) {
                gcr_text_put(b, "%s    const float %c = ", ind, nm[k]);
                if (e->arg[k] >= 0) gcr_text_put(b, "e%d", e->arg[k]);
                else if (k == 1 && e->has_scalar) em->constant(b, e->p0);
                else if (k < oi->arity) em->constant(b, gcr_op_missing_input(e->op, k));
                else gcr_text_put(b, "0.0f");
                gcr_text_put(b, ";\n");
            }
            gcr_text_put(b, "%s    const float p0 = ", ind);
            em->constant(b, e->p0);
            gcr_text_put(b, ", p1 = ");
            em->constant(b, e->p1);
            gcr_text_put(b, ";\n%s    (void)a; (void)b; (void)c; (void)d; (void)e; (void)p0; (void)p1;\n", ind);
            gcr_text_put(b, "%s    e%d = (float)(%s);\n%s}\n", ind, i, oi->expr, ind);
            em->round(b, ind, i, e->dtype, e->op == GCR_OP_CAST);
            break;
        }
        }
    }
}
