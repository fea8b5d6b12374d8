/* test_fuzz_replay.c — seeded differential fuzz of the replay API. A generator writes random
 * small programs on the public API (pointwise, broadcast binary, reductions with negative and
 * positive axes and keepdim, softmax, concat, slice, permute, flatten, reshape, linear, matmul,
 * conv2d, pools, batch norm, casts to f16/bf16) over inputs that may be views; each program runs
 * (a) as an explicit capture, replayed with fresh host data and re-bound (gcr_graph_bind_input)
 *     to inputs of the same signature, another shape, another rank (rank-polymorphic programs:
 *     axes written negative), another dtype, another layout (permuted, sliced, NHWC views), an
 *     earlier binding again, and the capture's inputs;
 * (b) as a GCR_REGION body with graph_cache 1..3, more input signatures than the cache holds in
 *     random order, fresh host data written between passes (or at the body's start), signature
 *     tensors freed and made anew, and (for programs with a state input) each pass's output fed
 *     back as the next pass's state; the explicit graph replays between passes.
 * Eager is the oracle: every result is compared with an eager run of the same program on the same
 * data; where eager fails, the replay or pass must fail with the same status, and an explicit
 * graph's outputs must keep their last results. Region handles are checked against gcr.h: a
 * cached variant returns its handles again, and a tensor that is not an output of the pass that
 * ran last fails to read with GCR_ERR_CAPTURE.
 * GCR_FUZZ_REPLAY_N (default 2000 programs on the CPU, 500 on CUDA) and GCR_FUZZ_REPLAY_SEED
 * choose the programs; a failure prints the seed, the knobs, the program and the fused graph. */
#include "capture_util.h"
#include "../lib/exec.h"
#include <stdbool.h>

#define MAXP 40

enum { K_IN, K_UNARY, K_SCALAR, K_CLAMP, K_SAFEDIV, K_BINARY, K_REDUCE, K_SOFTMAX, K_CONCAT, K_SLICE, K_PERMUTE,
       K_FLATTEN, K_RESHAPE, K_LINEAR, K_MATMUL, K_CONV, K_BN, K_POOL, K_ADAPTIVE, K_CAST, K_CONTIG, K_FEEDBACK,
       K_KINDS };
static const char *kind_name[K_KINDS] = {"in", "unary", "scalar", "clamp", "safediv", "binary", "reduce",
                                         "softmax", "concat", "slice", "permute", "flatten", "reshape", "linear",
                                         "matmul", "conv2d", "batch_norm", "pool", "adaptive_pool", "cast",
                                         "contiguous", "feedback"};

typedef struct shp {
    int nd;
    int64_t s[GCR_MAX_DIMS];
} shp;

typedef struct step {
    int kind, op;
    int a, b;                /* operands (pool entries); b -1 when none */
    int w[4];                /* constant inputs (weights, bias, BN parameters), -1 when absent */
    int ax[GCR_MAX_DIMS];    /* axes as written, a permutation (padded with 0), flatten's dims */
    int nax;
    int64_t v[GCR_MAX_DIMS]; /* slice start/end/step, reshape's dims as written */
    int keep;                /* keepdim */
    float s;                 /* scalar operand, clamp's low bound */
    gcr_conv2d_params cp;
    gcr_pool2d_params pp;
    gcr_dtype dt;            /* the entry's dtype (a cast's target) */
    int marked;              /* passed to gcr_graph_output */
    shp out;                 /* shape at capture */
    int is_const, positive, layout; /* inputs only */
} step;

typedef struct prog {
    int n;
    step p[MAXP];
    int poly;  /* axes written negative, no permutation or literal shape: other ranks apply */
    int state; /* the recurrent state input, or -1 */
} prog;

/* ---------------------------------------------------------------- generator */

static shp mk(int nd, const int64_t *s)
{
    shp r = {nd, {0}};
    for (int d = 0; d < nd; d++) r.s[d] = s[d];
    return r;
}

static int64_t numel_of(shp s)
{
    int64_t n = 1;
    for (int d = 0; d < s.nd; d++) n *= s.s[d];
    return n;
}

static int add_input(prog *P, shp s, gcr_dtype dt, int is_const, int positive, int layout)
{
    int i = P->n++;
    memset(&P->p[i], 0, sizeof P->p[i]);
    P->p[i].kind = K_IN;
    P->p[i].out = s;
    P->p[i].dt = dt;
    P->p[i].is_const = is_const;
    P->p[i].positive = positive;
    P->p[i].layout = layout;
    P->p[i].a = P->p[i].b = -1;
    return i;
}

static int add_weight(prog *P, int nd, const int64_t *s, gcr_dtype dt, int positive)
{
    return add_input(P, mk(nd, s), dt, 1, positive, H_DENSE);
}

static bool bcast(shp a, shp b, shp *o)
{
    int nd = a.nd > b.nd ? a.nd : b.nd;
    o->nd = nd;
    for (int d = 0; d < nd; d++) {
        int da = d - (nd - a.nd), db = d - (nd - b.nd);
        int64_t x = da >= 0 ? a.s[da] : 1, y = db >= 0 ? b.s[db] : 1;
        if (x != y && x != 1 && y != 1) return false;
        o->s[d] = x == 1 ? y : x;
    }
    return true;
}

/* a random non-constant entry of rank lo..hi and dtype dt (any when dt < 0), or -1 */
static int pick(const prog *P, int lo, int hi, int dt)
{
    int c[MAXP], n = 0;
    for (int i = 0; i < P->n; i++) {
        const step *e = &P->p[i];
        if (!e->is_const && e->out.nd >= lo && e->out.nd <= hi && (dt < 0 || (int)e->dt == dt)) c[n++] = i;
    }
    return n ? c[h_pick((uint32_t)n)] : -1;
}

/* axis d of a rank-nd entry as the program writes it: negative in a rank-polymorphic program,
 * else either way */
static int write_axis(const prog *P, int d, int nd) { return P->poly || h_pick(2) ? d - nd : d; }

static bool g_reduce(prog *P, step *s, shp A)
{
    if (A.nd < 1) return false;
    s->op = (int)h_pick(3);
    s->keep = (int)h_pick(2);
    s->nax = h_pick(6) == 0 ? 0 : 1 + (int)h_pick(A.nd < 2 ? 1 : 2);
    bool red[GCR_MAX_DIMS] = {0};
    for (int i = 0; i < s->nax; i++) {
        int d = (int)h_pick((uint32_t)A.nd);
        if (red[d]) { s->nax = i; break; }
        red[d] = true;
        s->ax[i] = write_axis(P, d, A.nd);
    }
    if (s->nax == 0 && s->op == 2 && h_pick(2)) s->op = 0;
    s->out.nd = 0;
    for (int d = 0; d < A.nd; d++) {
        bool r = s->nax == 0 || red[d];
        if (!r) s->out.s[s->out.nd++] = A.s[d];
        else if (s->keep) s->out.s[s->out.nd++] = 1;
    }
    return true;
}

static bool g_concat(prog *P, step *s, shp A)
{
    if (A.nd < 1) return false;
    int d = (int)h_pick((uint32_t)A.nd);
    s->b = s->a;
    for (int t = 0; t < 6; t++) { /* another entry that agrees outside the axis, else a itself */
        int c = pick(P, A.nd, A.nd, (int)P->p[s->a].dt);
        bool fits = c >= 0;
        for (int e = 0; fits && e < A.nd; e++) fits = e == d || P->p[c].out.s[e] == A.s[e];
        if (fits) { s->b = c; break; }
    }
    s->ax[0] = write_axis(P, d, A.nd);
    s->out = A;
    s->out.s[d] = A.s[d] + P->p[s->b].out.s[d];
    return true;
}

static bool g_slice(prog *P, step *s, shp A)
{
    if (A.nd < 1) return false;
    int d = (int)h_pick((uint32_t)A.nd);
    int64_t n = A.s[d];
    s->ax[0] = write_axis(P, d, A.nd);
    int64_t start = (int64_t)h_pick((uint32_t)n), step = 1 + h_pick(3);
    if (h_pick(2)) start -= n; /* the same element counted from the end */
    static const int64_t ends[] = {INT64_MAX, -1, 0};
    int64_t end = ends[h_pick(3)];
    if (end == 0) end = n;
    s->v[0] = start;
    s->v[1] = end;
    s->v[2] = step;
    int64_t b = start < 0 ? start + n : start, e = end < 0 ? end + n : end > n ? n : end;
    if (e <= b) return false;
    s->out = A;
    s->out.s[d] = (e - b - 1) / step + 1;
    return true;
}

