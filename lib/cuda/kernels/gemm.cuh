/* gemm.cuh — the dense engine: one tiled kernel that runs matmul, linear and every non-depthwise
 * conv2d (as an implicit GEMM, so a 1x1 stride-1 conv is a plain GEMM with no im2col buffer).
 *
 * Problem, per z = blockIdx.z (a conv group or a flattened batch index):
 *     out(r, col) = EPILOGUE( sum_k A(r, k) * B(k, col) )      r < M, col < N, k < K
 * described in conv terms by gcr_dense_args (host mirror: gcr_cuda_dense_args in lib/cuda/dense.h):
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
 *                              and n the flattened batch index. Default: (v).
 *   GCR_EPILOGUE(acc, n, o, idx) a statement storing one output: acc is the f32 sum (bias NOT
 *                              added), n the image/batch index, o the output channel / column,
 *                              idx the element offset of the output in `out` (its dense layout:
 *                              NCHW or NHWC for conv, row-major for matmul/linear). Default:
 *                              gcr_dn_st(out, idx, acc + (bias ? gcr_dn_ld(bias, o) : 0.0f))
 *   GCR_EXTRA_PARAMS           text appended to every kernel's parameter list, starting with a
 *                              comma (", const float* __restrict__ res, float alpha"); the hooks
 *                              may use these names. Default: empty. The host launcher passes the
 *                              matching arguments after the standard ones.
 *   In scope for the hooks: p (gcr_dense_args), x, w, out, bias (may be null), and
 *   gcr_dn_ld/gcr_dn_st (f32 load/store of float, gcr_dn_f16, gcr_dn_bf16 buffers).
 *   Define GCR_NO_DEFAULT_KERNELS to instantiate only your own kernels with
 *   GCR_DENSE_KERNEL(name, T, CFG); GCR_DTYPE_ONLY (GCR_DT_F32/F16/BF16) limits the defaults to one
 *   dtype (fewer kernels to compile).
 *
 * Kernels: gcr_dense_{fma64,fma32}_f32 (FMA, f32 accumulate, no TF32), gcr_dense_{mma64,mma32}_{f16,
 * bf16} (mma.sync m16n8k16 tensor cores, f32 accumulate, sm_80+), gcr_dense_{fma64,fma32}_{f16,bf16}
 * below sm_80. 64/32 is the square output tile; the host picks 32 when 64 leaves SMs idle. */
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

/* ---------------------------------------------------------------- hooks (defaults) */

#ifndef GCR_PROLOGUE
#define GCR_PROLOGUE(v, n, c) (v)
#endif
#ifndef GCR_EPILOGUE
#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), (acc) + (bias ? gcr_dn_ld(bias, (o)) : 0.0f))
#endif
#ifndef GCR_EXTRA_PARAMS
#define GCR_EXTRA_PARAMS
#endif

/* ---------------------------------------------------------------- problem */

/* Every field 64-bit so the host struct (conv.c) has the same layout with no padding rules. */
struct gcr_dense_args {
    long long M, N, K;                  /* rows, cols, reduction length (per z) */
    long long OH, OW, H, W, KH, KW;     /* conv geometry; GEMM: OH = rows per batch item, OW = KH = KW = 1 */
    long long sh, sw, ph, pw, dh, dw;
    long long xs[4], ws[4], ys[4];      /* strides (elements): x [n,c,h,w], w [o,c,kh,kw], out [n,o,oh,ow] */
    long long nz, zshape[4], zx[4], zw[4], zy[4]; /* z decomposed row-major over zshape: operand offsets */
    long long zn, zc, zo;               /* hook coordinates: n += z*zn, c += z*zc, o += z*zo */
    long long a_kfast, b_kfast;         /* operand contiguous along k: selects the coalesced load order */
};

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

/* ---------------------------------------------------------------- FMA engine (f32; f16/bf16 below sm_80) */

template <int BM_, int BN_, int BK_, int TM_, int TN_> struct gcr_fma_cfg {
    enum { BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, THREADS = (BM_ / TM_) * (BN_ / TN_) };
};
typedef gcr_fma_cfg<64, 64, 16, 4, 4> gcr_cfg_fma64; /* 256 threads */
typedef gcr_fma_cfg<32, 32, 16, 4, 4> gcr_cfg_fma32; /* 64 threads */

