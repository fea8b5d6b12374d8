/* conv_bench.c — gcr's side of the per-layer comparison with cuDNN (issue 11): times gcr's GPU conv
 * kernels on every distinct conv shape of MobileNet-v3-Large and ResNet-50 (224x224 input; tables
 * copied from bench/conv_shapes.py), plus each net's global average pool and classifier, calling
 * the CUDA backend's conv / pool / matmul launchers directly. Each kernel is launched 20 times inside
 * one CUDA Graph so the figure is device time, not launch cost (best of 3 rounds of 10 replays).
 * Prints per block (net, dtype, batch) a human table of µs, TFLOP/s and GB/s (compulsory traffic:
 * x, w, bias, out once) against the device's ceilings (f32 FMA and f16 tensor-core peaks from SM count
 * and clock, TF32 half the f16 one; device-to-device copy bandwidth measured in the same run) with a
 * count-weighted total per forward, then one "LAYER key=value ..." line per layer (kernel=: the
 * kernel timed) that bench/conv_table.py joins with conv_bench_torch.py's (bench/ab_table.py lists
 * the kernels of each run). Weights are in the activation's format by default (channels-last OHWI
 * weights for nhwc, as a channels_last PyTorch model holds them).
 * "tf32" is f32 with the context knob tf32 = 1 (f32 1x1 convs and GEMMs on TF32 tensor cores).
 * force=NAME runs every conv and GEMM on the dense engine's legal tactic whose name contains NAME
 * (gcr_cuda_dense_force: e.g. "kd_" for the deep-pipeline implicit tiles; "dwv" keeps depthwise on
 * the shared-memory tile, "dws" puts it on the staged tile), the heuristic's pick where none matches. tactics writes a line to stderr
 * before each layer ("conv_bench: layer NET NAME DTYPE batch N count C") and turns the log to level 2,
 * so that with GCR_AUTOTUNE=1 each layer's timed candidates follow its name (bench/tactics.sh).
 * usage: conv_bench [net=mnv3|resnet50|all] [nchw|nhwc] [w=nchw|nhwc] [f32|tf32|f16|bf16 ...]
 *                   [head=0|1] [only=NAME-PREFIX] [force=NAME] [tactics] [batch ...]
 * (defaults: net=mnv3 nchw, weights as the activations, f32 f16, head=1, batches 1 32 128) */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GCR_HAVE_CUDA
#include "cuda/dense.h"

typedef struct shape {
    const char *name;
    int C, H, O, k, s, g, bias, count; /* square input H x H, padding k/2; count: uses per forward */
} shape;

/* head ops: kind 1 global average pool (C at H x H), 2 linear C -> O with bias */
typedef struct head_shape { const char *name; int kind, C, H, O, count; } head_shape;

/* The tables below are a copy of bench/conv_shapes.py's (the torch side reads that file and checks
 * this copy against it; `python3 bench/conv_shapes.py --check bench/conv_bench.c`). Same macros, same
 * field order: a shape is changed there first. */
#define CONV(n, c, h, o, k, s, g, b, cnt) {n, c, h, o, k, s, g, b, cnt}
#define DW(n, c, h, k, s, cnt) {n, c, h, c, k, s, c, 0, cnt}
#define PW(n, c, h, o, cnt) {n, c, h, o, 1, 1, 1, 0, cnt}
#define PWS(n, c, h, o, s, cnt) {n, c, h, o, 1, s, 1, 0, cnt}
#define SE(n, c, o, cnt) {n, c, 1, o, 1, 1, 1, 1, cnt}
#define C3(n, c, h, o, s, cnt) {n, c, h, o, 3, s, 1, 0, cnt}
#define GAP(n, c, h, cnt) {n, 1, c, h, c, cnt}
#define FC(n, c, o, cnt) {n, 2, c, 1, o, cnt}

/* MobileNet-v3-Large, named after the first block that runs each shape (b6, b10, b15 repeat b5, b9,
 * b14; b4.ex = b3.ex, b13.ex = b12.ex, b13's SE = b12's, the last conv 160->960 = b14.ex). */
