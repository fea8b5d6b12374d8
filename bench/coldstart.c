/* coldstart.c — time to the first result of a small eager workload (cast, add, mul, hardswish,
 * relu, sigmoid, batch_norm, sum, mean, max, NHWC copy, concat) in a fresh process, with an empty
 * kernel cache directory (every program compiled by NVRTC) and then with the warm one (every
 * program loaded from disk). The parent re-runs itself as the child, so each figure includes
 * process start, CUDA context creation and module loads, like a user's first run. */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GCR_HAVE_CUDA
#include "cuda/cuda_ops.h"

static double now_ms(void) { return 1e-3 * bench_now_us(); }

/* the child: runs the workload once, prints "ctx_ms first_ms compiles disk_hits" */
static int child(const char *dir)
{
    double t0 = now_ms();
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.cache_dir = dir;
    o.knobs.log = 0;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return 2;
    double t1 = now_ms();
    int64_t shape[4] = {2, 16, 28, 28}, c16 = 16;
    int64_t n = 2 * 16 * 28 * 28;
    float *h = malloc((size_t)n * 4), p[16];
    for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 97) * 0.03f - 1.5f;
    for (int i = 0; i < 16; i++) p[i] = 0.5f + 0.01f * (float)i;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, shape, GCR_NCHW, h);
    gcr_tensor *m = gcr_tensor_from_data(ctx, GCR_F32, 1, &c16, GCR_NCHW, p);
    gcr_tensor *xh = gcr_cast(ctx, x, GCR_F16);
    gcr_tensor *a = gcr_add(ctx, x, x), *b = gcr_mul(ctx, a, x), *c = gcr_hardswish(ctx, b), *d = gcr_relu(ctx, c);
    gcr_tensor *e = gcr_sigmoid(ctx, d), *f = gcr_batch_norm(ctx, e, m, m, m, m, 1e-5f);
    int ax[2] = {2, 3};
    gcr_tensor *s1 = gcr_sum(ctx, f, ax, 2, 1), *s2 = gcr_mean(ctx, f, ax, 2, 1), *s3 = gcr_max(ctx, f, ax, 2, 1);
    gcr_tensor *nh = gcr_contiguous(ctx, f, GCR_NHWC);
    gcr_tensor *parts[3] = {s1, s2, s3};
    gcr_tensor *cat = gcr_concat(ctx, parts, 3, 1);
    float out[2 * 48];
    gcr_status st = cat ? gcr_tensor_to_host(cat, out, sizeof out) : GCR_ERR_INTERNAL;
    double t2 = now_ms();
    (void)xh, (void)nh;
    gcr_cuda_cache_stats cs;
    gcr_cuda_cache_get_stats(ctx, &cs);
    if (st != GCR_OK) fprintf(stderr, "coldstart: %s\n", gcr_ctx_error(ctx));
    printf("%.1f %.1f %d %d\n", t1 - t0, t2 - t0, cs.compiles, cs.disk_hits);
    free(h);
    gcr_ctx_destroy(ctx);
    return st == GCR_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--child")) return child(argv[2]);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("coldstart: no CUDA device, skipped\n");
        return 0;
    }
    char dir[] = "/tmp/gcr-coldstart-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    printf("cold / warm start: time to the first result of 13 eager ops, fresh process each\n");
    printf("%-12s %12s %14s %9s %10s %12s\n", "cache", "process ms", "ctx ms", "first ms", "compiles", "disk hits");
    for (int run = 0; run < 3; run++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s --child %s", argv[0], dir);
        double t0 = now_ms();
        FILE *p = popen(cmd, "r");
        double ctx_ms = 0, first_ms = 0;
        int comp = -1, disk = -1;
        if (!p || fscanf(p, "%lf %lf %d %d", &ctx_ms, &first_ms, &comp, &disk) != 4) printf("child failed\n");
        if (p) pclose(p);
        double total = now_ms() - t0;
        printf("%-12s %12.1f %14.1f %9.1f %10d %12d\n", run == 0 ? "empty" : "warm", total, ctx_ms, first_ms, comp, disk);
    }
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) printf("could not remove %s\n", dir);
    return 0;
}
#else
int main(void)
{
    printf("coldstart: built without CUDA, skipped\n");
    return 0;
}
#endif
