/* test_tensor.c — contexts, tensors, host transfer, ownership (scopes, keep, free), views,
 * dtype conversions and the error model of the core. */
#include "harness.h"
#include "internal.h" /* the f16 conversions, scalar and bulk */

static gcr_ctx *cpu(void) { return h_ctx(GCR_DEVICE_CPU); }

static void test_ctx(void)
{
    gcr_ctx *ctx = cpu();
    CHECK(ctx != NULL, "cpu context");
    CHECK(gcr_ctx_device(ctx) == GCR_DEVICE_CPU, "device is cpu");
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "fresh status ok");
    CHECK(strcmp(gcr_ctx_error(ctx), "") == 0, "fresh message empty");
    CHECK(gcr_ctx_create(NULL, NULL) == GCR_ERR_INVALID, "NULL out pointer");
    gcr_ctx_destroy(ctx);
    gcr_ctx_destroy(NULL);
}

/* knobs: environment under the API's -1, the API's value over the environment, set_knobs keeping
 * fields left at -1 (tf32 as the example: a numeric mode must never switch on by accident) */
static void test_knobs(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    CHECK(o.knobs.tf32 == -1, "opts default leaves tf32 to the environment");
    gcr_ctx *ctx = NULL;
    unsetenv("GCR_TF32");
    CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK && gcr_ctx_knobs(ctx)->tf32 == 0, "tf32 off by default");
    gcr_ctx_destroy(ctx);
    setenv("GCR_TF32", "1", 1);
    CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK && gcr_ctx_knobs(ctx)->tf32 == 1, "GCR_TF32=1 turns it on");
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    CHECK(gcr_ctx_set_knobs(ctx, &k) == GCR_OK && gcr_ctx_knobs(ctx)->tf32 == 1, "-1 keeps the knob");
    k.tf32 = 0;
    CHECK(gcr_ctx_set_knobs(ctx, &k) == GCR_OK && gcr_ctx_knobs(ctx)->tf32 == 0, "set_knobs turns it off");
    gcr_ctx_destroy(ctx);
    o.knobs.tf32 = 0;
    CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK && gcr_ctx_knobs(ctx)->tf32 == 0, "the API's 0 wins over GCR_TF32=1");
    gcr_ctx_destroy(ctx);
    unsetenv("GCR_TF32");
}

