/* cuda_internal.h — the CUDA backend's private interface, shared by lib/cuda/*.c and replay/:
 * per-context device state, the NVRTC module cache and kernel launch.
 * Driver API entry points come through cudaGetDriverEntryPoint, so the library links only
 * cudart, NVRTC and cuBLASLt and still loads on machines without a GPU driver. */
#ifndef GCR_CUDA_INTERNAL_H
#define GCR_CUDA_INTERNAL_H

#include "../internal.h"
#include <cuda_runtime.h>

/* A compiled kernel: one function of a loaded module (owned by the ctx's module cache). */
typedef struct gcr_kernel gcr_kernel;

/* Compiles (or finds in the memory / disk cache) a program and returns its kernels.
 * source: the full CUDA C text; it may #include any embedded file of lib/cuda/kernels by name
 * ("common.cuh"). names[i]: extern "C" kernel names to fetch. Compiles for the device's own
 * architecture; the cache key covers source, options, architecture and NVRTC version.
 * On failure returns GCR_ERR_COMPILE with the NVRTC log in the ctx message. */
gcr_status gcr_cuda_program(gcr_ctx *ctx, const char *source, const char *const *names, int n,
                            gcr_kernel **out);
/* Launches k on the ctx stream; args as for cuLaunchKernel. No device query, no allocation. */
gcr_status gcr_cuda_launch(gcr_ctx *ctx, gcr_kernel *k, unsigned gx, unsigned gy, unsigned gz,
                           unsigned bx, unsigned by, unsigned bz, unsigned smem, void **args);
/* The ctx's stream (for graph capture) and device facts. */
cudaStream_t gcr_cuda_stream(gcr_ctx *ctx);
int gcr_cuda_sm_count(gcr_ctx *ctx);
int gcr_cuda_arch(gcr_ctx *ctx); /* e.g. 90 */
/* Text of an embedded kernel source by file name, or NULL. */
const char *gcr_cuda_embedded(const char *name);

#endif
