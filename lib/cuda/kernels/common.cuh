/* common.cuh — shared device helpers for every gcr kernel: storage types of the dtype codes
 * (abi.h), loads/stores through f32 (and int64 for exact integer casts) that round and
 * saturate exactly as the CPU backend does (lib/dtype.c), all without toolkit headers, so NVRTC
 * compiles these files with no include path.
 *
 * Convention for every .cuh file of lib/cuda/kernels (test_nvrtc compiles each file on its own
 * for sm_80 and sm_90 in CI): a file must compile standalone, giving defaults (#ifndef) to any
 * macro it expects, so a kernel that does not compile fails CI. Kernels are extern "C". */
#ifndef GCR_COMMON_CUH
#define GCR_COMMON_CUH

#include "abi.h"

#define GCR_INF __int_as_float(0x7f800000)

/* Programmatic dependent launch (sm_90+). The host may launch a gcr kernel before the previous
 * kernel of its stream has finished (lib/cuda/launch.c, GCR_PDL), so every gcr kernel calls this
 * first, before it reads or writes global memory: the wait returns once the previous grid has
 * completed and its writes are visible. Waiting first makes completion transitive (a grid that is
 * done has waited for its predecessor). No kernel triggers its successor early
 * (griddepcontrol.launch_dependents): the successor then launches as this grid's last blocks exit,
 * which already takes most of a boundary's cost off (bench/launch, H100: 1.22 -> 0.94 us per
 * kernel), while triggering at the top let the successor's blocks take SM slots this grid's blocks
 * were balanced for (MobileNet-v3 f16 b128 4% and ResNet-50 f16 b1 13% slower, 2026-11-26). A
 * module that includes this file says so with gcr_pdl_module, which the host looks up to know that
 * its kernels keep the rule (test/check_pdl.sh checks every gcr kernel source). On a plain launch
 * the wait returns at once; before sm_90 it does not exist. */
extern "C" __device__ int gcr_pdl_module = 1; /* not const: a constant could be folded away */
__device__ __forceinline__ void gcr_grid_dep()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Where splits of one reduction meet (split-K tiles, split global pools): each split has stored its
 * partial through L2 (__stcg) and counts itself in on counter sem[index]; the last of the `splits`
 * to arrive resets the counter (so the next kernel finds it 0) and returns true, to read every
 * split's partial in split order: the result does not depend on which block arrived last. The
 * fences order the partials before the count (release) and the partials' reads after it (acquire).
 * Called by every thread of the block; the result is the block's. */
__device__ __forceinline__ bool gcr_split_arrive(gcr_u32 *sem, long long index, int splits)
{
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned prev = atomicAdd(&sem[index], 1u);
        last = prev == (unsigned)splits - 1;
        if (last) sem[index] = 0;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    return true;
}

/* A block's per-channel sums over pixels [lo, hi) of one image, for the global-average kernels
 * (pool.cuh gcr_gap_cols_*, chain.cuh's pool step): the NT threads are P = NT / CG pixel lanes of
 * CG chunks of V channels (CG <= NT), so a block keeps its lanes busy however few channels it
 * has. Thread t sums chunk t % CG at pixels lo + t / CG, + P, ... (ld(chunk, pixel, f) gives the
 * chunk's V values at a pixel as f32), 4 loads in flight. The lanes' sums meet in part
 * [P][CG * V] (at least NT * V floats, 16-byte aligned) in two rounds, so that the threads left
 * over when there are few channels share the adding: S slices, slice s adding lanes s, s + S, ...
 * into lane s's row (only slice s reads that row), then the S rows in order; the result does not
 * depend on timing. done(c, sum) receives channel c < CG * V of the pass from thread c % NT; the
 * caller syncs the block before part is reused.
 * - CGC, where not 0, is CG known at compile time (cg is then ignored): the index math of a small
 *   block's few loads folds away (with CG at run time, a 7x7 image's pool ran 15% slower, H200).
 * - 4 loads, not 8: 8 took the chain kernel from 64 to 128 registers, leaving room for fewer
 *   clusters than a batch of 32 images (H200: the 7x7x672 squeeze-excite chain at batch 32, 22.8
 *   -> 32.0 us under ncu). */
