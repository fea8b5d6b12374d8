/* test_matmul.c — matmul (NumPy semantics: batch broadcast, 1-d operands) and linear (2-d, 3-d
 * and 1-d inputs, optional bias) on the CPU against double-precision references, with dense,
 * transposed (permuted) and sliced operands, f32/f16/bf16, GEMM block edges; plus shape errors. */
#include "harness.h"

enum { L_DENSE, L_PERM, L_SLICE, L_COUNT };
static const char *lname[] = {"dense", "permuted", "sliced"};

/* a tensor holding host (logical row-major) in layout l: L_PERM is a reversed-shape base viewed
 * back through gcr_permute; L_SLICE takes every other element of a base twice as wide in the
 * last dim (gcr_slice step 2) */
static gcr_tensor *make(gcr_ctx *ctx, gcr_dtype dt, int nd, const int64_t *s, int l, const float *host)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    if (l == L_DENSE || nd == 0 || (l == L_PERM && nd < 2)) return h_tensor(ctx, dt, nd, s, GCR_NCHW, host);
    int64_t bs[GCR_MAX_DIMS], bst[GCR_MAX_DIMS], bn = 1;
    for (int d = 0; d < nd; d++) bs[d] = l == L_PERM ? s[nd - 1 - d] : d == nd - 1 ? 2 * s[d] : s[d];
    for (int d = nd - 1; d >= 0; d--) {
        bst[d] = bn;
        bn *= bs[d];
    }
    float *b = malloc((size_t)bn * sizeof *b);
    for (int64_t i = 0; i < bn; i++) b[i] = 1e3f; /* poison: a correct kernel never reads it */
    for (int64_t li = 0; li < n; li++) {
        int64_t rem = li, off = 0;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t i = rem % s[d];
            rem /= s[d];
            off += l == L_PERM ? i * bst[nd - 1 - d] : d == nd - 1 ? 2 * i * bst[d] : i * bst[d];
        }
        b[off] = host[li];
    }
    gcr_tensor *base = h_tensor(ctx, dt, nd, bs, GCR_NCHW, b);
    free(b);
    gcr_tensor *v;
    if (l == L_PERM) {
        int perm[GCR_MAX_DIMS];
        for (int d = 0; d < nd; d++) perm[d] = nd - 1 - d;
        v = gcr_permute(ctx, base, perm);
    } else {
        v = gcr_slice(ctx, base, nd - 1, 0, 2 * s[nd - 1], 2);
    }
    gcr_tensor_free(base);
    return v;
}

static int64_t numel(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

/* NumPy matmul reference on row-major host data; writes the result shape to os/ond */
static float *ref_matmul(const float *a, int an, const int64_t *as, const float *b, int bn, const int64_t *bs, int64_t *os, int *ond)
{
    int64_t A[GCR_MAX_DIMS], B[GCR_MAX_DIMS];
    int na = an, nb = bn;
    if (an == 1) { A[0] = 1; A[1] = as[0]; na = 2; } else memcpy(A, as, (size_t)an * 8);
    if (bn == 1) { B[0] = bs[0]; B[1] = 1; nb = 2; } else memcpy(B, bs, (size_t)bn * 8);
    int nd = na > nb ? na : nb;
    int64_t O[GCR_MAX_DIMS], M = A[na - 2], K = A[na - 1], N = B[nb - 1];
    for (int d = 0; d < nd - 2; d++) {
        int da = d - (nd - na), db = d - (nd - nb);
        int64_t sa = da >= 0 ? A[da] : 1, sb = db >= 0 ? B[db] : 1;
        O[d] = sa == 1 ? sb : sa;
    }
    O[nd - 2] = M;
    O[nd - 1] = N;
    int64_t nbatch = numel(nd - 2, O);
    float *out = malloc((size_t)(nbatch * M * N > 0 ? nbatch * M * N : 1) * sizeof *out);
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t rem = bi, oa = 0, ob = 0, ma = 1, mb = 1;
        for (int d = nd - 3; d >= 0; d--) {
            int64_t i = rem % O[d];
            rem /= O[d];
            int da = d - (nd - na), db = d - (nd - nb);
            if (da >= 0) { oa += (A[da] == 1 ? 0 : i) * ma; ma *= A[da]; }
            if (db >= 0) { ob += (B[db] == 1 ? 0 : i) * mb; mb *= B[db]; }
        }
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)a[oa * M * K + m * K + k] * b[ob * K * N + k * N + n];
                out[(bi * M + m) * N + n] = (float)s;
            }
    }
    *ond = 0;
    for (int d = 0; d < nd; d++) {
        if (an == 1 && d == nd - 2) continue;
        if (bn == 1 && d == nd - 1) continue;
        os[(*ond)++] = O[d];
    }
    return out;
}