template <typename T, class CFG, class Pro, class Epi>
__device__ __forceinline__ void gcr_dense_fma(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              Pro &pro, Epi &epi)
{
    enum { BM = CFG::BM, BN = CFG::BN, BK = CFG::BK, TM = CFG::TM, TN = CFG::TN, NT = CFG::THREADS };
    enum { NA = BM * BK / NT, NB = BK * BN / NT };
    __shared__ gcr_dn_tabs<BM, BK> s;
    __shared__ float As[BK][BM + 1]; /* [k][row]: +1 keeps column writes conflict-free */
    __shared__ float Bs[BK][BN + 1];
    const int t = threadIdx.x, r0 = blockIdx.x * BM, c0 = blockIdx.y * BN;
    const int H = (int)p.H, W = (int)p.W, zn = (int)(blockIdx.z * p.zn), zc = (int)(blockIdx.z * p.zc);
    long long za, zb, zo;
    gcr_dn_zoff(p, za, zb, zo);
    x += za;
    w += zb;
    gcr_dn_rows<BM, BK>(p, r0, s);
    gcr_dn_ks<BM, BK>(p, 0, 0, s);
    __syncthreads();

    const bool akf = p.a_kfast != 0, bkf = p.b_kfast != 0;
    float ra[NA], rb[NB];
    auto load = [&](int k0, int buf) {
#pragma unroll
        for (int i = 0; i < NA; i++) {
            int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
            ra[i] = gcr_dn_a<T, BM, BK>(p, x, s, buf, r, kl, H, W, zn, zc, pro);
        }
#pragma unroll
        for (int i = 0; i < NB; i++) {
            int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
            rb[i] = gcr_dn_b<T, BM, BK>(p, w, s, buf, kl, k0, c0 + cl);
        }
    };
    load(0, 0);

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    const int ty = t / (BN / TN), tx = t % (BN / TN);
    const int nk = (int)((p.K + BK - 1) / BK);
    for (int kt = 0; kt < nk; kt++) {
#pragma unroll
        for (int i = 0; i < NA; i++) {
            int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
            As[kl][r] = ra[i];
        }
#pragma unroll
        for (int i = 0; i < NB; i++) {
            int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
            Bs[kl][cl] = rb[i];
        }
        if (kt + 1 < nk) gcr_dn_ks<BM, BK>(p, (kt + 1) * BK, (kt + 1) & 1, s);
        __syncthreads();
        if (kt + 1 < nk) load((kt + 1) * BK, (kt + 1) & 1); /* global loads in flight during the math */
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
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
    const int zo_o = (int)(blockIdx.z * p.zo);
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int r = ty + i * (BM / TM);
        if (r0 + r >= (int)p.M) continue;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int col = c0 + tx + j * (BN / TN);
            if (col >= (int)p.N) continue;
            epi(acc[i][j], s.rown[r] + zn, col + zo_o, zo + s.rowC[r] + col * p.ys[1]);
        }
    }
}

/* ---------------------------------------------------------------- tensor-core engine (f16/bf16, sm_80+) */

template <int BM_, int BN_> struct gcr_mma_cfg {
    enum { BM = BM_, BN = BN_, BK = 32, THREADS = 128 }; /* 4 warps, 2x2, each (BM/2)x(BN/2) */
};
typedef gcr_mma_cfg<64, 64> gcr_cfg_mma64;
typedef gcr_mma_cfg<32, 32> gcr_cfg_mma32;

template <typename T> struct gcr_dn_is_bf16 { enum { v = 0 }; };
template <> struct gcr_dn_is_bf16<gcr_dn_bf16> { enum { v = 1 }; };

template <typename T, class CFG, class Pro, class Epi>
__device__ __forceinline__ void gcr_dense_mma(const gcr_dense_args &p, const T *__restrict__ x, const T *__restrict__ w,
                                              Pro &pro, Epi &epi)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    enum { BM = CFG::BM, BN = CFG::BN, BK = CFG::BK, NT = CFG::THREADS, LD = BK + 8 };
    enum { NA = BM * BK / NT, NB = BK * BN / NT, WM = BM / 2, WN = BN / 2, MI = WM / 16, NI = WN / 8 };
    __shared__ gcr_dn_tabs<BM, BK> s;
    __shared__ __align__(16) unsigned short As[BM][LD]; /* [row][k]: k pairs feed the fragments */
    __shared__ __align__(16) unsigned short Bs[BN][LD]; /* [col][k] */
    const int t = threadIdx.x, r0 = blockIdx.x * BM, c0 = blockIdx.y * BN;
    const int H = (int)p.H, W = (int)p.W, zn = (int)(blockIdx.z * p.zn), zc = (int)(blockIdx.z * p.zc);
    long long za, zb, zo;
    gcr_dn_zoff(p, za, zb, zo);
    x += za;
    w += zb;
    gcr_dn_rows<BM, BK>(p, r0, s);
    gcr_dn_ks<BM, BK>(p, 0, 0, s);
    __syncthreads();

    const bool akf = p.a_kfast != 0, bkf = p.b_kfast != 0;
    unsigned short ra[NA], rb[NB];
    auto load = [&](int k0, int buf) {
#pragma unroll
        for (int i = 0; i < NA; i++) {
            int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
            ra[i] = gcr_dn_bits16(gcr_dn_a<T, BM, BK>(p, x, s, buf, r, kl, H, W, zn, zc, pro), (T *)0);
        }
#pragma unroll
        for (int i = 0; i < NB; i++) {
            int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
            /* raw bits: no round trip through f32 for weights */
            rb[i] = (k0 + kl < (int)p.K && c0 + cl < (int)p.N) ? w[s.kB[buf][kl] + (c0 + cl) * p.ws[0]].u : (unsigned short)0;
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
    const int wr = (warp >> 1) * WM, wc = (warp & 1) * WN;
    const int nk = (int)((p.K + BK - 1) / BK);
    for (int kt = 0; kt < nk; kt++) {
#pragma unroll
        for (int i = 0; i < NA; i++) {
            int e = t + i * NT, r = akf ? e / BK : e % BM, kl = akf ? e % BK : e / BM;
            As[r][kl] = ra[i];
        }
#pragma unroll
        for (int i = 0; i < NB; i++) {
            int e = t + i * NT, cl = bkf ? e / BK : e % BN, kl = bkf ? e % BK : e / BN;
            Bs[cl][kl] = rb[i];
        }
        if (kt + 1 < nk) gcr_dn_ks<BM, BK>(p, (kt + 1) * BK, (kt + 1) & 1, s);
        __syncthreads();
        if (kt + 1 < nk) load((kt + 1) * BK, (kt + 1) & 1);
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
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
                for (int j = 0; j < NI; j++) {
                    if (gcr_dn_is_bf16<T>::v)
                        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                                     "{%8,%9}, {%0,%1,%2,%3};"
                                     : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                     : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
                    else
                        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                                     "{%8,%9}, {%0,%1,%2,%3};"
                                     : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                                     : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
                }
        }
        __syncthreads();
    }
    const int zo_o = (int)(blockIdx.z * p.zo);
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int r = wr + i * 16 + g + h * 8;
            if (r0 + r >= (int)p.M) continue;
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    int col = c0 + wc + j * 8 + q2 + e;
                    if (col >= (int)p.N) continue;
                    epi(acc[i][j][h * 2 + e], s.rown[r] + zn, col + zo_o, zo + s.rowC[r] + col * p.ys[1]);
                }
        }
