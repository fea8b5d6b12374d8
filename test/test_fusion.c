/* test_fusion.c — the fusion passes, by kernel counts (gcr_graph_get_stats) and by values
 * (replay == eager with fresh data): hardswish is one kernel; conv + batch_norm + hardswish is
 * one kernel; an intermediate that is also an output gives one kernel with two outputs; the
 * squeeze-excite pattern; chains of small kernels run as one launch (pool -> matrix-vector
 * products); reductions, linear/matmul epilogues, horizontal fusion (hundreds of
 * siblings too), cycles the fuser must refuse, the knobs (fusion, single_node, skip_fuse,
 * horizontal), the backend's operand budget (every fused kernel within it, as codegen counts), and
 * pointwise chains reading expand views (stride-0 loads) and expand's composites; integer casts
 * and -0.0 scalars replay exactly as eager. */
#include "fused_models.h"
#include "../replay/graph.h"
#include "../lib/cuda/codegen.h"
#include "../lib/cpu/cpu.h"
#include "../lib/exec.h"

static gcr_ctx *ctx_knobs(int fusion, int single_node, int horizontal, const char *skip)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.fusion = fusion;
    o.knobs.single_node = single_node;
    o.knobs.horizontal = horizontal;
    o.knobs.skip_fuse = skip;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) CHECK(0, "ctx");
    return ctx;
}

static int fused_groups(const gcr_graph *g)
{
    gcr_graph_stats st;
    return g && gcr_graph_get_stats(g, &st) == GCR_OK ? st.fused_groups : -1;
}

/* captures model with knobs, checks values over 3 iterations, returns the launches (the stats'
 * kernel count: a chain counts once); *groups gets the fused groups, *built the built kernels */
static int counted(gcr_ctx *ctx, cu_model m, const cu_input *ins, int n, gcr_dtype dt, gcr_format fmt, int *groups,
                   int *built)
{
    gcr_tensor *in[CU_MAX];
    gcr_graph *g = cu_check(ctx, m, ins, n, dt, fmt, 3, cu_tol(dt), in);
    int k = cu_kernels(g);
    if (groups) *groups = fused_groups(g);
    if (built) *built = g && g->cur ? g->cur->ir->n_kernels : -1;
    gcr_graph_destroy(g);
    for (int i = 0; i < n; i++) gcr_tensor_free(in[i]);
    return k;
}

static int kernels_of(gcr_ctx *ctx, cu_model m, const cu_input *ins, int n, gcr_dtype dt, gcr_format fmt, int *groups)
{
    return counted(ctx, m, ins, n, dt, fmt, groups, NULL);
}

static int launches_of(gcr_ctx *ctx, cu_model m, const cu_input *ins, int n, gcr_dtype dt, gcr_format fmt, int *built)
{
    return counted(ctx, m, ins, n, dt, fmt, NULL, built);
}

/* ---------------------------------------------------------------- models */

static int m_hswish(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_hardswish(ctx, in[0]);
    return 1;
}

static int m_conv_bn_hswish(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    p.stride[0] = 2;
    gcr_tensor *y = gcr_conv2d(ctx, in[0], in[1], NULL, &p);
    gcr_tensor *b = gcr_batch_norm(ctx, y, in[2], in[3], in[4], in[5], 1e-3f);
    out[0] = gcr_hardswish(ctx, b);
    return 1;
}

static int m_two_outputs(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *a = gcr_mul_scalar(ctx, in[0], 3.0f);
    out[0] = gcr_sigmoid(ctx, a);
    gcr_graph_output(ctx, out[0]);
    out[1] = gcr_mul(ctx, out[0], in[0]);
    return 2;
}

/* squeeze-excite: x * hardsigmoid(conv(relu(conv(mean_hw(x))))) then a 1x1 conv */
static int m_se(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int ax[2] = {2, 3};
    gcr_tensor *x = in[0];
    gcr_tensor *s = gcr_mean(ctx, x, ax, 2, 1);
    gcr_tensor *h = gcr_relu(ctx, gcr_conv2d(ctx, s, in[1], in[2], NULL));
    gcr_tensor *e = gcr_hardsigmoid(ctx, gcr_conv2d(ctx, h, in[3], in[4], NULL));
    gcr_tensor *xs = gcr_mul(ctx, x, e);
    out[0] = gcr_conv2d(ctx, xs, in[5], NULL, NULL);
    return 1;
}

static int m_reduce_fuse(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int ax[2] = {2, 3};
    gcr_tensor *a = gcr_hardswish(ctx, in[0]);
    gcr_tensor *m = gcr_mean(ctx, a, ax, 2, 0);      /* prologue: hardswish in the load */
    out[0] = gcr_relu(ctx, gcr_mul_scalar(ctx, m, 2.0f)); /* epilogue over [N,C] */
    return 1;
}

static int m_linear_relu(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *y = gcr_linear(ctx, in[0], in[1], in[2]);
    out[0] = gcr_add(ctx, gcr_relu(ctx, y), in[3]); /* activation + residual in the store */
    return 1;
}

static int m_siblings(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_relu(ctx, in[0]);
    out[1] = gcr_sigmoid(ctx, in[0]);
    return 2;
}

/* exp(x) feeds both a mean and the product with that mean: fusing exp and mul would make a cycle */
static int m_cycle(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int ax[2] = {2, 3};
    gcr_tensor *a = gcr_exp(ctx, gcr_mul_scalar(ctx, in[0], 0.5f));
    gcr_tensor *m = gcr_mean(ctx, a, ax, 2, 1);
    out[0] = gcr_mul(ctx, a, m);
    return 1;
}

/* a classifier head: global pool, flatten, linear + hardswish, linear; the pooled vector is also a
 * graph output (a chain keeps every step's buffer) */
static int m_head(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *p = gcr_adaptive_avg_pool2d(ctx, in[0], 1, 1);
    gcr_graph_output(ctx, p);
    gcr_tensor *h = gcr_hardswish(ctx, gcr_linear(ctx, gcr_flatten(ctx, p, 1, -1), in[1], in[2]));
    out[0] = p;
    out[1] = gcr_linear(ctx, h, in[3], NULL);
    return 2;
}

/* a mean over axes 2 and 3 without keepdim ([N, C]) into two linears, the first with a relu */
static int m_mean_linears(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    int ax[2] = {2, 3};
    gcr_tensor *m = gcr_mean(ctx, in[0], ax, 2, 0);
    out[0] = gcr_linear(ctx, gcr_relu(ctx, gcr_linear(ctx, m, in[1], in[2])), in[3], NULL);
    return 1;
}

/* the head with its second weight computed in the graph: that step reads a value a kernel writes
 * (or its kernel has a prologue), so the chain stops before it */
static int m_head_made_weight(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *w = gcr_mul_scalar(ctx, in[3], 0.5f);
    gcr_tensor *p = gcr_flatten(ctx, gcr_adaptive_avg_pool2d(ctx, in[0], 1, 1), 1, -1);
    gcr_tensor *h = gcr_relu(ctx, gcr_linear(ctx, p, in[1], in[2]));
    out[0] = gcr_linear(ctx, h, w, NULL);
    return 1;
}