template <int V, int NT, int CGC, class Ld, class Done>
__device__ __forceinline__ void gcr_chan_sums(int cg, int lo, int hi, float *part, Ld &ld, Done &done)
{
    const int CG = CGC ? CGC : cg, t = (int)threadIdx.x, P = NT / CG, ch = t % CG, pl = t / CG;
    if (pl < P) {
        float s[V];
#pragma unroll
        for (int j = 0; j < V; j++) s[j] = 0.0f;
#pragma unroll 4
        for (int i = lo + pl; i < hi; i += P) {
            float f[V];
            ld(ch, i, f);
#pragma unroll
            for (int j = 0; j < V; j++) s[j] += f[j];
        }
        if constexpr (V % 4 == 0) { /* 16-byte stores: scalar ones were V-way bank conflicts */
#pragma unroll
            for (int j = 0; j < V; j += 4)
                *(float4 *)&part[(pl * CG + ch) * V + j] = make_float4(s[j], s[j + 1], s[j + 2], s[j + 3]);
        } else {
#pragma unroll
            for (int j = 0; j < V; j++) part[(pl * CG + ch) * V + j] = s[j];
        }
    }
    __syncthreads();
    const int CV = CG * V, S = max(1, min(P, NT / CV));
    for (int i = t; i < S * CV; i += NT) {
        const int c = i % CV;
        float v = part[i];
        for (int q = i / CV + S; q < P; q += S) v += part[q * CV + c];
        if (S == 1) done(c, v);
        else part[i] = v;
    }
    if (S == 1) return;
    __syncthreads();
    for (int c = t; c < CV; c += NT) {
        float v = part[c];
        for (int q = 1; q < S; q++) v += part[q * CV + c];
        done(c, v);
    }
}

/* storage type of each dtype; f16/bf16 are raw bits */
template <int T> struct gcr_ty;
template <> struct gcr_ty<GCR_DT_F32> { typedef float t; };
template <> struct gcr_ty<GCR_DT_F16> { typedef unsigned short t; };
template <> struct gcr_ty<GCR_DT_BF16> { typedef unsigned short t; };
template <> struct gcr_ty<GCR_DT_I32> { typedef int t; };
template <> struct gcr_ty<GCR_DT_I64> { typedef long long t; };
template <> struct gcr_ty<GCR_DT_BOOL> { typedef unsigned char t; };

/* N elements moved as one aligned access (16 bytes for float4 / 8 halves) */
template <typename U, int N> struct __align__(sizeof(U) * N) gcr_pack { U v[N]; };

__device__ __forceinline__ float gcr_h2f(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned short gcr_f2h(float f)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float gcr_bf2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
__device__ __forceinline__ unsigned short gcr_f2bf(float f)
{
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40); /* quiet nan */
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest even */
    return (unsigned short)(u >> 16);
}

template <int T> __device__ __forceinline__ float gcr_to_f32(typename gcr_ty<T>::t v)
{
    if constexpr (T == GCR_DT_F32) return v;
    else if constexpr (T == GCR_DT_F16) return gcr_h2f(v);
    else if constexpr (T == GCR_DT_BF16) return gcr_bf2f(v);
    else if constexpr (T == GCR_DT_BOOL) return v ? 1.0f : 0.0f;
    else return (float)v;
}

/* float to int truncates toward zero; nan gives 0 and out-of-range saturates (as lib/dtype.c) */
template <int T> __device__ __forceinline__ typename gcr_ty<T>::t gcr_from_f32(float v)
{
    if constexpr (T == GCR_DT_F32) return v;
    else if constexpr (T == GCR_DT_F16) return gcr_f2h(v);
    else if constexpr (T == GCR_DT_BF16) return gcr_f2bf(v);
    else if constexpr (T == GCR_DT_BOOL) return v != 0.0f;
    else if constexpr (T == GCR_DT_I32)
        return v != v ? 0 : v >= 2147483647.0f ? 2147483647 : v <= -2147483648.0f ? (int)(-2147483647 - 1) : (int)v;
    else
        return v != v ? 0ll : v >= 9.2233720e18f ? 9223372036854775807ll
               : v <= -9.2233720e18f ? (long long)(-9223372036854775807ll - 1) : (long long)v;
}

/* element i of p as f32; dflt when the operand is not a tensor */
template <int T> __device__ __forceinline__ float gcr_ld(const void *p, long long i, float dflt)
{
    if constexpr (T < 0) return dflt;
    else return gcr_to_f32<T>(((const typename gcr_ty<T>::t *)p)[i]);
}
template <int T> __device__ __forceinline__ void gcr_st(void *p, long long i, float v)
{
    if constexpr (T >= 0) ((typename gcr_ty<T>::t *)p)[i] = gcr_from_f32<T>(v);
}

