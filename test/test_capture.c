/* test_capture.c — explicit capture and replay: the trace records and runs nothing, reading a
 * traced tensor fails, nesting fails, and replay equals eager over many iterations with fresh
 * data for chains, DAGs with shared intermediates, broadcasts, reductions, conv/linear/matmul,
 * views and non-contiguous inputs, in every float dtype and both memory formats, fused and not. */
#include "capture_util.h"
#include "../lib/exec.h"

/* the executor run_model forces on its contexts (NULL: each backend's own) */
static const gcr_executor *forced;

static gcr_device devs[] = {GCR_DEVICE_CPU, GCR_DEVICE_CUDA};

/* ---------------------------------------------------------------- models */

static int m_chain(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *a = gcr_mul_scalar(ctx, in[0], 1.5f);
    gcr_tensor *b = gcr_add_scalar(ctx, a, 0.25f);
    gcr_tensor *c = gcr_relu(ctx, b);
    gcr_tensor *d = gcr_tanh(ctx, c);
    out[0] = gcr_sub(ctx, d, in[0]);
    return 1;
}

static int m_dag(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *a = gcr_add(ctx, in[0], in[1]);     /* [N,C,H,W] + [C,1,1] */
    gcr_tensor *s = gcr_sigmoid(ctx, a);
    out[0] = gcr_mul(ctx, a, s);                     /* a read twice */
    gcr_graph_output(ctx, out[0]);                   /* also consumed below */
    out[1] = gcr_maximum(ctx, s, in[2]);             /* [1,C,1,1] broadcast */
    int ax[2] = {2, 3};
    out[2] = gcr_mean(ctx, out[0], ax, 2, 1);        /* an output that is also consumed */
    return 3;
}

static int m_reduce(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *e = gcr_hardswish(ctx, in[0]);
    int ax[2] = {2, 3};
    gcr_tensor *m = gcr_mean(ctx, e, ax, 2, 0);      /* [N,C] */
    out[0] = gcr_softmax(ctx, m, 1);
    int ax1 = 1;
    out[1] = gcr_max(ctx, in[0], &ax1, 1, 1);
    out[2] = gcr_sum(ctx, in[0], NULL, 0, 0);
    return 3;
}

static int m_conv(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    gcr_tensor *y = gcr_conv2d(ctx, in[0], in[1], in[2], &p);
    gcr_tensor *z = gcr_hardswish(ctx, y);
    gcr_tensor *r = gcr_add(ctx, z, in[0]);          /* residual */
    p = gcr_conv2d_default();
    p.groups = 4;                                    /* grouped 1x1 with prologue */
    gcr_tensor *s = gcr_relu6(ctx, r);
    out[0] = gcr_conv2d(ctx, s, in[3], NULL, &p);
    return 1;
}

static int m_linear(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *h = gcr_linear(ctx, in[0], in[1], in[2]);  /* [B,T,K] x [N,K] */
    gcr_tensor *a = gcr_silu(ctx, h);
    gcr_tensor *t = gcr_permute(ctx, in[3], (int[]){1, 0}); /* [N,M] view */
    out[0] = gcr_matmul(ctx, a, t);
    out[1] = gcr_mul_scalar(ctx, h, 0.5f);
    return 2;
}

static int m_views(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_tensor *p = gcr_permute(ctx, in[0], (int[]){0, 2, 3, 1}); /* NHWC-ordered view */
    gcr_tensor *a = gcr_exp(ctx, gcr_mul_scalar(ctx, p, 0.1f));
    gcr_tensor *s = gcr_slice(ctx, a, 1, 1, -1, 2);
    gcr_tensor *b = gcr_neg(ctx, s);
    out[0] = gcr_reshape(ctx, b, 2, (int64_t[]){gcr_tensor_dim(b, 0), -1});
    gcr_tensor *c = gcr_contiguous(ctx, in[0], GCR_NHWC);
    out[1] = gcr_flatten(ctx, gcr_abs(ctx, c), 1, -1);
    out[2] = gcr_slice(ctx, in[0], 3, 0, 3, 1);   /* a view of an input as output */
    return 3;
}

