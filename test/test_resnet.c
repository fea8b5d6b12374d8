/* test_resnet.c — ResNet parity with PyTorch: samples/resnet.h on gcr against the logits torchvision
 * computed for the same weights and input (test/data/resnet50_w8.safetensors: ResNet-50's layers
 * 3,4,6,3 at base width 8, 10 classes, input [2,3,64,64], written by tools/export_resnet.py). Eager
 * and captured replay, f32 and f16, NCHW and NHWC, on the CPU and, where a GPU is, on CUDA. Limits on
 * max|got - ref| / max|ref|: f32 1e-4; f16 within PyTorch's own f16 error (4x its f16-vs-f32 error
 * from the file's logits_f16, at least 2e-3; 1e-2 when the file has none) with the same top-1. A
 * missing golden fails the test, naming the command that makes it. The checks are parity_util.h's,
 * shared with test_mobilenet.c. */
#include "parity_util.h"
#include "../samples/resnet.h"

#define GOLD_WIDTH 8
static const int gold_layers[4] = {3, 4, 6, 3};

static rn_model rn; /* static: the model is large; one configuration at a time uses it */

/* the golden's architecture; the file's classes */
static int model_init(gcr_ctx *ctx, void *m, const void *cfg, gcr_dtype dt, gcr_format fmt, const gcr_weights *w)
{
    return rn_init(ctx, m, GOLD_WIDTH, gold_layers, 0, dt, fmt, w, 0);
}
static gcr_tensor *model_forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return rn_forward(ctx, m, x); }
static void model_free(void *m) { rn_free(m); }

static const pu_model resnet = {
    .name = "resnet50_w8",
    .gold = "test/data/resnet50_w8.safetensors",
    .made_by = "python3 tools/export_resnet.py --f16 --device cuda --out test/data/resnet50_w8.safetensors",
    .f16_tol_from_file = 1,
    .model = &rn,
    .init = model_init,
    .forward = model_forward,
    .free = model_free,
    .ops = &rn.ops,
    .classes = &rn.classes,
    .err = rn.err,
};

static void test_cpu_f32(void)
{
    pu_parity(GCR_DEVICE_CPU, &resnet, GCR_F32, GCR_NCHW);
    pu_parity(GCR_DEVICE_CPU, &resnet, GCR_F32, GCR_NHWC);
}
static void test_cpu_f16(void)
{
    pu_parity(GCR_DEVICE_CPU, &resnet, GCR_F16, GCR_NCHW);
    pu_parity(GCR_DEVICE_CPU, &resnet, GCR_F16, GCR_NHWC);
}

/* every (dtype, layout) compiles its own kernels (NVRTC, seconds each with a cold disk cache) */
static void test_gpu(void)
{
    if (!pu_gpu_present()) return;
    pu_parity(GCR_DEVICE_CUDA, &resnet, GCR_F32, GCR_NCHW);
    pu_parity(GCR_DEVICE_CUDA, &resnet, GCR_F32, GCR_NHWC);
    pu_parity(GCR_DEVICE_CUDA, &resnet, GCR_F16, GCR_NHWC);
    pu_parity(GCR_DEVICE_CUDA, &resnet, GCR_F16, GCR_NCHW);
}

/* the parity checks can fail: other weights give other logits; a file of another width or depth
 * is refused naming the tensor */
static void test_sensitivity(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    pu_golden g;
    if (pu_golden_load(ctx, &resnet, &g) != 0) goto out;
    CHECK(rn_init(ctx, &rn, GOLD_WIDTH, gold_layers, (int)g.classes, GCR_F32, GCR_NCHW, NULL, 5) == 0,
          "random init: %s", rn.err);
    pu_expect_mismatch(ctx, &resnet, &g);
    rn_free(&rn);
    CHECK(rn_init(ctx, &rn, 16, gold_layers, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "width 16 vs a width-8 file refused");
    CHECK(strstr(rn.err, "conv1.weight") != NULL, "message names the tensor: %s", rn.err);
    static const int deeper[4] = {3, 4, 6, 4};
    CHECK(rn_init(ctx, &rn, GOLD_WIDTH, deeper, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "4 blocks in layer4 refused");
    CHECK(strstr(rn.err, "layer4.3.conv1.weight") != NULL, "message names the missing tensor: %s", rn.err);
    CHECK(rn_depth(gold_layers) == 50 && rn_depth((const int[4]){3, 4, 23, 3}) == 101, "depth from layers");
out:
    pu_golden_free(&g);
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