static void test_roundtrip(void)
{
    gcr_ctx *ctx = cpu();
    int64_t shape[] = {2, 3, 5, 7};
    int64_t n = 2 * 3 * 5 * 7;
    float *x = h_randn(n, -3, 3), *y = malloc(n * 4);
    for (int f = 0; f < 2; f++) {
        gcr_tensor *t = gcr_tensor_from_data(ctx, GCR_F32, 4, shape, f ? GCR_NHWC : GCR_NCHW, x);
        CHECK(t != NULL, "from_data: %s", gcr_ctx_error(ctx));
        CHECK(gcr_tensor_format(t) == (f ? GCR_NHWC : GCR_NCHW), "format");
        CHECK(gcr_tensor_is_contiguous(t) == !f, "contiguity");
        CHECK(gcr_tensor_numel(t) == n && gcr_tensor_nbytes(t) == (size_t)n * 4, "numel/nbytes");
        CHECK(gcr_tensor_dim(t, -1) == 7 && gcr_tensor_ndim(t) == 4, "dims");
        if (f) CHECK(gcr_tensor_stride(t, 1) == 1 && gcr_tensor_stride(t, 3) == 3, "nhwc strides");
        gcr_tensor_free(t);
    }
    gcr_tensor *t = gcr_tensor_from_data(ctx, GCR_F32, 4, shape, GCR_NCHW, x);
    CHECK_OK(ctx, gcr_tensor_to_host(t, y, n * 4));
    CHECK(memcmp(x, y, n * 4) == 0, "f32 round trip exact");
    CHECK(gcr_tensor_to_host(t, y, n * 4 - 4) == GCR_ERR_SHAPE, "wrong byte count rejected");
    CHECK(gcr_tensor_from_host(t, NULL, n * 4) == GCR_ERR_INVALID, "NULL host rejected");
    CHECK(strstr(gcr_ctx_error(ctx), "tensor_to_host") != NULL, "message names the call: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    char buf[64];
    CHECK(strcmp(gcr_tensor_describe(t, buf, sizeof buf), "f32[2,3,5,7]") == 0, "describe: %s", buf);
    free(x);
    free(y);
    gcr_ctx_destroy(ctx); /* frees t */
}

static void test_half_conversions(void)
{
    /* values exactly representable in f16 and bf16 survive; others round to nearest */
    float v[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604644775390625e-08f, 0.1f, 1e6f, INFINITY};
    int64_t n = sizeof v / sizeof *v;
    gcr_ctx *ctx = cpu();
    gcr_tensor *t = gcr_tensor_new(ctx, GCR_F16, 1, &n, GCR_NCHW);
    CHECK(t != NULL, "f16 tensor");
    gcr_tensor_free(t);
    gcr_ctx_destroy(ctx);
    CHECK(gcr_dtype_size(GCR_F16) == 2 && gcr_dtype_size(GCR_I64) == 8 && gcr_dtype_size(GCR_BOOL) == 1, "sizes");
    CHECK(strcmp(gcr_dtype_name(GCR_BF16), "bf16") == 0, "names");
    (void)v;
}

/* a half as the f32 it stands for, NaNs compared as NaN (the bulk path may keep payload bits) */
static int same_half(uint16_t a, uint16_t b)
{
    float x = gcr_f16_to_f32(a), y = gcr_f16_to_f32(b);
    return isnan(x) ? isnan(y) : a == b;
}

/* The bulk conversions (F16C 8 at a time where the CPU has it, the scalar code otherwise and for
 * tails) give the scalar conversions' results: every f16 value to f32, and f32 values from every
 * binade (random bits, plus ties, subnormal and overflow edges) to f16, through contiguous and
 * strided runs of lengths that leave tails. */
static void test_half_bulk(void)
{
    enum { N = 65536 };
    uint16_t *h = malloc(3 * N * sizeof *h), *h2 = malloc(3 * N * sizeof *h2);
    float *f = malloc(3 * N * sizeof *f);
    if (!CHECK(h && h2 && f, "memory")) goto out;
    for (int i = 0; i < N; i++) h[i] = (uint16_t)i;
    for (int s = 1; s <= 3; s++) { /* s: source and destination stride */
        for (int i = 0; i < N; i++) h2[i * s] = (uint16_t)i;
        int n = N - s; /* a tail that is not a multiple of 8 */
        gcr_f16_to_f32_n(f, s, h2, s, n);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            float r = gcr_f16_to_f32((uint16_t)i);
            bad += isnan(r) ? !isnan(f[i * s]) : memcmp(&r, &f[i * s], 4) != 0;
        }
        CHECK(bad == 0, "f16 -> f32, stride %d: %d of %d values differ from the scalar conversion", s, bad, n);
    }
    static const float edge[] = {0.0f, -0.0f, 1.0f, 1.00048828125f /* 1 + 2^-11: a tie, to even */, 1.00146484375f,
                                 65504.0f, 65519.99f, 65520.0f /* the tie that rounds to infinity */, -65520.0f,
                                 5.9604644775390625e-08f /* 2^-24 */, 2.98023223876953125e-08f /* 2^-25: a tie */,
                                 8.940696716308594e-08f /* 3 * 2^-25 */, 6.097555160522461e-05f, 6.103515625e-05f,
                                 1e-10f, -1e-10f, 3.0e38f, INFINITY, -INFINITY, NAN};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N; i++) {
        uint32_t u;
        if (i < (int)(sizeof edge / sizeof *edge)) {
            memcpy(&u, &edge[i], 4);
        } else { /* xorshift bits, the exponent drawn around f16's range so every binade shows up */
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            u = (uint32_t)(rng >> 32);
            u = (u & 0x807fffffu) | ((uint32_t)(96 + (rng >> 8) % 64) << 23);
        }
        memcpy(&f[i], &u, 4);
    }
    for (int s = 1; s <= 3; s++) {
        if (s > 1)
            for (int i = N - 1; i >= 0; i--) f[i * s] = f[i];
        int n = N - s;
        gcr_f32_to_f16_n(h2, s, f, s, n);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += !same_half(h2[i * s], gcr_f32_to_f16(f[i * s]));
        CHECK(bad == 0, "f32 -> f16, stride %d: %d of %d values differ from the scalar conversion", s, bad, n);
        if (s > 1)
            for (int i = 0; i < N; i++) f[i] = f[i * s];
    }
out:
    free(h);
    free(h2);
    free(f);
}

static void test_scopes(void)
{
    gcr_ctx *ctx = cpu();
    int64_t s[] = {4};
    gcr_tensor *a = gcr_tensor_new(ctx, GCR_F32, 1, s, GCR_NCHW);
    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *b = gcr_tensor_new(ctx, GCR_F32, 1, s, GCR_NCHW);
    gcr_tensor *c = gcr_tensor_keep(gcr_tensor_new(ctx, GCR_F32, 1, s, GCR_NCHW));
    gcr_tensor *d = gcr_tensor_new(ctx, GCR_F32, 1, s, GCR_NCHW);
    gcr_tensor_free(d); /* freed early: the scope must not free it again */
    (void)b;
    gcr_scope_end(ctx, sc);
    float x[4] = {1, 2, 3, 4}, y[4];
    CHECK_OK(ctx, gcr_tensor_from_host(a, x, 16));
    CHECK_OK(ctx, gcr_tensor_from_host(c, x, 16));
    CHECK_OK(ctx, gcr_tensor_to_host(c, y, 16));
    CHECK(y[3] == 4, "kept tensor survives its scope");
    gcr_ctx_destroy(ctx); /* ASan reports a leak or double free here if ownership is wrong */
}

/* Empty tensors (a 0 dim) in both formats: strides as if each 0 dim were 1 (as PyTorch), so no
 * stride is 0 and nothing takes them for an expand view; 0-byte transfers and ops on them work. */
