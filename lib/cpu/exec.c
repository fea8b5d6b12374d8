/* exec.c — the CPU backend's executor (lib/exec.h): eager kernels through the CPU backend; fused
 * groups as tile programs that evaluate the group's expression DAG (gcr_pw_eval: the op table's formulas, the
 * same text CUDA codegen stringifies) over tiles of GCR_TILE elements of the iteration space.
 * Anchored groups run their prologues into scratch, the anchor through its CPU kernel, then the
 * epilogue over the anchor's result; a conv->conv pair first runs its depthwise conv into scratch,
 * which its prologue (or the anchor) reads. */
#include "cpu.h"
#include "../exec.h"
#include "../pw_eval.h"
#include <stdlib.h>

#define GCR_TILE 256

/* How a group walks its space: dims reordered so the first store is row-major (dense outputs,
 * NHWC included, then write linearly), size-1 dims dropped; streams whose offsets are the flat
 * index ("linear") or constant need no per-element index arithmetic. */
typedef struct tile_plan {
    int nd;
    int64_t shape[GCR_MAX_DIMS];
    int nio;                 /* loads then stores */
    int64_t (*st)[GCR_MAX_DIMS];
    char *kind;              /* per stream: 0 general, 1 linear, 2 constant */
    bool all_simple;
} tile_plan;

typedef struct cpu_state {
    float *vals;      /* [max_expr][GCR_TILE] expression results of the current tile */
    int64_t *offs;    /* [max_io][GCR_TILE] element offsets of each general load and store */
    int64_t *cur;     /* [max_io] running offsets */
    float *fill;      /* [5][GCR_TILE] scalar operands and missing inputs, splat */
    int n_scratch;
    void **scratch;   /* prologue results and anchor accumulators of the variant */
    tile_plan *plans; /* per kernel: [0] epilogue, [1..3] prologues */
    int n_plans;
} cpu_state;

