/* dtype.c — dtype names and sizes, and the f16/bf16 <-> f32 conversions the CPU paths use
 * (round to nearest even, NaN and infinities kept). */
#include "internal.h"
#include <math.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GCR_F16C_X86 1
#include <immintrin.h>
#include <stdatomic.h>
#endif

static const struct { const char *name; size_t size; } dtypes[GCR_DTYPE_COUNT] = {
    [GCR_F32] = {"f32", 4}, [GCR_F16] = {"f16", 2}, [GCR_BF16] = {"bf16", 2},
    [GCR_I32] = {"i32", 4}, [GCR_I64] = {"i64", 8}, [GCR_BOOL] = {"bool", 1},
};

const char *gcr_dtype_name(gcr_dtype t) { return (unsigned)t < GCR_DTYPE_COUNT ? dtypes[t].name : "?"; }
size_t gcr_dtype_size(gcr_dtype t) { return (unsigned)t < GCR_DTYPE_COUNT ? dtypes[t].size : 0; }
bool gcr_dtype_is_float(gcr_dtype t) { return t == GCR_F32 || t == GCR_F16 || t == GCR_BF16; }

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float gcr_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (man << 13)); /* inf / nan */
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        float v = ldexpf((float)man, -24); /* subnormal: man * 2^-24 */
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t gcr_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f), sign = (u >> 16) & 0x8000;
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) /* inf or nan (keep a quiet nan) */
        return (uint16_t)(sign | 0x7c00 | (absu > 0x7f800000u ? 0x200 : 0));
    if (absu >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds past 65504 */
    if (absu < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        float a = bits_f32(absu);
        /* scale so that one half-subnormal ulp is 1, then round to nearest even */
        float s = a * 16777216.0f; /* 2^24 */
        uint32_t q = (uint32_t)nearbyintf(s);
        return (uint16_t)(sign | q);
    }
    /* normal: drop 13 mantissa bits with round to nearest even */
    uint32_t r = absu + 0xfff + ((absu >> 13) & 1);
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

#ifdef GCR_F16C_X86
/* 8 at a time; a strided side goes through a small array (gathered or scattered around the
 * conversion), which still beats the scalar conversion's branches. Returns how many it did. */
__attribute__((target("avx,f16c"))) static int64_t f16_to_f32_f16c(float *dst, int64_t ds, const uint16_t *src, int64_t ss,
                                                                   int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h;
        if (ss == 1) {
            h = _mm_loadu_si128((const __m128i *)(src + i));
        } else {
            uint16_t g[8];
            for (int j = 0; j < 8; j++) g[j] = src[(i + j) * ss];
            h = _mm_loadu_si128((const __m128i *)g);
        }
        __m256 f = _mm256_cvtph_ps(h);
        if (ds == 1) {
            _mm256_storeu_ps(dst + i, f);
        } else {
            float o[8];
            _mm256_storeu_ps(o, f);
            for (int j = 0; j < 8; j++) dst[(i + j) * ds] = o[j];
        }
    }
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t f32_to_f16_f16c(uint16_t *dst, int64_t ds, const float *src, int64_t ss,
                                                                   int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f;
        if (ss == 1) {
            f = _mm256_loadu_ps(src + i);
        } else {
            float g[8];
            for (int j = 0; j < 8; j++) g[j] = src[(i + j) * ss];
            f = _mm256_loadu_ps(g);
        }
        __m128i h = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
        if (ds == 1) {
            _mm_storeu_si128((__m128i *)(dst + i), h);
        } else {
            uint16_t o[8];
            _mm_storeu_si128((__m128i *)o, h);
            for (int j = 0; j < 8; j++) dst[(i + j) * ds] = o[j];
        }
    }
    return i;
}

/* checked on first use; an atomic, since contexts on several threads may ask at once */
static bool has_f16c(void)
{
    static atomic_int v = -1;
    int x = atomic_load_explicit(&v, memory_order_relaxed);
    if (x < 0) {
        x = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
        atomic_store_explicit(&v, x, memory_order_relaxed);
    }
    return x;
}
#endif

