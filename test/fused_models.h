/* fused_models.h — small op graphs that exercise every shape of generated kernel (pointwise chains
 * with flat/vector and strided paths, broadcasts, several outputs, conv/linear epilogues and
 * prologues, reductions with fused producers and consumers), shared by test_codegen (CUDA text
 * compiled with NVRTC, no GPU) and test_cuda_replay (replay on a GPU against eager and the CPU).
 * Sizes are odd on purpose; weights are constant inputs. */
#ifndef GCR_TEST_FUSED_MODELS_H
#define GCR_TEST_FUSED_MODELS_H

#include "capture_util.h"

static gcr_conv2d_params fm_conv(int pad, int stride)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = pad;
    p.stride[0] = p.stride[1] = stride;
    return p;
}

static int fm_hswish(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_hardswish(ctx, in[0]);
    return 1;
}

static int fm_conv_bn_hswish(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = fm_conv(1, 1);
    gcr_tensor *y = gcr_conv2d(ctx, in[0], in[1], NULL, &p);
    gcr_tensor *b = gcr_batch_norm(ctx, y, in[2], in[3], in[4], in[5], 1e-3f);
    out[0] = gcr_hardswish(ctx, b);
    return 1;
}

/* an intermediate that is also an output: one kernel, two stores */
static int fm_two_outputs(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *a = gcr_mul_scalar(ctx, in[0], 3.0f);
    gcr_graph_output(ctx, a);
    out[0] = a;
    out[1] = gcr_sigmoid(ctx, gcr_add_scalar(ctx, a, -0.5f));
    return 2;
}

/* [C] per-channel (dim 1) and [W] per-column broadcasts */
static int fm_bcast(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int64_t c = gcr_tensor_dim(in[1], 0);
    int64_t sh[4] = {1, c, 1, 1};
    gcr_tensor *bias = gcr_reshape(ctx, in[1], 4, sh);
    gcr_tensor *y = gcr_mul(ctx, gcr_add(ctx, in[0], bias), in[2]);
    out[0] = gcr_tanh(ctx, y);
    return 1;
}

/* mean over H,W of an activation, scaled: producer in the load, consumer in the store */
static int fm_mean_hw(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int axes[2] = {2, 3};
    gcr_tensor *m = gcr_mean(ctx, gcr_relu(ctx, in[0]), axes, 2, 1);
    out[0] = gcr_add_scalar(ctx, gcr_mul_scalar(ctx, m, 2.0f), 0.25f);
    return 1;
}

/* max over the last dim, then a consumer (rows) */
static int fm_max_rows(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int axes[1] = {1};
    gcr_tensor *m = gcr_max(ctx, gcr_abs(ctx, in[0]), axes, 1, 0);
    out[0] = gcr_sqrt(ctx, m);
    return 1;
}

/* squeeze-excite: mean -> conv -> relu -> conv -> hardsigmoid -> mul -> 1x1 conv */
static int fm_se(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = fm_conv(0, 1);
    int axes[2] = {2, 3};
    gcr_tensor *s = gcr_mean(ctx, in[0], axes, 2, 1);
    s = gcr_relu(ctx, gcr_conv2d(ctx, s, in[1], in[2], &p));
    s = gcr_hardsigmoid(ctx, gcr_conv2d(ctx, s, in[3], in[4], &p));
    out[0] = gcr_conv2d(ctx, gcr_mul(ctx, in[0], s), in[5], NULL, &p);
    return 1;
}

static int fm_linear_relu(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_relu(ctx, gcr_linear(ctx, in[0], in[1], in[2]));
    return 1;
}

/* residual add in the conv's store: the extra input is indexed by the output's coordinates */
static int fm_residual(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = fm_conv(0, 1);
    gcr_tensor *y = gcr_conv2d(ctx, in[0], in[1], in[2], &p);
    out[0] = gcr_relu6(ctx, gcr_add(ctx, y, in[3]));
    return 1;
}

/* a permuted (non-contiguous) input: the strided path */
static int fm_strided(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_mul_scalar(ctx, gcr_exp(ctx, gcr_neg(ctx, in[0])), 1.5f);
    return 1;
}