/* a pool to 1 x 2 is no global mean, and a grouped 1x1 conv no matrix-vector product */
static int m_not_chains(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params g = gcr_conv2d_default();
    g.groups = 2;
    out[0] = gcr_relu(ctx, gcr_conv2d(ctx, gcr_adaptive_avg_pool2d(ctx, in[0], 1, 2), in[1], NULL, NULL));
    out[1] = gcr_conv2d(ctx, gcr_adaptive_avg_pool2d(ctx, in[0], 1, 1), in[2], NULL, &g);
    return 2;
}

/* ---------------------------------------------------------------- tests */

static const cu_input in_x = {4, {2, 5, 7, 9}, 0, 0, 0};

static void test_hardswish(void)
{
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    int groups;
    gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int t = 0; t < 3; t++)
        for (int f = 0; f < 2; f++) {
            CHECK(kernels_of(ctx, m_hswish, &in_x, 1, dts[t], f ? GCR_NHWC : GCR_NCHW, &groups) == 1,
                  "hardswish is 1 kernel (%s)", gcr_dtype_name(dts[t]));
            CHECK(groups == 1, "one fused group");
        }
    cu_input strided = {4, {2, 5, 7, 9}, 0, 1, 0};
    CHECK(kernels_of(ctx, m_hswish, &strided, 1, GCR_F32, GCR_NCHW, NULL) == 1, "strided input: 1 kernel");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(0, 0, 1, NULL);
    CHECK(kernels_of(ctx, m_hswish, &in_x, 1, GCR_F32, GCR_NCHW, &groups) == 4, "fusion=0: 4 kernels");
    CHECK(groups == 0, "fusion=0: no groups");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 0, 1, "pointwise");
    CHECK(kernels_of(ctx, m_hswish, &in_x, 1, GCR_F32, GCR_NCHW, NULL) == 4, "skip_fuse=pointwise: 4 kernels");
    gcr_ctx_destroy(ctx);
    /* tokens match whatever their case and spaces, as GCR_DUMP's do */
    const char *spelled[] = {"Pointwise", " POINTWISE ", "conv, PointWise"};
    for (int i = 0; i < 3; i++) {
        ctx = ctx_knobs(1, 0, 1, spelled[i]);
        CHECK(kernels_of(ctx, m_hswish, &in_x, 1, GCR_F32, GCR_NCHW, NULL) == 4, "skip_fuse=\"%s\": 4 kernels", spelled[i]);
        gcr_ctx_destroy(ctx);
    }
}

static void test_conv_bn_hswish(void)
{
    cu_input ins[] = {in_x, {4, {6, 5, 3, 3}, 1, 0, 0}, {1, {6}, 1, 0, 0}, {1, {6}, 1, 0, 1}, {1, {6}, 1, 0, 0}, {1, {6}, 1, 0, 0}};
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    gcr_dtype dts[] = {GCR_F32, GCR_F16};
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++) {
            int groups;
            CHECK(kernels_of(ctx, m_conv_bn_hswish, ins, 6, dts[t], f ? GCR_NHWC : GCR_NCHW, &groups) == 1,
                  "conv + batch_norm + hardswish is 1 kernel (%s %s)", gcr_dtype_name(dts[t]), f ? "nhwc" : "nchw");
            CHECK(groups == 1, "one fused group");
        }
    gcr_ctx_destroy(ctx);
    /* without constants the batch norm cannot fold, and is still fused into the conv's epilogue */
    cu_input var[6];
    memcpy(var, ins, sizeof var);
    for (int i = 2; i < 6; i++) var[i].is_const = 0;
    ctx = ctx_knobs(1, 0, 1, NULL);
    CHECK(kernels_of(ctx, m_conv_bn_hswish, var, 6, GCR_F32, GCR_NCHW, NULL) == 1, "non-const BN: epilogue, 1 kernel");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 0, 1, "conv");
    CHECK(kernels_of(ctx, m_conv_bn_hswish, ins, 6, GCR_F32, GCR_NCHW, NULL) == 2, "skip_fuse=conv: conv + 1 group");
    gcr_ctx_destroy(ctx);
}

static void test_two_outputs(void)
{
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    gcr_tensor *in[CU_MAX];
    gcr_graph *g = cu_check(ctx, m_two_outputs, &in_x, 1, GCR_F32, GCR_NCHW, 3, 1e-5f, in);
    CHECK(cu_kernels(g) == 1, "1 kernel with 2 outputs: %d", cu_kernels(g));
    CHECK(gcr_graph_num_outputs(g) == 2, "2 outputs");
    gcr_graph_destroy(g);
    gcr_tensor_free(in[0]);
    gcr_ctx_destroy(ctx);
}

static void test_se(void)
{
    /* x [2,16,5,5]; squeeze 16 -> 4 -> 16; 1x1 projection 16 -> 8 */
    cu_input ins[] = {{4, {2, 16, 5, 5}, 0, 0, 0}, {4, {4, 16, 1, 1}, 1, 0, 0}, {1, {4}, 1, 0, 0},
                      {4, {16, 4, 1, 1}, 1, 0, 0}, {1, {16}, 1, 0, 0}, {4, {8, 16, 1, 1}, 1, 0, 0}};
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    for (int f = 0; f < 2; f++) {
        int k = 0, l = launches_of(ctx, m_se, ins, 6, GCR_F32, f ? GCR_NHWC : GCR_NCHW, &k);
        /* mean (alone: its consumer is a conv), conv+relu, conv+hardsigmoid, conv with the
         * x * s prologue: 4 kernels for 9 primitive ops; the first three are a chain (one launch) */
        CHECK(k == 4 && l == 2, "SE block: 4 kernels in 2 launches, got %d in %d", k, l);
    }
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 0, 1, "chain");
    int k = 0, l = launches_of(ctx, m_se, ins, 6, GCR_F32, GCR_NCHW, &k);
    CHECK(k == 4 && l == 4, "skip_fuse=chain: 4 kernels in 4 launches, got %d in %d", k, l);
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(0, 0, 1, NULL);
    CHECK(kernels_of(ctx, m_se, ins, 6, GCR_F32, GCR_NCHW, NULL) == 9, "SE unfused: 9 kernels");
    gcr_ctx_destroy(ctx);
}

/* chains (capture/pass_chain.c): values against eager on every dtype and layout, odd sizes, a batch
 * of 3; sizes whose steps read more than 64 KB, so a GPU runs them in clusters; and the cases that
 * must not chain */