static bool g_permute(prog *P, step *s, shp A)
{
    if (P->poly || A.nd < 2) return false;
    for (int d = 0; d < A.nd; d++) s->ax[d] = d;
    for (int d = A.nd - 1; d > 0; d--) {
        int j = (int)h_pick((uint32_t)d + 1), t = s->ax[d];
        s->ax[d] = s->ax[j];
        s->ax[j] = t;
    }
    s->out.nd = A.nd;
    for (int d = 0; d < A.nd; d++) s->out.s[d] = A.s[s->ax[d]];
    return true;
}

static bool g_flatten(prog *P, step *s, shp A)
{
    if (A.nd < 2) return false;
    int b = (int)h_pick((uint32_t)A.nd - 1), e = b + 1 + (int)h_pick((uint32_t)(A.nd - b - 1));
    s->ax[0] = write_axis(P, b, A.nd);
    s->ax[1] = write_axis(P, e, A.nd);
    s->out.nd = 0;
    for (int d = 0; d < b; d++) s->out.s[s->out.nd++] = A.s[d];
    int64_t f = 1;
    for (int d = b; d <= e; d++) f *= A.s[d];
    s->out.s[s->out.nd++] = f;
    for (int d = e + 1; d < A.nd; d++) s->out.s[s->out.nd++] = A.s[d];
    return true;
}

/* forms: [-1, last], [-1], and (not rank-polymorphic) [numel] and [first, -1] */
static bool g_reshape(prog *P, step *s, shp A)
{
    if (A.nd < 1) return false;
    s->op = (int)h_pick(P->poly ? 2 : 4);
    int64_t n = numel_of(A);
    if (s->op == 0 && A.nd >= 2) {
        s->nax = 2;
        s->v[0] = -1;
        s->v[1] = A.s[A.nd - 1];
        s->out.nd = 2;
        s->out.s[0] = n / A.s[A.nd - 1];
        s->out.s[1] = A.s[A.nd - 1];
    } else if (s->op == 3 && A.nd >= 2) {
        s->nax = 2;
        s->v[0] = A.s[0];
        s->v[1] = -1;
        s->out.nd = 2;
        s->out.s[0] = A.s[0];
        s->out.s[1] = n / A.s[0];
    } else {
        s->nax = 1;
        s->v[0] = s->op == 2 ? n : -1;
        s->out.nd = 1;
        s->out.s[0] = n;
    }
    return true;
}

static bool g_linear(prog *P, step *s, shp A)
{
    if (A.nd < 1) return false;
    gcr_dtype dt = P->p[s->a].dt;
    int64_t K = A.s[A.nd - 1], O = 1 + h_pick(5);
    s->w[0] = add_weight(P, 2, (int64_t[]){O, K}, dt, 0);
    s->w[1] = h_pick(2) ? add_weight(P, 1, (int64_t[]){O}, dt, 0) : -1;
    s->out = A;
    s->out.s[A.nd - 1] = O;
    return true;
}

/* a [..., M, K] @ b [K, N]: a non-constant entry that fits, else a new constant one */
static bool g_matmul(prog *P, step *s, shp A)
{
    if (A.nd < 2) return false;
    gcr_dtype dt = P->p[s->a].dt;
    int64_t K = A.s[A.nd - 1];
    int c = pick(P, 2, 2, (int)dt);
    if (c >= 0 && P->p[c].out.s[0] == K && h_pick(2)) s->b = c;
    else s->b = add_weight(P, 2, (int64_t[]){K, 1 + h_pick(4)}, dt, 0);
    s->out = A;
    s->out.s[A.nd - 1] = P->p[s->b].out.s[1];
    return true;
}

static bool g_conv(prog *P, step *s, shp A)
{
    if (A.nd != 4) return false;
    gcr_dtype dt = P->p[s->a].dt;
    int64_t C = A.s[1];
    int k = h_pick(2) ? 1 : 3;
    s->cp = gcr_conv2d_default();
    s->cp.stride[0] = s->cp.stride[1] = h_pick(3) == 0 ? 2 : 1;
    s->cp.padding[0] = s->cp.padding[1] = k == 3 ? (int)h_pick(2) : 0;
    s->cp.groups = h_pick(3) == 0 ? (int)C : 1;
    int64_t O = s->cp.groups > 1 ? C * (1 + h_pick(2)) : 1 + h_pick(5);
    int64_t oh = (A.s[2] + 2 * s->cp.padding[0] - k) / s->cp.stride[0] + 1;
    int64_t ow = (A.s[3] + 2 * s->cp.padding[1] - k) / s->cp.stride[1] + 1;
    if (A.s[2] + 2 * s->cp.padding[0] < k || A.s[3] + 2 * s->cp.padding[1] < k) return false;
    s->w[0] = add_weight(P, 4, (int64_t[]){O, C / s->cp.groups, k, k}, dt, 0);
    s->w[1] = h_pick(2) ? add_weight(P, 1, (int64_t[]){O}, dt, 0) : -1;
    s->out = mk(4, (int64_t[]){A.s[0], O, oh, ow});
    return true;
}

static bool g_bn(prog *P, step *s, shp A)
{
    if (A.nd < 2) return false;
    gcr_dtype dt = P->p[s->a].dt;
    int64_t C = A.s[1];
    s->w[0] = add_weight(P, 1, &C, dt, 0);
    s->w[1] = add_weight(P, 1, &C, dt, 1);
    s->w[2] = h_pick(2) ? add_weight(P, 1, &C, dt, 0) : -1;
    s->w[3] = h_pick(2) ? add_weight(P, 1, &C, dt, 0) : -1;
    s->out = A;
    return true;
}

