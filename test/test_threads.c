/* test_threads.c — contexts used from several threads at once (gcr.h: one ctx is used from one
 * thread at a time; different contexts may run concurrently). Each thread makes its own context
 * and, for every model of fused_models.h in f32 and f16, captures it, replays it on fresh data
 * against eager (cu_check), runs it as a region body against eager, and generates the CUDA text
 * of every fused kernel, which must equal the text one thread alone generates afterwards. CPU
 * contexts always; CUDA contexts as well where a GPU is present. Nothing runs before the threads
 * start, so lazily initialised state is first touched by several threads at once. Built with
 * TSAN=1 this is the ThreadSanitizer check of the state threads share: the code generator, lazily
 * detected CPU features, the CUDA driver table and the kernel caches. */
#include "fused_models.h"
#include "../lib/cuda/codegen.h"
#include "../replay/graph.h"
#include <pthread.h>

#define N_THREADS 4
#define ROUNDS 2
#define N_DT 2

static const gcr_dtype dts[N_DT] = {GCR_F32, GCR_F16};

static void append(char **out, size_t *len, const char *s)
{
    size_t n = strlen(s);
    char *p = realloc(*out, *len + n + 1);
    if (!p) return;
    memcpy(p + *len, s, n + 1);
    *out = p;
    *len += n;
}

/* the CUDA text of every fused kernel of g's current variant (a refusal as its reason); caller frees */
static char *kernel_text(gcr_graph *g)
{
    const gcr_ir *ir = g->cur->ir;
    char *out = calloc(1, 1);
    size_t len = 0;
    for (int k = 0; k < ir->n_kernels && out; k++) {
        if (ir->kernels[k].type != GCR_K_FUSED) continue;
        gcr_cg_kernel cg;
        memset(&cg, 0, sizeof cg);
        gcr_status s = gcr_codegen_kernel(ir, k, &cg);
        append(&out, &len, s == GCR_OK ? cg.src : cg.why);
        gcr_cg_kernel_free(&cg);
    }
    return out;
}

/* passes of model c as a region body, each on fresh data, against eager */
static void region_passes(gcr_ctx *ctx, int c, gcr_tensor **in, gcr_dtype dt)
{
    const fm_case *m = &fm_cases[c];
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < m->n_in; i++)
            if (!m->in[i].is_const && !m->in[i].permute) cu_refill(in[i], m->in[i].positive);
        gcr_tensor *out[CU_MAX] = {0}, *ref[CU_MAX] = {0};
        int n = 0;
        GCR_REGION(ctx, m->name) { n = m->fn(ctx, in, out); }
        if (!CHECK(gcr_ctx_status(ctx) == GCR_OK, "%s %s region pass %d: %s", m->name, gcr_dtype_name(dt), pass,
                   gcr_ctx_error(ctx)))
            return;
        uint64_t sc = gcr_scope_begin(ctx);
        m->fn(ctx, in, ref);
        for (int o = 0; o < n; o++) {
            float *a = h_read(out[o]), *b = h_read(ref[o]);
            char what[96];
            snprintf(what, sizeof what, "%s %s region pass %d output %d", m->name, gcr_dtype_name(dt), pass, o);
            CHECK_CLOSE(a, b, gcr_tensor_numel(ref[o]), cu_tol(dt), cu_tol(dt), what);
            free(a);
            free(b);
        }
        gcr_scope_end(ctx, sc);
    }
}

/* model c in dtype dt on ctx: capture, replays and a region against eager; returns its kernels'
 * CUDA text (caller frees), or NULL when the capture failed */
static char *run_case(gcr_ctx *ctx, int c, gcr_dtype dt)
{
    const fm_case *m = &fm_cases[c];
    gcr_tensor *in[CU_MAX];
    gcr_graph *g = cu_check(ctx, m->fn, m->in, m->n_in, dt, GCR_NCHW, 3, cu_tol(dt), in);
    char *txt = g && g->cur ? kernel_text(g) : NULL;
    CHECK(txt != NULL, "%s %s: no graph: %s", m->name, gcr_dtype_name(dt), gcr_ctx_error(ctx));
    gcr_graph_destroy(g);
    region_passes(ctx, c, in, dt);
    for (int i = 0; i < m->n_in; i++) gcr_tensor_free(in[i]);
    return txt;
}