static void test_chain(void)
{
    static const gcr_dtype dts[3] = {GCR_F32, GCR_F16, GCR_BF16};
    /* x [3,37,5,7] -> 37 -> 19 (hardswish) -> 11 */
    cu_input head[] = {{4, {3, 37, 5, 7}, 0, 0, 0}, {2, {19, 37}, 1, 0, 0}, {1, {19}, 1, 0, 0}, {2, {11, 19}, 1, 0, 0}};
    /* x [2,64,32,32] (128-256 KB) -> 64 -> 23 -> 200 */
    cu_input big[] = {{4, {2, 64, 32, 32}, 0, 0, 0}, {2, {23, 64}, 1, 0, 0}, {1, {23}, 1, 0, 0}, {2, {200, 23}, 1, 0, 0}};
    /* x [2,520,5,3] -> 13 -> 7: the pool's channels in three passes of 256, the last partial */
    cu_input passes[] = {{4, {2, 520, 5, 3}, 0, 0, 0}, {2, {13, 520}, 1, 0, 0}, {1, {13}, 1, 0, 0}, {2, {7, 13}, 1, 0, 0}};
    /* x [2,2064,3,5] -> 13 -> 7: channels-last, the 16-byte pool's chunks in two passes of 256 (f16
     * and bf16: 258 chunks; f32: 516, three), 15 pixels over a cluster's blocks */
    cu_input chunks[] = {{4, {2, 2064, 3, 5}, 0, 0, 0}, {2, {13, 2064}, 1, 0, 0}, {1, {13}, 1, 0, 0}, {2, {7, 13}, 1, 0, 0}};
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    for (int d = 0; d < 3; d++)
        for (int f = 0; f < 2; f++) {
            gcr_format fmt = f ? GCR_NHWC : GCR_NCHW;
            int k = 0, l = launches_of(ctx, m_head, head, 4, dts[d], fmt, &k);
            CHECK(k == 3 && l == 1, "head %s %s: 3 kernels in 1 launch, got %d in %d", gcr_dtype_name(dts[d]),
                  f ? "nhwc" : "nchw", k, l);
            l = launches_of(ctx, m_head, big, 4, dts[d], fmt, &k);
            CHECK(k == 3 && l == 1, "big head %s %s: 3 kernels in 1 launch, got %d in %d", gcr_dtype_name(dts[d]),
                  f ? "nhwc" : "nchw", k, l);
            l = launches_of(ctx, m_head, passes, 4, dts[d], fmt, &k);
            CHECK(k == 3 && l == 1, "520-channel head %s %s: 3 kernels in 1 launch, got %d in %d",
                  gcr_dtype_name(dts[d]), f ? "nhwc" : "nchw", k, l);
            l = launches_of(ctx, m_head, chunks, 4, dts[d], fmt, &k);
            CHECK(k == 3 && l == 1, "2064-channel head %s %s: 3 kernels in 1 launch, got %d in %d",
                  gcr_dtype_name(dts[d]), f ? "nhwc" : "nchw", k, l);
        }
    /* the weight's producer fuses into the last linear as its prologue or stays a kernel: either way
     * the chain is pool + first linear */
    for (int d = 0; d < 3; d++) {
        int km = 0, lm = launches_of(ctx, m_mean_linears, head, 4, dts[d], GCR_NHWC, &km);
        CHECK(km == 3 && lm == 1, "mean [N, C] -> linear + relu -> linear %s: 3 kernels in 1 launch, got %d in %d",
              gcr_dtype_name(dts[d]), km, lm);
    }
    int k = 0, l = launches_of(ctx, m_head_made_weight, head, 4, GCR_F32, GCR_NCHW, &k);
    CHECK(k >= 3 && l == k - 1, "a weight made in the graph ends the chain: %d kernels in %d launches", k, l);
    cu_input nc[] = {{4, {2, 8, 6, 6}, 0, 0, 0}, {4, {5, 8, 1, 1}, 1, 0, 0}, {4, {6, 4, 1, 1}, 1, 0, 0}};
    l = launches_of(ctx, m_not_chains, nc, 3, GCR_F32, GCR_NCHW, &k);
    CHECK(l == k, "a 1x2 pool and a grouped conv: no chain (%d kernels, %d launches)", k, l);
    /* a vector past GCR_CHAIN_MAX_VEC (4096) */
    cu_input wide[] = {{4, {1, 4100, 2, 1}, 0, 0, 0}, {2, {3, 4100}, 1, 0, 0}, {1, {3}, 1, 0, 0}, {2, {2, 3}, 1, 0, 0}};
    l = launches_of(ctx, m_head, wide, 4, GCR_F32, GCR_NCHW, &k);
    CHECK(k == 3 && l == 3, "4100 channels: no chain (%d kernels, %d launches)", k, l);
    /* 40 images of 256 KB: past GCR_CHAIN_MAX_BATCH_BYTES through the pool, so no chain; 24 chain */
    big[0].shape[0] = 40;
    l = launches_of(ctx, m_head, big, 4, GCR_F32, GCR_NCHW, &k);
    CHECK(k == 3 && l == 3, "40 images of 256 KB: no chain (%d kernels, %d launches)", k, l);
    big[0].shape[0] = 24;
    l = launches_of(ctx, m_head, big, 4, GCR_F32, GCR_NCHW, &k);
    CHECK(k == 3 && l == 1, "24 images of 256 KB: a chain (%d kernels, %d launches)", k, l);
    gcr_ctx_destroy(ctx);
}

static void test_reduction(void)
{
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    for (int f = 0; f < 2; f++)
        CHECK(kernels_of(ctx, m_reduce_fuse, &in_x, 1, GCR_F32, f ? GCR_NHWC : GCR_NCHW, NULL) == 1,
              "hardswish -> mean -> scale -> relu: 1 kernel");
    CHECK(kernels_of(ctx, m_cycle, &in_x, 1, GCR_F32, GCR_NCHW, NULL) == 3, "cycle refused: 3 kernels");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 0, 1, "reduce");
    CHECK(kernels_of(ctx, m_reduce_fuse, &in_x, 1, GCR_F32, GCR_NCHW, NULL) == 3, "skip_fuse=reduce: 3 kernels");
    gcr_ctx_destroy(ctx);
}

static void test_linear(void)
{
    cu_input ins[] = {{3, {2, 3, 7}, 0, 0, 0}, {2, {5, 7}, 1, 0, 0}, {1, {5}, 1, 0, 0}, {3, {2, 3, 5}, 0, 0, 0}};
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    CHECK(kernels_of(ctx, m_linear_relu, ins, 4, GCR_F32, GCR_NCHW, NULL) == 1, "linear + relu + add: 1 kernel");
    CHECK(kernels_of(ctx, m_linear_relu, ins, 4, GCR_F16, GCR_NCHW, NULL) == 1, "f16 too");
    gcr_ctx_destroy(ctx);
}

static void test_horizontal_single(void)
{
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    CHECK(kernels_of(ctx, m_siblings, &in_x, 1, GCR_F32, GCR_NCHW, NULL) == 1, "horizontal: siblings merge");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 0, 0, NULL);
    int groups;
    CHECK(kernels_of(ctx, m_siblings, &in_x, 1, GCR_F32, GCR_NCHW, &groups) == 2, "horizontal=0: 2 kernels");
    CHECK(groups == 0, "lone ops run eagerly");
    gcr_ctx_destroy(ctx);
    ctx = ctx_knobs(1, 1, 0, NULL);
    CHECK(kernels_of(ctx, m_siblings, &in_x, 1, GCR_F32, GCR_NCHW, &groups) == 2, "single_node: 2 kernels");
    CHECK(groups == 0, "a 1-op kernel is not a fused group");
    gcr_ctx_destroy(ctx);
}