/* ---------------------------------------------------------------- tests */

static void run_model(cu_model m, const cu_input *ins, int n_in, int iters)
{
    gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int d = 0; d < 2; d++)
        for (int fusion = 0; fusion <= 1; fusion++) {
            gcr_ctx_opts o = gcr_ctx_opts_default();
            o.device = devs[d];
            o.knobs.fusion = fusion;
            gcr_ctx *ctx = NULL;
            if (gcr_ctx_create(&ctx, &o) != GCR_OK) {
                if (devs[d] == GCR_DEVICE_CUDA) h_skip_gpu("no CUDA device");
                continue;
            }
            gcr_exec_force(ctx, forced);
            for (int t = 0; t < 3; t++)
                for (int f = 0; f < 2; f++) {
                    gcr_tensor *in[CU_MAX];
                    gcr_graph *g = cu_check(ctx, m, ins, n_in, dts[t], f ? GCR_NHWC : GCR_NCHW, iters, cu_tol(dts[t]), in);
                    CHECK(g, "capture failed (%s, fusion %d): %s", gcr_dtype_name(dts[t]), fusion, gcr_ctx_error(ctx));
                    gcr_graph_destroy(g);
                    for (int i = 0; i < n_in; i++) gcr_tensor_free(in[i]);
                    gcr_ctx_clear_error(ctx);
                }
            gcr_ctx_destroy(ctx);
        }
}

static void test_chain(void)
{
    cu_input ins[] = {{4, {2, 3, 5, 7}, 0, 0, 0}};
    run_model(m_chain, ins, 1, 4);
    cu_input ins2[] = {{3, {5, 3, 7}, 0, 1, 0}}; /* permuted (strided) input */
    run_model(m_chain, ins2, 1, 3);
}

static void test_dag(void)
{
    cu_input ins[] = {{4, {2, 6, 3, 5}, 0, 0, 0}, {3, {6, 1, 1}, 0, 0, 0}, {4, {1, 6, 1, 1}, 0, 0, 0}};
    run_model(m_dag, ins, 3, 4);
}

static void test_reduce(void)
{
    cu_input ins[] = {{4, {3, 5, 4, 3}, 0, 0, 0}};
    run_model(m_reduce, ins, 1, 3);
}

static void test_conv(void)
{
    cu_input ins[] = {{4, {2, 8, 7, 5}, 0, 0, 0}, {4, {8, 8, 3, 3}, 1, 0, 0}, {1, {8}, 1, 0, 0}, {4, {12, 2, 1, 1}, 1, 0, 0}};
    run_model(m_conv, ins, 4, 3);
}

static void test_linear(void)
{
    cu_input ins[] = {{3, {2, 3, 5}, 0, 0, 0}, {2, {6, 5}, 1, 0, 0}, {1, {6}, 1, 0, 0}, {2, {4, 6}, 0, 0, 0}};
    run_model(m_linear, ins, 4, 3);
}

static void test_views(void)
{
    cu_input ins[] = {{4, {2, 3, 4, 5}, 0, 0, 0}};
    run_model(m_views, ins, 1, 3);
}

/* the device-independent executor (what a CUDA build without codegen would run) on the same
 * models: every node through the backend, fused groups' internals in scratch */
static void test_generic_executor(void)
{
    forced = &gcr_generic_executor;
    cu_input ins[] = {{4, {2, 6, 3, 5}, 0, 0, 0}, {3, {6, 1, 1}, 0, 0, 0}, {4, {1, 6, 1, 1}, 0, 0, 0}};
    run_model(m_dag, ins, 3, 2);
    cu_input cins[] = {{4, {2, 8, 7, 5}, 0, 0, 0}, {4, {8, 8, 3, 3}, 1, 0, 0}, {1, {8}, 1, 0, 0}, {4, {12, 2, 1, 1}, 1, 0, 0}};
    run_model(m_conv, cins, 4, 2);
    cu_input vins[] = {{4, {2, 3, 4, 5}, 0, 0, 0}};
    run_model(m_views, vins, 1, 2);
    forced = NULL;
}