/* gcr's (PyTorch's) pooled length, 0 when the window does not fit */
static int64_t pool_len(int64_t in, const gcr_pool2d_params *p, int i)
{
    int64_t span = in + 2 * p->padding[i] - (int64_t)p->dilation[i] * (p->kernel[i] - 1) - 1;
    if (span < 0) return 0;
    int64_t s = p->stride[i], o = (p->ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (p->ceil_mode && (o - 1) * s >= in + p->padding[i]) o--;
    return o;
}

static bool g_pool(prog *P, step *s, shp A)
{
    if (A.nd != 4) return false;
    s->op = (int)h_pick(2); /* 0 max, 1 avg */
    int k = 2 + (int)h_pick(2);
    s->pp = gcr_pool2d_default(k);
    s->pp.stride[0] = s->pp.stride[1] = (int)h_pick(3); /* 0: the kernel */
    s->pp.padding[0] = s->pp.padding[1] = (int)h_pick((uint32_t)k / 2 + 1);
    s->pp.ceil_mode = (int)h_pick(2);
    s->pp.count_include_pad = (int)h_pick(2);
    if (s->op == 0 && h_pick(4) == 0) s->pp.dilation[0] = s->pp.dilation[1] = 2;
    gcr_pool2d_params q = s->pp;
    for (int i = 0; i < 2; i++)
        if (q.stride[i] == 0) q.stride[i] = q.kernel[i];
    s->out = A;
    for (int i = 0; i < 2; i++) {
        s->out.s[2 + i] = pool_len(A.s[2 + i], &q, i);
        if (s->out.s[2 + i] < 1) return false;
    }
    return true;
}

static bool g_cast(prog *P, step *s, shp A)
{
    static const gcr_dtype fl[3] = {GCR_F32, GCR_F16, GCR_BF16};
    gcr_dtype from = P->p[s->a].dt;
    do { s->dt = fl[h_pick(3)]; } while (s->dt == from);
    s->out = A;
    return true;
}

/* one random step reading entry a; false when the drawn op does not apply to a */
static bool g_step(prog *P, step *s)
{
    shp A = P->p[s->a].out;
    gcr_dtype dt = P->p[s->a].dt;
    s->out = A;
    switch (h_pick(24)) {
    case 0: case 1: case 2: s->kind = K_UNARY; s->op = (int)h_pick(9); return true;
    case 3: s->kind = K_SCALAR; s->op = (int)h_pick(6); s->s = s->op == 5 ? (h_pick(2) ? 2.0f : -4.0f) : (float)h_pick(7) * 0.5f - 1.5f; return true;
    case 4: s->kind = K_CLAMP; s->s = -(float)h_pick(3); return true;
    case 5: case 6: case 7: case 8:
        s->kind = h_pick(4) ? K_BINARY : K_SAFEDIV;
        s->op = (int)h_pick(5);
        for (int t = 0; t < 8; t++) {
            s->b = pick(P, 0, GCR_MAX_DIMS, (int)dt);
            if (bcast(A, P->p[s->b].out, &s->out)) return true;
        }
        return false;
    case 9: case 10: s->kind = K_REDUCE; return g_reduce(P, s, A);
    case 11: s->kind = K_SOFTMAX; s->ax[0] = A.nd ? write_axis(P, (int)h_pick((uint32_t)A.nd), A.nd) : 0; return A.nd > 0;
    case 12: s->kind = K_CONCAT; return g_concat(P, s, A);
    case 13: s->kind = K_SLICE; return g_slice(P, s, A);
    case 14: s->kind = K_PERMUTE; return g_permute(P, s, A);
    case 15: s->kind = K_FLATTEN; return g_flatten(P, s, A);
    case 16: s->kind = K_RESHAPE; return g_reshape(P, s, A);
    case 17: s->kind = K_LINEAR; return g_linear(P, s, A);
    case 18: s->kind = K_MATMUL; return g_matmul(P, s, A);
    case 19: s->kind = K_CONV; return g_conv(P, s, A);
    case 20: s->kind = A.nd == 4 && h_pick(2) ? K_ADAPTIVE : K_BN;
        if (s->kind == K_BN) return g_bn(P, s, A);
        s->ax[0] = 1 + (int)h_pick(2);
        s->ax[1] = 1 + (int)h_pick(2);
        s->out.s[2] = s->ax[0];
        s->out.s[3] = s->ax[1];
        return true;
    case 21: s->kind = K_POOL; return g_pool(P, s, A);
    case 22: s->kind = K_CAST; return g_cast(P, s, A);
    default:
        s->kind = K_CONTIG;
        s->op = A.nd == 4 && h_pick(2) ? GCR_NHWC : GCR_NCHW;
        return true;
    }
}

static void gen_inputs(prog *P, gcr_dtype dt)
{
    int64_t x[GCR_MAX_DIMS];
    int nd;
    if (P->poly) nd = 2 + (int)h_pick(2);
    else nd = h_pick(2) ? 4 : 1 + (int)h_pick(3);
    for (int d = 0; d < nd; d++) x[d] = 1 + h_pick(5);
    if (nd == 4) {
        x[0] = 1 + h_pick(2);
        x[2] = 2 + h_pick(5);
        x[3] = 2 + h_pick(5);
    }
    static const int lay[] = {H_NHWC, H_PERMUTED, H_SLICED};
    add_input(P, mk(nd, x), dt, 0, 0, h_pick(5) < 2 ? lay[h_pick(3)] : H_DENSE);
    if (h_pick(5) < 2) add_input(P, mk(1, &x[nd - 1]), dt, 0, 0, h_pick(3) ? H_DENSE : H_SLICED);
    if (h_pick(4) == 0) add_input(P, mk(nd, x), dt, 0, 0, h_pick(3) ? H_DENSE : H_PERMUTED);
    if (nd == 4 && h_pick(3) == 0) add_input(P, mk(3, (int64_t[]){x[1], 1, 1}), dt, 0, 0, H_DENSE);
    if (nd >= 2 && h_pick(5) == 0) add_input(P, mk(2, (int64_t[]){x[nd - 1], 1 + h_pick(4)}), dt, 0, 0, H_DENSE);
    P->state = -1;
    if (h_pick(5) < 3) {
        int64_t st[2] = {1 + h_pick(3), 1 + h_pick(5)};
        P->state = add_input(P, h_pick(2) ? mk(1, &st[1]) : mk(2, st), dt, 0, 0, H_DENSE);
    }
}

/* a step of the given kind reading entry a, with no other operand yet */
static step new_step(int kind, int a)
{
    step s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.a = a;
    s.b = -1;
    s.w[0] = s.w[1] = s.w[2] = s.w[3] = -1;
    return s;
}

static void gen(prog *P, uint64_t seed)
{
    h_pick_seed(seed * 2654435761u + 0x9E3779B97F4A7C15ull);
    memset(P, 0, sizeof *P);
    P->poly = h_pick(5) < 2;
    gcr_dtype dt = h_pick(10) < 7 ? GCR_F32 : h_pick(2) ? GCR_F16 : GCR_BF16;
    gen_inputs(P, dt);
    int steps = 3 + (int)h_pick(9), last = 0;
    for (int t = 0; t < steps && P->n < MAXP - 8; t++) {
        int a = t == 0 ? 0 : pick(P, 0, GCR_MAX_DIMS, -1); /* the main input is always read */
        step s = new_step(K_UNARY, a);
        int n0 = P->n;
        if (!g_step(P, &s)) {
            P->n = n0; /* drop weights added for a step that did not apply */
            s = new_step(K_UNARY, a);
            s.op = (int)h_pick(9);
            s.out = P->p[s.a].out;
        }
        s.dt = s.kind == K_CAST ? s.dt : P->p[s.a].dt;
        s.marked = h_pick(6) == 0;
        last = P->n;
        P->p[P->n++] = s;
    }
    if (P->state >= 0) { /* state' = tanh(state / 2 + mean(last entry)): the state keeps its shape */
        step s = new_step(K_FEEDBACK, P->state);
        s.b = last;
        s.dt = P->p[P->state].dt;
        s.out = P->p[P->state].out;
        P->p[P->n++] = s;
    }
}

/* ---------------------------------------------------------------- the program on a ctx */

static gcr_tensor *run_unary(gcr_ctx *ctx, int op, gcr_tensor *a)
{
    switch (op) {
    case 0: return gcr_neg(ctx, a);
    case 1: return gcr_abs(ctx, a);
    case 2: return gcr_relu(ctx, a);
    case 3: return gcr_sigmoid(ctx, a);
    case 4: return gcr_tanh(ctx, a);
    case 5: return gcr_hardswish(ctx, a);
    case 6: return gcr_silu(ctx, a);
    case 7: return gcr_relu6(ctx, a);
    default: return gcr_hardsigmoid(ctx, a);
    }
}

static gcr_tensor *run_binary(gcr_ctx *ctx, int op, gcr_tensor *a, gcr_tensor *b)
{
    switch (op) {
    case 0: return gcr_add(ctx, a, b);
    case 1: return gcr_sub(ctx, a, b);
    case 2: return gcr_mul(ctx, a, b);
    case 3: return gcr_maximum(ctx, a, b);
    default: return gcr_minimum(ctx, a, b);
    }
}

static gcr_tensor *run_scalar(gcr_ctx *ctx, int op, gcr_tensor *a, float s)
{
    switch (op) {
    case 0: return gcr_add_scalar(ctx, a, s);
    case 1: return gcr_sub_scalar(ctx, a, s);
    case 2: return gcr_mul_scalar(ctx, a, s);
    case 3: return gcr_maximum_scalar(ctx, a, s);
    case 4: return gcr_minimum_scalar(ctx, a, s);
    default: return gcr_div_scalar(ctx, a, s);
    }
}

static gcr_tensor *opt(gcr_tensor **val, int i) { return i >= 0 ? val[i] : NULL; }

static gcr_tensor *run_step(gcr_ctx *ctx, const step *s, gcr_tensor **val)
{
    gcr_tensor *a = val[s->a], *b = opt(val, s->b);
    switch (s->kind) {
    case K_UNARY: return run_unary(ctx, s->op, a);
    case K_SCALAR: return run_scalar(ctx, s->op, a, s->s);
    case K_CLAMP: return gcr_clamp(ctx, a, s->s, 2.0f);
    case K_BINARY: return run_binary(ctx, s->op, a, b);
    case K_SAFEDIV: /* exp of a bounded a over |b| + 1: no inf or nan by construction */
        return gcr_div(ctx, gcr_exp(ctx, gcr_clamp(ctx, a, -3.0f, 3.0f)), gcr_add_scalar(ctx, gcr_abs(ctx, b), 1.0f));
    case K_REDUCE:
        return s->op == 0 ? gcr_sum(ctx, a, s->ax, s->nax, s->keep)
             : s->op == 1 ? gcr_mean(ctx, a, s->ax, s->nax, s->keep) : gcr_max(ctx, a, s->ax, s->nax, s->keep);
    case K_SOFTMAX: return gcr_softmax(ctx, a, s->ax[0]);
    case K_CONCAT: return gcr_concat(ctx, (gcr_tensor *[]){a, b}, 2, s->ax[0]);
    case K_SLICE: return gcr_slice(ctx, a, s->ax[0], s->v[0], s->v[1], s->v[2]);
    case K_PERMUTE: return gcr_permute(ctx, a, s->ax); /* padded: another rank reads entries as written */
    case K_FLATTEN: return gcr_flatten(ctx, a, s->ax[0], s->ax[1]);
    case K_RESHAPE: return gcr_reshape(ctx, a, s->nax, s->v);
    case K_LINEAR: return gcr_linear(ctx, a, val[s->w[0]], opt(val, s->w[1]));
    case K_MATMUL: return gcr_matmul(ctx, a, b);
    case K_CONV: return gcr_conv2d(ctx, a, val[s->w[0]], opt(val, s->w[1]), &s->cp);
    case K_BN: return gcr_batch_norm(ctx, a, val[s->w[0]], val[s->w[1]], opt(val, s->w[2]), opt(val, s->w[3]), 1e-3f);
    case K_POOL: return s->op == 0 ? gcr_max_pool2d(ctx, a, &s->pp) : gcr_avg_pool2d(ctx, a, &s->pp);
    case K_ADAPTIVE: return gcr_adaptive_avg_pool2d(ctx, a, s->ax[0], s->ax[1]);
    case K_CAST: return gcr_cast(ctx, a, s->dt);
    case K_CONTIG: return gcr_contiguous(ctx, a, (gcr_format)s->op);
    case K_FEEDBACK: {
        gcr_tensor *m = gcr_cast(ctx, gcr_mean(ctx, b, NULL, 0, 0), s->dt); /* always: a call as written */
        return gcr_tanh(ctx, gcr_add(ctx, gcr_mul_scalar(ctx, a, 0.5f), m));
    }
    default: return NULL;
    }
}

/* runs P on ctx (eager, capturing or in a region body); val[i] gets entry i */
static void run(gcr_ctx *ctx, const prog *P, gcr_tensor *const *in, gcr_tensor **val)
{
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        val[i] = s->kind == K_IN ? in[i] : run_step(ctx, s, val);
        if (s->marked && s->kind != K_IN && val[i]) gcr_graph_output(ctx, val[i]);
    }
}