/* pools take epilogues: a windowed average and a global one */
static int fm_pool_epi(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_pool2d_params p = gcr_pool2d_default(3);
    p.stride[0] = p.stride[1] = 2;
    p.padding[0] = p.padding[1] = 1;
    out[0] = gcr_relu(ctx, gcr_mul_scalar(ctx, gcr_avg_pool2d(ctx, in[0], &p), -1.5f));
    out[1] = gcr_hardsigmoid(ctx, gcr_adaptive_avg_pool2d(ctx, in[0], 1, 1));
    return 2;
}

/* a prologue on matmul's second operand: codegen refuses it (the template hooks input 0 only),
 * so the graph must split the group and still be right */
static int fm_matmul_pro_b(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_matmul(ctx, in[0], gcr_relu(ctx, in[1]));
    return 1;
}

/* a fused pointwise chain (gelu among it) reading an expand view: stride-0 loads on dims 0 and 2 */
static int fm_expand(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *e = gcr_expand(ctx, in[1], 4, (int64_t[]){2, 6, 5, 8});
    out[0] = gcr_gelu(ctx, gcr_add(ctx, gcr_mul(ctx, in[0], e), e));
    return 1;
}

/* a depthwise-separable block's first half: depthwise 3x3 (bias) + hardswish -> 1x1 conv (bias) +
 * residual; the depthwise result never leaves the fused kernel (capture/pass_convconv.c) */
static int fm_dwpw(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 1);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    gcr_tensor *h = gcr_hardswish(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], &d));
    out[0] = gcr_add(ctx, gcr_conv2d(ctx, h, in[3], in[4], NULL), in[5]);
    return 1;
}

/* depthwise 5x5 stride 2 (no bias) + batch norm (its parameters are inputs: per-channel loads in
 * the depthwise stage) + relu, scaled so that 16-bit sums of 25 and 24 terms stay near 1 -> 1x1
 * conv, no bias, no epilogue */
static int fm_dwpw_s2(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(2, 2);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    gcr_tensor *b = gcr_batch_norm(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &d), in[2], in[3], in[4], in[5], 1e-3f);
    out[0] = gcr_conv2d(ctx, gcr_mul_scalar(ctx, gcr_relu(ctx, b), 0.125f), in[6], NULL, NULL);
    return 1;
}

/* depthwise 3x3 with dilation 2 (the pair kernel's general taps) + relu -> 1x1 conv (bias) */
static int fm_dwpw_dil(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(2, 1);
    d.dilation[0] = d.dilation[1] = 2;
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    out[0] = gcr_conv2d(ctx, gcr_relu(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], &d)), in[3], in[4], NULL);
    return 1;
}

/* depthwise KxK stride 1, padded to keep the size (K from the weight), + hardswish -> 1x1 conv
 * (bias): dwpw_k5 5x5; dwpw_r4 3x3 over 72 channels, so that the pair kernel computes 4 outputs an
 * item. The scale keeps the outputs near 1: at 0.25 they reached about 20, and where 64 products
 * cancelled, the eager run's f16 rounding of each step moved a small output by more than the
 * absolute tolerance (one of 7344 elements, on an H200) */
static int fm_dwpw_same(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv((int)gcr_tensor_dim(in[1], 2) / 2, 1);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    gcr_tensor *h = gcr_hardswish(ctx, gcr_mul_scalar(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], &d), 0.0625f));
    out[0] = gcr_conv2d(ctx, h, in[3], in[4], NULL);
    return 1;
}

/* depthwise 3x3 stride 2 over 1024 channels -> 1x1 conv into 200: more channels than the pair
 * kernel holds at once (channel steps, the weights loaded each step) */
static int fm_dwpw_wide(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 2);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    gcr_tensor *h = gcr_mul_scalar(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &d), 0.25f);
    out[0] = gcr_conv2d(ctx, h, in[2], NULL, NULL);
    return 1;
}

/* pointwise -> depthwise: 1x1 conv (bias) + hardswish -> depthwise 3x3 (bias) + relu; the
 * expansion stays inside the depthwise conv's kernel where the backend runs the pair */
static int fm_pwdw(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 1);
    d.groups = (int)gcr_tensor_dim(in[1], 0);
    gcr_tensor *e = gcr_hardswish(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], NULL));
    out[0] = gcr_relu(ctx, gcr_conv2d(ctx, e, in[3], in[4], &d));
    return 1;
}

