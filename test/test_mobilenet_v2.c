/* test_mobilenet_v2.c — the MobileNet-v2 sample model (samples/mobilenet_v2.h) captured and
 * replayed against its own eager run, with the conv->conv fusion on (GCR_CONVCONV=1: every pair the
 * backend runs) and off. Every block is expand -> depthwise -> project, so each forms one pair,
 * whichever form the backend takes first: on the CPU the expansion into its depthwise conv (the
 * first block has no expansion: its depthwise into the projection), on CUDA the depthwise into the
 * projection (16-bit channels-last; test_fusion checks the forms one by one).
 * Limits on max|replay - eager| / max|eager|: f32 1e-4, f16 2e-2 (fused and eager kernels round
 * differently). No PyTorch golden is committed for this model; this checks the fusion on a real
 * network's shapes, and that every pair becomes one kernel. */
#include "harness.h"
#include "../samples/mobilenet_v2.h"

static mnv2_model mnv2; /* static: the model is large */

/* one pass of the forward in a region; the logits on the host (caller frees) or NULL */
static float *region_pass(gcr_ctx *ctx, gcr_tensor *x)
{
    gcr_tensor *y = NULL;
    GCR_REGION(ctx, "forward") { y = mnv2_forward(ctx, &mnv2, x); }
    return y ? h_read(y) : NULL;
}

/* kernels a replay of the region launches, or -1 */
static int region_kernels(gcr_ctx *ctx)
{
    gcr_graph *g = gcr_region_graph(ctx, "forward");
    gcr_graph_stats st;
    memset(&st, 0, sizeof st);
    return g && gcr_graph_get_stats(g, &st) == GCR_OK ? st.kernels : -1;
}

/* The model on dev in dt / fmt with GCR_CONVCONV = convconv: eager, two region passes (capture and
 * replay) and a replay on new data in the same input, each against eager; returns the kernels per
 * replay, or -1 */
static int run(gcr_device dev, gcr_dtype dt, gcr_format fmt, int convconv)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = dev;
    o.knobs.convconv = convconv;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) {
        if (dev == GCR_DEVICE_CUDA) h_skip_gpu("no CUDA device");
        else CHECK(0, "cannot create a CPU context");
        return -1;
    }
    char what[128];
    snprintf(what, sizeof what, "%s %s %s convconv=%d", gcr_ctx_device_name(ctx), gcr_dtype_name(dt),
             fmt == GCR_NHWC ? "nhwc" : "nchw", convconv);
    int kernels = -1;
    if (!CHECK(mnv2_init(ctx, &mnv2, 0.35, 10, dt, fmt, NULL, 3) == 0, "%s: init: %s", what, mnv2.err)) goto out;
    const int64_t xs[4] = {2, 3, 72, 72}, n = 2 * 3 * 72 * 72;
    const double tol = dt == GCR_F32 ? 1e-4 : 2e-2;
    float *h1 = h_randn(n, -2, 2), *h2 = h_randn(n, -2, 2);
    gcr_tensor *x = h_tensor(ctx, dt, 4, xs, fmt, h1), *x2 = h_tensor(ctx, dt, 4, xs, fmt, h2);
    float *ref[2] = {NULL, NULL};
    gcr_tensor *in[2] = {x, x2};
    for (int i = 0; i < 2; i++) {
        uint64_t sc = gcr_scope_begin(ctx);
        gcr_tensor *y = mnv2_forward(ctx, &mnv2, in[i]);
        if (CHECK(y && gcr_tensor_dim(y, 0) == 2 && gcr_tensor_dim(y, 1) == 10, "%s: eager forward: %s", what,
                  gcr_ctx_error(ctx)))
            ref[i] = h_read(y);
        gcr_scope_end(ctx, sc);
    }
    for (int pass = 0; pass < 3 && ref[0] && ref[1]; pass++) {
        if (pass == 2) { /* new data in the same input tensor: the replay must read it */
            size_t nb = gcr_tensor_nbytes(x);
            void *raw = malloc(nb);
            CHECK_OK(ctx, gcr_tensor_to_host(x2, raw, nb));
            CHECK_OK(ctx, gcr_tensor_from_host(x, raw, nb));
            free(raw);
        }
        float *got = region_pass(ctx, x);
        if (!CHECK(got != NULL, "%s pass %d: %s", what, pass, gcr_ctx_error(ctx))) break;
        const float *r = ref[pass == 2];
        double e = smp_rel_diff(got, r, 2 * 10);
        CHECK(e <= tol, "%s pass %d: replay vs eager rel err %.3g > %.3g", what, pass, e, tol);
        for (int b = 0; b < 2 && dt == GCR_F32; b++)
            CHECK(smp_argmax(got + b * 10, 10) == smp_argmax(r + b * 10, 10), "%s pass %d: top-1 of image %d", what, pass, b);
        free(got);
    }
    kernels = region_kernels(ctx);
    CHECK(kernels > 0 && kernels < mnv2.ops, "%s: %d kernels per replay (eager %d)", what, kernels, mnv2.ops);
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "%s: no error left: %s", what, gcr_ctx_error(ctx));
    free(ref[0]);
    free(ref[1]);
    free(h1);
    free(h2);
    mnv2_free(&mnv2);
out:
    gcr_ctx_destroy(ctx);
    return kernels;
}

/* each of the 17 blocks fuses one pair where the backend runs it: 17 kernels fewer */
static void expect_pairs(gcr_device dev, gcr_dtype dt, gcr_format fmt)
{
    int apart = run(dev, dt, fmt, 0), fused = run(dev, dt, fmt, 1);
    if (apart < 0 || fused < 0) return;
    CHECK(apart - fused == 17, "%s %s %s: %d kernels with the pairs, %d without: want 17 fewer",
          dev == GCR_DEVICE_CPU ? "cpu" : "cuda", gcr_dtype_name(dt), fmt == GCR_NHWC ? "nhwc" : "nchw", fused, apart);
}

static void test_cpu(void)
{
    expect_pairs(GCR_DEVICE_CPU, GCR_F32, GCR_NCHW);
    expect_pairs(GCR_DEVICE_CPU, GCR_F32, GCR_NHWC);
    expect_pairs(GCR_DEVICE_CPU, GCR_F16, GCR_NHWC);
}

/* CUDA's pair kernel: 16-bit channels-last */
static void test_gpu(void) { expect_pairs(GCR_DEVICE_CUDA, GCR_F16, GCR_NHWC); }

int main(void)
{
    RUN(test_cpu);
    RUN(test_gpu);
    return h_finish();
}
