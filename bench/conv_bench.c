/* conv_bench.c — times gcr's GPU conv kernels on every conv shape of MobileNet-v3-Large (224x224
 * input), plus its global average pool and classifier, at batch 1 and 128 in f32 and f16 (NCHW; pass
 * "nhwc" for channels-last). Each kernel is launched 20 times inside one CUDA Graph so the figure
 * is device time, not launch cost. Prints µs per kernel, TFLOP/s and GB/s (compulsory traffic: x,
 * w, out once) against the device's ceilings: f32 FMA peak, f16 tensor-core peak (from SM count and
 * clock) and the device-to-device copy bandwidth measured in the same run. The network total weights
 * each shape by how often the model uses it.
 * usage: conv_bench [nhwc] [f32|f16] [only=NAME-PREFIX] [batch ...] */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GCR_HAVE_CUDA
#include "cuda/dense.h"

typedef struct shape {
    const char *name;
    int C, H, O, k, s, g, bias, count; /* square input H x H, padding k/2 */
} shape;

/* kind: 0 conv, 1 global average pool (C at H x H), 2 linear C -> O */
typedef struct extra_shape { const char *name; int kind, C, H, O, count; } extra_shape;

#define DW(n, c, h, k, s, cnt) {n, c, h, c, k, s, c, 0, cnt}
#define PW(n, c, h, o, cnt) {n, c, h, o, 1, 1, 1, 0, cnt}
#define SE(n, c, o, cnt) {n, c, 1, o, 1, 1, 1, 1, cnt}
static const shape net[] = {
    {"stem 3x3s2", 3, 224, 16, 3, 2, 1, 0, 1},
    DW("b1.dw3", 16, 112, 3, 1, 1), PW("b1.pw", 16, 112, 16, 1),
    PW("b2.ex", 16, 112, 64, 1), DW("b2.dw3s2", 64, 112, 3, 2, 1), PW("b2.pw", 64, 56, 24, 1),
    PW("b3.ex", 24, 56, 72, 1), DW("b3.dw3", 72, 56, 3, 1, 1), PW("b3.pw", 72, 56, 24, 1),
    PW("b4.ex", 24, 56, 72, 1), DW("b4.dw5s2", 72, 56, 5, 2, 1), SE("b4.se1", 72, 24, 1), SE("b4.se2", 24, 72, 1),
    PW("b4.pw", 72, 28, 40, 1),
    PW("b5.ex", 40, 28, 120, 2), DW("b5.dw5", 120, 28, 5, 1, 2), SE("b5.se1", 120, 32, 2), SE("b5.se2", 32, 120, 2),
    PW("b5.pw", 120, 28, 40, 2),
    PW("b7.ex", 40, 28, 240, 1), DW("b7.dw3s2", 240, 28, 3, 2, 1), PW("b7.pw", 240, 14, 80, 1),
    PW("b8.ex", 80, 14, 200, 1), DW("b8.dw3", 200, 14, 3, 1, 1), PW("b8.pw", 200, 14, 80, 1),
    PW("b9.ex", 80, 14, 184, 2), DW("b9.dw3", 184, 14, 3, 1, 2), PW("b9.pw", 184, 14, 80, 2),
    PW("b11.ex", 80, 14, 480, 1), DW("b11.dw3", 480, 14, 3, 1, 1), SE("b11.se1", 480, 120, 1),
    SE("b11.se2", 120, 480, 1), PW("b11.pw", 480, 14, 112, 1),
    PW("b12.ex", 112, 14, 672, 1), DW("b12.dw3", 672, 14, 3, 1, 1), SE("b12.se1", 672, 168, 2),
    SE("b12.se2", 168, 672, 2), PW("b12.pw", 672, 14, 112, 1),
    PW("b13.ex", 112, 14, 672, 1), DW("b13.dw5s2", 672, 14, 5, 2, 1), PW("b13.pw", 672, 7, 160, 1),
    PW("b14.ex", 160, 7, 960, 2), DW("b14.dw5", 960, 7, 5, 1, 2), SE("b14.se1", 960, 240, 2), SE("b14.se2", 240, 960, 2),
    PW("b14.pw", 960, 7, 160, 2),
    PW("last", 160, 7, 960, 1),
};
static const extra_shape extras[] = {
    {"gap 960@7x7", 1, 960, 7, 960, 1}, {"fc1 960-1280", 2, 960, 1, 1280, 1}, {"fc2 1280-1000", 2, 1280, 1, 1000, 1},
};