/* outputs: entries nothing later reads, plus marked ones (inputs excluded) */
static void outputs(const prog *P, char *is_out)
{
    for (int i = 0; i < P->n; i++) is_out[i] = P->p[i].kind != K_IN;
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        if (s->kind == K_IN) continue;
        is_out[s->a] = 0;
        if (s->b >= 0) is_out[s->b] = 0;
    }
    for (int i = 0; i < P->n; i++)
        if (P->p[i].marked && P->p[i].kind != K_IN) is_out[i] = 1;
}

static void describe_prog(const prog *P)
{
    fprintf(stderr, "program (%s):\n", P->poly ? "rank-polymorphic" : "fixed rank");
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        char sh[96];
        int k = snprintf(sh, sizeof sh, "%s[", gcr_dtype_name(s->dt));
        for (int d = 0; d < s->out.nd; d++) k += snprintf(sh + k, sizeof sh - (size_t)k, d ? ",%lld" : "%lld", (long long)s->out.s[d]);
        snprintf(sh + k, sizeof sh - (size_t)k, "]");
        if (s->kind == K_IN) {
            fprintf(stderr, "  %2d = %s %s%s layout %s%s\n", i, s->is_const ? "const" : "input", sh,
                    i == P->state ? " (state)" : "", h_layout_name(s->layout), s->positive ? " positive" : "");
            continue;
        }
        fprintf(stderr, "  %2d = %s/%d(%d, %d; w %d %d %d %d) ax [%d %d %d %d] n %d v [%lld %lld %lld] keep %d s %g -> %s%s\n", i,
                kind_name[s->kind], s->op, s->a, s->b, s->w[0], s->w[1], s->w[2], s->w[3], s->ax[0], s->ax[1], s->ax[2],
                s->ax[3], s->nax, (long long)s->v[0], (long long)s->v[1], (long long)s->v[2], s->keep, s->s, sh,
                s->marked ? " marked" : "");
        if (s->kind == K_CONV)
            fprintf(stderr, "       conv stride %d padding %d groups %d\n", s->cp.stride[0], s->cp.padding[0], s->cp.groups);
        if (s->kind == K_POOL)
            fprintf(stderr, "       pool %s kernel %d stride %d padding %d dilation %d ceil %d include_pad %d\n",
                    s->op ? "avg" : "max", s->pp.kernel[0], s->pp.stride[0], s->pp.padding[0], s->pp.dilation[0],
                    s->pp.ceil_mode, s->pp.count_include_pad);
    }
}

/* ---------------------------------------------------------------- one fuzz case */

/* what the cases did, by case kind (V_* and C_*): replays that matched eager, that failed as
 * eager did, and that were refused as written where eager runs */
enum { V_SAME, V_SHAPE, V_RANK, V_DTYPE, V_VIEW, V_KINDS };
enum { C_FRESH = V_KINDS, C_REUSE, C_BACK, C_KINDS };
static const char *case_name[C_KINDS] = {"same signature", "another shape", "another rank", "another dtype",
                                         "another layout", "fresh data", "an earlier binding", "the capture's inputs"};
typedef struct counts {
    int graphs, ok[C_KINDS], refused[C_KINDS], as_written[C_KINDS];
    int passes_ok, passes_failed, hits, evictions, stale_reads;
} counts;
static counts cnt;

typedef struct fz {
    uint64_t seed;
    prog P;
    gcr_ctx *ctx;
    gcr_knobs k;
    int generic; /* the device-independent executor */
    char is_out[MAXP];
    gcr_tensor *orig[MAXP]; /* the inputs (and weights) the program was captured with */
    gcr_graph *g;           /* the explicit capture, kept beside the region (bound to orig) */
    gcr_tensor *gval[MAXP]; /* its traced tensors */
    int failed;
} fz;

static void report(fz *F, const char *part, gcr_graph *g)
{
    if (F->failed++) return; /* one report per case */
    fprintf(stderr, "GCR_FUZZ_REPLAY_SEED=%llu GCR_FUZZ_REPLAY_N=1 reproduces this case (%s, %s; fusion %d single_node %d "
            "horizontal %d retrace %d graph_cache %d executor %s)\n", (unsigned long long)F->seed, part,
            cu_dev == GCR_DEVICE_CUDA ? "cuda" : "cpu", F->k.fusion, F->k.single_node, F->k.horizontal, F->k.retrace,
            F->k.graph_cache, F->generic ? "generic" : "native");
    describe_prog(&F->P);
    if (g) {
        size_t n = gcr_graph_describe(g, NULL, 0);
        char *s = malloc(n + 1);
        gcr_graph_describe(g, s, n + 1);
        fprintf(stderr, "%s", s);
        free(s);
    }
}

/* what an input tensor is made as */
typedef struct spec {
    shp s;
    gcr_dtype dt;
    int layout, positive, weight;
} spec;

static spec spec_of(const step *e)
{
    spec sp = {e->out, e->dt, e->layout, e->positive, e->is_const};
    return sp;
}

/* a new tensor as sp says, holding fresh random values (weights smaller, variances positive) */
static gcr_tensor *make(gcr_ctx *ctx, spec sp)
{
    int64_t n = numel_of(sp.s);
    float *h = sp.weight ? (sp.positive ? h_randn(n, 0.5f, 1.5f) : h_randn(n, -0.5f, 0.5f)) : cu_rand(n, sp.positive);
    gcr_tensor *t = h_view_unchecked(ctx, sp.dt, sp.s.nd, sp.s.s, sp.layout, h);
    free(h);
    CHECK(t != NULL, "making an input %s %s: %s", gcr_dtype_name(sp.dt), h_layout_name(sp.layout), gcr_ctx_error(ctx));
    return t ? gcr_tensor_keep(t) : NULL;
}

