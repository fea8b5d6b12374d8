/* test_cuda_depthwise.c — the GPU depthwise conv2d (groups == C == O) against the CPU backend on the
 * same random data: the channels-last shared-memory tile (conv.cuh gcr_dw_tiled: compile-time taps
 * 3/5/7 with column stride 1/2, the run-time tap loop for the rest) with 16-byte loads and vector
 * stores, and with element loads where channels or strides are not multiples of 16 bytes (C 13,
 * a channel slice); the NCHW one-channel kernel; strides, padding 0-3, dilation, odd sizes, batch 1
 * (small tiles) and 8-32 (large ones); f32 (1e-4), f16 and bf16 (~1e-2); and the fusion hooks
 * (prologue, epilogue with extra kernel parameters, each alone and both); the channel-group kernel
 * (gcr_dwc_*) where it takes the 3x3/5x5 shapes by default and forced onto every shape it can run,
 * the staged tile (dwstage.cuh gcr_dws_*) forced onto every shape it can run, the tile forced onto
 * the default ones, and the choice between the kernels (by default, and measured under
 * GCR_AUTOTUNE=1 once per shape).
 * Skips without a GPU. */
#include "gpu_compare.h"
#ifdef GCR_HAVE_CUDA
#include "tune_util.h"
#endif

/* how the input is laid out in memory; the logical values are the same in every case */
enum lay { L_NCHW, L_NHWC, L_CSLICE };
static const char *lay_name[] = {"nchw", "nhwc", "nhwc-channel-slice"};

/* One random operand made on both contexts with identical values. L_CSLICE: channels-last with
 * two more channels than asked, the view starting one channel in, so channels stay contiguous but
 * neither the pointer nor the pixel stride is a multiple of 16 bytes (the tile's element loads). */
static void make2(gcr_dtype dt, int nd, const int64_t *shape, enum lay lay, gcr_tensor **tc, gcr_tensor **tg)
{
    int64_t phys[GCR_MAX_DIMS];
    for (int i = 0; i < nd; i++) phys[i] = shape[i];
    int slice = lay == L_CSLICE && nd == 4;
    if (slice) phys[1] = shape[1] + 2;
    gcr_tensor *t[2];
    rand2(dt, nd, phys, lay != L_NCHW && nd == 4 ? GCR_NHWC : GCR_NCHW, t);
    gcr_ctx *cs[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++)
        if (t[k] && slice) t[k] = gcr_slice(cs[k], t[k], 1, 1, shape[1] + 1, 1);
    *tc = t[0];
    *tg = t[1];
}

/* logical values only: hooked_one's reference is a CPU computation of its own, not the same call, so
 * its memory format need not be the GPU result's */
static void compare(gcr_tensor *rc, gcr_tensor *rg, gcr_dtype dt, const char *what) { compare_as(rc, rg, dt, 0, what); }

typedef struct dw_case {
    int N, C, H, W, KH, KW, sh, sw, ph, pw, dh, dw, bias;
} dw_case;

