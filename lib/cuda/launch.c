/* launch.c — a kernel launch on the ctx's stream: the driver's cuLaunchKernel on the function the
 * module cache fetched, with no device query and no allocation (a function that needs more than the
 * default 48 KB of dynamic shared memory is allowed it on its first such launch, which is not a
 * stream operation and so also works while a graph is captured). */
#include "program.h"

CUfunction gcr_kernel_function(const gcr_cuda_fn *k) { return k->fn; }

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
    CUresult r = st->drv->launch_kernel(k->fn, gx, gy, gz, bx, by, bz, smem, (CUstream)st->stream, args, NULL);
    if (r != CUDA_SUCCESS)
        return gcr_set_error(ctx, GCR_ERR_DEVICE, "launch of %s (grid %ux%ux%u, block %ux%ux%u): %s", k->name, gx, gy,
                             gz, bx, by, bz, gcr_cuda_drv_error(r));
    return GCR_OK;
}
