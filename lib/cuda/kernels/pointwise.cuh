/* pointwise.cuh — eager pointwise kernels, one program per (formula, operand dtypes). The host
 * (lib/cuda/pointwise.c) defines before including:
 *   GCR_EXPR         the formula over float a..e, p0, p1 (gcr_op_table[op].expr)
 *   GCR_TO           out dtype; GCR_TA..GCR_TE input dtypes, GCR_DT_NONE for a non-tensor operand
 *   GCR_VAL_A..E     value a non-tensor operand reads (scalar operand `s`, missing input constant)
 *   GCR_VEC          elements per vector access in gcr_pw_vec (16 bytes of the widest operand)
 *   GCR_INT_CAST     1: integer-to-integer cast through int64 (a's bits, exact)
 * Kernels: gcr_pw_vec (flat, aligned, VEC elements per access), gcr_pw_flat (flat, one element
 * per access), gcr_pw_nd (N-d strided/broadcast, iterating in out's memory order). Flat kernels
 * take operands of stride 1 or 0 (bmask bit k: input k is one broadcast element). */
#include "common.cuh"

#ifndef GCR_EXPR
#define GCR_EXPR (a + b)
#endif
#ifndef GCR_TO
#define GCR_TO GCR_DT_F32
#endif
#ifndef GCR_TA
#define GCR_TA GCR_DT_F32
#endif
#ifndef GCR_TB
#define GCR_TB GCR_DT_F32
#endif
#ifndef GCR_TC
#define GCR_TC GCR_DT_NONE
#endif
#ifndef GCR_TD
#define GCR_TD GCR_DT_NONE
#endif
#ifndef GCR_TE
#define GCR_TE GCR_DT_NONE
#endif
#ifndef GCR_VAL_A
#define GCR_VAL_A 0.0f
#endif
#ifndef GCR_VAL_B
#define GCR_VAL_B 0.0f
#endif
#ifndef GCR_VAL_C
#define GCR_VAL_C 0.0f
#endif
#ifndef GCR_VAL_D
#define GCR_VAL_D 0.0f
#endif
#ifndef GCR_VAL_E
#define GCR_VAL_E 0.0f
#endif
#ifndef GCR_VEC
#define GCR_VEC 4
#endif
#ifndef GCR_INT_CAST
#define GCR_INT_CAST 0
#endif

__device__ __forceinline__ float gcr_pw_f(float a, float b, float c, float d, float e, float p0, float p1)
{
    return (float)(GCR_EXPR);
}

/* one element: out[oi] = f(a[ia], ..., e[ie]) */
__device__ __forceinline__ void gcr_pw_one(void *o, long long oi, const void *const *in, const long long *ii,
                                           float p0, float p1, float s)
{
#if GCR_INT_CAST
    gcr_st_i64<GCR_TO>(o, oi, gcr_ld_i64<GCR_TA>(in[0], ii[0]));
#else
    float a = gcr_ld<GCR_TA>(in[0], ii[0], GCR_VAL_A);
    float b = gcr_ld<GCR_TB>(in[1], ii[1], GCR_VAL_B);
    float c = gcr_ld<GCR_TC>(in[2], ii[2], GCR_VAL_C);
    float d = gcr_ld<GCR_TD>(in[3], ii[3], GCR_VAL_D);
    float e = gcr_ld<GCR_TE>(in[4], ii[4], GCR_VAL_E);
    gcr_st<GCR_TO>(o, oi, gcr_pw_f(a, b, c, d, e, p0, p1));
    (void)s;
#endif
}

extern "C" __global__ void gcr_pw_flat(gcr_pw_flat_args g)
{
    gcr_grid_dep();
    for (long long i = gcr_tid(); i < g.n; i += gcr_nthreads()) {
        long long ii[5];
#pragma unroll
        for (int k = 0; k < 5; k++) ii[k] = (g.bmask >> k) & 1 ? 0 : i;
        gcr_pw_one(g.out, i, g.in, ii, g.p0, g.p1, g.s);
    }
}

