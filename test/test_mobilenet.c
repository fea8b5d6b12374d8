/* test_mobilenet.c — MobileNet-v3 parity with PyTorch: samples/model.h on gcr against the logits
 * torchvision computed for the same weights and input (test/data/mnv3_*.safetensors, written by
 * tools/export_mobilenet.py). Eager and captured-replay, NCHW and NHWC, on the CPU and, where a
 * GPU is, on CUDA. Limits on max|got - ref| / max|ref|: f32 1e-4; f16 1e-2 with the same top-1. */
#include "harness.h"
#include "../samples/model.h"

#define GOLD_SMALL "test/data/mnv3_small_w050.safetensors" /* Small x0.5, 100 classes, [2,3,131,131] */
#define GOLD_LARGE "test/data/mnv3_large_w035.safetensors" /* Large x0.35, 10 classes, [1,3,97,97] */

typedef struct {
    gcr_weights *w;
    float *x, *logits; /* host copies: [N,3,H,W], [N,classes] */
    int64_t xs[4], n, classes;
} golden;

static int golden_load(gcr_ctx *ctx, const char *path, golden *g)
{
    memset(g, 0, sizeof *g);
    gcr_status s = gcr_weights_load(ctx, path, &g->w);
    if (!CHECK(s == GCR_OK, "loading %s: %s (run from the repository root)", path, gcr_ctx_error(ctx))) return -1;
    gcr_tensor *x = gcr_weights_get(g->w, "input"), *l = gcr_weights_get(g->w, "logits");
    if (!CHECK(x && l && gcr_tensor_ndim(x) == 4 && gcr_tensor_ndim(l) == 2, "%s holds input and logits", path))
        return -1;
    for (int i = 0; i < 4; i++) g->xs[i] = gcr_tensor_dim(x, i);
    g->n = g->xs[0];
    g->classes = gcr_tensor_dim(l, 1);
    g->x = h_read(x);
    g->logits = h_read(l);
    return 0;
}

static void golden_free(golden *g)
{
    free(g->x);
    free(g->logits);
    gcr_weights_free(g->w);
}

/* the input as an ordinary (non-constant) tensor of the model's dtype and layout */
static gcr_tensor *make_input(gcr_ctx *ctx, const golden *g, gcr_dtype dt, gcr_format fmt, const float *host)
{
    gcr_tensor *x = h_tensor(ctx, dt, 4, g->xs, fmt, host);
    CHECK(x && gcr_tensor_format(x) == fmt, "input in %s: %s", fmt == GCR_NHWC ? "nhwc" : "nchw", gcr_ctx_error(ctx));
    return x;
}

/* checks logits (any dtype) against ref; f16 also needs the same top-1 per image */
static void expect_parity(gcr_tensor *y, const float *ref, const golden *g, gcr_dtype dt, const char *what)
{
    if (!CHECK(y != NULL, "%s: forward returned NULL: %s", what, y ? "" : "see ctx")) return;
    CHECK(gcr_tensor_ndim(y) == 2 && gcr_tensor_dim(y, 0) == g->n && gcr_tensor_dim(y, 1) == g->classes,
          "%s: logits shape", what);
    float *got = h_read(y);
    double e = mnv3_rel_diff(got, ref, g->n * g->classes), tol = dt == GCR_F32 ? 1e-4 : 1e-2;
    CHECK(e <= tol, "%s: max rel err %.3g > %.0e", what, e, tol);
    if (dt != GCR_F32)
        for (int64_t b = 0; b < g->n; b++)
            CHECK(mnv3_argmax(got + b * g->classes, (int)g->classes) == mnv3_argmax(ref + b * g->classes, (int)g->classes),
                  "%s: top-1 of image %lld", what, (long long)b);
    free(got);
}

/* Eager forward, then the same forward in a region: first pass (capture) and several replays,
 * one of them on new input data (checked against eager on that data), all against PyTorch. */
