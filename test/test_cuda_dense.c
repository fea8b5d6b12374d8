/* test_cuda_dense.c — the GPU conv2d, matmul/linear and pooling kernels against the CPU backend on
 * the same random data: odd sizes, strides, padding, dilation, groups (depthwise too), 1x1, bias
 * on/off, NCHW / NHWC / channels-last (x and weights) / permuted / sliced inputs, f32 (1e-4) and
 * f16/bf16 (~1e-2); the tensor-core implicit GEMM for every tap shape; split-K at few output
 * tiles (and its run-to-run bit equality); the deep-pipeline and small-channel tiles, forced; the
 * batch broadcasts of matmul; the fusion hooks (prologue, epilogue, extra kernel parameters); the
 * TF32 tile (knobs.tf32) on f32, at TF32's tolerance; and the 8-wide epilogue (GCR_EPILOGUE8) of
 * channel-contiguous outputs, default and generated, aligned or not. Skips where no GPU is present. */
#include "gpu_compare.h"

/* how an operand is laid out in memory; the logical values are the same in every case */
enum lay { L_DENSE, L_NHWC, L_PERM, L_SLICE, L_CL };
static const char *lay_name[] = {"dense", "nhwc", "perm", "slice", "cl"};
/* a conv's weight layout for input layout lay: channels-last with L_CL (PyTorch's channels_last
 * model), permuted with L_PERM, else dense OIHW */
static enum lay w_lay(enum lay lay) { return lay == L_PERM || lay == L_CL ? lay : L_DENSE; }
static const char *dt_name(gcr_dtype t) { return gcr_dtype_name(t); }

/* One random operand made on both contexts with identical values and layout. */
static void make2(gcr_dtype dt, int nd, const int64_t *shape, enum lay lay, gcr_tensor **tc, gcr_tensor **tg)
{
    int64_t phys[GCR_MAX_DIMS];
    int perm[GCR_MAX_DIMS];
    for (int i = 0; i < nd; i++) phys[i] = shape[i], perm[i] = i;
    if (lay == L_PERM && nd >= 2) { /* store reversed pairs: logical dim i lives at physical dim perm[i] */
        if (nd == 4) { perm[0] = 1; perm[1] = 0; perm[2] = 3; perm[3] = 2; }
        else if (nd == 3) { perm[0] = 1; perm[1] = 2; perm[2] = 0; }
        else { perm[nd - 2] = nd - 1; perm[nd - 1] = nd - 2; }
        for (int i = 0; i < nd; i++) phys[perm[i]] = shape[i];
    }
    if (lay == L_SLICE) phys[nd - 1] = 2 * shape[nd - 1] + 1;
    gcr_tensor *t[2];
    rand2(dt, nd, phys, (lay == L_NHWC || lay == L_CL) && nd == 4 ? GCR_NHWC : GCR_NCHW, t);
    gcr_ctx *cs[2] = {cpu, gpu};
    for (int k = 0; k < 2; k++) {
        if (t[k] && lay == L_PERM && nd >= 2) t[k] = gcr_permute(cs[k], t[k], perm);
        if (t[k] && lay == L_SLICE) t[k] = gcr_slice(cs[k], t[k], nd - 1, 1, phys[nd - 1], 2);
    }
    *tc = t[0];
    *tg = t[1];
}

/* each kernel here must also keep the CPU's memory format */
static void compare(gcr_tensor *rc, gcr_tensor *rg, gcr_dtype dt, const char *what) { compare_as(rc, rg, dt, 1, what); }

/* ---------------------------------------------------------------- conv2d */

typedef struct conv_case {
    int N, C, H, W, O, KH, KW, sh, sw, ph, pw, dh, dw, groups, bias;
} conv_case;

