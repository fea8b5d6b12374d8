/* test_cuda_convconv.c — the CUDA backend's per-pair answer to "is the pair kernel the faster"
 * (lib/cuda/convconv.c), which GCR_CONVCONV's default (2) asks of every depthwise -> 1x1 pair.
 * - GCR_AUTOTUNE=1: each pair is measured once; the capture then fuses exactly the pairs the
 *   answer names (one kernel, else two), whose replays match the eager run on fresh data; asked
 *   again, the answer comes from memory. A second ctx on the same cache folder measures nothing
 *   and fuses the same pairs.
 * - GCR_AUTOTUNE=0: heuristics only, every pair apart, nothing measured.
 * - The answer is false, and nothing runs, for a ctx of another backend (a capture on the CPU may
 *   carry CUDA's caps) and for the pointwise -> depthwise form, which CUDA has no kernel for.
 * Skips where no GPU is present. */
#include "capture_util.h"
#ifdef GCR_HAVE_CUDA
#include "tune_util.h"
#include "cuda/dense.h"

/* one depthwise -> 1x1 pair: N images of C channels, H x W, k x k taps at stride s, into O */
typedef struct shape {
    int64_t N, C, H, W, k, s, O;
} shape;

/* small and large images, few and many channels, both strides */
static const shape shapes[] = {
    {1, 16, 112, 112, 3, 1, 16}, {2, 64, 56, 56, 3, 2, 24}, {4, 240, 14, 14, 5, 1, 80}, {3, 48, 9, 11, 3, 2, 24},
};
#define NS ((int)(sizeof shapes / sizeof shapes[0]))

static char dir[] = "/tmp/gcr_convconv_XXXXXX";

/* a ctx on the test's cache folder with GCR_CONVCONV at its default, 2 (whatever the environment) */
static gcr_ctx *pair_ctx(int autotune, gcr_device dev)
{
    gcr_ctx *ctx = tu_ctx(dev, dir, autotune);
    if (ctx) ctx->knobs.convconv = 2;
    return ctx;
}

static gcr_conv2d_params dw_params(const shape *s)
{
    gcr_conv2d_params p = {.stride = {(int)s->s, (int)s->s}, .padding = {(int)s->k / 2, (int)s->k / 2},
                           .dilation = {1, 1}, .groups = (int)s->C};
    return p;
}

/* the pair as the fuser describes it to the backend (legal.c): f16, channels-last */
static gcr_convconv_pair pair_of(const shape *s)
{
    const gcr_conv2d_params p = dw_params(s);
    const int64_t OH = (s->H + 2 * (s->k / 2) - s->k) / s->s + 1, OW = (s->W + 2 * (s->k / 2) - s->k) / s->s + 1;
    gcr_convconv_pair pr;
    memset(&pr, 0, sizeof pr);
    pr.form = GCR_CONVCONV_DW_PW;
    gcr_meta *m[5] = {&pr.x, &pr.wd, &pr.wp, &pr.mid, &pr.y};
    const int64_t shp[5][4] = {{s->N, s->C, s->H, s->W}, {s->C, 1, s->k, s->k}, {s->O, s->C, 1, 1},
                               {s->N, s->C, OH, OW}, {s->N, s->O, OH, OW}};
    for (int i = 0; i < 5; i++) {
        m[i]->dtype = GCR_F16;
        m[i]->ndim = 4;
        memcpy(m[i]->shape, shp[i], sizeof shp[i]);
    }
    pr.dp = p;
    return pr;
}

/* Captures relu(depthwise(x)) -> 1x1 on ctx (f16 NHWC, random weights, seeded by the shape),
 * replays it on fresh data against the eager run, and returns its kernels per replay, or -1 */
static int capture_pair(gcr_ctx *ctx, const shape *s, const char *what)
{
    const int64_t xs[4] = {s->N, s->C, s->H, s->W}, ds[4] = {s->C, 1, s->k, s->k}, ps[4] = {s->O, s->C, 1, 1};
    const int64_t nx = s->N * s->C * s->H * s->W;
    float *hx = h_randn(nx, -2, 2), *hd = h_randn(ds[0] * s->k * s->k, -0.5f, 0.5f), *hp = h_randn(s->O * s->C, -0.25f, 0.25f);
    gcr_tensor *x = h_tensor(ctx, GCR_F16, 4, xs, GCR_NHWC, hx);
    gcr_tensor *wd = h_tensor(ctx, GCR_F16, 4, ds, GCR_NCHW, hd), *wp = h_tensor(ctx, GCR_F16, 4, ps, GCR_NCHW, hp);
    gcr_tensor_set_const(wd);
    gcr_tensor_set_const(wp);
    const gcr_conv2d_params p = dw_params(s);
    gcr_graph *g = NULL;
    int kernels = -1;
    if (!CHECK(gcr_capture_begin(ctx) == GCR_OK, "%s: capture: %s", what, gcr_ctx_error(ctx))) goto out;
    gcr_tensor *y = gcr_conv2d(ctx, gcr_relu(ctx, gcr_conv2d(ctx, x, wd, NULL, &p)), wp, NULL, NULL);
    if (!CHECK(gcr_capture_end(ctx, &g) == GCR_OK && g && y, "%s: capture: %s", what, gcr_ctx_error(ctx))) goto out;
    for (int it = 0; it < 2; it++) {
        if (it) cu_refill(x, 0); /* fresh data in the same input */
        CHECK_OK(ctx, gcr_graph_replay(g));
        uint64_t sc = gcr_scope_begin(ctx);
        gcr_tensor *ref = gcr_conv2d(ctx, gcr_relu(ctx, gcr_conv2d(ctx, x, wd, NULL, &p)), wp, NULL, NULL);
        float *a = h_read(y), *b = ref ? h_read(ref) : NULL;
        char w[160];
        snprintf(w, sizeof w, "%s replay %d vs eager", what, it);
        if (CHECK(b != NULL, "%s: eager: %s", w, gcr_ctx_error(ctx))) CHECK_CLOSE(a, b, gcr_tensor_numel(y), 2e-2, 2e-2, w);
        free(a);
        free(b);
        gcr_scope_end(ctx, sc);
    }
    gcr_graph_stats st;
    memset(&st, 0, sizeof st);
    if (CHECK(gcr_graph_get_stats(g, &st) == GCR_OK, "%s: stats", what)) kernels = st.kernels;
out:
    gcr_graph_destroy(g);
    free(hx);
    free(hd);
    free(hp);
    return kernels;
}