static int has_kind(const prog *P, int kind)
{
    for (int i = 0; i < P->n; i++)
        if (P->p[i].kind == kind) return 1;
    return 0;
}

/* input entry e of P as variant kind v: another shape, rank, dtype or layout */
static spec variant(const prog *P, const step *e, int v)
{
    spec sp = spec_of(e);
    shp *s = &sp.s;
    if (v == V_SHAPE && s->nd > 0) {
        int d = h_pick(3) ? 0 : (int)h_pick((uint32_t)s->nd);
        s->s[d] = s->s[d] > 1 && h_pick(2) ? s->s[d] - 1 - h_pick((uint32_t)s->s[d] - 1) : s->s[d] + 1 + h_pick(2);
    } else if (v == V_RANK) {
        /* drop the leading dim; not under a matmul, which lifts a 1-d operand at the call (gcr.h:
         * that choice stays as captured) */
        if (s->nd >= 2 && h_pick(4) == 0 && !has_kind(P, K_MATMUL)) {
            for (int d = 0; d + 1 < s->nd; d++) s->s[d] = s->s[d + 1];
            s->nd--;
        } else if (s->nd < GCR_MAX_DIMS) {
            for (int d = s->nd; d > 0; d--) s->s[d] = s->s[d - 1];
            s->s[0] = 1 + h_pick(3);
            s->nd++;
        }
    } else if (v == V_DTYPE) {
        static const gcr_dtype fl[3] = {GCR_F32, GCR_F16, GCR_BF16};
        do { sp.dt = fl[h_pick(3)]; } while (sp.dt == e->dt);
    } else if (v == V_VIEW) {
        for (int t = 0; t < 8 && h_view_layout(s->nd, sp.layout) == h_view_layout(s->nd, e->layout); t++)
            sp.layout = (int)h_pick(H_LAYOUTS);
    }
    return sp;
}

/* tolerance by the least precise dtype the eager run went through (values of one tensor can
 * differ by an f16/bf16 rounding between fused and eager kernels) */
static float tol_of(const prog *P, gcr_tensor *const *ref)
{
    float tol = 1e-4f;
    for (int i = 0; i < P->n; i++) {
        if (!ref[i]) continue;
        gcr_dtype dt = gcr_tensor_dtype(ref[i]);
        if (dt == GCR_F16 && tol < 3e-2f) tol = 3e-2f;
        if (dt == GCR_BF16) tol = 6e-2f;
    }
    return tol;
}

static int same_shape(gcr_tensor *a, gcr_tensor *b)
{
    if (!a || !b || gcr_tensor_ndim(a) != gcr_tensor_ndim(b)) return 0;
    for (int d = 0; d < gcr_tensor_ndim(a); d++)
        if (gcr_tensor_dim(a, d) != gcr_tensor_dim(b, d)) return 0;
    return 1;
}

/* got (a replayed output) against ref (eager): shape, dtype, values at tol */
static int same_values(fz *F, gcr_tensor *got, gcr_tensor *ref, float tol, const char *what)
{
    char b1[96], b2[96];
    if (!CHECK(got && same_shape(got, ref) && gcr_tensor_dtype(got) == gcr_tensor_dtype(ref),
               "seed %llu %s: replayed %s, eager %s", (unsigned long long)F->seed, what,
               got ? gcr_tensor_describe(got, b1, sizeof b1) : "NULL", gcr_tensor_describe(ref, b2, sizeof b2)))
        return 0;
    int64_t n = gcr_tensor_numel(ref);
    float *a = h_read(got), *b = h_read(ref);
    for (int64_t e = 0; e < n; e++) /* equal infinities (f16 overflow), NaN in both (mean of nothing) agree */
        if (a[e] == b[e] || (isnan(a[e]) && isnan(b[e]))) a[e] = b[e] = 0.0f;
    char w[240];
    snprintf(w, sizeof w, "seed %llu %s", (unsigned long long)F->seed, what);
    int ok = CHECK_CLOSE(a, b, n, tol, tol, w);
    free(a);
    free(b);
    return ok;
}

/* every output of the program against the eager run */
static int outputs_match(fz *F, gcr_tensor **val, gcr_tensor **ref, const char *what)
{
    float tol = tol_of(&F->P, ref);
    for (int i = 0; i < F->P.n; i++) {
        if (!F->is_out[i]) continue;
        char w[200];
        snprintf(w, sizeof w, "%s, entry %d", what, i);
        if (!same_values(F, val[i], ref[i], tol, w)) return 0;
    }
    return 1;
}

/* the status of running P eagerly on in (results in ref, inside the caller's scope); clears it */
static gcr_status eager(fz *F, gcr_tensor *const *in, gcr_tensor **ref)
{
    gcr_ctx_clear_error(F->ctx);
    run(F->ctx, &F->P, in, ref);
    gcr_status s = gcr_ctx_status(F->ctx);
    gcr_ctx_clear_error(F->ctx);
    return s;
}

/* fresh random values for t as host bytes of its dtype (made eagerly: a write inside a region
 * body calls no op); the caller frees them */
static void *fresh_bytes(gcr_tensor *t, int positive)
{
    gcr_ctx *ctx = gcr_tensor_ctx(t);
    int64_t sh[GCR_MAX_DIMS], n = gcr_tensor_numel(t);
    for (int d = 0; d < gcr_tensor_ndim(t); d++) sh[d] = gcr_tensor_dim(t, d);
    float *h = cu_rand(n, positive);
    gcr_tensor *d = h_tensor(ctx, gcr_tensor_dtype(t), gcr_tensor_ndim(t), sh, GCR_NCHW, h);
    size_t nb = gcr_tensor_nbytes(t);
    void *b = calloc(nb ? nb : 1, 1);
    if (d) OK(ctx, gcr_tensor_to_host(d, b, nb));
    gcr_tensor_free(d);
    free(h);
    return b;
}

/* host bytes of fresh data for every non-constant input of in but skip (NULL elsewhere) */
static void fresh_inputs(fz *F, gcr_tensor *const *in, int skip, void **bytes)
{
    for (int i = 0; i < F->P.n; i++) {
        const step *e = &F->P.p[i];
        bytes[i] = e->kind == K_IN && !e->is_const && i != skip && in[i] ? fresh_bytes(in[i], e->positive) : NULL;
    }
}

/* writes (and frees) the bytes into the inputs */
static void write_inputs(fz *F, gcr_tensor *const *in, void **bytes)
{
    for (int i = 0; i < F->P.n; i++) {
        if (!bytes[i]) continue;
        OK(F->ctx, gcr_tensor_from_host(in[i], bytes[i], gcr_tensor_nbytes(in[i])));
        free(bytes[i]);
        bytes[i] = NULL;
    }
}

/* fresh data in every non-constant input of in (host writes between replays and passes) */
static void refill(fz *F, gcr_tensor *const *in)
{
    void *bytes[MAXP];
    fresh_inputs(F, in, -1, bytes);
    write_inputs(F, in, bytes);
}

/* ---------------------------------------------------------------- (a) explicit capture */

/* an explicit graph's outputs as last read: a failed replay must leave them so */
typedef struct saved {
    int nd;
    int64_t s[GCR_MAX_DIMS];
    int64_t n;
    float *v;
} saved;

static void save_outputs(fz *F, gcr_tensor **val, saved *sv)
{
    for (int i = 0; i < F->P.n; i++) {
        free(sv[i].v);
        sv[i].v = NULL;
        if (!F->is_out[i] || !val[i]) continue;
        sv[i].nd = gcr_tensor_ndim(val[i]);
        for (int d = 0; d < sv[i].nd; d++) sv[i].s[d] = gcr_tensor_dim(val[i], d);
        sv[i].n = gcr_tensor_numel(val[i]);
        sv[i].v = h_read(val[i]);
    }
}

