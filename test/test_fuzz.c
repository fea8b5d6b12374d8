/* test_fuzz.c — seeded differential test of capture + fusion + replay: random op graphs
 * (pointwise chains and DAGs, broadcasts, reductions, conv/linear/batch-norm with tails, depthwise
 * convs with strides and the expand -> depthwise -> project runs of depthwise-separable blocks,
 * global means into 1x1 convs (kernel chains), shared intermediates, several outputs, views) run
 * eagerly and as replayed graphs, with fusion on and off (odd seeds with conv -> conv pairs asked
 * for, GCR_CONVCONV=1), and must agree on fresh data every replay. GCR_FUZZ_N (default 600) and GCR_FUZZ_SEED
 * choose the cases; a failure prints the case's seed and the fused graph. */
#include "capture_util.h"
#include "../replay/graph.h"
#include "../lib/exec.h"
#include <stdbool.h>

#define MAXP 48

enum { O_NEG, O_ABS, O_RELU, O_SIGMOID, O_TANH, O_ADD, O_SUB, O_MUL, O_MAXIMUM, O_MINIMUM, O_MAX, O_MEAN, O_SUM };

typedef struct shp {
    int nd;
    int64_t s[4];
} shp;

enum { K_IN, K_UNARY, K_SCALAR, K_CLAMP, K_BINARY, K_REDUCE, K_CONV, K_LINEAR, K_BN, K_PERMUTE, K_SLICE,
       K_FLATTEN, K_HSWISH, K_SOFTMAX, K_SAFEDIV, K_CONTIG };

typedef struct step {
    int kind, op, a, b;
    int w[4];       /* weight/param input indices (pool ids of inputs) */
    float s;
    int k;          /* kernel size, axis, ... */
    int st, g;      /* conv: stride, groups */
    int marked;
    shp out;
} step;

typedef struct prog {
    int n;          /* pool entries: inputs and steps interleaved */
    step p[MAXP];
    int is_const[MAXP], positive[MAXP];
    gcr_dtype dt;
    gcr_format fmt;
} prog;