/* kernels for n siblings of one shape, each reading the shared x and a weight of its own and
 * writing an output: one kernel without an operand budget, else as few as the budget allows
 * (a kernel of k siblings takes x, k weights and k outputs) */
static int sibling_kernels(const gcr_graph *g, int n)
{
    int own = g && g->cur ? g->cur->ir->budget.own : 0;
    int per = own > 0 ? (own - 1) / 2 : n;
    return (n + per - 1) / per;
}

/* 300 siblings reading one value over its shape and 40 over a broadcast shape: the horizontal pass
 * merges each set into one kernel per shape (CPU), or into as few as the backend's operand budget
 * allows (CUDA: 64 data pointers a kernel), without trying every pair; every output equals eager
 * on fresh data */
static void test_many_siblings(void)
{
    enum { NA = 300, NB = 40, N = NA + NB };
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    int64_t sx[2] = {3, 5}, sb[3] = {4, 3, 5};
    gcr_tensor *x = gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, 2, sx, GCR_NCHW, -2, 2));
    gcr_tensor *w[N], *y[N];
    for (int i = 0; i < N; i++)
        w[i] = gcr_tensor_set_const(gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, i < NA ? 2 : 3, i < NA ? sx : sb, GCR_NCHW, -2, 2)));
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    for (int i = 0; i < N; i++) y[i] = i % 2 ? gcr_add(ctx, x, w[i]) : gcr_mul(ctx, x, w[i]);
    OK(ctx, gcr_capture_end(ctx, &g));
    int want = sibling_kernels(g, NA) + sibling_kernels(g, NB);
    CHECK(cu_kernels(g) == want, "%d + %d siblings over two shapes: %d kernels, want %d", NA, NB, cu_kernels(g), want);
    for (int it = 0; it < 2 && g; it++) {
        if (it) {
            cu_refill(x, 0);
            OK(ctx, gcr_graph_replay(g));
        }
        int bad = 0;
        for (int i = 0; i < N; i++) {
            uint64_t sc = gcr_scope_begin(ctx);
            gcr_tensor *r = i % 2 ? gcr_add(ctx, x, w[i]) : gcr_mul(ctx, x, w[i]);
            float *a = h_read(y[i]), *b = h_read(r);
            for (int64_t e = 0; e < gcr_tensor_numel(r); e++) bad += !(fabsf(a[e] - b[e]) <= 1e-6f * (1 + fabsf(b[e])));
            free(a);
            free(b);
            gcr_scope_end(ctx, sc);
        }
        CHECK(bad == 0, "iteration %d: %d elements of the %d outputs differ from eager", it, bad, N);
    }
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- the operand budget
 * A backend's generated kernels take a bounded number of data pointers (CUDA: 64 for a kernel of
 * its own, 32 extra for a hooked conv's prologue and epilogue). The IR carries that budget; here a
 * CPU trace is fused as a CUDA one would be, and codegen (text only) must accept every fused
 * kernel: one past the budget fails to compile, and the graph then runs its group op by op. */

/* a kept tensor of fresh values; constant (a weight) or an input */
static gcr_tensor *bm_tensor(gcr_ctx *ctx, int nd, const int64_t *shape, int constant)
{
    gcr_tensor *t = gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, nd, shape, GCR_NCHW, -2, 2));
    return constant ? gcr_tensor_set_const(t) : t;
}

/* captures y = head(x) + w[0] + ... + w[n-1] with n constant weights of shape s (nd dims); head is
 * a conv2d by a [4,2,3,3] weight, a mean over axis 2, or nothing */
typedef enum { BM_NONE, BM_CONV, BM_MEAN } bm_head;
static gcr_graph *bm_add_chain(gcr_ctx *ctx, gcr_tensor *x, bm_head head, int n, int nd, const int64_t *s)
{
    gcr_tensor *w[128], *cw = head == BM_CONV ? bm_tensor(ctx, 4, (int64_t[]){4, 2, 3, 3}, 1) : NULL;
    for (int i = 0; i < n; i++) w[i] = bm_tensor(ctx, nd, s, 1);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_conv2d_params p = gcr_conv2d_default();
    gcr_tensor *y = head == BM_CONV ? gcr_conv2d(ctx, x, cw, NULL, &p) : head == BM_MEAN ? gcr_mean(ctx, x, (int[]){2}, 1, 0) : x;
    for (int i = 0; i < n; i++) y = gcr_add(ctx, y, w[i]);
    OK(ctx, gcr_capture_end(ctx, &g));
    return g;
}

/* 300 siblings of x [3,5] over its shape and 40 over [4,3,5] (as test_many_siblings) */
static gcr_graph *bm_siblings(gcr_ctx *ctx)
{
    gcr_tensor *x = bm_tensor(ctx, 2, (int64_t[]){3, 5}, 0), *w[340];
    for (int i = 0; i < 340; i++)
        w[i] = i < 300 ? bm_tensor(ctx, 2, (int64_t[]){3, 5}, 1) : bm_tensor(ctx, 3, (int64_t[]){4, 3, 5}, 1);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    for (int i = 0; i < 340; i++) gcr_add(ctx, x, w[i]);
    OK(ctx, gcr_capture_end(ctx, &g));
    return g;
}

/* a chain of 100 adds, each of its own weight: 102 operands in one group */
static gcr_graph *bm_chain(gcr_ctx *ctx)
{
    int64_t s[2] = {3, 5};
    return bm_add_chain(ctx, bm_tensor(ctx, 2, s, 0), BM_NONE, 100, 2, s);
}

/* conv2d [1,2,5,5] -> [1,4,3,3], then 40 adds: an epilogue of 42 extra parameters */
static gcr_graph *bm_conv(gcr_ctx *ctx)
{
    return bm_add_chain(ctx, bm_tensor(ctx, 4, (int64_t[]){1, 2, 5, 5}, 0), BM_CONV, 40, 4, (int64_t[]){1, 4, 3, 3});
}

/* mean of [4,3,5] over its last axis, then 70 adds over [4,3]: a reduction of 73 operands */
static gcr_graph *bm_mean(gcr_ctx *ctx)
{
    return bm_add_chain(ctx, bm_tensor(ctx, 3, (int64_t[]){4, 3, 5}, 0), BM_MEAN, 70, 2, (int64_t[]){4, 3});
}

/* Fuses a copy of g's trace under budget b and returns its kernel count; under a budget,
 * codegen must accept every fused kernel, within it. */
static int kernels_in_budget(const gcr_graph *g, gcr_operand_budget b, const char *what)
{
    gcr_ir *ir = gcr_ir_copy(g->trace);
    if (!CHECK(ir != NULL, "%s: copy of the trace", what)) return -1;
    ir->budget = b;
#ifdef GCR_HAVE_CUDA
    ir->convconv = gcr_cuda_backend_get()->convconv; /* the pairs CUDA codegen is asked for */
#endif
    int n = -1;
    if (CHECK(gcr_ir_optimize(ir) == GCR_OK, "%s: optimize: %s", what, gcr_ctx_error(g->ctx))) n = ir->n_kernels;
    for (int k = 0; n >= 0 && b.own > 0 && k < ir->n_kernels; k++) {
        if (ir->kernels[k].type != GCR_K_FUSED) continue;
        gcr_cg_kernel cg;
        gcr_status s = gcr_codegen_kernel(ir, k, &cg);
        int max = cg.type == GCR_CG_HOOKED ? b.hooked : b.own;
        CHECK(s == GCR_OK && cg.n_params <= max, "%s: codegen of %s: %s, %d parameters (budget %d) %s", what,
              ir->kernels[k].name, gcr_status_name(s), cg.n_params, max, cg.why);
        gcr_cg_kernel_free(&cg);
    }
    gcr_ir_free(ir);
    return n;
}

