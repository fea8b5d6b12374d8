/* test_resnet.c — ResNet parity with PyTorch: samples/resnet.h on gcr against the logits torchvision
 * computed for the same weights and input (test/data/resnet50_w8.safetensors: ResNet-50's layers
 * 3,4,6,3 at base width 8, 10 classes, input [2,3,64,64], written by tools/export_resnet.py). Eager
 * and captured replay, f32 and f16, NCHW and NHWC, on the CPU and, where a GPU is, on CUDA. Limits on
 * max|got - ref| / max|ref|: f32 1e-4; f16 within PyTorch's own f16 error (4x its f16-vs-f32 error
 * from the file's logits_f16, at least 2e-3; 1e-2 when the file has none) with the same top-1. A
 * missing golden fails the test, naming the command that makes it. */
#include "harness.h"
#include "../samples/resnet.h"
#include <unistd.h>

#define GOLD "test/data/resnet50_w8.safetensors"
#define GOLD_WIDTH 8
static const int gold_layers[4] = {3, 4, 6, 3};

typedef struct {
    gcr_weights *w;
    float *x, *logits; /* host copies: [N,3,H,W], [N,classes] */
    double f16_tol;    /* what f16 logits may differ from f32 PyTorch's */
    int64_t xs[4], n, classes;
} golden;

