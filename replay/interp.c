/* interp.c — the eager interpreter over a recorded op list: used when an input signature changes
 * and knobs.retrace is 0, or when the graph cannot be re-specialised for it (replay/sigcache.c),
 * so a stale graph never runs. Each node goes through gcr_dispatch on the current inputs, as the
 * API would make it (a reshape of an input now strided copies it first, where the recorded view
 * cannot hold); the output handles then own (share) the results' storage, and keep theirs when
 * a node fails. */
#include "graph.h"
#include <stdlib.h>

gcr_status gcr_ir_interpret(gcr_ctx *ctx, const gcr_ir *tr, gcr_tensor *const *in_t)
{
    gcr_tensor **val = calloc((size_t)tr->n_values + 1, sizeof *val);
    char *made = calloc((size_t)tr->n_values + 1, 1);
    if (!val || !made) {
        free(val);
        free(made);
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    }
    for (int x = 0; x < tr->n_values; x++)
        if (tr->values[x].kind == GCR_V_INPUT || tr->values[x].kind == GCR_V_CONST) val[x] = tr->values[x].ext;
    for (int i = 0; in_t && i < tr->n_inputs; i++) val[tr->inputs[i]] = in_t[i];
    /* the nodes run apart from the ctx's error state: a node's failure is known by its own status
     * even when an earlier error is still on the ctx, and is recorded below as any error is */
    gcr_eager_section sec;
    gcr_eager_begin(ctx, &sec);
    gcr_status s = GCR_OK;
    for (int i = 0; i < tr->n_nodes && s == GCR_OK; i++) {
        const gcr_node *nd = &tr->nodes[i];
        if (nd->dead) continue;
        gcr_call c;
        memset(&c, 0, sizeof c);
        c.op = nd->op;
        c.p = nd->p;
        c.n_in = nd->n_in;
        for (int k = 0; k < nd->n_in; k++) c.in[k] = nd->in[k] >= 0 ? val[nd->in[k]] : NULL;
        gcr_tensor *r = c.op == GCR_OP_RESHAPE ? gcr_dispatch_reshape(ctx, &c) : gcr_dispatch(ctx, &c);
        if (!r) {
            s = ctx->status ? ctx->status : GCR_ERR_INTERNAL;
            break;
        }
        val[nd->out] = r;
        made[nd->out] = 1;
    }
    char msg[sizeof ctx->err];
    memcpy(msg, ctx->err, sizeof msg);
    gcr_eager_end(ctx, &sec);
    if (s != GCR_OK) gcr_set_error(ctx, s, "%s", msg);
    for (int o = 0; o < tr->n_outputs && s == GCR_OK; o++) {
        int x = tr->outputs[o];
        gcr_tensor *h = tr->values[x].handle, *r = val[x];
        if (!h || !r) continue;
        /* the handle takes a reference on the result's storage and drops its old one */
        gcr_storage *old = h->st;
        if (r->st) r->st->refs++;
        h->st = r->st;
        h->m = r->m;
        h->offset = r->offset;
        if (old) {
            gcr_tensor *drop = gcr_tensor_shell(ctx, &h->m);
            if (drop) {
                drop->st = old;
                gcr_tensor_destroy(drop);
            }
        }
    }
    for (int x = 0; x < tr->n_values; x++)
        if (made[x]) gcr_tensor_destroy(val[x]);
    free(val);
    free(made);
    return s;
}
