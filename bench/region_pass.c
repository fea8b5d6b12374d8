/* region_pass.c — the host cost of a region's check pass: a GCR_REGION body of N calls (a 1x1 conv,
 * then hardswish's add / clamp / mul / div, repeated) on tiny tensors, run on the CPU backend so the
 * replay itself is cheap, timed per pass with guards on (each call matched against the trace) and
 * off (the body skipped: the replay alone). The difference over N is what one call of the body
 * costs a pass; on a GPU it is host time that the loop step pays before its replay starts.
 * Prints a table; the minimum over repetitions is reported. Usage: region_pass [N] (default 265,
 * MobileNet-v3-Large's call count). */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

#define PASSES 2000
#define REPS 5

static gcr_tensor *body(gcr_ctx *ctx, gcr_tensor *x, gcr_tensor **w, int n)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    gcr_tensor *y = x;
    for (int i = 0; i < n; i++) {
        switch (i % 5) {
        case 0: y = gcr_conv2d(ctx, y, w[i % 8], NULL, &p); break;
        case 1: y = gcr_add_scalar(ctx, y, 3.0f); break;
        case 2: y = gcr_clamp(ctx, y, 0.0f, 6.0f); break;
        case 3: y = gcr_mul(ctx, y, x); break;
        default: y = gcr_div_scalar(ctx, y, 6.0f); break;
        }
    }
    return y;
}

/* microseconds per pass of a region whose body makes n calls, with the given guards knob; -1 on
 * failure */
static double pass_us(int n, int guards)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.guards = guards;
    o.knobs.log = 0;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return -1;
    const int64_t xs[4] = {1, 4, 2, 2}, ws[4] = {4, 4, 1, 1};
    float h[16];
    for (int i = 0; i < 16; i++) h[i] = 0.01f * (float)i - 0.05f;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, xs, GCR_NHWC, h), *w[8];
    for (int i = 0; i < 8; i++) w[i] = gcr_tensor_set_const(gcr_tensor_from_data(ctx, GCR_F32, 4, ws, GCR_NCHW, h));
    gcr_tensor *y = NULL;
    for (int it = 0; it < 50; it++) GCR_REGION(ctx, "pass") { y = body(ctx, x, w, n); }
    double best = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        double t0 = bench_now_us();
        for (int it = 0; it < PASSES; it++) GCR_REGION(ctx, "pass") { y = body(ctx, x, w, n); }
        double t = (bench_now_us() - t0) / PASSES;
        best = t < best ? t : best;
    }
    int ok = y && gcr_ctx_status(ctx) == GCR_OK;
    if (!ok) printf("region_pass: %s\n", gcr_ctx_error(ctx));
    gcr_ctx_destroy(ctx);
    return ok ? best : -1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 265;
    if (n < 1) n = 265;
    double on = pass_us(n, 1), off = pass_us(n, 0);
    printf("region pass of %d calls on the CPU backend, min of %d reps of %d passes\n", n, REPS, PASSES);
    printf("%-36s %10s\n", "pass", "us");
    printf("%-36s %10.2f\n", "guards on (calls checked)", on);
    printf("%-36s %10.2f\n", "guards off (body skipped)", off);
    printf("%-36s %10.3f\n", "check cost per call", on > 0 && off > 0 ? (on - off) / n : -1.0);
    return on > 0 && off > 0 ? 0 : 1;
}
