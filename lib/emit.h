/* emit.h — the one expression emitter: a fused group's pointwise DAG (lib/ir.h) as C statements,
 * one per expression ("float e3; { const float a = e1; ... e3 = (float)(<op formula>); }"), the
 * formulas being the op table's text. Who emits says how loads read, how a float constant and a
 * rounding are written: CUDA codegen (lib/cuda/codegen_emit.c) and the "source" dump
 * (capture/text.c) share everything else. */
#ifndef GCR_EMIT_H
#define GCR_EMIT_H

#include "ir.h"
#include "text.h"

typedef struct gcr_emit gcr_emit;
struct gcr_emit {
    /* the text of group load l: an f32 expression */
    void (*load)(gcr_text *b, const gcr_emit *em, int l);
    /* a float literal of value f */
    void (*constant)(gcr_text *b, float f);
    /* statements (indented by ind) that round expression e, an f32, to dt as a store would, or
     * nothing; cast: e is an explicit CAST to dt */
    void (*round)(gcr_text *b, const char *ind, int e, gcr_dtype dt, bool cast);
    const void *gen;       /* the callbacks' state (the generator's) */
    const char *acc;       /* text of the anchor's result (E_ACC), already f32 */
    gcr_dtype acc_dtype;
    const gcr_group *g;
    const char *ind;       /* indentation */
};

/* One statement per expression of em->g, in order: float eN = ...; rounded as em says. */
void gcr_emit_exprs(gcr_text *b, const gcr_emit *em);

#endif /* GCR_EMIT_H */