/* the fuser keeps every kernel within the IR's operand budget, in as few kernels as it takes */
static void test_operand_budget(void)
{
    if (cu_dev != GCR_DEVICE_CPU) return; /* the budget is set on the IR by hand: one device will do */
    /* kernels under CUDA's budget (64 own, 32 hooked) and without one: siblings in kernels of
     * 31 (x, 31 weights, 31 outputs): 10 + 2; the chain: 62 + 38 adds; the conv alone + its 40
     * adds (42 > 32 extras, 42 <= 64 on their own); the mean alone + 62 + 8 adds */
    static const struct {
        const char *what;
        gcr_graph *(*model)(gcr_ctx *ctx);
        int budgeted, unlimited;
    } cases[] = {{"siblings", bm_siblings, 12, 2}, {"chain", bm_chain, 2, 1}, {"conv epilogue", bm_conv, 2, 1},
                 {"mean epilogue", bm_mean, 3, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
        gcr_graph *g = cases[i].model(ctx);
        if (g) {
            gcr_operand_budget cuda = {GCR_CUDA_KERNEL_PARAMS, GCR_CUDA_HOOK_PARAMS}, none = {0, 0};
            int nb = kernels_in_budget(g, cuda, cases[i].what), nu = kernels_in_budget(g, none, cases[i].what);
            CHECK(nb == cases[i].budgeted, "%s: %d kernels within the budget, want %d", cases[i].what, nb, cases[i].budgeted);
            CHECK(nu == cases[i].unlimited, "%s: %d kernels without a budget, want %d", cases[i].what, nu, cases[i].unlimited);
        }
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

/* every model of fused_models.h fused under budgets of 1 to 8 operands: each fused kernel must
 * generate within the budget, which it would pass where the fuser counts fewer than codegen */
static void test_budget_sweep(void)
{
    if (cu_dev != GCR_DEVICE_CPU) return;
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    for (int c = 0; c < FM_N_CASES; c++) {
        const fm_case *m = &fm_cases[c];
        if (!strcmp(m->name, FM_REFUSED)) continue;
        for (int f = 0; f < 2; f++) {
            gcr_tensor *in[CU_MAX], *base[CU_MAX], *out[CU_MAX];
            for (int i = 0; i < m->n_in; i++) in[i] = cu_make(ctx, &m->in[i], GCR_F32, f ? GCR_NHWC : GCR_NCHW, &base[i]);
            gcr_graph *g = NULL;
            OK(ctx, gcr_capture_begin(ctx));
            m->fn(ctx, in, out);
            OK(ctx, gcr_capture_end(ctx, &g));
            for (int b = 1; g && b <= 8; b++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s, budget %d", m->name, f ? "nhwc" : "nchw", b);
                kernels_in_budget(g, (gcr_operand_budget){b, b}, what);
            }
            gcr_graph_destroy(g);
            for (int i = 0; i < m->n_in; i++) {
                gcr_tensor_free(in[i]);
                gcr_tensor_free(base[i]);
            }
        }
    }
    gcr_ctx_destroy(ctx);
}

/* the plan shares arena bytes between intermediates whose lifetimes do not overlap */
static void test_plan(void)
{
    gcr_ctx *ctx = ctx_knobs(0, 0, 1, NULL);
    gcr_tensor *in[CU_MAX];
    gcr_graph *g = cu_check(ctx, m_hswish, &in_x, 1, GCR_F32, GCR_NCHW, 1, 1e-5f, in);
    gcr_graph_stats st;
    OK(ctx, gcr_graph_get_stats(g, &st));
    size_t one = (size_t)2 * 5 * 7 * 9 * 4;
    CHECK(st.intermediate_bytes >= 3 * one, "3 intermediates counted: %zu", st.intermediate_bytes);
    CHECK(st.arena_bytes < st.intermediate_bytes && st.arena_bytes >= 2 * one, "arena %zu reuses (intermediates %zu)",
          st.arena_bytes, st.intermediate_bytes);
    CHECK(st.ops_traced == 4 && st.variants == 1, "stats: ops %d variants %d", st.ops_traced, st.variants);
    size_t n = gcr_graph_describe(g, NULL, 0);
    char *s = malloc(n);
    CHECK(gcr_graph_describe(g, s, n) == n && strstr(s, "clamp"), "describe names the ops");
    free(s);
    gcr_graph_destroy(g);
    gcr_tensor_free(in[0]);
    gcr_ctx_destroy(ctx);
}

/* the CPU executor, except that every fused kernel of two or more ops fails to build, as a failed
 * compile would */
static gcr_status refusing_build(gcr_exec_job *j, int *failed_kernel)
{
    for (int k = 0; k < j->ir->n_kernels; k++)
        if (j->ir->kernels[k].type == GCR_K_FUSED && j->ir->kernels[k].n_nodes >= 2) {
            *failed_kernel = k;
            return gcr_set_error(j->ctx, GCR_ERR_COMPILE, "test: refusing %s", j->ir->kernels[k].name);
        }
    return gcr_cpu_executor.build(j, failed_kernel);
}

/* a fused kernel that fails to build falls back to unfused kernels for that group (CPU: an
 * executor that refuses fused kernels plays the failing compiler) */
static void test_compile_fallback(void)
{
    if (cu_dev != GCR_DEVICE_CPU) return;
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    gcr_executor refusing = gcr_cpu_executor;
    refusing.build = refusing_build;
    gcr_exec_force(ctx, &refusing);
    int groups;
    CHECK(kernels_of(ctx, m_hswish, &in_x, 1, GCR_F32, GCR_NCHW, &groups) == 4, "split into 4 eager kernels");
    CHECK(groups == 0 && gcr_ctx_status(ctx) == GCR_OK, "no fused group left, no error: %s", gcr_ctx_error(ctx));
    CHECK(kernels_of(ctx, m_se, (cu_input[]){{4, {2, 16, 5, 5}, 0, 0, 0}, {4, {4, 16, 1, 1}, 1, 0, 0},
                                             {1, {4}, 1, 0, 0}, {4, {16, 4, 1, 1}, 1, 0, 0}, {1, {16}, 1, 0, 0},
                                             {4, {8, 16, 1, 1}, 1, 0, 0}}, 6, GCR_F32, GCR_NCHW, &groups) == 9,
          "every group split: 9 kernels");
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- expand (stride-0 inputs) */

/* a pointwise chain over in[0] [2,5,7,9] reading in[1] [5,1,9] broadcast by expand (stride 0 on
 * dims 0 and 2), with gelu; a second output reads only the expand */
static int m_expand_chain(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *e = gcr_expand(ctx, in[1], 4, (int64_t[]){2, 5, 7, 9});
    out[0] = gcr_gelu(ctx, gcr_add(ctx, gcr_mul(ctx, in[0], e), e));
    out[1] = gcr_relu(ctx, e);
    return 2;
}

/* the composites: a copy of the expand, then pointwise over the copy */
static int m_repeat_upsample(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    out[0] = gcr_relu(ctx, gcr_repeat(ctx, in[0], 4, (int64_t[]){1, 2, 1, 3}));
    out[1] = gcr_add_scalar(ctx, gcr_upsample_nearest2d(ctx, in[0], 2, 3), 1.0f);
    return 2;
}

static void test_expand(void)
{
    gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
    gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int t = 0; t < 3; t++)
        for (int p = 0; p < 2; p++) { /* in[1] dense, then a permuted view */
            cu_input ins[] = {in_x, {3, {5, 1, 9}, 0, p, 0}};
            int k = kernels_of(ctx, m_expand_chain, ins, 2, dts[t], GCR_NCHW, NULL);
            CHECK(k == 1, "mul, add, gelu and relu over an expand: 1 kernel (%s%s), got %d", gcr_dtype_name(dts[t]),
                  p ? ", permuted" : "", k);
        }
    for (int f = 0; f < 2; f++)
        for (int p = 0; p < 2; p++) {
            cu_input in = {4, {2, 5, 7, 9}, 0, p, 0};
            kernels_of(ctx, m_repeat_upsample, &in, 1, GCR_F32, f ? GCR_NHWC : GCR_NCHW, NULL);
        }
    gcr_ctx_destroy(ctx);
}

/* Values a generated kernel would compute otherwise, replayed as eager runs them (fused, and with
 * single_node): integer casts past 2^24, exact and wrapping where they narrow (generated kernels
 * compute in float, so such nodes stay on the backend's kernels), and a -0.0 scalar, whose sign
 * rsqrt shows (the CPU executor kept a splat of +0.0 for it) */
static void test_exact_values(void)
{
    static const int64_t big[4] = {4294967297LL, 9007199254740993LL, 33554433, -33554433};
    static const float fx[4] = {1, 2, 3, 4};
    for (int single = 0; single <= 1; single++) {
        gcr_ctx *ctx = ctx_knobs(1, single, 1, NULL);
        gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_I64, 1, (int64_t[]){4}, GCR_NCHW, big);
        gcr_tensor *f = gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){4}, GCR_NCHW, fx);
        gcr_tensor *want = gcr_cast(ctx, gcr_cast(ctx, x, GCR_I32), GCR_I64);
        int64_t hw[4] = {0};
        OK(ctx, gcr_tensor_to_host(want, hw, sizeof hw));
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = gcr_cast(ctx, gcr_cast(ctx, x, GCR_I32), GCR_I64);
        gcr_tensor *z = gcr_rsqrt(ctx, gcr_mul_scalar(ctx, f, -0.0f));
        OK(ctx, gcr_capture_end(ctx, &g));
        for (int it = 0; it < 2 && g; it++) {
            if (it) OK(ctx, gcr_graph_replay(g));
            int64_t hy[4] = {0};
            float hz[4] = {0};
            OK(ctx, gcr_tensor_to_host(y, hy, sizeof hy));
            OK(ctx, gcr_tensor_to_host(z, hz, sizeof hz));
            for (int i = 0; i < 4; i++) {
                CHECK(hy[i] == hw[i], "single_node %d pass %d: cast i64->i32->i64 of %lld: %lld, eager %lld", single, it,
                      (long long)big[i], (long long)hy[i], (long long)hw[i]);
                CHECK(isinf(hz[i]) && signbit(hz[i]), "single_node %d pass %d: rsqrt(%g * -0.0) = %g, want -inf", single, it,
                      (double)fx[i], (double)hz[i]);
            }
        }
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

/* conv -> batch_norm whose folded weights or bias leave the dtype's range stays unfolded, so the
 * replay has eager's values: f16 with mean 300 and var 0 (a folded bias of -94868, past f16's
 * 65504: -inf everywhere when folded), and f32 with var + eps = 0 (an infinite scale: NaN folded,
 * where eager gives +-inf) */
static void test_fold_out_of_range(void)
{
    static const float xs[3] = {300.0f, 300.25f, 299.75f}, xs0[3] = {2.0f, 0.5f, 1.0f};
    for (int c = 0; c < 2; c++) {
        gcr_ctx *ctx = ctx_knobs(1, 0, 1, NULL);
        const gcr_dtype dt = c ? GCR_F32 : GCR_F16;
        const float mean = c ? 1.0f : 300.0f, eps = c ? 0.0f : 1e-5f;
        const int64_t xsh[4] = {1, 1, 1, 3}, one[4] = {1, 1, 1, 1}, ch[1] = {1};
        gcr_tensor *x = gcr_cast(ctx, gcr_tensor_from_data(ctx, GCR_F32, 4, xsh, GCR_NCHW, c ? xs0 : xs), dt);
        gcr_tensor *w = gcr_tensor_set_const(gcr_cast(ctx, gcr_tensor_from_data(ctx, GCR_F32, 4, one, GCR_NCHW, (float[]){1}), dt));
        gcr_tensor *bn[4];
        const float bnv[4] = {mean, 0.0f, 1.0f, 0.0f}; /* mean, var, gamma, beta */
        for (int k = 0; k < 4; k++)
            bn[k] = gcr_tensor_set_const(gcr_cast(ctx, gcr_tensor_from_data(ctx, GCR_F32, 1, ch, GCR_NCHW, &bnv[k]), dt));
        gcr_conv2d_params p = gcr_conv2d_default();
        gcr_tensor *want = gcr_batch_norm(ctx, gcr_conv2d(ctx, x, w, NULL, &p), bn[0], bn[1], bn[2], bn[3], eps);
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = gcr_batch_norm(ctx, gcr_conv2d(ctx, x, w, NULL, &p), bn[0], bn[1], bn[2], bn[3], eps);
        OK(ctx, gcr_capture_end(ctx, &g));
        float *a = h_read(y), *e = h_read(want);
        for (int i = 0; a && e && i < 3; i++)
            CHECK(a[i] == e[i] || (isnan(a[i]) && isnan(e[i])), "%s conv + batch_norm (mean %g, var 0, eps %g): x %g gives %g, eager %g",
                  gcr_dtype_name(dt), (double)mean, (double)eps, (double)(c ? xs0 : xs)[i], (double)a[i], (double)e[i]);
        free(a);
        free(e);
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

/* ---------------------------------------------------------------- conv -> conv */

/* the dw -> 1x1 pair of fm_dwpw with the depthwise result also a graph output: must not fuse */
static int m_dwpw_out(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 1);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    out[0] = gcr_hardswish(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], &d));
    gcr_graph_output(ctx, out[0]);
    out[1] = gcr_conv2d(ctx, out[0], in[3], in[4], NULL);
    return 2;
}

/* the depthwise result read twice (the 1x1 conv and a mean): must not fuse */
static int m_dwpw_two_readers(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 1);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    int ax[2] = {2, 3};
    gcr_tensor *h = gcr_relu(ctx, gcr_conv2d(ctx, in[0], in[1], in[2], &d));
    out[0] = gcr_conv2d(ctx, h, in[3], in[4], NULL);
    out[1] = gcr_mean(ctx, h, ax, 2, 1);
    return 2;
}

