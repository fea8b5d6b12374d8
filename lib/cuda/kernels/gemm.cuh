/* gemm.cuh — the dense engine: one tiled kernel that runs matmul, linear and every non-depthwise
 * conv2d (as an implicit GEMM, so a 1x1 stride-1 conv is a plain GEMM with no im2col buffer).
 *
 * Problem, per z = blockIdx.z (a conv group or a flattened batch index):
 *     out(r, col) = EPILOGUE( sum_k A(r, k) * B(k, col) )      r < M, col < N, k < K
 * described in conv terms by gcr_dense_args (abi.h, shared with the host launchers):
 *     row r  -> image n, output pixel (oy, ox):  r = (n * OH + oy) * OW + ox
 *     k      -> input channel c, tap (ky, kx):   k = (c * KH + ky) * KW + kx
 *     A(r,k) =  x[n, c, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw]   (0 outside the input)
 *     B(k,col) = w[col, c, ky, kx]
 *     out(r,col) at out[n, col, oy, ox]
 * A GEMM is the 1x1 case (OW = 1, OH = rows per batch item, H = W = "infinite"); batch dims that
 * cannot fold into rows, and conv groups, go to z with per-operand offsets.
 *
 * FUSION CONTRACT (capture/ codegen relies on it; conv.cuh and pool.cuh follow the same one):
 *   GCR_PROLOGUE(v, n, c)      float expression: the value the kernel uses for input element v
 *                              (already f32) of image/batch n, input channel c. Applied to every
 *                              in-bounds input element of x (A) before the multiply; padding stays 0.
 *                              For matmul/linear, c is the reduction index k (the input feature)
 *                              and n the flattened batch index. Default: (v). The tensor-core
 *                              engine rounds the result to the input dtype (f16/bf16) before the
 *                              multiply, as an unfused producer would have stored it.
 *   GCR_EPILOGUE(acc, n, o, idx) a statement storing one output: acc is the f32 sum (bias NOT
 *                              added), n the image/batch index, o the output channel / column,
 *                              idx the element offset of the output in `out` (its dense layout:
 *                              NCHW or NHWC for conv, row-major for matmul/linear). Runs exactly
 *                              once per output element (after any in-block K split). Default:
 *                              gcr_dn_st(out, idx, acc + (bias ? gcr_dn_ld(bias, o) : 0.0f))
 *   GCR_PRO_FETCH_T, GCR_PROLOGUE_FETCH8_ASYNC(fp, n, c), GCR_PROLOGUE_APPLY8(v8, f, n, c)
 *                              optional, together: the prologue of 8 channels in two halves.
 *                              FETCH8_ASYNC copies the operands the prologue of channels c .. c + 7
 *                              of image n reads into *fp (a GCR_PRO_FETCH_T in shared memory:
 *                              cp.async where aligned, in the caller's next commit group), and
 *                              APPLY8 does v8[j] = GCR_PROLOGUE(v8[j], n, c + j) for j = 0..7 with
 *                              them (v8: float *, f: that struct). Exists because the tensor-core
 *                              tiles apply the prologue between a k step's landing and its
 *                              barrier: a squeeze-excite scale loaded there queued behind the
 *                              block's own operand copies, one round trip on every k step's
 *                              critical path (a third of the stall samples, 2-3x the kernel's time
 *                              at one block an SM); the tiles stage it with the operand tile
 *                              instead. Default: none.
 *   GCR_PROLOGUE_PACKED, GCR_PROLOGUE_APPLY8_PACKED(q, f, n, c)
 *                              optional, with the two above: 1 and a statement applying the
 *                              prologue to the 8 packed 16-bit values of uint4 q in place, giving
 *                              APPLY8's bits (the hooks define it only where it is exact: an
 *                              f16 input's product by a staged f16 operand, common.cuh
 *                              gcr_mul8_packed). Exists because converting a landed chunk and
 *                              its operand to f32, multiplying and packing back takes about 28
 *                              instructions where the packed product takes 4. Default: 0.
 *   GCR_EPILOGUE8(acc8, n, o, idx) optional: the same as GCR_EPILOGUE(acc8[j], n, o + j, idx + j)
 *                              for j = 0..7 (acc8: const float *, bias NOT added), called where the
 *                              8 outputs are consecutive elements of the result (channel-contiguous,
 *                              o + 7 < N). Exists because one call per element meant 2-byte stores
 *                              and per-element index math, which bounded short-K f16 1x1 convs: it
 *                              computes the 8 values in f32, then moves full-layout operands as
 *                              16-byte vectors where aligned (common.cuh gcr_ld8/gcr_st8), else
 *                              element by element, rounding each value as GCR_EPILOGUE would.
 *                              Default: 8 GCR_EPILOGUE calls where only that is defined, else the
 *                              biased values stored by gcr_dn_st8 (one vector where aligned).
 *   GCR_EXTRA_PARAMS           text appended to every kernel's parameter list, starting with a
 *                              comma (", const float* __restrict__ res, float alpha"); the hooks
 *                              may use these names. Default: empty. The host launcher passes the
 *                              matching arguments after the standard ones.
 *   In scope for the hooks: p (gcr_dense_args), x, w, out, bias (may be null), and
 *   gcr_dn_ld/gcr_dn_st (f32 load/store of float, gcr_dn_f16, gcr_dn_bf16 buffers), and for
 *   GCR_EPILOGUE8 gcr_dn_bias8/gcr_dn_st8 (below) and gcr_ld8/gcr_st8 (common.cuh).
 *   Define GCR_NO_DEFAULT_KERNELS to instantiate only your own kernels with
 *   GCR_DENSE_KERNEL(name, T, CFG); GCR_DTYPE_ONLY (GCR_DT_F32/F16/BF16) limits the defaults to one
 *   dtype (fewer kernels to compile).
 *
 * Kernels: gcr_dense_{fma64,fma32,fmat}_f32 (FMA, f32 accumulate, no TF32), gcr_dense_{mma64,mma32,
 * mmat}_{f16,bf16} (mma.sync m16n8k16 tensor cores, f32 accumulate, sm_80+; the fma variants below
 * sm_80), gcr_gemv_{f32,f16,bf16} (at most 8 rows). Tiles: 64x64; 32x32 with K split inside the
 * block when 64 leaves SMs idle; 128x32 ("t") for N <= 32. The host (lib/cuda/dense.c) picks one
 * and sets vec_a/vec_b where 16-byte loads along k are legal. f16/bf16 1x1 convs and GEMMs with
 * enough rows go to the streaming tensor-core tile of gemm_tc.cuh instead, short reductions (the
 * stem) to conv.cuh's direct kernel. */
