/* test_cuda_autotune.c — choice by measurement (lib/cuda/autotune.c) with fake tactics that clear
 * different amounts of the scratch output (cudaMemsetAsync of 3 to 64 MB): the fastest is picked
 * and kept; a second call hits memory; a fresh ctx on the same cache folder hits the disk and
 * measures nothing; another tactic list measures again; GCR_AUTOTUNE=0 returns the default and
 * measures nothing; a failing tactic is skipped and leaves the ctx's error state as it was; a
 * capturing stream measures nothing; a pick inside a measurement answers its default; a tactic's
 * compile is no part of its time. Skips where no GPU is present. */
#include "harness.h"
#ifdef GCR_HAVE_CUDA
#include "tune_util.h"
#include <dirent.h>
#include <pthread.h>
#include <unistd.h>

#define MB ((size_t)1 << 20)

/* what the fake tactics saw */
typedef struct fake {
    int runs;      /* callback invocations */
    int bad_bufs;  /* buffers missing or not 256-byte aligned */
    size_t obytes; /* the scratch output's size the pick was given */
    int compile_ms[65]; /* by t->gx: host time the tactic's first run spends, as a compile would */
} fake;

/* t->gx: megabytes to clear; t->gy = 1: the tactic fails as a refused launch would */
static gcr_status fake_run(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w, void *out)
{
    fake *f = arg;
    f->runs++;
    if (t->gx < 65 && f->compile_ms[t->gx] > 0) {
        usleep((useconds_t)f->compile_ms[t->gx] * 1000);
        f->compile_ms[t->gx] = 0;
    }
    if (!x || !w || !out || ((uintptr_t)x | (uintptr_t)w | (uintptr_t)out) % 256) f->bad_bufs++;
    if (t->gy == 1) {
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, (size_t)1 << 62); /* refused at once, and leaves a CUDA error behind */
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "fake tactic %s: %s", t->name, cudaGetErrorName(e));
    }
    size_t n = (size_t)t->gx * MB;
    if (n > f->obytes) n = f->obytes;
    cudaError_t e = cudaMemsetAsync(out, 0x41, n, gcr_cuda_stream(ctx));
    return e == cudaSuccess ? GCR_OK : gcr_cuda_error(ctx, e, "fake tactic");
}

static gcr_cuda_tactic tac(const char *name, unsigned mb, unsigned fails)
{
    gcr_cuda_tactic t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    t.gx = mb;
    t.gy = fails;
    t.gz = 1;
    t.threads = 256;
    return t;
}

/* a problem key as the dense engine would give it: a few sizes and flags, no pointers */
typedef struct pkey {
    int64_t M, N, K;
    int dtype, tf32;
} pkey;

static char dir[] = "/tmp/gcr_autotune_XXXXXX";

static gcr_ctx *tune_ctx(int autotune) { return tu_ctx(GCR_DEVICE_CUDA, dir, autotune); }

static int files_in(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int pick(gcr_ctx *ctx, const pkey *k, const gcr_cuda_tactic *t, int n, int def, fake *f)
{
    f->obytes = 64 * MB;
    return gcr_cuda_tune_pick(ctx, k, sizeof *k, t, n, def, 3 * MB, 1 * MB, f->obytes, fake_run, f);
}

/* contexts on several threads at once, one cache folder: each measures or reads the disk, and
 * every one picks the fastest */
typedef struct worker {
    gcr_ctx *ctx;
    int pick;
    fake f;
} worker;

static const gcr_cuda_tactic thread_list[3] = {{"clear40", 40, 0, 1, 256, 1, 0}, {"clear64", 64, 0, 1, 256, 1, 0}, {"clear6", 6, 0, 1, 256, 1, 0}};

static void *work(void *p)
{
    worker *w = p;
    pkey k = {4096, 4096, 77, 2, 0};
    w->pick = pick(w->ctx, &k, thread_list, 3, 1, &w->f);
    return NULL;
}

static void test_threads(void)
{
    enum { NT = 4 };
    worker w[NT];
    pthread_t th[NT];
    memset(w, 0, sizeof w);
    for (int i = 0; i < NT; i++)
        if (!CHECK((w[i].ctx = tune_ctx(1)), "CUDA context %d", i)) {
            while (i--) gcr_ctx_destroy(w[i].ctx);
            return;
        }
    for (int i = 0; i < NT; i++) CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0, "thread %d", i);
    int seen = 0;
    for (int i = 0; i < NT; i++) {
        pthread_join(th[i], NULL);
        gcr_cuda_tune_stats s = tu_stats(w[i].ctx);
        seen += s.measured + s.disk_hits;
        CHECK(w[i].pick == 2 && gcr_ctx_status(w[i].ctx) == GCR_OK, "thread %d picked %d: %s", i, w[i].pick,
              gcr_ctx_error(w[i].ctx));
        gcr_ctx_destroy(w[i].ctx);
    }
    CHECK(seen == NT, "%d of %d threads measured or read the disk", seen, NT);
}

