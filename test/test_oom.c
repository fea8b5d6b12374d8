/* test_oom.c — allocation-failure injection: every host allocation of a small capture + replay +
 * region scenario on the CPU backend fails once, in its own forked child. The child must end
 * normally (no exit from inside the library, no signal), every failing call must report a status
 * with a message (the first one GCR_ERR_OOM), every call that reports success must give the
 * values of a clean run, and nothing may leak: the child counts the blocks it still holds after
 * gcr_ctx_destroy, and under AddressSanitizer also asks LeakSanitizer. The scenario: weights from
 * a safetensors file, an eager model run, an explicit capture (dumps on, CUDA codegen of its
 * kernels), replay, re-specialisation by gcr_graph_bind_input, and three regions (re-traces on
 * shape changes, LRU eviction, retrace 0, recurrent state).
 *
 * The test links the static library with -Wl,--wrap for malloc, calloc, realloc, aligned_alloc,
 * strdup and free (Makefile), so the library's own calls come here. GCR_TEST_OOM_STRIDE=s tries
 * only every s-th allocation (for quick local runs; the default 1 tries them all);
 * GCR_TEST_OOM_AT=n tries only allocation n and prints the call stack that made it. */
#include "harness.h"
#include "../replay/graph.h"
#include "../lib/cuda/codegen.h"
#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    S_EAGER, S_CAPTURE, S_REPLAY, S_BIND, S_BIND_BACK, /* explicit graph */
    S_PASS0, S_NPASSES = 6,                           /* region passes S_PASS0 .. (retrace 1) */
    S_EAGER_PASS0 = S_PASS0 + S_NPASSES, S_NEAGER = 3, /* region passes with retrace 0 */
    S_STATE0 = S_EAGER_PASS0 + S_NEAGER, S_NSTATE = 3, /* a region fed its own output */
    S_COUNT = S_STATE0 + S_NSTATE,
    MAX_OUT = 16,
};

/* what one run of the scenario saw; lives in memory shared with the parent */
typedef struct outcome {
    long allocs;           /* allocations made while armed */
    int reached;           /* the allocation to fail was made */
    int ok[S_COUNT];       /* the step reported success */
    int n[S_COUNT];        /* output elements */
    float out[S_COUNT][MAX_OUT];
    int codegen_ok;        /* the CUDA code generator made every kernel and the program */
    uint64_t codegen_hash; /* of their texts */
    char why[1024];        /* first problem the child saw ("" when none) */
} outcome;

static outcome *clean, *res; /* the clean run's, and the current child's */

/* ---------------------------------------------------------------- allocation wrappers */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
char *__real_strdup(const char *s);
void __real_free(void *p);

static int armed;         /* count (and maybe fail) allocations only inside the scenario */
static long n_allocs;     /* allocations seen while armed */
static long fail_at;      /* the allocation that fails (1-based; 0: none) */
static int trace_failure; /* print the call stack of the failing allocation */

/* Blocks the scenario holds now, for the leak count (open addressing, linear probing). Entries
 * are stored scrambled, so that LeakSanitizer does not count this table as a reference. */
#define LIVE_SLOTS (1 << 16)
#define LIVE_KEY(p) ((uintptr_t)(p) ^ (uintptr_t)0xA5A5A5A5A5A5A5A5ull)
static uintptr_t live[LIVE_SLOTS];
static long n_live;

static size_t live_home(uintptr_t key)
{
    return (size_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (LIVE_SLOTS - 1);
}

static void live_add(void *p)
{
    if (!p || !armed || n_live >= LIVE_SLOTS / 2) return;
    uintptr_t key = LIVE_KEY(p);
    size_t i = live_home(key);
    while (live[i]) i = (i + 1) & (LIVE_SLOTS - 1);
    live[i] = key;
    n_live++;
}

static void live_remove(void *p)
{
    if (!p || !n_live) return;
    uintptr_t key = LIVE_KEY(p);
    size_t i = live_home(key);
    while (live[i] && live[i] != key) i = (i + 1) & (LIVE_SLOTS - 1);
    if (!live[i]) return; /* not the scenario's (allocated before arming) */
    live[i] = 0;
    n_live--;
    /* backward-shift deletion keeps every later entry of the probe run reachable */
    for (size_t j = (i + 1) & (LIVE_SLOTS - 1); live[j]; j = (j + 1) & (LIVE_SLOTS - 1)) {
        size_t home = live_home(live[j]);
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            live[i] = live[j];
            live[j] = 0;
            i = j;
        }
    }
}

