/* launch.c — launch cost of a chain of 100 tiny dependent ops (add_scalar on 256 f32).
 * Eager: gcr's add_scalar per op against raw cuLaunchKernel of a minimal kernel doing the same work
 * (driver entry point, same stream), timed from the first call to the stream being drained.
 * Graph: the cost per kernel boundary inside one CUDA Graph, with and without programmatic dependent
 * launch (GCR_PDL): the raw kernel (it waits for its predecessor with griddepcontrol, as every gcr
 * kernel does) captured 100 times on 1 block and on one block per SM, and gcr's captured chain
 * replayed unfused (one kernel per op), each graph launch timed with CUDA events.
 * Prints tables; the minimum over repetitions is reported (the least-disturbed run). */
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
                              "#if __CUDA_ARCH__ >= 900\n"
                              "    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n"
                              "    asm volatile(\"griddepcontrol.launch_dependents;\");\n"
                              "#endif\n"
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

/* the least time in microseconds of REPS calls of launch(arg) on stream s, between two events,
 * after 2 warm-up calls */
static double min_us(cudaStream_t s, void (*launch)(void *arg, cudaStream_t s), void *arg)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double best = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        cudaEventRecord(e0, s);
        launch(arg, s);
        cudaEventRecord(e1, s);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep >= 2 && 1e3 * ms < best) best = 1e3 * ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return best;
}

static void launch_exec(void *ex, cudaStream_t s) { cudaGraphLaunch((cudaGraphExec_t)ex, s); }
static void replay_graph(void *g, cudaStream_t s) { gcr_graph_replay(g); }

/* microseconds per boundary of a graph of CHAIN bump launches on `blocks` blocks, with the
 * programmatic-serialization attribute or without; min over REPS graph launches, or -1 */
static double raw_graph(gcr_ctx *ctx, CUfunction fn, void *buf, unsigned blocks, int pdl)
{
    const gcr_cuda_drv *drv = gcr_cuda_driver(ctx);
    if (pdl && !drv->launch_kernel_ex) return -1;
    cudaStream_t s = gcr_cuda_stream(ctx);
    float v = 1.0f;
    int n = 256;
    void *args[] = {&buf, &v, &n};
    CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {.gridDimX = blocks, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 256, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = (CUstream)s, .attrs = &attr, .numAttrs = 1};
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess) return -1;
    for (int i = 0; i < CHAIN; i++) {
        if (pdl) drv->launch_kernel_ex(&cfg, fn, args, NULL);
        else drv->launch_kernel(fn, blocks, 1, 1, 256, 1, 1, 0, (CUstream)s, args, NULL);
    }
    if (cudaStreamEndCapture(s, &g) != cudaSuccess || cudaGraphInstantiate(&ex, g, 0) != cudaSuccess) {
        if (g) cudaGraphDestroy(g);
        return -1;
    }
    double best = min_us(s, launch_exec, ex);
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(g);
    return best / CHAIN;
}

/* microseconds per kernel of gcr's captured chain replayed unfused (one kernel per op) with the
 * given GCR_PDL; min over REPS replays, or -1 */
static double gcr_replay_chain(int pdl)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.fusion = 0;
    o.knobs.log = 0;
    o.knobs.pdl = pdl;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return -1;
    int64_t n = 256;
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 1, &n, GCR_NCHW), *cur = x;
    gcr_graph *g = NULL;
    gcr_capture_begin(ctx);
    for (int i = 0; i < CHAIN; i++) cur = gcr_add_scalar(ctx, cur, 1.0f);
    gcr_capture_end(ctx, &g);
    double best = -1;
    if (g) {
        best = min_us(gcr_cuda_stream(ctx), replay_graph, g) / CHAIN;
        gcr_graph_destroy(g);
    }
    gcr_ctx_destroy(ctx);
    return best;
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
    double rg[2][2]; /* [one block, one per SM][without, with PDL] */
    unsigned sms = (unsigned)gcr_cuda_sm_count(ctx);
    for (int b = 0; b < 2; b++)
        for (int p = 0; p < 2; p++) rg[b][p] = raw_graph(ctx, k, buf, b ? sms : 1, p);
    double gg[2] = {gcr_replay_chain(0), gcr_replay_chain(1)};
    gcr_cuda_free_block(ctx, buf, 1024);
    printf("launch cost, chain of %d dependent tiny ops (256 f32), %s, min of %d reps\n", CHAIN, gcr_ctx_device_name(ctx), REPS - 2);
    printf("%-32s %10s\n", "path", "us/op");
    printf("%-32s %10.2f\n", "raw cuLaunchKernel", r);
    printf("%-32s %10.2f\n", "gcr eager add_scalar", g);
    printf("%-32s %10.2f\n", "gcr overhead over raw", g - r);
    printf("\ncost per kernel boundary in one CUDA Graph, chain of %d, min of %d launches (-1: unavailable)\n", CHAIN,
           REPS - 2);
    printf("%-32s %12s %12s\n", "graph", "plain us", "PDL us");
    printf("%-32s %12.3f %12.3f\n", "raw bump, 1 block", rg[0][0], rg[0][1]);
    char label[64];
    snprintf(label, sizeof label, "raw bump, %u blocks", sms);
    printf("%-32s %12.3f %12.3f\n", label, rg[1][0], rg[1][1]);
    printf("%-32s %12.3f %12.3f\n", "gcr replay, unfused add_scalar", gg[0], gg[1]);
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