static const conv_case convs[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {1, 16, 13, 11, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* 1x1, odd spatial */
    {2, 37, 9, 7, 29, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},     /* 1x1, odd channels, no bias */
    {3, 3, 17, 15, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},    /* stem-like 3x3 s2 */
    {2, 8, 12, 10, 12, 3, 5, 1, 2, 2, 1, 2, 1, 1, 1},    /* rectangular, dilation, mixed strides */
    {2, 12, 10, 9, 18, 3, 3, 1, 1, 1, 1, 1, 1, 3, 1},    /* grouped */
    {2, 24, 15, 13, 24, 3, 3, 1, 1, 1, 1, 1, 1, 24, 1},  /* depthwise 3x3 */
    {1, 40, 14, 14, 40, 5, 5, 2, 2, 2, 2, 1, 1, 40, 0},  /* depthwise 5x5 s2 */
    {2, 10, 11, 9, 10, 3, 2, 2, 1, 1, 0, 2, 1, 10, 1},   /* depthwise, odd taps (run-time loop) */
    {2, 6, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 6, 1},      /* channel multiplier 2: grouped, not depthwise */
    {2, 16, 11, 12, 16, 3, 3, 2, 2, 1, 1, 2, 1, 16, 1},  /* depthwise 3x3 s2, row dilation */
    {1, 8, 9, 10, 8, 5, 5, 1, 1, 2, 2, 1, 1, 8, 1},      /* depthwise 5x5 s1, OW not a multiple of 4 */
    {3, 48, 1, 1, 20, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},     /* squeeze-excite: 1x1 spatial, GEMV kernel */
    {1, 40, 3, 2, 70, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0},     /* 2 output pixels: GEMV with a stride */
    /* large ones: layouts covered by the small ones */
    {2, 64, 64, 64, 128, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* enough tiles for the 64-wide engine */
    {2, 16, 96, 96, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* N <= 32 with many rows: the tall tile */
    {1, 960, 7, 7, 160, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* MobileNet tail: tiny M, long K (split K) */
    /* the streaming tensor-core tiles (gemm_tc.cuh, f16/bf16; >= 132 tiles of 128 rows): NHWC
     * k-contiguous rows, NCHW (dense) pixel-contiguous rows; partial column tiles, K tails */
    {16, 24, 48, 48, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* 128x64 tile */
    {24, 40, 48, 48, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},  /* 128x32 tile, K 40: a partial k tile */
    {16, 64, 40, 40, 200, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* 128x128 tile, 2 k tiles */
    {2, 12, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 12, 1},    /* depthwise, C % 8 != 0 */
    {200, 24, 14, 14, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* NCHW, H*W % 8 != 0: tc tile, A by elements */
    {600, 64, 7, 7, 136, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},  /* same, 7x7 (odd H*W), 128x128 tile */
    /* channels-last depthwise with 16-byte channel groups (enough threads to be picked) */
    {8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64, 1},  /* 3x3 s1 */
    {16, 96, 56, 56, 96, 5, 5, 2, 2, 2, 2, 1, 1, 96, 0}, /* 5x5 s2 */
    {32, 320, 14, 14, 320, 3, 3, 1, 1, 1, 1, 2, 1, 320, 1}, /* 2 channel chunks, the last partial; row dilation */
    /* the direct kernel for short reductions (>= 132 * 512 output pixels) */
    {6, 3, 224, 224, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},  /* the stem (NHWC out: staged stores) */
    {8, 16, 96, 96, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},   /* f32 1x1 K 16 into NCHW */
    {16, 6, 72, 72, 12, 3, 3, 1, 1, 1, 1, 1, 1, 6, 1},   /* channel multiplier 2: 6 groups in z */
};
#define N_BIG_CONVS 15

/* The tensor-core implicit GEMM (gemm_tc.cuh AT 3: channels-last x and weights, channels per group
 * a multiple of 8, or of 4 in TF32), each with >= 132 row tiles of 128 so the tile is picked; the
 * CPU reference keeps them small in C and O. */
static const conv_case implicit[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {8, 16, 47, 47, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* 3x3 s1: the 64-wide tile, K 144 (4.5 k tiles) */
    {18, 8, 63, 63, 136, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},  /* 3x3 s2, odd input: 128-wide tile, partial column tile */
    {20, 16, 31, 31, 24, 5, 5, 1, 1, 4, 4, 2, 2, 1, 1},  /* 5x5 dilation 2: the 32-wide tile */
    {6, 8, 111, 111, 40, 7, 7, 2, 2, 3, 3, 1, 1, 1, 1},  /* 7x7 s2 p3 (a stem of 8 channels) */
    {24, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 4, 1},  /* 4 groups of 16 channels: group offsets in z */
    {20, 24, 28, 28, 40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0},  /* 1x1 with padding */
    {32, 24, 40, 40, 32, 3, 1, 2, 1, 1, 0, 1, 1, 1, 1},  /* 3x1 taps, stride (2, 1) */
    {16, 40, 36, 36, 48, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1},  /* no padding, K 360: a k tile straddles taps */
    {12, 12, 42, 42, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  /* 12 channels: 16-bit not on the tile, TF32 is */
};

static char ran[64]; /* the kernel the last conv_one ran on the GPU */

static void conv_one(const conv_case *k, gcr_dtype dt, enum lay lay)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW}, bs[1] = {k->O};
    gcr_tensor *xc, *xg, *wc, *wg, *bc = NULL, *bg = NULL;
    make2(dt, 4, xs, lay, &xc, &xg);
    make2(dt, 4, ws, w_lay(lay), &wc, &wg);
    if (k->bias) make2(dt, 1, bs, L_DENSE, &bc, &bg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    gcr_tensor *rc = gcr_conv2d(cpu, xc, wc, bc, &p), *rg = gcr_conv2d(gpu, xg, wg, bg, &p);
#ifdef GCR_HAVE_CUDA
    snprintf(ran, sizeof ran, "%s", rg && gcr_cuda_last_kernel(gpu) ? gcr_cuda_last_kernel(gpu) : "");
#endif
    char what[160];
    snprintf(what, sizeof what, "conv %dx%dx%dx%d O%d k%dx%d s%d,%d p%d,%d d%d,%d g%d b%d %s %s", k->N, k->C, k->H, k->W,
             k->O, k->KH, k->KW, k->sh, k->sw, k->ph, k->pw, k->dh, k->dw, k->groups, k->bias, dt_name(dt), lay_name[lay]);
    tf32_k = (int64_t)(k->C / k->groups) * k->KH * k->KW;
    compare(rc, rg, dt, what);
    tf32_k = 0;
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_conv(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    const int n = (int)(sizeof convs / sizeof convs[0]);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++)
            for (int l = 0; l < 4; l++) {
                if (i >= n - N_BIG_CONVS && l >= 2) continue;
                conv_one(&convs[i], dts[d], (enum lay)l);
            }
    /* tc tile, A by elements from a sliced (strided) and a permuted input */
    conv_one(&convs[20], GCR_F16, L_SLICE);
    conv_one(&convs[21], GCR_BF16, L_PERM);
}

/* conv_one with the dense engine forced onto the tactic whose kernel name contains force; when
 * legal says it is one of the problem's tactics, it must be the kernel that ran */
static void conv_forced(const conv_case *k, gcr_dtype dt, enum lay lay, const char *force, int legal)
{
#ifdef GCR_HAVE_CUDA
    gcr_cuda_dense_force(gpu, force);
    conv_one(k, dt, lay);
    gcr_cuda_dense_force(gpu, NULL);
    if (legal)
        CHECK(strstr(ran, force) != NULL, "conv C%d O%d k%dx%d g%d %s %s: forced onto %s, ran %s", k->C, k->O, k->KH,
              k->KW, k->groups, dt_name(dt), lay_name[lay], force, ran);
#else
    conv_one(k, dt, lay);
#endif
}

/* every implicit case in every dtype, channels-last, on each of the tile's widths (128 and 64 only
 * where N needs them: the engine offers no tile twice N's width) and on the heuristic's pick; NHWC x
 * with OIHW weights (the other engines) on the first cases. In f32 the tile is TF32 only
 * (test_tf32); the FMA engine runs it here. */
static void test_implicit(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    static const char *tiles[] = {"tc32k", "tc64k", "tc128k"};
    for (int i = 0; i < (int)(sizeof implicit / sizeof implicit[0]); i++) {
        const conv_case *k = &implicit[i];
        int on_tile = (k->C / k->groups) % 8 == 0;
        for (int d = 0; d < 3; d++) {
            conv_one(k, dts[d], L_CL);
            if (dts[d] != GCR_F32 && on_tile)
                CHECK(strstr(ran, "k_") || strstr(ran, "kd_") || strstr(ran, "kw"),
                      "conv C%d k%dx%d %s cl: the heuristic picks the implicit tile, ran %s",
                      k->C, k->KH, k->KW, dt_name(dts[d]), ran);
            for (int t = 0; t < 3 && dts[d] != GCR_F32; t++)
                conv_forced(k, dts[d], L_CL, tiles[t], on_tile && (t == 0 || k->O / k->groups > 16 << t));
            conv_forced(k, dts[d], L_CL, dts[d] == GCR_F32 ? "fma32" : "mma32", 1);
            if (dts[d] != GCR_F32) { /* the deep-pipeline tiles: 64 wide ("kd_" finds it first), 128 where N needs it */
                conv_forced(k, dts[d], L_CL, "kd_", on_tile);
                conv_forced(k, dts[d], L_CL, "8kd_", on_tile && k->O / k->groups > 64);
            }
            if (i < 2) conv_one(k, dts[d], L_NHWC);
        }
    }
}

/* ---------------------------------------------------------------- matmul, linear */

static void matmul_one(int na, const int64_t *sa, enum lay la, int nb, const int64_t *sb, enum lay lb, gcr_dtype dt)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    gcr_tensor *ac, *ag, *bc, *bg;
    make2(dt, na, sa, la, &ac, &ag);
    make2(dt, nb, sb, lb, &bc, &bg);
    char what[160];
    int k = snprintf(what, sizeof what, "matmul [");
    for (int i = 0; i < na; i++) k += snprintf(what + k, sizeof what - k, i ? ",%lld" : "%lld", (long long)sa[i]);
    k += snprintf(what + k, sizeof what - k, "]%s x [", lay_name[la]);
    for (int i = 0; i < nb; i++) k += snprintf(what + k, sizeof what - k, i ? ",%lld" : "%lld", (long long)sb[i]);
    snprintf(what + k, sizeof what - k, "]%s %s", lay_name[lb], dt_name(dt));
    compare(gcr_matmul(cpu, ac, bc), gcr_matmul(gpu, ag, bg), dt, what);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_matmul(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int d = 0; d < 3; d++) {
        gcr_dtype dt = dts[d];
        int64_t a1[2] = {37, 53}, b1[2] = {53, 29};
        for (int l = 0; l < 4; l++) matmul_one(2, a1, (enum lay)l, 2, b1, (enum lay)(3 - l), dt);
        int64_t a2[4] = {2, 1, 19, 23}, b2[3] = {3, 23, 17}; /* batch broadcast both ways */
        matmul_one(4, a2, L_DENSE, 3, b2, L_DENSE, dt);
        matmul_one(4, a2, L_PERM, 3, b2, L_PERM, dt);
        int64_t a3[3] = {5, 33, 40}, b3[2] = {40, 21}; /* shared right operand: batch folds into rows */
        matmul_one(3, a3, L_DENSE, 2, b3, L_DENSE, dt);
        matmul_one(3, a3, L_SLICE, 2, b3, L_PERM, dt);
        int64_t a4[2] = {19, 23}, b4[3] = {4, 23, 9}; /* left operand broadcast over the batch */
        matmul_one(2, a4, L_DENSE, 3, b4, L_SLICE, dt);
        int64_t a5[2] = {700, 96}, b5[2] = {96, 780}; /* 64-wide tiles */
        matmul_one(2, a5, L_DENSE, 2, b5, L_DENSE, dt);
        int64_t a6[2] = {1, 960}, b6[2] = {960, 1280}; /* batch-1 classifier */
        matmul_one(2, a6, L_DENSE, 2, b6, L_PERM, dt);
        int64_t a7[2] = {17408, 64}, b7[2] = {64, 40}; /* tc tile, A column-major (pixel-contiguous rows) */
        matmul_one(2, a7, L_PERM, 2, b7, L_PERM, dt);
    }
}

static void linear_one(int nx, const int64_t *sx, int64_t out_f, int bias, enum lay lx, gcr_dtype dt)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t sw[2] = {out_f, sx[nx - 1]}, sb[1] = {out_f};
    gcr_tensor *xc, *xg, *wc, *wg, *bc = NULL, *bg = NULL;
    make2(dt, nx, sx, lx, &xc, &xg);
    make2(dt, 2, sw, L_DENSE, &wc, &wg);
    if (bias) make2(dt, 1, sb, L_DENSE, &bc, &bg);
    char what[128];
    snprintf(what, sizeof what, "linear %d-d K%lld -> %lld bias %d %s %s", nx, (long long)sx[nx - 1], (long long)out_f, bias,
             lay_name[lx], dt_name(dt));
    tf32_k = sx[nx - 1];
    compare(gcr_linear(cpu, xc, wc, bc), gcr_linear(gpu, xg, wg, bg), dt, what);
    tf32_k = 0;
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_linear(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int d = 0; d < 3; d++) {
        int64_t x1[1] = {77}, x2[2] = {9, 77}, x3[3] = {3, 11, 45}, x4[2] = {5, 77};
        linear_one(1, x1, 31, 1, L_DENSE, dts[d]);
        linear_one(2, x4, 31, 1, L_DENSE, dts[d]); /* GEMV */
        linear_one(2, x4, 33, 0, L_PERM, dts[d]);
        linear_one(2, x2, 31, 1, L_DENSE, dts[d]);
        linear_one(2, x2, 31, 0, L_PERM, dts[d]);
        linear_one(3, x3, 50, 1, L_DENSE, dts[d]);
        linear_one(3, x3, 50, 1, L_PERM, dts[d]);
        linear_one(3, x3, 50, 0, L_SLICE, dts[d]);
        int64_t x5[3] = {6, 10, 64}; /* K a multiple of 8: 16-byte operand loads */
        linear_one(3, x5, 40, 1, L_DENSE, dts[d]);
        linear_one(3, x5, 40, 1, L_PERM, dts[d]);
        int64_t x6[3] = {160, 128, 64}; /* tc 128x128 tile over 20480 rows, 72 columns */
        linear_one(3, x6, 72, 1, L_DENSE, dts[d]);
    }
}

/* ---------------------------------------------------------------- pooling */

typedef struct pool_case {
    int op; /* 0 max, 1 avg, 2 adaptive */
    int N, C, H, W, k0, k1, s0, s1, p0, p1, d0, d1, ceil, incl, oh, ow;
} pool_case;

static const pool_case pools[] = {
    /* op N  C  H   W  kh kw sh sw ph pw dh dw ceil incl oh ow */
    {0, 2, 5, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0},
    {0, 2, 5, 14, 11, 3, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0},  /* ceil mode */
    {0, 1, 6, 15, 16, 3, 3, 1, 2, 1, 0, 2, 2, 0, 0, 0, 0},  /* dilation */
    {1, 2, 5, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, 0, 0},  /* count_include_pad */
    {1, 2, 5, 13, 11, 3, 3, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0},
    {1, 2, 5, 14, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0},  /* ceil mode overhang, include pad */
    {1, 1, 3, 8, 9, 2, 4, 2, 3, 0, 2, 1, 1, 1, 0, 0, 0},
    {2, 2, 7, 10, 13, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5}, /* adaptive, uneven windows */
    {2, 2, 40, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},  /* global average */
    {2, 3, 70, 29, 31, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, /* global average, long rows */
    {2, 1, 96, 56, 56, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, /* global average, one image: pixel splits */
    {2, 2, 33, 17, 19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, /* splits over odd pixels and channels */
    /* channels-last with C a multiple of a 16-byte vector: a block of 32 vectors of channels, the
     * last block partial (520 = 2 x 256 + 8 halves, 4 x 128 + 8 floats), and split over pixels */
    {2, 3, 520, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
    {2, 1, 264, 23, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
    /* fewer channels than a block's 32 chunks: the threads spread over pixels (9 chunks of 8 halves
     * in 28 pixel lanes, split over pixels; one chunk in 256 lanes, its sums added in 32 slices) */
    {2, 5, 72, 28, 28, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
    {2, 2, 8, 19, 23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1},
};

static gcr_tensor *pool_run(gcr_ctx *ctx, const pool_case *k, gcr_tensor *x)
{
    if (k->op == 2) return gcr_adaptive_avg_pool2d(ctx, x, k->oh, k->ow);
    gcr_pool2d_params p = {{k->k0, k->k1}, {k->s0, k->s1}, {k->p0, k->p1}, {k->d0, k->d1}, k->ceil, k->incl};
    return k->op ? gcr_avg_pool2d(ctx, x, &p) : gcr_max_pool2d(ctx, x, &p);
}

static void test_pool(void)
{
    const gcr_dtype dts[] = {GCR_F32, GCR_F16, GCR_BF16};
    const int n = (int)(sizeof pools / sizeof pools[0]);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < 3; d++)
            for (int l = 0; l < 4; l++) {
                const pool_case *k = &pools[i];
                uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
                int64_t xs[4] = {k->N, k->C, k->H, k->W};
                gcr_tensor *xc, *xg;
                make2(dts[d], 4, xs, (enum lay)l, &xc, &xg);
                char what[128];
                snprintf(what, sizeof what, "pool op%d %dx%dx%dx%d k%dx%d s%d,%d p%d,%d d%d,%d ceil%d incl%d out%dx%d %s %s",
                         k->op, k->N, k->C, k->H, k->W, k->k0, k->k1, k->s0, k->s1, k->p0, k->p1, k->d0, k->d1, k->ceil,
                         k->incl, k->oh, k->ow, dt_name(dts[d]), lay_name[l]);
                compare(pool_run(cpu, k, xc), pool_run(gpu, k, xg), dts[d], what);
                gcr_scope_end(cpu, s0);
                gcr_scope_end(gpu, s1);
            }
}

/* ---------------------------------------------------------------- fusion hooks */
#ifdef GCR_HAVE_CUDA
/* Prologue: relu then a per-(image, channel) scale (squeeze-excite); epilogue: (acc + bias) * alpha
 * + residual, reading two extra kernel parameters. f32 only: the extras are float buffers. */
static const char *hook_defs =
    "#define GCR_EXTRA_PARAMS , const float *__restrict__ se, const float *__restrict__ res, float alpha, int ch\n"
    "#define GCR_PROLOGUE(v, n, c) (fmaxf((v), 0.0f) * se[(n) * ch + (c)])\n"
    "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), ((acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f)) * alpha + res[idx])\n";

static void hooked_conv_one(const conv_case *k, enum lay lay)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW}, bs[1] = {k->O};
    int64_t ses[4] = {k->N, k->C, 1, 1};
    gcr_tensor *xc, *xg, *wc, *wg, *bc, *bg, *sc, *sg, *rc, *rg;
    make2(GCR_F32, 4, xs, lay, &xc, &xg);
    make2(GCR_F32, 4, ws, w_lay(lay), &wc, &wg);
    make2(GCR_F32, 1, bs, L_DENSE, &bc, &bg);
    make2(GCR_F32, 4, ses, L_DENSE, &sc, &sg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    float alpha = 0.75f;
    /* reference on the CPU, unfused: conv(relu(x) * se) * alpha + res */
    gcr_tensor *yc = gcr_conv2d(cpu, gcr_mul(cpu, gcr_relu(cpu, xc), sc), wc, bc, &p);
    int64_t ys[4] = {k->N, k->O, yc ? gcr_tensor_dim(yc, 2) : 1, yc ? gcr_tensor_dim(yc, 3) : 1};
    make2(GCR_F32, 4, ys, lay == L_NHWC || lay == L_CL ? L_NHWC : L_DENSE, &rc, &rg);
    gcr_tensor *ref = gcr_add(cpu, gcr_mul_scalar(cpu, yc, alpha), rc);

    gcr_call c = {0};
    c.op = GCR_OP_CONV2D;
    c.n_in = 3;
    c.in[0] = xg; c.in[1] = wg; c.in[2] = bg;
    c.p.conv = p;
    gcr_tensor *out = new_result(gpu, &c);
    const void *sep = sg ? gcr_tensor_data(sg) : NULL, *rp = rg ? gcr_tensor_data(rg) : NULL;
    int ch = k->C;
    void *extra[] = {&sep, &rp, &alpha, &ch};
    gcr_cuda_hooks h = {hook_defs, extra, 4, NULL, NULL, tf32_on, NULL, 1}; /* the ctx's numeric mode */
    char what[96];
    snprintf(what, sizeof what, "hooked conv C%d O%d k%d g%d %s", k->C, k->O, k->KH, k->groups, lay_name[lay]);
    gcr_status st = out ? gcr_cuda_conv2d_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
    if (CHECK_OK(gpu, st)) {
        /* the residual was made in out's layout: compare as logical values */
        compare(ref, out, GCR_F32, what);
    }
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

/* rows 13 per batch item of 4 (dense engine), or 3 rows of a 2-d input (GEMV; n is then 0) */
static void hooked_matmul(int gemv)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[3] = {4, 13, 37}, ws[2] = {21, 37}, bs[1] = {21}, ses[2] = {4, 37}, ys[3] = {4, 13, 21};
    if (gemv) xs[0] = ys[0] = ses[0] = 1, xs[1] = ys[1] = 3;
    gcr_tensor *xc, *xg, *wc, *wg, *bc, *bg, *sc, *sg, *rc, *rg;
    int nd = gemv ? 2 : 3;
    make2(GCR_F32, nd, xs + 3 - nd, L_DENSE, &xc, &xg);
    make2(GCR_F32, 2, ws, L_DENSE, &wc, &wg);
    make2(GCR_F32, 1, bs, L_DENSE, &bc, &bg);
    make2(GCR_F32, 2, ses, L_DENSE, &sc, &sg);
    make2(GCR_F32, nd, ys + 3 - nd, L_DENSE, &rc, &rg);
    float alpha = -1.5f;
    int64_t se3[3] = {ses[0], 1, 37};
    gcr_tensor *sc3 = gcr_reshape(cpu, sc, 3, se3);
    gcr_tensor *ref = gcr_add(cpu, gcr_mul_scalar(cpu, gcr_linear(cpu, gcr_mul(cpu, gcr_relu(cpu, xc), sc3), wc, bc), alpha), rc);
    gcr_call c = {0};
    c.op = GCR_OP_LINEAR;
    c.n_in = 3;
    c.in[0] = xg; c.in[1] = wg; c.in[2] = bg;
    gcr_tensor *out = new_result(gpu, &c);
    const void *sep = sg ? gcr_tensor_data(sg) : NULL, *rp = rg ? gcr_tensor_data(rg) : NULL;
    int ch = 37;
    void *extra[] = {&sep, &rp, &alpha, &ch};
    gcr_cuda_hooks h = {hook_defs, extra, 4, NULL, NULL, tf32_on, NULL, 1}; /* the ctx's numeric mode */
    gcr_status st = out ? gcr_cuda_matmul_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
    if (CHECK_OK(gpu, st)) compare(ref, out, GCR_F32, gemv ? "hooked linear [3,37] -> 21 (gemv)" : "hooked linear [4,13,37] -> 21");
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

/* f16: relu then a per-(image, channel) f32 scale in the load (the 16-byte path converts 8 values
 * at a time), and (acc + bias) * alpha in the store */
static const char *hook_defs16 =
    "#define GCR_EXTRA_PARAMS , const float *__restrict__ se, float alpha, int ch\n"
    "#define GCR_PROLOGUE(v, n, c) (fmaxf((v), 0.0f) * se[(n) * ch + (c)])\n"
    "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), ((acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f)) * alpha)\n";

/* the same prologue in its 8-wide halves (gemm.cuh GCR_PROLOGUE_FETCH8_ASYNC / _APPLY8): the
 * tensor-core tiles stage the scale in shared memory with the operand tile they scale */
static const char *hook_defs16s =
    "#include \"common.cuh\"\n"
    "#define GCR_EXTRA_PARAMS , const float *__restrict__ se, float alpha, int ch\n"
    "#define GCR_PROLOGUE(v, n, c) (fmaxf((v), 0.0f) * se[(n) * ch + (c)])\n"
    "struct t_fetch { gcr_raw8<0> s; };\n"
    "#define GCR_PRO_FETCH_T t_fetch\n"
    "#define GCR_PROLOGUE_FETCH8_ASYNC(fp, n, c) gcr_cp8_raw<0>(&(fp)->s, se, (long long)(n) * ch + (c))\n"
    "#define GCR_PROLOGUE_APPLY8(v8, f, n, c) do { float s_[8]; gcr_raw8_f32<0>((f).s, s_); \\\n"
    "    for (int j_ = 0; j_ < 8; j_++) (v8)[j_] = fmaxf((v8)[j_], 0.0f) * s_[j_]; } while (0)\n"
    "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), ((acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f)) * alpha)\n";

static void hooked_conv_f16_with(const conv_case *k, enum lay lay, const char *defs)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW}, bs[1] = {k->O};
    int64_t ses[4] = {k->N, k->C, 1, 1};
    gcr_tensor *xc, *xg, *wc, *wg, *bc, *bg, *sc, *sg;
    make2(GCR_F16, 4, xs, lay, &xc, &xg);
    make2(GCR_F16, 4, ws, w_lay(lay), &wc, &wg);
    make2(GCR_F16, 1, bs, L_DENSE, &bc, &bg);
    make2(GCR_F32, 4, ses, L_DENSE, &sc, &sg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    float alpha = 0.75f;
    gcr_tensor *ref = gcr_mul_scalar(cpu, gcr_conv2d(cpu, gcr_mul(cpu, gcr_relu(cpu, xc), gcr_cast(cpu, sc, GCR_F16)), wc, bc, &p), alpha);
    gcr_call c = {0};
    c.op = GCR_OP_CONV2D;
    c.n_in = 3;
    c.in[0] = xg; c.in[1] = wg; c.in[2] = bg;
    c.p.conv = p;
    gcr_tensor *out = new_result(gpu, &c);
    const void *sep = sg ? gcr_tensor_data(sg) : NULL;
    int ch = k->C;
    void *extra[] = {&sep, &alpha, &ch};
    gcr_cuda_hooks h = {defs, extra, 3, NULL, NULL, tf32_on, NULL, 1};
    char what[112];
    snprintf(what, sizeof what, "hooked f16 conv N%d C%d O%d k%d g%d %s%s", k->N, k->C, k->O, k->KH, k->groups, lay_name[lay],
             defs == hook_defs16s ? " (staged prologue)" : "");
    gcr_status st = out ? gcr_cuda_conv2d_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
    if (CHECK_OK(gpu, st)) compare(ref, out, GCR_F16, what);
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void hooked_conv_f16(const conv_case *k, enum lay lay)
{
    hooked_conv_f16_with(k, lay, hook_defs16);
}

/* a prologue that is one product by an f16 scale of an f16 input, as codegen_hooked.c emits it:
 * the 8-wide half in f32 (hook_scale16[0]) and on the packed values ([1], GCR_PROLOGUE_PACKED) */
#define HOOK_SCALE16                                                                                        \
    "#include \"common.cuh\"\n"                                                                             \
    "#define GCR_EXTRA_PARAMS , const gcr_ty<1>::t *__restrict__ se, int ch\n"                              \
    "#define GCR_PROLOGUE(v, n, c) ((v) * gcr_to_f32<1>(se[(n) * ch + (c)]))\n"                             \
    "struct t_fetch { gcr_raw8<1> s; };\n"                                                                  \
    "#define GCR_PRO_FETCH_T t_fetch\n"                                                                     \
    "#define GCR_PROLOGUE_FETCH8_ASYNC(fp, n, c) gcr_cp8_raw<1>(&(fp)->s, se, (long long)(n) * ch + (c))\n" \
    "#define GCR_PROLOGUE_APPLY8(v8, f, n, c) do { float s_[8]; gcr_raw8_f32<1>((f).s, s_); \\\n"           \
    "    for (int j_ = 0; j_ < 8; j_++) (v8)[j_] *= s_[j_]; } while (0)\n"
static const char *const hook_scale16[2] = {
    HOOK_SCALE16, HOOK_SCALE16 "#define GCR_PROLOGUE_PACKED 1\n"
                  "#define GCR_PROLOGUE_APPLY8_PACKED(q, f, n, c) gcr_mul8_packed((q), (f).s)\n"};

/* conv(x * s) in f16 with a per-(image, channel) scale s, on the tile the ctx picks or is forced
 * onto: the packed prologue must give the f32 one's bits, and both the CPU's values */
static void scale16_packed(const conv_case *k)
{
    const gcr_dtype dt = GCR_F16;
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C, 1, 1}, ses[4] = {k->N, k->C, 1, 1};
    gcr_tensor *xc, *xg, *wc, *wg, *sc, *sg;
    make2(dt, 4, xs, L_NHWC, &xc, &xg);
    make2(dt, 4, ws, w_lay(L_NHWC), &wc, &wg);
    make2(dt, 4, ses, L_DENSE, &sc, &sg);
    gcr_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
    gcr_tensor *ref = gcr_conv2d(cpu, gcr_mul(cpu, xc, sc), wc, NULL, &p);
    gcr_call c = {0};
    c.op = GCR_OP_CONV2D;
    c.n_in = 2;
    c.in[0] = xg; c.in[1] = wg;
    c.p.conv = p;
    const void *sep = sg ? gcr_tensor_data(sg) : NULL;
    int ch = k->C;
    void *extra[] = {&sep, &ch};
    float *r[2] = {NULL, NULL};
    char what[2][128];
    for (int d = 0; d < 2; d++) {
        gcr_tensor *out = new_result(gpu, &c);
        gcr_cuda_hooks h = {hook_scale16[d], extra, 2, NULL, NULL, 0, NULL, 1};
        gcr_status st = out ? gcr_cuda_conv2d_hooked(gpu, &c, out, &h) : GCR_ERR_INVALID;
        snprintf(what[d], sizeof what[d], "scale prologue %s N%d C%d O%d %dx%d%s, ran %s", gcr_dtype_name(dt), k->N, k->C,
                 k->O, k->H, k->W, d ? " (packed)" : "", gcr_cuda_dense_last(gpu));
        if (CHECK_OK(gpu, st)) {
            compare(ref, out, dt, what[d]);
            r[d] = h_read(out);
        }
        gcr_ctx_clear_error(gpu);
    }
    if (r[0] && r[1]) {
        int64_t n = k->N * k->O * k->H * k->W, bad = 0;
        for (int64_t i = 0; i < n; i++) bad += r[0][i] != r[1][i];
        CHECK(bad == 0, "%s: %lld of %lld outputs differ from the f32 prologue's", what[1], (long long)bad, (long long)n);
    }
    free(r[0]);
    free(r[1]);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_hooks(void)
{
    hooked_conv_f16(&convs[0], L_NHWC);   /* 1x1, 16-byte loads through the prologue */
    hooked_conv_f16(&convs[0], L_DENSE);
    hooked_conv_f16(&convs[15], L_NHWC);  /* split K, 16-byte loads */
    hooked_conv_f16(&convs[16], L_NHWC);  /* tc tiles: prologue on the landed shared chunks */
    hooked_conv_f16(&convs[16], L_DENSE);
    hooked_conv_f16(&convs[18], L_NHWC);
    hooked_conv_f16(&convs[18], L_DENSE);
    hooked_conv_f16(&convs[21], L_DENSE); /* tc tile, A by elements: prologue in registers */
    hooked_conv_f16(&convs[24], L_NHWC);  /* depthwise, 16-byte channel groups */
    gcr_cuda_dense_force(gpu, "direct_");
    hooked_conv_f16(&convs[25], L_NHWC);  /* the direct kernel */
    gcr_cuda_dense_force(gpu, NULL);
    hooked_conv_f16(&convs[25], L_NHWC);  /* the patch tile, the heuristic's pick */
    hooked_conv_f16(&convs[5], L_NHWC);   /* depthwise */
    hooked_conv_f16(&convs[2], L_DENSE);  /* general */
    /* the staged prologue on the 128 x 64 and 128 x 128 wgmma tiles (sm_90): tiles of rows in up
     * to 4 images, a partial k tile and column tile; rows over more images than the table holds
     * (the loads in place); one image; and the mma.sync tiles, which load in place. The 64-wide
     * tile rewrites step j + 1's stage while step j multiplies (gemm_tc.cuh EARLY), the 128-wide
     * one between steps: 3, 1, 8 and 2 k tiles of 64, with the staged and the in-place prologue */
    static const conv_case staged[] = {
        {24, 136, 7, 7, 72, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
        {64, 40, 2, 3, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},
        {1, 480, 14, 14, 112, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
        {3, 96, 9, 13, 136, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
    };
    static const char *const wide[] = {"tc64w", "tc128w"};
    for (int w = 0; w < 2; w++) {
        gcr_cuda_dense_force(gpu, wide[w]);
        for (int i = 0; i < 4; i++)
            for (int d = 0; d < 2; d++) {
                hooked_conv_f16_with(&staged[i], L_NHWC, d ? hook_defs16 : hook_defs16s);
                if (i != 1) /* K 40 may take another tile */
                    CHECK(strstr(gcr_cuda_dense_last(gpu), wide[w]) != NULL, "%s prologue C%d: forced onto %s, ran %s",
                          d ? "in-place" : "staged", staged[i].C, wide[w], gcr_cuda_dense_last(gpu));
            }
    }
    /* with a prologue, a problem of 4 tiles takes the mma.sync split, not the 64-wide wgmma tile
     * (dense.c wg_tactics: the split spreads the prologue's rewrites over more SMs) */
    gcr_cuda_dense_force(gpu, NULL);
    hooked_conv_f16_with(&staged[2], L_NHWC, hook_defs16s);
    if (gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu)))
        CHECK(strstr(gcr_cuda_dense_last(gpu), "/s") != NULL, "prologue C%d O%d at 14x14: expected a split tile, ran %s",
              staged[2].C, staged[2].O, gcr_cuda_dense_last(gpu));
    /* a scale's product on the packed values (GCR_PROLOGUE_PACKED): both wgmma widths, the mma.sync
     * tile, and the heuristic's pick (the split at one image), 1 to 8 k tiles */
    static const char *const packed_tiles[] = {"tc64w", "tc128w", "tc64_", NULL};
    for (int t = 0; t < 4; t++) {
        gcr_cuda_dense_force(gpu, packed_tiles[t]);
        for (int i = 0; i < 4; i++)
            if (i != 1) scale16_packed(&staged[i]);
    }
    gcr_cuda_dense_force(gpu, NULL);
    /* the implicit-GEMM wgmma tile: the prologue on landed chunks of taps, the padding left 0 */
    gcr_cuda_dense_force(gpu, "kw");
    hooked_conv_f16(&implicit[0], L_CL);
    CHECK(strstr(gcr_cuda_dense_last(gpu), "kw") != NULL, "implicit prologue: forced onto kw, ran %s",
          gcr_cuda_dense_last(gpu));
    gcr_cuda_dense_force(gpu, NULL);
    hooked_conv_f16_with(&convs[16], L_NHWC, hook_defs16s);
    hooked_conv_f16_with(&convs[0], L_DENSE, hook_defs16s);
    hooked_conv_one(&convs[0], L_DENSE);  /* 1x1 */
    hooked_conv_one(&convs[0], L_NHWC);
    hooked_conv_one(&convs[3], L_DENSE);  /* general */
    hooked_conv_one(&convs[4], L_NHWC);   /* grouped: channel offsets per group */
    hooked_conv_one(&convs[5], L_DENSE);  /* depthwise */
    hooked_conv_one(&convs[5], L_NHWC);
    hooked_conv_one(&convs[9], L_NHWC);   /* depthwise, 4 outputs per thread, stride 2 */
    hooked_conv_one(&convs[11], L_DENSE); /* GEMV */
    hooked_conv_one(&convs[15], L_NHWC);  /* split K */
    hooked_conv_one(&convs[23], L_NHWC);  /* depthwise 5x5 s2, 16-byte channel groups */
    hooked_conv_one(&convs[25], L_NHWC);  /* the direct kernel, staged stores */
    hooked_conv_one(&convs[26], L_DENSE); /* the direct kernel, 1x1 */
    hooked_conv_f16(&implicit[0], L_CL); /* implicit tc tile: prologue on landed chunks, padding left 0 */
    hooked_conv_f16(&implicit[4], L_CL); /* grouped: channel offsets per group */
    hooked_conv_one(&implicit[1], L_CL); /* f32: the FMA engine with channels-last weights */
    hooked_matmul(0);
    hooked_matmul(1);
}

/* One 1x1 NHWC conv of the same random data on the exact and the TF32 context: the TF32 result
 * must differ from FP32's (else the tile did not run) and stay within TF32's error of it. */
static void tf32_differs(gcr_ctx *exact, gcr_ctx *t32, const conv_case *k)
{
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C, 1, 1}, nx = k->N * k->C * k->H * k->W;
    float *hx = h_randn(nx, -1.0f, 1.0f), *hw = h_randn(k->O * k->C, -1.0f, 1.0f), *r[2] = {NULL, NULL};
    gcr_ctx *cs[2] = {exact, t32};
    gcr_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
    for (int i = 0; i < 2; i++) {
        uint64_t s = gcr_scope_begin(cs[i]);
        gcr_tensor *x = h_tensor(cs[i], GCR_F32, 4, xs, GCR_NHWC, hx), *w = h_tensor(cs[i], GCR_F32, 4, ws, GCR_NCHW, hw);
        gcr_tensor *y = gcr_conv2d(cs[i], x, w, NULL, &p);
        if (CHECK(y, "tf32 conv: %s", gcr_ctx_error(cs[i]))) r[i] = h_read(y);
        gcr_scope_end(cs[i], s);
    }
    if (r[0] && r[1]) {
        int64_t n = k->N * k->O * k->H * k->W;
        double d = 0, m = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = fabs((double)r[1][i] - r[0][i]);
            if (!(e <= d)) d = e;
            if (fabs(r[0][i]) > m) m = fabs(r[0][i]);
        }
        CHECK(d > 1e-6 * m && d <= 1e-2 * m, "conv %dx%dx%dx%d O%d nhwc: TF32 differs from FP32 by %.3g (max |y| %.3g): "
              "expected TF32 rounding, more than 1e-6 and at most 1e-2 relative", k->N, k->C, k->H, k->W, k->O, d, m);
    }
    free(hx);
    free(hw);
    free(r[0]);
    free(r[1]);
}

/* knobs.tf32: f32 1x1 convs and linear layers with k-contiguous operands on the TF32 tile (plain
 * and hooked); the other layouts and small problems keep the FP32 engines, so they pass too */
/* Split-K (gemm_tc.cuh gcr_tc_splitk): convs with fewer output tiles of the tensor-core tile than
 * the GPU has SMs, as at batch 1, which the heuristic splits along k (or, with few k tiles, puts on
 * the unsplit Hopper tile); the CPU reference keeps them small. Each runs as the heuristic picks,
 * forced onto the unsplit 32-wide tile and onto each split tile, and twice
 * more on one input to check that a split's result does not depend on which block arrives last. */
static const conv_case few_tiles[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {1, 64, 7, 7, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* a last stage at batch 1: 2 tiles, K 576 */
    {1, 32, 14, 14, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},  /* stride 2, N 40: a partial column tile */
    {2, 64, 9, 9, 64, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1},    /* 2 groups: the split beside z */
    {3, 256, 5, 5, 96, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* 1x1, K 256: the plain k-contiguous tile */
    {2, 24, 20, 20, 48, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1},  /* 5x5, K 600: k tiles straddle taps, 19 k tiles */
    {1, 512, 3, 3, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* K 4608 over 1 tile: the most splits */
};
#define N_FEW (int)(sizeof few_tiles / sizeof few_tiles[0])

/* conv k on one random input twice on the GPU: bit-identical results */
static void splitk_repeat(const conv_case *k, gcr_dtype dt, const char *split)
{
    uint64_t s1 = gcr_scope_begin(gpu);
    gcr_cuda_dense_force(gpu, split);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW};
    gcr_tensor *xc, *xg, *wc, *wg;
    make2(dt, 4, xs, L_CL, &xc, &xg);
    make2(dt, 4, ws, L_CL, &wc, &wg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    gcr_tensor *r1 = gcr_conv2d(gpu, xg, wg, NULL, &p), *r2 = gcr_conv2d(gpu, xg, wg, NULL, &p);
    if (CHECK(r1 && r2, "split-K repeat: %s", gcr_ctx_error(gpu))) {
        size_t nb = (size_t)gcr_tensor_numel(r1) * gcr_dtype_size(dt);
        void *h1 = malloc(nb), *h2 = malloc(nb);
        CHECK_OK(gpu, gcr_tensor_to_host(r1, h1, nb));
        CHECK_OK(gpu, gcr_tensor_to_host(r2, h2, nb));
        CHECK(strstr(gcr_cuda_dense_last(gpu), "/s") != NULL, "split-K repeat: forced onto %s, ran %s", split,
              gcr_cuda_dense_last(gpu));
        CHECK(memcmp(h1, h2, nb) == 0, "conv C%d k%dx%d %s: a split-K result changed between two runs", k->C, k->KH, k->KW,
              dt_name(dt));
        free(h1);
        free(h2);
    }
    gcr_cuda_dense_force(gpu, NULL);
    gcr_tensor_free(xc);
    gcr_tensor_free(wc);
    gcr_scope_end(gpu, s1);
}

static void test_splitk(void)
{
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    for (int i = 0; i < N_FEW; i++)
        for (int d = 0; d < 2; d++) {
            const conv_case *k = &few_tiles[i];
            const int og = k->O / k->groups, imp = k->KH * k->KW > 1 || k->ph || k->pw;
            /* the heuristic splits K, but on sm_90a, where N is over 32 and the k tiles are at most
             * 16, it takes the unsplit Hopper tile (dense.c wg_tactics) */
            const int wg = gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu)) && og > 32;
            conv_one(k, dts[d], L_CL);
            const char *took = gcr_cuda_dense_last(gpu);
            CHECK(strstr(took, "/s") != NULL || (wg && strstr(took, "w_") != NULL),
                  "conv C%d O%d k%dx%d %s: the heuristic splits K or takes the Hopper tile, ran %s", k->C, k->O, k->KH,
                  k->KW, dt_name(dts[d]), took);
            conv_forced(k, dts[d], L_CL, "tc32", 1);
            /* every split tile, the wider ones where N needs them */
            conv_forced(k, dts[d], L_CL, imp ? "32ks_" : "32s_", 1);
            conv_forced(k, dts[d], L_CL, imp ? "64ks_" : "64s_", og > 32);
            conv_forced(k, dts[d], L_CL, imp ? "128ks_" : "128s_", og > 64);
            splitk_repeat(k, dts[d], imp ? "32ks_" : "32s_");
        }
    hooked_conv_f16(&few_tiles[0], L_CL); /* the epilogue runs once, in the last split's block */
    hooked_conv_f16(&few_tiles[2], L_CL); /* grouped, with the prologue in every split */
    hooked_conv_f16(&few_tiles[3], L_CL);
    gcr_cuda_dense_force(gpu, "128ks_"); /* 8-column runs of the summed partials */
    hooked_conv_f16(&few_tiles[0], L_CL);
    gcr_cuda_dense_force(gpu, "64ks_"); /* a partial column tile: 40 = 5 runs of 8 */
    hooked_conv_f16(&few_tiles[1], L_CL);
    gcr_cuda_dense_force(gpu, "128s_");
    hooked_conv_f16(&few_tiles[3], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
}

/* The deep-pipeline tiles (gemm_tc.cuh DYN: 4 stages in 60-80 KB of dynamic shared memory, which
 * the launcher allows the function on its first launch; the heuristic takes the 128-wide implicit
 * one where it would take tc128k, and the 128-wide k-contiguous one for long-K 1x1s with two tiles
 * per SM), forced here: the k-contiguous 1x1 form ("d_", 64 wide) and the 128-wide implicit one,
 * plain and with hooks; test_implicit and test_tf32 run the implicit ones over every tap shape */
static void test_deep(void)
{
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    for (int d = 0; d < 2; d++) {
        conv_forced(&few_tiles[3], dts[d], L_CL, "d_", 1);
        conv_forced(&few_tiles[0], dts[d], L_CL, "8kd_", 1);
        conv_forced(&implicit[1], dts[d], L_CL, "8kd_", 1);
    }
    /* the heuristic's deep pick for a long-K 1x1 with two tiles per SM (133 row tiles x 2 on an
     * H100's 132 SMs) */
    static const conv_case deep1x1 = {2, 256, 92, 92, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1};
    conv_one(&deep1x1, GCR_F16, L_CL);
    if (266 >= 2 * gcr_cuda_sm_count(gpu))
        CHECK(strstr(ran, gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu)) ? "8w_" : "8d_") != NULL,
              "a 1x1 with K 256 and 266 tiles: the heuristic's deep tile (the WG tile on sm_90), ran %s", ran);
    gcr_cuda_dense_force(gpu, "kd_");
    hooked_conv_f16(&implicit[0], L_CL);
    hooked_conv_f16(&implicit[4], L_CL);
    gcr_cuda_dense_force(gpu, "d_");
    hooked_conv_f16(&few_tiles[3], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
}

/* The Hopper tiles (gemm_tc.cuh WG: the 128 x 128 tile's product on wgmma from 128-byte swizzled
 * shared rows, offered where programs are built for sm_90a), forced on each layout they take:
 * implicit GEMMs whose k tiles straddle taps, with strides, padding, groups, partial row and column
 * tiles and a k tail, and k-contiguous 1x1s with K not a multiple of the 64-element k tile; plain
 * in f16 and bf16, and with a fused prologue and epilogue; split along k on few tiles (the last
 * split's k tiles fewer than the others'). Elsewhere they are not offered and the heuristic's pick
 * runs the same cases. */
static const conv_case wgmma_cases[] = {
    /* N  C    H   W    O  KH KW sh sw ph pw dh dw  g  b */
    {18, 8, 63, 63, 136, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},  /* 3x3 s2, odd input: a partial column tile */
    {1, 64, 7, 7, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* 49 rows: one partial row tile */
    {4, 72, 15, 17, 96, 5, 5, 2, 1, 2, 2, 1, 1, 1, 0},   /* C 72: k tiles straddle taps, mixed strides */
    {4, 256, 10, 10, 256, 3, 3, 1, 1, 1, 1, 2, 2, 2, 1}, /* 2 groups of 128 (z), dilation 2 */
    {6, 64, 20, 20, 200, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  /* N 200: a full and a partial column tile */
    {3, 256, 5, 5, 96, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},    /* 1x1, K 256: k-contiguous */
    {2, 200, 13, 11, 136, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* 1x1, K 200: a k tail of 8 */
    {4, 64, 20, 20, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* N 64: the 64-wide tile */
    {3, 96, 9, 11, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},    /* 64 wide, N 40: a partial column tile, k tail 32 */
};

/* few tiles with long reductions: 1 tile and K 576 (2 splits of 5 and 4 k tiles), 4 tiles and K
 * 4608 (8 splits of 9), 2 tiles of a 1x1 with K 1000 (4 splits of 4, the last with a tail), one
 * 64-wide tile and K 2304 */
static const conv_case wgmma_split[] = {
    /* N  C    H  W    O  KH KW sh sw ph pw dh dw  g  b */
    {1, 64, 7, 7, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 512, 7, 7, 512, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0},
    {2, 1000, 7, 7, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
    {1, 256, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},    /* 64 wide: 8 splits of K 2304 */
};

/* the name of case k's WG tile (128 wide, 64 where N needs no more) whose kernel name ends in kind
 * (w_ or ws_) */
static const char *wgmma_tile(const conv_case *k, const char *kind, char *tile, size_t n)
{
    const int bn = k->O / k->groups <= 64 ? 64 : 128;
    snprintf(tile, n, "tc%d%s%s", bn, k->KH * k->KW > 1 || k->ph ? "k" : "", kind);
    return tile;
}

/* case k forced onto its WG tile of kind, in every 16-bit dtype and hooked; on says the tile is
 * built here */
static void wgmma_forced(const conv_case *k, const char *kind, int on)
{
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    char tile[16];
    wgmma_tile(k, kind, tile, sizeof tile);
    for (int d = 0; d < 2; d++) conv_forced(k, dts[d], L_CL, tile, on);
    gcr_cuda_dense_force(gpu, tile);
    hooked_conv_f16(k, L_CL);
    if (on)
        CHECK(strstr(gcr_cuda_dense_last(gpu), tile) != NULL, "hooked conv C%d O%d k%dx%d: forced onto %s, ran %s", k->C,
              k->O, k->KH, k->KW, tile, gcr_cuda_dense_last(gpu));
    gcr_cuda_dense_force(gpu, NULL);
}

static void test_wgmma(void)
{
    const int on = gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu));
    for (int i = 0; i < (int)(sizeof wgmma_cases / sizeof wgmma_cases[0]); i++) wgmma_forced(&wgmma_cases[i], "w_", on);
    for (int i = 0; i < (int)(sizeof wgmma_split / sizeof wgmma_split[0]); i++) wgmma_forced(&wgmma_split[i], "ws_", on);
    /* the heuristic's pick where the unsplit tile's 66 x 2 tiles fill the SMs (132 on an H100) */
    static const conv_case filled = {8, 64, 33, 32, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
    conv_one(&filled, GCR_F16, L_CL);
    if (on && gcr_cuda_sm_count(gpu) <= 132)
        CHECK(strstr(ran, "8kw_") != NULL, "8x64x33x32 3x3 -> 256: the WG tile, ran %s", ran);
    /* N 160, K 192 (too short to split), the tile counts T128 and T64 of each width against the SMs
     * (dense.c wg_tactics): over 49 row tiles, 98 tiles 128 wide leave SMs idle and 147 64 wide
     * need a second wave on 132, so the heuristic keeps the 128-wide tile; over 25 row tiles, 75
     * tiles 64 wide are one wave, so it takes the 64-wide tile, three column tiles, the last
     * partial. Forced, the 64-wide tile in the implicit layout too. */
    static const conv_case narrow[] = {
        {8, 192, 28, 28, 160, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
        {8, 64, 28, 28, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0},
        {4, 192, 28, 28, 160, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
    };
    const int sms = gcr_cuda_sm_count(gpu);
    conv_one(&narrow[0], GCR_F16, L_CL);
    if (on && sms > 98 && sms < 147)
        CHECK(strstr(ran, "tc128w_") != NULL, "8x192x28x28 1x1 -> 160: the 128-wide WG tile, ran %s", ran);
    conv_one(&narrow[2], GCR_F16, L_CL);
    if (on && sms >= 75 && sms <= 300)
        CHECK(strstr(ran, "tc64w_") != NULL, "4x192x28x28 1x1 -> 160: the 64-wide WG tile, ran %s", ran);
    /* batch 1, 2 row tiles, 8 tiles 64 wide: over the split the mma.sync rules take, the 64-wide
     * tile with 8 k tiles, but not with 16 */
    static const conv_case b1[] = {
        {1, 512, 14, 14, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
        {1, 1024, 14, 14, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},
    };
    for (int i = 0; i < 2; i++) {
        conv_one(&b1[i], GCR_F16, L_CL);
        const char *took = gcr_cuda_dense_last(gpu);
        if (on && sms >= 100 && sms <= 160)
            CHECK(i ? strstr(took, "/s") != NULL : strstr(took, "tc64w_") != NULL,
                  "1x%dx14x14 1x1 -> 256: %s, ran %s", b1[i].C, i ? "a split" : "the 64-wide WG tile", took);
    }
    for (int i = 0; i < 2; i++) conv_forced(&narrow[i], GCR_F16, L_CL, i ? "tc64kw_" : "tc64w_", on);
    gcr_cuda_dense_force(gpu, "tc64w_");
    hooked_conv_one(&narrow[0], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
}

/* The persistent TMA tile (gemm_tma.cuh), forced: 1x1 convs with flat rows, channels-last; K under,
 * at and past a 64-element k tile (the last one zero-filled by TMA), partial row and column tiles,
 * row tiles straddling images, more tiles than SMs (blocks walk several, the producer loading the
 * next tile's stages through this one's epilogue); every 16-bit dtype, plain and hooked (the
 * in-place prologue on the swizzled stage, the 8-column epilogue) */
static const conv_case tma_cases[] = {
    /* N  C    H    W   O  KH KW sh sw ph pw dh dw  g  b */
    {3, 40, 20, 20, 72, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},    /* K 40: one partial k tile; N 72; 10 row tiles */
    {2, 112, 14, 14, 200, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},  /* K 112: 2 k tiles; N 200: a partial column tile */
    {4, 64, 28, 28, 128, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* K 64, N 128: whole tiles, 25 of them */
    {2, 8, 9, 7, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},       /* K 8; 126 rows: one partial row tile */
    {64, 160, 14, 14, 256, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* 98 row tiles x 2: blocks walk 1-2 tiles */
};

static void test_tma(void)
{
    const int on = gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu));
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    for (int i = 0; i < (int)(sizeof tma_cases / sizeof tma_cases[0]); i++) {
        for (int d = 0; d < 2; d++) conv_forced(&tma_cases[i], dts[d], L_CL, "tma128", on);
        gcr_cuda_dense_force(gpu, "tma128");
        hooked_conv_f16(&tma_cases[i], L_CL);
        if (on)
            CHECK(strstr(gcr_cuda_dense_last(gpu), "tma128") != NULL, "hooked conv C%d O%d: forced onto tma128, ran %s",
                  tma_cases[i].C, tma_cases[i].O, gcr_cuda_dense_last(gpu));
        gcr_cuda_dense_force(gpu, NULL);
    }
}

/* The row-stream tiles (gemm_tc.cuh PS: a grid of a few blocks per SM, each walking row tiles with
 * the next tile's loads in flight through this one's epilogue), forced: 1x1 convs whose row tiles
 * straddle images (the prologue's per-image scale must follow the tile being multiplied, not the one
 * loading), one short k tile (half zero fill), k tiles past one and not a multiple of it, partial
 * column tiles, blocks with unequal tile counts, and a problem big enough for 3 tiles a block, which
 * the heuristic puts on them; plain and hooked, TF32 in test_tf32 */
static const conv_case streams[] = {
    /* N  C    H    W   O  KH KW sh sw ph pw dh dw  g  b */
    {3, 16, 20, 20, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},    /* K 16: 10 row tiles over 5 blocks */
    {2, 40, 19, 23, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},    /* K 40: 2 k tiles; 7 row tiles, a block with 1 */
    {2, 200, 15, 17, 72, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* K 200: 7 k tiles; N 72, a partial 64 tile */
    {4, 24, 17, 17, 40, 1, 1, 2, 2, 0, 0, 1, 1, 1, 1},    /* stride 2 (81 pixels an image), N 40 */
    {2, 40, 300, 300, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* 1407 row tiles: 3 a block at 132 SMs (K 40: K <= 32 is shortk's) */
};
#define N_STREAMS (int)(sizeof streams / sizeof streams[0])

/* every row-stream case in dtype dt on both widths (the 64-wide one where N needs it) */
static void streams_forced(gcr_dtype dt)
{
    for (int i = 0; i < N_STREAMS; i++) {
        conv_forced(&streams[i], dt, L_CL, "2p_", 1);
        conv_forced(&streams[i], dt, L_CL, "4p_", streams[i].O > 32);
    }
}

static void test_streams(void)
{
    streams_forced(GCR_F16);
    streams_forced(GCR_BF16);
    conv_one(&streams[N_STREAMS - 1], GCR_F16, L_CL);
    CHECK(strstr(ran, "2p_") != NULL, "a K-40 1x1 with 1407 row tiles: the heuristic's row stream, ran %s", ran);
    for (int i = 0; i < N_STREAMS; i++) {
        gcr_cuda_dense_force(gpu, "2p_");
        hooked_conv_f16(&streams[i], L_CL);
        gcr_cuda_dense_force(gpu, "4p_");
        hooked_conv_f16(&streams[i], L_CL);
    }
    gcr_cuda_dense_force(gpu, NULL);
}

/* The small-channel tiles (fewer channels per group than a 16-byte chunk): the implicit GEMM
 * (gemm_tc.cuh AT 4: kernel rows packed into chunks, gathered element by element) and the patch
 * tile (patch.cuh: the input patch staged in shared memory), the heuristic's pick and forced: RGB
 * stems of MobileNet's and ResNet's shapes, odd channel counts, dilation, groups of 3, a partial
 * 128-wide column tile, odd sw * C0 (the patch tile's half-word fragment loads), partial output
 * tiles, any operand layout; f16 and bf16 here, TF32 in test_tf32; plain and with hooks */
static const conv_case stems[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {4, 3, 33, 33, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},   /* 3x3 s2 into 16 (MobileNet's stem, smaller) */
    {2, 3, 45, 45, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1, 0},   /* 7x7 s2 p3 into 64 (ResNet's) */
    {3, 5, 20, 20, 24, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1},   /* 5 channels, dilation 2 */
    {2, 6, 17, 17, 40, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1},   /* 2 groups of 3 channels, 20 outputs each */
    {2, 1, 30, 30, 136, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1},  /* 1 channel, 136 outputs: a partial 128 tile */
    {3, 4, 19, 37, 48, 5, 3, 1, 2, 2, 1, 3, 1, 1, 1},   /* 4 channels, 5x3, stride (1, 2), row dilation 3 */
    {1, 7, 9, 70, 20, 2, 4, 3, 1, 0, 3, 1, 1, 1, 0},    /* 7 channels, 2x4, stride (3, 1): odd sw * C0 */
};
#define N_STEMS (int)(sizeof stems / sizeof stems[0])

static void test_small_channels(void)
{
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    for (int i = 0; i < N_STEMS; i++)
        for (int d = 0; d < 2; d++) {
            const conv_case *k = &stems[i];
            const int og = k->O / k->groups;
            conv_one(k, dts[d], L_CL);
#ifdef GCR_HAVE_CUDA
            /* the patch tile where its column dilation of 1 allows, else the implicit GEMM's */
            const char *pick = k->dw == 1 ? "patch" : "c_";
            CHECK(strstr(ran, pick) != NULL, "conv C%d k%dx%d %s cl: the heuristic takes %s, ran %s", k->C, k->KH, k->KW,
                  dt_name(dts[d]), pick, ran);
#endif
            conv_forced(k, dts[d], L_CL, "c_", 1);
            conv_forced(k, dts[d], L_CL, "4c_", og > 32);
            conv_forced(k, dts[d], L_CL, "8c_", og > 64);
            /* elements are gathered one by one, so any strides do: NCHW x and OIHW weights, a
             * sliced x, permuted operands */
            conv_forced(k, dts[d], L_DENSE, "c_", 1);
            conv_forced(k, dts[d], L_SLICE, og > 32 ? "4c_" : "c_", 1);
            conv_forced(k, dts[d], L_PERM, og > 64 ? "8c_" : "c_", 1);
            /* the patch tiles, every width the problem has; the patch is staged element by
             * element, so any layout does */
            const int pok = k->dw == 1;
            conv_forced(k, dts[d], L_CL, "patch16_", pok);
            conv_forced(k, dts[d], L_CL, "patch32_", pok && og > 16);
            conv_forced(k, dts[d], L_CL, "patch64_", pok && og > 32);
            conv_forced(k, dts[d], L_DENSE, "patch16_", pok);
            conv_forced(k, dts[d], L_SLICE, og > 32 ? "patch64_" : "patch16_", pok);
            conv_forced(k, dts[d], L_PERM, og > 16 ? "patch32_" : "patch16_", pok);
        }
    static const char *const tiles[] = {"c_", "patch16_", "patch64_"};
    for (int t = 0; t < 3; t++) {
        gcr_cuda_dense_force(gpu, tiles[t]);
        hooked_conv_f16(&stems[0], L_CL); /* the prologue as the chunks are gathered / staged */
        hooked_conv_f16(&stems[3], L_CL); /* ... with each group's channel offset */
        hooked_conv_f16(&stems[1], L_DENSE);
        hooked_conv_one(&stems[0], L_NHWC); /* f32 operands: the patch tile is 16-bit only */
    }
    gcr_cuda_dense_force(gpu, NULL);
}

/* The short-reduction tiles (shortk.cuh: 1x1s and GEMMs with K <= 32, weights in registers, A
 * fragments from global memory): K 8 / 16 / 24 / 32 (one and two k steps, half-empty ones),
 * partial column tiles, several column tiles, rows not a multiple of a group, stride 2, groups in
 * z; forced on every width in both channels-last layouts, taken by the heuristic on a large one,
 * hooked, and a linear layer. */
static const conv_case shortks[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {8, 16, 33, 35, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},   /* K 16 into 24: a partial 32-wide tile */
    {4, 24, 40, 41, 72, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},   /* K 24 (2 k steps, the second half empty) into 72 */
    {3, 32, 29, 30, 40, 1, 1, 2, 2, 0, 0, 1, 1, 1, 1},   /* K 32, stride 2 */
    {5, 8, 31, 17, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},    /* K 8 */
    {2, 48, 20, 21, 64, 1, 1, 1, 1, 0, 0, 1, 1, 2, 1},   /* 2 groups of 24 channels into 32 each: z */
    {6, 16, 25, 25, 136, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* 136 outputs: three 64-wide column tiles */
};
#define N_SHORTKS (int)(sizeof shortks / sizeof shortks[0])

static void test_shortk(void)
{
    const gcr_dtype dts[] = {GCR_F16, GCR_BF16};
    static const char *const tiles[] = {"shortk16_", "shortk32_", "shortk64_"};
    for (int i = 0; i < N_SHORTKS; i++)
        for (int d = 0; d < 2; d++)
            for (int t = 0; t < 3; t++) {
                const conv_case *k = &shortks[i];
                const int og = k->O / k->groups, legal = t == 0 || og > 8 << t;
                conv_forced(k, dts[d], L_NHWC, tiles[t], legal);
                conv_forced(k, dts[d], L_CL, tiles[t], legal);
            }
    /* 163840 rows of K 16 into 24: a group of 64 rows for every warp of the grid */
    static const conv_case big = {40, 16, 64, 64, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1};
    conv_one(&big, GCR_F16, L_NHWC);
#ifdef GCR_HAVE_CUDA
    CHECK(strstr(ran, "shortk32_") != NULL, "conv K16 into 24, 163840 rows: the heuristic takes shortk32, ran %s", ran);
#endif
    for (int t = 0; t < 3; t += 2) {
        gcr_cuda_dense_force(gpu, tiles[t]);
        hooked_conv_f16(&shortks[0], L_NHWC); /* prologue on the fragments as they load, 8-wide epilogue */
        hooked_conv_f16(&shortks[4], L_NHWC); /* ... with each group's channel offset */
        hooked_conv_f16(&shortks[1], L_CL);
        int64_t x2[2] = {1000, 24}, x3[3] = {3, 77, 32};
        linear_one(2, x2, 40, 1, L_DENSE, GCR_F16);
        linear_one(3, x3, 70, 0, L_DENSE, GCR_BF16);
    }
    gcr_cuda_dense_force(gpu, NULL);
}

/* case k in f32 forced onto its WG tile of kind (w_, ws_) in TF32, against the CPU at tol()'s TF32
 * bound for its K (up to K 4608 here; fixed at the K 200 bound, an H100 put 1 of 52224 elements at
 * K 1800 1.1x past it, 1 of 3136 at K 2304 and a few of 25088 at K 4608 1.5x past it) */
static void wg_tf32(const conv_case *k, const char *kind, int on)
{
    char tile[16];
    conv_forced(k, GCR_F32, L_CL, wgmma_tile(k, kind, tile, sizeof tile), on);
}

static void test_tf32(void)
{
    gcr_ctx *exact = gpu, *t32 = h_ctx(GCR_DEVICE_CUDA);
    if (!CHECK(t32, "a second CUDA context")) return;
    gcr_knobs kn = gcr_ctx_opts_default().knobs;
    kn.tf32 = 1;
    CHECK_OK(t32, gcr_ctx_set_knobs(t32, &kn));
    CHECK(gcr_ctx_knobs(t32)->tf32 == 1 && gcr_ctx_knobs(exact)->tf32 == 0, "tf32 is a per-context knob, off by default");
    gpu = t32;
    tf32_on = 1;
    static const int tc_cases[] = {16, 17, 18, 0, 1, 15};
    for (int i = 0; i < (int)(sizeof tc_cases / sizeof tc_cases[0]); i++) {
        conv_one(&convs[tc_cases[i]], GCR_F32, L_NHWC);
        conv_one(&convs[tc_cases[i]], GCR_F32, L_DENSE); /* NCHW: not TF32's layout, the FMA engine */
    }
    conv_one(&convs[5], GCR_F32, L_NHWC); /* depthwise: untouched by the knob */
    int64_t x1[2] = {17000, 40}, x2[3] = {5, 3400, 24};
    linear_one(2, x1, 72, 1, L_DENSE, GCR_F32); /* 133 row tiles of 128: 128-wide tc tile */
    linear_one(3, x2, 40, 0, L_DENSE, GCR_F32);
    hooked_conv_one(&convs[16], L_NHWC); /* prologue on landed 4-float chunks, epilogue */
    hooked_conv_one(&convs[18], L_NHWC);
    hooked_conv_one(&convs[17], L_NHWC);
    static const char *tiles[] = {"tc32k", "tc64k", "tc128k"};
    for (int i = 0; i < (int)(sizeof implicit / sizeof implicit[0]); i++) {
        const conv_case *k = &implicit[i];
        conv_one(k, GCR_F32, L_CL);
        CHECK(strstr(ran, "k_tf32") || strstr(ran, "kd_tf32") || strstr(ran, "kw_tf32"),
              "conv C%d k%dx%d f32 cl with TF32: the implicit tile, ran %s", k->C, k->KH, k->KW, ran);
        for (int t = 0; t < 3; t++) conv_forced(k, GCR_F32, L_CL, tiles[t], t == 0 || k->O / k->groups > 16 << t);
        conv_forced(k, GCR_F32, L_CL, "kd_", 1);
        conv_forced(k, GCR_F32, L_CL, "8kd_", k->O / k->groups > 64);
    }
    hooked_conv_one(&implicit[0], L_CL); /* the implicit TF32 tile: prologue on 4-float chunks */
    hooked_conv_one(&implicit[4], L_CL);
    hooked_conv_one(&implicit[8], L_CL);
    for (int i = 0; i < N_FEW; i++) { /* split-K on the TF32 tile: 16 floats per k tile */
        conv_one(&few_tiles[i], GCR_F32, L_CL);
        CHECK(strstr(gcr_cuda_dense_last(gpu), "_tf32/s") != NULL, "conv C%d k%dx%d f32 with TF32: split K, ran %s",
              few_tiles[i].C, few_tiles[i].KH, few_tiles[i].KW, gcr_cuda_dense_last(gpu));
    }
    hooked_conv_one(&few_tiles[0], L_CL);
    splitk_repeat(&few_tiles[5], GCR_F32, "32ks_");
    streams_forced(GCR_F32); /* the row streams: 16 floats per k tile */
    gcr_cuda_dense_force(gpu, "4p_");
    hooked_conv_one(&streams[2], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
    for (int i = 0; i < N_STEMS; i++) /* the small-channel tile in TF32: fewer than 4 channels per group */
        conv_forced(&stems[i], GCR_F32, L_CL, "c_", stems[i].C / stems[i].groups < 4);
    conv_forced(&stems[1], GCR_F32, L_DENSE, "c_", 1);
    gcr_cuda_dense_force(gpu, "c_");
    hooked_conv_one(&stems[1], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
    /* the WG tiles in TF32 (operands rounded in shared memory), unsplit and split, plain and hooked */
    const int on = gcr_nvrtc_arch_specific(gcr_cuda_arch(gpu));
    char tile[16];
    for (int i = 0; i < (int)(sizeof wgmma_cases / sizeof wgmma_cases[0]); i++) wg_tf32(&wgmma_cases[i], "w_", on);
    for (int i = 0; i < (int)(sizeof wgmma_split / sizeof wgmma_split[0]); i++) wg_tf32(&wgmma_split[i], "ws_", on);
    gcr_cuda_dense_force(gpu, wgmma_tile(&wgmma_cases[0], "w_", tile, sizeof tile));
    hooked_conv_one(&wgmma_cases[0], L_CL);
    gcr_cuda_dense_force(gpu, wgmma_tile(&wgmma_cases[5], "w_", tile, sizeof tile));
    hooked_conv_one(&wgmma_cases[5], L_CL);
    gcr_cuda_dense_force(gpu, NULL);
    tf32_differs(exact, t32, &convs[16]);
    tf32_differs(exact, t32, &convs[18]);
    tf32_on = 0;
    gpu = exact;
    gcr_ctx_destroy(t32);
}

/* ---------------------------------------------------------------- 8-wide epilogue (GCR_EPILOGUE8) */

/* Channel-contiguous outputs store 8 channels per hook call, as 16-byte vectors where aligned and
 * element by element where not: the tensor-core tiles (1x1 and implicit) and the channel-group
 * depthwise kernel, with the default epilogue and with a generated one (a captured graph fuses the
 * residual add, a per-channel scale and relu into the conv). Channel counts that are multiples of
 * 8, odd (the column remainder, runs that straddle 16 bytes), 44 (runs aligned on every other
 * pixel), a partial 128-wide column tile; operands and outputs at an address 2 bytes past 16-byte
 * alignment (the vector accesses must fall back); all against the CPU. */
static const conv_case epi8_convs[] = {
    /* N  C   H   W   O  KH KW sh sw ph pw dh dw  g  b */
    {16, 24, 48, 48, 40, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* 1x1, O a multiple of 8 */
    {16, 24, 48, 48, 37, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1},  /* O odd: 4 runs and 5 columns a pixel */
    {16, 16, 48, 48, 44, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0},  /* K 16 (MobileNet's short K), O 44 */
    {16, 64, 40, 40, 200, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* 128-wide tile + a 72-column one */
    {8, 16, 47, 47, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* implicit GEMM (3x3) */
    {8, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64, 1},  /* depthwise 3x3: channel groups */
    {8, 64, 57, 57, 64, 3, 3, 1, 1, 1, 1, 1, 1, 64, 0},  /* depthwise, OW odd: a lone last output */
    {16, 96, 56, 56, 96, 5, 5, 2, 2, 2, 2, 1, 1, 96, 1}, /* depthwise 5x5 s2 */
};
#define N_EPI8 (int)(sizeof epi8_convs / sizeof epi8_convs[0])

/* A dense channels-last f16 [N, C, H, W] on ctx holding host values h[1..], as a view one element
 * into a flat tensor of numel + 1 elements: 2 bytes past 16-byte alignment */
static gcr_tensor *nhwc_off2(gcr_ctx *ctx, const int64_t *shape, const float *h)
{
    int64_t n = shape[0] * shape[1] * shape[2] * shape[3], flat[1] = {n + 1};
    int64_t nhwc[4] = {shape[0], shape[2], shape[3], shape[1]};
    int perm[4] = {0, 3, 1, 2};
    gcr_tensor *t = h_tensor(ctx, GCR_F16, 1, flat, GCR_NCHW, h);
    t = t ? gcr_slice(ctx, t, 0, 1, n + 1, 1) : NULL;
    t = t ? gcr_reshape(ctx, t, 4, nhwc) : NULL;
    return t ? gcr_permute(ctx, t, perm) : NULL;
}

/* whether t is a view 2 bytes past 16-byte alignment with channels-last strides */
static int off2_ok(gcr_tensor *t)
{
    return t && ((uintptr_t)gcr_tensor_data(t) & 15) == 2 && gcr_tensor_stride(t, 1) == 1 &&
           gcr_tensor_stride(t, 3) == gcr_tensor_dim(t, 1);
}

/* the default epilogue into an output view 2 bytes past 16-byte alignment */
static void epi8_out_off2(const conv_case *k)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW}, bs[1] = {k->O};
    gcr_tensor *xc, *xg, *wc, *wg, *bc = NULL, *bg = NULL;
    make2(GCR_F16, 4, xs, L_CL, &xc, &xg);
    make2(GCR_F16, 4, ws, L_CL, &wc, &wg);
    if (k->bias) make2(GCR_F16, 1, bs, L_DENSE, &bc, &bg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    gcr_tensor *rc = gcr_conv2d(cpu, xc, wc, bc, &p);
    char what[128];
    snprintf(what, sizeof what, "conv C%d O%d k%d g%d f16 into an output 2 bytes past 16-byte alignment", k->C, k->O,
             k->KH, k->groups);
    if (CHECK(rc && xg && wg, "%s: operands: %s / %s", what, gcr_ctx_error(cpu), gcr_ctx_error(gpu))) {
        int64_t ys[4] = {k->N, k->O, gcr_tensor_dim(rc, 2), gcr_tensor_dim(rc, 3)};
        float *h = h_randn(ys[0] * ys[1] * ys[2] * ys[3] + 1, -1.0f, 1.0f); /* overwritten: no stale zeros to match */
        gcr_tensor *out = nhwc_off2(gpu, ys, h);
        free(h);
        gcr_call c = {0};
        c.op = GCR_OP_CONV2D;
        c.n_in = 3;
        c.in[0] = xg; c.in[1] = wg; c.in[2] = bg;
        c.p.conv = p;
        if (CHECK(off2_ok(out), "%s: the view (%s)", what, gcr_ctx_error(gpu)) &&
            CHECK_OK(gpu, gcr_cuda_conv2d_hooked(gpu, &c, out, NULL))) {
            const char *last = gcr_cuda_dense_last(gpu);
            CHECK(k->groups > 1 || strstr(last, "tc") || strstr(last, "shortk"), "%s: ran %s, not a tensor-core tile", what,
                  last);
            compare_as(rc, out, GCR_F16, 0, what);
        }
    }
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

/* relu(conv(x) [* s] + res) captured on the GPU (one kernel: the conv with a generated epilogue)
 * against the same ops eagerly on the CPU; s [1, O, 1, 1] a per-channel input (a broadcast load,
 * offset per output), res the result's layout (a full-layout load), off2: res 2 bytes past
 * 16-byte alignment */
static void epi8_fused(const conv_case *k, int scale, int off2)
{
    uint64_t s0 = gcr_scope_begin(cpu), s1 = gcr_scope_begin(gpu);
    int64_t xs[4] = {k->N, k->C, k->H, k->W}, ws[4] = {k->O, k->C / k->groups, k->KH, k->KW}, bs[1] = {k->O};
    int64_t ss[4] = {1, k->O, 1, 1};
    gcr_tensor *xc, *xg, *wc, *wg, *bc = NULL, *bg = NULL, *sc = NULL, *sg = NULL, *rc = NULL, *rg = NULL;
    make2(GCR_F16, 4, xs, L_CL, &xc, &xg);
    make2(GCR_F16, 4, ws, L_CL, &wc, &wg);
    if (k->bias) make2(GCR_F16, 1, bs, L_DENSE, &bc, &bg);
    if (scale) make2(GCR_F16, 4, ss, L_DENSE, &sc, &sg);
    gcr_conv2d_params p = {{k->sh, k->sw}, {k->ph, k->pw}, {k->dh, k->dw}, k->groups};
    gcr_tensor *yc = gcr_conv2d(cpu, xc, wc, bc, &p);
    char what[128];
    snprintf(what, sizeof what, "relu(conv C%d O%d k%d g%d%s + res%s) f16 nhwc, fused", k->C, k->O, k->KH, k->groups,
             scale ? " * s" : "", off2 ? " 2 bytes past 16-byte alignment" : "");
    if (!CHECK(yc && xg && wg, "%s: operands: %s / %s", what, gcr_ctx_error(cpu), gcr_ctx_error(gpu))) goto done;
    int64_t ys[4] = {k->N, k->O, gcr_tensor_dim(yc, 2), gcr_tensor_dim(yc, 3)};
    if (off2) {
        float *h = h_randn(ys[0] * ys[1] * ys[2] * ys[3] + 1, -1.0f, 1.0f);
        rc = nhwc_off2(cpu, ys, h);
        rg = nhwc_off2(gpu, ys, h);
        free(h);
        if (!CHECK(rc && off2_ok(rg), "%s: the residual view (%s)", what, gcr_ctx_error(gpu))) goto done;
    } else {
        make2(GCR_F16, 4, ys, L_NHWC, &rc, &rg);
    }
    gcr_tensor *ref = gcr_relu(cpu, gcr_add(cpu, scale ? gcr_mul(cpu, yc, sc) : yc, rc));
    gcr_graph *g = NULL;
    if (!CHECK_OK(gpu, gcr_capture_begin(gpu))) goto done;
    gcr_tensor *y = gcr_conv2d(gpu, xg, wg, bg, &p);
    gcr_tensor *out = gcr_relu(gpu, gcr_add(gpu, scale ? gcr_mul(gpu, y, sg) : y, rg));
    if (CHECK_OK(gpu, gcr_capture_end(gpu, &g)) && CHECK(g && out, "%s: capture", what)) {
        gcr_graph_stats st;
        const char *fn = gcr_cuda_last_kernel(gpu);
        CHECK(gcr_graph_get_stats(g, &st) == GCR_OK && st.kernels == 1, "%s: %d kernels, want 1 (the conv, fused)", what,
              st.kernels);
        CHECK(fn && (k->groups > 1 ? strstr(fn, "gcr_dwc_") != NULL : strstr(fn, "gcr_dense_tc") || strstr(fn, "gcr_shortk")),
              "%s: ran %s", what, fn ? fn : "nothing");
        compare_as(ref, out, GCR_F16, 0, what);
    }
    gcr_graph_destroy(g); /* before the scope ends: the graph's tensors are its own */
done:
    gcr_ctx_clear_error(gpu);
    gcr_scope_end(cpu, s0);
    gcr_scope_end(gpu, s1);
}

static void test_epilogue8(void)
{
    for (int i = 0; i < N_EPI8; i++) {
        const conv_case *k = &epi8_convs[i];
        epi8_fused(k, 0, 0);
        epi8_fused(k, 1, 0);
        epi8_fused(k, 0, 1);
        if (k->groups == 1) epi8_out_off2(k); /* the depthwise launcher takes the tile for such an output */
    }
}
#else
static void test_hooks(void) {}
static void test_splitk(void) {}
static void test_deep(void) {}
static void test_wgmma(void) {}
static void test_streams(void) {}
static void test_tma(void) {}
static void test_small_channels(void) {}
static void test_shortk(void) {}
static void test_tf32(void) {}
static void test_epilogue8(void) {}
#endif

int main(void)
{
    if (!open2(20261122)) return h_finish();
    RUN(test_conv);
    RUN(test_implicit);
    RUN(test_matmul);
    RUN(test_linear);
    RUN(test_pool);
    RUN(test_hooks);
    RUN(test_splitk);
    RUN(test_deep);
    RUN(test_wgmma);
    RUN(test_streams);
    RUN(test_tma);
    RUN(test_small_channels);
    RUN(test_shortk);
    RUN(test_tf32);
    RUN(test_epilogue8);
    return close2();
}