/* a second conv that is no plain 1x1 (stride 2; 3x3) or a first that is no depthwise: no pair */
static int m_not_pairs(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(1, 1), s2 = fm_conv(0, 2), k3 = fm_conv(1, 1);
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    out[0] = gcr_conv2d(ctx, gcr_relu(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &d)), in[3], NULL, &s2);
    out[1] = gcr_conv2d(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &d), in[6], NULL, &k3);
    out[2] = gcr_conv2d(ctx, gcr_conv2d(ctx, in[0], in[5], NULL, NULL), in[3], NULL, NULL);
    return 3;
}

/* depthwise 3x3 with dilation 24 -> 1x1 conv: CUDA's pair kernel refuses its halo (past shared
 * memory), so the build runs the two apart */
static int m_dwpw_far(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params d = fm_conv(24, 1);
    d.dilation[0] = d.dilation[1] = 24;
    d.groups = (int)gcr_tensor_dim(in[0], 1);
    out[0] = gcr_conv2d(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &d), in[2], NULL, NULL);
    return 1;
}

/* 1 when ctx's backend runs a pair of form (GCR_CONVCONV_DW_PW, GCR_CONVCONV_PW_DW) with a
 * depthwise conv over c channels, into o outputs, as one kernel */
static int pair_form_fuses(gcr_ctx *ctx, unsigned form, gcr_dtype dt, gcr_format fmt, int64_t c, int64_t o)
{
    const gcr_convconv_caps *cc = &ctx->be->convconv;
    return (cc->forms & form) && (cc->dtypes >> dt & 1u) && (!cc->channels_last || fmt == GCR_NHWC) &&
           c % cc->c_align == 0 && (cc->max_out <= 0 || cc->max_out >= o);
}

