/* test_surprises.c — the surprising but documented behaviour of captured graphs, written as
 * tests so users can read them:
 * 1. Outputs are static buffers owned by the graph: the next replay overwrites them. Copy a
 *    result out (gcr_tensor_to_host, or gcr_contiguous into a tensor of your own) to keep it.
 * 2. Host scalars (clamp bounds, *_scalar operands) are frozen at capture: changing the C
 *    variable later does not reach an explicit graph (a region re-traces instead).
 * 3. Reading a traced tensor while capturing fails with GCR_ERR_CAPTURE and a clear message:
 *    it has a shape but no data until the capture ends.
 * 4. Constants (gcr_tensor_set_const) may be folded at capture end: later writes to them do not
 *    reach a graph that folded them (here: batch norm statistics folded into conv weights).
 * 5. After gcr_graph_destroy, the tensors the capture returned are gone (their handles belong to
 *    the graph); using them is invalid and not tested here. */
#include "capture_util.h"

static gcr_tensor *vec(gcr_ctx *ctx, const float *v, int n)
{
    return gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){n}, GCR_NCHW, v);
}

static void test_outputs_overwritten(void)
{
    gcr_ctx *ctx = h_ctx(cu_dev);
    if (!ctx) return;
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, got[4];
    gcr_tensor *x = vec(ctx, a, 4);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_mul_scalar(ctx, x, 2.0f);
    OK(ctx, gcr_capture_end(ctx, &g));
    gcr_tensor *kept = gcr_contiguous(ctx, y, GCR_NCHW); /* a copy of the first result */
    OK(ctx, gcr_tensor_from_host(x, b, sizeof b));
    OK(ctx, gcr_graph_replay(g));
    OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
    CHECK(got[0] == 20 && got[3] == 80, "y now holds the second replay's result");
    OK(ctx, gcr_tensor_to_host(kept, got, sizeof got));
    CHECK(got[0] == 2 && got[3] == 8, "the copy kept the first result");
    CHECK(gcr_graph_get_output(g, 0) == y, "the output handle is the graph's static buffer");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void test_scalars_frozen(void)
{
    gcr_ctx *ctx = h_ctx(cu_dev);
    if (!ctx) return;
    float a[3] = {-5, 0.5f, 5}, got[3];
    gcr_tensor *x = vec(ctx, a, 3);
    float hi = 1.0f, add = 100.0f;
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_add_scalar(ctx, gcr_clamp(ctx, x, -hi, hi), add);
    OK(ctx, gcr_capture_end(ctx, &g));
    hi = 10.0f; /* too late: the graph holds 1 and 100 */
    add = 0.0f;
    OK(ctx, gcr_graph_replay(g));
    OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
    CHECK(got[0] == 99 && got[1] == 100.5f && got[2] == 101, "frozen scalars: %g %g %g", got[0], got[1], got[2]);
    gcr_graph_destroy(g);
    /* a region sees the new scalar: the pass no longer matches, so it re-traces */
    for (int pass = 0; pass < 3; pass++) {
        float s = pass == 2 ? 7.0f : 1.0f;
        gcr_tensor *r = NULL;
        GCR_REGION(ctx, "scalar") { r = gcr_mul_scalar(ctx, x, s); }
        OK(ctx, gcr_tensor_to_host(r, got, sizeof got));
        CHECK(got[2] == 5 * s, "region pass %d uses scalar %g: %g", pass, s, got[2]);
    }
    gcr_ctx_destroy(ctx);
}

static void test_read_while_capturing(void)
{
    gcr_ctx *ctx = h_ctx(cu_dev);
    if (!ctx) return;
    float a[2] = {1, 2}, got[2];
    gcr_tensor *x = vec(ctx, a, 2);
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_exp(ctx, x);
    gcr_status s = gcr_tensor_to_host(y, got, sizeof got);
    CHECK(s == GCR_ERR_CAPTURE, "to_host while capturing: %s", gcr_status_name(s));
    CHECK(strstr(gcr_ctx_error(ctx), "traced tensor") && strstr(gcr_ctx_error(ctx), "after the capture ends"),
          "message says why and when: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_end(ctx, &g));
    OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
    CHECK(fabsf(got[1] - expf(2)) < 1e-5f, "readable after the capture");
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void test_constants_folded(void)
{
    gcr_ctx *ctx = h_ctx(cu_dev);
    if (!ctx) return;
    float xv[4] = {1, 2, 3, 4}, w1 = 1, mean = 0, var = 1, got[4];
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, (int64_t[]){1, 1, 2, 2}, GCR_NCHW, xv);
    gcr_tensor *w = gcr_tensor_set_const(gcr_tensor_from_data(ctx, GCR_F32, 4, (int64_t[]){1, 1, 1, 1}, GCR_NCHW, &w1));
    gcr_tensor *m = gcr_tensor_set_const(vec(ctx, &mean, 1)), *v = gcr_tensor_set_const(vec(ctx, &var, 1));
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_batch_norm(ctx, gcr_conv2d(ctx, x, w, NULL, NULL), m, v, NULL, NULL, 0.0f);
    OK(ctx, gcr_capture_end(ctx, &g));
    mean = 1; /* the statistics were folded into the conv weights at capture end */
    OK(ctx, gcr_tensor_from_host(m, &mean, 4));
    OK(ctx, gcr_graph_replay(g));
    OK(ctx, gcr_tensor_to_host(y, got, sizeof got));
    CHECK(got[0] == 1 && got[3] == 4, "folded constants are not re-read: %g %g", got[0], got[3]);
    gcr_graph_destroy(g);
    gcr_ctx_destroy(ctx);
}

static void all(void)
{
    RUN(test_outputs_overwritten);
    RUN(test_scalars_frozen);
    RUN(test_read_while_capturing);
    RUN(test_constants_folded);
}

int main(void)
{
    cu_each_device(all);
    return h_finish();
}