static int add_input(prog *P, shp s, int is_const, int positive)
{
    int i = P->n++;
    memset(&P->p[i], 0, sizeof P->p[i]);
    P->p[i].kind = K_IN;
    P->p[i].out = s;
    P->is_const[i] = is_const;
    P->positive[i] = positive;
    return i;
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

static shp mk(int nd, int64_t a, int64_t b, int64_t c, int64_t d)
{
    shp s = {nd, {a, b, c, d}};
    return s;
}

/* a random pool entry with ndim nd (or any when nd < 0); -1 when none */
static int pick(const prog *P, int nd)
{
    int c[MAXP], n = 0;
    for (int i = 0; i < P->n; i++)
        if ((nd < 0 || P->p[i].out.nd == nd) && !P->is_const[i]) c[n++] = i;
    return n ? c[h_pick((uint32_t)n)] : -1;
}

/* appends a k x k conv (padding k / 2, stride st, g groups) of pool entry a into O channels, its
 * weight and half the time a bias new constant inputs; returns its entry */
static int push_conv(prog *P, int a, int k, int st, int g, int64_t O)
{
    const shp A = P->p[a].out;
    step c;
    memset(&c, 0, sizeof c);
    c.kind = K_CONV;
    c.a = a;
    c.k = k;
    c.st = st;
    c.g = g;
    c.w[0] = add_input(P, mk(4, O, A.s[1] / g, k, k), 1, 0);
    c.w[1] = h_pick(2) ? add_input(P, mk(1, O, 0, 0, 0), 1, 0) : -1;
    c.out = mk(4, A.s[0], O, (A.s[2] - 1) / st + 1, (A.s[3] - 1) / st + 1);
    P->p[P->n] = c;
    return P->n++;
}

static void gen(prog *P, uint64_t seed)
{
    h_pick_seed(seed * 2654435761u + 88172645463325252ull);
    memset(P, 0, sizeof *P);
    P->dt = h_pick(5) == 0 ? GCR_F16 : GCR_F32;
    P->fmt = h_pick(3) == 0 ? GCR_NHWC : GCR_NCHW;
    int64_t N = 1 + h_pick(2), C = 1 + h_pick(5), H = 1 + h_pick(6), W = 1 + h_pick(7);
    add_input(P, mk(4, N, C, H, W), 0, 0);
    if (h_pick(2)) add_input(P, mk(3, C, 1, 1, 0), 0, 0);
    if (h_pick(2)) add_input(P, mk(1, W, 0, 0, 0), 0, 0);
    if (h_pick(3) == 0) add_input(P, mk(4, 1, C, H, 1), 0, 0);
    int steps = 3 + (int)h_pick(12);
    for (int t = 0; t < steps && P->n < MAXP - 6; t++) {
        step s;
        memset(&s, 0, sizeof s);
        s.a = pick(P, -1);
        shp A = P->p[s.a].out;
        switch (h_pick(16)) {
        case 0: case 1: {
            static const int un[] = {O_NEG, O_ABS, O_RELU, O_SIGMOID, O_TANH};
            s.kind = K_UNARY;
            s.op = un[h_pick(5)];
            s.out = A;
            break;
        }
        case 2: {
            static const int bi[] = {O_ADD, O_SUB, O_MUL, O_MAXIMUM, O_MINIMUM};
            s.kind = K_SCALAR;
            s.op = bi[h_pick(5)];
            s.s = (float)h_pick(7) * 0.5f - 1.5f;
            s.out = A;
            break;
        }
        case 3: s.kind = K_CLAMP; s.s = -(float)h_pick(3); s.out = A; break;
        case 4: case 5: case 6: {
            static const int bi[] = {O_ADD, O_SUB, O_MUL, O_MAXIMUM, O_MINIMUM};
            s.kind = K_BINARY;
            s.op = bi[h_pick(5)];
            int tries = 0;
            do { s.b = pick(P, -1); } while (!bcast(A, P->p[s.b].out, &s.out) && ++tries < 8);
            if (!bcast(A, P->p[s.b].out, &s.out)) { s.b = s.a; s.out = A; }
            break;
        }
        case 7:
            if (A.nd != 4) { s.kind = K_HSWISH; s.out = A; break; }
            s.kind = K_REDUCE;
            s.op = h_pick(3) == 0 ? O_MAX : h_pick(2) ? O_MEAN : O_SUM;
            s.out = mk(4, A.s[0], A.s[1], 1, 1);
            break;
        case 8: {
            if (A.nd != 4) { s.kind = K_SOFTMAX; s.k = A.nd - 1; s.out = A; break; }
            /* a dense conv; a depthwise one (3x3 or 5x5, stride 1 or 2); or the conv -> conv run of a
             * depthwise-separable block: half the time a 1x1 expand, then the depthwise, an
             * activation or none, and a 1x1 projection, each read only by the next */
            const int form = P->n + 12 < MAXP ? (int)h_pick(3) : 0;
            int a = s.a;
            if (form == 0) {
                const int k = h_pick(2) ? 1 : 3;
                push_conv(P, a, k, 1, 1, 1 + h_pick(5));
            } else {
                /* the expand's width: 1-4, 8 or 16 (multiples of 8 give CUDA's conv -> conv kernel
                 * its 16-byte channel groups), one draw as before so that older seeds keep their
                 * other choices */
                if (form == 2 && h_pick(2)) {
                    const int64_t v = 1 + h_pick(6);
                    a = push_conv(P, a, 1, 1, 1, v == 6 ? 16 : v == 5 ? 8 : v);
                }
                const int64_t C = P->p[a].out.s[1];
                const int k = h_pick(2) ? 3 : 5;
                a = push_conv(P, a, k, 1 + (int)h_pick(2), (int)C, C);
                if (form == 2) {
                    const int act = (int)h_pick(3);
                    if (act) {
                        step u;
                        memset(&u, 0, sizeof u);
                        u.kind = act == 1 ? K_UNARY : K_HSWISH;
                        u.op = O_RELU;
                        u.a = a;
                        u.out = P->p[a].out;
                        P->p[P->n] = u;
                        a = P->n++;
                    }
                    push_conv(P, a, 1, 1, 1, 1 + h_pick(6));
                }
            }
            s = P->p[--P->n]; /* the last conv is this step: marked or not below */
            break;
        }
        case 9: {
            s.kind = K_LINEAR;
            int64_t K = A.s[A.nd - 1], O = 1 + h_pick(6);
            s.w[0] = add_input(P, mk(2, O, K, 0, 0), 1, 0);
            s.w[1] = h_pick(2) ? add_input(P, mk(1, O, 0, 0, 0), 1, 0) : -1;
            s.out = A;
            s.out.s[A.nd - 1] = O;
            break;
        }
        case 10:
            if (A.nd < 2) { s.kind = K_HSWISH; s.out = A; break; }
            s.kind = K_BN;
            s.w[0] = add_input(P, mk(1, A.s[1], 0, 0, 0), 1, 0);
            s.w[1] = add_input(P, mk(1, A.s[1], 0, 0, 0), 1, 1);
            s.w[2] = add_input(P, mk(1, A.s[1], 0, 0, 0), 1, 0);
            s.w[3] = add_input(P, mk(1, A.s[1], 0, 0, 0), 1, 0);
            s.out = A;
            break;
        case 11:
            s.kind = K_PERMUTE;
            s.out = A;
            if (A.nd >= 2) { s.out.s[A.nd - 1] = A.s[A.nd - 2]; s.out.s[A.nd - 2] = A.s[A.nd - 1]; }
            break;
        case 12:
            s.kind = K_SLICE;
            s.out = A;
            s.k = A.nd - 1;
            s.out.s[s.k] = (A.s[s.k] + 1) / 2; /* step 2 */
            break;
        case 13:
            if (A.nd < 2) { s.kind = K_HSWISH; s.out = A; break; }
            s.kind = K_FLATTEN; /* flatten the last two dims (copies when strided) */
            s.out = A;
            s.out.nd = A.nd - 1;
            s.out.s[A.nd - 2] = A.s[A.nd - 2] * A.s[A.nd - 1];
            break;
        case 14: s.kind = K_SAFEDIV; s.b = pick(P, -1); if (!bcast(A, P->p[s.b].out, &s.out)) { s.b = s.a; s.out = A; } break;
        default: s.kind = h_pick(2) ? K_HSWISH : K_CONTIG; s.out = A; break;
        }
        s.marked = h_pick(6) == 0;
        P->p[P->n++] = s;
        /* half of the global means feed a 1x1 conv at once: the head of a chain (pass_chain.c) */
        if (s.kind == K_REDUCE && s.op != O_MAX && h_pick(2)) push_conv(P, P->n - 1, 1, 1, 1, 1 + h_pick(9));
    }
}

/* runs the program on ctx (eager or capturing); val[i] gets pool entry i */
static void run(gcr_ctx *ctx, const prog *P, gcr_tensor **in, gcr_tensor **val)
{
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        gcr_tensor *a = s->kind == K_IN ? NULL : val[s->a], *r = NULL;
        switch (s->kind) {
        case K_IN: r = in[i]; break;
        case K_UNARY: {
            switch (s->op) {
            case O_NEG: r = gcr_neg(ctx, a); break;
            case O_ABS: r = gcr_abs(ctx, a); break;
            case O_RELU: r = gcr_relu(ctx, a); break;
            case O_SIGMOID: r = gcr_sigmoid(ctx, a); break;
            default: r = gcr_tanh(ctx, a); break;
            }
            break;
        }
        case K_SCALAR:
            switch (s->op) {
            case O_ADD: r = gcr_add_scalar(ctx, a, s->s); break;
            case O_SUB: r = gcr_sub_scalar(ctx, a, s->s); break;
            case O_MUL: r = gcr_mul_scalar(ctx, a, s->s); break;
            case O_MAXIMUM: r = gcr_maximum_scalar(ctx, a, s->s); break;
            default: r = gcr_minimum_scalar(ctx, a, s->s); break;
            }
            break;
        case K_CLAMP: r = gcr_clamp(ctx, a, s->s, 2.0f); break;
        case K_BINARY: {
            gcr_tensor *b = val[s->b];
            switch (s->op) {
            case O_ADD: r = gcr_add(ctx, a, b); break;
            case O_SUB: r = gcr_sub(ctx, a, b); break;
            case O_MUL: r = gcr_mul(ctx, a, b); break;
            case O_MAXIMUM: r = gcr_maximum(ctx, a, b); break;
            default: r = gcr_minimum(ctx, a, b); break;
            }
            break;
        }
        case K_SAFEDIV: { /* a / (|b| + 1) and a bounded exp: no inf/nan by construction */
            gcr_tensor *d = gcr_add_scalar(ctx, gcr_abs(ctx, val[s->b]), 1.0f);
            r = gcr_div(ctx, gcr_exp(ctx, gcr_clamp(ctx, a, -3.0f, 3.0f)), d);
            break;
        }
        case K_REDUCE: {
            int ax[2] = {2, 3};
            r = s->op == O_MAX ? gcr_max(ctx, a, ax, 2, 1) : s->op == O_MEAN ? gcr_mean(ctx, a, ax, 2, 1)
                                                                                        : gcr_sum(ctx, a, ax, 2, 1);
            break;
        }
        case K_CONV: {
            gcr_conv2d_params cp = gcr_conv2d_default();
            cp.padding[0] = cp.padding[1] = s->k / 2;
            cp.stride[0] = cp.stride[1] = s->st;
            cp.groups = s->g;
            r = gcr_conv2d(ctx, a, val[s->w[0]], s->w[1] >= 0 ? val[s->w[1]] : NULL, &cp);
            break;
        }
        case K_LINEAR: r = gcr_linear(ctx, a, val[s->w[0]], s->w[1] >= 0 ? val[s->w[1]] : NULL); break;
        case K_BN: r = gcr_batch_norm(ctx, a, val[s->w[0]], val[s->w[1]], val[s->w[2]], val[s->w[3]], 1e-3f); break;
        case K_PERMUTE: {
            int perm[4] = {0, 1, 2, 3};
            if (a && gcr_tensor_ndim(a) >= 2) {
                int nd = gcr_tensor_ndim(a);
                perm[nd - 1] = nd - 2;
                perm[nd - 2] = nd - 1;
            }
            r = gcr_permute(ctx, a, perm);
            break;
        }
        case K_SLICE: r = gcr_slice(ctx, a, s->k, 0, INT64_MAX, 2); break;
        case K_FLATTEN: r = gcr_flatten(ctx, a, -2, -1); break;
        case K_HSWISH: r = gcr_hardswish(ctx, a); break;
        case K_SOFTMAX: r = gcr_softmax(ctx, a, s->k); break;
        case K_CONTIG: r = gcr_contiguous(ctx, a, gcr_tensor_ndim(a) == 4 ? GCR_NHWC : GCR_NCHW); break;
        }
        val[i] = r;
        if (s->marked && s->kind != K_IN && r) gcr_graph_output(ctx, r);
    }
}