#ifndef GCR_GEMM_CUH
#define GCR_GEMM_CUH

#include "common.cuh"

/* ---------------------------------------------------------------- dtype shims (no toolkit headers) */

struct gcr_dn_f16 { unsigned short u; };
struct gcr_dn_bf16 { unsigned short u; };

__device__ __forceinline__ float gcr_dn_tof(float v) { return v; }
__device__ __forceinline__ float gcr_dn_tof(gcr_dn_f16 v)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.u));
    return f;
}
__device__ __forceinline__ float gcr_dn_tof(gcr_dn_bf16 v) { return __uint_as_float((unsigned)v.u << 16); }

__device__ __forceinline__ unsigned short gcr_dn_bits16(float f, gcr_dn_f16 *)
{
    unsigned short u;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(u) : "f"(f));
    return u;
}
__device__ __forceinline__ unsigned short gcr_dn_bits16(float f, gcr_dn_bf16 *)
{
    unsigned b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((b >> 16) | 0x40); /* quiet NaN */
    b += 0x7fffu + ((b >> 16) & 1u);                                                 /* round to nearest even */
    return (unsigned short)(b >> 16);
}

template <typename T> __device__ __forceinline__ float gcr_dn_ld(const T *p, long long i) { return gcr_dn_tof(p[i]); }
__device__ __forceinline__ void gcr_dn_st(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void gcr_dn_st(gcr_dn_f16 *p, long long i, float v) { p[i].u = gcr_dn_bits16(v, p); }
__device__ __forceinline__ void gcr_dn_st(gcr_dn_bf16 *p, long long i, float v) { p[i].u = gcr_dn_bits16(v, p); }

/* the dtype code (abi.h) of a storage type, for common.cuh's 8-element accesses */
template <typename T> struct gcr_dn_dt;
template <> struct gcr_dn_dt<float> { enum { v = GCR_DT_F32 }; };
template <> struct gcr_dn_dt<gcr_dn_f16> { enum { v = GCR_DT_F16 }; };
template <> struct gcr_dn_dt<gcr_dn_bf16> { enum { v = GCR_DT_BF16 }; };

/* GCR_EPILOGUE8's helpers: acc8[j] + bias[o + j] (+ 0.0f without a bias, as GCR_EPILOGUE adds it)
 * as a value whose v a hook call can take; p[i .. i + 7] = v as one vector store where aligned */
struct gcr_dn_f8 { float v[8]; };
template <typename T> __device__ __forceinline__ gcr_dn_f8 gcr_dn_bias8(const float *acc8, const T *bias, long long o)
{
    gcr_dn_f8 r;
    float b[8];
    if (bias) gcr_ld8<gcr_dn_dt<T>::v>(bias, o, b);
#pragma unroll
    for (int j = 0; j < 8; j++) r.v[j] = acc8[j] + (bias ? b[j] : 0.0f);
    return r;
}
template <typename T> __device__ __forceinline__ void gcr_dn_st8(T *p, long long i, const float *v)
{
    gcr_st8<gcr_dn_dt<T>::v>(p, i, v);
}

/* GCR_EPILOGUE8 where only GCR_EPILOGUE is hooked: 8 calls of the one-element hook */
template <class Epi>
__device__ __forceinline__ void gcr_dn_epi8_each(Epi &epi, const float *acc8, int n, int o, long long idx)
{
#pragma unroll
    for (int j = 0; j < 8; j++) epi(acc8[j], n, o + j, idx + j);
}

/* ---------------------------------------------------------------- hooks (defaults) */

#ifndef GCR_PROLOGUE
#define GCR_PROLOGUE(v, n, c) (v)
#define GCR_PROLOGUE_IDENTITY 1 /* lets vector loads skip the per-element f32 round trip */
#endif
#ifndef GCR_PROLOGUE_IDENTITY
#define GCR_PROLOGUE_IDENTITY 0
#endif
#ifndef GCR_PROLOGUE_FETCH8_ASYNC
struct gcr_pro_none {};
#define GCR_PRO_FETCH_T gcr_pro_none
#endif
#ifndef GCR_PROLOGUE_PACKED
#define GCR_PROLOGUE_PACKED 0 /* 1: GCR_PROLOGUE_APPLY8_PACKED(q, f, n, c) rewrites 8 packed values */
#endif
#ifndef GCR_EPILOGUE8
#ifdef GCR_EPILOGUE
#define GCR_EPILOGUE8(acc8, n, o, idx) gcr_dn_epi8_each(epi, (acc8), (n), (o), (idx))
#else
#define GCR_EPILOGUE8(acc8, n, o, idx) gcr_dn_st8(out, (idx), gcr_dn_bias8((acc8), bias, (o)).v)
#endif
#endif
#ifndef GCR_EPILOGUE
#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), (acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f))
#endif
#ifndef GCR_EXTRA_PARAMS
#define GCR_EXTRA_PARAMS
#endif

/* one callable of several lambdas: where the hooks stage the prologue's operands, pro(v, n, c) is
 * the scalar prologue, pro(fp, n, c) copies its operands into shared memory and pro(v8, f, n, c)
 * uses them */
template <class... F> struct gcr_overload : F... {
    using F::operator()...;
};
template <class... F> gcr_overload(F...) -> gcr_overload<F...>;
#if GCR_PROLOGUE_PACKED /* and pro(q, f, n, c) rewrites q's packed values with them */
#define GCR_PRO_PACKED_LAMBDA , [&](uint4 &q, const GCR_PRO_FETCH_T &f, int n, int c) { GCR_PROLOGUE_APPLY8_PACKED(q, f, n, c); }
#else
#define GCR_PRO_PACKED_LAMBDA
#endif
#ifdef GCR_PROLOGUE_FETCH8_ASYNC
#define GCR_PRO_LAMBDA                                                                                     \
    auto pro = gcr_overload{[&](float v, int n, int c) -> float { return GCR_PROLOGUE(v, n, c); },       \
                            [&](GCR_PRO_FETCH_T *fp, int n, int c) { GCR_PROLOGUE_FETCH8_ASYNC(fp, n, c); }, \
                            [&](float *v8, const GCR_PRO_FETCH_T &f, int n, int c) { GCR_PROLOGUE_APPLY8(v8, f, n, c); } \
                            GCR_PRO_PACKED_LAMBDA}
#else
#define GCR_PRO_LAMBDA auto pro = [&](float v, int n, int c) -> float { return GCR_PROLOGUE(v, n, c); }
#endif

/* The hooks as the lambdas every engine body takes, declared first thing in a kernel entry whose
 * parameters include out and bias (and the GCR_EXTRA_PARAMS the hooks read); epi8 only where an
 * engine stores 8 consecutive outputs of a thread at once. */
#define GCR_HOOK_LAMBDAS                                                                                   \
    GCR_PRO_LAMBDA;                                                                                        \
    auto epi = [&](float acc, int n, int o, long long idx) { GCR_EPILOGUE(acc, n, o, idx); };            \
    [[maybe_unused]] auto epi8 = [&](const float *a8, int n, int o, long long idx) { GCR_EPILOGUE8(a8, n, o, idx); }

/* ---------------------------------------------------------------- problem */

/* 8 packed 16-bit values as f32, and back (rounded as gcr_dn_bits16 rounds) */
template <typename T> __device__ __forceinline__ void gcr_dn_unpack8(uint4 q, float (&v)[8])
{
    union { uint4 q; T h[8]; } u;
    u.q = q;
#pragma unroll
    for (int j = 0; j < 8; j++) v[j] = gcr_dn_tof(u.h[j]);
}
template <typename T> __device__ __forceinline__ uint4 gcr_dn_pack8(const float (&v)[8])
{
    union { uint4 q; unsigned short h[8]; } u;
#pragma unroll
    for (int j = 0; j < 8; j++) u.h[j] = gcr_dn_bits16(v[j], (T *)0);
    return u.q;
}
/* 8 packed 16-bit values through the prologue: element j is input channel c + j; one element at a
 * time (unpacking all 8 first held them live at once, and the 128-wide wgmma tiles spilled more) */
template <typename T, class Pro>
__device__ __forceinline__ uint4 gcr_dn_pro8(uint4 q, Pro &pro, int n, int c)
{
    union { uint4 q; T h[8]; } u;
    u.q = q;
#pragma unroll
    for (int j = 0; j < 8; j++) u.h[j].u = gcr_dn_bits16(pro(gcr_dn_tof(u.h[j]), n, c + j), (T *)0);
    return u.q;
}
/* the same with the prologue's operands staged in shared memory (f: GCR_PRO_FETCH_T); where the
 * hooks say the prologue is exact on the packed values (GCR_PROLOGUE_PACKED), without converting */
template <typename T, class Pro, class F>
__device__ __forceinline__ uint4 gcr_dn_pro8s(uint4 q, Pro &pro, int n, int c, const F &f)
{
    if constexpr (GCR_PROLOGUE_PACKED) {
        pro(q, f, n, c);
        return q;
    }
    float v[8];
    gcr_dn_unpack8<T>(q, v);
    pro(v, f, n, c);
    return gcr_dn_pack8<T>(v);
}

#define GCR_DN_OUT (-(1 << 30)) /* row/k offset that fails every bounds test */

/* Per-block index tables: rows decoded once per block, k decoded per k-tile (double buffered so
 * the next tile's decode overlaps this tile's math). */
template <int BM, int BK> struct gcr_dn_tabs {
    long long rowA[BM], rowC[BM];
    int iy0[BM], ix0[BM], rown[BM];
    long long kA[2][BK], kB[2][BK];
    int kdy[2][BK], kdx[2][BK], kc[2][BK];
};

template <int BM, int BK>
__device__ __forceinline__ void gcr_dn_rows(const gcr_dense_args &p, int r0, gcr_dn_tabs<BM, BK> &s)
{
    for (int t = threadIdx.x; t < BM; t += blockDim.x) {
        int r = r0 + t;
        if (r < (int)p.M) {
            int sp = (int)(p.OH * p.OW), n = r / sp, rem = r - n * sp, oy = rem / (int)p.OW, ox = rem - oy * (int)p.OW;
            int iy = oy * (int)p.sh - (int)p.ph, ix = ox * (int)p.sw - (int)p.pw;
            s.rowA[t] = n * p.xs[0] + iy * p.xs[2] + ix * p.xs[3];
            s.rowC[t] = n * p.ys[0] + oy * p.ys[2] + ox * p.ys[3];
            s.iy0[t] = iy;
            s.ix0[t] = ix;
            s.rown[t] = n;
        } else {
            s.rowA[t] = s.rowC[t] = 0;
            s.iy0[t] = s.ix0[t] = GCR_DN_OUT;
            s.rown[t] = 0;
        }
    }
}

template <int BM, int BK>
__device__ __forceinline__ void gcr_dn_ks(const gcr_dense_args &p, int k0, int buf, gcr_dn_tabs<BM, BK> &s)
{
    int t = threadIdx.x;
    if (t >= BK) return;
    int k = k0 + t;
    if (k < (int)p.K) {
        int taps = (int)(p.KH * p.KW), c = k / taps, rem = k - c * taps, ky = rem / (int)p.KW, kx = rem - ky * (int)p.KW;
        int dy = ky * (int)p.dh, dx = kx * (int)p.dw;
        s.kA[buf][t] = c * p.xs[1] + dy * p.xs[2] + dx * p.xs[3];
        s.kB[buf][t] = c * p.ws[1] + ky * p.ws[2] + kx * p.ws[3];
        s.kdy[buf][t] = dy;
        s.kdx[buf][t] = dx;
        s.kc[buf][t] = c;
    } else {
        s.kA[buf][t] = s.kB[buf][t] = 0;
        s.kdy[buf][t] = s.kdx[buf][t] = GCR_DN_OUT;
        s.kc[buf][t] = 0;
    }
}

/* row r < M as image n, output row oy and column ox, by the host's magic dividers (sp: OH * OW):
 * the tensor-core tiles' row decode (on a short-K tile a large share of the instructions) */
__device__ __forceinline__ void gcr_dn_rowdec(const gcr_dense_args &p, int sp, int r, int &n, int &oy, int &ox)
{
    n = (int)gcr_div((unsigned)r, p.rdiv_m[0], p.rdiv_s[0]);
    const int rem = r - n * sp;
    oy = (int)gcr_div((unsigned)rem, p.rdiv_m[1], p.rdiv_s[1]);
    ox = rem - oy * (int)p.OW;
}

/* Row r's image n and the offset of its first element in x (1x1 taps, no padding: AT 0's rows) or
 * in the output: r times the flat row stride f where the host found one (p.fa, p.fc), else decoded
 * as n*s0 + oy*s2 + ox*s3 */
__device__ __forceinline__ long long gcr_dn_row_at(const gcr_dense_args &p, int sp, int r, long long f, long long s0,
                                                   long long s2, long long s3, int &n)
{
    if (f) {
        n = (int)gcr_div((unsigned)r, p.rdiv_m[0], p.rdiv_s[0]);
        return (long long)r * f;
    }
    int oy, ox;
    gcr_dn_rowdec(p, sp, r, n, oy, ox);
    return n * s0 + oy * s2 + ox * s3;
}
__device__ __forceinline__ long long gcr_dn_row_x(const gcr_dense_args &p, int sp, int r, int &n)
{
    return gcr_dn_row_at(p, sp, r, p.fa, p.xs[0], p.sh * p.xs[2], p.sw * p.xs[3], n);
}
__device__ __forceinline__ long long gcr_dn_row_y(const gcr_dense_args &p, int sp, int r, int &n)
{
    return gcr_dn_row_at(p, sp, r, p.fc, p.ys[0], p.ys[2], p.ys[3], n);
}

/* operand offsets of this block's z */
__device__ __forceinline__ void gcr_dn_zoff(const gcr_dense_args &p, long long &za, long long &zb, long long &zc)
{
    int z = blockIdx.z;
    za = zb = zc = 0;
    for (int d = (int)p.nz - 1; d >= 0; d--) {
        int e = (int)p.zshape[d], i = z % e;
        z /= e;
        za += i * p.zx[d];
        zb += i * p.zw[d];
        zc += i * p.zy[d];
    }
}

/* A block's place in the problem: its tile's first row and column, what its z (a conv group or a
 * flattened batch index) adds to image and input-channel indices (zn, zc) and to the element
 * offsets of x, w and out (za, zb, zo). The output-channel offset is gcr_dn_zo_o(p), taken at the
 * store. gcr_dn_begin keeps its order (pointers advanced, then the first tile): with zo_o in the
 * struct and the first tile decoded before the advance, NVRTC emitted other code for the fused
 * engines and MobileNet-v3 f32 b128 ran 1.1% slower on an H100 (2026-11-25). */
struct gcr_dn_blk {
    int r0, c0, zn, zc;
    long long za, zb, zo;
};
template <int BM, int BN> __device__ __forceinline__ gcr_dn_blk gcr_dn_block(const gcr_dense_args &p)
{
    gcr_dn_blk b;
    b.r0 = blockIdx.x * BM;
    b.c0 = blockIdx.y * BN;
    b.zn = (int)(blockIdx.z * p.zn);
    b.zc = (int)(blockIdx.z * p.zc);
    gcr_dn_zoff(p, b.za, b.zb, b.zo);
    return b;
}
__device__ __forceinline__ int gcr_dn_zo_o(const gcr_dense_args &p) { return (int)(blockIdx.z * p.zo); }

/* The tiled engines' block setup: the block's place, x and w advanced by its z offsets (P: the
 * caller's pointer type, __restrict__ kept), then its rows and first k tile decoded into s. */
template <int BM, int BN, int BK, class P>
__device__ __forceinline__ gcr_dn_blk gcr_dn_begin(const gcr_dense_args &p, gcr_dn_tabs<BM, BK> &s, P &x, P &w)
{
    const gcr_dn_blk b = gcr_dn_block<BM, BN>(p);
    x += b.za;
    w += b.zb;
    gcr_dn_rows<BM, BK>(p, b.r0, s);
    gcr_dn_ks<BM, BK>(p, 0, 0, s);
    __syncthreads();
    return b;
}

/* A element (tile row r, tile k kl) through the prologue; 0 when out of bounds */
template <typename T, int BM, int BK, class Pro>
__device__ __forceinline__ float gcr_dn_a(const gcr_dense_args &p, const T *x, const gcr_dn_tabs<BM, BK> &s, int buf,
                                          int r, int kl, int H, int W, int zn, int zc, Pro &pro)
{
    int iy = s.iy0[r] + s.kdy[buf][kl], ix = s.ix0[r] + s.kdx[buf][kl];
    if ((unsigned)iy >= (unsigned)H || (unsigned)ix >= (unsigned)W) return 0.0f;
    float v = gcr_dn_ld(x, s.rowA[r] + s.kA[buf][kl]);
    return pro(v, s.rown[r] + zn, s.kc[buf][kl] + zc);
}

template <typename T, int BM, int BK>
__device__ __forceinline__ float gcr_dn_b(const gcr_dense_args &p, const T *w, const gcr_dn_tabs<BM, BK> &s, int buf,
                                          int kl, int k0, int col)
{
    if (k0 + kl >= (int)p.K || col >= (int)p.N) return 0.0f;
    return gcr_dn_ld(w, s.kB[buf][kl] + col * p.ws[0]);
}

/* ---------------------------------------------------------------- staged epilogue */

/* Accumulators go through shared memory (summing the SK in-block K slices) so the stores run along
 * the output's contiguous dim: rows (pixels) for NCHW, columns (channels) for NHWC and matmul. */
template <int SK, int BM, int BN, int LDC, int NT, int BK, class Epi>
__device__ __forceinline__ void gcr_dn_store(const gcr_dense_args &p, const float (*Cs)[BM][LDC], const gcr_dn_tabs<BM, BK> &s,
                                             int r0, int c0, int zn, int zo_o, long long zo, Epi &epi)
{
    const bool rows_fast = p.ys[1] != 1;
    for (int e = threadIdx.x; e < BM * BN; e += NT) {
        int r = rows_fast ? e % BM : e / BN, c = rows_fast ? e / BM : e % BN;
        if (r0 + r >= (int)p.M || c0 + c >= (int)p.N) continue;
        float v = Cs[0][r][c];
#pragma unroll
        for (int g = 1; g < SK; g++) v += Cs[g][r][c];
        epi(v, s.rown[r] + zn, c0 + c + zo_o, zo + s.rowC[r] + (c0 + c) * p.ys[1]);
    }
}

/* One warp's 16 x NT*8 tile of mma.sync accumulators (acc[j]: rows g and g + 8, columns j*8 + 2q
 * and + 1, for lane 4g + q) to the output through the warp's staging area st (16 rows at a pitch of
 * NT*8 + 8 floats, so neither the float2 writes nor the float4 reads meet bank conflicts), each lane
 * then taking 8 consecutive columns of one row: through epi8 where the output is channel-contiguous
 * and all 8 are in [0, cols), else element by element. row(i, idx, n) gives tile row i's output
 * offset (z offset included, columns not) and its image (zn included), false for a row outside the
 * output; column j of the tile is output column c0 + j, hook channel o0 + j. */
template <int NT, class Row, class Epi, class Epi8>
__device__ __forceinline__ void gcr_warp_epi16(float *st, const float (&acc)[NT][4], Row &&row, int cols, int c0, int o0,
                                               long long ys1, Epi &epi, Epi8 &epi8)
{
    enum { SS = NT * 8 + 8 };
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int j = 0; j < NT; j++) {
        *(float2 *)&st[g * SS + j * 8 + 2 * q] = make_float2(acc[j][0], acc[j][1]);
        *(float2 *)&st[(g + 8) * SS + j * 8 + 2 * q] = make_float2(acc[j][2], acc[j][3]);
    }
    __syncwarp();
#pragma unroll
    for (int u = lane; u < 16 * NT; u += 32) {
        const int i = u / NT, oc = (u - i * NT) * 8;
        long long idx;
        int n;
        if (oc < cols && row(i, idx, n)) {
            float v[8];
            const float4 v0 = *(const float4 *)&st[i * SS + oc], v1 = *(const float4 *)&st[i * SS + oc + 4];
            v[0] = v0.x, v[1] = v0.y, v[2] = v0.z, v[3] = v0.w, v[4] = v1.x, v[5] = v1.y, v[6] = v1.z, v[7] = v1.w;
            if (ys1 == 1 && oc + 8 <= cols) {
                epi8(v, n, o0 + oc, idx + c0 + oc);
            } else {
#pragma unroll
                for (int j = 0; j < 8; j++)
                    if (oc + j < cols) epi(v[j], n, o0 + oc + j, idx + (long long)(c0 + oc + j) * ys1);
            }
        }
    }
    __syncwarp();
}