/* a tactic that picks in turn, as a conv pair's 1x1 conv apart does: the inner pick answers its
 * default at once (before autotune.c knew, it waited forever on the lock of the measurement it
 * ran in), and measures nothing, so a later pick of the same problem measures it */
typedef struct nest {
    gcr_ctx *ctx;
    const gcr_cuda_tactic *inner;
    int answers, answer;
    fake f;
} nest;

static const pkey inner_key = {64, 64, 64, 1, 0};

static gcr_status nest_run(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w, void *out)
{
    nest *n = arg;
    n->answer = pick(n->ctx, &inner_key, n->inner, 3, 2, &n->f);
    n->answers++;
    return fake_run(ctx, &n->f, t, x, w, out);
}

static void test_nested(gcr_ctx *a)
{
    const gcr_cuda_tactic outer[2] = {tac("clear40", 40, 0), tac("clear5", 5, 0)};
    const gcr_cuda_tactic inner[3] = {tac("clear2", 2, 0), tac("clear50", 50, 0), tac("clear60", 60, 0)};
    const pkey k = {4096, 8, 8, 1, 0};
    nest n = {.ctx = a, .inner = inner, .answer = -1};
    gcr_cuda_tune_stats s0 = tu_stats(a);
    n.f.obytes = 64 * MB;
    int p = gcr_cuda_tune_pick(a, &k, sizeof k, outer, 2, 0, MB, MB, n.f.obytes, nest_run, &n);
    gcr_cuda_tune_stats s1 = tu_stats(a);
    CHECK(p == 1, "outer pick %d, want 1 (clear5)", p);
    CHECK(n.answers > 0 && n.answer == 2, "%d inner picks, the last answered %d: want the default 2", n.answers, n.answer);
    CHECK(s1.measured == s0.measured + 1 && s1.defaults - s0.defaults == n.answers, "measured %d, defaults %d for %d inner picks",
          s1.measured - s0.measured, s1.defaults - s0.defaults, n.answers);
    /* nothing was kept for the inner problem: asked alone, it is measured */
    fake f = {0};
    p = pick(a, &inner_key, inner, 3, 2, &f);
    CHECK(p == 0 && tu_stats(a).measured == s1.measured + 1, "inner alone: pick %d, measured %d", p, tu_stats(a).measured - s1.measured);
}

/* tactics whose first run compiles (host time before the launch): the first takes more than the
 * problem's wall-time allowance, so the second is timed late, once. Its compile must not count:
 * timed from a first run that included it, the fastest lost by 0.3 s */
static void test_compile_time(gcr_ctx *a)
{
    const gcr_cuda_tactic list[2] = {tac("clear40", 40, 0), tac("clear3", 3, 0)};
    const pkey k = {8192, 3, 3, 1, 0};
    fake f = {0};
    f.compile_ms[40] = 1100;
    f.compile_ms[3] = 300;
    int p = pick(a, &k, list, 2, 0, &f);
    CHECK(p == 1, "picked %d, want 1 (clear3, whose compile came late)", p);
}

