/* launch.c — a kernel launch on the ctx's stream: the driver's cuLaunchKernel on the function the
 * module cache fetched, with no device query and no allocation (a function that needs more than the
 * default 48 KB of dynamic shared memory is allowed it on its first such launch, which is not a
 * stream operation and so also works while a graph is captured).
 * With knobs.pdl on an sm_90+ device, a gcr kernel (its function's pdl flag: it waits for its
 * predecessor in gcr_grid_dep() before touching memory) goes through cuLaunchKernelEx with
 * programmatic stream serialization, so its launch and block scheduling overlap the previous
 * kernel's tail; in a captured graph that becomes a programmatic edge. */
#include "program.h"

CUfunction gcr_kernel_function(const gcr_cuda_fn *k) { return k->fn; }

/* whether this launch of k may overlap its predecessor */
static bool use_pdl(const gcr_ctx *ctx, const gcr_cuda_state *st, const gcr_cuda_fn *k)
{
    return k->pdl && ctx->knobs.pdl > 0 && st->arch >= 90 && st->drv->launch_kernel_ex;
}

gcr_status gcr_cuda_launch(gcr_ctx *ctx, gcr_cuda_fn *k, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned smem, void **args)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    st->last_fn = k->name; /* profiles name the function a fused kernel's launcher picked */
    if (smem > 48 * 1024 && k->smem_max < smem) { /* past the default: allowed once per function */
        CUresult r = st->drv->func_set_attribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (r != CUDA_SUCCESS)
            return gcr_set_error(ctx, GCR_ERR_DEVICE, "launch of %s: %u bytes of dynamic shared memory: %s", k->name, smem,
                                 gcr_cuda_drv_error(r));
        k->smem_max = smem;
    }
    CUresult r;
    if (use_pdl(ctx, st, k)) {
        CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
        attr.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig cfg = {.gridDimX = gx, .gridDimY = gy, .gridDimZ = gz, .blockDimX = bx, .blockDimY = by,
                              .blockDimZ = bz, .sharedMemBytes = smem, .hStream = (CUstream)st->stream,
                              .attrs = &attr, .numAttrs = 1};
        r = st->drv->launch_kernel_ex(&cfg, k->fn, args, NULL);
    } else {
        r = st->drv->launch_kernel(k->fn, gx, gy, gz, bx, by, bz, smem, (CUstream)st->stream, args, NULL);
    }
    if (r != CUDA_SUCCESS)
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "launch of %s (grid %ux%ux%u, block %ux%ux%u): %s", k->name, gx, gy,
                             gz, bx, by, bz, gcr_cuda_drv_error(r));
    return GCR_OK;
}