/* true when this allocation is the one to fail */
static int fail_now(void)
{
    if (!armed || ++n_allocs != fail_at) return 0;
    res->reached = 1; /* before anything can crash */
    if (trace_failure) { /* addresses for addr2line -f -e BINARY */
        void *pc[32];
        backtrace_symbols_fd(pc, backtrace(pc, 32), 2);
    }
    return 1;
}

void *__wrap_malloc(size_t n)
{
    if (fail_now()) return NULL;
    void *p = __real_malloc(n);
    live_add(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t k)
{
    if (fail_now()) return NULL;
    void *p = __real_calloc(n, k);
    live_add(p);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now()) return NULL;
    void *q = __real_realloc(p, n);
    if (q || !n) live_remove(p);
    live_add(q);
    return q;
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
    if (fail_now()) return NULL;
    void *p = __real_aligned_alloc(a, n);
    live_add(p);
    return p;
}

char *__wrap_strdup(const char *s)
{
    if (fail_now()) return NULL;
    char *p = __real_strdup(s);
    live_add(p);
    return p;
}

void __wrap_free(void *p)
{
    live_remove(p);
    __real_free(p);
}

#if defined(__SANITIZE_ADDRESS__)
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));
#endif

/* ---------------------------------------------------------------- the scenario */

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
    if (res->why[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->why, sizeof res->why, fmt, ap);
    va_end(ap);
}

/* host data in static arrays, so that only the library allocates while armed */
#define XN (2 * 3 * 8 * 8)
#define XA_BYTES (sizeof(float) * 3 * 8 * 8)
static float host_x[4][XN];
static char weights_path[64] = "/tmp/gcr_test_oom_XXXXXX", dump_dir[64] = "/tmp/gcr_test_oom_dump_XXXXXX";

static const int64_t shape_a[4] = {1, 3, 8, 8}, shape_b[4] = {2, 3, 8, 8}, shape_c[4] = {1, 3, 6, 6};

typedef struct weights {
    gcr_tensor *conv, *bias, *mat;
} weights;

/* conv (+bias) -> hardswish (a pointwise chain for its epilogue) -> mean over H,W (a reduction,
 * marked as an output) -> matmul -> add scalar, sigmoid -> softmax: every kind of fusion */
static gcr_tensor *model(gcr_ctx *ctx, const weights *w, gcr_tensor *x)
{
    gcr_conv2d_params cp = gcr_conv2d_default();
    cp.padding[0] = cp.padding[1] = 1;
    gcr_tensor *h = gcr_hardswish(ctx, gcr_conv2d(ctx, x, w->conv, w->bias, &cp));
    int axes[2] = {2, 3};
    gcr_tensor *pooled = gcr_mean(ctx, h, axes, 2, 0);
    if (pooled) gcr_graph_output(ctx, pooled);
    gcr_tensor *y = gcr_matmul(ctx, pooled, w->mat);
    return gcr_softmax(ctx, gcr_sigmoid(ctx, gcr_add_scalar(ctx, y, 0.5f)), -1);
}

static int first_failure_seen;

static const char *step_name(int s)
{
    static const char *names[S_COUNT] = {
        "eager", "capture", "replay", "bind", "bind back",
        "forward pass 0", "forward pass 1", "forward pass 2", "forward pass 3", "forward pass 4", "forward pass 5",
        "fallback pass 0", "fallback pass 1", "fallback pass 2", "state pass 0", "state pass 1", "state pass 2",
    };
    return s >= 0 && s < S_COUNT ? names[s] : "set_knobs";
}

/* Step s (-1: a knob change, which gives no output) failed: the ctx must say why (GCR_ERR_OOM the first
 * time); the error is then cleared for the next step. */
