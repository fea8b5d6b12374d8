/* movement.cuh — strided copies by element size (any dtype of that size), used by contiguous,
 * concat (one copy per input into its slab of the result) and host staging. Dims arrive
 * collapsed and ordered by the destination's memory order, so writes are coalesced. The layout
 * changes NCHW <-> NHWC collapse to a batch of 2-d transposes and take gcr_transpose_*, which
 * stages 32x32 tiles in shared memory so that reads are coalesced too. */
#include "common.cuh"

template <typename U> __device__ void gcr_copy_body(const gcr_copy_args &g)
{
    U *dst = (U *)g.dst;
    const U *src = (const U *)g.src;
    if (g.fast) { /* as in gcr_pw_nd: fixed-bound unrolled dims, 32-bit offsets */
        for (unsigned i = (unsigned)gcr_tid(); i < (unsigned)g.n; i += (unsigned)gcr_nthreads()) {
            int od = 0, os = 0;
            unsigned rem = i;
#pragma unroll
            for (int d = GCR_MAX_DIMS - 1; d >= 0; d--) {
                if (d < g.nd) {
                    unsigned q = gcr_div(rem, g.divs.magic[d], g.divs.shift[d]);
                    int x = (int)(rem - q * (unsigned)g.shape[d]);
                    rem = q;
                    od += x * (int)g.dst_st[d];
                    os += x * (int)g.src_st[d];
                }
            }
            dst[od] = src[os];
        }
        return;
    }
    for (long long i = gcr_tid(); i < g.n; i += gcr_nthreads()) {
        long long od = 0, os = 0, rem = i;
        for (int d = g.nd - 1; d >= 0; d--) {
            long long q = rem / g.shape[d], x = rem - q * g.shape[d];
            rem = q;
            od += x * g.dst_st[d];
            os += x * g.src_st[d];
        }
        dst[od] = src[os];
    }
}

extern "C" __global__ void gcr_copy_1(gcr_copy_args g) { gcr_grid_dep(); gcr_copy_body<unsigned char>(g); }
extern "C" __global__ void gcr_copy_2(gcr_copy_args g) { gcr_grid_dep(); gcr_copy_body<unsigned short>(g); }
extern "C" __global__ void gcr_copy_4(gcr_copy_args g) { gcr_grid_dep(); gcr_copy_body<unsigned>(g); }
extern "C" __global__ void gcr_copy_8(gcr_copy_args g) { gcr_grid_dep(); gcr_copy_body<unsigned long long>(g); }

/* block (32, 8); grid (ceil(Q/32), ceil(P/32), A) */
template <typename U> __device__ void gcr_transpose_body(const gcr_transpose_args &g)
{
    __shared__ U tile[32][33]; /* +1: column reads hit 32 different banks */
    const U *src = (const U *)g.src + blockIdx.z * g.sa;
    U *dst = (U *)g.dst + blockIdx.z * g.da;
    long long p0 = (long long)blockIdx.y * 32, q0 = (long long)blockIdx.x * 32;
    int tx = threadIdx.x, ty = threadIdx.y;
    for (int j = ty; j < 32; j += 8) {
        long long p = p0 + tx, q = q0 + j;
        if (p < g.P && q < g.Q) tile[j][tx] = src[p + q * g.P];
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
        long long p = p0 + j, q = q0 + tx;
        if (p < g.P && q < g.Q) dst[p * g.Q + q] = tile[tx][j];
    }
}

extern "C" __global__ void gcr_transpose_1(gcr_transpose_args g) { gcr_grid_dep(); gcr_transpose_body<unsigned char>(g); }
extern "C" __global__ void gcr_transpose_2(gcr_transpose_args g) { gcr_grid_dep(); gcr_transpose_body<unsigned short>(g); }
extern "C" __global__ void gcr_transpose_4(gcr_transpose_args g) { gcr_grid_dep(); gcr_transpose_body<unsigned>(g); }
extern "C" __global__ void gcr_transpose_8(gcr_transpose_args g) { gcr_grid_dep(); gcr_transpose_body<unsigned long long>(g); }