/* ---------------------------------------------------------------- FMA engine (f32; f16/bf16 below sm_80) */

/* BM x BN tile, TM x TN outputs per thread; SK thread groups split each K tile between them (more
 * warps per block where the grid is too small to fill the device). */
template <int BM_, int BN_, int BK_, int TM_, int TN_, int SK_> struct gcr_fma_cfg {
    enum { BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, SK = SK_, GT = (BM_ / TM_) * (BN_ / TN_),
           THREADS = GT * SK_, MINB = 2, MMA = 0 };
};
typedef gcr_fma_cfg<64, 64, 16, 4, 4, 1> gcr_cfg_fma64;  /* 256 threads */
typedef gcr_fma_cfg<32, 32, 64, 4, 4, 4> gcr_cfg_fma32;  /* 256 threads, 4-way split K; BK 64 keeps loads in flight */
typedef gcr_fma_cfg<128, 32, 16, 8, 2, 1> gcr_cfg_fmat;  /* 256 threads, for N <= 32 */

template <typename T, class CFG, class Pro, class Epi>
__device__ __forceinline__ void gcr_dense_fma(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              Pro &pro, Epi &epi)
{
    enum { BM = CFG::BM, BN = CFG::BN, BK = CFG::BK, TM = CFG::TM, TN = CFG::TN, SK = CFG::SK, GT = CFG::GT };
    enum { NT = CFG::THREADS, NA = BM * BK / NT, NB = BK * BN / NT };
    __shared__ gcr_dn_tabs<BM, BK> s;
    /* the accumulator stage reuses the operand tiles' memory once the K loop is done */
    __shared__ union {
        struct {
            float As[BK][BM + 1]; /* [k][row]: +1 keeps column writes conflict-free */
            float Bs[BK][BN + 1];
        } ab;
        float Cs[SK][BM][BN + 1];
    } sm;
    auto &As = sm.ab.As;
    auto &Bs = sm.ab.Bs;
    auto &Cs = sm.Cs;
    const int t = threadIdx.x, H = (int)p.H, W = (int)p.W;
    const gcr_dn_blk blk = gcr_dn_begin<BM, BN, BK>(p, s, x, w);
    const int r0 = blk.r0, c0 = blk.c0, zn = blk.zn, zc = blk.zc;

    const bool akf = p.a_kfast != 0, bkf = p.b_kfast != 0;
    /* f32 only: vector path, float4 chunks along k (KQ per tile row) */
    enum { CH = 4, KQ = BK / CH, NCA = BM * BK / CH, NCB = BN * BK / CH, NVA = (NCA + NT - 1) / NT, NVB = (NCB + NT - 1) / NT };
    const bool va = sizeof(T) == 4 && p.vec_a != 0, vb = sizeof(T) == 4 && p.vec_b != 0;
    float ra[NA], rb[NB];
    float4 qa[NVA], qb[NVB];
    auto load = [&](int k0, int buf) {
        if constexpr (sizeof(T) == 4) {
            if (va) {
#pragma unroll
                for (int i = 0; i < NVA; i++) {
                    int e = t + i * NT, r = e / KQ, k = k0 + (e % KQ) * CH;
                    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    if (e < NCA && s.iy0[r] != GCR_DN_OUT && k < (int)p.K) {
                        v = *(const float4 *)((const float *)x + s.rowA[r] + k);
                        if (!GCR_PROLOGUE_IDENTITY) {
                            int n = s.rown[r] + zn, c = k + zc;
                            v.x = pro(v.x, n, c); v.y = pro(v.y, n, c + 1);
                            v.z = pro(v.z, n, c + 2); v.w = pro(v.w, n, c + 3);
                        }
                    }
                    qa[i] = v;
                }
            }
            if (vb) {
#pragma unroll
                for (int i = 0; i < NVB; i++) {
                    int e = t + i * NT, cl = e / KQ, k = k0 + (e % KQ) * CH;
                    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                    if (e < NCB && c0 + cl < (int)p.N && k < (int)p.K)
                        v = *(const float4 *)((const float *)w + (c0 + cl) * p.ws[0] + k);
                    qb[i] = v;
                }
            }
        }
        if (!va) {
#pragma unroll
            for (int i = 0; i < NA; i++) {
                int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
                ra[i] = gcr_dn_a<T, BM, BK>(p, x, s, buf, r, kl, H, W, zn, zc, pro);
            }
        }
        if (!vb) {
#pragma unroll
            for (int i = 0; i < NB; i++) {
                int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
                rb[i] = gcr_dn_b<T, BM, BK>(p, w, s, buf, kl, k0, c0 + cl);
            }
        }
    };
    load(0, 0);

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    const int g = t / GT, tt = t % GT, ty = tt / (BN / TN), tx = tt % (BN / TN);
    const int nk = (int)((p.K + BK - 1) / BK);
    for (int kt = 0; kt < nk; kt++) {
        if (va) {
#pragma unroll
            for (int i = 0; i < NVA; i++) {
                int e = t + i * NT, r = e / KQ, kq = (e % KQ) * CH;
                if (e < NCA) {
                    As[kq][r] = qa[i].x; As[kq + 1][r] = qa[i].y;
                    As[kq + 2][r] = qa[i].z; As[kq + 3][r] = qa[i].w;
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < NA; i++) {
                int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
                As[kl][r] = ra[i];
            }
        }
        if (vb) {
#pragma unroll
            for (int i = 0; i < NVB; i++) {
                int e = t + i * NT, cl = e / KQ, kq = (e % KQ) * CH;
                if (e < NCB) {
                    Bs[kq][cl] = qb[i].x; Bs[kq + 1][cl] = qb[i].y;
                    Bs[kq + 2][cl] = qb[i].z; Bs[kq + 3][cl] = qb[i].w;
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < NB; i++) {
                int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
                Bs[kl][cl] = rb[i];
            }
        }
        if (kt + 1 < nk) gcr_dn_ks<BM, BK>(p, (kt + 1) * BK, (kt + 1) & 1, s);
        __syncthreads();
        if (kt + 1 < nk) load((kt + 1) * BK, (kt + 1) & 1); /* global loads in flight during the math */
#pragma unroll
        for (int ks = 0; ks < BK / SK; ks++) {
            const int kk = ks * SK + g;
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) a[i] = As[kk][ty + i * (BM / TM)];
#pragma unroll
            for (int j = 0; j < TN; j++) b[j] = Bs[kk][tx + j * (BN / TN)];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) Cs[g][ty + i * (BM / TM)][tx + j * (BN / TN)] = acc[i][j];
    __syncthreads();
    gcr_dn_store<SK, BM, BN, BN + 1, NT, BK>(p, Cs, s, r0, c0, zn, gcr_dn_zo_o(p), blk.zo, epi);
}

/* ---------------------------------------------------------------- tensor-core engine (f16/bf16, sm_80+) */

/* 8 warps as WM x WN x WK; each warp owns a (BM/WM) x (BN/WN) piece of the BM x BN tile and every
 * WK-th k16 step of the BK tile (WK > 1 splits K inside the block: more warps per tile). */
template <int BM_, int BN_, int BK_, int WM_, int WN_, int WK_> struct gcr_mma_cfg {
    enum { BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, WK = WK_, THREADS = 32 * WM_ * WN_ * WK_, MINB = 2, MMA = 1 };
};
typedef gcr_mma_cfg<64, 64, 32, 2, 2, 2> gcr_cfg_mma64;
typedef gcr_mma_cfg<32, 32, 64, 2, 2, 2> gcr_cfg_mma32;
typedef gcr_mma_cfg<128, 32, 16, 4, 2, 1> gcr_cfg_mmat;  /* for N <= 32 */

template <typename T> struct gcr_dn_is_bf16 { enum { v = 0 }; };
template <> struct gcr_dn_is_bf16<gcr_dn_bf16> { enum { v = 1 }; };

/* acc += A * B for one m16n8k16 tile of T (f16 or bf16) fragments, f32 accumulate (sm_80+) */
template <typename T>
__device__ __forceinline__ void gcr_dn_mma16816(float (&acc)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    if (gcr_dn_is_bf16<T>::v)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <typename T, class CFG, class Pro, class Epi>
__device__ __forceinline__ void gcr_dense_mma(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              Pro &pro, Epi &epi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    enum { BM = CFG::BM, BN = CFG::BN, BK = CFG::BK, NT = CFG::THREADS, LD = BK + 8, WK = CFG::WK };
    enum { NA = BM * BK / NT, NB = BK * BN / NT, TWM = BM / CFG::WM, TWN = BN / CFG::WN, MI = TWM / 16, NI = TWN / 8 };
    __shared__ gcr_dn_tabs<BM, BK> s;
    /* the accumulator stage reuses the operand tiles' memory once the K loop is done */
    __shared__ __align__(16) union {
        struct {
            unsigned short As[BM][LD]; /* [row][k]: k pairs feed the fragments */
            unsigned short Bs[BN][LD]; /* [col][k] */
        } ab;
        float Cs[WK][BM][BN + 1];
    } sm;
    auto &As = sm.ab.As;
    auto &Bs = sm.ab.Bs;
    auto &Cs = sm.Cs;
    const int t = threadIdx.x, H = (int)p.H, W = (int)p.W;
    const gcr_dn_blk blk = gcr_dn_begin<BM, BN, BK>(p, s, x, w);
    const int r0 = blk.r0, c0 = blk.c0, zn = blk.zn, zc = blk.zc;

    const bool akf = p.a_kfast != 0, bkf = p.b_kfast != 0;
    /* vector path: 8 halves (16 bytes) along k per load, stored to shared memory as they are */
    enum { CH = 8, KQ = BK / CH, NCA = BM * BK / CH, NCB = BN * BK / CH, NVA = (NCA + NT - 1) / NT, NVB = (NCB + NT - 1) / NT };
    const bool va = p.vec_a != 0, vb = p.vec_b != 0;
    unsigned short ra[NA], rb[NB];
    uint4 qa[NVA], qb[NVB];
    auto load = [&](int k0, int buf) {
        if (va) {
#pragma unroll
            for (int i = 0; i < NVA; i++) {
                int e = t + i * NT, r = e / KQ, k = k0 + (e % KQ) * CH;
                uint4 v = make_uint4(0u, 0u, 0u, 0u);
                if (e < NCA && s.iy0[r] != GCR_DN_OUT && k < (int)p.K) {
                    v = *(const uint4 *)(x + s.rowA[r] + k);
                    if (!GCR_PROLOGUE_IDENTITY) v = gcr_dn_pro8<T>(v, pro, s.rown[r] + zn, k + zc);
                }
                qa[i] = v;
            }
        } else {
#pragma unroll
            for (int i = 0; i < NA; i++) {
                int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
                ra[i] = gcr_dn_bits16(gcr_dn_a<T, BM, BK>(p, x, s, buf, r, kl, H, W, zn, zc, pro), (T *)0);
            }
        }
        if (vb) {
#pragma unroll
            for (int i = 0; i < NVB; i++) {
                int e = t + i * NT, cl = e / KQ, k = k0 + (e % KQ) * CH;
                qb[i] = e < NCB && c0 + cl < (int)p.N && k < (int)p.K ? *(const uint4 *)(w + (c0 + cl) * p.ws[0] + k)
                                                                      : make_uint4(0u, 0u, 0u, 0u);
            }
        } else {
#pragma unroll
            for (int i = 0; i < NB; i++) {
                int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
                /* raw bits: no round trip through f32 for weights */
                rb[i] = (k0 + kl < (int)p.K && c0 + cl < (int)p.N) ? w[s.kB[buf][kl] + (c0 + cl) * p.ws[0]].u : (unsigned short)0;
            }
        }
    };
    load(0, 0);

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NI; j++)
#pragma unroll
            for (int q = 0; q < 4; q++) acc[i][j][q] = 0.0f;
    const int warp = t >> 5, lane = t & 31, g = lane >> 2, q2 = (lane & 3) * 2;
    const int wk = warp % WK, wmn = warp / WK;
    const int wr = (wmn / CFG::WN) * TWM, wc = (wmn % CFG::WN) * TWN;
    const int nk = (int)((p.K + BK - 1) / BK);
    for (int kt = 0; kt < nk; kt++) {
        if (va) {
#pragma unroll
            for (int i = 0; i < NVA; i++) {
                int e = t + i * NT;
                if (e < NCA) *(uint4 *)&As[e / KQ][(e % KQ) * CH] = qa[i];
            }
        } else {
#pragma unroll
            for (int i = 0; i < NA; i++) {
                int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
                As[r][kl] = ra[i];
            }
        }
        if (vb) {
#pragma unroll
            for (int i = 0; i < NVB; i++) {
                int e = t + i * NT;
                if (e < NCB) *(uint4 *)&Bs[e / KQ][(e % KQ) * CH] = qb[i];
            }
        } else {
#pragma unroll
            for (int i = 0; i < NB; i++) {
                int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
                Bs[cl][kl] = rb[i];
            }
        }
        if (kt + 1 < nk) gcr_dn_ks<BM, BK>(p, (kt + 1) * BK, (kt + 1) & 1, s);
        __syncthreads();
        if (kt + 1 < nk) load((kt + 1) * BK, (kt + 1) & 1);
#pragma unroll
        for (int ks = 0; ks < BK / 16 / WK; ks++) {
            const int kk = (ks * WK + wk) * 16;
            unsigned a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; i++) {
                int r = wr + i * 16 + g;
                a[i][0] = *(const unsigned *)&As[r][kk + q2];
                a[i][1] = *(const unsigned *)&As[r + 8][kk + q2];
                a[i][2] = *(const unsigned *)&As[r][kk + q2 + 8];
                a[i][3] = *(const unsigned *)&As[r + 8][kk + q2 + 8];
            }
#pragma unroll
            for (int j = 0; j < NI; j++) {
                int cc = wc + j * 8 + g;
                b[j][0] = *(const unsigned *)&Bs[cc][kk + q2];
                b[j][1] = *(const unsigned *)&Bs[cc][kk + q2 + 8];
            }
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
                for (int j = 0; j < NI; j++) gcr_dn_mma16816<T>(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) Cs[wk][wr + i * 16 + g + h * 8][wc + j * 8 + q2 + e] = acc[i][j][h * 2 + e];
    __syncthreads();
    gcr_dn_store<WK, BM, BN, BN + 1, NT, BK>(p, Cs, s, r0, c0, zn, gcr_dn_zo_o(p), blk.zo, epi);
#else
    (void)p; (void)x; (void)w; (void)pro; (void)epi;
    __trap(); /* the host never picks this engine below sm_80 */
#endif
}

/* ---------------------------------------------------------------- GEMV (at most 8 rows) */

/* 16 aligned bytes as f32: 4 floats or 8 halves */
__device__ __forceinline__ void gcr_dn_ld16(const float *p, float (&o)[4])
{
    float4 v = *(const float4 *)p;
    o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
}
template <typename T> __device__ __forceinline__ void gcr_dn_ld16(const T *p, float (&o)[8])
{
    union { uint4 q; T h[8]; } u;
    u.q = *(const uint4 *)p;
#pragma unroll
    for (int j = 0; j < 8; j++) o[j] = gcr_dn_tof(u.h[j]);
}

/* A warp per output column, lanes along K, for the tiny-M products of batch-1 inference (the
 * classifier, squeeze-excite 1x1 convs): the weights stream once, coalesced along k. The host uses
 * it only for 1x1 taps with no padding (every A element in bounds), M <= 8 and k-contiguous w. */
template <typename T, class Pro, class Epi>
__device__ __forceinline__ void gcr_gemv_body(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              Pro &pro, Epi &epi)
{
    const int lane = threadIdx.x & 31, col = blockIdx.x * 8 + (threadIdx.x >> 5);
    if (col >= (int)p.N) return; /* whole warps leave; no block barrier below */
    const gcr_dn_blk blk = gcr_dn_block<0, 0>(p); /* columns by warp: no tile */
    x += blk.za;
    const T *wc = w + blk.zb + col * p.ws[0];
    const int M = (int)p.M, K = (int)p.K, zn = blk.zn, zc = blk.zc;
    long long rowA[8];
    int rown[8];
    const int sp = (int)(p.OH * p.OW);
#pragma unroll
    for (int r = 0; r < 8; r++) {
        int rr = r < M ? r : 0, n = rr / sp, rem = rr - n * sp, oy = rem / (int)p.OW, ox = rem - oy * (int)p.OW;
        rowA[r] = n * p.xs[0] + (long long)oy * p.sh * p.xs[2] + (long long)ox * p.sw * p.xs[3];
        rown[r] = n;
    }
    float acc[8];
#pragma unroll
    for (int r = 0; r < 8; r++) acc[r] = 0.0f;
    if (p.vec_a && p.vec_b) { /* 16 bytes of k per lane and load */
        enum { CH = 16 / sizeof(T) };
#pragma unroll 4 /* several 16-byte loads in flight per lane: at batch 1 this is latency-bound */
        for (int k = lane * CH; k < K; k += 32 * CH) {
            float b[CH], a[CH];
            gcr_dn_ld16(wc + k, b);
#pragma unroll
            for (int r = 0; r < 8; r++) {
                if (r >= M) break;
                gcr_dn_ld16(x + rowA[r] + k, a);
#pragma unroll
                for (int j = 0; j < CH; j++) acc[r] = fmaf(pro(a[j], rown[r] + zn, k + j + zc), b[j], acc[r]);
            }
        }
    } else {
#pragma unroll 4
        for (int k = lane; k < K; k += 32) {
            float b = gcr_dn_ld(wc, k * p.ws[1]);
#pragma unroll
            for (int r = 0; r < 8; r++)
                if (r < M) acc[r] = fmaf(pro(gcr_dn_ld(x, rowA[r] + k * p.xs[1]), rown[r] + zn, k + zc), b, acc[r]);
        }
    }
#pragma unroll
    for (int r = 0; r < 8; r++) {
        if (r >= M) break;
        float v = acc[r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == r) {
            int n = r / sp, rem = r - n * sp, oy = rem / (int)p.OW, ox = rem - oy * (int)p.OW;
            epi(v, n + zn, col + gcr_dn_zo_o(p), blk.zo + n * p.ys[0] + oy * p.ys[2] + ox * p.ys[3] + col * p.ys[1]);
        }
    }
}

/* The entry every dense-problem kernel shares (gemm.cuh, gemm_tc.cuh, conv.cuh's direct kernel,
 * patch.cuh, shortk.cuh): its parameters (the problem, the operands and the hooks' extras), the wait on the
 * previous kernel (programmatic dependent launch), the hooks as lambdas, then the body. Hooks expand
 * here, inside the kernel, so they see its parameters and extras. */
#define GCR_DN_ENTRY(NAME, T, THREADS, MINB, ...)                                                          \
    extern "C" __global__ void __launch_bounds__(THREADS, MINB)                                            \
        NAME(const gcr_dense_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out, \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        gcr_grid_dep();                                                                                    \
        GCR_HOOK_LAMBDAS;                                                                                  \
        __VA_ARGS__;                                                                                       \
    }

/* the 16, 32 and 64 columns wide kernels FAM<bn>_SFX of one dtype T, by the entry macro KERNEL
 * (NAME, T, BN): patch.cuh's and shortk.cuh's default kernels */
#define GCR_DN_WIDTHS(KERNEL, FAM, T, SFX) KERNEL(FAM##16_##SFX, T, 16) KERNEL(FAM##32_##SFX, T, 32) KERNEL(FAM##64_##SFX, T, 64)

/* One dense kernel. */
#define GCR_DENSE_KERNEL(NAME, T, CFG)                                                                      \
    GCR_DN_ENTRY(NAME, T, CFG::THREADS, CFG::MINB,                                                         \
                 if constexpr (CFG::MMA) gcr_dense_mma<T, CFG>(p, x, w, pro, epi);                         \
                 else gcr_dense_fma<T, CFG>(p, x, w, pro, epi))

/* grid (ceil(N / 8), 1, z), 256 threads */
#define GCR_GEMV_KERNEL(NAME, T) GCR_DN_ENTRY(NAME, T, 256, 1, gcr_gemv_body<T>(p, x, w, pro, epi))

#endif /* GCR_GEMM_CUH */

/* ---------------------------------------------------------------- default kernels (once per program) */
#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_GEMM_BASE_ONLY) && !defined(GCR_GEMM_KERNELS_DONE)
#define GCR_GEMM_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_DENSE_KERNEL(gcr_dense_fma64_f32, float, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_f32, float, gcr_cfg_fma32)
GCR_DENSE_KERNEL(gcr_dense_fmat_f32, float, gcr_cfg_fmat)
GCR_GEMV_KERNEL(gcr_gemv_f32, float)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DENSE_KERNEL(gcr_dense_mma64_f16, gcr_dn_f16, gcr_cfg_mma64)
GCR_DENSE_KERNEL(gcr_dense_mma32_f16, gcr_dn_f16, gcr_cfg_mma32)
GCR_DENSE_KERNEL(gcr_dense_mmat_f16, gcr_dn_f16, gcr_cfg_mmat)
GCR_GEMV_KERNEL(gcr_gemv_f16, gcr_dn_f16)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
GCR_DENSE_KERNEL(gcr_dense_fma64_f16, gcr_dn_f16, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_f16, gcr_dn_f16, gcr_cfg_fma32)
GCR_DENSE_KERNEL(gcr_dense_fmat_f16, gcr_dn_f16, gcr_cfg_fmat)
#endif
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DENSE_KERNEL(gcr_dense_mma64_bf16, gcr_dn_bf16, gcr_cfg_mma64)
GCR_DENSE_KERNEL(gcr_dense_mma32_bf16, gcr_dn_bf16, gcr_cfg_mma32)
GCR_DENSE_KERNEL(gcr_dense_mmat_bf16, gcr_dn_bf16, gcr_cfg_mmat)
GCR_GEMV_KERNEL(gcr_gemv_bf16, gcr_dn_bf16)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
GCR_DENSE_KERNEL(gcr_dense_fma64_bf16, gcr_dn_bf16, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_bf16, gcr_dn_bf16, gcr_cfg_fma32)
GCR_DENSE_KERNEL(gcr_dense_fmat_bf16, gcr_dn_bf16, gcr_cfg_fmat)
#endif
#endif
#endif
