/* bench.h — what the benchmark programs share (each is one .c file, so this is header-only): a
 * context made with the knobs they vary, a monotonic clock, and (CUDA builds) a timer of the work
 * queued on a stream between two events. */
#ifndef GCR_BENCH_H
#define GCR_BENCH_H

#include "gcr.h"
#include <time.h>

/* A context on device with fusion on or off, CUDA Graphs on and no progress lines; NULL when
 * the device cannot be had. */
static inline gcr_ctx *bench_ctx(gcr_device device, int fusion)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = device;
    o.knobs.fusion = fusion;
    o.knobs.graphs = 1;
    o.knobs.log = 0;
    gcr_ctx *ctx = NULL;
    return gcr_ctx_create(&ctx, &o) == GCR_OK ? ctx : NULL;
}

/* Microseconds on the monotonic clock. */
static inline double bench_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

#if GCR_HAVE_CUDA
#include <cuda_runtime.h>

typedef struct bench_timer {
    cudaEvent_t e0, e1;
    cudaStream_t s;
} bench_timer;

/* Starts timing the work queued on stream s from now. */
static inline void bench_timer_start(bench_timer *t, cudaStream_t s)
{
    t->s = s;
    cudaEventCreate(&t->e0);
    cudaEventCreate(&t->e1);
    cudaEventRecord(t->e0, s);
}

/* Milliseconds the stream's work took since bench_timer_start (waits for it; frees the events). */
static inline double bench_timer_ms(bench_timer *t)
{
    float ms = 0;
    cudaEventRecord(t->e1, t->s);
    cudaEventSynchronize(t->e1);
    cudaEventElapsedTime(&ms, t->e0, t->e1);
    cudaEventDestroy(t->e0);
    cudaEventDestroy(t->e1);
    return ms;
}
#endif

#endif /* GCR_BENCH_H */
