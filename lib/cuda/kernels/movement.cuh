/* movement.cuh — strided copies by element size (any dtype of that size), used by contiguous,
 * concat (one copy per input into its slab of the result) and host staging. Dims arrive
 * collapsed and ordered by the destination's memory order, so writes are coalesced. */
#include "common.cuh"

/* mirrors struct gcr_copy_args in lib/cuda/movement.c */
struct gcr_copy_args {
    void *dst;
    const void *src;
    long long n;
    int nd;
    int fast; /* n < 2^31: magic dividers */
    long long shape[GCR_MAX_DIMS], dst_st[GCR_MAX_DIMS], src_st[GCR_MAX_DIMS];
    gcr_divs divs;
};

template <typename U> __device__ void gcr_copy_body(const gcr_copy_args &g)
{
    U *dst = (U *)g.dst;
    const U *src = (const U *)g.src;
    if (g.fast) {
        for (unsigned i = (unsigned)gcr_tid(); i < (unsigned)g.n; i += (unsigned)gcr_nthreads()) {
            long long od = 0, os = 0;
            unsigned rem = i;
            for (int d = g.nd - 1; d >= 0; d--) {
                unsigned q = gcr_div(rem, g.divs.magic[d], g.divs.shift[d]);
                long long x = rem - q * (unsigned)g.shape[d];
                rem = q;
                od += x * g.dst_st[d];
                os += x * g.src_st[d];
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

extern "C" __global__ void gcr_copy_1(gcr_copy_args g) { gcr_copy_body<unsigned char>(g); }
extern "C" __global__ void gcr_copy_2(gcr_copy_args g) { gcr_copy_body<unsigned short>(g); }
extern "C" __global__ void gcr_copy_4(gcr_copy_args g) { gcr_copy_body<unsigned>(g); }
extern "C" __global__ void gcr_copy_8(gcr_copy_args g) { gcr_copy_body<unsigned long long>(g); }