/* VEC consecutive elements of input k as f32: one aligned access, or the broadcast element */
template <int T> __device__ __forceinline__ void gcr_pw_ldv(const void *p, long long v, bool bc, float dflt, float *x)
{
    if constexpr (T < 0) {
#pragma unroll
        for (int j = 0; j < GCR_VEC; j++) x[j] = dflt;
    } else {
        typedef typename gcr_ty<T>::t U;
        if (bc) {
            float y = gcr_to_f32<T>(((const U *)p)[0]);
#pragma unroll
            for (int j = 0; j < GCR_VEC; j++) x[j] = y;
        } else {
            gcr_pack<U, GCR_VEC> pk = ((const gcr_pack<U, GCR_VEC> *)p)[v];
#pragma unroll
            for (int j = 0; j < GCR_VEC; j++) x[j] = gcr_to_f32<T>(pk.v[j]);
        }
    }
}

extern "C" __global__ void gcr_pw_vec(gcr_pw_flat_args g)
{
    gcr_grid_dep();
#if !GCR_INT_CAST
    typedef typename gcr_ty<GCR_TO>::t UO;
    long long nv = g.n / GCR_VEC;
    const float s = g.s; /* GCR_VAL_B may name it */
    (void)s;
    for (long long v = gcr_tid(); v < nv; v += gcr_nthreads()) {
        float a[GCR_VEC], b[GCR_VEC], c[GCR_VEC], d[GCR_VEC], e[GCR_VEC];
        gcr_pw_ldv<GCR_TA>(g.in[0], v, g.bmask & 1, GCR_VAL_A, a);
        gcr_pw_ldv<GCR_TB>(g.in[1], v, g.bmask & 2, GCR_VAL_B, b);
        gcr_pw_ldv<GCR_TC>(g.in[2], v, g.bmask & 4, GCR_VAL_C, c);
        gcr_pw_ldv<GCR_TD>(g.in[3], v, g.bmask & 8, GCR_VAL_D, d);
        gcr_pw_ldv<GCR_TE>(g.in[4], v, g.bmask & 16, GCR_VAL_E, e);
        float y[GCR_VEC];
#pragma unroll
        for (int j = 0; j < GCR_VEC; j++) y[j] = gcr_pw_f(a[j], b[j], c[j], d[j], e[j], g.p0, g.p1);
        gcr_pack<UO, GCR_VEC> r;
        gcr_from_f32_n<GCR_TO, GCR_VEC>(r.v, y);
        ((gcr_pack<UO, GCR_VEC> *)g.out)[v] = r;
    }
    /* the last n % VEC elements, one per thread */
    long long i = nv * GCR_VEC + gcr_tid();
    if (i < g.n) {
        long long ii[5];
#pragma unroll
        for (int k = 0; k < 5; k++) ii[k] = (g.bmask >> k) & 1 ? 0 : i;
        gcr_pw_one(g.out, i, g.in, ii, g.p0, g.p1, g.s);
    }
#endif
}

extern "C" __global__ void gcr_pw_nd(gcr_pw_nd_args g)
{
    gcr_grid_dep();
    if (g.fast) {
        /* dims unrolled to a fixed bound so every shape/stride/magic read is an immediate
         * constant-bank operand; 32-bit offsets (the host checked every operand's span) */
        for (unsigned i = (unsigned)gcr_tid(); i < (unsigned)g.n; i += (unsigned)gcr_nthreads()) {
            int off[6] = {0, 0, 0, 0, 0, 0};
            unsigned rem = i;
#pragma unroll
            for (int d = GCR_MAX_DIMS - 1; d >= 0; d--) {
                if (d < g.ndim) {
                    unsigned q = gcr_div(rem, g.divs.magic[d], g.divs.shift[d]);
                    int x = (int)(rem - q * (unsigned)g.shape[d]);
                    rem = q;
#pragma unroll
                    for (int k = 0; k < 6; k++) off[k] += x * (int)g.st[k][d];
                }
            }
            long long ii[5] = {off[1], off[2], off[3], off[4], off[5]};
            gcr_pw_one(g.out, off[0], g.in, ii, g.p0, g.p1, g.s);
        }
        return;
    }
    for (long long i = gcr_tid(); i < g.n; i += gcr_nthreads()) {
        long long off[6] = {0, 0, 0, 0, 0, 0}, rem = i;
        for (int d = g.ndim - 1; d >= 0; d--) {
            long long q = rem / g.shape[d], x = rem - q * g.shape[d];
            rem = q;
#pragma unroll
            for (int k = 0; k < 6; k++) off[k] += x * g.st[k][d];
        }
        gcr_pw_one(g.out, off[0], g.in, off + 1, g.p0, g.p1, g.s);
    }
}
