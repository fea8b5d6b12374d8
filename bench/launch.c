/* launch.c — eager launch cost: a chain of 100 tiny dependent ops (add_scalar on 256 f32) through
 * gcr eager, per op, against raw cuLaunchKernel of a minimal kernel doing the same work (driver
 * entry point, same stream). Both are timed from the first call to the stream being drained.
 * Prints a table; the minimum over repetitions is reported (the least-disturbed run). */
#include "bench.h"
#include <stdio.h>

#if GCR_HAVE_CUDA
#include "cuda/cuda_ops.h"

#define CHAIN 100
#define REPS 50


static double gcr_chain(gcr_ctx *ctx, gcr_tensor *x)
{
    double t0 = bench_now_us();
    gcr_tensor *cur = x;
    for (int i = 0; i < CHAIN; i++) {
        gcr_tensor *next = gcr_add_scalar(ctx, cur, 1.0f);
        if (cur != x) gcr_tensor_free(cur);
        cur = next;
    }
    gcr_ctx_sync(ctx);
    double t = bench_now_us() - t0;
    gcr_tensor_free(cur);
    return t / CHAIN;
}

/* The raw side's kernel: compiled with NVRTC and loaded through the driver by this program, so
 * nothing of gcr's launch path is in its way; 0 on failure. */
static CUfunction raw_kernel(gcr_ctx *ctx)
{
    static const char src[] = "extern \"C\" __global__ void bump(float *p, float v, int n) {\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += v; }\n";
    const gcr_cuda_drv *drv = gcr_cuda_driver(ctx);
    void *img = NULL;
    size_t size = 0;
    char *log = NULL;
    CUmodule mod;
    CUfunction fn = 0;
    if (drv && gcr_nvrtc_compile(src, NULL, 0, gcr_cuda_arch(ctx), &img, &size, NULL, &log) == GCR_OK &&
        drv->module_load_data(&mod, img) == CUDA_SUCCESS && drv->module_get_function(&fn, mod, "bump") != CUDA_SUCCESS)
        fn = 0;
    if (!fn) printf("launch: the raw kernel: %s\n", log ? log : "not loaded");
    free(img);
    free(log);
    return fn; /* its module lives until the process ends */
}

static double raw_chain(gcr_ctx *ctx, CUfunction fn, void *buf)
{
    const gcr_cuda_drv *drv = gcr_cuda_driver(ctx);
    CUstream s = (CUstream)gcr_cuda_stream(ctx);
    float v = 1.0f;
    int n = 256;
    void *args[] = {&buf, &v, &n};
    double t0 = bench_now_us();
    for (int i = 0; i < CHAIN; i++) drv->launch_kernel(fn, 1, 1, 1, 256, 1, 1, 0, s, args, NULL);
    cudaStreamSynchronize(gcr_cuda_stream(ctx));
    return (bench_now_us() - t0) / CHAIN;
}

int main(void)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CUDA, 1);
    if (!ctx) {
        printf("launch: no CUDA device, skipped\n");
        return 0;
    }
    float h[256];
    for (int i = 0; i < 256; i++) h[i] = (float)i * 0.01f;
    int64_t n = 256;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 1, &n, GCR_NCHW, h);
    CUfunction k = raw_kernel(ctx);
    if (!k) return 1;
    void *buf = NULL;
    gcr_cuda_alloc_block(ctx, 1024, &buf);
    double g = 1e30, r = 1e30;
    for (int rep = 0; rep < REPS; rep++) { /* interleaved, so both see the same machine state */
        double a = gcr_chain(ctx, x), b = raw_chain(ctx, k, buf);
        if (rep >= 2) { /* the first reps warm up the program cache and allocator */
            g = a < g ? a : g;
            r = b < r ? b : r;
        }
    }
    gcr_cuda_free_block(ctx, buf, 1024);
    printf("launch cost, chain of %d dependent tiny ops (256 f32), %s, min of %d reps\n", CHAIN, gcr_ctx_device_name(ctx), REPS - 2);
    printf("%-32s %10s\n", "path", "us/op");
    printf("%-32s %10.2f\n", "raw cuLaunchKernel", r);
    printf("%-32s %10.2f\n", "gcr eager add_scalar", g);
    printf("%-32s %10.2f\n", "gcr overhead over raw", g - r);
    gcr_ctx_destroy(ctx);
    return 0;
}
#else
int main(void)
{
    printf("launch: built without CUDA, skipped\n");
    return 0;
}
#endif
