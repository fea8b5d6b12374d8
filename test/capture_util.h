/* capture_util.h — shared by the capture/fusion/replay tests: run a model function eagerly and
 * as a captured graph over many iterations with fresh input data, and compare. A model builds
 * its outputs from its inputs with public ops only; the same function serves both modes. */
#ifndef GCR_TEST_CAPTURE_UTIL_H
#define GCR_TEST_CAPTURE_UTIL_H

#include "harness.h"

#define CU_MAX 8

/* CHECK_OK evaluates its expression twice (once for the message); OK evaluates it once */
#define OK(ctx, expr)                                                                              \
    do {                                                                                           \
        gcr_status ok_s_ = (expr);                                                                 \
        CHECK(ok_s_ == GCR_OK, "%s: %s: %s", #expr, gcr_status_name(ok_s_), gcr_ctx_error(ctx));   \
    } while (0)

/* device the tests of one pass run on (cu_each_device runs them on each device present) */
static gcr_device cu_dev = GCR_DEVICE_CPU;

static __attribute__((unused)) void cu_each_device(void (*all)(void))
{
    gcr_device devs[2] = {GCR_DEVICE_CPU, GCR_DEVICE_CUDA};
    for (int d = 0; d < 2; d++) {
        gcr_ctx_opts o = gcr_ctx_opts_default();
        o.device = devs[d];
        gcr_ctx *probe = NULL;
        if (gcr_ctx_create(&probe, &o) != GCR_OK) {
            h_case = "devices";
            if (devs[d] == GCR_DEVICE_CUDA) h_skip_gpu("no CUDA device");
            else CHECK(0, "no CPU context");
            continue;
        }
        gcr_ctx_destroy(probe);
        cu_dev = devs[d];
        all();
    }
}

/* a context on cu_dev with the guard/variant knobs the replay and region tests vary */
static __attribute__((unused)) gcr_ctx *cu_ctx(int retrace, int cache, int guards)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.retrace = retrace;
    o.knobs.graph_cache = cache;
    o.knobs.guards = guards;
    gcr_ctx *ctx = NULL;
    CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx");
    return ctx;
}

typedef struct cu_input {
    int ndim;
    int64_t shape[GCR_MAX_DIMS];
    int is_const; /* weights: marked constant, filled once */
    int permute;  /* pass a permuted (non-contiguous) view: dims 0 and last swapped */
    int positive; /* values in [0.5, 2.5) (variances) */
} cu_input;

typedef int (*cu_model)(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out); /* returns #outputs */

static __attribute__((unused)) int64_t cu_numel(const cu_input *d)
{
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
    return n;
}

/* random host values for an input: [0.5, 2.5) when positive (variances), else [-2, 2); caller frees */
static __attribute__((unused)) float *cu_rand(int64_t n, int positive)
{
    return positive ? h_randn(n, 0.5f, 2.5f) : h_randn(n, -2.0f, 2.0f);
}

/* Makes input d on ctx holding the host values h (for a permuted input: the base's values); a
 * permuted input is a view of a dense base tensor, returned in *base. */
static __attribute__((unused)) gcr_tensor *cu_make_from(gcr_ctx *ctx, const cu_input *d, gcr_dtype dt, gcr_format fmt,
                                                        const float *h, gcr_tensor **base)
{
    gcr_format f = d->ndim == 4 ? fmt : GCR_NCHW;
    gcr_tensor *t;
    *base = NULL;
    if (d->permute && d->ndim >= 2) {
        int64_t sh[GCR_MAX_DIMS];
        int perm[GCR_MAX_DIMS];
        for (int i = 0; i < d->ndim; i++) { sh[i] = d->shape[i]; perm[i] = i; }
        sh[0] = d->shape[d->ndim - 1];
        sh[d->ndim - 1] = d->shape[0];
        perm[0] = d->ndim - 1;
        perm[d->ndim - 1] = 0;
        *base = gcr_tensor_keep(h_tensor(ctx, dt, d->ndim, sh, f, h));
        t = gcr_tensor_keep(gcr_permute(ctx, *base, perm));
    } else {
        t = gcr_tensor_keep(h_tensor(ctx, dt, d->ndim, d->shape, f, h));
    }
    if (t && d->is_const) gcr_tensor_set_const(t);
    return t;
}

/* Makes input i (fresh random data); a permuted input is a view of a dense base tensor. */
static __attribute__((unused)) gcr_tensor *cu_make(gcr_ctx *ctx, const cu_input *d, gcr_dtype dt, gcr_format fmt,
                                                   gcr_tensor **base)
{
    float *h = cu_rand(cu_numel(d), d->positive);
    gcr_tensor *t = cu_make_from(ctx, d, dt, fmt, h, base);
    free(h);
    return t;
}