typedef struct mm_case {
    int an, bn;
    int64_t as[4], bs[4];
} mm_case;

static const mm_case mm_cases[] = {
    {2, 2, {5, 7}, {7, 3}},
    {2, 2, {70, 300}, {300, 40}},      /* two K blocks, M not a multiple of 6 */
    {2, 2, {1, 33}, {33, 2100}},       /* N beyond one N block */
    {4, 3, {2, 1, 5, 7}, {3, 7, 4}},   /* batch broadcast both ways */
    {3, 2, {3, 5, 7}, {7, 4}},         /* shared b: one tall GEMM */
    {4, 2, {2, 3, 1, 7}, {7, 6}},      /* shared b with M 1 */
    {2, 3, {5, 7}, {3, 7, 4}},         /* broadcast a */
    {1, 1, {7}, {7}},                  /* dot product -> 0-d */
    {1, 3, {7}, {2, 7, 3}},            /* row vector */
    {3, 1, {2, 5, 7}, {7}},            /* column vector */
    {3, 3, {1, 4, 9}, {2, 9, 1}},      /* N 1 */
};

static void run_mm(gcr_ctx *ctx, const mm_case *c, gcr_dtype dt, int la, int lb, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "matmul case a%dd[%lld..] b%dd %s a:%s b:%s seed %llu", c->an, (long long)c->as[0], c->bn,
             gcr_dtype_name(dt), lname[la], lname[lb], (unsigned long long)seed);
    h_seed(seed);
    int64_t na = numel(c->an, c->as), nb = numel(c->bn, c->bs);
    float *ha = h_randn(na, -1, 1), *hb = h_randn(nb, -1, 1);
    gcr_tensor *a = make(ctx, dt, c->an, c->as, la, ha), *b = make(ctx, dt, c->bn, c->bs, lb, hb);
    gcr_tensor *y = gcr_matmul(ctx, a, b);
    if (CHECK(y != NULL, "%s: %s", what, gcr_ctx_error(ctx))) {
        float *ra = h_read(a), *rb = h_read(b), *got = h_read(y);
        int64_t os[GCR_MAX_DIMS];
        int ond;
        float *ref = ref_matmul(ra, c->an, c->as, rb, c->bn, c->bs, os, &ond);
        int shape_ok = gcr_tensor_ndim(y) == ond;
        for (int d = 0; shape_ok && d < ond; d++) shape_ok = gcr_tensor_dim(y, d) == os[d];
        if (CHECK(shape_ok, "%s: result rank %d, want %d", what, gcr_tensor_ndim(y), ond)) {
            float tol = dt == GCR_F32 ? 1e-4f : 1e-2f;
            CHECK_CLOSE(got, ref, numel(ond, os), tol, tol, what);
        }
        free(ra);
        free(rb);
        free(got);
        free(ref);
        gcr_tensor_free(y);
    } else {
        gcr_ctx_clear_error(ctx);
    }
    gcr_tensor_free(a);
    gcr_tensor_free(b);
    free(ha);
    free(hb);
}

