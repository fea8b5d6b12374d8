/* autotune.c — choice by measurement (GCR_AUTOTUNE): the tactic of a problem that ran fastest on
 * the real shape, measured once and kept per ctx in memory and across processes in the kernel
 * cache's folder (diskcache.c), so a second process measures nothing. The caller's callback runs a
 * tactic; this file times, compares and remembers, and knows no kernel by name. */
#include "autotune.h"
#include "program.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define KEY_FORMAT "gcr-tune-3" /* 3: a tactic's first run (its compile) untimed; choices timed before are dropped */
#define REPS 5             /* timed runs per tactic (median), fewer when a tactic is slow */
#define BUDGET_MS 50.0     /* GPU time for the timed runs of one problem, all tactics together */
#define WALL_S 1.0         /* past this much wall time on one problem, the rest are timed once */
#define GATE_S 0.5         /* the longest the stream is held while the timed runs are queued */
#define KEEP_DEFAULT 0.03  /* the default stays unless another tactic is more than 3% faster: noise
                              must not flip a choice between processes */

/* One problem measured at a time in the process: contexts on other threads timing their tactics
 * on the same GPU at once would slow each other's runs down and store wrong choices for good. */
static pthread_mutex_t measuring = PTHREAD_MUTEX_INITIALIZER;

/* One problem's choice, found by its full key (format, device, versions, tactic list, problem). */
typedef struct choice {
    char *key;
    size_t klen;
    int pick;
    UT_hash_handle hh;
} choice;

/* Holds the stream (a host function that waits) while the timed runs are queued, so that they run
 * back to back on the GPU as a graph's nodes would, and not at the pace of their launch calls:
 * a kernel of a few microseconds would otherwise measure the launch overhead of every tactic alike
 * (on an H100, memsets of 64 KB to 4 MB timed 5.2-7.2 us in no order without the gate, 3.4-4.3 us
 * in size order with it, 2026-11-25). */
typedef struct gate {
    atomic_int open;
} gate;

struct gcr_cuda_tune {
    choice *choices;
    gcr_cuda_tune_stats stats;
    int driver, runtime;            /* cudaDriverGetVersion / cudaRuntimeGetVersion */
    cudaEvent_t ev[REPS + 3];       /* the sizing run's pair, then the timed runs' boundaries; made at first measure */
    int nev;
    gate gate;
    bool measuring; /* a tactic of this ctx is being timed: a pick inside it answers its default */
};

static struct gcr_cuda_tune *tune_state(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st) return NULL;
    if (!st->tune) {
        struct gcr_cuda_tune *T = calloc(1, sizeof *T);
        if (!T) return NULL;
        if (cudaDriverGetVersion(&T->driver) != cudaSuccess) T->driver = 0;
        if (cudaRuntimeGetVersion(&T->runtime) != cudaSuccess) T->runtime = 0;
        cudaGetLastError();
        st->tune = T;
    }
    return st->tune;
}

/* "format|device|arch|driver|runtime|kernel sources' hash|n|name gx gy gz threads ks smem;...|" then
 * the caller's key bytes, malloc'ed (NULL when out of memory). The sources' hash: a choice timed on
 * gcr's old kernel files is measured again on the new ones. */
static char *full_key(gcr_ctx *ctx, struct gcr_cuda_tune *T, const void *key, size_t klen, const gcr_cuda_tactic *t,
                      int n, size_t *len)
{
    char head[256 + GCR_CUDA_TUNE_MAX * 136];
    int hl = snprintf(head, sizeof head, "%s|%s|sm_%d|drv%d|rt%d|hdr%016llx|%d|", KEY_FORMAT, ctx->device_name,
                      gcr_cuda_arch(ctx), T->driver, T->runtime, (unsigned long long)gcr_cuda_embedded_hash(), n);
    for (int i = 0; i < n && hl < (int)sizeof head; i++)
        hl += snprintf(head + hl, sizeof head - (size_t)hl, "%.48s %u %u %u %u %u %u;", t[i].name, t[i].gx, t[i].gy,
                       t[i].gz, t[i].threads, t[i].ks, t[i].smem);
    if (hl >= (int)sizeof head) return NULL; /* cannot happen with names of at most 48 bytes */
    head[hl++] = '|';
    char *k = malloc((size_t)hl + klen);
    if (!k) return NULL;
    memcpy(k, head, (size_t)hl);
    if (klen) memcpy(k + hl, key, klen);
    *len = (size_t)hl + klen;
    return k;
}

