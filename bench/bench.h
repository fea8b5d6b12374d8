/* bench.h — what the benchmark programs share (each is one .c file, so this is header-only): a
 * context made with the knobs they vary, and a monotonic clock. */
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

#endif /* GCR_BENCH_H */
