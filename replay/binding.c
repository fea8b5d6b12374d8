/* binding.c — a variant's data pointers and the tensor handles over them: the pointers refreshed
 * before each run (inputs may move between replays), the bound handles that eager backend calls
 * read, and the output handles pointed at the variant's buffers after a run. */
#include "graph.h"
#include <stdlib.h>

gcr_tensor *gcr_variant_bound(gcr_variant *v, int value)
{
    gcr_tensor *t = v->bound[value];
    const gcr_value *x = &v->ir->values[value];
    if (!t) {
        t = gcr_tensor_shell(v->ir->ctx, &x->m);
        if (!t) return NULL;
        if (gcr_tensor_bind(t, v->ptr[value], x->bytes) != GCR_OK) {
            gcr_tensor_destroy(t);
            return NULL;
        }
        v->bound[value] = t;
    }
    t->st->data = v->ptr[value];
    return t;
}

gcr_status gcr_variant_call(gcr_variant *v, const gcr_node *nd, int x0, gcr_call *c)
{
    memset(c, 0, sizeof *c);
    c->op = nd->op;
    c->p = nd->p;
    c->n_in = nd->n_in;
    for (int k = 0; k < nd->n_in; k++) {
        int x = k == 0 && x0 >= 0 ? x0 : nd->in[k];
        if (x < 0) continue;
        c->in[k] = gcr_variant_bound(v, x);
        if (!c->in[k]) return v->ir->ctx->status ? v->ir->ctx->status : GCR_ERR_OOM;
    }
    return GCR_OK;
}

gcr_status gcr_variant_run_node(gcr_graph *g, gcr_variant *v, int node)
{
    gcr_ctx *ctx = g->ctx;
    const gcr_node *nd = &v->ir->nodes[node];
    if (gcr_meta_numel(&v->ir->values[nd->out].m) == 0) return GCR_OK;
    gcr_call c;
    GCR_TRY(gcr_variant_call(v, nd, -1, &c));
    gcr_tensor *out = gcr_variant_bound(v, nd->out);
    if (!out) return ctx->status ? ctx->status : GCR_ERR_OOM;
    gcr_status s = ctx->be->run(ctx, &c, out);
    if (s != GCR_OK) {
        char b[96];
        gcr_set_error(ctx, s, "replay: %s (%s) failed on %s", gcr_op_table[nd->op].name,
                      gcr_meta_str(&v->ir->values[nd->out].m, b, sizeof b), ctx->be->name);
    }
    return s;
}

void gcr_variant_refresh_ptrs(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int i = 0; i < ir->n_inputs; i++) v->ptr[ir->inputs[i]] = gcr_tensor_data(g->in_t[i]);
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->kind == GCR_V_CONST && val->ext) v->ptr[x] = gcr_tensor_data(val->ext);
    }
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->buf == GCR_BUF_ALIAS && v->ptr[val->root])
            v->ptr[x] = (char *)v->ptr[val->root] + val->offset * (int64_t)gcr_dtype_size(val->m.dtype);
    }
}

/* The storage that outputs rooted at value x share, with the element offset of x's first element
 * in it (NULL with OOM recorded): x's output buffer, lent by v (made at the first bind), or the
 * storage of the external tensor that x is. */
static gcr_storage *root_storage(gcr_graph *g, gcr_variant *v, int x, int64_t *off)
{
    const gcr_value *val = &v->ir->values[x];
    const gcr_tensor *src = val->kind == GCR_V_CONST ? val->ext : NULL;
    for (int i = 0; val->kind == GCR_V_INPUT && i < v->ir->n_inputs && !src; i++)
        if (v->ir->inputs[i] == x) src = g->in_t[i];
    *off = src ? src->offset : 0;
    if (src) return src->st;
    if (!v->outbuf[x]) {
        gcr_set_error(g->ctx, GCR_ERR_INTERNAL, "replay: output root v%d has no buffer", x);
        return NULL;
    }
    if (!v->wrap[x]) {
        gcr_storage *st = calloc(1, sizeof *st);
        if (!st) {
            gcr_set_error(g->ctx, GCR_ERR_OOM, "replay: out of host memory binding outputs");
            return NULL;
        }
        st->refs = 1;
        st->data = v->outbuf[x];
        st->bytes = val->bytes;
        st->borrowed = true;
        v->wrap[x] = st;
    }
    return v->wrap[x];
}

gcr_status gcr_variant_bind_outputs(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int o = 0; o < ir->n_outputs; o++) {
        const gcr_value *val = &ir->values[ir->outputs[o]];
        gcr_tensor *h = val->handle;
        if (!h) continue;
        int64_t off;
        gcr_storage *st = root_storage(g, v, val->root, &off);
        if (!st) return g->ctx->status;
        h->m = val->m;
        if (h->st != st) gcr_tensor_share(h, st, off + val->offset);
        else h->offset = off + val->offset;
    }
    return GCR_OK;
}
