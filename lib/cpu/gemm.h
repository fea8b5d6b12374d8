/* gemm.h — the CPU backend's blocked SGEMM (shared by conv and matmul/linear), its reusable
 * scratch buffers on the context, and the f32 staging helpers the kernels that call it share. */
#ifndef GCR_CPU_GEMM_H
#define GCR_CPU_GEMM_H

#include "cpu.h"

/* Scratch slots on ctx->cpu_scratch: each kernel family uses its own slots so that buffers in use
 * at the same time never alias. Contents are undefined on every get. */
enum {
    GCR_SCR_PACK_A, /* gemm: packed A block [MC x KC] */
    GCR_SCR_PACK_B, /* gemm: packed B block [KC x NC] */
    GCR_SCR_COL,    /* conv: im2col matrix / depthwise row accumulators */
    GCR_SCR_IN0,    /* f32 copies of non-f32 (or unusable) inputs */
    GCR_SCR_IN1,
    GCR_SCR_IN2,
    GCR_SCR_OUT,    /* f32 result before rounding into an f16/bf16 out */
    GCR_SCR_COUNT
};

/* A buffer of at least n floats (64-byte aligned) in slot, grown as needed and kept for the
 * next call; NULL with GCR_ERR_OOM recorded on ctx when allocation fails. */
float *gcr_cpu_scratch_get(gcr_ctx *ctx, int slot, size_t n);

/* C[M,N] = A[M,K] @ B[K,N] + brow[M] (per row) + bcol[N] (per column); either bias may be NULL.
 * Every operand has its own row and column strides in elements, so transposed and strided views
 * need no copy: the packing reads them. The biases are added in the store, not in a second pass. */
gcr_status gcr_sgemm(gcr_ctx *ctx, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t rsa, int64_t csa,
                     const float *B, int64_t rsb, int64_t csb,
                     float *C, int64_t rsc, int64_t csc, const float *brow, const float *bcol);

/* A tensor's values as f32 at element strides st (logical dims of t->m): t's own data when it
 * is already f32, else a copy in scratch slot (dense, NHWC order when t is channels-last). */
typedef struct gcr_f32v {
    const float *p;
    int64_t st[GCR_MAX_DIMS];
} gcr_f32v;
gcr_status gcr_cpu_f32_view(gcr_ctx *ctx, const gcr_tensor *t, int slot, gcr_f32v *v);

/* Copies t's logical contents, as f32, to dst at element strides dst_st (one per dim of t). */
void gcr_cpu_gather_f32(const gcr_tensor *t, float *dst, const int64_t *dst_st);

/* Where a kernel writes its f32 result: out's data when out is f32, else scratch slot OUT with
 * out's (dense) strides; gcr_cpu_out_finish rounds the latter into out. */
float *gcr_cpu_out_f32(gcr_ctx *ctx, gcr_tensor *out);
void gcr_cpu_out_finish(gcr_tensor *out, const float *f);

/* Output indices o in [*lo, *hi) whose input index o*s + off falls inside [0, n), clipped to
 * [0, out_n): the interior of a strided, padded window walk. */
static inline void gcr_cpu_valid_range(int64_t out_n, int64_t n, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = n - 1 - off < 0 ? 0 : (n - 1 - off) / s + 1;
    if (h > out_n) h = out_n;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* y[0..n) += a * x[0..n): written with vector extensions so it vectorises at -O2 (whose cost
 * model leaves plain loops with a remainder scalar). */
typedef float gcr_v8f __attribute__((vector_size(32), aligned(4), may_alias));
static inline void gcr_cpu_axpy(int64_t n, float a, const float *restrict x, float *restrict y)
{
    int64_t i = 0;
    gcr_v8f av = {a, a, a, a, a, a, a, a};
    for (; i + 8 <= n; i += 8) *(gcr_v8f *)(y + i) += av * *(const gcr_v8f *)(x + i);
    for (; i < n; i++) y[i] += a * x[i];
}

/* y[0..n) += w[0..n) * x[0..n) */
static inline void gcr_cpu_fma_vec(int64_t n, const float *restrict w, const float *restrict x, float *restrict y)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) *(gcr_v8f *)(y + i) += *(const gcr_v8f *)(w + i) * *(const gcr_v8f *)(x + i);
    for (; i < n; i++) y[i] += w[i] * x[i];
}

#endif