/* the same for a depthwise conv into a 1x1 conv of at most 200 outputs (the models here) */
static int pair_fuses(gcr_ctx *ctx, gcr_dtype dt, gcr_format fmt, int64_t c)
{
    return pair_form_fuses(ctx, GCR_CONVCONV_DW_PW, dt, fmt, c, 200);
}

/* a ctx with fusion on, GCR_CONVCONV set to convconv (1: wherever the backend has the kernel) and
 * heuristics only (GCR_AUTOTUNE=0: no pair is measured) */
static gcr_ctx *ctx_convconv(int convconv, const char *skip)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = cu_dev;
    o.knobs.fusion = 1;
    o.knobs.autotune = 0;
    o.knobs.convconv = convconv;
    o.knobs.skip_fuse = skip;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) CHECK(0, "ctx");
    return ctx;
}

static void test_convconv(void)
{
    gcr_ctx *ctx = ctx_convconv(1, NULL);
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int c = 0; c < FM_N_CASES; c++) {
        const fm_case *m = &fm_cases[c];
        if (strncmp(m->name, FM_CONVCONV, strlen(FM_CONVCONV)) != 0) continue;
        for (int t = 0; t < 3; t++)
            for (int f = 0; f < 2; f++) {
                gcr_format fmt = f ? GCR_NHWC : GCR_NCHW;
                int want = 2 - pair_fuses(ctx, dts[t], fmt, m->in[0].shape[1]);
                int k = kernels_of(ctx, m->fn, m->in, m->n_in, dts[t], fmt, NULL);
                CHECK(k == want, "%s %s %s: %d kernels, want %d", m->name, gcr_dtype_name(dts[t]), f ? "nhwc" : "nchw", k, want);
            }
    }
    /* pointwise -> depthwise, alone (its depthwise channels: the 1x1 weight's outputs) and in an
     * inverted-residual block, where one pair fuses: pointwise -> depthwise first, else depthwise
     * -> pointwise (of 24 outputs) */
    for (int c = 0; c < FM_N_CASES; c++) {
        const fm_case *m = &fm_cases[c];
        if (strncmp(m->name, FM_PWDW, strlen(FM_PWDW)) != 0) continue;
        const bool block = !strcmp(m->name, "pwdwpw");
        const int64_t mid = m->in[1].shape[0];
        for (int t = 0; t < 3; t++)
            for (int f = 0; f < 2; f++) {
                gcr_format fmt = f ? GCR_NHWC : GCR_NCHW;
                int pw_dw = pair_form_fuses(ctx, GCR_CONVCONV_PW_DW, dts[t], fmt, mid, mid);
                int want = block ? 3 - (pw_dw || pair_form_fuses(ctx, GCR_CONVCONV_DW_PW, dts[t], fmt, mid, 24)) : 2 - pw_dw;
                int k = kernels_of(ctx, m->fn, m->in, m->n_in, dts[t], fmt, NULL);
                CHECK(k == want, "%s %s %s: %d kernels, want %d", m->name, gcr_dtype_name(dts[t]), f ? "nhwc" : "nchw", k, want);
            }
    }
    gcr_ctx_destroy(ctx);
    /* odd channel counts (13 in, 7 out), on the backends that take them */
    cu_input odd[] = {{4, {2, 13, 6, 5}, 0, 0, 0}, {4, {13, 1, 3, 3}, 1, 0, 0}, {1, {13}, 1, 0, 0}, {4, {7, 13, 1, 1}, 1, 0, 0},
                      {1, {7}, 1, 0, 0}, {4, {2, 7, 6, 5}, 0, 0, 0}};
    ctx = ctx_convconv(1, NULL);
    for (int f = 0; f < 2; f++) {
        gcr_format fmt = f ? GCR_NHWC : GCR_NCHW;
        int k = kernels_of(ctx, fm_dwpw, odd, 6, GCR_F32, fmt, NULL);
        CHECK(k == 2 - pair_fuses(ctx, GCR_F32, fmt, 13), "13 -> 7 channels f32 %s: %d kernels", f ? "nhwc" : "nchw", k);
    }
    /* what must stay apart: a depthwise result that is a graph output or has a second reader, and
     * pairs of other shapes (2 + 2 + 2 kernels; the plain 1x1 after a 1x1 has nothing to pair with) */
    cu_input ins[] = {{4, {2, 16, 9, 11}, 0, 0, 0}, {4, {16, 1, 3, 3}, 1, 0, 0}, {1, {16}, 1, 0, 0},
                      {4, {12, 16, 1, 1}, 1, 0, 0}, {1, {12}, 1, 0, 0}, {4, {16, 16, 1, 1}, 1, 0, 0},
                      {4, {12, 16, 3, 3}, 1, 0, 0}};
    for (int t = 0; t < 3; t++) {
        CHECK(kernels_of(ctx, m_dwpw_out, ins, 5, dts[t], GCR_NHWC, NULL) == 2, "%s: a depthwise result that is an output: 2 kernels",
              gcr_dtype_name(dts[t]));
        CHECK(kernels_of(ctx, m_dwpw_two_readers, ins, 5, dts[t], GCR_NHWC, NULL) == 3,
              "%s: a depthwise result read twice: 3 kernels", gcr_dtype_name(dts[t]));
        CHECK(kernels_of(ctx, m_not_pairs, ins, 7, dts[t], GCR_NHWC, NULL) == 6, "%s: no pair of other shapes: 6 kernels",
              gcr_dtype_name(dts[t]));
    }
    gcr_ctx_destroy(ctx);
    /* a pair the backend offers but its kernel cannot take: the CPU executor runs it as one; on
     * CUDA the launcher refuses the halo at build, and the graph runs the two convs apart, right */
    ctx = ctx_convconv(1, NULL);
    cu_input far[] = {{4, {1, 16, 60, 60}, 0, 0, 0}, {4, {16, 1, 3, 3}, 1, 0, 0}, {4, {24, 16, 1, 1}, 1, 0, 0}};
    int k_far = kernels_of(ctx, m_dwpw_far, far, 3, GCR_F16, GCR_NHWC, NULL);
    CHECK(k_far == (cu_dev == GCR_DEVICE_CPU ? 1 : 2), "dilation 24 on %s: %d kernels", ctx->be->name, k_far);
    gcr_ctx_destroy(ctx);
    /* the knobs: GCR_SKIP_FUSE=convconv and GCR_CONVCONV=0 turn it off; by default (2) it fuses
     * where the backend counts its kernel the faster: always on the CPU (no answer to ask), never
     * on CUDA with heuristics only (test_cuda_convconv measures) */
    const cu_input *dwpw = NULL;
    for (int c = 0; c < FM_N_CASES; c++)
        if (!strcmp(fm_cases[c].name, "dwpw")) dwpw = fm_cases[c].in;
    ctx = ctx_convconv(1, "ConvConv");
    CHECK(kernels_of(ctx, fm_dwpw, dwpw, 6, GCR_F16, GCR_NHWC, NULL) == 2, "skip_fuse=convconv: 2 kernels");
    gcr_ctx_destroy(ctx);
    ctx = ctx_convconv(0, NULL);
    CHECK(kernels_of(ctx, fm_dwpw, dwpw, 6, GCR_F16, GCR_NHWC, NULL) == 2, "convconv=0: 2 kernels");
    gcr_ctx_destroy(ctx);
    ctx = ctx_convconv(-1, NULL);
    int want = 2 - (pair_fuses(ctx, GCR_F16, GCR_NHWC, 16) && !ctx->be->convconv.faster);
    CHECK(kernels_of(ctx, fm_dwpw, dwpw, 6, GCR_F16, GCR_NHWC, NULL) == want, "convconv by default on %s: %d kernels",
          ctx->be->name, want);
    gcr_ctx_destroy(ctx);
}