/* Keeps the choice in memory; best effort (out of memory only means measuring again). Takes k. */
static void remember(struct gcr_cuda_tune *T, char *k, size_t klen, int pick)
{
    choice *c = calloc(1, sizeof *c);
    if (!c) {
        free(k);
        return;
    }
    c->key = k;
    c->klen = klen;
    c->pick = pick;
    HASH_ADD_KEYPTR(hh, T->choices, c->key, c->klen, c);
    if (GCR_HASH_ADD_FAILED(c)) {
        free(c->key);
        free(c);
    }
}

/* The disk record: "index name\n", then the measured median microseconds per tactic for a reader
 * (-1: failed). Loaded only when index and name agree with the caller's list. */
static int from_disk(gcr_ctx *ctx, const char *k, size_t klen, const gcr_cuda_tactic *t, int n)
{
    size_t size = 0;
    char *img = gcr_cuda_disk_load(ctx, k, klen, &size);
    if (!img) return -1;
    char line[96];
    size_t m = size < sizeof line - 1 ? size : sizeof line - 1;
    memcpy(line, img, m);
    line[m] = 0;
    free(img);
    int idx = -1;
    char name[49];
    if (sscanf(line, "%d %48s", &idx, name) != 2 || idx < 0 || idx >= n || strcmp(name, t[idx].name))
        return -1;
    return idx;
}

static void to_disk(gcr_ctx *ctx, const char *k, size_t klen, const gcr_cuda_tactic *t, int n, int pick, const double *us)
{
    char rec[96 + GCR_CUDA_TUNE_MAX * 24];
    int l = snprintf(rec, sizeof rec, "%d %s\nus", pick, t[pick].name);
    for (int i = 0; i < n && l < (int)sizeof rec; i++) l += snprintf(rec + l, sizeof rec - (size_t)l, " %.3f", us[i]);
    if (l < (int)sizeof rec) l += snprintf(rec + l, sizeof rec - (size_t)l, "\n");
    if (l >= (int)sizeof rec) l = (int)sizeof rec - 1;
    gcr_cuda_disk_store(ctx, k, klen, rec, (size_t)l);
}

