/* backend.c — the CPU backend: host memory, copies, and the per-kind kernel table (its column of kinds.def). */
#include "cpu.h"
#include <stdio.h>
#include <stdlib.h>

static gcr_status cpu_init(gcr_ctx *ctx, int device_index)
{
    (void)device_index;
    snprintf(ctx->device_name, sizeof ctx->device_name, "cpu");
    return GCR_OK;
}

static void cpu_fini(gcr_ctx *ctx) { gcr_cpu_scratch_free(ctx); }

static gcr_status cpu_alloc(gcr_ctx *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    /* 64-byte aligned so vector loops and host-side SIMD stay aligned */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    *ptr = aligned_alloc(64, rounded ? rounded : 64);
    return *ptr ? GCR_OK : GCR_ERR_OOM;
}

static void cpu_free(gcr_ctx *ctx, void *ptr, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    free(ptr);
}

static gcr_status cpu_copy(gcr_ctx *ctx, void *dst, const void *src, size_t bytes, gcr_copy_kind k)
{
    (void)ctx;
    (void)k;
    memmove(dst, src, bytes);
    return GCR_OK;
}

static gcr_status cpu_host_alloc(gcr_ctx *ctx, size_t bytes, void **ptr) { return cpu_alloc(ctx, bytes, ptr); }
static void cpu_host_free(gcr_ctx *ctx, void *ptr) { free(ptr); }

static const gcr_run_fn cpu_kernels[GCR_KIND_COUNT] = {
#define K(E, name, infer, cpu, ...) [GCR_KIND_##E] = cpu,
#include "../kinds.def"
#undef K
};

static gcr_status cpu_run(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_run_kind(ctx, "cpu", cpu_kernels, c, out);
}

static gcr_status cpu_sync(gcr_ctx *ctx)
{
    (void)ctx;
    return GCR_OK;
}

const gcr_backend gcr_cpu_backend = {
    .name = "cpu", .device = GCR_DEVICE_CPU, .init = cpu_init, .fini = cpu_fini,
    .alloc = cpu_alloc, .free = cpu_free, .copy = cpu_copy, .run = cpu_run,
    .host_alloc = cpu_host_alloc, .host_free = cpu_host_free, .sync = cpu_sync,
    /* exec.c runs any pair of either form (the first conv into scratch, then the second through
     * the first's epilogue) */
    .convconv = {GCR_CONVCONV_DW_PW | GCR_CONVCONV_PW_DW, 1u << GCR_F32 | 1u << GCR_F16 | 1u << GCR_BF16, false, 1, 0, NULL},
    .executor = &gcr_cpu_executor,
};
