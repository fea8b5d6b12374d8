/* binding.c — a variant's data pointers and the tensor handles over them: the pointers refreshed
 * before each run (inputs may move between replays), the settings its executor runs with, and the
 * output handles pointed at the variant's buffers after a run. */
#include "graph.h"
#include <stdlib.h>

static void prof_sink(void *g, const char *name, double ts_us, double dur_us) { gcr_prof_add(g, name, ts_us, dur_us); }

gcr_exec_settings gcr_graph_settings(gcr_graph *g)
{
    const gcr_knobs *k = &g->ctx->knobs;
    /* as dump.c's own files: "ALL" or " Source " turn it on, "sources" does not */
    bool source = k->dump_dir && gcr_dump_wants(k->dump, "source");
    return (gcr_exec_settings){.tf32 = g->tf32, .graphs = k->graphs != 0, .prof = k->profile ? prof_sink : NULL,
                               .prof_user = g, .dump_dir = source ? k->dump_dir : NULL};
}

/* every view's pointer from its root's */
static void refresh_views(gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->buf == GCR_BUF_ALIAS && v->ptr[val->root])
            v->ptr[x] = (char *)v->ptr[val->root] + val->offset * (int64_t)gcr_dtype_size(val->m.dtype);
    }
}

void gcr_variant_refresh_ptrs(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    for (int i = 0; i < ir->n_inputs; i++) v->ptr[ir->inputs[i]] = gcr_tensor_data(g->in_t[i]);
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->kind == GCR_V_CONST && val->ext) v->ptr[x] = v->cptr && v->cptr[x] ? v->cptr[x] : gcr_tensor_data(val->ext);
    }
    refresh_views(v);
}

/* [a, a + an) and [b, b + bn) share a byte */
static bool overlap(const void *a, size_t an, const void *b, size_t bn)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return an && bn && x < y + bn && y < x + an;
}

/* whether v's run writes a byte of [p, p + n): its arena or one of its output buffers (each the
 * root of a graph output; every replay asks, so the outputs are walked, not every value) */
static bool variant_writes(const gcr_variant *v, const void *p, size_t n)
{
    const gcr_ir *ir = v->ir;
    if (v->arena && overlap(p, n, v->arena, ir->arena_bytes)) return true;
    for (int o = 0; o < ir->n_outputs; o++) {
        const int x = ir->values[ir->outputs[o]].root;
        if (v->outbuf[x] && overlap(p, n, v->outbuf[x], ir->values[x].bytes)) return true;
    }
    return false;
}

gcr_status gcr_variant_unalias_inputs(gcr_graph *g, gcr_variant *v)
{
    gcr_ctx *ctx = g->ctx;
    gcr_ir *ir = v->ir;
    bool moved = false;
    for (int i = 0; i < ir->n_inputs; i++) {
        const gcr_tensor *t = g->in_t[i];
        const size_t bytes = (size_t)gcr_meta_span(&t->m) * gcr_dtype_size(t->m.dtype);
        const void *p = gcr_tensor_data(t);
        if (!variant_writes(v, p, bytes)) continue;
        char b[128];
        /* the host staging's upload lands in t inside the run, after any copy made here */
        GCR_CHECK(ctx, !(g->host_in && g->host_in[i].buf), GCR_ERR_INVALID,
                  "replay: input %d (%s) is staged from a host buffer and shares memory with a buffer this graph writes "
                  "(one of its outputs): bind a tensor of its own", i, gcr_meta_str(&t->m, b, sizeof b));
        if (!v->incopy) {
            v->incopy = calloc((size_t)ir->n_inputs, sizeof *v->incopy);
            GCR_CHECK(ctx, v->incopy, GCR_ERR_OOM, "replay: out of host memory for input copies");
        }
        if (!v->incopy[i].buf) {
            gcr_status s = ctx->be->alloc(ctx, bytes, &v->incopy[i].buf);
            GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes to copy input %d (%s), which shares memory "
                      "with this graph's outputs", bytes, i, gcr_meta_str(&t->m, b, sizeof b));
            v->incopy[i].bytes = bytes;
        }
        GCR_TRY(ctx->be->copy(ctx, v->incopy[i].buf, p, bytes, GCR_COPY_D2D));
        v->ptr[ir->inputs[i]] = v->incopy[i].buf;
        moved = true;
    }
    if (moved) refresh_views(v);
    return GCR_OK;
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