static void CUDART_CB gate_wait(void *p)
{
    gate *g = p;
    double until = gcr_cuda_now_s() + GATE_S; /* a run that waits on the device itself must not hang */
    for (unsigned i = 0; !atomic_load_explicit(&g->open, memory_order_acquire); i++)
        if ((i & 1023) == 1023) {
            if (gcr_cuda_now_s() > until) break;
            sched_yield();
        }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The ctx's error state, put back after every tactic so a failed run leaves no trace. */
typedef struct saved_err {
    gcr_status status, capture_err;
    char err[sizeof ((gcr_ctx *)0)->err];
} saved_err;
static void err_save(gcr_ctx *ctx, saved_err *s)
{
    s->status = ctx->status;
    s->capture_err = ctx->capture_err;
    memcpy(s->err, ctx->err, sizeof s->err);
}
static void err_restore(gcr_ctx *ctx, const saved_err *s)
{
    ctx->status = s->status;
    ctx->capture_err = s->capture_err;
    memcpy(ctx->err, s->err, sizeof s->err);
}

/* One tactic: run once untimed (the first run may compile its kernel and load its module: host
 * time that a GPU event pair around it would count), once timed alone to size the rest, then up to
 * REPS runs (one when the problem is late) queued behind the gate and timed one by one; the median
 * in microseconds, or -1 when a run failed. */
static double time_tactic(gcr_ctx *ctx, struct gcr_cuda_tune *T, const gcr_cuda_tactic *t, gcr_cuda_tune_run run,
                          void *arg, void **buf, double budget_ms, int late)
{
    cudaStream_t s = gcr_cuda_stream(ctx);
    cudaEvent_t *ev = T->ev;
    if (run(ctx, arg, t, buf[0], buf[1], buf[2]) != GCR_OK) return -1;
    cudaEventRecord(ev[0], s);
    if (run(ctx, arg, t, buf[0], buf[1], buf[2]) != GCR_OK) return -1;
    cudaEventRecord(ev[1], s);
    float ms = 0;
    if (cudaEventSynchronize(ev[1]) != cudaSuccess || cudaEventElapsedTime(&ms, ev[0], ev[1]) != cudaSuccess) return -1;
    int reps = late ? 1 : REPS;
    if (ms * reps > budget_ms) reps = ms > 0 && budget_ms / ms >= 1 ? (int)(budget_ms / ms) : 1;
    atomic_store_explicit(&T->gate.open, 0, memory_order_relaxed);
    int held = cudaLaunchHostFunc(s, gate_wait, &T->gate) == cudaSuccess;
    int ok = 1, done = 0;
    cudaEventRecord(ev[2], s);
    for (; done < reps && ok; done++) {
        ok = run(ctx, arg, t, buf[0], buf[1], buf[2]) == GCR_OK;
        cudaEventRecord(ev[3 + done], s);
    }
    atomic_store_explicit(&T->gate.open, 1, memory_order_release);
    (void)held;
    if (cudaStreamSynchronize(s) != cudaSuccess || !ok) return -1;
    float t_ms[REPS];
    for (int r = 0; r < reps; r++)
        if (cudaEventElapsedTime(&t_ms[r], ev[2 + r], ev[3 + r]) != cudaSuccess) return -1;
    qsort(t_ms, (size_t)reps, sizeof *t_ms, cmp_float);
    return 1e3 * t_ms[reps / 2];
}

/* Measures every tactic; the fastest, or -1 when none could be measured. us[i]: medians (-1: failed). */
static int measure(gcr_ctx *ctx, struct gcr_cuda_tune *T, const gcr_cuda_tactic *t, int n, int def, const size_t *bytes,
                   gcr_cuda_tune_run run, void *arg, double *us)
{
    cudaStream_t s = gcr_cuda_stream(ctx);
    saved_err saved;
    err_save(ctx, &saved);
    /* the user's queued work is not part of the cost of measuring */
    if (cudaStreamSynchronize(s) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    double t0 = gcr_cuda_now_s();
    void *buf[3] = {NULL, NULL, NULL};
    int best = -1;
    while (T->nev < REPS + 3 && cudaEventCreate(&T->ev[T->nev]) == cudaSuccess) T->nev++;
    if (T->nev < REPS + 3) goto out;
    for (int i = 0; i < 3; i++) {
        ctx->status = GCR_OK;
        if (gcr_cuda_alloc_block(ctx, bytes[i] ? bytes[i] : 1, &buf[i]) != GCR_OK) goto out;
        /* finite and not zero in every float type: 0x3c3c is 1.06 in f16, 0.0115 in bf16 and f32 */
        if (cudaMemsetAsync(buf[i], 0x3c, bytes[i] ? bytes[i] : 1, s) != cudaSuccess) goto out;
    }
    for (int i = 0; i < n; i++) {
        ctx->status = GCR_OK; /* the run's own failure is seen even when the ctx had one before */
        ctx->err[0] = 0;
        int late = gcr_cuda_now_s() - t0 > WALL_S;
        us[i] = time_tactic(ctx, T, &t[i], run, arg, buf, BUDGET_MS / n, late);
        err_restore(ctx, &saved);
        cudaGetLastError(); /* a refused launch leaves no error behind for the next CUDA check */
        if (us[i] < 0) {
            T->stats.failed++;
            continue;
        }
        if (best < 0 || us[i] < us[best]) best = i;
    }
    if (best >= 0 && best != def && us[def] >= 0 && us[def] <= us[best] * (1 + KEEP_DEFAULT)) best = def;
out:
    cudaStreamSynchronize(s);
    for (int i = 0; i < 3; i++) gcr_cuda_free_block(ctx, buf[i], bytes[i]);
    cudaGetLastError();
    err_restore(ctx, &saved);
    T->stats.seconds += gcr_cuda_now_s() - t0;
    return best;
}

int gcr_cuda_tune_pick(gcr_ctx *ctx, const void *key, size_t klen, const gcr_cuda_tactic *t, int n, int def,
                       size_t xbytes, size_t wbytes, size_t obytes, gcr_cuda_tune_run run, void *arg)
{
    if (n <= 0) return 0;
    if (def < 0 || def >= n) def = 0;
    struct gcr_cuda_tune *T = ctx ? tune_state(ctx) : NULL;
    /* heuristics only: no choice made by measuring is used, whatever the caches hold */
    /* a tactic that itself picks (a pair's 1x1 conv run apart) times the default: a measurement
     * may not start inside another, whose lock it would wait on forever */
    if (!T || T->measuring || ctx->knobs.autotune != 1 || n == 1 || n > GCR_CUDA_TUNE_MAX || !t || !run ||
        (klen && !key)) {
        if (T) T->stats.defaults++;
        return def;
    }
    size_t fl = 0;
    char *k = full_key(ctx, T, key, klen, t, n, &fl);
    if (!k) {
        T->stats.defaults++;
        return def;
    }
    choice *c = NULL;
    HASH_FIND(hh, T->choices, k, fl, c);
    if (c) {
        free(k);
        T->stats.mem_hits++;
        return c->pick;
    }
    int pick = from_disk(ctx, k, fl, t, n);
    if (pick >= 0) {
        T->stats.disk_hits++;
        remember(T, k, fl, pick);
        return pick;
    }
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(gcr_cuda_stream(ctx), &cs) != cudaSuccess || cs != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        free(k);
        T->stats.defaults++;
        return def;
    }
    double us[GCR_CUDA_TUNE_MAX];
    size_t bytes[3] = {xbytes, wbytes, obytes};
    pthread_mutex_lock(&measuring);
    /* a context on another thread may have measured the same problem while this one waited */
    pick = from_disk(ctx, k, fl, t, n);
    if (pick >= 0) {
        pthread_mutex_unlock(&measuring);
        T->stats.disk_hits++;
        remember(T, k, fl, pick);
        return pick;
    }
    T->measuring = true;
    pick = measure(ctx, T, t, n, def, bytes, run, arg, us);
    T->measuring = false;
    if (pick >= 0) to_disk(ctx, k, fl, t, n, pick, us);
    pthread_mutex_unlock(&measuring);
    if (pick < 0) {
        free(k);
        T->stats.defaults++;
        return def;
    }
    T->stats.measured++;
    if (ctx->knobs.log >= 2) {
        char line[GCR_CUDA_TUNE_MAX * 72] = "";
        int l = 0;
        for (int i = 0; i < n && l < (int)sizeof line; i++)
            l += snprintf(line + l, sizeof line - (size_t)l, " %s%s %.1f", i == pick ? "*" : "", t[i].name, us[i]);
        gcr_info(ctx, "autotune: %d tactics (us, * picked, default %s):%s", n, t[def].name, line);
    }
    remember(T, k, fl, pick);
    return pick;
}

void gcr_cuda_tune_get_stats(gcr_ctx *ctx, gcr_cuda_tune_stats *out)
{
    gcr_cuda_state *st = ctx ? gcr_cuda_st(ctx) : NULL;
    if (st && st->tune) *out = st->tune->stats;
    else memset(out, 0, sizeof *out);
}

void gcr_cuda_tune_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    struct gcr_cuda_tune *T = st ? st->tune : NULL;
    if (!T) return;
    choice *c, *tmp;
    HASH_ITER(hh, T->choices, c, tmp) {
        HASH_DEL(T->choices, c);
        free(c->key);
        free(c);
    }
    for (int i = 0; i < T->nev; i++) cudaEventDestroy(T->ev[i]);
    free(T);
    st->tune = NULL;
}