static const shape mnv3_convs[] = {
    CONV("stem", 3, 224, 16, 3, 2, 1, 0, 1),
    DW("b1.dw3", 16, 112, 3, 1, 1), PW("b1.pw", 16, 112, 16, 1),
    PW("b2.ex", 16, 112, 64, 1), DW("b2.dw3s2", 64, 112, 3, 2, 1), PW("b2.pw", 64, 56, 24, 1),
    PW("b3.ex", 24, 56, 72, 2), DW("b3.dw3", 72, 56, 3, 1, 1), PW("b3.pw", 72, 56, 24, 1),
    DW("b4.dw5s2", 72, 56, 5, 2, 1), SE("b4.se1", 72, 24, 1), SE("b4.se2", 24, 72, 1), PW("b4.pw", 72, 28, 40, 1),
    PW("b5.ex", 40, 28, 120, 2), DW("b5.dw5", 120, 28, 5, 1, 2), SE("b5.se1", 120, 32, 2), SE("b5.se2", 32, 120, 2),
    PW("b5.pw", 120, 28, 40, 2),
    PW("b7.ex", 40, 28, 240, 1), DW("b7.dw3s2", 240, 28, 3, 2, 1), PW("b7.pw", 240, 14, 80, 1),
    PW("b8.ex", 80, 14, 200, 1), DW("b8.dw3", 200, 14, 3, 1, 1), PW("b8.pw", 200, 14, 80, 1),
    PW("b9.ex", 80, 14, 184, 2), DW("b9.dw3", 184, 14, 3, 1, 2), PW("b9.pw", 184, 14, 80, 2),
    PW("b11.ex", 80, 14, 480, 1), DW("b11.dw3", 480, 14, 3, 1, 1), SE("b11.se1", 480, 120, 1),
    SE("b11.se2", 120, 480, 1), PW("b11.pw", 480, 14, 112, 1),
    PW("b12.ex", 112, 14, 672, 2), DW("b12.dw3", 672, 14, 3, 1, 1), SE("b12.se1", 672, 168, 2),
    SE("b12.se2", 168, 672, 2), PW("b12.pw", 672, 14, 112, 1),
    DW("b13.dw5s2", 672, 14, 5, 2, 1), PW("b13.pw", 672, 7, 160, 1),
    PW("b14.ex", 160, 7, 960, 3), DW("b14.dw5", 960, 7, 5, 1, 2), SE("b14.se1", 960, 240, 2),
    SE("b14.se2", 240, 960, 2), PW("b14.pw", 960, 7, 160, 2),
};
static const head_shape mnv3_head[] = {GAP("gap", 960, 7, 1), FC("fc1", 960, 1280, 1), FC("fc2", 1280, 1000, 1)};

/* ResNet-50 (torchvision, v1.5: stride 2 on the 3x3): lN.B.cK = layer N, block B, conv K; a shape
 * that recurs is named after its first use (l1.0.c3 also covers layer 1's downsample 64->256). */
static const shape resnet50_convs[] = {
    CONV("stem", 3, 224, 64, 7, 2, 1, 0, 1),
    PW("l1.0.c1", 64, 56, 64, 1), C3("l1.0.c2", 64, 56, 64, 1, 3), PW("l1.0.c3", 64, 56, 256, 4),
    PW("l1.1.c1", 256, 56, 64, 2),
    PW("l2.0.c1", 256, 56, 128, 1), C3("l2.0.c2", 128, 56, 128, 2, 1), PWS("l2.0.ds", 256, 56, 512, 2, 1),
    PW("l2.0.c3", 128, 28, 512, 4), PW("l2.1.c1", 512, 28, 128, 3), C3("l2.1.c2", 128, 28, 128, 1, 3),
    PW("l3.0.c1", 512, 28, 256, 1), C3("l3.0.c2", 256, 28, 256, 2, 1), PWS("l3.0.ds", 512, 28, 1024, 2, 1),
    PW("l3.0.c3", 256, 14, 1024, 6), PW("l3.1.c1", 1024, 14, 256, 5), C3("l3.1.c2", 256, 14, 256, 1, 5),
    PW("l4.0.c1", 1024, 14, 512, 1), C3("l4.0.c2", 512, 14, 512, 2, 1), PWS("l4.0.ds", 1024, 14, 2048, 2, 1),
    PW("l4.0.c3", 512, 7, 2048, 3), PW("l4.1.c1", 2048, 7, 512, 2), C3("l4.1.c2", 512, 7, 512, 1, 2),
};
static const head_shape resnet50_head[] = {GAP("gap", 2048, 7, 1), FC("fc", 2048, 1000, 1)};

