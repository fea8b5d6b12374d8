/* pw_eval.h — the scalar formula of every pointwise op, expanded from ops.def as host C, so the
 * CPU backend and the CPU tile programs of fused groups compute exactly what generated CUDA does.
 * a..e are the op's inputs as f32 (a binary op's scalar operand is passed as b; a missing
 * optional input as gcr_op_missing_input), p0/p1 its float params (params.f[0..1]). */
#ifndef GCR_PW_EVAL_H
#define GCR_PW_EVAL_H

#include "internal.h"
#include <math.h>

static inline float gcr_pw_eval(gcr_op op, float a, float b, float c, float d, float e, float p0, float p1)
{
    (void)a; (void)b; (void)c; (void)d; (void)e; (void)p0; (void)p1;
    switch (op) {
#define X(E, name, arity, kind, expr) case GCR_OP_##E: return (float)(expr);
#include "ops.def"
#undef X
    default: return 0.0f;
    }
}

#endif
