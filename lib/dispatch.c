/* dispatch.c — the single path every op call takes: infer and validate (gcr_infer, then the
 * backend's own limits), then run eagerly on the context's backend or hand to the recorder that the
 * capture layer installed on the context (gcr_recorder) while it records. */
#include "internal.h"
#include <stdio.h>

int64_t gcr_view_offset(const gcr_call *c)
{
    gcr_resolved r;
    char err[8];
    if (c->op != GCR_OP_SLICE || gcr_resolve(c->op, &c->p, &c->in[0]->m, &r, err, sizeof err) != GCR_OK) return 0;
    return r.len ? r.start * c->in[0]->m.strides[r.axis] : 0;
}

gcr_status gcr_validate(const gcr_ctx *ctx, const gcr_call *c, gcr_meta *out, char *err, size_t errn)
{
    GCR_TRY(gcr_infer(c, out, err, errn));
    return ctx->be->check ? ctx->be->check(c, out, err, errn) : GCR_OK;
}

bool gcr_on_ctx(gcr_ctx *ctx, const gcr_tensor *t, const char *op, int i)
{
    if (!t || t->ctx == ctx) return true;
    char b[96];
    gcr_set_error(ctx, GCR_ERR_INVALID, "%s: input %d (%s) belongs to another context", op, i, gcr_meta_str(&t->m, b, sizeof b));
    return false;
}

gcr_tensor *gcr_dispatch(gcr_ctx *ctx, gcr_call *c)
{
    const char *name = gcr_op_table[c->op].name;
    /* a region pass repeating its recorded calls: each is matched before anything is inferred or
     * validated (the host cost of a pass is most of a small model's loop-step overhead) */
    if (ctx->mode == GCR_MODE_CHECK && ctx->rec) {
        gcr_tensor *t = ctx->rec->replayed(ctx, c);
        if (t) return t;
    }
    for (int i = 0; i < c->n_in; i++)
        if (!gcr_on_ctx(ctx, c->in[i], name, i)) return NULL;
    gcr_meta out;
    char err[512];
    gcr_status s = gcr_validate(ctx, c, &out, err, sizeof err);
    if (s != GCR_OK) {
        gcr_set_error(ctx, s, "%s", err);
        return NULL;
    }
    if (ctx->mode != GCR_MODE_EAGER) {
        GCR_CHECK_NULL(ctx, ctx->rec, GCR_ERR_INTERNAL, "%s: the context records with no recorder installed", name);
        return ctx->rec->record(ctx, c, &out);
    }

    for (int i = 0; i < c->n_in; i++) {
        gcr_tensor *t = c->in[i];
        if (t && !t->st) {
            char b[96];
            gcr_set_error(ctx, GCR_ERR_CAPTURE, "%s: input %d (%s) is a traced tensor of a capture and has no data",
                          name, i, gcr_meta_str(&t->m, b, sizeof b));
            return NULL;
        }
    }
    if (gcr_op_is_view(c->op))
        return gcr_tensor_view_of(ctx, c->in[0], &out, c->in[0]->offset + gcr_view_offset(c));
    gcr_tensor *t = gcr_tensor_alloc(ctx, &out, name);
    if (!t) return NULL;
    if (gcr_meta_numel(&out) > 0) {
        s = ctx->be->run(ctx, c, t);
        if (s != GCR_OK) {
            char b[96];
            gcr_set_error(ctx, s, "%s: %s backend failed for input %s", name, ctx->be->name,
                          c->in[0] ? gcr_meta_str(&c->in[0]->m, b, sizeof b) : "-");
            gcr_tensor_destroy(t);
            return NULL;
        }
    }
    return t;
}

gcr_status gcr_run_kind(gcr_ctx *ctx, const char *be, const gcr_run_fn *kernels, const gcr_call *c, gcr_tensor *out)
{
    gcr_kind k = gcr_op_table[c->op].kind;
    if (!kernels[k])
        return gcr_set_error(ctx, GCR_ERR_INTERNAL, "%s: op %s of kind %s has no kernel", be, gcr_op_table[c->op].name,
                             gcr_kind_name(k));
    return kernels[k](ctx, c, out);
}
