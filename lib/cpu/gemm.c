/* gemm.c — a blocked, packed single-precision GEMM for the CPU backend (conv via im2col, matmul,
 * linear), plus the context's reusable scratch buffers and f32 staging of f16/bf16 operands.
 *
 * Blocking follows the usual GotoBLAS/BLIS scheme: B is packed in [KC x NR] column panels, A in
 * [MR x KC] row panels, and a 6x16 register-tile micro-kernel runs over them. Packing reads any
 * row/column strides, so transposed or permuted operands cost no extra copy. The micro-kernel has
 * an AVX2+FMA version chosen at run time (the library is built for baseline x86-64) and a
 * portable one written with vector extensions. */
#include "gemm.h"
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define GCR_GEMM_X86 1
#endif

#define MR 6
#define NR 16
#define MC 144  /* rows of A per packed block: 24 micro-panels, ~144 KiB at KC 256 (L2) */
#define KC 256
#define NC 2048 /* columns of B per packed block: 2 MiB (L3) */

/* ---------------------------------------------------------------- scratch */

typedef struct scratch {
    float *p[GCR_SCR_COUNT];
    size_t cap[GCR_SCR_COUNT]; /* floats */
} scratch;

float *gcr_cpu_scratch_get(gcr_ctx *ctx, int slot, size_t n)
{
    scratch *s = ctx->cpu_scratch;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) {
            gcr_set_error(ctx, GCR_ERR_OOM, "cpu: out of memory for scratch buffers");
            return NULL;
        }
        ctx->cpu_scratch = s;
    }
    if (n == 0) n = 1;
    if (s->cap[slot] >= n) return s->p[slot];
    free(s->p[slot]); /* old contents are never needed: free first to lower the peak */
    s->p[slot] = NULL;
    s->cap[slot] = 0;
    if (n > SIZE_MAX / sizeof(float) - 64) {
        gcr_set_error(ctx, GCR_ERR_OOM, "cpu: scratch of %zu floats too large", n);
        return NULL;
    }
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    s->p[slot] = aligned_alloc(64, bytes);
    if (!s->p[slot]) {
        gcr_set_error(ctx, GCR_ERR_OOM, "cpu: out of memory for a %zu-byte scratch buffer", bytes);
        return NULL;
    }
    s->cap[slot] = n;
    return s->p[slot];
}

void gcr_cpu_scratch_free(gcr_ctx *ctx)
{
    scratch *s = ctx->cpu_scratch;
    if (!s) return;
    for (int i = 0; i < GCR_SCR_COUNT; i++) free(s->p[i]);
    free(s);
    ctx->cpu_scratch = NULL;
}

/* ---------------------------------------------------------------- packing */

/* Ap: ceil(mc/MR) panels, each [kc][MR]; rows past mc are zero so the kernel needs no edge case */
static void pack_a(int64_t mc, int64_t kc, const float *A, int64_t rsa, int64_t csa, float *Ap)
{
    for (int64_t i0 = 0; i0 < mc; i0 += MR) {
        int64_t mr = mc - i0 < MR ? mc - i0 : MR;
        float *d = Ap + i0 * kc;
        if (csa == 1 && mr == MR) { /* six row streams, one contiguous 6-float write per k */
            const float *s0 = A + i0 * rsa, *s1 = s0 + rsa, *s2 = s1 + rsa, *s3 = s2 + rsa, *s4 = s3 + rsa, *s5 = s4 + rsa;
            for (int64_t k = 0; k < kc; k++, d += MR) {
                d[0] = s0[k]; d[1] = s1[k]; d[2] = s2[k]; d[3] = s3[k]; d[4] = s4[k]; d[5] = s5[k];
            }
            continue;
        }
        if (csa == 1) {
            for (int64_t i = 0; i < mr; i++) {
                const float *s = A + (i0 + i) * rsa;
                for (int64_t k = 0; k < kc; k++) d[k * MR + i] = s[k];
            }
        } else {
            for (int64_t k = 0; k < kc; k++)
                for (int64_t i = 0; i < mr; i++) d[k * MR + i] = A[(i0 + i) * rsa + k * csa];
        }
        for (int64_t i = mr; i < MR; i++)
            for (int64_t k = 0; k < kc; k++) d[k * MR + i] = 0.0f;
    }
}

