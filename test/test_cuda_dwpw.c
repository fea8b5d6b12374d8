/* test_cuda_dwpw.c — the conv->conv pair kernel (kernels/dwpw.cuh, launched by conv.c's dwpw for a
 * gcr_cuda_hooks with an inner depthwise call) against the CPU backend on the same random data:
 * out = EPI(1x1(ROUND(PRO(depthwise(x) + dbias))) + bias). Shapes chosen to reach every path:
 * - one channel step and several, the last one partial (48 channels in steps of 32: the resident
 *   weights' padding), the weights resident and reloaded each step (1024 channels);
 * - the row-sharing taps (3x3, 5x5 at stride 1 and 2) with 1, 2 and 4 outputs an item, and the
 *   general taps (1x1, 7x7, dilation 2); padding kept and none;
 * - 1 to 256 outputs (odd counts: masked columns); images of one pixel, one row, one column;
 * - x in channels-last with 16-byte channel groups, and as a channel slice whose pointer and pixel
 *   stride are not 16-byte multiples (element loads); the 1x1 weights dense and as a transposed
 *   view (element loads);
 * - no hooks, and a prologue (relu times a per-image, per-channel scale, as a squeeze-excite
 *   would) and an epilogue (scaled plus an f32 residual), each reading extra kernel parameters;
 * - a tile's channel steps in one block, split over blocks by the launcher (one-tile images), and
 *   split by force (gcr_cuda_dwpw_force_split: 2 to 5 blocks, at most one a step).
 * The value between the convs is filled with NaN first: the kernel must not read it. A pair the
 * launcher refuses (GCR_ERR_COMPILE) is counted and must name the conv->conv kernel; every shape
 * here is one it takes. f16 and bf16, ~1e-2 and 2e-2. Skips without a GPU. */
#include "gpu_compare.h"

typedef struct pair_case {
    int N, C, H, W, k, s, d, pad, O;
    int xslice, wview; /* x as a channel slice, the 1x1 weights as a transposed view */
} pair_case;

static const pair_case fixed[] = {
    {2, 48, 9, 11, 3, 2, 1, 1, 24, 0, 0},    /* a partial last step over resident weights */
    {1, 16, 112, 112, 3, 1, 1, 1, 16, 0, 0}, /* 4 outputs an item */
    {2, 64, 56, 56, 3, 2, 1, 1, 24, 0, 0},
    {2, 1024, 7, 9, 3, 2, 1, 1, 200, 0, 0},  /* weights reloaded each step */
    {1, 264, 14, 14, 5, 1, 1, 2, 256, 0, 0}, /* 256 outputs */
    {3, 72, 10, 19, 7, 1, 1, 3, 40, 1, 0},   /* general taps, element loads of x */
    {2, 24, 11, 13, 3, 1, 2, 2, 13, 0, 1},   /* dilation 2, odd outputs, element loads of w */
    {1, 40, 13, 10, 5, 2, 1, 0, 7, 0, 0},    /* no padding */
    {3, 8, 1, 67, 3, 1, 1, 1, 1, 0, 0},      /* one row, one output */
    {1, 32, 67, 1, 3, 2, 1, 1, 33, 1, 1},    /* one column */
    {1, 8, 1, 1, 1, 1, 1, 0, 5, 0, 0},       /* one pixel, 1x1 taps */
    {1, 960, 7, 7, 3, 1, 1, 1, 160, 0, 0},   /* one tile: the launcher splits its channel steps */
    {1, 576, 14, 14, 3, 2, 1, 1, 160, 0, 0},
};

static int ran, refused;

/* dt's values of x rounded through dt on the CPU (the kernel rounds the depthwise result to dt) */
static gcr_tensor *round_to(gcr_tensor *t, gcr_dtype dt) { return gcr_cast(cpu, gcr_cast(cpu, t, dt), GCR_F32); }

/* split: the tile's channel steps over this many blocks (gcr_cuda_dwpw_force_split; 0: the
 * launcher's choice) */
