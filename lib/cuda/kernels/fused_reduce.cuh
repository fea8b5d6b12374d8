/* fused_reduce.cuh — helpers for the reductions capture/codegen_cuda.c generates with fused
 * pointwise producers (load) and consumers (store): the combine step of each reduction and a
 * block-wide reduction for the block-per-row kernels. The kernels themselves are generated, since
 * their shapes, strides and fused expressions are compile-time constants of one variant.
 * Compiles standalone (templates only). */
#ifndef GCR_FUSED_REDUCE_CUH
#define GCR_FUSED_REDUCE_CUH

#include "common.cuh"

template <int OP> __device__ __forceinline__ float gcr_fr_init() { return OP == GCR_FR_MAX ? -GCR_INF : 0.0f; }

/* max propagates NaN (as the CPU reference does); sum is a plain f32 sum */
template <int OP> __device__ __forceinline__ float gcr_fr_combine(float a, float b)
{
    if constexpr (OP == GCR_FR_MAX) return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
    else return a + b;
}

/* Reduces v over the block (blockDim.x == B, a multiple of 32, at most 1024); the result is valid
 * in thread 0. The shared buffer is reused by the next call only after the barrier at its start. */
template <int OP, int B> __device__ __forceinline__ float gcr_fr_block(float v)
{
    __shared__ float part[32];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = gcr_fr_combine<OP>(v, __shfl_down_sync(0xffffffffu, v, o));
    if constexpr (B > 32) {
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        __syncthreads(); /* the previous row's readers are done with part[] */
        if (lane == 0) part[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < B / 32 ? part[lane] : gcr_fr_init<OP>();
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) v = gcr_fr_combine<OP>(v, __shfl_down_sync(0xffffffffu, v, o));
        }
    }
    return v;
}

#endif /* GCR_FUSED_REDUCE_CUH */
