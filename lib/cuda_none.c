/* cuda_none.c — built instead of lib/cuda/ when the CUDA toolkit is absent: no CUDA backend. */
#include "internal.h"
const gcr_backend *gcr_cuda_backend_get(void) { return NULL; }