static int outputs_kept(fz *F, gcr_tensor **val, const saved *sv, const char *what)
{
    for (int i = 0; i < F->P.n; i++) {
        if (!sv[i].v) continue;
        int shape_ok = gcr_tensor_ndim(val[i]) == sv[i].nd;
        for (int d = 0; shape_ok && d < sv[i].nd; d++) shape_ok = gcr_tensor_dim(val[i], d) == sv[i].s[d];
        if (!CHECK(shape_ok, "seed %llu %s: output entry %d changed shape after a failed replay",
                   (unsigned long long)F->seed, what, i))
            return 0;
        float *now = malloc((size_t)(sv[i].n > 0 ? sv[i].n : 1) * sizeof *now);
        gcr_tensor *f = gcr_tensor_dtype(val[i]) == GCR_F32 ? val[i] : gcr_cast(F->ctx, val[i], GCR_F32);
        gcr_status s = f ? gcr_tensor_to_host(f, now, (size_t)sv[i].n * 4) : gcr_ctx_status(F->ctx);
        int same = s == GCR_OK && !memcmp(now, sv[i].v, (size_t)sv[i].n * 4);
        if (f != val[i]) gcr_tensor_free(f);
        free(now);
        if (!CHECK(same, "seed %llu %s: output entry %d lost its last results after a failed replay (%s: %s)",
                   (unsigned long long)F->seed, what, i, gcr_status_name(s), gcr_ctx_error(F->ctx)))
            return 0;
    }
    return 1;
}

/* the graph input index of each pool entry, -1 when the graph does not read it as an input */
static void map_inputs(fz *F, gcr_graph *g, int *gi)
{
    for (int i = 0; i < F->P.n; i++) {
        gi[i] = -1;
        for (int j = 0; j < gcr_graph_num_inputs(g) && F->P.p[i].kind == K_IN; j++)
            if (gcr_graph_get_input(g, j) == F->orig[i]) gi[i] = j;
    }
}

/* The refusals allowed where eager succeeds (or fails later, with another status). gcr.h keeps
 * the choices the API made from the captured shapes and applies parameters as written: a reshape
 * or flatten called on a contiguous input is recorded as a view (the API copies only a strided
 * input), so a strided binding fails there, naming the op; and a permutation written with the
 * captured rank's entries does not apply to an input of lower rank (eagerly, gcr_permute would
 * read only the first entries of the same array). Both fail loudly, never with wrong data. */
static int as_written_refusal(gcr_status st, const char *msg)
{
    return (st == GCR_ERR_SHAPE && strstr(msg, "is not contiguous (the call was made on a contiguous one)")) ||
           (st == GCR_ERR_PARAM && strstr(msg, "permute: perm ("));
}

/* one re-binding of an explicit graph: cur holds what the program reads now; binds what differs
 * from bound, replays, and compares with eager (or, where eager fails, wants the same failure
 * and the outputs as they were). Returns whether eager succeeded. */