/* Bp: ceil(nc/NR) panels, each [kc][NR]; columns past nc are zero */
static void pack_b(int64_t kc, int64_t nc, const float *B, int64_t rsb, int64_t csb, float *Bp)
{
    for (int64_t j0 = 0; j0 < nc; j0 += NR) {
        int64_t nr = nc - j0 < NR ? nc - j0 : NR;
        float *d = Bp + j0 * kc;
        if (csb == 1) {
            if (nr == NR) /* two vector moves per row: memcpy of 64 bytes becomes a slow rep movs */
                for (int64_t k = 0; k < kc; k++) {
                    const float *r = B + k * rsb + j0;
                    *(gcr_v8f *)(d + k * NR) = *(const gcr_v8f *)r;
                    *(gcr_v8f *)(d + k * NR + 8) = *(const gcr_v8f *)(r + 8);
                }
            else
                for (int64_t k = 0; k < kc; k++) {
                    memcpy(d + k * NR, B + k * rsb + j0, (size_t)nr * sizeof(float));
                    for (int64_t j = nr; j < NR; j++) d[k * NR + j] = 0.0f;
                }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                const float *s = B + (j0 + j) * csb;
                for (int64_t k = 0; k < kc; k++) d[k * NR + j] = s[k * rsb];
            }
            for (int64_t k = 0; k < kc; k++)
                for (int64_t j = nr; j < NR; j++) d[k * NR + j] = 0.0f;
        }
    }
}

/* ---------------------------------------------------------------- micro-kernels: t[MR][NR] = a @ b */

static void kern_generic(int64_t kc, const float *a, const float *b, float *t)
{
    gcr_v8f acc[MR][2];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR) {
        gcr_v8f b0 = *(const gcr_v8f *)b, b1 = *(const gcr_v8f *)(b + 8);
        for (int i = 0; i < MR; i++) {
            acc[i][0] += a[i] * b0;
            acc[i][1] += a[i] * b1;
        }
    }
    for (int i = 0; i < MR; i++) {
        *(gcr_v8f *)(t + i * NR) = acc[i][0];
        *(gcr_v8f *)(t + i * NR + 8) = acc[i][1];
    }
}

#ifdef GCR_GEMM_X86
/* 12 ymm accumulators + 2 for B + 1 broadcast: fits the 16 registers */
__attribute__((target("avx2,fma"))) static void kern_avx2(int64_t kc, const float *a, const float *b, float *t)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), x;
        x = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
    }
    _mm256_store_ps(t + 0 * NR, c00); _mm256_store_ps(t + 0 * NR + 8, c01);
    _mm256_store_ps(t + 1 * NR, c10); _mm256_store_ps(t + 1 * NR + 8, c11);
    _mm256_store_ps(t + 2 * NR, c20); _mm256_store_ps(t + 2 * NR + 8, c21);
    _mm256_store_ps(t + 3 * NR, c30); _mm256_store_ps(t + 3 * NR + 8, c31);
    _mm256_store_ps(t + 4 * NR, c40); _mm256_store_ps(t + 4 * NR + 8, c41);
    _mm256_store_ps(t + 5 * NR, c50); _mm256_store_ps(t + 5 * NR + 8, c51);
}
#endif

/* writes the valid mr x nr corner of tile t into C: on the first K block as t + bias, on later
 * ones added to what is there */