/* integer/bool casts go through int64, exactly (to i32 wraps, to bool is != 0) */
template <int T> __device__ __forceinline__ long long gcr_ld_i64(const void *p, long long i)
{
    if constexpr (T == GCR_DT_I32) return ((const int *)p)[i];
    else if constexpr (T == GCR_DT_I64) return ((const long long *)p)[i];
    else return ((const unsigned char *)p)[i] != 0;
}
template <int T> __device__ __forceinline__ void gcr_st_i64(void *p, long long i, long long v)
{
    if constexpr (T == GCR_DT_I32) ((int *)p)[i] = (int)(unsigned)(unsigned long long)v;
    else if constexpr (T == GCR_DT_I64) ((long long *)p)[i] = v;
    else ((unsigned char *)p)[i] = v != 0;
}

/* N results into storage: f16/bf16 pairs convert with one packed instruction on sm_80+ (same
 * round-to-nearest-even as the scalar path), which halves the conversion work of 16-bit stores */
template <int T, int N> __device__ __forceinline__ void gcr_from_f32_n(typename gcr_ty<T>::t *o, const float *x)
{
#if __CUDA_ARCH__ >= 800
    if constexpr ((T == GCR_DT_F16 || T == GCR_DT_BF16) && N % 2 == 0) {
#pragma unroll
        for (int j = 0; j < N; j += 2) {
            unsigned u;
            if constexpr (T == GCR_DT_F16) asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(x[j + 1]), "f"(x[j]));
            else asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u) : "f"(x[j + 1]), "f"(x[j]));
            o[j] = (unsigned short)(u & 0xffffu);
            o[j + 1] = (unsigned short)(u >> 16);
        }
    } else
#endif
    {
#pragma unroll
        for (int j = 0; j < N; j++) o[j] = gcr_from_f32<T>(x[j]);
    }
}

/* a shared-memory address as cp.async, ldmatrix, wgmma and mbarriers take it */
__device__ __forceinline__ unsigned gcr_tc_smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/* 16 bytes global -> shared by cp.async (sm_80+; lands with the group it is committed in); ok ==
 * false fills zeros and reads nothing */
__device__ __forceinline__ void gcr_tc_cp16(void *dst, const void *src, bool ok)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(gcr_tc_smem(dst)), "l"(src), "r"(ok ? 16 : 0));
#else
    (void)dst; (void)src; (void)ok;
#endif
}

template <int T> struct gcr_raw8 { /* 8 elements as they lie in memory (gcr_cp8_raw) */
    typedef typename gcr_ty<T>::t U;
    union {
        uint4 w[(sizeof(U) * 8 + 15) / 16];
        U e[8];
    };
};
/* p[i .. i + 7] into shared memory as they lie: by cp.async where aligned (it lands with the group
 * it is committed in, so a kernel stages a fused prologue's operands beside the operand tile they
 * scale), else element by element by this thread */
template <int T> __device__ __forceinline__ void gcr_cp8_raw(gcr_raw8<T> *dst, const void *p, long long i)
{
    typedef typename gcr_ty<T>::t U;
    const U *q = (const U *)p + i;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (sizeof(U) * 8 % 16 == 0) {
        if (((unsigned long long)q & 15) == 0) {
#pragma unroll
            for (int k = 0; k < (int)sizeof(U) / 2; k++) gcr_tc_cp16(&dst->w[k], (const uint4 *)q + k, true);
            return;
        }
    }
#endif
#pragma unroll
    for (int j = 0; j < 8; j++) dst->e[j] = q[j];
}
/* q's 8 packed f16 values times s's, each product rounded once to f16: the same bits as
 * converting both to f32, multiplying and rounding back, since the f32 product of two f16 values
 * is exact (11-bit significands, exponents far inside f32's range), so a prologue that is one such
 * product may skip the conversions (a NaN's payload may differ, as gcr_st's may). Not bf16: a
 * product of two bf16 values can fall below f32's normal range, where the f32 path rounds twice. */
__device__ __forceinline__ void gcr_mul8_packed(uint4 &q, const gcr_raw8<GCR_DT_F16> &s)
{
    const uint4 m = s.w[0];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(q.x) : "r"(m.x));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(q.y) : "r"(m.y));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(q.z) : "r"(m.z));
    asm("mul.rn.f16x2 %0, %0, %1;" : "+r"(q.w) : "r"(m.w));