static void failed(gcr_ctx *ctx, int s)
{
    gcr_status st = gcr_ctx_status(ctx);
    if (st == GCR_OK || !gcr_ctx_error(ctx)[0]) problem("%s failed with no status or message on the ctx", step_name(s));
    else if (!first_failure_seen && st != GCR_ERR_OOM)
        problem("%s: the first failure is %s, not GCR_ERR_OOM: %s", step_name(s), gcr_status_name(st), gcr_ctx_error(ctx));
    first_failure_seen = 1;
    gcr_ctx_clear_error(ctx);
}

/* Records step s: it succeeded when ok and y reads back; a failure must leave a status and a
 * message on ctx (GCR_ERR_OOM for the first one), which is then cleared for the next step. */
static void finish_step(gcr_ctx *ctx, int s, int ok, gcr_tensor *y)
{
    gcr_status st = gcr_ctx_status(ctx);
    if (ok && st != GCR_OK)
        problem("%s reported success but left %s on the ctx: %s", step_name(s), gcr_status_name(st), gcr_ctx_error(ctx));
    if (ok && st == GCR_OK) {
        int64_t n = gcr_tensor_numel(y);
        if (!y || n <= 0 || n > MAX_OUT) {
            problem("%s reported success without a readable output (%lld elements)", step_name(s), (long long)n);
            ok = 0;
        } else if (gcr_tensor_to_host(y, res->out[s], (size_t)n * sizeof(float)) != GCR_OK) {
            ok = 0; /* reading back failed: a failure like any other, checked below */
        } else {
            res->n[s] = (int)n;
        }
    }
    res->ok[s] = ok;
    if (!ok) failed(ctx, s);
}

/* sets the knobs dump (with dump_dir; NULL: the default) and retrace, the others as by default */
static void set_knobs(gcr_ctx *ctx, const char *dump, int retrace)
{
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    if (dump) {
        k.dump = dump;
        k.dump_dir = dump_dir;
    }
    k.retrace = retrace;
    if (gcr_ctx_set_knobs(ctx, &k) != GCR_OK) failed(ctx, -1);
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The CUDA code generator over the graph's fused kernels: it only writes text, so it runs here
 * without a GPU (as in test_codegen). A kernel either comes out or fails with GCR_ERR_OOM. */
static void codegen(gcr_graph *g)
{
    const gcr_ir *ir = g->cur ? g->cur->ir : NULL;
    gcr_cg_kernel cgs[32];
    if (!ir || ir->n_kernels > 32) {
        problem("codegen: no variant, or %d kernels", ir ? ir->n_kernels : -1);
        return;
    }
    memset(cgs, 0, sizeof cgs);
    uint64_t h = 1469598103934665603ull;
    int ok = 1;
    for (int k = 0; k < ir->n_kernels; k++) {
        if (ir->kernels[k].type != GCR_K_FUSED) continue;
        gcr_status st = gcr_codegen_kernel(ir, k, &cgs[k]);
        if (st != GCR_OK && st != GCR_ERR_OOM) problem("codegen of %s: %s (%s)", ir->kernels[k].name, gcr_status_name(st), cgs[k].why);
        ok = ok && st == GCR_OK;
        h = fnv(h, cgs[k].src);
    }
    char *prog = ok ? gcr_codegen_program(cgs, ir->n_kernels) : NULL;
    res->codegen_ok = prog != NULL;
    res->codegen_hash = fnv(h, prog);
    free(prog);
    for (int k = 0; k < ir->n_kernels; k++) gcr_cg_kernel_free(&cgs[k]);
}

/* capture with every dump on, replay on new data, bind another batch (re-specialise), bind back */
static void explicit_graph(gcr_ctx *ctx, const weights *w, gcr_tensor *xa, gcr_tensor *xb)
{
    gcr_graph *g = NULL;
    gcr_tensor *y = NULL;
    set_knobs(ctx, "trace,fused,source,plan", 1);
    int ok = gcr_capture_begin(ctx) == GCR_OK;
    if (ok) {
        y = model(ctx, w, xa);
        ok = gcr_capture_end(ctx, &g) == GCR_OK;
    }
    finish_step(ctx, S_CAPTURE, ok, y);
    set_knobs(ctx, "none", 1);
    if (!g) return;
    codegen(g);
    y = gcr_graph_get_output(g, gcr_graph_num_outputs(g) - 1);
    ok = gcr_tensor_from_host(xa, host_x[1], XA_BYTES) == GCR_OK && gcr_graph_replay(g) == GCR_OK;
    finish_step(ctx, S_REPLAY, ok, y);
    gcr_tensor *bind[2] = {xb, xa};
    for (int i = 0; i < 2; i++)
        finish_step(ctx, S_BIND + i, gcr_graph_bind_input(g, 0, bind[i]) == GCR_OK && gcr_graph_replay(g) == GCR_OK, y);
    gcr_graph_destroy(g);
}

/* Passes of region name over inputs xs[0..n) from step s0 on: new data into xa before each of
 * its passes, and each pass checked like any step. */
static void region_passes(gcr_ctx *ctx, const char *name, const weights *w, gcr_tensor *xa, gcr_tensor *const *xs,
                          int n, int s0)
{
    for (int p = 0; p < n; p++) {
        int ok = xs[p] != xa || gcr_tensor_from_host(xa, host_x[p % 4], XA_BYTES) == GCR_OK;
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, name) { y = model(ctx, w, xs[p]); }
        finish_step(ctx, s0 + p, ok && gcr_ctx_status(ctx) == GCR_OK, y);
    }
}