static void store_tile(float *C, int64_t rsc, int64_t csc, const float *t, int64_t mr, int64_t nr, int add,
                       const float *brow, const float *bcol)
{
    for (int64_t i = 0; i < mr; i++) {
        float *c = C + i * rsc;
        const float *ti = t + i * NR;
        if (add) {
            if (csc == 1) for (int64_t j = 0; j < nr; j++) c[j] += ti[j];
            else for (int64_t j = 0; j < nr; j++) c[j * csc] += ti[j];
            continue;
        }
        float br = brow ? brow[i] : 0.0f;
        if (bcol) for (int64_t j = 0; j < nr; j++) c[j * csc] = ti[j] + br + bcol[j];
        else if (csc == 1) for (int64_t j = 0; j < nr; j++) c[j] = ti[j] + br;
        else for (int64_t j = 0; j < nr; j++) c[j * csc] = ti[j] + br;
    }
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* sum of x[i] * y[i] over contiguous rows, in 8 lanes */
static float dot(int64_t n, const float *x, const float *y)
{
    gcr_v8f acc = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc += *(const gcr_v8f *)(x + i) * *(const gcr_v8f *)(y + i);
    float s = 0.0f;
    for (; i < n; i++) s += x[i] * y[i];
    for (int l = 0; l < 8; l++) s += acc[l];
    return s;
}

/* Matrix-vector shapes (a batch-1 linear, a conv on a 1x1 map): packing would cost as much as
 * the arithmetic, so run dots or axpys on the operands in place. Returns 0 when the layout fits
 * neither (the caller then packs), -1 when out of memory (recorded on ctx). */
static int small_gemm(gcr_ctx *ctx, int64_t M, int64_t N, int64_t K, const float *A, int64_t rsa, int64_t csa,
                      const float *B, int64_t rsb, int64_t csb, float *C, int64_t rsc, int64_t csc,
                      const float *brow, const float *bcol)
{
    if (csa == 1 && rsb == 1) { /* rows of A and columns of B both contiguous: dots */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                float v = dot(K, A + i * rsa, B + j * csb);
                C[i * rsc + j * csc] = v + (brow ? brow[i] : 0.0f) + (bcol ? bcol[j] : 0.0f);
            }
        return 1;
    }
    if (csb == 1 && M <= 2) { /* rows of B contiguous: accumulate a row of C as axpys */
        float *acc = gcr_cpu_scratch_get(ctx, GCR_SCR_PACK_B, (size_t)N);
        if (!acc) return -1;
        for (int64_t i = 0; i < M; i++) {
            memset(acc, 0, (size_t)N * sizeof(float));
            for (int64_t k = 0; k < K; k++) gcr_cpu_axpy(N, A[i * rsa + k * csa], B + k * rsb, acc);
            for (int64_t j = 0; j < N; j++) C[i * rsc + j * csc] = acc[j] + (brow ? brow[i] : 0.0f) + (bcol ? bcol[j] : 0.0f);
        }
        return 1;
    }
    return 0;
}

static int64_t round_up(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

gcr_status gcr_sgemm(gcr_ctx *ctx, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t rsa, int64_t csa,
                     const float *B, int64_t rsb, int64_t csb,
                     float *C, int64_t rsc, int64_t csc, const float *brow, const float *bcol)
{
    if (M <= 0 || N <= 0) return GCR_OK;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) C[i * rsc + j * csc] = (brow ? brow[i] : 0.0f) + (bcol ? bcol[j] : 0.0f);
        return GCR_OK;
    }
    if (M <= 2 || N <= 2) {
        int r = small_gemm(ctx, M, N, K, A, rsa, csa, B, rsb, csb, C, rsc, csc, brow, bcol);
        if (r) return r > 0 ? GCR_OK : GCR_ERR_OOM;
    }
    void (*kern)(int64_t, const float *, const float *, float *) = kern_generic;