static void parity(gcr_device dev, const char *path, mnv3_arch arch, double width, gcr_dtype dt, gcr_format fmt)
{
    gcr_ctx *ctx = h_ctx(dev);
    if (!ctx) return;
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s", gcr_ctx_device_name(ctx), path + 10, gcr_dtype_name(dt),
             fmt == GCR_NHWC ? "nhwc" : "nchw");
    printf("parity: %s\n", what); /* progress: GPU configurations compile for a while */
    fflush(stdout);
    golden g;
    static mnv3_model m;
    if (golden_load(ctx, path, &g) != 0) goto out;
    if (!CHECK(mnv3_init(ctx, &m, arch, width, 0, dt, fmt, g.w, 0) == 0, "%s: init: %s", what, m.err)) goto out;
    CHECK(m.classes == g.classes, "%s: classes from the file", what);
    gcr_tensor *x = make_input(ctx, &g, dt, fmt, g.x);

    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *y = mnv3_forward(ctx, &m, x);
    if (!y) CHECK(0, "%s: eager forward: %s", what, gcr_ctx_error(ctx));
    else expect_parity(y, g.logits, &g, dt, what);
    int eager_ops = m.ops;
    gcr_scope_end(ctx, sc);

    /* a second input: eager result on it is the reference for a replay after rebinding data */
    int64_t nx = g.xs[0] * g.xs[1] * g.xs[2] * g.xs[3];
    float *x2h = h_randn(nx, -2, 2), *ref2 = NULL;
    gcr_tensor *x2 = make_input(ctx, &g, dt, fmt, x2h);
    sc = gcr_scope_begin(ctx);
    gcr_tensor *y2 = mnv3_forward(ctx, &m, x2);
    if (CHECK(y2 != NULL, "%s: eager forward on new data: %s", what, gcr_ctx_error(ctx))) ref2 = h_read(y2);
    gcr_scope_end(ctx, sc);

    /* x2's bytes as the device holds them (any dtype), to write into x for passes 2 and 3 */
    size_t nb = gcr_tensor_nbytes(x);
    void *raw = malloc(nb);
    gcr_status s = gcr_tensor_to_host(x2, raw, nb);
    CHECK_OK(ctx, s);

    char rwhat[200];
    for (int pass = 0; pass < 4 && gcr_ctx_status(ctx) == GCR_OK; pass++) {
        gcr_tensor *logits = NULL;
        if (pass == 2) { /* new data in the same input tensor: the replay must read it */
            s = gcr_tensor_from_host(x, raw, nb);
            CHECK_OK(ctx, s);
        }
        GCR_REGION(ctx, "forward") { logits = mnv3_forward(ctx, &m, x); }
        snprintf(rwhat, sizeof rwhat, "%s region pass %d", what, pass);
        if (!CHECK(logits != NULL, "%s: %s", rwhat, gcr_ctx_error(ctx))) break;
        if (pass < 2) {
            expect_parity(logits, g.logits, &g, dt, rwhat);
        } else if (CHECK(ref2 != NULL, "%s: eager reference on new data", rwhat)) {
            float *got = h_read(logits);
            double e = mnv3_rel_diff(got, ref2, g.n * g.classes);
            CHECK(e <= (dt == GCR_F32 ? 1e-4 : 1e-2), "%s: replay on new data vs eager: rel err %.3g", rwhat, e);
            free(got);
        }
    }
    free(raw);
    gcr_graph *gr = gcr_region_graph(ctx, "forward");
    gcr_graph_stats st;
    memset(&st, 0, sizeof st);
    if (CHECK(gr && gcr_graph_get_stats(gr, &st) == GCR_OK, "%s: region graph and stats", what))
        CHECK(st.kernels > 0 && st.kernels <= eager_ops && st.replays >= 1,
              "%s: %d kernels per replay (eager %d), %llu replays", what, st.kernels, eager_ops,
              (unsigned long long)st.replays);
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "%s: no error left: %s", what, gcr_ctx_error(ctx));
    free(x2h);
    free(ref2);
    mnv3_free(&m);
out:
    golden_free(&g);
    gcr_ctx_destroy(ctx);
}

