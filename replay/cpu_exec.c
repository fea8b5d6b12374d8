/* cpu_exec.c — the CPU executor: eager kernels through the CPU backend; fused groups as tile
 * programs that evaluate the group's expression DAG (gcr_pw_eval: the op table's formulas, the
 * same text CUDA codegen stringifies) over tiles of GCR_TILE elements of the iteration space.
 * Anchored groups run their prologues into scratch, the anchor through its CPU kernel, then the
 * epilogue over the anchor's result. */
#include "graph.h"
#include "../lib/pw_eval.h"
#include <stdlib.h>

#define GCR_TILE 256

typedef struct cpu_state {
    float *vals;      /* [max_expr][GCR_TILE] expression results of the current tile */
    int64_t *offs;    /* [max_io][GCR_TILE] element offsets of each load and store */
    int64_t *cur;     /* [max_io] running offsets */
    const int64_t **io_st; /* [max_io] strides of each load and store over the space */
    int n_scratch;
    void **scratch;   /* prologue results and anchor accumulators of the variant */
} cpu_state;

static float round_to(float x, gcr_dtype t)
{
    if (t == GCR_F32) return x;
    uint64_t b = 0;
    gcr_store_f32(&b, t, 0, x);
    return gcr_load_f32(&b, t, 0);
}

/* Runs one group: loads through gin strides, expressions in order, stores to gout values. */
static void run_group(cpu_state *st, gcr_variant *v, const gcr_group *g)
{
    const gcr_ir *ir = v->ir;
    int nd = g->space.ndim, nio = g->n_in + g->n_out;
    int64_t numel = gcr_meta_numel(&g->space);
    const int64_t **io_st = st->io_st;
    int64_t stz[GCR_MAX_DIMS] = {0};
    for (int i = 0; i < g->n_in; i++) io_st[i] = g->in[i].strides;
    for (int o = 0; o < g->n_out; o++) {
        const gcr_meta *m = &ir->values[g->out[o].value].m;
        io_st[g->n_in + o] = m->ndim == nd ? m->strides : stz;
    }
    int64_t idx[GCR_MAX_DIMS] = {0};
    for (int j = 0; j < nio; j++) st->cur[j] = 0;
    for (int64_t base = 0; base < numel; base += GCR_TILE) {
        int cnt = (int)(numel - base < GCR_TILE ? numel - base : GCR_TILE);
        for (int t = 0; t < cnt; t++) {
            for (int j = 0; j < nio; j++) st->offs[j * GCR_TILE + t] = st->cur[j];
            /* advance the row-major counter, carrying into outer dims */
            for (int d = nd - 1; d >= 0; d--) {
                idx[d]++;
                for (int j = 0; j < nio; j++) st->cur[j] += io_st[j][d];
                if (idx[d] < g->space.shape[d] || d == 0) break;
                for (int j = 0; j < nio; j++) st->cur[j] -= io_st[j][d] * idx[d];
                idx[d] = 0;
            }
        }
        for (int e = 0; e < g->n_expr; e++) {
            const gcr_expr *x = &g->expr[e];
            float *out = st->vals + (size_t)e * GCR_TILE;
            if (x->kind == GCR_E_LOAD || x->kind == GCR_E_ACC) {
                const gcr_gin *in = &g->in[x->load];
                const void *p = v->ptr[in->value];
                gcr_dtype dt = ir->values[in->value].m.dtype;
                const int64_t *off = st->offs + (size_t)x->load * GCR_TILE;
                if (dt == GCR_F32)
                    for (int t = 0; t < cnt; t++) out[t] = ((const float *)p)[off[t]];
                else
                    for (int t = 0; t < cnt; t++) out[t] = gcr_load_f32(p, dt, off[t]);
                continue;
            }
            const float *a[5];
            float fixed[5];
            for (int k = 0; k < 5; k++) {
                a[k] = x->arg[k] >= 0 ? st->vals + (size_t)x->arg[k] * GCR_TILE : NULL;
                fixed[k] = k == 1 && x->has_scalar ? x->p0 : gcr_op_missing_input(x->op, k);
            }
#define ARG(k) (a[k] ? a[k][t] : fixed[k])
            for (int t = 0; t < cnt; t++)
                out[t] = round_to(gcr_pw_eval(x->op, ARG(0), ARG(1), ARG(2), ARG(3), ARG(4), x->p0, x->p1), x->dtype);
#undef ARG
        }
        for (int o = 0; o < g->n_out; o++) {
            const gcr_gout *go = &g->out[o];
            void *p = v->ptr[go->value];
            gcr_dtype dt = ir->values[go->value].m.dtype;
            const float *val = st->vals + (size_t)go->expr * GCR_TILE;
            const int64_t *off = st->offs + (size_t)(g->n_in + o) * GCR_TILE;
            for (int t = 0; t < cnt; t++) gcr_store_f32(p, dt, off[t], val[t]);
        }
    }
}