static const dw_case cases[] = {
    /* N   C    H    W  KH KW sh sw ph pw dh dw b */
    {2, 24, 15, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1},    /* 3x3 s1, odd spatial */
    {3, 72, 17, 17, 3, 3, 2, 2, 1, 1, 1, 1, 0},    /* 3x3 s2 */
    {2, 120, 11, 9, 5, 5, 1, 1, 2, 2, 1, 1, 1},    /* 5x5 s1 */
    {2, 200, 13, 15, 5, 5, 2, 2, 2, 2, 1, 1, 1},   /* 5x5 s2, 2 channel blocks, the last partial */
    {2, 480, 9, 9, 7, 7, 1, 1, 3, 3, 1, 1, 1},     /* 7x7 s1, padding 3 */
    {1, 12, 15, 11, 7, 7, 2, 2, 3, 3, 1, 1, 0},    /* 7x7 s2, C 12: 16-bit types load by element */
    {2, 8, 12, 10, 3, 3, 1, 1, 2, 2, 2, 2, 1},     /* dilation 2 both ways: run-time taps */
    {2, 16, 11, 12, 3, 3, 2, 2, 1, 1, 2, 1, 1},    /* row dilation only: compile-time taps */
    {1, 24, 13, 13, 5, 5, 1, 1, 4, 4, 2, 2, 1},    /* 5x5 dilation 2 */
    {2, 13, 11, 9, 3, 2, 2, 1, 1, 0, 2, 1, 1},     /* 3x2 taps (run-time), C 13 (masked chunk) */
    {2, 672, 7, 7, 3, 3, 1, 1, 0, 0, 1, 1, 1},     /* padding 0 */
    {1, 960, 9, 9, 5, 5, 2, 2, 0, 0, 1, 1, 0},     /* padding 0, s2 */
    {3, 13, 9, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1},      /* C 13, s2 */
    {1, 8, 16, 16, 3, 3, 3, 3, 1, 1, 1, 1, 1},     /* stride 3: run-time taps */
    {2, 72, 10, 11, 3, 3, 2, 1, 1, 1, 1, 1, 1},    /* row stride 2, column stride 1 */
    {2, 40, 3, 2, 5, 5, 1, 1, 2, 2, 1, 1, 1},      /* taps larger than the image */
    {1, 12, 6, 5, 3, 3, 1, 1, 3, 3, 1, 1, 1},      /* padding 3 on 3x3 taps: whole rows of padding */
    /* batch 1 shapes of MobileNet-v3 (small tiles to fill the SMs) */
    {1, 16, 112, 112, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1},
    {1, 672, 14, 14, 5, 5, 2, 2, 2, 2, 1, 1, 1},
    {1, 960, 7, 7, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    /* batch 8-32 (large tiles, several tiles per image and channel block) */
    {8, 672, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {16, 960, 7, 7, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    {32, 16, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {8, 72, 28, 28, 5, 5, 2, 2, 2, 2, 1, 1, 1},
    {16, 120, 14, 14, 5, 5, 1, 1, 2, 2, 1, 1, 1},
    {32, 24, 9, 9, 7, 7, 1, 1, 3, 3, 1, 1, 0},
    {8, 200, 15, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static void case_name(char *buf, size_t n, const dw_case *k, const char *dt, const char *lay, const char *extra)
{
    snprintf(buf, n, "dw %dx%dx%dx%d k%dx%d s%d,%d p%d,%d d%d,%d b%d %s %s%s", k->N, k->C, k->H, k->W, k->KH, k->KW, k->sh,
             k->sw, k->ph, k->pw, k->dh, k->dw, k->bias, dt, lay, extra);
}

/* ran (may be NULL): gets the name of the kernel the GPU conv launched */
static void dw_one(const dw_case *k, gcr_dtype dt, enum lay lay, char (*ran)[64])
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->C, 1, k->KH, k->KW}, bs[1] = {k->C};
    gcr_tensor *xc, *xg, *wc, *wg, *bc = NULL, *bg = NULL;
    make2(dt, 4, xs, lay, &xc, &xg);
    make2(dt, 4, ws, L_NCHW, &wc, &wg);
    if (k->bias) make2(dt, 1, bs, L_NCHW, &bc, &bg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->C};
    char what[192];
    case_name(what, sizeof what, k, gcr_dtype_name(dt), lay_name[lay], "");
    gcr_tensor *yg = gcr_conv2d(gpu, xg, wg, bg, &p);
    if (ran) {
        const char *fn = gcr_cuda_last_kernel(gpu);
        snprintf(*ran, sizeof *ran, "%s", yg && fn ? fn : "nothing");
    }
    compare(gcr_conv2d(cpu, xc, wc, bc, &p), yg, dt, what);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_depthwise(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int i = 0; i < N_CASES; i++)
        for (int d = 0; d < 3; d++)
            for (int l = 0; l < 3; l++) {
                if (l == L_CSLICE && (cases[i].N * cases[i].C * cases[i].H > 20000 || d == 2)) continue; /* the big ones once */
                dw_one(&cases[i], dts[d], (enum lay)l, NULL);
            }
}

/* ---------------------------------------------------------------- fusion hooks */
#ifdef GCR_HAVE_CUDA
/* A depthwise conv with a prologue (relu then a per-(image, channel) f32 scale, as a squeeze-excite
 * would) and/or an epilogue ((acc + bias) * alpha + an f32 residual at idx), both reading extra
 * kernel parameters; the reference is the unfused f32 computation on the CPU from the same values.
 * With no epilogue the tile's default vector store runs behind the prologue. */
static void hooked_one(const dw_case *k, gcr_dtype dt, enum lay lay, int pro, int epi)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->C, 1, k->KH, k->KW}, bs[1] = {k->C};
    int64_t ses[4] = {k->N, k->C, 1, 1};
    gcr_tensor *xc, *xg, *wc, *wg, *bc, *bg, *sc, *sg, *rc = NULL, *rg = NULL;
    make2(dt, 4, xs, lay, &xc, &xg);
    make2(dt, 4, ws, L_NCHW, &wc, &wg);
    make2(dt, 1, bs, L_NCHW, &bc, &bg);
    make2(GCR_F32, 4, ses, L_NCHW, &sc, &sg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->C};
    float alpha = 0.75f;
    gcr_call c = {0};
    c.op = GCR_OP_CONV2D;
    c.n_in = 3;
    c.in[0] = xg; c.in[1] = wg; c.in[2] = bg;
    c.p.conv = p;
    gcr_tensor *out = xg && wg && bg ? new_result(gpu, &c) : NULL;
    /* the reference in f32 from the dtype's values */
    gcr_tensor *x32 = gcr_cast(cpu, xc, GCR_F32), *w32 = gcr_cast(cpu, wc, GCR_F32), *b32 = gcr_cast(cpu, bc, GCR_F32);
    if (pro) x32 = gcr_mul(cpu, gcr_relu(cpu, x32), sc);
    gcr_tensor *ref = gcr_conv2d(cpu, x32, w32, b32, &p);
    if (epi) { /* the residual in the output's layout: the hook reads it at the output's idx */
        int64_t ys[4] = {k->N, k->C, ref ? gcr_tensor_dim(ref, 2) : 1, ref ? gcr_tensor_dim(ref, 3) : 1};
        make2(GCR_F32, 4, ys, out && gcr_tensor_format(out) == GCR_NHWC ? L_NHWC : L_NCHW, &rc, &rg);
        ref = gcr_add(cpu, gcr_mul_scalar(cpu, ref, alpha), rc);
    }
    char defs[640];
    snprintf(defs, sizeof defs, "#define GCR_EXTRA_PARAMS , const float *__restrict__ se, const float *__restrict__ res, float alpha, int ch\n%s%s",
             pro ? "#define GCR_PROLOGUE(v, n, c) (fmaxf((v), 0.0f) * se[(n) * ch + (c)])\n" : "",
             epi ? "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), ((acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f)) * alpha + res[idx])\n" : "");
    const void *sep = sg ? gcr_tensor_data(sg) : NULL, *rp = rg ? gcr_tensor_data(rg) : NULL;
    int ch = k->C;
    void *extra[] = {&sep, &rp, &alpha, &ch};
    gcr_cuda_hooks h = {defs, extra, 4, NULL, NULL, 0, NULL, pro};
    char what[192];
    case_name(what, sizeof what, k, gcr_dtype_name(dt), lay_name[lay], pro && epi ? " hooked pro+epi" : pro ? " hooked pro" : " hooked epi");
    gcr_status st = out ? gcr_cuda_conv2d_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
    if (CHECK_OK(gpu, st)) compare(ref, out, dt, what);
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_hooks(void)
{
    static const int picks[] = {0, 3, 4, 5, 9, 12, 19, 21};
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int i = 0; i < (int)(sizeof picks / sizeof picks[0]); i++)
        for (int d = 0; d < 3; d++) {
            const dw_case *k = &cases[picks[i]];
            hooked_one(k, dts[d], L_NHWC, 1, 1);
            hooked_one(k, dts[d], L_NHWC, 1, 0); /* prologue, default vector store */
            hooked_one(k, dts[d], L_NHWC, 0, 1);
            if (d == 0) {
                hooked_one(k, dts[d], L_NCHW, 1, 1);
                hooked_one(k, dts[d], L_CSLICE, 1, 1);
            }
        }
}

/* The shapes the channel-group kernel (gcr_dwc_*) takes by default at larger batches, on the tile
 * instead (forced through gcr_cuda_dense_force), so the tile's large-batch geometry stays covered */
static void test_tile_forced(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    gcr_cuda_dense_force(gpu, "dwv");
    for (int i = 0; i < N_CASES; i++)
        for (int d = 0; d < 3; d++) dw_one(&cases[i], dts[d], L_NHWC, NULL);
    hooked_one(&cases[3], GCR_F16, L_NHWC, 1, 1);
    hooked_one(&cases[12], GCR_BF16, L_NHWC, 1, 0);
    gcr_cuda_dense_force(gpu, NULL);
}

/* A channels-last kernel forced onto every case it can run (square taps 3/5, or up to 7 for the
 * staged tile, column stride 1/2 and dilation 1, channels a whole number of 16-byte vectors): each
 * dtype, plain and hooked, so its 4-output rows meet odd widths (1-3 outputs left in a row),
 * partial channel blocks, row stride 2, row dilation, whole rows of padding and taps larger than
 * the image; at batch 8-32 each block walks several tiles */
static void forced_family(const char *force, const char *kernel, int ks_max)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    gcr_cuda_dense_force(gpu, force);
    for (int i = 0; i < N_CASES; i++) {
        const dw_case *k = &cases[i];
        if (k->KH != k->KW || k->KH % 2 == 0 || k->KH > ks_max || k->dw != 1 || (k->sw != 1 && k->sw != 2)) continue;
        for (int d = 0; d < 3; d++) {
            if (k->C % (16 / (int)gcr_dtype_size(dts[d]))) continue;
            char what[192], ran[64], extra[32];
            snprintf(extra, sizeof extra, " forced %s", force);
            case_name(what, sizeof what, k, gcr_dtype_name(dts[d]), "nhwc", extra);
            dw_one(k, dts[d], L_NHWC, &ran);
            CHECK(strstr(ran, kernel) != NULL, "%s: ran %s", what, ran);
            hooked_one(k, dts[d], L_NHWC, 1, 1);
            hooked_one(k, dts[d], L_NHWC, d == 1, d != 1);
        }
    }
    gcr_cuda_dense_force(gpu, NULL);
}

/* the channel-group kernel (gcr_dwc_*) */
static void test_dwc_forced(void) { forced_family("dwc", "gcr_dwc_", 5); }
/* the staged tile (gcr_dws_*) */
static void test_dws_forced(void) { forced_family("dws", "gcr_dws_", 7); }

/* one case on ctx c (gpu's operands made there), the kernel it ran in *ran */
static void dw_on(gcr_ctx *c, const dw_case *k, char (*ran)[64])
{
    gcr_ctx *save = gpu;
    gpu = c;
    dw_one(k, GCR_F16, L_NHWC, ran);
    gpu = save;
}

/* The choice between the heuristic's kernel and the staged tile. By default the staged tile where
 * the channel-group kernel's blocks would hold fewer than 8 channel groups at column stride 1 (16
 * channels of f16), else the heuristic's (64 channels at batch 32: the channel-group kernel). Under
 * GCR_AUTOTUNE=1 each shape is measured once: a second call answers from memory and a fresh ctx on
 * the same cache folder from disk, the result right every time. */
static void test_choice(void)
{
    static const dw_case k16 = {8, 16, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1}, k64 = {32, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    char ran[64], dir[] = "/tmp/gcr_dwtune_XXXXXX";
    dw_one(&k16, GCR_F16, L_NHWC, &ran);
    CHECK(strstr(ran, "gcr_dws_") != NULL, "16 channels: ran %s, want the staged tile", ran);
    dw_one(&k64, GCR_F16, L_NHWC, &ran);
    CHECK(strstr(ran, "gcr_dwc_") != NULL, "64 channels at batch 32: ran %s, want the channel-group kernel", ran);
    if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp")) return;
    gcr_ctx *a = tu_ctx(GCR_DEVICE_CUDA, dir, 1), *b = NULL;
    if (!CHECK(a != NULL, "an autotuning ctx")) goto done;
    dw_on(a, &k64, &ran);
    CHECK(tu_stats(a).measured == 1, "measured %d shapes, want 1", tu_stats(a).measured);
    CHECK(strstr(ran, "gcr_dwc_") || strstr(ran, "gcr_dws_"), "measured: ran %s", ran);
    dw_on(a, &k64, &ran);
    CHECK(tu_stats(a).measured == 1 && tu_stats(a).mem_hits == 1, "again: measured %d, from memory %d", tu_stats(a).measured,
          tu_stats(a).mem_hits);
    b = tu_ctx(GCR_DEVICE_CUDA, dir, 1);
    if (!CHECK(b != NULL, "a second autotuning ctx")) goto done;
    dw_on(b, &k64, &ran);
    CHECK(tu_stats(b).measured == 0 && tu_stats(b).disk_hits == 1, "second ctx: measured %d, from disk %d",
          tu_stats(b).measured, tu_stats(b).disk_hits);
done:
    gcr_ctx_destroy(b);
    gcr_ctx_destroy(a);
    h_rmtree(dir);
}
#else
static void test_hooks(void) {}
static void test_tile_forced(void) {}
static void test_dwc_forced(void) {}
static void test_dws_forced(void) {}
static void test_choice(void) {}
#endif

int main(void)
{
    if (!open2(20261125)) return h_finish();
    RUN(test_depthwise);
    RUN(test_hooks);
    RUN(test_tile_forced);
    RUN(test_dwc_forced);
    RUN(test_dws_forced);
    RUN(test_choice);
    return close2();
}