/* outputs: entries nothing later reads, plus marked ones (inputs excluded) */
static void outputs(const prog *P, char *is_out)
{
    memset(is_out, 0, MAXP);
    for (int i = 0; i < P->n; i++) is_out[i] = P->p[i].kind != K_IN;
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        if (s->kind == K_IN) continue;
        is_out[s->a] = 0;
        if (s->kind == K_BINARY || s->kind == K_SAFEDIV) is_out[s->b] = 0;
    }
    for (int i = 0; i < P->n; i++)
        if (P->p[i].marked && P->p[i].kind != K_IN) is_out[i] = 1;
}

static void fill(gcr_tensor *t, int positive) { cu_refill(t, positive); }

/* one CHECK_CLOSE of the first n values of got against ref (the eager run) at dt's tolerance */
static int same_values(gcr_tensor *got, gcr_tensor *ref, int64_t n, gcr_dtype dt, const char *what)
{
    float *a = h_read(got), *b = h_read(ref);
    float tol = dt == GCR_F32 ? 1e-4f : 3e-2f;
    for (int64_t e = 0; e < n; e++) /* equal infinities (f16 overflow in both) agree */
        if (a[e] == b[e]) a[e] = b[e] = 0.0f;
    int ok = CHECK_CLOSE(a, b, n, tol, tol, what);
    free(a);
    free(b);
    return ok;
}