typedef struct net_def {
    const char *name;
    const shape *convs;
    size_t n_convs;
    const head_shape *head;
    size_t n_head;
} net_def;
#define NET(n) {#n, n##_convs, sizeof n##_convs / sizeof n##_convs[0], n##_head, sizeof n##_head / sizeof n##_head[0]}
static const net_def nets[] = {NET(mnv3), NET(resnet50)};

/* a dtype as the benchmark names it: "tf32" is f32 with the ctx knob tf32 = 1 */
typedef struct bench_dtype {
    const char *name;
    gcr_dtype dt;
    int tf32;
} bench_dtype;
static const bench_dtype dtypes[] = {{"f32", GCR_F32, 0}, {"tf32", GCR_F32, 1}, {"f16", GCR_F16, 0}, {"bf16", GCR_BF16, 0}};

/* one timed layer, kept until its block is printed */
typedef struct result {
    const char *name, *kind;
    int count;
    double us, flops, bytes; /* us < 0: failed, err says why */
    char err[200];
    char kernel[64]; /* the kernel it timed (the ctx's last launch), "-" when unknown */
} result;

static double peak_f32, peak_tc, copy_bw;
static const char *only; /* time only the shapes whose name starts with this */
static int tactics;       /* a stderr line before each layer (bench/tactics.sh) */

/* Random host values in [-0.5, 0.5): one buffer, grown on demand and shared by every tensor (a
 * prefix of it), so the batch-128 shapes do not each pay for generating hundreds of MB. */
static const float *randbuf(size_t n)
{
    static float *p;
    static size_t have;
    if (n > have) {
        float *q = realloc(p, n * sizeof *q);
        if (!q) return NULL;
        uint64_t s = 0x1234567ull + have;
        for (size_t i = have; i < n; i++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            q[i] = (float)((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
        }
        p = q;
        have = n;
    }
    return p;
}

static gcr_tensor *rand_tensor(gcr_ctx *ctx, gcr_dtype dt, int nd, const int64_t *shape, gcr_format f)
{
    size_t n = 1;
    for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
    const float *h = randbuf(n);
    if (!h) return NULL;
    gcr_tensor *t = gcr_tensor_from_data(ctx, GCR_F32, nd, shape, f, h);
    if (t && dt != GCR_F32) t = gcr_cast(ctx, t, dt);
    return t;
}

/* device µs of one launch of c into out: 20 launches in one graph, replayed 10 times; the best of
 * 3 such rounds (conv_bench_torch.py times cuDNN the same way) */
static double time_call(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    cudaStream_t s = gcr_cuda_stream(ctx);
    gcr_status (*run)(gcr_ctx *, const gcr_call *, gcr_tensor *) =
        c->op == GCR_OP_CONV2D ? gcr_cuda_conv2d : c->op == GCR_OP_LINEAR ? gcr_cuda_matmul : gcr_cuda_pool;
    if (run(ctx, c, out) != GCR_OK || gcr_ctx_sync(ctx) != GCR_OK) return -1; /* compiles, warms */
    cudaGraph_t g;
    cudaGraphExec_t ge;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
    for (int i = 0; i < 20; i++) run(ctx, c, out);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess) return -1;
    if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) {
        cudaGraphDestroy(g);
        return -1;
    }
    cudaGraphLaunch(ge, s);
    double best = -1;
    for (int r = 0; r < 3; r++) {
        bench_timer t;
        bench_timer_start(&t, s);
        for (int i = 0; i < 10; i++) cudaGraphLaunch(ge, s);
        double us = bench_timer_ms(&t) * 1000.0 / 200.0;
        if (best < 0 || us < best) best = us;
    }
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return cudaGetLastError() == cudaSuccess ? best : -1;
}

/* r->us from timing c into out (NULL: the inputs could not be made); a failure's message kept in
 * r->err and cleared from the context, so the next layer starts clean */