static void test_matmul(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof mm_cases / sizeof *mm_cases; i++) {
        for (int la = 0; la < L_COUNT; la++)
            for (int lb = 0; lb < L_COUNT; lb++) run_mm(ctx, &mm_cases[i], GCR_F32, la, lb, 100 + i * 9 + la * 3 + lb);
        run_mm(ctx, &mm_cases[i], GCR_F16, L_DENSE, L_PERM, 7 + i);
        run_mm(ctx, &mm_cases[i], GCR_BF16, L_SLICE, L_DENSE, 11 + i);
    }
    gcr_ctx_destroy(ctx);
}

typedef struct lin_case {
    int xn;
    int64_t xs[3];
    int64_t N;
    int bias;
} lin_case;

static const lin_case lin_cases[] = {
    {2, {5, 7}, 4, 1},
    {3, {2, 3, 7}, 6, 0},
    {3, {3, 4, 9}, 5, 1},
    {1, {7}, 3, 1},
    {2, {9, 300}, 37, 1}, /* K over one block */
    {3, {2, 1, 33}, 1, 1},
};

static void run_lin(gcr_ctx *ctx, const lin_case *c, gcr_dtype dt, int lx, int lw, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "linear x%dd[..%lld] N%lld bias %d %s x:%s w:%s seed %llu", c->xn, (long long)c->xs[c->xn - 1],
             (long long)c->N, c->bias, gcr_dtype_name(dt), lname[lx], lname[lw], (unsigned long long)seed);
    h_seed(seed);
    int64_t K = c->xs[c->xn - 1], ws[2] = {c->N, K}, nx = numel(c->xn, c->xs), R = nx / K;
    float *hx = h_randn(nx, -1, 1), *hw = h_randn(c->N * K, -1, 1), *hb = h_randn(c->N, -1, 1);
    gcr_tensor *x = make(ctx, dt, c->xn, c->xs, lx, hx), *w = make(ctx, dt, 2, ws, lw, hw);
    gcr_tensor *b = c->bias ? make(ctx, dt, 1, &c->N, lw == L_SLICE ? L_SLICE : L_DENSE, hb) : NULL;
    gcr_tensor *y = gcr_linear(ctx, x, w, b);
    if (CHECK(y != NULL, "%s: %s", what, gcr_ctx_error(ctx))) {
        int shape_ok = gcr_tensor_ndim(y) == c->xn && gcr_tensor_dim(y, -1) == c->N;
        for (int d = 0; d < c->xn - 1; d++) shape_ok = shape_ok && gcr_tensor_dim(y, d) == c->xs[d];
        CHECK(shape_ok, "%s: shape", what);
        float *rx = h_read(x), *rw = h_read(w), *rb = b ? h_read(b) : NULL, *got = h_read(y);
        float *ref = malloc((size_t)(R * c->N) * sizeof *ref);
        for (int64_t r = 0; r < R; r++)
            for (int64_t n = 0; n < c->N; n++) {
                double s = rb ? rb[n] : 0.0;
                for (int64_t k = 0; k < K; k++) s += (double)rx[r * K + k] * rw[n * K + k];
                ref[r * c->N + n] = (float)s;
            }
        float tol = dt == GCR_F32 ? 1e-4f : 1e-2f;
        CHECK_CLOSE(got, ref, R * c->N, tol, tol, what);
        free(rx);
        free(rw);
        free(rb);
        free(got);
        free(ref);
        gcr_tensor_free(y);
    } else {
        gcr_ctx_clear_error(ctx);
    }
    gcr_tensor_free(x);
    gcr_tensor_free(w);
    gcr_tensor_free(b);
    free(hx);
    free(hw);
    free(hb);
}

