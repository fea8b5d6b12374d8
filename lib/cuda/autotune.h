/* autotune.h — choice by measurement (GCR_AUTOTUNE): among the legal ways ("tactics") to run one
 * problem, the one that measured fastest on the real shape, as TensorRT's tactics and Inductor's
 * max-autotune pick. The caller lists the tactics and runs them through a callback; this file
 * knows no kernel, only how to time, remember and store a choice. */
#ifndef GCR_CUDA_AUTOTUNE_H
#define GCR_CUDA_AUTOTUNE_H

#include "cuda_internal.h"

/* At most this many tactics per problem: bounds the measuring cost of a cold start. */
#define GCR_CUDA_TUNE_MAX 16

/* One way to run a problem: a kernel name, its launch shape (with its dynamic shared memory) and
 * its split of the reduction (ks blocks per output tile; 1: none). The names, shapes and splits of
 * the list are part of the cache key, so a changed candidate list measures again. */
typedef struct gcr_cuda_tactic {
    char name[48];
    unsigned gx, gy, gz, threads, ks, smem;
} gcr_cuda_tactic;

/* Runs tactic t once on the ctx's stream on scratch buffers x, w, out (device memory, at least the
 * byte sizes given to gcr_cuda_tune_pick, 256-byte aligned, contents arbitrary but finite). Any
 * status but GCR_OK makes the tactic ineligible for this problem. It runs under the process's
 * measuring lock (one problem is timed at a time, so contexts on other threads do not skew the
 * times); a gcr_cuda_tune_pick it calls on the same ctx answers its default at once, measuring
 * and keeping nothing. Its first run on a problem is not timed (a compile may happen there). */
typedef gcr_status (*gcr_cuda_tune_run)(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w,
                                        void *out);

/* The index of the tactic to use among t[0..n) for the problem described by key (klen bytes, e.g.
 * a gcr_dense_args block plus dtype and TF32 flag, with no pointers in it). With knobs.autotune 0
 * (heuristics only) always def, whatever the caches hold, so GCR_AUTOTUNE=0 gives the heuristic
 * choice to compare with. With knobs.autotune 1:
 *  1. the choice kept in the ctx's memory, else
 *  2. the choice stored under knobs.cache_dir (the kernel cache's files, keyed also by the device's
 *     name and arch, the driver and runtime versions, the hash of gcr's kernel sources and the
 *     tactic list), else
 *  3. when the ctx's stream is not capturing, measured: each tactic run once untimed (its compile
 *     is no part of its time), then timed with CUDA events (median of up to 5 runs queued back to
 *     back, fewer when a tactic is slow, and one once the problem has taken a second of wall time,
 *     so a problem costs about 50 ms of GPU time at most beyond two runs of each tactic); the fastest
 *     (def when it is within 3% of it, so noise does not flip choices) is kept in both caches, else
 *  4. def (nothing is stored: a later call with autotune on still measures).
 * Never fails the caller: a tactic whose run fails is skipped and its error cleared (the ctx's
 * status and message are as before the call); no scratch memory, no eligible tactic or any CUDA
 * failure while measuring means def. n must be in 1..GCR_CUDA_TUNE_MAX (else def, or 0 for n<=0)
 * and def in 0..n-1. Buffers are the ctx's allocator's (returned to its cache after measuring). */
int gcr_cuda_tune_pick(gcr_ctx *ctx, const void *key, size_t klen, const gcr_cuda_tactic *t, int n, int def,
                       size_t xbytes, size_t wbytes, size_t obytes, gcr_cuda_tune_run run, void *arg);

/* Counters of a ctx since its creation (tests, and the cold-start cost of measuring). */
typedef struct gcr_cuda_tune_stats {
    int measured;     /* problems measured */
    int mem_hits;     /* choices found in the ctx's memory */
    int disk_hits;    /* choices loaded from cache_dir */
    int defaults;     /* calls answered with def (autotune off, capturing, or measuring impossible) */
    int failed;       /* tactic runs that failed while measuring (skipped) */
    double seconds;   /* wall time spent measuring, synchronisations included */
} gcr_cuda_tune_stats;
void gcr_cuda_tune_get_stats(gcr_ctx *ctx, gcr_cuda_tune_stats *out);

/* Frees the ctx's choices (backend fini). */
void gcr_cuda_tune_fini(gcr_ctx *ctx);

#endif