/* a and b are the same float, bit for bit (so -0.0 is not 0.0) */
static bool same_bits(float a, float b)
{
    uint32_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

static float round_to(float x, gcr_dtype t)
{
    if (t == GCR_F32) return x;
    uint64_t b = 0;
    gcr_store_f32(&b, t, 0, x);
    return gcr_load_f32(&b, t, 0);
}

static gcr_status plan_group(const gcr_ir *ir, const gcr_group *g, tile_plan *tp)
{
    int nd = g->space.ndim;
    tp->nio = g->n_in + g->n_out;
    tp->st = calloc((size_t)(tp->nio ? tp->nio : 1), sizeof *tp->st);
    tp->kind = calloc((size_t)(tp->nio ? tp->nio : 1), 1);
    if (!tp->st || !tp->kind) return GCR_ERR_OOM;
    /* order: by the first store's strides, largest first (stable) */
    int order[GCR_MAX_DIMS], n = 0;
    const int64_t *key = g->n_out ? ir->values[g->out[0].value].m.strides : NULL;
    for (int d = 0; d < nd; d++)
        if (g->space.shape[d] != 1) order[n++] = d;
    for (int i = 1; key && i < n; i++) {
        int t = order[i], j = i;
        while (j > 0 && key[order[j - 1]] < key[t]) { order[j] = order[j - 1]; j--; }
        order[j] = t;
    }
    tp->nd = n;
    for (int i = 0; i < n; i++) tp->shape[i] = g->space.shape[order[i]];
    int64_t dense[GCR_MAX_DIMS], acc = 1;
    for (int i = n - 1; i >= 0; i--) { dense[i] = acc; acc *= tp->shape[i]; }
    tp->all_simple = true;
    for (int j = 0; j < tp->nio; j++) {
        const int64_t *src = j < g->n_in ? g->in[j].strides : ir->values[g->out[j - g->n_in].value].m.strides;
        bool lin = true, con = true;
        for (int i = 0; i < n; i++) {
            tp->st[j][i] = src[order[i]];
            lin = lin && tp->st[j][i] == dense[i];
            con = con && tp->st[j][i] == 0;
        }
        tp->kind[j] = con ? 2 : lin ? 1 : 0;
        if (!con && !lin) tp->all_simple = false;
    }
    return GCR_OK;
}

static void plan_free(tile_plan *tp)
{
    free(tp->st);
    free(tp->kind);
}

/* every pointwise formula, applied over a tile; the switch is outside the element loop */
static void eval_op(const gcr_expr *x, const float *const *A, float *out, int cnt)
{
    const float p0 = x->p0, p1 = x->p1;
    const float *A0 = A[0], *A1 = A[1], *A2 = A[2], *A3 = A[3], *A4 = A[4];
    switch (x->op) {
#define X(E, name, arity, kind, expr)                                                            \
    case GCR_OP_##E:                                                                             \
        for (int t = 0; t < cnt; t++) {                                                          \
            float a = A0[t], b = A1[t], c = A2[t], d = A3[t], e = A4[t];                         \
            (void)a; (void)b; (void)c; (void)d; (void)e; (void)p0; (void)p1;                     \
            out[t] = (float)(expr);                                                              \
        }                                                                                        \
        break;
#include "../ops.def"
#undef X
    default: break;
    }
    if (x->dtype == GCR_F16) { /* the round trip in bulk (F16C where present) */
        uint16_t h[GCR_TILE];
        gcr_f32_to_f16_n(h, 1, out, 1, cnt);
        gcr_f16_to_f32_n(out, 1, h, 1, cnt);
    } else if (x->dtype != GCR_F32) {
        for (int t = 0; t < cnt; t++) out[t] = round_to(out[t], x->dtype);
    }
}

/* Runs one group: loads through gin strides, expressions in order, stores to gout values. */
static void run_group(cpu_state *st, gcr_exec_job *job, const gcr_group *g, const tile_plan *tp)
{
    const gcr_ir *ir = job->ir;
    int nd = tp->nd, nio = tp->nio;
    int64_t numel = gcr_meta_numel(&g->space);
    int64_t idx[GCR_MAX_DIMS] = {0};
    for (int j = 0; j < nio; j++) st->cur[j] = 0;
    for (int64_t base = 0; base < numel; base += GCR_TILE) {
        int cnt = (int)(numel - base < GCR_TILE ? numel - base : GCR_TILE);
        if (!tp->all_simple) {
            for (int t = 0; t < cnt; t++) {
                for (int j = 0; j < nio; j++) st->offs[j * GCR_TILE + t] = st->cur[j];
                /* advance the row-major counter, carrying into outer dims */
                for (int d = nd - 1; d >= 0; d--) {
                    idx[d]++;
                    for (int j = 0; j < nio; j++) st->cur[j] += tp->st[j][d];
                    if (idx[d] < tp->shape[d] || d == 0) break;
                    for (int j = 0; j < nio; j++) st->cur[j] -= tp->st[j][d] * idx[d];
                    idx[d] = 0;
                }
            }
        }
        for (int e = 0; e < g->n_expr; e++) {
            const gcr_expr *x = &g->expr[e];
            float *out = st->vals + (size_t)e * GCR_TILE;
            if (x->kind == GCR_E_LOAD || x->kind == GCR_E_ACC) {
                const gcr_gin *in = &g->in[x->load];
                const void *p = job->ptr[in->value];
                gcr_dtype dt = ir->values[in->value].m.dtype;
                const int64_t *off = st->offs + (size_t)x->load * GCR_TILE;
                char k = tp->kind[x->load];
                if (k == 1 && dt == GCR_F32) {
                    memcpy(out, (const float *)p + base, sizeof(float) * (size_t)cnt);
                } else if (k == 2) {
                    float c = gcr_load_f32(p, dt, 0);
                    for (int t = 0; t < cnt; t++) out[t] = c;
                } else if (k == 1) {
                    gcr_load_f32_n(out, 1, p, dt, base, 1, cnt);
                } else if (dt == GCR_F32) {
                    for (int t = 0; t < cnt; t++) out[t] = ((const float *)p)[off[t]];
                } else if (dt == GCR_F16) { /* gather the halves, convert in bulk */
                    uint16_t h[GCR_TILE];
                    for (int t = 0; t < cnt; t++) h[t] = ((const uint16_t *)p)[off[t]];
                    gcr_f16_to_f32_n(out, 1, h, 1, cnt);
                } else {
                    for (int t = 0; t < cnt; t++) out[t] = gcr_load_f32(p, dt, off[t]);
                }
                continue;
            }
            const float *A[5];
            for (int k = 0; k < 5; k++) {
                if (x->arg[k] >= 0) {
                    A[k] = st->vals + (size_t)x->arg[k] * GCR_TILE;
                    continue;
                }
                float c = k == 1 && x->has_scalar ? x->p0 : gcr_op_missing_input(x->op, k);
                float *f = st->fill + (size_t)k * GCR_TILE;
                if (!same_bits(f[0], c) || !same_bits(f[cnt - 1], c)) /* -0.0 == 0.0, but not in 1 / x */
                    for (int t = 0; t < GCR_TILE; t++) f[t] = c;
                A[k] = f;
            }
            eval_op(x, A, out, cnt);
        }
        for (int o = 0; o < g->n_out; o++) {
            const gcr_gout *go = &g->out[o];
            void *p = job->ptr[go->value];
            gcr_dtype dt = ir->values[go->value].m.dtype;
            const float *val = st->vals + (size_t)go->expr * GCR_TILE;
            char k = tp->kind[g->n_in + o];
            const int64_t *off = st->offs + (size_t)(g->n_in + o) * GCR_TILE;
            if (k == 1 && dt == GCR_F32) memcpy((float *)p + base, val, sizeof(float) * (size_t)cnt);
            else if (k == 1) gcr_store_f32_n(p, dt, base, 1, val, 1, cnt);
            else if (k == 2) gcr_store_f32(p, dt, 0, val[cnt - 1]);
            else if (dt == GCR_F16) { /* convert in bulk, scatter the halves */
                uint16_t h[GCR_TILE];
                gcr_f32_to_f16_n(h, 1, val, 1, cnt);
                for (int t = 0; t < cnt; t++) ((uint16_t *)p)[off[t]] = h[t];
            } else for (int t = 0; t < cnt; t++) gcr_store_f32(p, dt, off[t], val[t]);
        }
    }
}

static gcr_status cpu_build(gcr_exec_job *job, int *failed_kernel)
{
    gcr_ctx *ctx = job->ctx;
    const gcr_ir *ir = job->ir;
    cpu_state *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    job->state = st;
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
        int need[GCR_MAX_ANCHOR_IN + 2], nn = 0;
        if (K->inner >= 0) need[nn++] = ir->nodes[K->inner].out; /* a conv->conv pair's first result */
        for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
            if (K->pro[j]) need[nn++] = K->pro[j]->out[0].value;
        if (K->acc_value >= 0 && K->epi.n_expr > 0) need[nn++] = K->acc_value;
        for (int i = 0; i < nn; i++) {
            int x = need[i];
            if (ir->values[x].buf != GCR_BUF_NONE || st->scratch[x]) continue;
            size_t bytes = ir->values[x].bytes ? ir->values[x].bytes : 1;
            gcr_status s = ctx->be->alloc(ctx, bytes, &st->scratch[x]);
            GCR_CHECK(ctx, s == GCR_OK, s, "replay: cannot allocate %zu bytes of scratch", bytes);
            job->ptr[x] = st->scratch[x];
        }
    }
    st->vals = malloc(sizeof(float) * (size_t)max_expr * GCR_TILE);
    st->offs = malloc(sizeof(int64_t) * (size_t)max_io * GCR_TILE);
    st->cur = malloc(sizeof(int64_t) * (size_t)max_io);
    st->fill = malloc(sizeof(float) * 5 * GCR_TILE);
    st->plans = calloc((size_t)(ir->n_kernels ? ir->n_kernels : 1) * (GCR_MAX_ANCHOR_IN + 1), sizeof *st->plans);
    if (!st->vals || !st->offs || !st->cur || !st->fill || !st->plans)
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    for (int i = 0; i < 5 * GCR_TILE; i++) st->fill[i] = 0.0f;
    st->n_plans = ir->n_kernels * (GCR_MAX_ANCHOR_IN + 1);
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        if (K->type != GCR_K_FUSED) continue;
        const gcr_group *gs[GCR_MAX_ANCHOR_IN + 1] = {&K->epi, K->pro[0], K->pro[1], K->pro[2]};
        for (int i = 0; i < GCR_MAX_ANCHOR_IN + 1; i++)
            if (gs[i] && plan_group(ir, gs[i], &st->plans[k * (GCR_MAX_ANCHOR_IN + 1) + i]) != GCR_OK)
                return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    }
    return GCR_OK;
}