#else
    (void)m;
#endif
}
template <int T> __device__ __forceinline__ void gcr_raw8_f32(const gcr_raw8<T> &r, float *v)
{
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = gcr_to_f32<T>(r.e[j]);
}

/* 8 consecutive elements p[i .. i + 7] (GCR_EPILOGUE8 of gemm.cuh: a thread's 8 channels of one
 * pixel), the same values as 8 gcr_ld / gcr_st calls. Where p + i is 16-byte aligned and the 8
 * elements fill whole 16-byte vectors (one for f16/bf16, two for f32/i32, four for i64) they move
 * as vectors: one instruction instead of 8 two-byte accesses, which bounded short-K 1x1 convs.
 * Anywhere else (an odd channel count, a view's offset) element by element. bf16 converts element
 * by element as gcr_st does (its NaNs keep their sign); f16 a pair per instruction, rounded as
 * gcr_st rounds (a NaN stays a NaN, its payload bits may differ). */
template <int T> __device__ __forceinline__ void gcr_ld8(const void *p, long long i, float *v)
{
    typedef typename gcr_ty<T>::t U;
    const U *q = (const U *)p + i;
    if constexpr (sizeof(U) * 8 % 16 == 0) {
        if (((unsigned long long)q & 15) == 0) {
            union { uint4 w[sizeof(U) / 2]; U e[8]; } u;
#pragma unroll
            for (int k = 0; k < (int)sizeof(U) / 2; k++) u.w[k] = ((const uint4 *)q)[k];
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = gcr_to_f32<T>(u.e[j]);
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = gcr_to_f32<T>(q[j]);
}
template <int T> __device__ __forceinline__ void gcr_st8(void *p, long long i, const float *v)
{
    typedef typename gcr_ty<T>::t U;
    U *q = (U *)p + i;
    if constexpr (sizeof(U) * 8 % 16 == 0) {
        union { uint4 w[sizeof(U) / 2]; U e[8]; } u;
        if constexpr (T == GCR_DT_F16) gcr_from_f32_n<T, 8>(u.e, v);
        else {
#pragma unroll
            for (int j = 0; j < 8; j++) u.e[j] = gcr_from_f32<T>(v[j]);
        }
        if (((unsigned long long)q & 15) == 0) {
#pragma unroll
            for (int k = 0; k < (int)sizeof(U) / 2; k++) ((uint4 *)q)[k] = u.w[k];
        } else {
#pragma unroll
            for (int j = 0; j < 8; j++) q[j] = u.e[j];
        }
    } else {
#pragma unroll
        for (int j = 0; j < 8; j++) q[j] = gcr_from_f32<T>(v[j]);
    }
}

/* Index decomposition without hardware division: for a dim of size d < 2^31 the host precomputes
 * shift = ceil(log2 d) and magic = floor(2^32 (2^shift - d) / d) + 1; then for any n < 2^31,
 * n / d == (umulhi(n, magic) + n) >> shift. A 64-bit divide is ~70 instructions and dominated
 * broadcast and strided kernels; this is three. The dividers travel in gcr_divs (abi.h). */
__device__ __forceinline__ unsigned gcr_div(unsigned n, unsigned magic, unsigned shift)
{
    return (__umulhi(n, magic) + n) >> shift;
}

/* Output element q of a thread-per-output walk over [N, C, OH, OW] as (n, c, oy, ox): channels
 * fastest when c_fast (a channel-contiguous output, so stores coalesce), else columns. I: the index
 * type, unsigned 32-bit whenever it fits (64-bit division is slow). */
template <typename I>
__device__ __forceinline__ void gcr_nchw_decode(I q, bool c_fast, I C, I OH, I OW, int &n, int &c, int &oy, int &ox)
{
    if (c_fast) {
        c = (int)(q % C); q /= C;
        ox = (int)(q % OW); q /= OW;
        oy = (int)(q % OH); n = (int)(q / OH);
    } else {
        ox = (int)(q % OW); q /= OW;
        oy = (int)(q % OH); q /= OH;
        c = (int)(q % C); n = (int)(q / C);
    }
}

__device__ __forceinline__ long long gcr_tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ long long gcr_nthreads() { return (long long)gridDim.x * blockDim.x; }

#endif
