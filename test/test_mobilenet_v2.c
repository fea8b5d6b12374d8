/* test_mobilenet_v2.c — the MobileNet-v2 sample model (samples/mobilenet_v2.h) against the logits
 * torchvision computed for the same weights and input (test/data/mnv2_w035.safetensors, written by
 * tools/export_mobilenet.py --model v2), through parity_util.h's checks: eager, capture, replay,
 * replays on new data. Every block is expand -> depthwise -> project, so each forms one conv->conv
 * pair, whichever form the backend takes first: on the CPU the expansion into its depthwise conv
 * (the first block has no expansion: its depthwise into the projection), on CUDA the depthwise into
 * the projection (16-bit channels-last). So parity runs with the pairs on (GCR_CONVCONV=1) as well
 * as by default, and each pair must save one kernel. Limits on max|got - ref| / max|ref|: f32 1e-4;
 * f16 4x PyTorch's own f16 error on the golden (its logits_f16), with the same top-1. */
#include "parity_util.h"
#include "../samples/mobilenet_v2.h"

static mnv2_model mnv2; /* static: the model is large; one configuration at a time uses it */

static int model_init(gcr_ctx *ctx, void *m, const void *cfg, gcr_dtype dt, gcr_format fmt, const gcr_weights *w)
{
    (void)cfg;
    return mnv2_init(ctx, m, 0.35, 0, dt, fmt, w, 0);
}
static gcr_tensor *model_forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return mnv2_forward(ctx, m, x); }
static void model_free(void *m) { mnv2_free(m); }

#define GOLD "mnv2_w035.safetensors" /* x0.35, 10 classes, 2 images of 97x97 */
static const pu_model v2 = {
    .name = GOLD, .gold = "test/data/" GOLD,
    .made_by = "python3 tools/export_mobilenet.py --model v2 --width 0.35 --classes 10 --batch 2 --size 97 --f16 "
               "--seed 1 --out test/data/" GOLD,
    .model = &mnv2, .init = model_init, .forward = model_forward, .free = model_free,
    .ops = &mnv2.ops, .classes = &mnv2.classes, .err = mnv2.err, .f16_tol_from_file = 1,
};

/* kernels per replay of the model (random weights) on dev in dt / fmt with GCR_CONVCONV = convconv,
 * or -1 */
static int kernels(gcr_device dev, gcr_dtype dt, gcr_format fmt, int convconv)
{
    gcr_ctx *ctx = pu_ctx_cc(dev, convconv);
    if (!ctx) return -1;
    int k = -1;
    if (CHECK(mnv2_init(ctx, &mnv2, 0.35, 10, dt, fmt, NULL, 3) == 0, "init: %s", mnv2.err)) {
        const int64_t xs[4] = {1, 3, 64, 64};
        float *h = h_randn(3 * 64 * 64, -2, 2);
        gcr_tensor *x = h_tensor(ctx, dt, 4, xs, fmt, h), *y = NULL;
        GCR_REGION(ctx, "forward") { y = mnv2_forward(ctx, &mnv2, x); }
        gcr_graph *g = gcr_region_graph(ctx, "forward");
        gcr_graph_stats st;
        memset(&st, 0, sizeof st);
        if (CHECK(y && g && gcr_graph_get_stats(g, &st) == GCR_OK, "capture: %s", gcr_ctx_error(ctx))) k = st.kernels;
        free(h);
        mnv2_free(&mnv2);
    }
    gcr_ctx_destroy(ctx);
    return k;
}

/* each of the 17 blocks fuses one pair where the backend runs it: 17 kernels fewer */
static void expect_pairs(gcr_device dev, gcr_dtype dt, gcr_format fmt)
{
    int apart = kernels(dev, dt, fmt, 0), fused = kernels(dev, dt, fmt, 1);
    if (apart < 0 || fused < 0) return;
    CHECK(apart - fused == 17, "%s %s %s: %d kernels with the pairs, %d without: want 17 fewer",
          dev == GCR_DEVICE_CPU ? "cpu" : "cuda", gcr_dtype_name(dt), pu_fmt_name(fmt), fused, apart);
}

static void test_cpu(void)
{
    pu_parity(GCR_DEVICE_CPU, &v2, GCR_F32, GCR_NCHW);
    pu_parity_cc(GCR_DEVICE_CPU, &v2, GCR_F32, GCR_NHWC, 0);
    pu_parity_cc(GCR_DEVICE_CPU, &v2, GCR_F32, GCR_NHWC, 1);
    pu_parity_cc(GCR_DEVICE_CPU, &v2, GCR_F16, GCR_NHWC, 1);
    expect_pairs(GCR_DEVICE_CPU, GCR_F32, GCR_NCHW);
    expect_pairs(GCR_DEVICE_CPU, GCR_F16, GCR_NHWC);
}

/* the checks can fail: random weights give other logits; a file of another width is refused */
static void test_mismatch(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    pu_golden g;
    if (pu_golden_load(ctx, &v2, &g) == 0) {
        if (CHECK(mnv2_init(ctx, &mnv2, 0.35, (int)g.classes, GCR_F32, GCR_NCHW, NULL, 7) == 0, "init: %s", mnv2.err)) {
            pu_expect_mismatch(ctx, &v2, &g);
            mnv2_free(&mnv2);
        }
        CHECK(mnv2_init(ctx, &mnv2, 1.0, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "width 1.0 vs a 0.35 file refused");
        CHECK(strstr(mnv2.err, "features.0.0.weight") != NULL, "message names the tensor: %s", mnv2.err);
    }
    pu_golden_free(&g);
    gcr_ctx_destroy(ctx);
}

/* CUDA's pair kernel: 16-bit channels-last, by default and with every pair fused. Not bf16: its
 * rounding is 8x f16's, past the golden's f16 yardstick (on an H100 bf16 fused vs PyTorch f32 was
 * 0.177, vs gcr's own bf16 eager 0.179); test_fusion and test_cuda_replay hold the bf16 pairs to
 * the CPU reference */
static void test_gpu(void)
{
    if (!pu_gpu_present()) return;
    pu_parity(GCR_DEVICE_CUDA, &v2, GCR_F32, GCR_NHWC);
    pu_parity(GCR_DEVICE_CUDA, &v2, GCR_F16, GCR_NHWC);
    pu_parity_cc(GCR_DEVICE_CUDA, &v2, GCR_F16, GCR_NHWC, 1);
    expect_pairs(GCR_DEVICE_CUDA, GCR_F16, GCR_NHWC);
}

int main(void)
{
    RUN(test_cpu);
    RUN(test_mismatch);
    RUN(test_gpu);
    return h_finish();
}
