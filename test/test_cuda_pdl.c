/* test_cuda_pdl.c — programmatic dependent launch (GCR_PDL, lib/cuda/launch.c) on a GPU; skips
 * without one, and checks only the flags before sm_90.
 * - Which kernels get it: a function of a module that includes common.cuh is marked, one of a
 *   module that does not is not (it would race: nothing in it waits).
 * - The wait orders memory: a kernel that lets its successor launch at once, spins, then writes a
 *   buffer, followed by one that reads it. With gcr_grid_dep() in the reader, every trial reads the
 *   new values, eagerly and replayed from a captured CUDA Graph. The control, a reader that does not
 *   wait, reads stale values in some trial: the chain really races without the wait, so the first
 *   check can fail.
 * - Bit-identical results: every model of fused_models.h (f32, f16; NCHW, NHWC; fused and unfused)
 *   and a long chain behind a slow conv, captured and replayed with fresh inputs on a ctx with
 *   GCR_PDL=1 and one with GCR_PDL=0, give the same bytes, and so do their eager runs. */
#include "knob_compare.h"
#include "cuda/program.h"

static gcr_ctx *pdl_ctx(int pdl, int fusion)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.pdl = pdl;
    o.knobs.fusion = fusion;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return NULL;
    return ctx;
}

static bool pdl_capable(gcr_ctx *ctx) { return gcr_cuda_arch(ctx) >= 90 && gcr_cuda_driver(ctx)->launch_kernel_ex; }

/* one module of gcr kernels (common.cuh) for the race checks; buffers of n floats */
static const char race_src[] =
    "#include \"common.cuh\"\n"
    "extern \"C\" __global__ void slow_write(float *buf, int n, float v, long long spin)\n"
    "{\n"
    "    gcr_grid_dep();\n"
    "#if __CUDA_ARCH__ >= 900\n"
    "    asm volatile(\"griddepcontrol.launch_dependents;\"); /* the reader launches now, not at our exit */\n"
    "#endif\n"
    "    long long t0 = clock64();\n"
    "    while (clock64() - t0 < spin) {}\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) buf[i] = v;\n"
    "}\n"
    "extern \"C\" __global__ void read_waits(const float *buf, float *out, int n)\n"
    "{\n"
    "    gcr_grid_dep();\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = buf[i];\n"
    "}\n"
    "/* the control: what a kernel without gcr_grid_dep() would be, launched early all the same */\n"
    "extern \"C\" __global__ void read_races(const float *buf, float *out, int n)\n"
    "{\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = buf[i];\n"
    "}\n";

static void test_flags(void)
{
    gcr_ctx *ctx = pdl_ctx(1, 1);
    if (!ctx) {
        h_skip_gpu("no CUDA device");
        return;
    }
    const char *names[3] = {"slow_write", "read_waits", "read_races"};
    gcr_cuda_fn *k[3] = {0};
    if (CHECK(gcr_cuda_program(ctx, race_src, names, 3, k) == GCR_OK, "race program: %s", gcr_ctx_error(ctx))) {
        bool has = gcr_cuda_driver(ctx)->module_get_global != NULL;
        for (int i = 0; i < 3; i++) CHECK(k[i]->pdl == has, "%s: pdl flag %d, want %d", names[i], k[i]->pdl, has);
    }
    const char *plain = "extern \"C\" __global__ void lone(float *p) { p[0] = 1; }\n", *lone = "lone";
    gcr_cuda_fn *f = NULL;
    if (CHECK(gcr_cuda_program(ctx, plain, &lone, 1, &f) == GCR_OK, "plain program: %s", gcr_ctx_error(ctx)))
        CHECK(!f->pdl, "a kernel of a module without common.cuh is never launched early");
    gcr_ctx_destroy(ctx);
}

#define RACE_N (1 << 16)
#define RACE_TRIALS 16

/* RACE_TRIALS runs of slow_write (1.0 into a buffer that holds -1.0) then the reader; returns in how
 * many the reader saw a value other than 1.0. With graph, the pair is captured once into a CUDA Graph
 * on the ctx's stream, which each trial launches. */