static void one(const pair_case *k, gcr_dtype dt, int pro, int epi, int split, const char *tag)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    char what[200];
    snprintf(what, sizeof what, "%s %s N%d C%d %dx%d k%d s%d d%d p%d -> %d%s%s%s%s split %d", tag, gcr_dtype_name(dt), k->N,
             k->C, k->H, k->W, k->k, k->s, k->d, k->pad, k->O, k->xslice ? " x-slice" : "", k->wview ? " w-view" : "",
             pro ? " pro" : "", epi ? " epi" : "", split);
    const int64_t OH = (k->H + 2 * k->pad - k->d * (k->k - 1) - 1) / k->s + 1;
    const int64_t OW = (k->W + 2 * k->pad - k->d * (k->k - 1) - 1) / k->s + 1;
    const int64_t xphys[4] = {k->N, k->C + (k->xslice ? 2 : 0), k->H, k->W}, ds[4] = {k->C, 1, k->k, k->k};
    const int64_t cs[1] = {k->C}, os[1] = {k->O}, ses[4] = {k->N, k->C, 1, 1}, ys[4] = {k->N, k->O, OH, OW};
    const int64_t wphys[4] = {k->wview ? k->C : k->O, k->wview ? k->O : k->C, 1, 1};
    gcr_tensor *x[2], *wd[2], *bd[2], *wp[2], *bp[2], *se[2], *res[2];
    rand2(dt, 4, xphys, GCR_NHWC, x);
    rand2(dt, 4, ds, GCR_NCHW, wd);
    rand2(dt, 1, cs, GCR_NCHW, bd);
    rand2(dt, 4, wphys, GCR_NCHW, wp);
    rand2(dt, 1, os, GCR_NCHW, bp);
    rand2(GCR_F32, 4, ses, GCR_NCHW, se);
    gcr_ctx *cx[2] = {cpu, gpu};
    static const int swap[4] = {1, 0, 2, 3};
    for (int i = 0; i < 2; i++) {
        if (k->xslice && x[i]) x[i] = gcr_slice(cx[i], x[i], 1, 1, k->C + 1, 1);
        if (k->wview && wp[i]) wp[i] = gcr_permute(cx[i], wp[i], swap);
    }
    const gcr_conv2d_params dp = {{k->s, k->s}, {k->pad, k->pad}, {k->d, k->d}, k->C};
    /* the reference: f32 from dt's values, the depthwise result through the prologue rounded to dt */
    gcr_tensor *ref = NULL;
    if (x[0] && wd[0] && bd[0] && wp[0] && bp[0] && se[0]) {
        gcr_tensor *m = gcr_conv2d(cpu, gcr_cast(cpu, x[0], GCR_F32), gcr_cast(cpu, wd[0], GCR_F32),
                                   gcr_cast(cpu, bd[0], GCR_F32), &dp);
        if (pro) m = gcr_mul(cpu, gcr_relu(cpu, m), se[0]);
        ref = gcr_conv2d(cpu, round_to(m, dt), gcr_cast(cpu, wp[0], GCR_F32), gcr_cast(cpu, bp[0], GCR_F32), NULL);
    }
    /* the GPU: the value between the convs, NaN everywhere, then the pair into out */
    gcr_tensor *mid = x[1] && wd[1] && bd[1] ? gcr_conv2d(gpu, x[1], wd[1], bd[1], &dp) : NULL;
    if (mid) {
        size_t nb = gcr_tensor_nbytes(mid);
        void *nan = malloc(nb);
        memset(nan, 0xff, nb);
        CHECK_OK(gpu, gcr_tensor_from_host(mid, nan, nb));
        free(nan);
    }
    gcr_call d = {0}, c = {0};
    d.op = c.op = GCR_OP_CONV2D;
    d.n_in = c.n_in = 3;
    d.in[0] = x[1], d.in[1] = wd[1], d.in[2] = bd[1];
    d.p.conv = dp;
    c.in[0] = mid, c.in[1] = wp[1], c.in[2] = bp[1];
    c.p.conv = (gcr_conv2d_params){{1, 1}, {0, 0}, {1, 1}, 1};
    gcr_tensor *out = mid && wp[1] && bp[1] ? new_result(gpu, &c) : NULL;
    /* the epilogue's residual, read at the output's index: in the output's layout */
    rand2(GCR_F32, 4, ys, out && gcr_tensor_format(out) == GCR_NHWC ? GCR_NHWC : GCR_NCHW, res);
    if (epi && ref) ref = res[0] ? gcr_add(cpu, gcr_mul_scalar(cpu, ref, 0.75f), res[0]) : NULL;
    char defs[640];
    snprintf(defs, sizeof defs,
             "#define GCR_EXTRA_PARAMS , const float *__restrict__ se, const float *__restrict__ res, int ch\n%s%s",
             pro ? "#define GCR_PROLOGUE(v, n, c) (fmaxf((v), 0.0f) * se[(n) * ch + (c)])\n" : "",
             epi ? "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), ((acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f)) * 0.75f + res[idx])\n"
                 : "");
    const void *sep = se[1] ? gcr_tensor_data(se[1]) : NULL, *rp = res[1] ? gcr_tensor_data(res[1]) : NULL;
    int ch = k->C;
    void *extra[] = {&sep, &rp, &ch};
    gcr_cuda_hooks h = {.defs = defs, .extra = extra, .n_extra = 3, .inner = &d};
    gcr_cuda_dwpw_force_split(gpu, split);
    gcr_status st = out && ref ? gcr_cuda_conv2d_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
    gcr_cuda_dwpw_force_split(gpu, 0);
    if (st == GCR_ERR_COMPILE) {
        refused++;
        CHECK(strstr(gcr_ctx_error(gpu), "conv->conv") != NULL, "%s: refused with %s", what, gcr_ctx_error(gpu));
    } else if (CHECK_OK(gpu, st)) {
        ran++;
        const char *fn = gcr_cuda_last_kernel(gpu);
        CHECK(fn && !strncmp(fn, "gcr_dwpw", 8), "%s: ran %s", what, fn ? fn : "nothing");
        compare_as(ref, out, dt, 0, what);
    }
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_fixed(void)
{
    for (int i = 0; i < (int)(sizeof fixed / sizeof fixed[0]); i++) {
        one(&fixed[i], i % 2 ? GCR_BF16 : GCR_F16, 0, 0, 1, "fixed");
        one(&fixed[i], i % 2 ? GCR_F16 : GCR_BF16, 1, 1, 0, "fixed");
        one(&fixed[i], i % 2 ? GCR_BF16 : GCR_F16, 1, 1, 3, "fixed"); /* at most one block a step */
    }
    CHECK(refused == 0, "%d of the fixed shapes refused", refused);
}

