/* harness.h — the tiny test harness: checks that report file:line and carry on, seeded random
 * data, tolerance comparison, and a closing line "N passed, N failed, N skipped". Each test file
 * includes it once and ends main() with `return h_finish();`.
 *
 * The library's knobs are not inherited: before main() every GCR_* variable is removed from the
 * environment except the test runner's own (GCR_TEST_*, GCR_FUZZ_*) and the two that change only
 * where kernels are cached and how much is logged (GCR_CACHE_DIR, GCR_LOG), so `GCR_FUSION=0 make
 * test` runs the same checks as `make test`. A test that depends on a knob sets it (gcr_knobs, or
 * setenv). Checks and counters may be used from several threads (test_threads); the random
 * state is per thread. */
#ifndef GCR_TEST_HARNESS_H
#define GCR_TEST_HARNESS_H

#include "gcr.h"
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static atomic_int h_pass, h_fail, h_skip;
static const char *h_case = "";

extern char **environ;

/* whether the environment variable entry "NAME=value" is a library knob the tests must not inherit */
static int h_inherited_knob(const char *entry)
{
    static const char *const keep[] = {"GCR_TEST_", "GCR_FUZZ_", "GCR_CACHE_DIR=", "GCR_LOG="};
    if (strncmp(entry, "GCR_", 4) != 0) return 0;
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (!strncmp(entry, keep[i], strlen(keep[i]))) return 0;
    return 1;
}

__attribute__((constructor)) static void h_clear_knobs(void)
{
    for (int again = 1; again;) { /* unsetenv reshapes environ: rescan after each removal */
        again = 0;
        for (char **e = environ; e && *e; e++) {
            if (!h_inherited_knob(*e)) continue;
            char name[256];
            size_t n = strcspn(*e, "=");
            if (n >= sizeof name) continue;
            memcpy(name, *e, n);
            name[n] = 0;
            unsetenv(name);
            again = 1;
            break;
        }
    }
}

/* counts one assertion; on failure prints where and why, and returns 0 */
static __attribute__((unused)) int h_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) { h_pass++; return 1; }
    h_fail++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d [%s] ", file, line, h_case);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 0;
}
#define CHECK(cond, ...) h_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/* a status check that prints the context's message when it fails */
static __attribute__((unused)) int h_check_ok(gcr_ctx *ctx, gcr_status st, const char *expr, const char *file, int line)
{
    return h_check(st == GCR_OK, file, line, "%s: %s: %s", expr, gcr_status_name(st), gcr_ctx_error(ctx));
}
/* evaluates st once */
#define CHECK_OK(ctx, st) h_check_ok((ctx), (st), #st, __FILE__, __LINE__)

static __attribute__((unused)) void h_skipped(const char *why)
{
    h_skip++;
    printf("skip [%s] %s\n", h_case, why);
}

/* A skip for want of a GPU (no CUDA device, a ctx that cannot be created, a build without CUDA).
 * Under GCR_TEST_REQUIRE_CUDA=1, set for GPU runs whose results are reported, it is a failure:
 * a broken driver must not pass as a green suite with every GPU test skipped. */
static __attribute__((unused)) void h_skip_gpu(const char *why)
{
    const char *req = getenv("GCR_TEST_REQUIRE_CUDA");
    if (req && *req && strcmp(req, "0") != 0) {
        h_fail++;
        fprintf(stderr, "FAIL [%s] GCR_TEST_REQUIRE_CUDA=%s but the GPU part did not run: %s\n", h_case, req, why);
        return;
    }
    h_skipped(why);
}

/* GCR_TEST_ONLY=<text>: run only the cases whose function name contains it (a GPU sanitizer run of
 * one kernel family's cases, say); unset or empty, every case */
static __attribute__((unused)) int h_selected(const char *name)
{
    const char *only = getenv("GCR_TEST_ONLY");
    return !only || !*only || strstr(name, only) != NULL;
}

#define RUN(fn) do { h_case = #fn; if (h_selected(#fn)) fn(); } while (0)

static __attribute__((unused)) int h_finish(void)
{
    printf("%d passed, %d failed, %d skipped\n", (int)h_pass, (int)h_fail, (int)h_skip);
    return h_fail ? 1 : 0;
}

/* xorshift64*: reproducible across platforms; each thread has its own sequence */
static _Thread_local uint64_t h_state = 0x9E3779B97F4A7C15ull;
static __attribute__((unused)) void h_seed(uint64_t s) { h_state = s ? s : 1; }
static __attribute__((unused)) uint64_t h_next(void)
{
    h_state ^= h_state >> 12;
    h_state ^= h_state << 25;
    h_state ^= h_state >> 27;
    return h_state * 2685821657736338717ull;
}
/* The fuzzers' program choices: xorshift64 on a state of its own, apart from h_state (which draws
 * the data), so a seed's program never depends on how much data was drawn. h_pick(n): in [0, n). */