typedef struct worker {
    int id;
    gcr_device dev;
    pthread_t th;
    char *text[FM_N_CASES][N_DT]; /* of its first round */
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    h_seed(1000 + (uint64_t)w->id); /* fresh data of its own on each thread */
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = w->dev;
    o.knobs.log = 0;
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "thread %d: no context", w->id)) return NULL;
    for (int r = 0; r < ROUNDS; r++)
        for (int c = 0; c < FM_N_CASES; c++)
            for (int d = 0; d < N_DT; d++) {
                char *txt = run_case(ctx, c, dts[d]);
                if (r == 0) {
                    w->text[c][d] = txt;
                    continue;
                }
                CHECK(txt && w->text[c][d] && !strcmp(txt, w->text[c][d]),
                      "thread %d round %d: %s %s: the generated CUDA text changed", w->id, r, fm_cases[c].name,
                      gcr_dtype_name(dts[d]));
                free(txt);
            }
    gcr_ctx_destroy(ctx);
    return NULL;
}

/* N_THREADS workers at once on device dev, then the same models on one context alone: every
 * thread's kernels must have the text made alone */
static void run_threads(gcr_device dev)
{
    static worker w[N_THREADS];
    memset(w, 0, sizeof w);
    int started = 0;
    for (int i = 0; i < N_THREADS; i++) {
        w[i].id = i;
        w[i].dev = dev;
        if (CHECK(pthread_create(&w[i].th, NULL, work, &w[i]) == 0, "pthread_create %d", i)) started++;
    }
    for (int i = 0; i < started; i++) pthread_join(w[i].th, NULL);
    gcr_ctx *ctx = h_ctx(dev);
    for (int c = 0; c < FM_N_CASES && ctx; c++)
        for (int d = 0; d < N_DT; d++) {
            char *alone = run_case(ctx, c, dts[d]);
            for (int i = 0; i < started; i++) {
                CHECK(alone && w[i].text[c][d] && !strcmp(alone, w[i].text[c][d]),
                      "thread %d: %s %s: the CUDA text differs from the one generated alone", i, fm_cases[c].name,
                      gcr_dtype_name(dts[d]));
                free(w[i].text[c][d]);
            }
            free(alone);
        }
    gcr_ctx_destroy(ctx);
}

/* Lazily initialised state first touched by several threads at once: they wait at a barrier, then
 * each converts f16 data in bulk (the CPU feature check behind it runs on first use). Runs first:
 * nothing before it may have converted anything. */
static pthread_barrier_t first_use;

static void *convert(void *arg)
{
    gcr_ctx *ctx = arg;
    int64_t shape[1] = {64};
    uint16_t h[64];
    for (int i = 0; i < 64; i++) h[i] = (uint16_t)(0x3c00 + 16 * i); /* 1.0, 1.0156, ... */
    pthread_barrier_wait(&first_use);
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F16, 1, shape, GCR_NCHW, h);
    gcr_tensor *y = gcr_relu(ctx, x); /* loads and stores its f16 rows in bulk */
    float *got = y ? h_read(y) : NULL;
    int ok = got != NULL;
    for (int i = 0; ok && i < 64; i++) ok = got[i] == 1.0f + (float)i / 64.0f;
    CHECK(ok, "f16 values through relu on a thread");
    free(got);
    gcr_tensor_free(x);
    gcr_tensor_free(y);
    return NULL;
}

static void test_first_use(void)
{
    gcr_ctx *ctx[N_THREADS] = {0};
    pthread_t th[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) ctx[i] = h_ctx(GCR_DEVICE_CPU);
    pthread_barrier_init(&first_use, NULL, N_THREADS);
    int started = 0;
    for (int i = 0; i < N_THREADS && ctx[i]; i++)
        if (CHECK(pthread_create(&th[i], NULL, convert, ctx[i]) == 0, "pthread_create %d", i)) started++;
    if (started < N_THREADS) return; /* the others would wait at the barrier for ever */
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&first_use);
    for (int i = 0; i < N_THREADS; i++) gcr_ctx_destroy(ctx[i]);
}

static void test_cpu_threads(void) { run_threads(GCR_DEVICE_CPU); }

/* where a GPU is present (the probe's skip is a failure under GCR_TEST_REQUIRE_CUDA) */
static void test_cuda_threads(void)
{
    gcr_ctx *probe = h_ctx(GCR_DEVICE_CUDA);
    if (!probe) return;
    gcr_ctx_destroy(probe);
    run_threads(GCR_DEVICE_CUDA);
}

int main(void)
{
    RUN(test_first_use);
    RUN(test_cpu_threads);
    RUN(test_cuda_threads);
    return h_finish();
}