static double peak_f32, peak_tc, copy_bw;
static const char *only; /* time only the shapes whose name starts with this */

static float *randbuf(size_t n)
{
    float *p = malloc(n * sizeof *p);
    uint64_t s = 0x1234567ull + n;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        p[i] = (float)((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
    }
    return p;
}

static gcr_tensor *rand_tensor(gcr_ctx *ctx, gcr_dtype dt, int nd, const int64_t *shape, gcr_format f)
{
    size_t n = 1;
    for (int i = 0; i < nd; i++) n *= (size_t)shape[i];
    float *h = randbuf(n);
    gcr_tensor *t = gcr_tensor_from_data(ctx, GCR_F32, nd, shape, f, h);
    free(h);
    if (t && dt != GCR_F32) t = gcr_cast(ctx, t, dt);
    return t;
}

/* device µs of one launch of c into out: 20 launches in one graph, replayed 10 times */
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
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&ge, g, 0) != cudaSuccess) return -1;
    cudaGraphLaunch(ge, s);
    bench_timer t;
    bench_timer_start(&t, s);
    for (int i = 0; i < 10; i++) cudaGraphLaunch(ge, s);
    double ms = bench_timer_ms(&t);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    return ms * 1000.0 / 200.0;
}

static void report(const char *name, int count, double us, double flops, double bytes, gcr_dtype dt, double *total)
{
    double tf = flops / us * 1e-6, gbs = bytes / us * 1e-3;
    double pf = dt == GCR_F32 ? peak_f32 : peak_tc;
    printf("  %-14s x%d %9.2f us %8.2f TFLOP/s (%5.1f%%) %8.1f GB/s (%5.1f%%)\n", name, count, us, tf, 100 * tf / pf, gbs,
           100 * gbs / copy_bw);
    *total += us * count;
}

