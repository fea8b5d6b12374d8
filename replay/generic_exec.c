/* generic_exec.c — the device-independent executor: every node of every kernel runs through the
 * backend's eager run() on arena-bound tensors, so a graph works on any backend, with fusion
 * decided but not exploited: the fallback for a backend without an executor of its own, and a
 * reference for tests (GCR_TEST_EXECUTOR=generic). Values a fused group keeps internal get
 * scratch buffers here. */
#include "graph.h"
#include <stdlib.h>

typedef struct generic_state {
    int n;
    void **bufs;
    size_t *bytes;
} generic_state;

static gcr_status generic_build(gcr_graph *g, gcr_variant *v, int *failed_kernel)
{
    (void)failed_kernel;
    gcr_ctx *ctx = g->ctx;
    gcr_ir *ir = v->ir;
    generic_state *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    v->ex_state = st;
    st->bufs = calloc((size_t)ir->n_values + 1, sizeof *st->bufs);
    st->bytes = calloc((size_t)ir->n_values + 1, sizeof *st->bytes);
    if (!st->bufs || !st->bytes) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    for (int x = 0; x < ir->n_values; x++) {
        gcr_value *val = &ir->values[x];
        if (val->kind != GCR_V_INTER || val->buf != GCR_BUF_NONE || val->producer < 0 || ir->nodes[val->producer].dead)
            continue;
        gcr_status s = ctx->be->alloc(ctx, val->bytes ? val->bytes : 1, &st->bufs[x]);
        GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes of scratch", val->bytes);
        st->bytes[x] = val->bytes;
        v->ptr[x] = st->bufs[x];
    }
    st->n = ir->n_values;
    return GCR_OK;
}

static gcr_status generic_run(gcr_graph *g, gcr_variant *v)
{
    gcr_ir *ir = v->ir;
    bool prof = g->ctx->knobs.profile != NULL;
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        double t0 = prof ? gcr_prof_now_us() : 0;
        for (int i = 0; i < K->n_nodes; i++) GCR_TRY(gcr_variant_run_node(g, v, K->nodes[i]));
        if (prof) {
            gcr_ctx_sync(g->ctx);
            gcr_prof_add(g, K->name, t0, gcr_prof_now_us() - t0);
        }
    }
    return GCR_OK;
}

static void generic_destroy(gcr_graph *g, gcr_variant *v)
{
    generic_state *st = v->ex_state;
    if (!st) return;
    for (int x = 0; x < st->n; x++)
        if (st->bufs[x]) g->ctx->be->free(g->ctx, st->bufs[x], st->bytes[x]);
    free(st->bufs);
    free(st->bytes);
    free(st);
    v->ex_state = NULL;
}

const gcr_executor gcr_generic_executor = {"generic", generic_build, generic_run, generic_destroy};