static void regions(gcr_ctx *ctx, const weights *w, gcr_tensor *xa, gcr_tensor *xb, gcr_tensor *xc)
{
    /* new data, a new shape (re-trace), a third shape in NHWC (a cache of two graphs: eviction),
     * the first shape again (re-trace after its eviction), then a plain replay */
    gcr_tensor *xs[S_NPASSES] = {xa, xa, xb, xc, xa, xa};
    region_passes(ctx, "forward", w, xa, xs, S_NPASSES, S_PASS0);
    /* retrace 0: a graph for the first shape, the op list run eagerly for another */
    set_knobs(ctx, NULL, 0);
    gcr_tensor *xe[S_NEAGER] = {xa, xb, xa};
    region_passes(ctx, "fallback", w, xa, xe, S_NEAGER, S_EAGER_PASS0);
}

/* recurrent state: each pass of region "state" reads the previous pass's output (a chain that
 * stops at the first failed pass, whose successors would start from other data) */
static void recurrent(gcr_ctx *ctx, gcr_tensor *h0)
{
    gcr_tensor *h = h0;
    for (int p = 0; p < S_NSTATE; p++) {
        gcr_tensor *y = NULL;
        GCR_REGION(ctx, "state") { y = gcr_tanh(ctx, gcr_add_scalar(ctx, gcr_mul_scalar(ctx, h, 1.5f), 0.25f)); }
        finish_step(ctx, S_STATE0 + p, gcr_ctx_status(ctx) == GCR_OK, y);
        if (!res->ok[S_STATE0 + p]) break;
        h = y;
    }
}