static void test_cpu_small(void)
{
    parity(GCR_DEVICE_CPU, GOLD_SMALL, MNV3_SMALL, 0.5, GCR_F32, GCR_NCHW);
    parity(GCR_DEVICE_CPU, GOLD_SMALL, MNV3_SMALL, 0.5, GCR_F32, GCR_NHWC);
}
static void test_cpu_large(void)
{
    parity(GCR_DEVICE_CPU, GOLD_LARGE, MNV3_LARGE, 0.35, GCR_F32, GCR_NCHW);
    parity(GCR_DEVICE_CPU, GOLD_LARGE, MNV3_LARGE, 0.35, GCR_F32, GCR_NHWC);
}
static void test_cpu_f16(void) { parity(GCR_DEVICE_CPU, GOLD_SMALL, MNV3_SMALL, 0.5, GCR_F16, GCR_NCHW); }

/* Each (model, dtype, layout) compiles its own kernels (NVRTC, seconds each when the disk cache is
 * cold), so the GPU runs four configurations that still cover both models, dtypes and layouts. */
static void test_gpu(void)
{
    gcr_ctx *probe = h_ctx(GCR_DEVICE_CUDA); /* prints one skip line without a GPU */
    if (!probe) return;
    gcr_ctx_destroy(probe);
    parity(GCR_DEVICE_CUDA, GOLD_SMALL, MNV3_SMALL, 0.5, GCR_F32, GCR_NCHW);
    parity(GCR_DEVICE_CUDA, GOLD_SMALL, MNV3_SMALL, 0.5, GCR_F16, GCR_NHWC);
    parity(GCR_DEVICE_CUDA, GOLD_LARGE, MNV3_LARGE, 0.35, GCR_F32, GCR_NHWC);
    parity(GCR_DEVICE_CUDA, GOLD_LARGE, MNV3_LARGE, 0.35, GCR_F16, GCR_NCHW);
}

/* the parity checks can fail: other weights give other logits; a file of the wrong width is
 * refused naming the tensor */
static void test_sensitivity(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    golden g;
    static mnv3_model m;
    if (golden_load(ctx, GOLD_SMALL, &g) != 0) goto out;
    CHECK(mnv3_init(ctx, &m, MNV3_SMALL, 0.5, (int)g.classes, GCR_F32, GCR_NCHW, NULL, 5) == 0, "random init: %s",
          m.err);
    gcr_tensor *x = make_input(ctx, &g, GCR_F32, GCR_NCHW, g.x);
    gcr_tensor *y = mnv3_forward(ctx, &m, x);
    if (CHECK(y != NULL, "random-init forward: %s", gcr_ctx_error(ctx))) {
        float *got = h_read(y);
        double e = mnv3_rel_diff(got, g.logits, g.n * g.classes);
        CHECK(e > 1e-2, "random weights must not match PyTorch's logits (rel err %.3g)", e);
        int finite = 1;
        for (int64_t i = 0; i < g.n * g.classes; i++) finite &= isfinite(got[i]);
        CHECK(finite, "random-init logits finite");
        free(got);
    }
    mnv3_free(&m);
    CHECK(mnv3_init(ctx, &m, MNV3_SMALL, 0.75, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "width 0.75 vs a 0.5 file refused");
    CHECK(strstr(m.err, "features.0.0.weight") != NULL, "message names the tensor: %s", m.err);
    CHECK(mnv3_init(ctx, &m, MNV3_LARGE, 0.5, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "Large vs a Small file refused");
    /* make_divisible as torchvision: 16*0.5 → 8, 72*0.35 → 24 (25.2 rounds to 24), 3 → 8 (minimum) */
    CHECK(mnv3_make_divisible(8.0, 8) == 8 && mnv3_make_divisible(25.2, 8) == 24 && mnv3_make_divisible(3, 8) == 8 &&
              mnv3_make_divisible(1280 * 0.35, 8) == 448 && mnv3_make_divisible(20, 8) == 24,
          "make_divisible");
out:
    golden_free(&g);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_sensitivity);
    RUN(test_cpu_small);
    RUN(test_cpu_large);
    RUN(test_cpu_f16);
    RUN(test_gpu);
    return h_finish();
}
