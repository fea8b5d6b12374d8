/* collapse.h — layout arithmetic of the CUDA kernels' operands, shared by the eager launchers and
 * the code generator (which needs no CUDA toolkit: no CUDA header here). */
#ifndef GCR_CUDA_COLLAPSE_H
#define GCR_CUDA_COLLAPSE_H

#include "../internal.h"

/* Sorts dims into operand 0's memory order (outermost first), drops size-1 dims and merges
 * neighbours that are dense for every operand; rewrites shape/st in place and returns the new
 * rank (0 when every dim was 1). st[k]: strides of operand k, in elements; nops is at most
 * GCR_CUDA_KERNEL_PARAMS (the eager kernels and the generated ones). */
int gcr_cuda_collapse(int nd, int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS]);
/* 1 when every operand's span (sum of (shape-1)*|stride|) is below 2^31 elements. */
int gcr_cuda_fits32(int nd, const int64_t *shape, int nops, int64_t st[][GCR_MAX_DIMS]);

#endif