void gcr_f16_to_f32_n(float *dst, int64_t ds, const uint16_t *src, int64_t ss, int64_t n)
{
    int64_t i = 0;
#ifdef GCR_F16C_X86
    if (n >= 8 && has_f16c()) i = f16_to_f32_f16c(dst, ds, src, ss, n);
#endif
    for (; i < n; i++) dst[i * ds] = gcr_f16_to_f32(src[i * ss]);
}

void gcr_f32_to_f16_n(uint16_t *dst, int64_t ds, const float *src, int64_t ss, int64_t n)
{
    int64_t i = 0;
#ifdef GCR_F16C_X86
    if (n >= 8 && has_f16c()) i = f32_to_f16_f16c(dst, ds, src, ss, n);
#endif
    for (; i < n; i++) dst[i * ds] = gcr_f32_to_f16(src[i * ss]);
}

float gcr_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t gcr_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet nan */
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float gcr_load_f32(const void *p, gcr_dtype t, int64_t i)
{
    switch (t) {
    case GCR_F32: return ((const float *)p)[i];
    case GCR_F16: return gcr_f16_to_f32(((const uint16_t *)p)[i]);
    case GCR_BF16: return gcr_bf16_to_f32(((const uint16_t *)p)[i]);
    case GCR_I32: return (float)((const int32_t *)p)[i];
    case GCR_I64: return (float)((const int64_t *)p)[i];
    case GCR_BOOL: return ((const uint8_t *)p)[i] ? 1.0f : 0.0f;
    default: return 0.0f;
    }
}

void gcr_store_f32(void *p, gcr_dtype t, int64_t i, float v)
{
    switch (t) {
    case GCR_F32: ((float *)p)[i] = v; break;
    case GCR_F16: ((uint16_t *)p)[i] = gcr_f32_to_f16(v); break;
    case GCR_BF16: ((uint16_t *)p)[i] = gcr_f32_to_bf16(v); break;
    /* float to int truncates toward zero; out-of-range and nan saturate instead of UB */
    case GCR_I32: ((int32_t *)p)[i] = isnan(v) ? 0 : v >= 2147483647.0f ? INT32_MAX
                                    : v <= -2147483648.0f ? INT32_MIN : (int32_t)v; break;
    case GCR_I64: ((int64_t *)p)[i] = isnan(v) ? 0 : v >= 9.2233720e18f ? INT64_MAX
                                    : v <= -9.2233720e18f ? INT64_MIN : (int64_t)v; break;
    case GCR_BOOL: ((uint8_t *)p)[i] = v != 0.0f; break;
    default: break;
    }
}

void gcr_load_f32_n(float *dst, int64_t ds, const void *p, gcr_dtype t, int64_t off, int64_t ps, int64_t n)
{
    switch (t) {
    case GCR_F32: {
        const float *s = (const float *)p + off;
        for (int64_t i = 0; i < n; i++) dst[i * ds] = s[i * ps];
        break;
    }
    case GCR_F16: gcr_f16_to_f32_n(dst, ds, (const uint16_t *)p + off, ps, n); break;
    case GCR_BF16: {
        const uint16_t *s = (const uint16_t *)p + off;
        for (int64_t i = 0; i < n; i++) dst[i * ds] = gcr_bf16_to_f32(s[i * ps]);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) dst[i * ds] = gcr_load_f32(p, t, off + i * ps);
    }
}

void gcr_store_f32_n(void *p, gcr_dtype t, int64_t off, int64_t ps, const float *src, int64_t ss, int64_t n)
{
    switch (t) {
    case GCR_F32: {
        float *d = (float *)p + off;
        for (int64_t i = 0; i < n; i++) d[i * ps] = src[i * ss];
        break;
    }
    case GCR_F16: gcr_f32_to_f16_n((uint16_t *)p + off, ps, src, ss, n); break;
    case GCR_BF16: {
        uint16_t *d = (uint16_t *)p + off;
        for (int64_t i = 0; i < n; i++) d[i * ps] = gcr_f32_to_bf16(src[i * ss]);
        break;
    }
    default:
        for (int64_t i = 0; i < n; i++) gcr_store_f32(p, t, off + i * ps, src[i * ss]);
    }
}