static void time_into(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const char *infer_err, result *r)
{
    r->us = out ? time_call(ctx, c, out) : -1;
    r->err[0] = 0;
    const char *k = r->us >= 0 ? gcr_cuda_last_kernel(ctx) : NULL;
    snprintf(r->kernel, sizeof r->kernel, "%s", k && *k ? k : "-");
    if (r->us >= 0) return;
    cudaError_t ce = cudaGetLastError();
    snprintf(r->err, sizeof r->err, "%s", gcr_ctx_status(ctx) != GCR_OK ? gcr_ctx_error(ctx)
                                          : ce != cudaSuccess ? cudaGetErrorString(ce)
                                          : infer_err && *infer_err ? infer_err : "timing failed");
    gcr_ctx_clear_error(ctx);
}

/* times one conv shape at batch N; *r gets the figures */
static void bench_conv(gcr_ctx *ctx, const shape *sh, gcr_dtype dt, int N, gcr_format f, gcr_format wf, result *r)
{
    size_t es = gcr_dtype_size(dt);
    uint64_t sc = gcr_scope_begin(ctx);
    int64_t xs[4] = {N, sh->C, sh->H, sh->H}, ws[4] = {sh->O, sh->C / sh->g, sh->k, sh->k}, bs[1] = {sh->O};
    gcr_call c;
    memset(&c, 0, sizeof c);
    c.op = GCR_OP_CONV2D;
    c.n_in = 3;
    c.in[0] = rand_tensor(ctx, dt, 4, xs, f);
    c.in[1] = rand_tensor(ctx, dt, 4, ws, wf); /* NHWC weights: O x k x k x C/g in memory (OHWI) */
    c.in[2] = sh->bias ? rand_tensor(ctx, dt, 1, bs, GCR_NCHW) : NULL;
    c.p.conv = (gcr_conv2d_params){{sh->s, sh->s}, {sh->k / 2, sh->k / 2}, {1, 1}, sh->g};
    gcr_meta m;
    char err[200] = "";
    gcr_tensor *out = NULL;
    if (c.in[0] && c.in[1] && (!sh->bias || c.in[2]) && gcr_infer(&c, &m, err, sizeof err) == GCR_OK)
        out = gcr_tensor_alloc(ctx, &m, "bench");
    *r = (result){sh->name, sh->g > 1 && sh->g == sh->C && sh->g == sh->O ? "dw" : "conv", sh->count, -1, 0, 0, "", ""};
    time_into(ctx, &c, out, err, r);
    if (out) { /* same formulas as conv_shapes.py's conv_work */
        double P = (double)m.shape[2] * m.shape[3];
        r->flops = 2.0 * N * sh->O * P * (sh->C / sh->g) * sh->k * sh->k;
        r->bytes = es * ((double)N * sh->C * sh->H * sh->H + (double)sh->O * (sh->C / sh->g) * sh->k * sh->k +
                         (sh->bias ? sh->O : 0) + (double)N * sh->O * P);
    }
    gcr_scope_end(ctx, sc);
}

/* times one head op (global average pool or linear) at batch N */
static void bench_head(gcr_ctx *ctx, const head_shape *e, gcr_dtype dt, int N, gcr_format f, result *r)
{
    size_t es = gcr_dtype_size(dt);
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_call c;
    memset(&c, 0, sizeof c);
    *r = (result){e->name, e->kind == 1 ? "gap" : "fc", e->count, -1, 0, 0, "", ""};
    if (e->kind == 1) {
        int64_t xs[4] = {N, e->C, e->H, e->H};
        c.op = GCR_OP_ADAPTIVE_AVG_POOL2D;
        c.n_in = 1;
        c.in[0] = rand_tensor(ctx, dt, 4, xs, f);
        c.p.v[0] = c.p.v[1] = 1;
        c.p.n = 2;
        r->flops = (double)N * e->C * e->H * e->H;
        r->bytes = es * (r->flops + (double)N * e->C);
    } else {
        int64_t xs[2] = {N, e->C}, ws[2] = {e->O, e->C}, bs[1] = {e->O};
        c.op = GCR_OP_LINEAR;
        c.n_in = 3;
        c.in[0] = rand_tensor(ctx, dt, 2, xs, GCR_NCHW);
        c.in[1] = rand_tensor(ctx, dt, 2, ws, GCR_NCHW);
        c.in[2] = rand_tensor(ctx, dt, 1, bs, GCR_NCHW);
        r->flops = 2.0 * N * e->C * e->O;
        r->bytes = es * ((double)N * e->C + (double)e->C * e->O + e->O + (double)N * e->O);
    }
    gcr_meta m;
    char err[200] = "";
    gcr_tensor *out = NULL;
    if (c.in[0] && (c.n_in == 1 || (c.in[1] && c.in[2])) && gcr_infer(&c, &m, err, sizeof err) == GCR_OK)
        out = gcr_tensor_alloc(ctx, &m, "bench");
    time_into(ctx, &c, out, err, r);
    gcr_scope_end(ctx, sc);
}

