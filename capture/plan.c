/* plan.c — the memory plan: every materialised intermediate gets an offset in one arena, reused
 * once its lifetime (in kernel indices) has ended; greedy, largest first, lowest fitting offset.
 * Outputs keep their own static buffers (never reused), views alias their root, inputs and
 * constants stay the user's. */
#include "ir.h"
#include <stdlib.h>

#define GCR_ALIGN 256

static size_t align_up(size_t x) { return (x + GCR_ALIGN - 1) & ~(size_t)(GCR_ALIGN - 1); }

typedef struct { size_t off, end; } span;

static int by_off(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

gcr_status gcr_plan(gcr_ir *ir)
{
    int nv = ir->n_values;
    for (int v = 0; v < nv; v++) {
        gcr_value *x = &ir->values[v];
        x->first = x->last = -1;
        x->buf_off = 0;
        x->bytes = gcr_value_bytes(x);
    }
    /* roots of output views must keep their bytes for the user */
    char *out_root = calloc((size_t)nv + 1, 1);
    int *idx = malloc(sizeof(int) * (size_t)(nv + 1));
    span *sp = malloc(sizeof(span) * (size_t)(nv + 1));
    if (!out_root || !idx || !sp) {
        free(out_root);
        free(idx);
        free(sp);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "plan: out of host memory");
    }
    for (int o = 0; o < ir->n_outputs; o++) out_root[ir->values[ir->outputs[o]].root] = 1;
    /* lifetimes: produced by the kernel storing it, alive until the last kernel reading it or a
     * view of it */
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        for (int i = 0; i < K->n_nodes; i++) {
            const gcr_node *nd = &ir->nodes[K->nodes[i]];
            gcr_value *o = &ir->values[nd->out];
            if (o->first < 0) o->first = k;
            if (o->last < k) o->last = k;
            for (int j = 0; j < nd->n_in; j++) {
                if (nd->in[j] < 0) continue;
                gcr_value *r = &ir->values[ir->values[nd->in[j]].root];
                if (r->last < k) r->last = k;
            }
        }
    }
    ir->intermediate_bytes = ir->output_bytes = 0;
    int na = 0;
    for (int v = 0; v < nv; v++) {
        gcr_value *x = &ir->values[v];
        bool live = x->producer >= 0 && !ir->nodes[x->producer].dead;
        switch (x->kind) {
        case GCR_V_INPUT:
        case GCR_V_CONST: x->buf = GCR_BUF_EXTERNAL; break;
        case GCR_V_VIEW: x->buf = GCR_BUF_ALIAS; break;
        case GCR_V_INTER:
            if (!live) { x->buf = GCR_BUF_NONE; break; }
            if (x->out_index >= 0 || out_root[v]) {
                x->buf = GCR_BUF_OUTPUT;
                ir->output_bytes += align_up(x->bytes);
                break;
            }
            ir->intermediate_bytes += align_up(x->bytes);
            if (!x->written) { x->buf = GCR_BUF_NONE; break; }
            x->buf = GCR_BUF_ARENA;
            idx[na++] = v;
            break;
        }
    }
    /* largest first (insertion sort: value counts are small) */
    for (int i = 1; i < na; i++) {
        int t = idx[i], j = i;
        while (j > 0 && ir->values[idx[j - 1]].bytes < ir->values[t].bytes) { idx[j] = idx[j - 1]; j--; }
        idx[j] = t;
    }
    size_t arena = 0;
    for (int i = 0; i < na; i++) {
        gcr_value *x = &ir->values[idx[i]];
        int ns = 0;
        for (int j = 0; j < i; j++) {
            const gcr_value *y = &ir->values[idx[j]];
            if (y->first <= x->last && x->first <= y->last) sp[ns++] = (span){y->buf_off, y->buf_off + align_up(y->bytes)};
        }
        qsort(sp, (size_t)ns, sizeof *sp, by_off);
        size_t off = 0, need = align_up(x->bytes);
        for (int j = 0; j < ns; j++) {
            if (sp[j].off >= off + need) break;
            if (sp[j].end > off) off = sp[j].end;
        }
        x->buf_off = off;
        if (off + need > arena) arena = off + need;
    }
    ir->arena_bytes = arena;
    free(out_root);
    free(idx);
    free(sp);
    return GCR_OK;
}