static void scenario(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.fusion = o.knobs.graphs = o.knobs.horizontal = o.knobs.guards = o.knobs.retrace = 1;
    o.knobs.single_node = o.knobs.log = o.knobs.tf32 = 0;
    o.knobs.graph_cache = 2;
    gcr_ctx *ctx = NULL;
    gcr_status cs = gcr_ctx_create(&ctx, &o);
    if (cs != GCR_OK) {
        if (cs != GCR_ERR_OOM || ctx) problem("ctx_create failed with %s (ctx %p)", gcr_status_name(cs), (void *)ctx);
        return;
    }
    const gcr_knobs *kn = gcr_ctx_knobs(ctx);
    if (!kn->dump_dir || !kn->cache_dir) problem("ctx_create succeeded without its dump_dir or cache_dir");
    gcr_weights *wf = NULL;
    weights w = {NULL, NULL, NULL};
    if (gcr_weights_load(ctx, weights_path, &wf) == GCR_OK)
        w = (weights){gcr_weights_get(wf, "conv"), gcr_weights_get(wf, "bias"), gcr_weights_get(wf, "mat")};
    gcr_tensor *xa = gcr_tensor_from_data(ctx, GCR_F32, 4, shape_a, GCR_NCHW, host_x[0]);
    gcr_tensor *xb = gcr_tensor_from_data(ctx, GCR_F32, 4, shape_b, GCR_NCHW, host_x[2]);
    gcr_tensor *xc = gcr_tensor_from_data(ctx, GCR_F32, 4, shape_c, GCR_NHWC, host_x[3]); /* strided copy in */
    gcr_tensor *h0 = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 5}, GCR_NCHW, host_x[1]);
    if (!w.conv || !w.bias || !w.mat || !xa || !xb || !xc || !h0) {
        if (gcr_ctx_status(ctx) != GCR_ERR_OOM)
            problem("loading weights or making a tensor failed with %s: %s", gcr_status_name(gcr_ctx_status(ctx)),
                    gcr_ctx_error(ctx));
    } else {
        uint64_t sc = gcr_scope_begin(ctx);
        gcr_tensor *y = model(ctx, &w, xa);
        finish_step(ctx, S_EAGER, y != NULL, y);
        gcr_scope_end(ctx, sc);
        explicit_graph(ctx, &w, xa, xb);
        regions(ctx, &w, xa, xb, xc);
        recurrent(ctx, h0);
    }
    gcr_weights_free(wf);
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- driver */

enum { CHILD_PROBLEM = 100 }; /* the child's exit code when it recorded a problem in `why` */

/* Runs the scenario failing allocation n (0: none) into *out; returns the exit code to use. */
static int run_child(long n, outcome *out)
{
    res = out;
    memset(out, 0, sizeof *out);
    fail_at = n;
    n_allocs = 0;
    armed = 1;
    scenario();
    armed = 0;
    out->allocs = n_allocs;
    out->reached |= n == 0;
    if (n_live) problem("%ld blocks still allocated after gcr_ctx_destroy", n_live);
#if defined(__SANITIZE_ADDRESS__)
    if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check())
        problem("LeakSanitizer found leaks (report above)");
#endif
    return out->why[0] ? CHILD_PROBLEM : 0;
}

/* the child's outputs match the clean run's wherever both succeeded */
static void compare_with_clean(outcome *o)
{
    if (o->codegen_ok && o->codegen_hash != clean->codegen_hash)
        snprintf(o->why, sizeof o->why, "codegen succeeded with other text than the clean run's");
    for (int s = 0; s < S_COUNT && !o->why[0]; s++) {
        if (!o->ok[s]) continue;
        if (o->n[s] != clean->n[s]) {
            snprintf(o->why, sizeof o->why, "%s succeeded with %d elements, the clean run has %d", step_name(s),
                     o->n[s], clean->n[s]);
            break;
        }
        for (int i = 0; i < o->n[s]; i++)
            if (!(fabsf(o->out[s][i] - clean->out[s][i]) <= 1e-5f + 1e-5f * fabsf(clean->out[s][i]))) {
                snprintf(o->why, sizeof o->why, "%s succeeded with a wrong result: element %d is %.7g, clean %.7g",
                         step_name(s), i, o->out[s][i], clean->out[s][i]);
                break;
            }
    }
}

/* Forks a child that fails allocation n; returns its wait status. */
static int fork_run(long n, outcome *o)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = run_child(n, o);
        if (!rc && n) {
            compare_with_clean(o);
            rc = o->why[0] ? CHILD_PROBLEM : 0;
        }
        _exit(rc);
    }
    int ws = 0;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid) return -1;
    return ws;
}

