/* prefetch.c — a graph build's programs compiled in parallel: the ones neither in the memory
 * cache nor on disk go to a pool of threads, one NVRTC compile per program (NVRTC is thread-safe
 * across programs); loading and caching the modules stay on the calling thread. */
#include "program.h"
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct job {
    const char *source;
    int arch;
    void *img;
    size_t size;
    int ptx;
    char *log;
    gcr_status s;
} job_t;

typedef struct pool {
    job_t *jobs;
    int n;
    int next; /* guarded by mu */
    pthread_mutex_t mu;
} pool_t;

static void *compile_worker(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        job_t *j = &p->jobs[i];
        /* nothing here touches the ctx */
        j->s = gcr_nvrtc_compile(j->source, NULL, 0, j->arch, &j->img, &j->size, &j->ptx, &j->log);
    }
}

/* Threads for m jobs: one per CPU, at most 32 and at most m. */
static int pool_threads(int m)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = (int)(cpus < 1 ? 1 : cpus > 32 ? 32 : cpus);
    return nt > m ? m : nt;
}

/* Runs jobs[0..m) on nt threads, this one included. */
static void run_jobs(job_t *jobs, int m, int nt)
{
    pool_t p = {jobs, m, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[32];
    int started = 0;
    for (int t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, compile_worker, &p) == 0) started++;
    compile_worker(&p); /* this thread works too, so a failed pthread_create only slows it */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
}

gcr_status gcr_cuda_programs_prefetch(gcr_ctx *ctx, const char *const *sources, int n)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    GCR_CHECK(ctx, st && (n == 0 || sources), GCR_ERR_INVALID, "cuda prefetch: invalid arguments");
    gcr_cuda_prog **todo = calloc((size_t)n + 1, sizeof *todo);
    job_t *jobs = calloc((size_t)n + 1, sizeof *jobs);
    if (!todo || !jobs) {
        free(todo);
        free(jobs);
        return gcr_set_error(ctx, GCR_ERR_OOM, "cuda prefetch: out of host memory");
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        uint64_t key = gcr_cuda_text_key(sources[i]);
        st->cache.hashes++;
        gcr_cuda_prog *e = gcr_cuda_prog_find(st, key, sources[i]);
        for (int t = 0; !e && t < m; t++) /* the same source twice in one batch */
            if (todo[t]->key == key && !strcmp(todo[t]->text, sources[i])) e = todo[t];
        if (e || !(e = gcr_cuda_prog_new(key, sources[i]))) continue;
        if (gcr_cuda_prog_from_disk(ctx, st, e)) {
            gcr_cuda_prog_add(st, e); /* best effort, like a failed compile */
            continue;
        }
        jobs[m] = (job_t){.source = e->text, .arch = st->arch};
        todo[m++] = e;
    }
    if (m > 0) {
        int nt = pool_threads(m);
        gcr_progress(ctx, "compiling %d kernel program%s for sm_%d on %d thread%s ...", m, m > 1 ? "s" : "", st->arch,
                     nt, nt > 1 ? "s" : "");
        double t0 = gcr_cuda_now_s();
        run_jobs(jobs, m, nt);
        int ok = 0;
        for (int i = 0; i < m; i++) {
            gcr_cuda_prog *e = todo[i];
            /* a failure is left for gcr_cuda_program, which compiles it again and reports the log */
            if (jobs[i].s == GCR_OK && gcr_cuda_prog_from_image(ctx, st, e, jobs[i].img, jobs[i].size) == CUDA_SUCCESS)
                ok += gcr_cuda_prog_add(st, e) == GCR_OK;
            else
                gcr_cuda_prog_free(st, e);
            free(jobs[i].img);
            free(jobs[i].log);
        }
        gcr_progress(ctx, "compiled %d of %d kernel programs in %.2f s", ok, m, gcr_cuda_now_s() - t0);
    }
    free(todo);
    free(jobs);
    return GCR_OK;
}