static _Thread_local uint64_t h_pick_state = 1;
static __attribute__((unused)) void h_pick_seed(uint64_t s) { h_pick_state = s; }
static __attribute__((unused)) uint32_t h_pick(uint32_t n)
{
    h_pick_state ^= h_pick_state << 13;
    h_pick_state ^= h_pick_state >> 7;
    h_pick_state ^= h_pick_state << 17;
    return (uint32_t)(h_pick_state % n);
}
/* uniform in [lo, hi) */
static __attribute__((unused)) float h_uniform(float lo, float hi) { return lo + (hi - lo) * (float)((h_next() >> 40) * (1.0 / 16777216.0)); }
static __attribute__((unused)) void h_fill(float *p, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) p[i] = h_uniform(lo, hi);
}
static __attribute__((unused)) float *h_randn(int64_t n, float lo, float hi)
{
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    h_fill(p, n, lo, hi);
    return p;
}

/* |got - ref| <= atol + rtol * |ref| everywhere (NaN never passes); reports the worst element */
static __attribute__((unused)) int h_close_at(const float *got, const float *ref, int64_t n, float atol, float rtol, const char *what,
                      const char *file, int line)
{
    int64_t bad = -1, nbad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]), lim = atol + rtol * fabs((double)ref[i]);
        if (!(d <= lim) || isnan(got[i]) != isnan(ref[i])) {
            nbad++;
            if (bad < 0 || d - lim > worst) { worst = d - lim; bad = i; }
        }
    }
    if (bad < 0) return h_check(1, file, line, "");
    return h_check(0, file, line, "%s: %lld of %lld elements differ; worst at %lld: got %.7g want %.7g", what,
                   (long long)nbad, (long long)n, (long long)bad, got[bad], ref[bad]);
}
#define CHECK_CLOSE(got, ref, n, atol, rtol, what) h_close_at(got, ref, n, atol, rtol, what, __FILE__, __LINE__)

/* a context on the given device, or NULL (after a skip line) when that device is absent */
static __attribute__((unused)) gcr_ctx *h_ctx(gcr_device dev)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = dev;
    gcr_ctx *ctx = NULL;
    gcr_status s = gcr_ctx_create(&ctx, &o);
    if (s != GCR_OK) {
        char why[96];
        snprintf(why, sizeof why, "no CUDA device (context creation: %s)", gcr_status_name(s));
        if (dev == GCR_DEVICE_CUDA) h_skip_gpu(why);
        else CHECK(0, "cannot create a context on device %d", (int)dev);
        return NULL;
    }
    return ctx;
}

/* reads a tensor back as f32 (any dtype, any layout); the caller frees the result */
static __attribute__((unused)) float *h_read(gcr_tensor *t)
{
    gcr_ctx *ctx = gcr_tensor_ctx(t);
    gcr_tensor *f = gcr_tensor_dtype(t) == GCR_F32 ? t : gcr_cast(ctx, t, GCR_F32);
    int64_t n = gcr_tensor_numel(t);
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (!f || gcr_tensor_to_host(f, p, (size_t)n * 4) != GCR_OK) {
        CHECK(0, "reading a tensor back failed: %s", gcr_ctx_error(ctx));
        for (int64_t i = 0; i < n; i++) p[i] = NAN;
    }
    if (f && f != t) gcr_tensor_free(f);
    return p;
}

/* a tensor of dtype dt and format fmt holding the f32 values in host (converted on the device) */
static __attribute__((unused)) gcr_tensor *h_tensor(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape, gcr_format fmt,
                            const float *host)
{
    gcr_tensor *f = gcr_tensor_from_data(ctx, GCR_F32, ndim, shape, fmt, host);
    if (!f || dt == GCR_F32) return f;
    gcr_tensor *t = gcr_cast(ctx, f, dt);
    gcr_tensor_free(f);
    return t;
}

/* a dense tensor of dtype dt and format fmt holding fresh random values in [lo, hi) */
static __attribute__((unused)) gcr_tensor *h_rand_tensor(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape,
                                                         gcr_format fmt, float lo, float hi)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    float *h = h_randn(n, lo, hi);
    gcr_tensor *t = h_tensor(ctx, dt, ndim, shape, fmt, h);
    free(h);
    return t;
}

/* whether t exists and has exactly the nd dims s */
static __attribute__((unused)) int h_shape_is(gcr_tensor *t, int nd, const int64_t *s)
{
    if (!t || gcr_tensor_ndim(t) != nd) return 0;
    for (int d = 0; d < nd; d++)
        if (gcr_tensor_dim(t, d) != s[d]) return 0;
    return 1;
}

/* removes folder path and everything in it (a test's temporary cache or dump folder), as a check */
static __attribute__((unused)) void h_rmtree(const char *path)
{
    char cmd[4200];
    const int n = snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    CHECK(n > 0 && n < (int)sizeof cmd && system(cmd) == 0, "rm -rf %s", path);
}