static void bench(gcr_ctx *ctx, gcr_dtype dt, int N, gcr_format f)
{
    size_t es = gcr_dtype_size(dt);
    double total = 0, dwt = 0, pwt = 0;
    printf("%s batch %d %s\n", gcr_dtype_name(dt), N, f == GCR_NHWC ? "NHWC" : "NCHW");
    for (size_t i = 0; i < sizeof net / sizeof net[0]; i++) {
        const shape *sh = &net[i];
        if (only && strncmp(sh->name, only, strlen(only))) continue;
        uint64_t sc = gcr_scope_begin(ctx);
        int64_t xs[4] = {N, sh->C, sh->H, sh->H}, ws[4] = {sh->O, sh->C / sh->g, sh->k, sh->k}, bs[1] = {sh->O};
        gcr_call c;
        memset(&c, 0, sizeof c);
        c.op = GCR_OP_CONV2D;
        c.n_in = 3;
        c.in[0] = rand_tensor(ctx, dt, 4, xs, f);
        c.in[1] = rand_tensor(ctx, dt, 4, ws, GCR_NCHW);
        c.in[2] = sh->bias ? rand_tensor(ctx, dt, 1, bs, GCR_NCHW) : NULL;
        c.p.conv = (gcr_conv2d_params){{sh->s, sh->s}, {sh->k / 2, sh->k / 2}, {1, 1}, sh->g};
        gcr_meta m;
        char err[256];
        gcr_tensor *out = NULL;
        if (c.in[0] && c.in[1] && gcr_infer(&c, &m, err, sizeof err) == GCR_OK) out = gcr_tensor_alloc(ctx, &m, "bench");
        double us = out ? time_call(ctx, &c, out) : -1;
        if (us < 0) {
            printf("  %-14s failed: %s\n", sh->name, gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
        } else {
            double P = (double)m.shape[2] * m.shape[3];
            double flops = 2.0 * N * sh->O * P * (sh->C / sh->g) * sh->k * sh->k;
            double bytes = es * ((double)N * sh->C * sh->H * sh->H + (double)sh->O * (sh->C / sh->g) * sh->k * sh->k +
                                 (double)N * sh->O * P);
            report(sh->name, sh->count, us, flops, bytes, dt, &total);
            if (sh->g > 1) dwt += us * sh->count;
            else pwt += us * sh->count;
        }
        gcr_scope_end(ctx, sc);
    }
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
        const extra_shape *e = &extras[i];
        if (only && strncmp(e->name, only, strlen(only))) continue;
        uint64_t sc = gcr_scope_begin(ctx);
        gcr_call c;
        memset(&c, 0, sizeof c);
        double flops, bytes;
        if (e->kind == 1) {
            int64_t xs[4] = {N, e->C, e->H, e->H};
            c.op = GCR_OP_ADAPTIVE_AVG_POOL2D;
            c.n_in = 1;
            c.in[0] = rand_tensor(ctx, dt, 4, xs, f);
            c.p.v[0] = c.p.v[1] = 1;
            c.p.n = 2;
            flops = (double)N * e->C * e->H * e->H;
            bytes = es * (flops + (double)N * e->C);
        } else {
            int64_t xs[2] = {N, e->C}, ws[2] = {e->O, e->C}, bs[1] = {e->O};
            c.op = GCR_OP_LINEAR;
            c.n_in = 3;
            c.in[0] = rand_tensor(ctx, dt, 2, xs, GCR_NCHW);
            c.in[1] = rand_tensor(ctx, dt, 2, ws, GCR_NCHW);
            c.in[2] = rand_tensor(ctx, dt, 1, bs, GCR_NCHW);
            flops = 2.0 * N * e->C * e->O;
            bytes = es * ((double)N * e->C + (double)e->C * e->O + (double)N * e->O);
        }
        gcr_meta m;
        char err[256];
        gcr_tensor *out = NULL;
        if (c.in[0] && gcr_infer(&c, &m, err, sizeof err) == GCR_OK) out = gcr_tensor_alloc(ctx, &m, "bench");
        double us = out ? time_call(ctx, &c, out) : -1;
        if (us < 0) {
            printf("  %-14s failed: %s\n", e->name, gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
        } else {
            report(e->name, e->count, us, flops, bytes, dt, &total);
        }
        gcr_scope_end(ctx, sc);
    }
    printf("  total %.1f us per forward (depthwise %.1f, other convs %.1f, rest %.1f)\n\n", total, dwt, pwt,
           total - dwt - pwt);
}

static void ceilings(gcr_ctx *ctx)
{
    int sms = 0, khz = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) != cudaSuccess || khz <= 0) khz = 1980000;
    cudaGetLastError();
    peak_f32 = sms * 128.0 * 2 * khz * 1e-9;  /* TFLOP/s: 128 FP32 FMA per SM per clock */
    peak_tc = sms * 2048.0 * 2 * khz * 1e-9;  /* dense f16 tensor cores (Hopper: 2048 FMA/SM/clk, 989 TF on H100 SXM) */
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
    printf("%s: %d SMs at %.2f GHz; ceilings f32 FMA %.1f TFLOP/s, f16 tensor %.0f TFLOP/s, copy %.0f GB/s\n\n",
           gcr_ctx_device_name(ctx), sms, khz * 1e-6, peak_f32, peak_tc, copy_bw);
}

int main(int argc, char **argv)
{
    gcr_format f = GCR_NCHW;
    int batches[8], nb = 0, d0 = 0, d1 = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "nhwc")) f = GCR_NHWC;
        else if (!strcmp(argv[i], "f32")) d0 = 0, d1 = 1;
        else if (!strcmp(argv[i], "f16")) d0 = 1, d1 = 2;
        else if (!strncmp(argv[i], "only=", 5)) only = argv[i] + 5;
        else if (nb < 8 && atoi(argv[i]) > 0) batches[nb++] = atoi(argv[i]);
    }
    if (!nb) batches[nb++] = 1, batches[nb++] = 128;
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!ctx) {
        printf("conv_bench: no CUDA device, nothing to time\n");
        return 0;
    }
    ceilings(ctx);
    const gcr_dtype dts[2] = {GCR_F32, GCR_F16};
    for (int d = d0; d < d1; d++)
        for (int b = 0; b < nb; b++) bench(ctx, dts[d], batches[b], f);
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