static int race_trials(gcr_ctx *ctx, gcr_cuda_fn *writer, gcr_cuda_fn *reader, bool graph)
{
    int64_t n = RACE_N;
    gcr_tensor *buf = gcr_tensor_new(ctx, GCR_F32, 1, &n, GCR_NCHW), *out = gcr_tensor_new(ctx, GCR_F32, 1, &n, GCR_NCHW);
    float *host = malloc(sizeof(float) * RACE_N);
    if (!CHECK(buf && out && host, "race buffers")) return -1;
    void *pb = gcr_tensor_data(buf), *po = gcr_tensor_data(out);
    int nn = RACE_N;
    long long spin = 2000000; /* about 1 ms of clock64 ticks: far longer than a launch */
    float v = 1.0f;
    void *wargs[] = {&pb, &nn, &v, &spin}, *rargs[] = {&pb, &po, &nn};
    cudaStream_t s = gcr_cuda_stream(ctx);
    cudaGraphExec_t exec = NULL;
    if (graph) {
        cudaGraph_t g = NULL;
        bool ok = cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess;
        ok = ok && gcr_cuda_launch(ctx, writer, 2, 1, 1, 256, 1, 1, 0, wargs) == GCR_OK;
        ok = ok && gcr_cuda_launch(ctx, reader, 132, 1, 1, 256, 1, 1, 0, rargs) == GCR_OK;
        ok = cudaStreamEndCapture(s, &g) == cudaSuccess && ok;
        ok = ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess;
        if (g) cudaGraphDestroy(g);
        if (!CHECK(ok, "capture of the race pair: %s", gcr_ctx_error(ctx))) return -1;
    }
    int stale = 0;
    for (int t = 0; t < RACE_TRIALS; t++) {
        for (int i = 0; i < RACE_N; i++) host[i] = -1.0f;
        OK(ctx, gcr_tensor_from_host(buf, host, sizeof(float) * RACE_N)); /* the stale value */
        if (graph) {
            CHECK(cudaGraphLaunch(exec, s) == cudaSuccess, "graph launch");
        } else {
            OK(ctx, gcr_cuda_launch(ctx, writer, 2, 1, 1, 256, 1, 1, 0, wargs));
            OK(ctx, gcr_cuda_launch(ctx, reader, 132, 1, 1, 256, 1, 1, 0, rargs));
        }
        OK(ctx, gcr_tensor_to_host(out, host, sizeof(float) * RACE_N));
        int bad = 0;
        for (int i = 0; i < RACE_N; i++) bad += host[i] != v;
        stale += bad > 0;
    }
    if (exec) cudaGraphExecDestroy(exec);
    free(host);
    gcr_tensor_free(buf);
    gcr_tensor_free(out);
    return stale;
}

static void test_race(void)
{
    gcr_ctx *ctx = pdl_ctx(1, 1);
    if (!ctx) {
        h_skip_gpu("no CUDA device");
        return;
    }
    if (!pdl_capable(ctx)) {
        h_skipped("programmatic dependent launch needs sm_90 and cuLaunchKernelEx");
        gcr_ctx_destroy(ctx);
        return;
    }
    const char *names[3] = {"slow_write", "read_waits", "read_races"};
    gcr_cuda_fn *k[3] = {0};
    if (!CHECK(gcr_cuda_program(ctx, race_src, names, 3, k) == GCR_OK, "race program: %s", gcr_ctx_error(ctx))) {
        gcr_ctx_destroy(ctx);
        return;
    }
    /* compute-sanitizer runs kernels one after the other, so under it (test/gpu_sanitize.sh sets
     * GCR_TEST_SANITIZER) the control cannot race and is not judged */
    const char *san = getenv("GCR_TEST_SANITIZER");
    bool serialized = san && *san;
    if (serialized) printf("test_race: under compute-sanitizer: the control reader is not judged\n");
    for (int graph = 0; graph < 2; graph++) {
        int w = race_trials(ctx, k[0], k[1], graph);
        CHECK(w == 0, "%s: the waiting reader saw stale data in %d of %d trials", graph ? "graph" : "eager", w, RACE_TRIALS);
        int r = race_trials(ctx, k[0], k[2], graph);
        if (!serialized)
            CHECK(r > 0, "%s: the reader without the wait never raced in %d trials (is the launch programmatic?)",
                  graph ? "graph" : "eager", RACE_TRIALS);
    }
    gcr_ctx_destroy(ctx);
}

static void test_bit_identical(void) { kc_all_models(pdl_ctx); }

int main(void)
{
    h_seed(20261126);
    RUN(test_flags);
    RUN(test_race);
    RUN(test_bit_identical);
    return h_finish();
}