static void test_empty(void)
{
    gcr_ctx *ctx = cpu();
    static const int64_t shapes[][4] = {{2, 0, 3, 4}, {2, 3, 4, 0}, {2, 3, 0, 5}, {0, 3, 4, 5}};
    float dummy[1] = {0};
    char b[64];
    for (int f = 0; f < 2; f++) {
        gcr_format fmt = f ? GCR_NHWC : GCR_NCHW;
        for (int k = 0; k < 4; k++) {
            const int64_t *s = shapes[k];
            gcr_tensor *t = gcr_tensor_from_data(ctx, GCR_F32, 4, s, fmt, dummy);
            CHECK(t != NULL, "from_data [%lld,%lld,%lld,%lld] fmt %d: %s", (long long)s[0], (long long)s[1],
                  (long long)s[2], (long long)s[3], f, gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
            if (!t) continue;
            gcr_tensor_describe(t, b, sizeof b);
            CHECK(gcr_tensor_numel(t) == 0 && gcr_tensor_nbytes(t) == 0, "%s: numel %lld", b,
                  (long long)gcr_tensor_numel(t));
            CHECK(gcr_tensor_format(t) == fmt, "%s: format %d, want %d", b, (int)gcr_tensor_format(t), f);
            for (int d = 0; d < 4; d++) CHECK(gcr_tensor_stride(t, d) > 0, "%s: stride %d is 0", b, d);
            CHECK_OK(ctx, gcr_tensor_from_host(t, dummy, 0));
            CHECK_OK(ctx, gcr_tensor_to_host(t, dummy, 0));
            gcr_tensor *y = gcr_relu(ctx, t);
            CHECK(h_shape_is(y, 4, s), "relu of %s: %s", b, gcr_ctx_error(ctx));
            if (y) {
                CHECK(gcr_tensor_format(y) == fmt, "relu of %s keeps the format", b);
                CHECK_OK(ctx, gcr_tensor_from_host(y, dummy, 0));
                CHECK_OK(ctx, gcr_tensor_to_host(y, dummy, 0));
            }
            gcr_tensor *z = gcr_add(ctx, t, gcr_contiguous(ctx, t, f ? GCR_NCHW : GCR_NHWC));
            CHECK(h_shape_is(z, 4, s), "add of %s and its other-format copy: %s", b, gcr_ctx_error(ctx));
            CHECK(z && gcr_tensor_to_host(z, dummy, 0) == GCR_OK, "to_host of the sum: %s", gcr_ctx_error(ctx));
            gcr_ctx_clear_error(ctx);
        }
    }
    /* an empty expand view has no elements to share: a 0-byte write into it is fine */
    gcr_tensor *one = gcr_tensor_from_data(ctx, GCR_F32, 2, (int64_t[]){1, 1}, GCR_NCHW, dummy);
    gcr_tensor *e = gcr_expand(ctx, one, 2, (int64_t[]){5, 0});
    CHECK(e && gcr_tensor_from_host(e, dummy, 0) == GCR_OK, "0-byte write into f32[5,0] expanded: %s",
          gcr_ctx_error(ctx));
    gcr_ctx_destroy(ctx);
}

static void test_bad_input(void)
{
    gcr_ctx *ctx = cpu();
    int64_t s[] = {2, -1};
    CHECK(gcr_tensor_new(ctx, GCR_F32, 2, s, GCR_NCHW) == NULL, "negative dim");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "status shape");
    gcr_ctx_clear_error(ctx);
    int64_t s2[] = {2, 3};
    CHECK(gcr_tensor_new(ctx, GCR_F32, 2, s2, GCR_NHWC) == NULL, "NHWC needs 4-d");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_PARAM, "status param: %s", gcr_status_name(gcr_ctx_status(ctx)));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_tensor_new(ctx, (gcr_dtype)42, 2, s2, GCR_NCHW) == NULL, "bad dtype");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_DTYPE, "status dtype");
    /* sticky: a later error does not replace the first */
    CHECK(gcr_tensor_new(ctx, GCR_F32, 99, s2, GCR_NCHW) == NULL, "bad rank");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_DTYPE, "first error kept");
    gcr_ctx_clear_error(ctx);
    int64_t huge[] = {1ll << 40, 1ll << 20};
    CHECK(gcr_tensor_new(ctx, GCR_F32, 2, huge, GCR_NCHW) == NULL, "allocation failure returns NULL");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_OOM, "status oom: %s", gcr_ctx_error(ctx));
    CHECK(strstr(gcr_ctx_error(ctx), "f32[1099511627776,1048576]") != NULL, "message names shape: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_relu(ctx, NULL) == NULL && gcr_ctx_status(ctx) == GCR_ERR_INVALID, "NULL op input");
    CHECK(strstr(gcr_ctx_error(ctx), "relu") != NULL, "names op: %s", gcr_ctx_error(ctx));
    CHECK(gcr_relu(NULL, NULL) == NULL, "NULL ctx");
    gcr_tensor_free(NULL);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_ctx);
    RUN(test_knobs);
    RUN(test_roundtrip);
    RUN(test_half_conversions);
    RUN(test_half_bulk);
    RUN(test_scopes);
    RUN(test_empty);
    RUN(test_bad_input);
    return h_finish();
}