static void test_measured(void)
{
    gcr_ctx *probe = h_ctx(GCR_DEVICE_CUDA); /* skips without a GPU, before the folder is made */
    if (!probe) return;
    gcr_ctx_destroy(probe);
    gcr_ctx *a = CHECK(mkdtemp(dir) != NULL, "mkdtemp") ? pair_ctx(1, GCR_DEVICE_CUDA) : NULL;
    if (!CHECK(a != NULL, "CUDA ctx on %s", dir)) return;
    int fused[NS], fused_n = 0;
    char what[128];
    for (int i = 0; i < NS; i++) {
        const shape *s = &shapes[i];
        snprintf(what, sizeof what, "%lldx%lldx%lld k%lld s%lld -> %lld, batch %lld", (long long)s->C, (long long)s->H,
                 (long long)s->W, (long long)s->k, (long long)s->s, (long long)s->O, (long long)s->N);
        const int measured0 = tu_stats(a).measured;
        const int k = capture_pair(a, s, what);
        CHECK(tu_stats(a).measured > measured0, "%s: measured", what);
        /* asked again (as the fuser asked), the answer comes from memory */
        const gcr_convconv_pair pr = pair_of(s);
        const int hits0 = tu_stats(a).mem_hits, measured1 = tu_stats(a).measured;
        fused[i] = gcr_cuda_convconv_faster(a, &pr);
        CHECK(tu_stats(a).mem_hits == hits0 + 1 && tu_stats(a).measured == measured1, "%s: the answer from memory", what);
        CHECK(k == (fused[i] ? 1 : 2), "%s: %d kernels, the pair measured %s", what, k, fused[i] ? "fused" : "apart");
        printf("%s: %s\n", what, fused[i] ? "fused" : "apart");
        fused_n += fused[i];
    }
    printf("%d of %d pairs fused by measurement\n", fused_n, NS);
    CHECK(gcr_ctx_status(a) == GCR_OK, "%s", gcr_ctx_error(a));
    gcr_ctx_destroy(a);

    /* a second process: the same pairs fused, nothing measured */
    gcr_ctx *b = pair_ctx(1, GCR_DEVICE_CUDA);
    if (CHECK(b != NULL, "second ctx")) {
        for (int i = 0; i < NS; i++) {
            snprintf(what, sizeof what, "second ctx, shape %d", i);
            CHECK(capture_pair(b, &shapes[i], what) == (fused[i] ? 1 : 2), "%s: as the first", what);
        }
        CHECK(tu_stats(b).measured == 0 && tu_stats(b).disk_hits > 0, "second ctx measured %d, %d from disk",
              tu_stats(b).measured, tu_stats(b).disk_hits);
        gcr_ctx_destroy(b);
    }

    /* heuristics only: apart, nothing measured */
    gcr_ctx *c = pair_ctx(0, GCR_DEVICE_CUDA);
    if (CHECK(c != NULL, "heuristic ctx")) {
        for (int i = 0; i < NS; i++) {
            snprintf(what, sizeof what, "GCR_AUTOTUNE=0, shape %d", i);
            CHECK(capture_pair(c, &shapes[i], what) == 2, "%s: apart", what);
        }
        CHECK(tu_stats(c).measured == 0, "GCR_AUTOTUNE=0 measured %d", tu_stats(c).measured);
        gcr_ctx_destroy(c);
    }

    /* false without running anything: the other form, and a CPU ctx */
    gcr_ctx *d = pair_ctx(1, GCR_DEVICE_CUDA), *cpu = pair_ctx(1, GCR_DEVICE_CPU);
    if (CHECK(d && cpu, "contexts")) {
        gcr_convconv_pair pr = pair_of(&shapes[3]);
        CHECK(gcr_cuda_convconv_faster(cpu, &pr) == false, "a CPU ctx: false");
        pr.form = GCR_CONVCONV_PW_DW;
        CHECK(gcr_cuda_convconv_faster(d, &pr) == false && tu_stats(d).measured == 0, "pointwise -> depthwise: false");
        CHECK(gcr_ctx_status(d) == GCR_OK && gcr_ctx_status(cpu) == GCR_OK, "no error left");
    }
    gcr_ctx_destroy(d);
    gcr_ctx_destroy(cpu);
    h_rmtree(dir);
}
#endif

int main(void)
{
#ifdef GCR_HAVE_CUDA
    RUN(test_measured);
#else
    h_case = "measured";
    h_skip_gpu("built without CUDA");
#endif
    return h_finish();
}