static void describe_exit(int ws, char *b, size_t n)
{
    if (ws == -1) snprintf(b, n, "fork/wait failed");
    else if (ws == 0) snprintf(b, n, "exited normally");
    else if (WIFSIGNALED(ws)) snprintf(b, n, "killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else if (WIFEXITED(ws) && WEXITSTATUS(ws) == CHILD_PROBLEM) snprintf(b, n, "the child found a problem");
    else snprintf(b, n, "exited with %d (inside the library, or a sanitizer's report above)", WEXITSTATUS(ws));
}

static void test_every_allocation(void)
{
    outcome *sh = mmap(NULL, 2 * sizeof(outcome), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(sh != MAP_FAILED, "mmap of the shared outcome")) return;
    clean = &sh[0];
    char b[128];
    int ws = fork_run(0, clean);
    describe_exit(ws, b, sizeof b);
    CHECK(ws == 0, "the clean run %s: %s", b, clean->why);
    for (int s = 0; s < S_COUNT; s++) CHECK(clean->ok[s], "the clean run's %s failed: %s", step_name(s), clean->why);
    CHECK(clean->codegen_ok, "the clean run's codegen failed");
    CHECK(clean->allocs > 100, "the scenario allocates (%ld allocations)", clean->allocs);
    const char *e = getenv("GCR_TEST_OOM_STRIDE"), *at = getenv("GCR_TEST_OOM_AT");
    long stride = e && atol(e) > 0 ? atol(e) : 1, first = at && atol(at) > 0 ? atol(at) : 1;
    long last = at && atol(at) > 0 ? first : clean->allocs;
    trace_failure = first == last;
    printf("failing each of %ld allocations in turn (from %ld to %ld, stride %ld)\n", clean->allocs, first, last, stride);
    for (long n = first; n <= last; n += stride) {
        ws = fork_run(n, &sh[1]);
        describe_exit(ws, b, sizeof b);
        CHECK(ws == 0 && sh[1].reached, "failing allocation %ld of %ld: %s%s%s", n, clean->allocs, b,
              sh[1].reached ? "; " : "; not reached (the run is not deterministic); ", sh[1].why);
    }
    munmap(sh, 2 * sizeof(outcome));
}

/* the environment must not change the scenario (GCR_DUMP, GCR_GRAPH_CACHE, ...) */
static void clear_gcr_env(void)
{
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "GCR_", 4) || !strncmp(*e, "GCR_TEST_OOM_", 13)) continue;
            char name[128];
            size_t k = strcspn(*e, "=");
            snprintf(name, sizeof name, "%.*s", (int)k, *e);
            unsetenv(name);
            again = 1;
            break;
        }
    }
}

/* The weights as a safetensors file (f32 conv [4,3,3,3], bias [4], mat [4,5]) at weights_path. */
static int write_weights(void)
{
    enum { N_CONV = 4 * 3 * 3 * 3, N_BIAS = 4, N_MAT = 4 * 5, B = (int)sizeof(float) };
    float data[N_CONV + N_BIAS + N_MAT];
    h_fill(data, N_CONV, -0.5f, 0.5f);
    h_fill(data + N_CONV, N_BIAS, -0.5f, 0.5f);
    h_fill(data + N_CONV + N_BIAS, N_MAT, -1, 1);
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr,
                     "{\"conv\":{\"dtype\":\"F32\",\"shape\":[4,3,3,3],\"data_offsets\":[0,%d]},"
                     "\"bias\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%d,%d]},"
                     "\"mat\":{\"dtype\":\"F32\",\"shape\":[4,5],\"data_offsets\":[%d,%d]}}",
                     N_CONV * B, N_CONV * B, (N_CONV + N_BIAS) * B, (N_CONV + N_BIAS) * B, (N_CONV + N_BIAS + N_MAT) * B);
    while (n % 8) hdr[n++] = ' ';
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    int fd = mkstemp(weights_path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    int ok = f && fwrite(len, 8, 1, f) == 1 && fwrite(hdr, (size_t)n, 1, f) == 1 && fwrite(data, sizeof data, 1, f) == 1;
    if (f) ok = fclose(f) == 0 && ok;
    return ok;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

int main(void)
{
    clear_gcr_env();
    h_seed(12);
    for (int i = 0; i < 4; i++) h_fill(host_x[i], XN, -2, 2);
    if (CHECK(write_weights() && mkdtemp(dump_dir), "writing %s and making %s", weights_path, dump_dir))
        RUN(test_every_allocation);
    unlink(weights_path);
    remove_dir(dump_dir);
    return h_finish();
}