static void test_linear(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    for (size_t i = 0; i < sizeof lin_cases / sizeof *lin_cases; i++) {
        for (int lx = 0; lx < L_COUNT; lx++)
            for (int lw = 0; lw < L_COUNT; lw++) run_lin(ctx, &lin_cases[i], GCR_F32, lx, lw, 500 + i * 9 + lx * 3 + lw);
        run_lin(ctx, &lin_cases[i], GCR_F16, L_PERM, L_DENSE, 3 + i);
        run_lin(ctx, &lin_cases[i], GCR_BF16, L_DENSE, L_SLICE, 5 + i);
    }
    gcr_ctx_destroy(ctx);
}

/* GEMM block and register-tile edges: every M, N, K around MR 6, NR 16, KC 256 and the
 * matrix-vector paths (M or N <= 2), with a plain and a transposed b, and K 0 (result 0) */
static void test_gemm_edges(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    static const int64_t Ms[] = {1, 2, 3, 6, 7, 13}, Ns[] = {1, 2, 15, 16, 17, 33}, Ks[] = {0, 1, 5, 256, 257};
    int n = 0;
    for (size_t i = 0; i < sizeof Ms / sizeof *Ms; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof *Ns; j++)
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++, n++) {
                mm_case c = {2, 2, {Ms[i], Ks[k]}, {Ks[k], Ns[j]}};
                run_mm(ctx, &c, GCR_F32, n % 3 == 2 ? L_PERM : L_DENSE, n % 2 ? L_PERM : L_DENSE, 900 + n);
            }
    /* linear with K 0 is its bias */
    int64_t xs[2] = {3, 0}, ws[2] = {4, 0}, bs[1] = {4};
    float hb[4] = {0.5f, -1.0f, 2.0f, 3.0f}, dummy[1] = {0}, got[12];
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, xs, GCR_NCHW, dummy);
    gcr_tensor *w = gcr_tensor_from_data(ctx, GCR_F32, 2, ws, GCR_NCHW, dummy);
    gcr_tensor *b = gcr_tensor_from_data(ctx, GCR_F32, 1, bs, GCR_NCHW, hb);
    gcr_tensor *y = gcr_linear(ctx, x, w, b);
    if (CHECK(y != NULL, "linear K 0: %s", gcr_ctx_error(ctx)) && CHECK_OK(ctx, gcr_tensor_to_host(y, got, sizeof got)))
        CHECK(got[0] == 0.5f && got[5] == -1.0f && got[11] == 3.0f, "linear K 0 gives the bias: %g %g %g", got[0], got[5], got[11]);
    gcr_ctx_destroy(ctx);
}

static void test_errors(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    gcr_tensor *a = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){3, 4}, GCR_NCHW);
    gcr_tensor *b = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){5, 2}, GCR_NCHW);
    gcr_tensor *c = gcr_tensor_new(ctx, GCR_F32, 3, (int64_t[]){2, 4, 2}, GCR_NCHW);
    gcr_tensor *d = gcr_tensor_new(ctx, GCR_F32, 3, (int64_t[]){3, 3, 4}, GCR_NCHW);
    gcr_tensor *h = gcr_tensor_new(ctx, GCR_F16, 2, (int64_t[]){4, 2}, GCR_NCHW);
    CHECK(gcr_matmul(ctx, a, b) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "K mismatch rejected");
    CHECK(strstr(gcr_ctx_error(ctx), "matmul") != NULL, "message names the op: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_matmul(ctx, d, c) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "batch 3 vs 2 rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_matmul(ctx, a, h) == NULL && gcr_ctx_status(ctx) == GCR_ERR_DTYPE, "f32 @ f16 rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_linear(ctx, a, b, NULL) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "linear K mismatch rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_linear(ctx, a, a, b) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "linear bias shape rejected");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_matmul(ctx, NULL, a) == NULL && gcr_ctx_status(ctx) == GCR_ERR_INVALID, "NULL operand");
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_matmul);
    RUN(test_linear);
    RUN(test_gemm_edges);
    RUN(test_errors);
    return h_finish();
}