/* the layer about to be timed, on stderr (tactics): its autotune line, if any, follows */
static void mark(const net_def *net, const char *name, const bench_dtype *bd, int N, int count)
{
    if (tactics) fprintf(stderr, "conv_bench: layer %s %s %s batch %d count %d\n", net->name, name, bd->name, N, count);
}

static void bench(gcr_ctx *ctx, const net_def *net, const bench_dtype *bd, int N, gcr_format f, gcr_format wf, int head)
{
    gcr_knobs k = gcr_ctx_opts_default().knobs; /* -1 everywhere: only tf32 and log change */
    k.tf32 = bd->tf32;
    k.log = tactics ? 2 : -1; /* bench_ctx silences the log; tactics needs autotune's lines */
    if (gcr_ctx_set_knobs(ctx, &k) != GCR_OK) {
        printf("conv_bench: cannot set tf32=%d: %s\n", bd->tf32, gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        return;
    }
    const char *lay = f == GCR_NHWC ? "nhwc" : "nchw", *wlay = wf == GCR_NHWC ? "nhwc" : "nchw";
    double pf = bd->dt == GCR_F32 ? (bd->tf32 ? peak_tc / 2 : peak_f32) : peak_tc;
    result res[64];
    int n = 0;
    for (size_t i = 0; i < net->n_convs && n < 64; i++)
        if (!only || !strncmp(net->convs[i].name, only, strlen(only))) {
            mark(net, net->convs[i].name, bd, N, net->convs[i].count);
            bench_conv(ctx, &net->convs[i], bd->dt, N, f, wf, &res[n++]);
        }
    for (size_t i = 0; head && i < net->n_head && n < 64; i++)
        if (!only || !strncmp(net->head[i].name, only, strlen(only))) {
            mark(net, net->head[i].name, bd, N, net->head[i].count);
            bench_head(ctx, &net->head[i], bd->dt, N, f, &res[n++]);
        }

    /* the human table, then one LAYER line per layer for bench/conv_table.py */
    printf("%s batch %d %s %s (weights %s)\n", bd->name, N, f == GCR_NHWC ? "NHWC" : "NCHW", net->name, wlay);
    double total = 0, dwt = 0, convt = 0;
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        if (r->us < 0) {
            printf("  %-12s failed: %s\n", r->name, r->err);
            continue;
        }
        double tf = r->flops / r->us * 1e-6, gbs = r->bytes / r->us * 1e-3;
        printf("  %-12s x%d %9.2f us %8.2f TFLOP/s (%5.1f%%) %8.1f GB/s (%5.1f%%)\n", r->name, r->count, r->us, tf,
               100 * tf / pf, gbs, 100 * gbs / copy_bw);
        total += r->us * r->count;
        if (!strcmp(r->kind, "dw")) dwt += r->us * r->count;
        else if (!strcmp(r->kind, "conv")) convt += r->us * r->count;
    }
    printf("  total %.1f us per forward (depthwise %.1f, other convs %.1f, rest %.1f)\n", total, dwt, convt,
           total - dwt - convt);
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        printf("LAYER side=gcr net=%s name=%s kind=%s dtype=%s layout=%s wlayout=%s batch=%d count=%d ", net->name, r->name,
               r->kind, bd->name, lay, wlay, N, r->count);
        if (r->us < 0) printf("us=fail\n");
        else
            printf("us=%.3f tflops=%.3f gbs=%.1f flops=%.0f bytes=%.0f kernel=%s\n", r->us, r->flops / r->us * 1e-6,
                   r->bytes / r->us * 1e-3, r->flops, r->bytes, r->kernel);
    }
    printf("\n");
    fflush(stdout);
}