/* 1x1 conv (no bias) + batch norm (its parameters are inputs) -> depthwise 5x5 stride 2, whose
 * padding must read zeros, not the batch norm of zero. The scale keeps the f16 rounding error of
 * the 25-tap sums below the tests' absolute tolerance: unscaled, the eager run's rounding of the
 * batch norm's input (which the fused kernel does not round) moved sums that cancel to near 0 by
 * up to 0.09 (H100). */
static int fm_pwdw_s2(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(2, 2);
    d.groups = (int)gcr_tensor_dim(in[1], 0);
    gcr_tensor *b = gcr_batch_norm(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, NULL), in[2], in[3], in[4], in[5], 1e-3f);
    out[0] = gcr_conv2d(ctx, gcr_mul_scalar(ctx, b, 0.125f), in[6], NULL, &d);
    return 1;
}

/* an inverted-residual block: expand 1x1 + relu -> depthwise 3x3 stride 2 + relu -> project 1x1;
 * one of its two pairs fuses, whichever the backend runs (the first in trace order where both) */
static int fm_pwdwpw(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 2);
    d.groups = (int)gcr_tensor_dim(in[1], 0);
    gcr_tensor *e = gcr_relu(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, NULL));
    gcr_tensor *h = gcr_relu(ctx, gcr_conv2d(ctx, e, in[2], NULL, &d));
    out[0] = gcr_conv2d(ctx, h, in[3], NULL, NULL);
    return 1;
}

typedef struct fm_case {
    const char *name;
    cu_model fn;
    int n_in;
    cu_input in[CU_MAX];
    int kernels; /* expected launches after fusion, 0: not asserted */
} fm_case;

