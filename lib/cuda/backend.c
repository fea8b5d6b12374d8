/* backend.c — the CUDA backend: device and stream per context (chosen once at init, so the hot
 * path never calls cudaGetDevice/cudaSetDevice), memory through the caching allocator, copies on
 * the ctx stream, the per-kind kernel table and the check of calls against the kernels' limits. */
#include "cuda_ops.h"
#include "autotune.h"
#include "dense.h"
#include <stdio.h>
#include <stdlib.h>

static gcr_status cuda_init(gcr_ctx *ctx, int device_index)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return gcr_cuda_error(ctx, e, "cuda init: cudaGetDeviceCount");
    if (n == 0) return gcr_set_error(ctx, GCR_ERR_DEVICE, "cuda init: no CUDA device");
    if (device_index < 0 || device_index >= n)
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "cuda init: device %d requested, %d present", device_index, n);
    const gcr_cuda_drv *drv = gcr_cuda_driver(ctx);
    if (!drv) return ctx->status;
    GCR_TRY(gcr_cuda_error(ctx, cudaSetDevice(device_index), "cuda init: cudaSetDevice"));
    gcr_cuda_state *st = calloc(1, sizeof *st);
    if (!st) return gcr_set_error(ctx, GCR_ERR_OOM, "cuda init: out of host memory");
    int major = 0, minor = 0;
    struct cudaDeviceProp prop;
    e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_index);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_index);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&st->sm_count, cudaDevAttrMultiProcessorCount, device_index);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, device_index);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        free(st);
        return gcr_cuda_error(ctx, e, "cuda init");
    }
    st->device = device_index;
    st->arch = major * 10 + minor;
    st->drv = drv;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s", prop.name);
    ctx->be_state = st;
    return GCR_OK;
}

static void cuda_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    if (!st) return;
    cudaStreamSynchronize(st->stream); /* queued kernels may still read blocks we free below */
    gcr_cuda_pointwise_fini(ctx);
    gcr_cuda_programs_fini(ctx);
    gcr_cuda_tune_fini(ctx);
    gcr_cuda_scratch_fini(ctx);
    gcr_cuda_alloc_fini(ctx);
    cudaStreamDestroy(st->stream);
    cudaGetLastError();
    free(st);
    ctx->be_state = NULL;
}

static gcr_status cuda_alloc(gcr_ctx *ctx, size_t bytes, void **ptr) { return gcr_cuda_alloc_block(ctx, bytes, ptr); }
static void cuda_free(gcr_ctx *ctx, void *ptr, size_t bytes) { gcr_cuda_free_block(ctx, ptr, bytes); }

static gcr_status cuda_copy(gcr_ctx *ctx, void *dst, const void *src, size_t bytes, gcr_copy_kind k)
{
    cudaStream_t s = gcr_cuda_st(ctx)->stream;
    static const enum cudaMemcpyKind kinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
                                                cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost};
    GCR_TRY(gcr_cuda_error(ctx, cudaMemcpyAsync(dst, src, bytes, kinds[k], s), "cuda copy: cudaMemcpyAsync"));
    /* host memory is the caller's again as soon as we return: wait for host transfers, except from
     * and to our own pinned buffers (queued, and so capturable into a graph) */
    if (k == GCR_COPY_H2D || k == GCR_COPY_D2H)
        GCR_TRY(gcr_cuda_error(ctx, cudaStreamSynchronize(s), "cuda copy: cudaStreamSynchronize"));
    return GCR_OK;
}

static gcr_status cuda_host_alloc(gcr_ctx *ctx, size_t bytes, void **ptr)
{
    *ptr = NULL;
    cudaError_t e = cudaHostAlloc(ptr, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return gcr_set_error(ctx, GCR_ERR_OOM, "cuda: out of page-locked host memory for %zu bytes", bytes);
    }
    return gcr_cuda_error(ctx, e, "cuda: cudaHostAlloc");
}

static void cuda_host_free(gcr_ctx *ctx, void *ptr)
{
    if (ptr) cudaFreeHost(ptr);
}