/* An op that fails inside a capture (here its shape inference refuses it, so it records nothing)
 * fails gcr_capture_end with its status, and no graph is built: also when an error the caller
 * ignored was already on the ctx (the sticky message then stays the first one). */
static void capture_failed_op(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor *five)
{
    for (int sticky = 0; sticky <= 1; sticky++) {
        if (sticky) CHECK(gcr_tensor_from_host(x, NULL, 4) == GCR_ERR_INVALID, "an error left on the ctx");
        else OK(ctx, gcr_ctx_status(ctx));
        CHECK(gcr_capture_begin(ctx) == GCR_OK, "sticky %d: capture begins", sticky);
        gcr_tensor *y = gcr_exp(ctx, x);
        gcr_tensor *bad = gcr_add(ctx, y, five);
        CHECK(y && !bad, "sticky %d: the add fails at the call", sticky);
        gcr_graph *g = NULL;
        gcr_status s = gcr_capture_end(ctx, &g);
        CHECK(s == GCR_ERR_SHAPE && g == NULL, "sticky %d: capture_end returns the op's error: %s", sticky,
              gcr_status_name(s));
        CHECK(!gcr_ctx_capturing(ctx), "sticky %d: the capture ended", sticky);
        gcr_graph_destroy(g);
        gcr_ctx_clear_error(ctx);
        /* y, returned by the failed capture, is still a handle: its shape, no data, a no-op free */
        float b[6];
        CHECK(gcr_tensor_dim(y, 1) == 3 && gcr_tensor_numel(y) == 6, "sticky %d: y keeps its shape", sticky);
        s = gcr_tensor_to_host(y, b, sizeof b);
        CHECK(s == GCR_ERR_CAPTURE && strstr(gcr_ctx_error(ctx), "capture_end failed"),
              "sticky %d: reading y after the failed capture: %s %s", sticky, gcr_status_name(s), gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        gcr_tensor_free(y);
    }
    /* a failed capture's error, left on the ctx, does not fail the next capture */
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    CHECK(!gcr_add(ctx, x, five), "the add fails");
    CHECK(gcr_capture_end(ctx, &g) == GCR_ERR_SHAPE, "that capture fails");
    OK(ctx, gcr_capture_begin(ctx));
    CHECK(gcr_exp(ctx, x) != NULL, "traced");
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(g != NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "a graph, and the earlier error still on the ctx");
    gcr_graph_destroy(g);
    gcr_ctx_clear_error(ctx);
}

/* capture runs nothing, traced tensors have no data, and misuse is reported */
static void test_misuse(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    float h[6] = {1, -2, 3, -4, 5, -6}, back[6];
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){2, 3}, GCR_NCHW, h);
    OK(ctx, gcr_capture_begin(ctx));
    CHECK(gcr_ctx_capturing(ctx), "capturing flag");
    CHECK(gcr_capture_begin(ctx) == GCR_ERR_CAPTURE, "nested capture must fail");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_region_begin(ctx, "r") == 0 && gcr_ctx_status(ctx) == GCR_ERR_CAPTURE, "region inside capture");
    gcr_ctx_clear_error(ctx);
    gcr_tensor *y = gcr_relu(ctx, x);
    CHECK(y != NULL, "traced op returns a tensor");
    CHECK(gcr_tensor_dim(y, 1) == 3, "traced tensor has its shape");
    CHECK(gcr_tensor_to_host(y, back, sizeof back) == GCR_ERR_CAPTURE, "reading a traced tensor fails");
    CHECK(strstr(gcr_ctx_error(ctx), "traced") != NULL, "clear message: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_replay(NULL) == GCR_ERR_INVALID, "replay NULL");
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(!gcr_ctx_capturing(ctx), "capture ended");
    CHECK(gcr_graph_num_inputs(g) == 1 && gcr_graph_num_outputs(g) == 1, "1 input, 1 output");
    CHECK(gcr_graph_get_output(g, 0) == y, "the sink is the output");
    OK(ctx, gcr_tensor_to_host(y, back, sizeof back));
    CHECK(back[0] == 1 && back[1] == 0 && back[4] == 5, "capture pass produced results");
    /* a traced tensor of a finished capture used in another capture */
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *z = gcr_neg(ctx, y); /* y has data now: it reads as an external input */
    gcr_graph *g2 = NULL;
    OK(ctx, gcr_capture_end(ctx, &g2));
    CHECK(z && gcr_graph_num_inputs(g2) == 1, "output of a graph feeds another graph as input");
    CHECK(gcr_capture_end(ctx, &g2) == GCR_ERR_CAPTURE, "end without begin");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_graph_output(ctx, x) == GCR_OK, "graph_output on an eager tensor is a no-op");
    /* as gcr.h says: on an eager ctx a no-op, for the output of a finished capture too */
    CHECK(gcr_graph_output(ctx, y) == GCR_OK && gcr_ctx_status(ctx) == GCR_OK, "graph_output on a graph's output outside capture");
    gcr_ctx *other = NULL;
    gcr_ctx_opts oo = gcr_ctx_opts_default();
    oo.device = GCR_DEVICE_CPU;
    if (gcr_ctx_create(&other, &oo) == GCR_OK) {
        CHECK(gcr_graph_output(other, y) == GCR_ERR_INVALID && strstr(gcr_ctx_error(other), "another context"),
              "graph_output of another context's tensor: %s", gcr_ctx_error(other));
        gcr_ctx_destroy(other);
    }
    gcr_ctx_clear_error(ctx);
    /* a failed op whose error the caller cleared (handled) leaves the capture going on */
    gcr_tensor *five = gcr_tensor_new(ctx, GCR_F32, 1, (int64_t[]){5}, GCR_NCHW);
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *bad = gcr_add(ctx, x, five);
    CHECK(!bad, "shape error while capturing");
    gcr_ctx_clear_error(ctx);
    gcr_tensor *ok = gcr_exp(ctx, x);
    CHECK(ok, "capture goes on");
    gcr_graph *g3 = NULL;
    OK(ctx, gcr_capture_end(ctx, &g3));
    gcr_graph_destroy(g3);
    gcr_graph_destroy(g2);
    capture_failed_op(ctx, x, five);
    /* g is left to gcr_ctx_destroy */
    gcr_ctx_destroy(ctx);
}

/* marked outputs plus sinks; a marked intermediate also feeds later ops */
static void test_outputs(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    float *h = h_randn(12, -1, 1);
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){3, 4}, GCR_NCHW, h);
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *a = gcr_exp(ctx, x);
    OK(ctx, gcr_graph_output(ctx, a));
    gcr_tensor *b = gcr_add_scalar(ctx, a, 1.0f);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_end(ctx, &g));
    CHECK(gcr_graph_num_outputs(g) == 2, "marked + sink: %d", gcr_graph_num_outputs(g));
    float *pa = h_read(a), *pb = h_read(b);
    for (int i = 0; i < 12; i++) {
        CHECK(fabsf(pa[i] - expf(h[i])) < 1e-5f, "a[%d]", i);
        CHECK(fabsf(pb[i] - expf(h[i]) - 1) < 1e-5f, "b[%d]", i);
    }
    free(pa);
    free(pb);
    free(h);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    h_seed(1234);
    RUN(test_misuse);
    RUN(test_outputs);
    RUN(test_chain);
    RUN(test_dag);
    RUN(test_reduce);
    RUN(test_conv);
    RUN(test_linear);
    RUN(test_views);
    RUN(test_generic_executor);
    return h_finish();
}