/* the whole file at path as a NUL-terminated string (empty when it cannot be read in full), NULL
 * when it cannot be opened; the caller frees it */
static __attribute__((unused)) char *h_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    fclose(f);
    return s;
}

/* A directory path longer than any fixed path buffer: top, then 5 levels of 250 characters (1,250
 * past top), malloc'ed; the first `made` directories of that chain (top counts as the first) are
 * created, so a test can leave the deepest ones to the library */
static __attribute__((unused)) char *h_long_dir(const char *top, int made)
{
    char *deep = malloc(strlen(top) + 5 * 251 + 1);
    int n = sprintf(deep, "%s", top);
    if (made > 0) mkdir(deep, 0777);
    for (int level = 0; level < 5; level++) {
        deep[n++] = '/';
        for (int c = 0; c < 250; c++) deep[n++] = (char)('a' + level);
        deep[n] = 0;
        if (level + 1 < made) mkdir(deep, 0777);
    }
    return deep;
}

/* Layouts a test input can take (h_view); each holds the same logical values:
 * H_DENSE row-major; H_NHWC channels-last (4-d only, else dense); H_PERMUTED a base of reversed
 * shape viewed back through gcr_permute (1-d and 0-d: dense); H_SLICED every other element of a
 * wider base along the last dim (gcr_slice step 2; 0-d: dense). */
enum { H_DENSE, H_NHWC, H_PERMUTED, H_SLICED, H_LAYOUTS };
static __attribute__((unused)) const char *h_layout_name(int l)
{
    static const char *n[] = {"dense", "nhwc", "permuted", "sliced"};
    return l >= 0 && l < H_LAYOUTS ? n[l] : "?";
}

/* the layout h_view really builds for a tensor of ndim dims (the fallbacks listed above) */
static __attribute__((unused)) int h_view_layout(int ndim, int layout)
{
    if (layout == H_NHWC && ndim != 4) layout = H_DENSE;
    if (layout == H_PERMUTED && ndim < 2) layout = H_DENSE;
    if (layout == H_SLICED && ndim < 1) layout = H_DENSE;
    return layout;
}

/* h_view without its check (counts no assertion): NULL when the tensor cannot be made */
static __attribute__((unused)) gcr_tensor *h_view_unchecked(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape,
                                                            int layout, const float *host)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    layout = h_view_layout(ndim, layout);
    if (layout == H_DENSE || layout == H_NHWC)
        return h_tensor(ctx, dt, ndim, shape, layout == H_NHWC ? GCR_NHWC : GCR_NCHW, host);
    int64_t bshape[GCR_MAX_DIMS], bstr[GCR_MAX_DIMS], bn = 1;
    for (int d = 0; d < ndim; d++)
        bshape[d] = layout == H_PERMUTED ? shape[ndim - 1 - d] : d == ndim - 1 ? 2 * shape[d] + 1 : shape[d];
    for (int d = ndim - 1; d >= 0; d--) {
        bstr[d] = bn;
        bn *= bshape[d];
    }
    float *base = malloc((size_t)(bn > 0 ? bn : 1) * sizeof *base);
    for (int64_t i = 0; i < bn; i++) base[i] = 999.0f; /* never read by a correct kernel */
    for (int64_t l = 0; l < n; l++) {
        int64_t rem = l, off = 0;
        for (int d = ndim - 1; d >= 0; d--) {
            int64_t i = rem % shape[d];
            rem /= shape[d];
            off += layout == H_PERMUTED ? i * bstr[ndim - 1 - d] : d == ndim - 1 ? (2 * i + 1) * bstr[d] : i * bstr[d];
        }
        base[off] = host[l];
    }
    gcr_tensor *b = h_tensor(ctx, dt, ndim, bshape, GCR_NCHW, base), *t = NULL;
    free(base);
    if (b && layout == H_PERMUTED) {
        int perm[GCR_MAX_DIMS];
        for (int d = 0; d < ndim; d++) perm[d] = ndim - 1 - d;
        t = gcr_permute(ctx, b, perm);
    } else if (b) {
        t = gcr_slice(ctx, b, ndim - 1, 1, bshape[ndim - 1], 2);
    }
    gcr_tensor_free(b); /* the view keeps the storage */
    return t;
}

/* a tensor of dtype dt in the given layout holding the f32 values in host (row-major, logical
 * order); NULL after a failed check */
static __attribute__((unused)) gcr_tensor *h_view(gcr_ctx *ctx, gcr_dtype dt, int ndim, const int64_t *shape, int layout,
                          const float *host)
{
    gcr_tensor *t = h_view_unchecked(ctx, dt, ndim, shape, layout, host);
    CHECK(t != NULL, "h_view %s: %s", h_layout_name(h_view_layout(ndim, layout)), gcr_ctx_error(ctx));
    return t;
}

#endif