static gcr_status cpu_build(gcr_graph *g, gcr_variant *v, int *failed_kernel)
{
    gcr_ctx *ctx = g->ctx;
    gcr_ir *ir = v->ir;
    /* testing only: GCR_TEST_FAIL_FUSED=1 refuses every multi-op fused kernel as a failed compile
     * would, so the unfused fallback can be tested without a GPU */
    const char *fail = getenv("GCR_TEST_FAIL_FUSED");
    for (int k = 0; fail && *fail == '1' && k < ir->n_kernels; k++)
        if (ir->kernels[k].type == GCR_K_FUSED && ir->kernels[k].n_nodes >= 2) {
            *failed_kernel = k;
            return gcr_set_error(ctx, GCR_ERR_COMPILE, "cpu: GCR_TEST_FAIL_FUSED refuses %s", ir->kernels[k].name);
        }
    cpu_state *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    v->ex_state = st;
    int max_expr = 1, max_io = 1;
    st->scratch = calloc((size_t)ir->n_values + 1, sizeof *st->scratch);
    if (!st->scratch) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    st->n_scratch = ir->n_values;
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        if (K->type != GCR_K_FUSED) continue;
        const gcr_group *gs[GCR_MAX_ANCHOR_IN + 1] = {&K->epi, K->pro[0], K->pro[1], K->pro[2]};
        for (int i = 0; i < GCR_MAX_ANCHOR_IN + 1; i++) {
            if (!gs[i]) continue;
            if (gs[i]->n_expr > max_expr) max_expr = gs[i]->n_expr;
            if (gs[i]->n_in + gs[i]->n_out > max_io) max_io = gs[i]->n_in + gs[i]->n_out;
        }
        /* scratch for what the anchor reads from prologues and what its epilogue reads */
        int need[GCR_MAX_ANCHOR_IN + 1], nn = 0;
        for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
            if (K->pro[j]) need[nn++] = K->pro[j]->out[0].value;
        if (K->acc_value >= 0 && K->epi.n_expr > 0) need[nn++] = K->acc_value;
        for (int i = 0; i < nn; i++) {
            int x = need[i];
            if (ir->values[x].buf != GCR_BUF_NONE || st->scratch[x]) continue;
            size_t bytes = ir->values[x].bytes ? ir->values[x].bytes : 1;
            gcr_status s = ctx->be->alloc(ctx, bytes, &st->scratch[x]);
            GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes of scratch", bytes);
            v->ptr[x] = st->scratch[x];
        }
    }
    st->vals = malloc(sizeof(float) * (size_t)max_expr * GCR_TILE);
    st->offs = malloc(sizeof(int64_t) * (size_t)max_io * GCR_TILE);
    st->cur = malloc(sizeof(int64_t) * (size_t)max_io);
    st->io_st = malloc(sizeof *st->io_st * (size_t)max_io);
    if (!st->vals || !st->offs || !st->cur || !st->io_st) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    return GCR_OK;
}

static gcr_status cpu_run(gcr_graph *g, gcr_variant *v)
{
    cpu_state *st = v->ex_state;
    gcr_ir *ir = v->ir;
    bool prof = g->ctx->knobs.profile != NULL;
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        double t0 = prof ? gcr_prof_now_us() : 0;
        if (K->type == GCR_K_EAGER) {
            GCR_TRY(gcr_variant_run_node(g, v, K->node));
        } else {
            for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
                if (K->pro[j]) run_group(st, v, K->pro[j]);
            if (K->node >= 0) GCR_TRY(gcr_variant_run_node(g, v, K->node));
            if (K->epi.n_expr > 0) run_group(st, v, &K->epi);
        }
        if (prof) gcr_prof_add(g, K->name, t0, gcr_prof_now_us() - t0);
    }
    return GCR_OK;
}

static void cpu_destroy(gcr_graph *g, gcr_variant *v)
{
    cpu_state *st = v->ex_state;
    if (!st) return;
    for (int x = 0; x < st->n_scratch; x++)
        if (st->scratch[x]) g->ctx->be->free(g->ctx, st->scratch[x], v->ir->values[x].bytes);
    free(st->scratch);
    free(st->vals);
    free(st->offs);
    free(st->cur);
    free(st->io_st);
    free(st);
    v->ex_state = NULL;
}

const gcr_executor gcr_cpu_executor = {"cpu", cpu_build, cpu_run, cpu_destroy};
