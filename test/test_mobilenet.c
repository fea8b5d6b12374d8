/* test_mobilenet.c — MobileNet-v3 parity with PyTorch: samples/model.h on gcr against the logits
 * torchvision computed for the same weights and input (test/data/mnv3_*.safetensors, written by
 * tools/export_mobilenet.py). Eager and captured-replay, NCHW and NHWC, on the CPU and, where a
 * GPU is, on CUDA. Limits on max|got - ref| / max|ref|: f32 1e-4; f16 1e-2 with the same top-1. A
 * missing golden fails the test, naming the command that makes it. The checks are parity_util.h's,
 * shared with test_resnet.c. */
#include "parity_util.h"
#include "../samples/model.h"

static mnv3_model mnv3; /* static: the model is large; one configuration at a time uses it */

typedef struct {
    mnv3_arch arch;
    double width;
} arch_cfg;
static const arch_cfg small_cfg = {MNV3_SMALL, 0.5}, large_cfg = {MNV3_LARGE, 0.35};

/* the architecture and width of cfg; the file's classes */
static int model_init(gcr_ctx *ctx, void *m, const void *cfg, gcr_dtype dt, gcr_format fmt, const gcr_weights *w)
{
    const arch_cfg *a = cfg;
    return mnv3_init(ctx, m, a->arch, a->width, 0, dt, fmt, w, 0);
}
static gcr_tensor *model_forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return mnv3_forward(ctx, m, x); }
static void model_free(void *m) { mnv3_free(m); }

/* A golden of test/data and the tools/export_mobilenet.py arguments that wrote it (tools/README.md).
 * f16 is held to 4x PyTorch's own f16 error on the golden (its logits_f16), as the ResNet one is:
 * since the goldens' BN statistics come from data their logits depend on the input, and f16
 * rounding through the whole network shows in them (PyTorch's own: 0.0043 small, 0.0087 large). */
#define MNV3_GOLD(file, config, args)                                                                      \
    {                                                                                                      \
        .name = file, .gold = "test/data/" file,                                                           \
        .made_by = "python3 tools/export_mobilenet.py " args " --out test/data/" file, .cfg = &config,     \
        .model = &mnv3, .init = model_init, .forward = model_forward, .free = model_free,                  \
        .ops = &mnv3.ops, .classes = &mnv3.classes, .err = mnv3.err, .f16_tol_from_file = 1,               \
    }
static const pu_model small = MNV3_GOLD("mnv3_small_w050.safetensors", small_cfg, /* Small x0.5, 100 classes */
                                        "--model small --width 0.5 --classes 100 --batch 2 --size 131 --f16 --seed 1");
static const pu_model large = MNV3_GOLD("mnv3_large_w035.safetensors", large_cfg, /* Large x0.35, 10 classes */
                                        "--model large --width 0.35 --classes 10 --batch 1 --size 97 --f16 --seed 1");

static void test_cpu_small(void)
{
    pu_parity(GCR_DEVICE_CPU, &small, GCR_F32, GCR_NCHW);
    pu_parity(GCR_DEVICE_CPU, &small, GCR_F32, GCR_NHWC);
}
static void test_cpu_large(void)
{
    pu_parity(GCR_DEVICE_CPU, &large, GCR_F32, GCR_NCHW);
    pu_parity(GCR_DEVICE_CPU, &large, GCR_F32, GCR_NHWC);
}
static void test_cpu_f16(void) { pu_parity(GCR_DEVICE_CPU, &small, GCR_F16, GCR_NCHW); }

/* Each (model, dtype, layout) compiles its own kernels (NVRTC, seconds each when the disk cache is
 * cold), so the GPU runs four configurations that still cover both models, dtypes and layouts. */
static void test_gpu(void)
{
    if (!pu_gpu_present()) return;
    pu_parity(GCR_DEVICE_CUDA, &small, GCR_F32, GCR_NCHW);
    pu_parity(GCR_DEVICE_CUDA, &small, GCR_F16, GCR_NHWC);
    pu_parity(GCR_DEVICE_CUDA, &large, GCR_F32, GCR_NHWC);
    pu_parity(GCR_DEVICE_CUDA, &large, GCR_F16, GCR_NCHW);
}

/* the parity checks can fail: other weights give other logits; a file of the wrong width is
 * refused naming the tensor */
static void test_sensitivity(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    pu_golden g;
    if (pu_golden_load(ctx, &small, &g) != 0) goto out;
    CHECK(mnv3_init(ctx, &mnv3, MNV3_SMALL, 0.5, (int)g.classes, GCR_F32, GCR_NCHW, NULL, 5) == 0, "random init: %s",
          mnv3.err);
    pu_expect_mismatch(ctx, &small, &g);
    mnv3_free(&mnv3);
    CHECK(mnv3_init(ctx, &mnv3, MNV3_SMALL, 0.75, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0,
          "width 0.75 vs a 0.5 file refused");
    CHECK(strstr(mnv3.err, "features.0.0.weight") != NULL, "message names the tensor: %s", mnv3.err);
    CHECK(mnv3_init(ctx, &mnv3, MNV3_LARGE, 0.5, 0, GCR_F32, GCR_NCHW, g.w, 0) != 0, "Large vs a Small file refused");
    /* make_divisible as torchvision: 16*0.5 → 8, 72*0.35 → 24 (25.2 rounds to 24), 3 → 8 (minimum) */
    CHECK(smp_make_divisible(8.0, 8) == 8 && smp_make_divisible(25.2, 8) == 24 && smp_make_divisible(3, 8) == 8 &&
              smp_make_divisible(1280 * 0.35, 8) == 448 && smp_make_divisible(20, 8) == 24,
          "make_divisible");
out:
    pu_golden_free(&g);
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