/* seeded random shapes: channels a multiple of 8 up to 640, 1 to 256 outputs, images up to 48 */
static void test_random(void)
{
    static const int taps[4] = {1, 3, 5, 7};
    h_pick_seed(20261128);
    for (int i = 0; i < 48; i++) {
        pair_case k = {1 + (int)h_pick(3), 8 * (1 + (int)h_pick(80)), 1 + (int)h_pick(48), 1 + (int)h_pick(48),
                       taps[h_pick(4)], 1 + (int)h_pick(2), h_pick(5) ? 1 : 2, 0, 1 + (int)h_pick(256),
                       h_pick(5) == 0, h_pick(5) == 0};
        k.pad = h_pick(4) ? k.d * (k.k / 2) : 0;
        while (k.H + 2 * k.pad < k.d * (k.k - 1) + 1 || k.W + 2 * k.pad < k.d * (k.k - 1) + 1) k.pad++;
        one(&k, h_pick(2) ? GCR_F16 : GCR_BF16, (int)h_pick(2), (int)h_pick(2), (int)h_pick(6), "random");
    }
    printf("the pair kernel ran %d cases, refused %d\n", ran, refused);
    CHECK(refused <= ran / 10, "%d of %d cases refused", refused, ran + refused);
}

int main(void)
{
    if (!open2(20261128)) return h_finish();
#ifdef GCR_HAVE_CUDA
    if (gcr_cuda_arch(gpu) < 80) {
        h_skip_gpu("the pair kernel needs sm_80");
        return close2();
    }
    RUN(test_fixed);
    RUN(test_random);
#endif
    return close2();
}
