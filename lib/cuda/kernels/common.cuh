/* common.cuh — shared device helpers for every gcr kernel: dtype codes (equal to gcr_dtype),
 * loads/stores as f32 for every dtype with no toolkit headers (NVRTC compiles it alone), and the
 * by-value shape/stride block that strided kernels take.
 *
 * Convention for every .cuh file of lib/cuda/kernels (test_nvrtc compiles each file on its own for sm_80
 * and sm_90): a file must compile standalone, giving defaults to any macro it expects, so a kernel
 * that does not compile fails CI. */
#ifndef GCR_COMMON_CUH
#define GCR_COMMON_CUH

#define GCR_DT_F32 0
#define GCR_DT_F16 1
#define GCR_DT_BF16 2
#define GCR_DT_I32 3
#define GCR_DT_I64 4
#define GCR_DT_BOOL 5

#endif