#ifdef GCR_GEMM_X86
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) kern = kern_avx2;
#endif
    int64_t kcmax = min64(K, KC), mcmax = min64(round_up(M, MR), MC), ncmax = min64(round_up(N, NR), NC);
    float *Ap = gcr_cpu_scratch_get(ctx, GCR_SCR_PACK_A, (size_t)(mcmax * kcmax));
    float *Bp = gcr_cpu_scratch_get(ctx, GCR_SCR_PACK_B, (size_t)(kcmax * ncmax));
    if (!Ap || !Bp) return GCR_ERR_OOM;
    _Alignas(64) float tile[MR * NR];

    for (int64_t jc = 0; jc < N; jc += NC) {
        int64_t nc = min64(NC, N - jc);
        for (int64_t pc = 0; pc < K; pc += KC) {
            int64_t kc = min64(KC, K - pc);
            pack_b(kc, nc, B + pc * rsb + jc * csb, rsb, csb, Bp);
            for (int64_t ic = 0; ic < M; ic += MC) {
                int64_t mc = min64(MC, M - ic);
                pack_a(mc, kc, A + ic * rsa + pc * csa, rsa, csa, Ap);
                for (int64_t jr = 0; jr < nc; jr += NR) {
                    int64_t nr = min64(NR, nc - jr);
                    for (int64_t ir = 0; ir < mc; ir += MR) {
                        kern(kc, Ap + ir * kc, Bp + jr * kc, tile);
                        store_tile(C + (ic + ir) * rsc + (jc + jr) * csc, rsc, csc, tile, min64(MR, mc - ir), nr, pc > 0,
                                   brow ? brow + ic + ir : NULL, bcol ? bcol + jc + jr : NULL);
                    }
                }
            }
        }
    }
    return GCR_OK;
}

/* ---------------------------------------------------------------- f32 staging */

void gcr_cpu_gather_f32(const gcr_tensor *t, float *dst, const int64_t *dst_st)
{
    const gcr_meta *m = &t->m;
    if (gcr_meta_numel(m) == 0) return;
    const void *src = gcr_tensor_data(t);
    if (m->ndim == 0) {
        dst[0] = gcr_load_f32(src, m->dtype, 0);
        return;
    }
    int nd = m->ndim, in = nd - 1;
    int64_t idx[GCR_MAX_DIMS] = {0}, n = m->shape[in], ss = m->strides[in], ds = dst_st[in];
    for (;;) {
        int64_t so = 0, dof = 0;
        for (int d = 0; d < in; d++) {
            so += idx[d] * m->strides[d];
            dof += idx[d] * dst_st[d];
        }
        gcr_load_f32_n(dst + dof, ds, src, m->dtype, so, ss, n);
        int d = in - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < m->shape[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

gcr_status gcr_cpu_f32_view(gcr_ctx *ctx, const gcr_tensor *t, int slot, gcr_f32v *v)
{
    memcpy(v->st, t->m.strides, sizeof v->st);
    if (t->m.dtype == GCR_F32) {
        v->p = gcr_tensor_data(t);
        return GCR_OK;
    }
    gcr_meta d = t->m;
    /* keep channels innermost when they were, so the kernels pick the same path as for f32 */
    int cl = d.ndim == 4 && d.shape[1] > 1 && d.strides[1] == 1;
    gcr_meta_set_format(&d, cl ? GCR_NHWC : GCR_NCHW);
    float *p = gcr_cpu_scratch_get(ctx, slot, (size_t)gcr_meta_numel(&d));
    if (!p) return GCR_ERR_OOM;
    gcr_cpu_gather_f32(t, p, d.strides);
    v->p = p;
    memcpy(v->st, d.strides, sizeof v->st);
    return GCR_OK;
}

float *gcr_cpu_out_f32(gcr_ctx *ctx, gcr_tensor *out)
{
    if (out->m.dtype == GCR_F32) return gcr_tensor_data(out);
    return gcr_cpu_scratch_get(ctx, GCR_SCR_OUT, (size_t)gcr_meta_numel(&out->m));
}

void gcr_cpu_out_finish(gcr_tensor *out, const float *f)
{
    if (out->m.dtype == GCR_F32) return;
    /* out is dense, so f (laid out with out's strides) maps onto it element for element */
    gcr_store_f32_n(gcr_tensor_data(out), out->m.dtype, 0, 1, f, 1, gcr_meta_numel(&out->m));
}