static void test_autotune(void)
{
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    gcr_ctx *a = tune_ctx(1);
    if (!a) {
        h_skip_gpu("no CUDA device");
        return;
    }
    CHECK(gcr_ctx_knobs(a)->autotune == 1, "knobs.autotune is the API's 1");
    const gcr_cuda_tactic list[4] = {tac("clear48", 48, 0), tac("clear3", 3, 0), tac("clear64", 64, 0), tac("clear24", 24, 0)};
    pkey k1 = {1024, 512, 288, 1, 0};
    fake f = {0};

    /* measured: the 3 MB clear is the fastest, although the default is the first */
    int p = pick(a, &k1, list, 4, 0, &f);
    gcr_cuda_tune_stats s = tu_stats(a);
    CHECK(p == 1, "picked %d (%s), want 1 (clear3)", p, p >= 0 && p < 4 ? list[p].name : "?");
    CHECK(s.measured == 1 && s.mem_hits == 0 && s.disk_hits == 0, "measured %d mem %d disk %d", s.measured, s.mem_hits,
          s.disk_hits);
    CHECK(f.runs >= 8 && f.bad_bufs == 0, "%d runs, %d with bad scratch buffers", f.runs, f.bad_bufs);
    CHECK(s.seconds > 0 && s.seconds < 2.0, "measuring one problem took %.3f s", s.seconds);
    CHECK(gcr_ctx_status(a) == GCR_OK, "measuring left an error: %s", gcr_ctx_error(a));
    CHECK(files_in(dir) >= 1, "no choice stored in %s", dir);
    printf("one problem of 4 tactics measured in %.2f ms (%d runs)\n", 1e3 * s.seconds, f.runs);

    /* the same problem again: memory, no run */
    int runs = f.runs;
    p = pick(a, &k1, list, 4, 0, &f);
    s = tu_stats(a);
    CHECK(p == 1 && s.mem_hits == 1 && s.measured == 1 && f.runs == runs, "second call: pick %d, mem %d, measured %d, runs %d",
          p, s.mem_hits, s.measured, f.runs - runs);

    /* a fresh context on the same folder: the disk, no run */
    gcr_ctx *b = tune_ctx(1);
    if (CHECK(b, "a second CUDA context")) {
        p = pick(b, &k1, list, 4, 0, &f);
        s = tu_stats(b);
        CHECK(p == 1 && s.disk_hits == 1 && s.measured == 0 && f.runs == runs, "fresh ctx: pick %d, disk %d, measured %d, runs %d",
              p, s.disk_hits, s.measured, f.runs - runs);
        /* another candidate list for the same problem measures again: clear24 is now the fastest */
        const gcr_cuda_tactic list2[3] = {list[0], list[2], list[3]};
        p = pick(b, &k1, list2, 3, 0, &f);
        s = tu_stats(b);
        CHECK(p == 2 && s.measured == 1 && f.runs > runs, "new list: pick %d, measured %d", p, s.measured);
        /* another problem measures too */
        pkey k2 = k1;
        k2.tf32 = 1;
        runs = f.runs;
        p = pick(b, &k2, list, 4, 3, &f);
        s = tu_stats(b);
        CHECK(p == 1 && s.measured == 2 && f.runs > runs, "new problem: pick %d, measured %d", p, s.measured);
        gcr_ctx_destroy(b);
    }

    /* heuristics only: the default, nothing run, even where a measured choice is stored */
    gcr_ctx *c = tune_ctx(0);
    if (CHECK(c, "a third CUDA context")) {
        CHECK(gcr_ctx_knobs(c)->autotune == 0, "knobs.autotune is the API's 0");
        runs = f.runs;
        pkey k3 = k1;
        k3.M = 7;
        int p1 = pick(c, &k1, list, 4, 2, &f), p3 = pick(c, &k3, list, 4, 3, &f);
        s = tu_stats(c);
        CHECK(p1 == 2 && p3 == 3 && f.runs == runs && s.measured == 0 && s.disk_hits == 0 && s.defaults == 2,
              "autotune 0: picks %d %d, runs %d, measured %d, disk %d", p1, p3, f.runs - runs, s.measured, s.disk_hits);
        /* the knob switched on later measures */
        gcr_knobs kn = gcr_ctx_opts_default().knobs;
        kn.autotune = 1;
        CHECK_OK(c, gcr_ctx_set_knobs(c, &kn));
        p3 = pick(c, &k3, list, 4, 3, &f);
        CHECK(p3 == 1 && tu_stats(c).measured == 1, "autotune switched on: pick %d, measured %d", p3, tu_stats(c).measured);
        gcr_ctx_destroy(c);
    }

    /* a failing tactic (the would-be fastest) is skipped; the ctx's earlier error stays as it was */
    int64_t bad_shape[1] = {-3};
    CHECK(!gcr_tensor_new(a, GCR_F32, 1, bad_shape, GCR_NCHW), "a negative dim is refused");
    gcr_status before = gcr_ctx_status(a);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", gcr_ctx_error(a));
    CHECK(before != GCR_OK, "an error to keep");
    const gcr_cuda_tactic list3[4] = {tac("clear48", 48, 0), tac("fails", 3, 1), tac("clear64", 64, 0), tac("clear24", 24, 0)};
    pkey k4 = k1;
    k4.N = 9;
    int failed0 = tu_stats(a).failed;
    p = pick(a, &k4, list3, 4, 1, &f);
    s = tu_stats(a);
    CHECK(p == 3, "with a failing tactic: picked %d, want 3 (clear24)", p);
    CHECK(s.failed > failed0, "the failure is counted (%d)", s.failed);
    CHECK(gcr_ctx_status(a) == before && !strcmp(gcr_ctx_error(a), msg), "error state changed: %s / %s",
          gcr_status_name(gcr_ctx_status(a)), gcr_ctx_error(a));
    CHECK(cudaGetLastError() == cudaSuccess, "a CUDA error is left behind");
    gcr_ctx_clear_error(a);
    p = pick(a, &k4, list3, 4, 1, &f);
    CHECK(p == 3 && gcr_ctx_status(a) == GCR_OK, "again from memory: %d, %s", p, gcr_ctx_error(a));

    /* every tactic failing: the default, nothing kept (the next call tries again) */
    const gcr_cuda_tactic all_bad[2] = {tac("failsA", 3, 1), tac("failsB", 3, 1)};
    pkey k5 = k1;
    k5.K = 5;
    int measured0 = tu_stats(a).measured;
    p = pick(a, &k5, all_bad, 2, 1, &f);
    CHECK(p == 1 && tu_stats(a).measured == measured0 && gcr_ctx_status(a) == GCR_OK, "all failing: pick %d, %s", p,
          gcr_ctx_error(a));
    runs = f.runs;
    p = pick(a, &k5, all_bad, 2, 1, &f);
    CHECK(p == 1 && f.runs > runs, "all failing is not remembered");

    /* the stream capturing: the default, nothing run (and the capture is not broken) */
    cudaStream_t st = gcr_cuda_stream(a);
    if (CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed) == cudaSuccess, "begin capture")) {
        pkey k6 = k1;
        k6.M = 99;
        runs = f.runs;
        measured0 = tu_stats(a).measured;
        p = pick(a, &k6, list, 4, 2, &f);
        cudaGraph_t g = NULL;
        cudaError_t e = cudaStreamEndCapture(st, &g);
        CHECK(p == 2 && f.runs == runs && tu_stats(a).measured == measured0, "capturing: pick %d, runs %d", p, f.runs - runs);
        CHECK(e == cudaSuccess, "the capture was broken: %s", cudaGetErrorName(e));
        if (g) cudaGraphDestroy(g);
        /* a memory or disk choice is still used while capturing */
        CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed) == cudaSuccess, "begin capture");
        p = pick(a, &k1, list, 4, 0, &f);
        e = cudaStreamEndCapture(st, &g);
        CHECK(p == 1 && e == cudaSuccess, "capturing, cached: pick %d", p);
        if (g) cudaGraphDestroy(g);
    }
    test_nested(a);
    test_compile_time(a);
    CHECK(gcr_ctx_status(a) == GCR_OK, "%s", gcr_ctx_error(a));
    gcr_ctx_destroy(a);
    test_threads();
    h_rmtree(dir);
}
#endif

int main(void)
{
#ifdef GCR_HAVE_CUDA
    RUN(test_autotune);
#else
    h_case = "autotune";
    h_skip_gpu("built without CUDA");
#endif
    return h_finish();
}