/* Writes the f32 host values h (logical order) into t, whatever its dtype and layout. */
static __attribute__((unused)) void cu_fill(gcr_tensor *t, const float *h)
{
    gcr_ctx *ctx = gcr_tensor_ctx(t);
    int64_t n = gcr_tensor_numel(t);
    if (gcr_tensor_dtype(t) == GCR_F32) {
        OK(ctx, gcr_tensor_from_host(t, h, (size_t)n * 4));
        return;
    }
    int64_t sh[GCR_MAX_DIMS];
    for (int i = 0; i < gcr_tensor_ndim(t); i++) sh[i] = gcr_tensor_dim(t, i);
    gcr_tensor *f = gcr_tensor_from_data(ctx, GCR_F32, gcr_tensor_ndim(t), sh, GCR_NCHW, h);
    gcr_tensor *c = gcr_cast(ctx, f, gcr_tensor_dtype(t));
    size_t bytes = gcr_tensor_nbytes(c);
    void *tmp = malloc(bytes);
    OK(ctx, gcr_tensor_to_host(c, tmp, bytes));
    OK(ctx, gcr_tensor_from_host(t, tmp, bytes));
    free(tmp);
    gcr_tensor_free(f);
    gcr_tensor_free(c);
}

/* Writes fresh data into t (whatever its layout). */
static __attribute__((unused)) void cu_refill(gcr_tensor *t, int positive)
{
    float *h = cu_rand(gcr_tensor_numel(t), positive);
    cu_fill(t, h);
    free(h);
}

static __attribute__((unused)) float cu_tol(gcr_dtype dt) { return dt == GCR_F32 ? 1e-4f : 2e-2f; }

/* Captures model over inputs, then for iters iterations refills the non-constant inputs,
 * replays, and compares every output with the eager run. Returns the graph (caller destroys)
 * or NULL; *n_out gets the output count. */
static __attribute__((unused)) gcr_graph *cu_check(gcr_ctx *ctx, cu_model model, const cu_input *ins, int n_in,
                                                   gcr_dtype dt, gcr_format fmt, int iters, float tol,
                                                   gcr_tensor **in)
{
    gcr_tensor *base[CU_MAX];
    for (int i = 0; i < n_in; i++) in[i] = cu_make(ctx, &ins[i], dt, fmt, &base[i]);
    gcr_tensor *out[CU_MAX], *ref[CU_MAX];
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    int n_out = model(ctx, in, out);
    OK(ctx, gcr_capture_end(ctx, &g));
    if (!g) return NULL;
    for (int it = 0; it <= iters; it++) {
        if (it > 0) {
            for (int i = 0; i < n_in; i++)
                if (!ins[i].is_const) cu_refill(base[i] ? base[i] : in[i], ins[i].positive);
            OK(ctx, gcr_graph_replay(g));
        }
        uint64_t sc = gcr_scope_begin(ctx);
        int nr = model(ctx, in, ref);
        CHECK(nr == n_out, "eager model gave %d outputs, capture %d", nr, n_out);
        for (int o = 0; o < n_out && o < nr; o++) {
            CHECK(gcr_tensor_numel(out[o]) == gcr_tensor_numel(ref[o]), "output %d: numel %lld vs %lld", o,
                  (long long)gcr_tensor_numel(out[o]), (long long)gcr_tensor_numel(ref[o]));
            float *a = h_read(out[o]), *b = h_read(ref[o]);
            char what[64];
            snprintf(what, sizeof what, "output %d iteration %d", o, it);
            if (!CHECK_CLOSE(a, b, gcr_tensor_numel(ref[o]), tol, tol, what)) {
                size_t n = gcr_graph_describe(g, NULL, 0);
                char *s = malloc(n);
                gcr_graph_describe(g, s, n);
                fprintf(stderr, "%s", s);
                free(s);
                it = iters; /* one report is enough */
            }
            free(a);
            free(b);
        }
        gcr_scope_end(ctx, sc);
    }
    return g;
}

static __attribute__((unused)) int cu_kernels(const gcr_graph *g)
{
    gcr_graph_stats st;
    if (!g || gcr_graph_get_stats(g, &st) != GCR_OK) return -1;
    return st.kernels;
}

/* the variants (input signatures) g has built, or -1 */
static __attribute__((unused)) int cu_variants(const gcr_graph *g)
{
    gcr_graph_stats st;
    if (!g || gcr_graph_get_stats(g, &st) != GCR_OK) return -1;
    return st.variants;
}

#endif
