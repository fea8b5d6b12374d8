/* tune_util.h — shared by the tests of choice by measurement (test_cuda_autotune,
 * test_cuda_convconv): contexts on one cache folder with GCR_AUTOTUNE set, and their counters. */
#ifndef GCR_TEST_TUNE_UTIL_H
#define GCR_TEST_TUNE_UTIL_H

#include "harness.h"
#include "cuda/autotune.h"

/* a ctx on dev with knobs.cache_dir = dir (borrowed: it must outlive the ctx) and knobs.autotune,
 * other knobs at their defaults; NULL when it cannot be made */
static __attribute__((unused)) gcr_ctx *tu_ctx(gcr_device dev, const char *dir, int autotune)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = dev;
    o.knobs.cache_dir = dir;
    o.knobs.autotune = autotune;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return NULL;
    return ctx;
}

static __attribute__((unused)) gcr_cuda_tune_stats tu_stats(gcr_ctx *ctx)
{
    gcr_cuda_tune_stats s;
    gcr_cuda_tune_get_stats(ctx, &s);
    return s;
}

#endif
