/* exec.c — what every executor shares (exec.h): the pick, bound handles over a job's pointers,
 * one node through the backend; and the generic executor, which runs every node of every kernel
 * through the backend's eager run() on arena-bound handles, so a graph works on any backend, with
 * fusion decided but not exploited: the fallback for a backend without an executor of its own, and
 * a reference for tests (gcr_exec_force). Values a fused group keeps internal get scratch buffers. */
#include "exec.h"
#include <stdlib.h>
#include <time.h>

const gcr_executor *gcr_exec_pick(const gcr_ctx *ctx)
{
    if (ctx->exec_forced) return ctx->exec_forced;
    return ctx->be->executor ? ctx->be->executor : &gcr_generic_executor;
}

void gcr_exec_force(gcr_ctx *ctx, const gcr_executor *ex) { ctx->exec_forced = ex; }

double gcr_exec_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

gcr_tensor *gcr_exec_bound(gcr_exec_job *j, int value)
{
    gcr_tensor *t = j->bound[value];
    const gcr_value *x = &j->ir->values[value];
    if (!t) {
        t = gcr_tensor_shell(j->ctx, &x->m);
        if (!t) return NULL;
        if (gcr_tensor_bind(t, j->ptr[value], x->bytes) != GCR_OK) {
            gcr_tensor_destroy(t);
            return NULL;
        }
        j->bound[value] = t;
    }
    t->st->data = j->ptr[value];
    return t;
}

gcr_status gcr_exec_call(gcr_exec_job *j, const gcr_node *nd, int x0, gcr_call *c)
{
    memset(c, 0, sizeof *c);
    c->op = nd->op;
    c->p = nd->p;
    c->n_in = nd->n_in;
    for (int k = 0; k < nd->n_in; k++) {
        int x = k == 0 && x0 >= 0 ? x0 : nd->in[k];
        if (x < 0) continue;
        c->in[k] = gcr_exec_bound(j, x);
        if (!c->in[k]) return j->ctx->status ? j->ctx->status : GCR_ERR_OOM;
    }
    return GCR_OK;
}

gcr_status gcr_exec_run_node(gcr_exec_job *j, int node, gcr_exec_run_fn run)
{
    gcr_ctx *ctx = j->ctx;
    const gcr_node *nd = &j->ir->nodes[node];
    if (gcr_meta_numel(&j->ir->values[nd->out].m) == 0) return GCR_OK;
    gcr_call c;
    GCR_TRY(gcr_exec_call(j, nd, -1, &c));
    gcr_tensor *out = gcr_exec_bound(j, nd->out);
    if (!out) return ctx->status ? ctx->status : GCR_ERR_OOM;
    gcr_status s = run ? run(j, &c, out) : ctx->be->run(ctx, &c, out);
    if (s != GCR_OK) {
        char b[96];
        gcr_set_error(ctx, s, "replay: %s (%s) failed on %s", gcr_op_table[nd->op].name,
                      gcr_meta_str(&j->ir->values[nd->out].m, b, sizeof b), ctx->be->name);
    }
    return s;
}

/* ---------------------------------------------------------------- the generic executor */

typedef struct generic_state {
    int n;
    void **bufs;
    size_t *bytes;
} generic_state;

static gcr_status generic_build(gcr_exec_job *j, int *failed_kernel)
{
    (void)failed_kernel;
    gcr_ctx *ctx = j->ctx;
    const gcr_ir *ir = j->ir;
    generic_state *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    j->state = st;
    st->bufs = calloc((size_t)ir->n_values + 1, sizeof *st->bufs);
    st->bytes = calloc((size_t)ir->n_values + 1, sizeof *st->bytes);
    if (!st->bufs || !st->bytes) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    for (int x = 0; x < ir->n_values; x++) {
        const gcr_value *val = &ir->values[x];
        if (val->kind != GCR_V_INTER || val->buf != GCR_BUF_NONE || val->producer < 0 || ir->nodes[val->producer].dead)
            continue;
        gcr_status s = ctx->be->alloc(ctx, val->bytes ? val->bytes : 1, &st->bufs[x]);
        GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes of scratch", val->bytes);
        st->bytes[x] = val->bytes;
        j->ptr[x] = st->bufs[x];
    }
    st->n = ir->n_values;
    return GCR_OK;
}

gcr_status gcr_exec_stage_copies(gcr_exec_job *j, bool in)
{
    gcr_ctx *ctx = j->ctx;
    const gcr_exec_stage *s = in ? j->stage : j->stage + j->n_stage_in;
    int n = in ? j->n_stage_in : j->n_stage_out;
    for (int i = 0; i < n; i++, s++) {
        if (s->bytes == 0) continue;
        gcr_tensor *t = gcr_exec_bound(j, s->value);
        if (!t) return ctx->status ? ctx->status : GCR_ERR_OOM;
        void *dev = s->dense ? s->dense->st->data : j->ptr[s->value];
        if (in) {
            GCR_TRY(ctx->be->copy(ctx, dev, s->host, s->bytes, GCR_COPY_H2D_QUEUED));
            if (s->dense) GCR_TRY(gcr_layout_copy(ctx, s->dense, t));
        } else {
            if (s->dense) GCR_TRY(gcr_layout_copy(ctx, t, s->dense));
            GCR_TRY(ctx->be->copy(ctx, s->host, dev, s->bytes, GCR_COPY_D2H_QUEUED));
        }
    }
    return GCR_OK;
}

static gcr_status generic_run(gcr_exec_job *j)
{
    const gcr_ir *ir = j->ir;
    GCR_TRY(gcr_exec_stage_copies(j, true));
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        double t0 = j->set.prof ? gcr_exec_now_us() : 0;
        for (int i = 0; i < K->n_nodes; i++) GCR_TRY(gcr_exec_run_node(j, K->nodes[i], NULL));
        if (j->set.prof) {
            gcr_ctx_sync(j->ctx);
            j->set.prof(j->set.prof_user, K->name, t0, gcr_exec_now_us() - t0);
        }
    }
    GCR_TRY(gcr_exec_stage_copies(j, false));
    return j->n_stage_out ? gcr_ctx_sync(j->ctx) : GCR_OK;
}

static void generic_destroy(gcr_exec_job *j)
{
    generic_state *st = j->state;
    if (!st) return;
    for (int x = 0; x < st->n; x++)
        if (st->bufs[x]) j->ctx->be->free(j->ctx, st->bufs[x], st->bytes[x]);
    free(st->bufs);
    free(st->bytes);
    free(st);
    j->state = NULL;
}

const gcr_executor gcr_generic_executor = {"generic", generic_build, generic_run, generic_destroy, NULL};