#else
    (void)p; (void)x; (void)w; (void)pro; (void)epi;
    __trap(); /* the host never picks this engine below sm_80 */
#endif
}

template <class CFG> struct gcr_dn_is_mma { enum { v = 0 }; };
template <int A, int B> struct gcr_dn_is_mma<gcr_mma_cfg<A, B> > { enum { v = 1 }; };

/* One dense kernel: hooks expand here, inside the kernel, so they see its parameters and extras. */
#define GCR_DENSE_KERNEL(NAME, T, CFG)                                                                      \
    extern "C" __global__ void __launch_bounds__(CFG::THREADS)                                             \
        NAME(const gcr_dense_args p, const T *__restrict__ x, const T *__restrict__ w, T *__restrict__ out, \
             const T *__restrict__ bias GCR_EXTRA_PARAMS)                                                  \
    {                                                                                                      \
        auto pro = [&](float v, int n, int c) -> float { return GCR_PROLOGUE(v, n, c); };                \
        auto epi = [&](float acc, int n, int o, long long idx) { GCR_EPILOGUE(acc, n, o, idx); };        \
        if constexpr (gcr_dn_is_mma<CFG>::v) gcr_dense_mma<T, CFG>(p, x, w, pro, epi);                     \
        else gcr_dense_fma<T, CFG>(p, x, w, pro, epi);                                                     \
    }

#endif /* GCR_GEMM_CUH */

/* ---------------------------------------------------------------- default kernels (once per program) */
#if !defined(GCR_NO_DEFAULT_KERNELS) && !defined(GCR_GEMM_BASE_ONLY) && !defined(GCR_GEMM_KERNELS_DONE)
#define GCR_GEMM_KERNELS_DONE
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F32
GCR_DENSE_KERNEL(gcr_dense_fma64_f32, float, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_f32, float, gcr_cfg_fma32)
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_F16
GCR_DENSE_KERNEL(gcr_dense_mma64_f16, gcr_dn_f16, gcr_cfg_mma64)
GCR_DENSE_KERNEL(gcr_dense_mma32_f16, gcr_dn_f16, gcr_cfg_mma32)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
GCR_DENSE_KERNEL(gcr_dense_fma64_f16, gcr_dn_f16, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_f16, gcr_dn_f16, gcr_cfg_fma32)
#endif
#endif
#if !defined(GCR_DTYPE_ONLY) || GCR_DTYPE_ONLY == GCR_DT_BF16
GCR_DENSE_KERNEL(gcr_dense_mma64_bf16, gcr_dn_bf16, gcr_cfg_mma64)
GCR_DENSE_KERNEL(gcr_dense_mma32_bf16, gcr_dn_bf16, gcr_cfg_mma32)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
GCR_DENSE_KERNEL(gcr_dense_fma64_bf16, gcr_dn_bf16, gcr_cfg_fma64)
GCR_DENSE_KERNEL(gcr_dense_fma32_bf16, gcr_dn_bf16, gcr_cfg_fma32)
#endif
#endif
#endif