static int n_chained; /* cases whose fused graph has a chain (capture/pass_chain.c) */
static int n_dw, n_cc; /* cases with a depthwise conv; with a conv reading a conv (through an activation or not) */
static int n_pair;     /* cases whose fused graph runs a conv -> conv pair as one kernel (pass_convconv.c) */

/* counts P's conv forms into n_dw and n_cc */
static void count_convs(const prog *P)
{
    int dw = 0, cc = 0;
    for (int i = 0; i < P->n; i++) {
        const step *s = &P->p[i];
        if (s->kind != K_CONV) continue;
        dw |= s->g > 1;
        const step *in = &P->p[s->a];
        if (in->kind == K_UNARY || in->kind == K_HSWISH) in = &P->p[in->a];
        cc |= in->kind == K_CONV;
    }
    n_dw += dw;
    n_cc += cc;
}

static int one_case(uint64_t seed, int fusion)
{
    prog P;
    gen(&P, seed);
    if (fusion) count_convs(&P);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.fusion = fusion;
    o.knobs.single_node = (int)(seed % 3 == 0);
    o.knobs.horizontal = (int)(seed % 2);
    o.knobs.convconv = seed % 2 ? 1 : -1; /* odd seeds: pairs wherever the backend has a kernel */
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return CHECK(0, "ctx");
    /* every fifth case on the device-independent executor */
    if (seed % 5 == 0) gcr_exec_force(ctx, &gcr_generic_executor);
    gcr_tensor *in[MAXP] = {0}, *val[MAXP], *ref[MAXP];
    for (int i = 0; i < P.n; i++) {
        if (P.p[i].kind != K_IN) continue;
        const shp *s = &P.p[i].out;
        in[i] = gcr_tensor_keep(gcr_tensor_new(ctx, P.dt, s->nd, s->s, s->nd == 4 ? P.fmt : GCR_NCHW));
        fill(in[i], P.positive[i]);
        if (P.is_const[i]) gcr_tensor_set_const(in[i]);
    }
    char is_out[MAXP];
    outputs(&P, is_out);
    int ok = 1;
    gcr_graph *g = NULL;
    gcr_capture_begin(ctx);
    run(ctx, &P, in, val);
    gcr_status st = gcr_capture_end(ctx, &g);
    ok = CHECK(st == GCR_OK, "seed %llu fusion %d: capture failed: %s", (unsigned long long)seed, fusion,
               gcr_ctx_error(ctx));
    for (int k = 0; ok && g && g->cur && k < g->cur->ir->n_kernels; k++)
        if (g->cur->ir->kernels[k].chain > 1) {
            n_chained++;
            break;
        }
    for (int k = 0; ok && g && g->cur && k < g->cur->ir->n_kernels; k++)
        if (g->cur->ir->kernels[k].inner >= 0) {
            n_pair++;
            break;
        }
    for (int it = 0; ok && it < 3; it++) {
        if (it > 0) {
            for (int i = 0; i < P.n; i++)
                if (P.p[i].kind == K_IN && !P.is_const[i]) fill(in[i], P.positive[i]);
            st = gcr_graph_replay(g);
            ok = CHECK(st == GCR_OK, "seed %llu: replay: %s", (unsigned long long)seed, gcr_ctx_error(ctx));
            if (!ok) break;
        }
        uint64_t sc = gcr_scope_begin(ctx);
        run(ctx, &P, in, ref);
        for (int i = 0; i < P.n && ok; i++) {
            if (!is_out[i]) continue;
            int64_t n = gcr_tensor_numel(ref[i]);
            if (!CHECK(gcr_tensor_numel(val[i]) == n, "seed %llu: output %d numel", (unsigned long long)seed, i)) {
                ok = 0;
                break;
            }
            char what[96];
            snprintf(what, sizeof what, "seed %llu fusion %d iteration %d pool entry %d", (unsigned long long)seed,
                     fusion, it, i);
            ok = same_values(val[i], ref[i], n, P.dt, what);
        }
        gcr_scope_end(ctx, sc);
    }
    if (!ok && g) {
        size_t n = gcr_graph_describe(g, NULL, 0);
        char *s = malloc(n);
        gcr_graph_describe(g, s, n);
        fprintf(stderr, "GCR_FUZZ_SEED=%llu GCR_FUZZ_N=1 reproduces this case (%s, %s):\n%s", (unsigned long long)seed,
                gcr_dtype_name(P.dt), P.fmt == GCR_NHWC ? "nhwc" : "nchw", s);
        free(s);
    }
    /* a new batch size for input 0: the graph re-specialises (or fails loudly where a reshape
     * froze the old size) and must then agree with eager on the new input */
    if (ok && g) {
        const shp *s0 = &P.p[0].out;
        int64_t sh[4] = {s0->s[0] + 1, s0->s[1], s0->s[2], s0->s[3]};
        gcr_tensor *x1 = gcr_tensor_keep(gcr_tensor_new(ctx, P.dt, 4, sh, P.fmt));
        fill(x1, 0);
        gcr_tensor *in1[MAXP];
        memcpy(in1, in, sizeof in1);
        in1[0] = x1;
        int gi = -1; /* graph inputs are in first-use order: find pool entry 0 among them */
        for (int i = 0; i < gcr_graph_num_inputs(g); i++)
            if (gcr_graph_get_input(g, i) == in[0]) gi = i;
        if (gi >= 0) gcr_graph_bind_input(g, gi, x1);
        st = gcr_graph_replay(g);
        char replay_err[512];
        snprintf(replay_err, sizeof replay_err, "%s", gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx); /* so that eager's status below is eager's own */
        uint64_t sc = gcr_scope_begin(ctx);
        run(ctx, &P, in1, ref);
        gcr_status eager = gcr_ctx_status(ctx);
        if (eager != GCR_OK) {
            /* the program cannot run on the new shapes (a reshape written for the old batch):
             * the replay must refuse them as well, never run the stale graph */
            ok = CHECK(st != GCR_OK, "seed %llu: replay ran where eager failed: %s", (unsigned long long)seed,
                       gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
        } else {
            /* eager runs on the new shapes, so the graph must re-specialise: a shape error here
             * is a regression, not a legitimate refusal */
            ok = CHECK(st == GCR_OK, "seed %llu: re-specialised replay failed (%s) where eager ran: %s",
                       (unsigned long long)seed, gcr_status_name(st), replay_err);
            for (int i = 0; i < P.n && ok; i++) {
                if (!is_out[i]) continue;
                int64_t n = gcr_tensor_numel(ref[i]);
                ok = CHECK(gcr_tensor_numel(val[i]) == n, "seed %llu: re-specialised output %d numel %lld vs %lld",
                           (unsigned long long)seed, i, (long long)gcr_tensor_numel(val[i]), (long long)n);
                if (!ok) break;
                float *a = h_read(val[i]), *b = h_read(ref[i]);
                float tol = P.dt == GCR_F32 ? 1e-4f : 3e-2f;
                for (int64_t e = 0; e < n; e++)
                    if (a[e] == b[e]) a[e] = b[e] = 0.0f;
                char what[96];
                snprintf(what, sizeof what, "seed %llu fusion %d new batch, pool entry %d", (unsigned long long)seed,
                         fusion, i);
                ok = CHECK_CLOSE(a, b, n, tol, tol, what);
                free(a);
                free(b);
            }
        }
        gcr_scope_end(ctx, sc);
        if (gi >= 0) gcr_graph_bind_input(g, gi, in[0]);
        if (!ok) {
            size_t n = gcr_graph_describe(g, NULL, 0);
            char *txt = malloc(n);
            gcr_graph_describe(g, txt, n);
            fprintf(stderr, "GCR_FUZZ_SEED=%llu GCR_FUZZ_N=1 reproduces this case:\n%s", (unsigned long long)seed, txt);
            free(txt);
        }
        gcr_tensor_free(x1);
    }
    gcr_graph_destroy(g);
    /* the same program as a region body: pass 0 traces, passes 1.. check and replay */
    gcr_tensor *rv[MAXP];
    for (int pass = 0; ok && pass < 3; pass++) {
        for (int i = 0; i < P.n; i++)
            if (P.p[i].kind == K_IN && !P.is_const[i]) fill(in[i], P.positive[i]);
        GCR_REGION(ctx, "fuzz") { run(ctx, &P, in, rv); }
        ok = CHECK(gcr_ctx_status(ctx) == GCR_OK, "seed %llu region pass %d: %s", (unsigned long long)seed, pass,
                   gcr_ctx_error(ctx));
        uint64_t sc = gcr_scope_begin(ctx);
        run(ctx, &P, in, ref);
        for (int i = 0; i < P.n && ok; i++) {
            if (!is_out[i]) continue;
            int64_t n = gcr_tensor_numel(ref[i]);
            char what[96];
            snprintf(what, sizeof what, "seed %llu fusion %d region pass %d pool entry %d", (unsigned long long)seed,
                     fusion, pass, i);
            ok = same_values(rv[i], ref[i], n, P.dt, what);
        }
        gcr_scope_end(ctx, sc);
    }
    gcr_graph *rg = gcr_region_graph(ctx, "fuzz");
    gcr_graph_stats rst;
    if (ok && rg && gcr_graph_get_stats(rg, &rst) == GCR_OK)
        ok = CHECK(rst.replays == 2, "seed %llu: region replayed its one graph (%llu)", (unsigned long long)seed,
                   (unsigned long long)rst.replays);
    gcr_ctx_destroy(ctx);
    return ok;
}

static void test_fuzz(void)
{
    const char *en = getenv("GCR_FUZZ_N"), *es = getenv("GCR_FUZZ_SEED");
    int n = en ? atoi(en) : 600;
    uint64_t seed0 = es ? strtoull(es, NULL, 10) : 1;
    int failed = 0;
    n_chained = n_dw = n_cc = n_pair = 0;
    for (int i = 0; i < n && failed < 3; i++) {
        uint64_t seed = seed0 + (uint64_t)i;
        h_seed(seed);
        for (int fusion = 1; fusion >= 0; fusion--)
            if (!one_case(seed, fusion)) { failed++; break; }
    }
    /* seeds that once failed (cycles through contracted groups, f16 overflow) */
    static const uint64_t regress[] = {2227, 53160, 233585, 264133};
    for (int i = 0; i < (int)(sizeof regress / sizeof *regress) && !es; i++) {
        h_seed(regress[i]);
        for (int fusion = 1; fusion >= 0; fusion--)
            if (!one_case(regress[i], fusion)) { failed++; break; }
    }
    printf("fuzz: %d cases from seed %llu, %d failed, %d graphs with chains, %d with depthwise convs, %d with conv -> "
           "conv runs, %d with conv -> conv pairs in one kernel\n",
           n, (unsigned long long)seed0, failed, n_chained, n_dw, n_cc, n_pair);
    if (n >= 100) {
        /* the CPU executor takes every pair; CUDA only 16-bit channels-last ones of 8k channels */
        if (cu_dev == GCR_DEVICE_CPU) CHECK(n_pair >= n / 100, "only %d of %d cases fused a conv -> conv pair", n_pair, n);
        CHECK(n_chained >= n / 50, "only %d of %d cases chained kernels", n_chained, n);
        CHECK(n_dw >= n / 20 && n_cc >= n / 50, "only %d / %d of %d cases with depthwise convs / conv -> conv runs", n_dw,
              n_cc, n);
    }
}

static void all(void) { RUN(test_fuzz); }

int main(void)
{
    cu_each_device(all);
    return h_finish();
}