static int rebind_case(fz *F, gcr_graph *g, const int *gi, gcr_tensor **bound, gcr_tensor **cur, gcr_tensor **val,
                       saved *sv, int kind, const char *what)
{
    gcr_ctx *ctx = F->ctx;
    gcr_status bst = GCR_OK;
    for (int i = 0; i < F->P.n; i++) {
        if (gi[i] < 0 || bound[i] == cur[i]) continue;
        gcr_status s = gcr_graph_bind_input(g, gi[i], cur[i]);
        if (s == GCR_OK) bound[i] = cur[i];
        else if (bst == GCR_OK) bst = s;
    }
    char bmsg[256];
    snprintf(bmsg, sizeof bmsg, "%s", gcr_ctx_error(ctx));
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *ref[MAXP];
    /* fresh data only where the binding is valid: an output may be a view of an input, and after
     * a failed replay the outputs must read as they were */
    gcr_status est = eager(F, cur, ref);
    if (est == GCR_OK) {
        refill(F, cur);
        est = eager(F, cur, ref);
    }
    int ok = 1;
    if (bst != GCR_OK) { /* a refused binding: only where eager fails too */
        ok = CHECK(est != GCR_OK, "seed %llu %s: bind_input refused a binding eager accepts: %s: %s",
                   (unsigned long long)F->seed, what, gcr_status_name(bst), bmsg);
        cnt.refused[kind]++;
    } else {
        gcr_status rst = gcr_graph_replay(g);
        char rmsg[256];
        snprintf(rmsg, sizeof rmsg, "%s", gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        if (est == GCR_OK && as_written_refusal(rst, rmsg)) {
            cnt.as_written[kind]++;
            est = rst; /* the next case starts from the capture's inputs */
        } else if (est == GCR_OK) {
            ok = CHECK(rst == GCR_OK, "seed %llu %s: replay failed where eager succeeds: %s: %s",
                       (unsigned long long)F->seed, what, gcr_status_name(rst), rmsg) &&
                 outputs_match(F, val, ref, what);
            if (ok) save_outputs(F, val, sv);
            cnt.ok[kind]++;
        } else {
            ok = CHECK(rst != GCR_OK, "seed %llu %s: replay returned GCR_OK where eager fails with %s",
                       (unsigned long long)F->seed, what, gcr_status_name(est)) &&
                 CHECK(rst == est || as_written_refusal(rst, rmsg), "seed %llu %s: replay failed with %s, eager with %s (%s)", (unsigned long long)F->seed,
                       what, gcr_status_name(rst), gcr_status_name(est), rmsg) &&
                 outputs_kept(F, val, sv, what);
            cnt.refused[kind]++;
        }
    }
    gcr_scope_end(ctx, sc);
    gcr_ctx_clear_error(ctx);
    if (!ok) report(F, what, g);
    return est == GCR_OK;
}

/* a bindable non-constant input entry, or -1 */
static int pick_bindable(fz *F, const int *gi)
{
    int c[MAXP], n = 0;
    for (int i = 0; i < F->P.n; i++)
        if (gi[i] >= 0 && !F->P.p[i].is_const) c[n++] = i;
    return n ? c[h_pick((uint32_t)n)] : -1;
}

static void explicit_part(fz *F)
{
    gcr_ctx *ctx = F->ctx;
    const prog *P = &F->P;
    gcr_tensor *val[MAXP], *ref[MAXP];
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    run(ctx, P, F->orig, val);
    gcr_status st = gcr_capture_end(ctx, &g);
    uint64_t sc = gcr_scope_begin(ctx);
    char cmsg[256];
    snprintf(cmsg, sizeof cmsg, "%s", gcr_ctx_error(ctx));
    gcr_status est = eager(F, F->orig, ref);
    if (!CHECK(est == GCR_OK && st == GCR_OK && g, "seed %llu: eager %s, capture %s: %s", (unsigned long long)F->seed,
               gcr_status_name(est), gcr_status_name(st), cmsg) ||
        !outputs_match(F, val, ref, "capture pass")) {
        report(F, "capture", g);
        gcr_scope_end(ctx, sc);
        gcr_graph_destroy(g);
        return;
    }
    gcr_scope_end(ctx, sc);
    cnt.graphs++;
    int gi[MAXP];
    map_inputs(F, g, gi);
    saved sv[MAXP];
    memset(sv, 0, sizeof sv);
    save_outputs(F, val, sv);
    gcr_tensor *bound[MAXP], *cur[MAXP], *kept[4][MAXP];
    int nkept = 0;
    memcpy(bound, F->orig, sizeof bound);
    memcpy(cur, F->orig, sizeof cur);
    /* the cases in random order, each after a replay on fresh data, and back to the capture's inputs */
    int order[V_KINDS + 1], n = 0;
    for (int v = 0; v < V_KINDS; v++) order[n++] = v;
    order[n++] = C_REUSE;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)h_pick((uint32_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int valid = 1;
    for (int c = 0; c <= 2 * n && !F->failed; c++) {
        int kind = c == 2 * n ? C_BACK : c % 2 == 0 ? C_FRESH : order[c / 2];
        char what[160];
        snprintf(what, sizeof what, "explicit case %d", c);
        if (kind == C_BACK || (kind != C_FRESH && (!valid || h_pick(2)))) memcpy(cur, F->orig, sizeof cur);
        if (kind == C_BACK) snprintf(what, sizeof what, "explicit case %d: back to the capture's inputs", c);
        else if (kind == C_REUSE && nkept) {
            memcpy(cur, kept[h_pick((uint32_t)nkept)], sizeof cur);
            snprintf(what, sizeof what, "explicit case %d: an earlier binding again", c);
        } else if (kind < V_KINDS) {
            int k = pick_bindable(F, gi);
            if (k < 0) continue;
            /* another dtype: each other input too with chance 1/2 (a lone one mostly fails eagerly) */
            for (int i = 0; i < P->n; i++)
                if (i == k || (kind == V_DTYPE && gi[i] >= 0 && !P->p[i].is_const && h_pick(2)))
                    cur[i] = make(ctx, variant(P, &P->p[i], kind));
            snprintf(what, sizeof what, "explicit case %d: input entry %d bound to %s", c, k, case_name[kind]);
        } else if (!valid) {
            memcpy(cur, F->orig, sizeof cur);
        }
        int made = 1;
        for (int i = 0; i < P->n; i++) made &= cur[i] != NULL || P->p[i].kind != K_IN;
        if (!made) break; /* a tensor could not be made (checked already) */
        valid = rebind_case(F, g, gi, bound, cur, val, sv, kind, what);
        if (valid && nkept < 4 && kind < V_KINDS) memcpy(kept[nkept++], cur, sizeof cur);
    }
    for (int i = 0; i < P->n; i++) free(sv[i].v);
    F->g = g; /* the last case bound the capture's inputs back */
    memcpy(F->gval, val, sizeof val);
}

/* The explicit graph between region passes: fresh data in its inputs, a replay, and eager. */
static int graph_between_passes(fz *F, const char *what)
{
    gcr_tensor *ref[MAXP];
    refill(F, F->orig);
    gcr_status rst = gcr_graph_replay(F->g);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", gcr_ctx_error(F->ctx));
    uint64_t sc = gcr_scope_begin(F->ctx);
    gcr_status est = eager(F, F->orig, ref);
    int ok = CHECK(rst == GCR_OK && est == GCR_OK, "seed %llu %s: replay %s, eager %s: %s", (unsigned long long)F->seed,
                   what, gcr_status_name(rst), gcr_status_name(est), msg) &&
             outputs_match(F, F->gval, ref, what);
    gcr_scope_end(F->ctx, sc);
    return ok;
}

/* ---------------------------------------------------------------- (b) regions */

/* What the region's cache holds by gcr.h's rules: variants in least-recently-used order. A
 * variant is one input signature here (or one pass, for a body fed its own output). */
typedef struct lru {
    int n, cap, id[4];
} lru;

/* uses variant id; returns the id evicted, or -1; *hit says whether it was cached */
static int lru_use(lru *L, int id, int *hit)
{
    int at = -1, evicted = -1;
    for (int i = 0; i < L->n; i++)
        if (L->id[i] == id) at = i;
    *hit = at >= 0;
    if (at < 0) {
        if (L->n == L->cap) evicted = L->id[--L->n];
        at = L->n++;
    }
    for (int i = at; i > 0; i--) L->id[i] = L->id[i - 1];
    L->id[0] = id;
    return evicted;
}

static int lru_has(const lru *L, int id)
{
    for (int i = 0; i < L->n; i++)
        if (L->id[i] == id) return 1;
    return 0;
}

#define MAXV 64 /* variant ids a region case tracks: at most 5 signatures + 15 passes + 15 made anew */

/* Every tensor of a cached (or just evicted) variant that is not an output of the pass that ran
 * last must fail to read with GCR_ERR_CAPTURE; after a failed pass, none reads (ran: NULL). */
static int stale_handles_fail(fz *F, gcr_tensor *(*vh)[MAXP], const lru *L, int evicted, gcr_tensor **ran,
                              const char *what)
{
    for (int id = 0; id < MAXV; id++) {
        if (!lru_has(L, id) && id != evicted) continue;
        for (int i = 0; i < F->P.n; i++) {
            gcr_tensor *t = vh[id][i];
            if (!t || F->P.p[i].kind == K_IN) continue;
            int current = 0;
            for (int o = 0; ran && o < F->P.n; o++) current |= F->is_out[o] && ran[o] == t;
            if (current) continue;
            size_t nb = gcr_tensor_nbytes(t);
            void *buf = malloc(nb ? nb : 1);
            gcr_status s = gcr_tensor_to_host(t, buf, nb);
            free(buf);
            char msg[256];
            snprintf(msg, sizeof msg, "%s", gcr_ctx_error(F->ctx));
            gcr_ctx_clear_error(F->ctx);
            cnt.stale_reads++;
            if (s != GCR_ERR_CAPTURE) /* one check per pass: a failure names the tensor */
                return CHECK(0, "seed %llu %s: entry %d of variant %d is not an output of the pass that ran last, "
                             "yet reading it gives %s (%s)", (unsigned long long)F->seed, what, i, id, gcr_status_name(s), msg);
        }
    }
    return CHECK(1, "stale handles");
}

/* One region case: the input signatures it cycles (the capture's main input and variants of
 * it), what its cache holds by the model, and the recurrent state. */
typedef struct rcase {
    fz *F;
    int cap, K;
    int recur;   /* the state input is the last pass's output */
    int in_body; /* host writes inside the body, before any op reads (gcr.h allows it) */
    int late;    /* a write into the main input after the body read it: refused with
                    GCR_ERR_CAPTURE, the body clears the error, the pass runs on the data before */
    int replace; /* signature tensors freed and made anew between passes: the region then matches
                    by address, so the model of its cache is off and only values are checked */
    spec sp[8];
    gcr_tensor *sig[8];
    int sig_id[8], next_id;
    lru L;
    gcr_tensor *vh[MAXV][MAXP]; /* handles each variant's last pass returned */
    gcr_tensor *state;
} rcase;

static int region_signatures(rcase *R)
{
    const prog *P = &R->F->P;
    R->sig[0] = R->F->orig[0];
    R->sp[0] = spec_of(&P->p[0]);
    for (int j = 0; j < R->K; j++) {
        static const int kinds[] = {V_SAME, V_SHAPE, V_SHAPE, V_VIEW, V_DTYPE, V_RANK};
        R->sig_id[j] = j;
        if (j == 0) continue;
        R->sp[j] = variant(P, &P->p[0], kinds[h_pick(P->poly ? 6 : 5)]);
        R->sig[j] = make(R->F->ctx, R->sp[j]);
        if (!R->sig[j]) return 0;
    }
    R->next_id = R->K;
    return 1;
}

/* a signature other than the capture's own freed and made anew: a new variant */
static void replace_signature(rcase *R)
{
    int j = 1 + (int)h_pick((uint32_t)R->K - 1);
    gcr_tensor_free(R->sig[j]);
    R->sig[j] = make(R->F->ctx, R->sp[j]);
    R->sig_id[j] = R->next_id++;
}

/* the state the pass reads, copied to host (NULL after a failed check) */
static float *read_state(rcase *R, const char *what)
{
    gcr_ctx *ctx = R->F->ctx;
    int64_t n = gcr_tensor_numel(R->state);
    float *hs = malloc((size_t)(n > 0 ? n : 1) * sizeof *hs);
    gcr_tensor *f = gcr_tensor_dtype(R->state) == GCR_F32 ? R->state : gcr_cast(ctx, R->state, GCR_F32);
    gcr_status s = f ? gcr_tensor_to_host(f, hs, (size_t)n * 4) : gcr_ctx_status(ctx);
    if (f != R->state) gcr_tensor_free(f);
    if (CHECK(s == GCR_OK, "seed %llu %s: the last pass's output (the state) does not read: %s: %s",
              (unsigned long long)R->F->seed, what, gcr_status_name(s), gcr_ctx_error(ctx)))
        return hs;
    free(hs);
    return NULL;
}

/* the pass's results against eager (on the same inputs, the state from host), and the region's
 * handles against the model of its cache */
static int judge_pass(rcase *R, int id, gcr_status st, const char *msg, gcr_tensor **in, const float *hs,
                      gcr_tensor **rv, const char *what)
{
    fz *F = R->F;
    const prog *P = &F->P;
    gcr_tensor *ein[MAXP], *ref[MAXP];
    memcpy(ein, in, sizeof ein);
    if (R->recur) {
        const step *e = &P->p[P->state];
        ein[P->state] = h_tensor(F->ctx, e->dt, e->out.nd, e->out.s, GCR_NCHW, hs);
    }
    gcr_status est = eager(F, ein, ref);
    int model = !R->replace;
    if (est != GCR_OK) {
        cnt.passes_failed++;
        if (R->recur) R->state = make(F->ctx, spec_of(&P->p[P->state])); /* no region tensor holds data now */
        return CHECK(st == est, "seed %llu %s: the pass gave %s where eager fails with %s (%s)",
                     (unsigned long long)F->seed, what, gcr_status_name(st), gcr_status_name(est), msg) &&
               (!model || stale_handles_fail(F, R->vh, &R->L, -1, NULL, what));
    }
    cnt.passes_ok++;
    int ok = CHECK(st == GCR_OK, "seed %llu %s: the pass failed where eager succeeds: %s: %s",
                   (unsigned long long)F->seed, what, gcr_status_name(st), msg) &&
             outputs_match(F, rv, ref, what);
    if (R->recur) R->state = rv[P->n - 1];
    if (!ok || !model) return ok;
    int hit = 0, ev = lru_use(&R->L, id, &hit);
    cnt.hits += hit;
    cnt.evictions += ev >= 0;
    for (int i = 0; ok && hit && i < P->n; i++)
        if (P->p[i].kind != K_IN)
            ok = CHECK(rv[i] == R->vh[id][i], "seed %llu %s: a cached variant returned a new handle for entry %d",
                       (unsigned long long)F->seed, what, i);
    memcpy(R->vh[id], rv, sizeof R->vh[id]);
    ok = ok && stale_handles_fail(F, R->vh, &R->L, ev, rv, what);
    if (ev >= 0) memset(R->vh[ev], 0, sizeof R->vh[ev]); /* it may be freed after cap more evictions */
    return ok;
}

/* one pass on signature s: host writes (before the body or at its start), the body, the checks */
static int region_pass(rcase *R, int pass, int s)
{
    fz *F = R->F;
    gcr_ctx *ctx = F->ctx;
    const prog *P = &F->P;
    int id = R->recur ? R->next_id++ : R->sig_id[s];
    char what[160];
    snprintf(what, sizeof what, "region pass %d (signature %d of %d, cache %d%s%s%s%s)", pass, s, R->K, R->cap,
             R->recur ? ", state fed back" : "", R->in_body ? ", writes in the body" : "",
             R->replace ? ", signatures made anew" : "", R->late ? ", a late write refused" : "");
    gcr_tensor *in[MAXP], *rv[MAXP];
    memcpy(in, F->orig, sizeof in);
    in[0] = R->sig[s];
    float *hs = NULL;
    if (R->recur) {
        in[P->state] = R->state;
        if (!(hs = read_state(R, what))) {
            report(F, what, NULL);
            return 0;
        }
    }
    void *bytes[MAXP];
    fresh_inputs(F, in, R->recur ? P->state : -1, bytes);
    if (!R->in_body) write_inputs(F, in, bytes);
    gcr_ctx_clear_error(ctx);
    void *late = R->late ? fresh_bytes(in[0], P->p[0].positive) : NULL;
    gcr_status before = GCR_OK, late_st = GCR_ERR_CAPTURE;
    GCR_REGION(ctx, "fuzz")
    {
        write_inputs(F, in, bytes);
        run(ctx, P, in, rv);
        if (late && (before = gcr_ctx_status(ctx)) == GCR_OK) {
            late_st = gcr_tensor_from_host(in[0], late, gcr_tensor_nbytes(in[0]));
            gcr_ctx_clear_error(ctx);
        }
    }
    free(late);
    if (R->late && before == GCR_OK)
        CHECK(late_st == GCR_ERR_CAPTURE, "seed %llu %s: a write into an input the body has read gave %s",
              (unsigned long long)F->seed, what, gcr_status_name(late_st));
    gcr_status st = gcr_ctx_status(ctx);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    uint64_t sc = gcr_scope_begin(ctx);
    int ok = judge_pass(R, id, st, msg, in, hs, rv, what);
    gcr_scope_end(ctx, sc);
    free(hs);
    if (ok && F->g && h_pick(4) == 0) {
        snprintf(what, sizeof what, "explicit graph replayed after region pass %d", pass);
        ok = graph_between_passes(F, what);
    }
    if (!ok) report(F, what, NULL);
    return ok;
}

static void region_part(fz *F)
{
    rcase *R = calloc(1, sizeof *R);
    R->F = F;
    R->cap = F->k.graph_cache;
    R->K = R->cap + 1 + (int)h_pick(2);
    R->recur = F->P.state >= 0 && h_pick(2);
    R->in_body = h_pick(4) == 0;
    R->replace = h_pick(5) == 0;
    R->late = h_pick(4) == 0;
    R->L.cap = R->cap;
    R->state = F->orig[F->P.state >= 0 ? F->P.state : 0];
    int passes = 2 * R->K + 2 + (int)h_pick(4);
    if (region_signatures(R))
        for (int pass = 0; pass < passes; pass++) {
            if (R->replace && pass > 0 && h_pick(3) == 0) replace_signature(R);
            /* every signature once, then at random */
            if (!region_pass(R, pass, pass < R->K ? (pass + 1) % R->K : (int)h_pick((uint32_t)R->K))) break;
        }
    free(R);
}

static void one_case(uint64_t seed)
{
    fz *F = calloc(1, sizeof *F);
    F->seed = seed;
    gen(&F->P, seed);
    h_seed(seed);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.fusion = h_pick(4) != 0;
    o.knobs.single_node = h_pick(3) == 0;
    o.knobs.horizontal = (int)h_pick(2);
    o.knobs.retrace = h_pick(5) != 0;
    o.knobs.graph_cache = 1 + (int)h_pick(3);
    o.knobs.guards = 1;
    o.knobs.log = 0;
    F->k = o.knobs;
    F->generic = cu_dev == GCR_DEVICE_CPU && h_pick(5) == 0;
    if (!CHECK(gcr_ctx_create(&F->ctx, &o) == GCR_OK, "seed %llu: ctx", (unsigned long long)seed)) {
        free(F);
        return;
    }
    if (F->generic) gcr_exec_force(F->ctx, &gcr_generic_executor);
    outputs(&F->P, F->is_out);
    int made = 1;
    for (int i = 0; i < F->P.n; i++) {
        const step *e = &F->P.p[i];
        if (e->kind != K_IN) continue;
        F->orig[i] = make(F->ctx, spec_of(e));
        if (!F->orig[i]) made = 0;
        else if (e->is_const) gcr_tensor_set_const(F->orig[i]);
    }
    if (made) explicit_part(F);
    if (made && !F->failed) region_part(F);
    gcr_graph_destroy(F->g);
    gcr_ctx_destroy(F->ctx);
    free(F);
}

static void test_fuzz_replay(void)
{
    const char *en = getenv("GCR_FUZZ_REPLAY_N"), *es = getenv("GCR_FUZZ_REPLAY_SEED");
    int n = en ? atoi(en) : cu_dev == GCR_DEVICE_CUDA ? 500 : 2000;
    uint64_t seed0 = es ? strtoull(es, NULL, 10) : 1;
    int failed = 0;
    memset(&cnt, 0, sizeof cnt);
    for (int i = 0; i < n && failed < 3; i++) {
        int f0 = h_fail;
        one_case(seed0 + (uint64_t)i);
        failed += h_fail > f0;
    }
    printf("fuzz_replay (%s): %d programs from seed %llu, %d failed; %d graphs\n", cu_dev == GCR_DEVICE_CUDA ? "cuda" : "cpu",
           n, (unsigned long long)seed0, failed, cnt.graphs);
    for (int k = 0; k < C_KINDS; k++)
        printf("  replays on %s: %d matched eager, %d failed as eager did, %d refused as written where eager runs\n",
               case_name[k], cnt.ok[k], cnt.refused[k], cnt.as_written[k]);
    printf("  region passes: %d matched eager, %d failed as eager did; %d cache hits, %d evictions, %d reads of "
           "stale handles refused\n", cnt.passes_ok, cnt.passes_failed, cnt.hits, cnt.evictions, cnt.stale_reads);
}

static void all(void) { RUN(test_fuzz_replay); }

int main(void)
{
    cu_each_device(all);
    return h_finish();
}