/* a backend's answer to "is the pair kernel the faster" (gcr_convconv_caps.faster) for
 * test_convconv_asked: yes for depthwise convs of 16 channels only; counts the questions */
static int asked;
static bool faster_if_16(gcr_ctx *ctx, const gcr_convconv_pair *p)
{
    (void)ctx;
    asked++;
    return p->form == GCR_CONVCONV_DW_PW && p->mid.shape[1] == 16 && p->wd.shape[0] == 16 && p->y.shape[1] == 12;
}

/* GCR_CONVCONV's default asks the backend about each pair, last of all the rules (it may measure
 * to answer, so a pair that cannot fuse costs nothing), and does as it answers; 1 and
 * GCR_SKIP_FUSE=convconv never ask. The ctx runs a copy of its backend whose caps carry the
 * answer above. */
static void test_convconv_asked(void)
{
    const cu_input *dwpw = NULL, *wide = NULL;
    for (int c = 0; c < FM_N_CASES; c++) {
        if (!strcmp(fm_cases[c].name, "dwpw")) dwpw = fm_cases[c].in;
        if (!strcmp(fm_cases[c].name, "dwpw_wide")) wide = fm_cases[c].in;
    }
    cu_input ins[] = {{4, {2, 16, 9, 11}, 0, 0, 0}, {4, {16, 1, 3, 3}, 1, 0, 0}, {1, {16}, 1, 0, 0},
                      {4, {12, 16, 1, 1}, 1, 0, 0}, {1, {12}, 1, 0, 0}};
    const char *skips[3] = {NULL, NULL, "convconv"};
    const int knobs[3] = {2, 1, 2};
    for (int v = 0; v < 3; v++) {
        gcr_ctx *ctx = ctx_convconv(knobs[v], skips[v]);
        if (!ctx) return;
        const gcr_backend *be = ctx->be;
        gcr_backend asking = *be;
        asking.convconv.faster = faster_if_16;
        ctx->be = &asking;
        const int takes = pair_fuses(ctx, GCR_F16, GCR_NHWC, 16), ask = v == 0 && takes;
        const char *what = v == 0 ? "GCR_CONVCONV=2" : v == 1 ? "GCR_CONVCONV=1" : "GCR_SKIP_FUSE=convconv";
        asked = 0;
        int k = kernels_of(ctx, fm_dwpw, dwpw, 6, GCR_F16, GCR_NHWC, NULL);
        CHECK(k == 2 - (takes && v < 2) && (asked > 0) == ask, "%s: 16 channels: %d kernels, asked %d times", what, k, asked);
        asked = 0;
        k = kernels_of(ctx, fm_dwpw_wide, wide, 3, GCR_F16, GCR_NHWC, NULL);
        CHECK(k == 2 - (takes && v == 1) && (asked > 0) == ask, "%s: 1024 channels: %d kernels, asked %d times", what, k,
              asked);
        /* pairs that cannot fuse: never asked */
        asked = 0;
        k = kernels_of(ctx, m_dwpw_out, ins, 5, GCR_F16, GCR_NHWC, NULL);
        CHECK(k == 2 && asked == 0, "%s: a depthwise result that is an output: %d kernels, asked %d times", what, k, asked);
        k = kernels_of(ctx, m_dwpw_two_readers, ins, 5, GCR_F16, GCR_NHWC, NULL);
        CHECK(k == 3 && asked == 0, "%s: a depthwise result read twice: %d kernels, asked %d times", what, k, asked);
        ctx->be = be;
        gcr_ctx_destroy(ctx);
    }
}

static void all(void)
{
    RUN(test_exact_values);
    RUN(test_fold_out_of_range);
    RUN(test_hardswish);
    RUN(test_conv_bn_hswish);
    RUN(test_two_outputs);
    RUN(test_se);
    RUN(test_chain);
    RUN(test_reduction);
    RUN(test_linear);
    RUN(test_horizontal_single);
    RUN(test_many_siblings);
    RUN(test_operand_budget);
    RUN(test_budget_sweep);
    RUN(test_plan);
    RUN(test_compile_fallback);
    RUN(test_expand);
    RUN(test_convconv);
    RUN(test_convconv_asked);
}

int main(void)
{
    h_seed(99);
    cu_each_device(all);
    return h_finish();
}