static const fm_case fm_cases[] = {
    {"hswish", fm_hswish, 1, {{4, {2, 3, 5, 7}, 0, 0, 0}}, 1},
    {"conv_bn_hswish", fm_conv_bn_hswish, 6,
     {{4, {2, 4, 9, 9}, 0, 0, 0}, {4, {8, 4, 3, 3}, 1, 0, 0}, {1, {8}, 1, 0, 0}, {1, {8}, 1, 0, 1}, {1, {8}, 1, 0, 0}, {1, {8}, 1, 0, 0}}, 1},
    {"two_outputs", fm_two_outputs, 1, {{4, {3, 5, 4, 9}, 0, 0, 0}}, 1},
    {"bcast", fm_bcast, 3, {{4, {2, 6, 5, 8}, 0, 0, 0}, {1, {6}, 0, 0, 0}, {1, {8}, 0, 0, 0}}, 1},
    {"mean_hw", fm_mean_hw, 1, {{4, {2, 40, 9, 11}, 0, 0, 0}}, 1},
    {"max_rows", fm_max_rows, 1, {{2, {37, 300}, 0, 0, 0}}, 1},
    {"se", fm_se, 6,
     {{4, {2, 16, 7, 7}, 0, 0, 0}, {4, {4, 16, 1, 1}, 1, 0, 0}, {1, {4}, 1, 0, 0}, {4, {16, 4, 1, 1}, 1, 0, 0}, {1, {16}, 1, 0, 0}, {4, {8, 16, 1, 1}, 1, 0, 0}},
     0},
    {"linear_relu", fm_linear_relu, 3, {{2, {5, 12}, 0, 0, 0}, {2, {7, 12}, 1, 0, 0}, {1, {7}, 1, 0, 0}}, 1},
    {"residual", fm_residual, 4, {{4, {2, 8, 5, 5}, 0, 0, 0}, {4, {12, 8, 1, 1}, 1, 0, 0}, {1, {12}, 1, 0, 0}, {4, {2, 12, 5, 5}, 0, 0, 0}}, 1},
    {"strided", fm_strided, 1, {{3, {5, 7, 9}, 0, 1, 0}}, 1},
    {"pool_epi", fm_pool_epi, 1, {{4, {2, 5, 11, 9}, 0, 0, 0}}, 2},
    {"matmul_pro_b", fm_matmul_pro_b, 2, {{2, {6, 10}, 0, 0, 0}, {2, {10, 7}, 0, 0, 0}}, 0},
    {"expand", fm_expand, 2, {{4, {2, 6, 5, 8}, 0, 0, 0}, {3, {6, 1, 8}, 0, 1, 0}}, 1},
    /* conv->conv: one kernel where the backend runs the pair (CUDA: f16/bf16 channels-last), else two */
    {"dwpw", fm_dwpw, 6,
     {{4, {2, 16, 9, 11}, 0, 0, 0}, {4, {16, 1, 3, 3}, 1, 0, 0}, {1, {16}, 1, 0, 0}, {4, {12, 16, 1, 1}, 1, 0, 0},
      {1, {12}, 1, 0, 0}, {4, {2, 12, 9, 11}, 0, 0, 0}},
     0},
    {"dwpw_s2", fm_dwpw_s2, 7,
     {{4, {3, 24, 13, 10}, 0, 0, 0}, {4, {24, 1, 5, 5}, 1, 0, 0}, {1, {24}, 0, 0, 0}, {1, {24}, 0, 0, 1},
      {1, {24}, 0, 0, 0}, {1, {24}, 0, 0, 0}, {4, {40, 24, 1, 1}, 1, 0, 0}},
     0},
    {"dwpw_dil", fm_dwpw_dil, 5,
     {{4, {2, 40, 11, 13}, 0, 0, 0}, {4, {40, 1, 3, 3}, 1, 0, 0}, {1, {40}, 1, 0, 0}, {4, {24, 40, 1, 1}, 1, 0, 0},
      {1, {24}, 1, 0, 0}},
     0},
    {"dwpw_k5", fm_dwpw_same, 5,
     {{4, {1, 64, 9, 17}, 0, 0, 0}, {4, {64, 1, 5, 5}, 1, 0, 0}, {1, {64}, 1, 0, 0}, {4, {48, 64, 1, 1}, 1, 0, 0},
      {1, {48}, 1, 0, 0}},
     0},
    {"dwpw_r4", fm_dwpw_same, 5,
     {{4, {2, 72, 10, 19}, 0, 0, 0}, {4, {72, 1, 3, 3}, 1, 0, 0}, {1, {72}, 1, 0, 0}, {4, {24, 72, 1, 1}, 1, 0, 0},
      {1, {24}, 1, 0, 0}},
     0},
    {"dwpw_wide", fm_dwpw_wide, 3,
     {{4, {2, 1024, 7, 9}, 0, 0, 0}, {4, {1024, 1, 3, 3}, 1, 0, 0}, {4, {200, 1024, 1, 1}, 1, 0, 0}},
     0},
    {"pwdw", fm_pwdw, 5,
     {{4, {2, 16, 9, 11}, 0, 0, 0}, {4, {48, 16, 1, 1}, 1, 0, 0}, {1, {48}, 1, 0, 0}, {4, {48, 1, 3, 3}, 1, 0, 0},
      {1, {48}, 1, 0, 0}},
     0},
    {"pwdw_s2", fm_pwdw_s2, 7,
     {{4, {2, 13, 10, 13}, 0, 0, 0}, {4, {40, 13, 1, 1}, 1, 0, 0}, {1, {40}, 0, 0, 0}, {1, {40}, 0, 0, 1},
      {1, {40}, 0, 0, 0}, {1, {40}, 0, 0, 0}, {4, {40, 1, 5, 5}, 1, 0, 0}},
     0},
    {"pwdwpw", fm_pwdwpw, 4,
     {{4, {2, 16, 9, 11}, 0, 0, 0}, {4, {48, 16, 1, 1}, 1, 0, 0}, {4, {48, 1, 3, 3}, 1, 0, 0}, {4, {24, 48, 1, 1}, 1, 0, 0}},
     0},
};
#define FM_REFUSED "matmul_pro_b" /* the one case codegen must refuse */
/* the conv->conv cases' name prefix: CUDA codegen refuses their pair where the CUDA backend would
 * not have fused it (f32, NCHW), as a capture on the CPU (test_codegen) fuses it in every dtype
 * and layout */
#define FM_CONVCONV "dwpw"
/* the pointwise -> depthwise cases' prefix: CUDA codegen refuses their pair in every dtype and
 * layout (its pair kernel takes depthwise -> pointwise only; "pwdwpw" fuses one of its pairs) */
#define FM_PWDW "pwdw"
#define FM_N_CASES ((int)(sizeof fm_cases / sizeof fm_cases[0]))

#endif