static void ceilings(gcr_ctx *ctx)
{
    int sms = 0, khz = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess || khz <= 0) khz = 1980000;
    cudaGetLastError();
    peak_f32 = sms * 128.0 * 2 * khz * 1e-9;  /* TFLOP/s: 128 FP32 FMA per SM per clock */
    peak_tc = sms * 2048.0 * 2 * khz * 1e-9;  /* dense f16 tensor cores (Hopper: 2048 FMA/SM/clk, 989 TF on H100 SXM); TF32 half */
    size_t n = 1u << 28;
    void *a, *b;
    cudaStream_t s = gcr_cuda_stream(ctx);
    if (cudaMalloc(&a, n) == cudaSuccess && cudaMalloc(&b, n) == cudaSuccess) {
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s);
        cudaEventRecord(e0, s);
        for (int i = 0; i < 10; i++) cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, s);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        copy_bw = 2.0 * n * 10 / (ms * 1e-3) * 1e-9; /* read + write */
        cudaFree(a);
        cudaFree(b);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    printf("%s: %d SMs at %.2f GHz; ceilings f32 FMA %.1f TFLOP/s, f16 tensor %.0f TFLOP/s, tf32 tensor %.0f TFLOP/s, "
           "copy %.0f GB/s\n\n",
           gcr_ctx_device_name(ctx), sms, khz * 1e-6, peak_f32, peak_tc, peak_tc / 2, copy_bw);
}

static int usage(const char *what, const char *arg)
{
    fprintf(stderr, "conv_bench: %s '%s'\nusage: conv_bench [net=mnv3|resnet50|all] [nchw|nhwc] "
                    "[w=nchw|nhwc] [f32|tf32|f16|bf16 ...] [head=0|1] [only=NAME-PREFIX] [force=NAME] [tactics] [batch ...]\n",
            what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    gcr_format f = GCR_NCHW, wf = GCR_NCHW;
    int batches[8], nb = 0, nd = 0, head = 1, wset = 0;
    const bench_dtype *dts[8];
    const char *netsel = "mnv3", *force = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t d;
        for (d = 0; d < sizeof dtypes / sizeof dtypes[0] && strcmp(a, dtypes[d].name); d++) {}
        if (d < sizeof dtypes / sizeof dtypes[0]) {
            if (nd < 8) dts[nd++] = &dtypes[d];
        } else if (!strcmp(a, "nhwc")) f = GCR_NHWC;
        else if (!strcmp(a, "nchw")) f = GCR_NCHW;
        else if (!strcmp(a, "w=nhwc")) wf = GCR_NHWC, wset = 1;
        else if (!strcmp(a, "w=nchw")) wf = GCR_NCHW, wset = 1;
        else if (!strncmp(a, "net=", 4)) netsel = a + 4;
        else if (!strncmp(a, "head=", 5)) head = atoi(a + 5);
        else if (!strncmp(a, "only=", 5)) only = a + 5;
        else if (!strncmp(a, "force=", 6)) force = a + 6;
        else if (!strcmp(a, "tactics")) tactics = 1;
        else if (atoi(a) > 0) {
            if (nb < 8) batches[nb++] = atoi(a);
        } else return usage("unknown argument", a);
    }
    if (!wset) wf = f; /* weights in the activation's format, as a channels_last PyTorch model has them */
    if (!nb) batches[nb++] = 1, batches[nb++] = 32, batches[nb++] = 128;
    if (!nd) dts[nd++] = &dtypes[0], dts[nd++] = &dtypes[2];
    int any = 0;
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) any |= !strcmp(netsel, "all") || !strcmp(netsel, nets[i].name);
    if (!any) return usage("unknown net", netsel);
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!ctx) {
        printf("conv_bench: no CUDA device, nothing to time\n");
        return 0;
    }
    if (force) gcr_cuda_dense_force(ctx, force);
    ceilings(ctx);
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
        if (strcmp(netsel, "all") && strcmp(netsel, nets[i].name)) continue;
        for (int d = 0; d < nd; d++)
            for (int b = 0; b < nb; b++) bench(ctx, &nets[i], dts[d], batches[b], f, wf, head);
    }
    gcr_ctx_destroy(ctx);
    return 0;
}
#else
int main(void)
{
    printf("conv_bench: built without CUDA, nothing to time\n");
    return 0;
}
#endif