static gcr_status cpu_run(gcr_exec_job *job)
{
    cpu_state *st = job->state;
    const gcr_ir *ir = job->ir;
    bool prof = job->set.prof != NULL;
    GCR_TRY(gcr_exec_stage_copies(job, true)); /* host staging: plain copies on the CPU */
    for (int k = 0; k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        double t0 = prof ? gcr_exec_now_us() : 0;
        if (K->type == GCR_K_EAGER) {
            GCR_TRY(gcr_exec_run_node(job, K->nodes[0], NULL));
        } else {
            const tile_plan *tp = &st->plans[k * (GCR_MAX_ANCHOR_IN + 1)];
            if (K->inner >= 0) GCR_TRY(gcr_exec_run_node(job, K->inner, NULL));
            for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
                if (K->pro[j]) run_group(st, job, K->pro[j], &tp[1 + j]);
            if (K->anchor >= 0) GCR_TRY(gcr_exec_run_node(job, K->anchor, NULL));
            if (K->epi.n_expr > 0) run_group(st, job, &K->epi, &tp[0]);
        }
        if (prof) job->set.prof(job->set.prof_user, K->name, t0, gcr_exec_now_us() - t0);
    }
    return gcr_exec_stage_copies(job, false);
}

static void cpu_destroy(gcr_exec_job *job)
{
    cpu_state *st = job->state;
    if (!st) return;
    for (int x = 0; x < st->n_scratch; x++)
        if (st->scratch[x]) job->ctx->be->free(job->ctx, st->scratch[x], job->ir->values[x].bytes);
    free(st->scratch);
    free(st->vals);
    free(st->offs);
    free(st->cur);
    free(st->fill);
    for (int i = 0; st->plans && i < st->n_plans; i++) plan_free(&st->plans[i]);
    free(st->plans);
    free(st);
    job->state = NULL;
}

const gcr_executor gcr_cpu_executor = {"cpu", cpu_build, cpu_run, cpu_destroy, NULL};