static const gcr_run_fn cuda_kernels[GCR_KIND_COUNT] = {
#define K(E, name, infer, cpu, cuda, ...) [GCR_KIND_##E] = cuda,
#include "../kinds.def"
#undef K
};

static gcr_status cuda_run(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_run_kind(ctx, "cuda", cuda_kernels, c, out);
}

/* the kernels' limits per kind (kinds.def): n entries into l */
typedef int (*cuda_limits_fn)(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l);
static const cuda_limits_fn cuda_limits[GCR_KIND_COUNT] = {
#define K(E, name, infer, cpu, cuda, limits, ...) [GCR_KIND_##E] = limits,
#include "../kinds.def"
#undef K
};

const gcr_cuda_limit *gcr_cuda_limit_broken(const gcr_cuda_limit *l, int n)
{
    for (int i = 0; i < n; i++)
        if (l[i].value > l[i].max) return &l[i];
    return NULL;
}

char *gcr_cuda_limit_str(const gcr_cuda_limit *l, char *buf, size_t n)
{
    snprintf(buf, n, "%s is %lld, beyond the CUDA kernels' limit of %lld", l->what, (long long)l->value, (long long)l->max);
    return buf;
}

/* The one place a call meets the kernels' limits (each family lists its own, next to its launcher):
 * every mode, before anything runs or is recorded. Pointwise, reduction and movement kernels index
 * in 64 bits where 32 would not do, so they take every call gcr_infer accepts. */
static gcr_status cuda_check(const gcr_call *c, const gcr_meta *out, char *err, size_t errn)
{
    gcr_cuda_limit l[GCR_CUDA_MAX_LIMITS];
    cuda_limits_fn limits = cuda_limits[gcr_op_table[c->op].kind];
    if (!limits) return GCR_OK;
    const gcr_cuda_limit *bad = gcr_cuda_limit_broken(l, limits(c, out, l));
    if (!bad) return GCR_OK;
    char b0[96], b1[96], bo[96], lim[160];
    snprintf(err, errn, "%s: %s%s%s -> %s: %s", gcr_op_table[c->op].name, gcr_meta_str(&c->in[0]->m, b0, sizeof b0),
             c->n_in > 1 && c->in[1] ? ", " : "", c->n_in > 1 && c->in[1] ? gcr_meta_str(&c->in[1]->m, b1, sizeof b1) : "",
             gcr_meta_str(out, bo, sizeof bo), gcr_cuda_limit_str(bad, lim, sizeof lim));
    return GCR_ERR_UNSUPPORTED;
}

static gcr_status cuda_sync(gcr_ctx *ctx)
{
    return gcr_cuda_error(ctx, cudaStreamSynchronize(gcr_cuda_st(ctx)->stream), "cuda sync");
}

static const gcr_backend cuda_backend = {
    .name = "cuda", .device = GCR_DEVICE_CUDA, .init = cuda_init, .fini = cuda_fini,
    .alloc = cuda_alloc, .free = cuda_free, .copy = cuda_copy, .run = cuda_run, .sync = cuda_sync,
    .host_alloc = cuda_host_alloc, .host_free = cuda_host_free,
    .check = cuda_check, .operands = {GCR_CUDA_KERNEL_PARAMS, GCR_CUDA_HOOK_PARAMS},
    /* kernels/dwpw.cuh: depthwise -> 1x1 only, 16-bit tensor cores, 16-byte channel groups, one
     * column tile of 256; the faster pair by pair where measured (convconv.c) */
    .convconv = {GCR_CONVCONV_DW_PW, 1u << GCR_F16 | 1u << GCR_BF16, true, GCR_DWPW_C_ALIGN, GCR_DWPW_MAX_OUT,
                 gcr_cuda_convconv_faster},
    .executor = &gcr_cuda_executor,
};

const gcr_backend *gcr_cuda_backend_get(void) { return &cuda_backend; }

cudaStream_t gcr_cuda_stream(gcr_ctx *ctx) { return gcr_cuda_st(ctx)->stream; }
int gcr_cuda_sm_count(gcr_ctx *ctx) { return gcr_cuda_st(ctx)->sm_count; }
int gcr_cuda_arch(gcr_ctx *ctx) { return gcr_cuda_st(ctx)->arch; }