static int golden_load(gcr_ctx *ctx, golden *g)
{
    memset(g, 0, sizeof *g);
    if (!CHECK(access(GOLD, R_OK) == 0,
               "%s is missing: it is made on a machine with PyTorch by `python3 tools/export_resnet.py --f16 "
               "--device cuda --out %s` (tools/README.md); run the test from the repository root",
               GOLD, GOLD))
        return -1;
    gcr_status s = gcr_weights_load(ctx, GOLD, &g->w);
    if (!CHECK(s == GCR_OK, "loading %s: %s", GOLD, gcr_ctx_error(ctx))) return -1;
    gcr_tensor *x = gcr_weights_get(g->w, "input"), *l = gcr_weights_get(g->w, "logits");
    if (!CHECK(x && l && gcr_tensor_ndim(x) == 4 && gcr_tensor_ndim(l) == 2, "%s holds input and logits", GOLD))
        return -1;
    for (int i = 0; i < 4; i++) g->xs[i] = gcr_tensor_dim(x, i);
    g->n = g->xs[0];
    g->classes = gcr_tensor_dim(l, 1);
    g->x = h_read(x);
    g->logits = h_read(l);
    g->f16_tol = 1e-2;
    gcr_tensor *l16 = gcr_weights_get(g->w, "logits_f16");
    if (l16 && gcr_tensor_ndim(l16) == 2 && gcr_tensor_numel(l16) == g->n * g->classes) {
        float *h = h_read(l16);
        double e = smp_rel_diff(h, g->logits, g->n * g->classes);
        free(h);
        g->f16_tol = 4 * e > 2e-3 ? 4 * e : 2e-3;
        printf("PyTorch's own f16 error %.3g: gcr f16 limit %.3g\n", e, g->f16_tol);
    }
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

/* checks logits (any dtype) against PyTorch's f32 logits; f16 also needs the same top-1 per image */
static void expect_parity(gcr_tensor *y, const golden *g, gcr_dtype dt, const char *what)
{
    if (!CHECK(y != NULL, "%s: forward returned NULL", what)) return;
    CHECK(gcr_tensor_ndim(y) == 2 && gcr_tensor_dim(y, 0) == g->n && gcr_tensor_dim(y, 1) == g->classes,
          "%s: logits shape", what);
    float *got = h_read(y);
    double e = smp_rel_diff(got, g->logits, g->n * g->classes), tol = dt == GCR_F32 ? 1e-4 : g->f16_tol;
    CHECK(e <= tol, "%s: max rel err %.3g > %.3g", what, e, tol);
    if (dt != GCR_F32)
        for (int64_t b = 0; b < g->n; b++)
            CHECK(smp_argmax(got + b * g->classes, (int)g->classes) ==
                      smp_argmax(g->logits + b * g->classes, (int)g->classes),
                  "%s: top-1 of image %lld", what, (long long)b);
    free(got);
}

/* Eager forward, then the same forward in a region: first pass (capture) and several replays,
 * one of them on new input data (checked against eager on that data), all against PyTorch. */
static void parity(gcr_device dev, gcr_dtype dt, gcr_format fmt)
{
    gcr_ctx *ctx = h_ctx(dev);
    if (!ctx) return;
    char what[160];
    snprintf(what, sizeof what, "%s resnet50_w8 %s %s", gcr_ctx_device_name(ctx), gcr_dtype_name(dt),
             fmt == GCR_NHWC ? "nhwc" : "nchw");
    printf("parity: %s\n", what); /* progress: GPU configurations compile for a while */
    fflush(stdout);
    golden g;
    static rn_model m;
    if (golden_load(ctx, &g) != 0) goto out;
    if (!CHECK(rn_init(ctx, &m, GOLD_WIDTH, gold_layers, 0, dt, fmt, g.w, 0) == 0, "%s: init: %s", what, m.err))
        goto out;
    CHECK(m.classes == g.classes, "%s: classes from the file", what);
    gcr_tensor *x = make_input(ctx, &g, dt, fmt, g.x);

    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *y = rn_forward(ctx, &m, x);
    if (!y) CHECK(0, "%s: eager forward: %s", what, gcr_ctx_error(ctx));
    else expect_parity(y, &g, dt, what);
    int eager_ops = m.ops;
    gcr_scope_end(ctx, sc);

    /* a second input: eager result on it is the reference for a replay after rebinding data */
    int64_t nx = g.xs[0] * g.xs[1] * g.xs[2] * g.xs[3];
    float *x2h = h_randn(nx, -2, 2), *ref2 = NULL;
    gcr_tensor *x2 = make_input(ctx, &g, dt, fmt, x2h);
    sc = gcr_scope_begin(ctx);
    gcr_tensor *y2 = rn_forward(ctx, &m, x2);
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
        GCR_REGION(ctx, "forward") { logits = rn_forward(ctx, &m, x); }
        snprintf(rwhat, sizeof rwhat, "%s region pass %d", what, pass);
        if (!CHECK(logits != NULL, "%s: %s", rwhat, gcr_ctx_error(ctx))) break;
        if (pass < 2) {
            expect_parity(logits, &g, dt, rwhat);
        } else if (CHECK(ref2 != NULL, "%s: eager reference on new data", rwhat)) {
            float *got = h_read(logits);
            double e = smp_rel_diff(got, ref2, g.n * g.classes);
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
    rn_free(&m);
out:
    golden_free(&g);
    gcr_ctx_destroy(ctx);
}

static void test_cpu_f32(void)
{
    parity(GCR_DEVICE_CPU, GCR_F32, GCR_NCHW);
    parity(GCR_DEVICE_CPU, GCR_F32, GCR_NHWC);
}
static void test_cpu_f16(void)
{
    parity(GCR_DEVICE_CPU, GCR_F16, GCR_NCHW);
    parity(GCR_DEVICE_CPU, GCR_F16, GCR_NHWC);
}

/* every (dtype, layout) compiles its own kernels (NVRTC, seconds each with a cold disk cache) */
static void test_gpu(void)
{
    gcr_ctx *probe = h_ctx(GCR_DEVICE_CUDA); /* prints one skip line without a GPU */
    if (!probe) return;
    gcr_ctx_destroy(probe);
    parity(GCR_DEVICE_CUDA, GCR_F32, GCR_NCHW);
    parity(GCR_DEVICE_CUDA, GCR_F32, GCR_NHWC);
    parity(GCR_DEVICE_CUDA, GCR_F16, GCR_NHWC);
    parity(GCR_DEVICE_CUDA, GCR_F16, GCR_NCHW);
}

/* the parity checks can fail: other weights give other logits; a file of another width or depth
 * is refused naming the tensor */
static void test_sensitivity(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    golden g;
    static rn_model m;
    if (golden_load(ctx, &g) != 0) goto out;
    CHECK(rn_init(ctx, &m, GOLD_WIDTH, gold_layers, (int)g.classes, GCR_F32, GCR_NCHW, NULL, 5) == 0,
          "random init: %s", m.err);
    gcr_tensor *x = make_input(ctx, &g, GCR_F32, GCR_NCHW, g.x);
    gcr_tensor *y = rn_forward(ctx, &m, x);
    if (CHECK(y != NULL, "random-init forward: %s", gcr_ctx_error(ctx))) {
        float *got = h_read(y);
        double e = smp_rel_diff(got, g.logits, g.n * g.classes);
        CHECK(e > 1e-2, "random weights must not match PyTorch's logits (rel err %.3g)", e);
        int finite = 1;
        for (int64_t i = 0; i < g.n * g.classes; i++) finite &= isfinite(got[i]);
        CHECK(finite, "random-init logits finite");
        free(got);
    }
    rn_free(&m);
    CHECK(rn_init(ctx, &m, 16, gold_layers, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "width 16 vs a width-8 file refused");
    CHECK(strstr(m.err, "conv1.weight") != NULL, "message names the tensor: %s", m.err);
    static const int deeper[4] = {3, 4, 6, 4};
    CHECK(rn_init(ctx, &m, GOLD_WIDTH, deeper, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "4 blocks in layer4 refused");
    CHECK(strstr(m.err, "layer4.3.conv1.weight") != NULL, "message names the missing tensor: %s", m.err);
    CHECK(rn_depth(gold_layers) == 50 && rn_depth((const int[4]){3, 4, 23, 3}) == 101, "depth from layers");
out:
    golden_free(&g);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_sensitivity);
    RUN(test_cpu_f32);
    RUN(test_cpu_f16);
    RUN(test_gpu);
    return h_finish();
}
