/* test_movement.c — views and copies on the CPU, compared exactly with index arithmetic done
 * here: reshape (-1; a view of contiguous tensors, a copy of strided ones), flatten, permute,
 * slice (steps, negative and out-of-range bounds), contiguous to NHWC and back (raw bytes, any
 * dtype), concat on each axis with NHWC/strided/mixed inputs, dropout, host transfer of NHWC and
 * strided tensors, and expand (stride-0 views) with its composites repeat and nearest upsampling. */
#include "harness.h"
#include <stdbool.h>

static int64_t numel_of(int nd, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

/* unravels l over shape s[nd] into idx */
static void unravel(int64_t l, int nd, const int64_t *s, int64_t *idx)
{
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = l % s[d];
        l /= s[d];
    }
}

static int64_t ravel(int nd, const int64_t *s, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < nd; d++) o = o * s[d] + idx[d];
    return o;
}

static void test_reshape(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {3, 5, 7}, n = 105;
    float *host = h_randn(n, -1, 1);
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 3, s, GCR_NCHW, host);
    gcr_tensor *y = gcr_reshape(ctx, x, 2, (int64_t[]){-1, 7});
    CHECK(h_shape_is(y, 2, (int64_t[]){15, 7}) && gcr_tensor_is_contiguous(y), "reshape -1: %s", gcr_ctx_error(ctx));
    float *got = h_read(y);
    CHECK(memcmp(got, host, n * 4) == 0, "reshape keeps row-major order");
    free(got);
    /* a view: writing the source shows through */
    float *h2 = h_randn(n, -1, 1);
    CHECK_OK(ctx, gcr_tensor_from_host(x, h2, n * 4));
    got = h_read(y);
    CHECK(memcmp(got, h2, n * 4) == 0, "reshape of contiguous shares storage");
    free(got);
    /* freeing the source keeps the view's storage alive (ASan checks) */
    gcr_tensor_free(x);
    got = h_read(y);
    CHECK(memcmp(got, h2, n * 4) == 0, "view outlives its source");
    free(got);

    /* reshape of a permuted tensor is a copy in logical order */
    gcr_tensor *p = h_view(ctx, GCR_F32, 3, s, H_PERMUTED, host);
    gcr_tensor *q = gcr_reshape(ctx, p, 3, (int64_t[]){7, -1, 3});
    CHECK(h_shape_is(q, 3, (int64_t[]){7, 5, 3}), "reshape of permuted: %s", gcr_ctx_error(ctx));
    got = h_read(q);
    CHECK(memcmp(got, host, n * 4) == 0, "reshape of permuted follows logical order");
    free(got);
    CHECK_OK(ctx, gcr_tensor_from_host(p, h2, n * 4)); /* the copy does not see later writes */
    got = h_read(q);
    CHECK(memcmp(got, host, n * 4) == 0, "reshape of permuted is a copy");
    free(got);
    /* 0-d and to 0-d, and to an empty shape */
    float one = 4.5f;
    gcr_tensor *z = gcr_tensor_from_data(ctx, GCR_F32, 1, (int64_t[]){1}, GCR_NCHW, &one);
    gcr_tensor *z0 = gcr_reshape(ctx, z, 0, NULL);
    CHECK(z0 && gcr_tensor_ndim(z0) == 0 && gcr_tensor_numel(z0) == 1, "reshape to 0-d");
    gcr_tensor *e = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){0, 4}, GCR_NCHW);
    gcr_tensor *e2 = gcr_reshape(ctx, e, 3, (int64_t[]){2, 0, 3});
    CHECK(h_shape_is(e2, 3, (int64_t[]){2, 0, 3}), "reshape of empty");
    /* sliced (strided) source, every dtype: still a copy in logical order */
    int64_t sh[] = {4, 6};
    for (int dt = GCR_F32; dt <= GCR_BF16; dt++) {
        gcr_tensor *v = h_view(ctx, (gcr_dtype)dt, 2, sh, H_SLICED, host);
        gcr_tensor *r = gcr_reshape(ctx, v, 1, (int64_t[]){-1});
        float *a = h_read(v), *b = h_read(r);
        CHECK(r && gcr_tensor_numel(r) == 24 && memcmp(a, b, 24 * 4) == 0, "reshape of sliced %s", gcr_dtype_name((gcr_dtype)dt));
        free(a), free(b);
    }
    free(host);
    free(h2);
    gcr_ctx_destroy(ctx);
}

static void test_flatten(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7}, n = 210;
    float *host = h_randn(n, -1, 1);
    static const struct { int a, b, nd; int64_t s[4]; } cases[] = {
        {1, -1, 2, {2, 105}}, {0, -1, 1, {210}}, {1, 2, 3, {2, 15, 7}}, {-2, -1, 3, {2, 3, 35}}, {2, 2, 4, {2, 3, 5, 7}},
    };
    for (int l = 0; l < H_LAYOUTS; l++)
        for (int k = 0; k < 5; k++) {
            gcr_tensor *x = h_view(ctx, GCR_F32, 4, s, l, host);
            gcr_tensor *y = gcr_flatten(ctx, x, cases[k].a, cases[k].b);
            CHECK(h_shape_is(y, cases[k].nd, cases[k].s), "flatten %d..%d %s: %s", cases[k].a, cases[k].b, h_layout_name(l),
                  gcr_ctx_error(ctx));
            float *got = h_read(y);
            CHECK(memcmp(got, host, n * 4) == 0, "flatten %d..%d %s values", cases[k].a, cases[k].b, h_layout_name(l));
            free(got);
            gcr_tensor_free(y);
            gcr_tensor_free(x);
        }
    free(host);
    gcr_ctx_destroy(ctx);
}

static void test_permute(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7}, n = 210;
    float *host = h_randn(n, -1, 1);
    static const int perms[][4] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 2, 3, 1}, {1, 0, 3, 2}, {2, 0, 1, 3}};
    for (int l = 0; l < H_LAYOUTS; l++)
        for (int k = 0; k < 5; k++)
            for (int dt = GCR_F32; dt <= GCR_BF16; dt++) {
                uint64_t sc = gcr_scope_begin(ctx);
                gcr_tensor *x = h_view(ctx, (gcr_dtype)dt, 4, s, l, host);
                gcr_tensor *y = gcr_permute(ctx, x, perms[k]);
                int64_t ps[4];
                for (int d = 0; d < 4; d++) ps[d] = s[perms[k][d]];
                if (CHECK(h_shape_is(y, 4, ps), "permute: %s", gcr_ctx_error(ctx))) {
                    float *xv = h_read(x), *got = h_read(y);
                    int64_t bad = -1;
                    for (int64_t i = 0; i < n && bad < 0; i++) {
                        int64_t pi[4], xi[4];
                        unravel(i, 4, ps, pi);
                        for (int d = 0; d < 4; d++) xi[perms[k][d]] = pi[d];
                        if (got[i] != xv[ravel(4, s, xi)]) bad = i;
                    }
                    CHECK(bad < 0, "permute #%d of %s %s: element %lld", k, h_layout_name(l), gcr_dtype_name((gcr_dtype)dt),
                          (long long)bad);
                    free(xv), free(got);
                }
                gcr_scope_end(ctx, sc);
            }
    free(host);
    gcr_ctx_destroy(ctx);
}

static void test_slice(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {4, 9, 6}, n = 216;
    float *host = h_randn(n, -1, 1);
    /* dim, start, end, step, expected length */
    static const struct { int dim; int64_t a, b, st, len; } cases[] = {
        {1, 0, 9, 1, 9},    {1, 1, 8, 3, 3},   {1, -4, -1, 1, 3}, {1, -100, 100, 4, 3}, {2, 5, 2, 1, 0},
        {-1, 1, 6, 2, 3},   {0, 3, 4, 1, 1},   {0, -1, 4, 2, 1},  {1, 8, 9, 5, 1},      {2, 0, -1, 10, 1},
    };
    for (int l = 0; l < H_LAYOUTS; l++)
        for (int k = 0; k < 10; k++) {
            uint64_t sc = gcr_scope_begin(ctx);
            gcr_tensor *x = h_view(ctx, GCR_F32, 3, s, l, host);
            gcr_tensor *y = gcr_slice(ctx, x, cases[k].dim, cases[k].a, cases[k].b, cases[k].st);
            int d = cases[k].dim < 0 ? cases[k].dim + 3 : cases[k].dim;
            int64_t ys[3] = {s[0], s[1], s[2]};
            ys[d] = cases[k].len;
            if (CHECK(h_shape_is(y, 3, ys), "slice #%d %s: %s", k, h_layout_name(l), gcr_ctx_error(ctx))) {
                int64_t start = cases[k].a < 0 ? cases[k].a + s[d] : cases[k].a;
                if (start < 0) start = 0;
                float *got = h_read(y);
                int64_t bad = -1, yn = numel_of(3, ys);
                for (int64_t i = 0; i < yn && bad < 0; i++) {
                    int64_t idx[3];
                    unravel(i, 3, ys, idx);
                    idx[d] = start + idx[d] * cases[k].st;
                    if (got[i] != host[ravel(3, s, idx)]) bad = i;
                }
                CHECK(bad < 0, "slice #%d %s: element %lld", k, h_layout_name(l), (long long)bad);
                free(got);
            }
            gcr_scope_end(ctx, sc);
        }
    /* slice of a slice, then a copy of it */
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 3, s, GCR_NCHW, host);
    gcr_tensor *a = gcr_slice(ctx, x, 1, 1, 9, 2);      /* rows 1,3,5,7 */
    gcr_tensor *b = gcr_slice(ctx, a, 1, -3, 100, 1);   /* rows 3,5,7 */
    gcr_tensor *c = gcr_contiguous(ctx, b, GCR_NCHW);
    CHECK(h_shape_is(c, 3, (int64_t[]){4, 3, 6}) && gcr_tensor_is_contiguous(c), "slice of slice");
    float *got = h_read(c);
    int ok = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 6; k++) ok &= got[(i * 3 + j) * 6 + k] == host[(i * 9 + 3 + 2 * j) * 6 + k];
    CHECK(ok, "slice of slice values");
    free(got);
    free(host);
    gcr_ctx_destroy(ctx);
}

/* contiguous moves raw bytes: exact for every dtype, including i64 beyond f32 precision */
static void test_contiguous(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7}, n = 210;
    const gcr_dtype all[] = {GCR_F32, GCR_F16, GCR_BF16, GCR_I32, GCR_I64, GCR_BOOL};
    for (int k = 0; k < 6; k++) {
        gcr_dtype dt = all[k];
        size_t es = gcr_dtype_size(dt);
        unsigned char *src = malloc(n * es), *back = malloc(n * es);
        for (size_t i = 0; i < n * es; i++) src[i] = (unsigned char)h_next();
        if (dt == GCR_BOOL)
            for (int64_t i = 0; i < n; i++) src[i] &= 1;
        if (dt == GCR_F16 || dt == GCR_BF16) /* keep bit patterns finite so nothing canonicalises them */
            for (int64_t i = 0; i < n; i++) src[2 * i + 1] &= 0x3f;
        gcr_tensor *x = gcr_tensor_from_data(ctx, dt, 4, s, GCR_NCHW, src);
        gcr_tensor *h = gcr_contiguous(ctx, x, GCR_NHWC);
        CHECK(h && gcr_tensor_format(h) == GCR_NHWC && gcr_tensor_stride(h, 1) == 1, "to NHWC (%s): %s",
              gcr_dtype_name(dt), gcr_ctx_error(ctx));
        /* the storage order of NHWC is [N,H,W,C]: view it that way and compare */
        gcr_tensor *mem = gcr_permute(ctx, h, (int[]){0, 2, 3, 1});
        CHECK(mem && gcr_tensor_is_contiguous(mem), "NHWC storage is N,H,W,C");
        CHECK_OK(ctx, gcr_tensor_to_host(mem, back, n * es));
        int ok = 1;
        for (int64_t i = 0; i < 2; i++)
            for (int64_t c = 0; c < 3; c++)
                for (int64_t y = 0; y < 5; y++)
                    for (int64_t w = 0; w < 7; w++)
                        ok &= !memcmp(back + (((i * 5 + y) * 7 + w) * 3 + c) * es, src + (((i * 3 + c) * 5 + y) * 7 + w) * es, es);
        CHECK(ok, "NHWC storage holds the values (%s)", gcr_dtype_name(dt));
        gcr_tensor *b = gcr_contiguous(ctx, h, GCR_NCHW);
        CHECK(b && gcr_tensor_is_contiguous(b), "back to NCHW");
        CHECK_OK(ctx, gcr_tensor_to_host(b, back, n * es));
        CHECK(memcmp(back, src, n * es) == 0, "NCHW -> NHWC -> NCHW is exact (%s)", gcr_dtype_name(dt));
        /* NHWC tensor read directly: to_host gives logical order */
        CHECK_OK(ctx, gcr_tensor_to_host(h, back, n * es));
        CHECK(memcmp(back, src, n * es) == 0, "to_host of NHWC is logical order (%s)", gcr_dtype_name(dt));
        /* a permuted view made contiguous */
        gcr_tensor *p = gcr_permute(ctx, x, (int[]){3, 1, 0, 2});
        gcr_tensor *pc = gcr_contiguous(ctx, p, GCR_NCHW);
        CHECK_OK(ctx, gcr_tensor_to_host(pc, back, n * es));
        ok = 1;
        for (int64_t i = 0; i < n; i++) {
            int64_t pi[4], xi[4], ps[4] = {7, 3, 2, 5};
            unravel(i, 4, ps, pi);
            xi[3] = pi[0], xi[1] = pi[1], xi[0] = pi[2], xi[2] = pi[3];
            ok &= !memcmp(back + i * es, src + ravel(4, s, xi) * es, es);
        }
        CHECK(ok, "contiguous of permuted (%s)", gcr_dtype_name(dt));
        free(src), free(back);
    }
    gcr_ctx_destroy(ctx);
}

static void test_concat(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    for (int axis = -1; axis < 4; axis++)
        for (int mix = 0; mix < 6; mix++)
            for (int dt = GCR_F32; dt <= GCR_BF16; dt++) {
                uint64_t sc = gcr_scope_begin(ctx);
                int a = axis < 0 ? 3 : axis;
                int64_t lens[3] = {2, a == 1 ? 4 : 1, 3}; /* [N,1,H,W] would be NCHW and NHWC at once */
                gcr_tensor *xs[3];
                float *vals[3];
                int64_t shp[3][4], tot = 0;
                /* mix 0: all dense; 1: all NHWC; 2: all permuted; 3: all sliced; 4-5: mixed layouts */
                for (int i = 0; i < 3; i++) {
                    int64_t base[4] = {2, 3, 4, 5};
                    base[a] = lens[i];
                    memcpy(shp[i], base, sizeof base);
                    int l = mix < 4 ? mix : (i + mix) % H_LAYOUTS;
                    vals[i] = h_randn(numel_of(4, base), -2, 2);
                    xs[i] = h_view(ctx, (gcr_dtype)dt, 4, base, l, vals[i]);
                    tot += lens[i];
                }
                gcr_tensor *y = gcr_concat(ctx, xs, 3, axis);
                int64_t ys[4] = {2, 3, 4, 5};
                ys[a] = tot;
                char what[96];
                snprintf(what, sizeof what, "concat axis %d mix %d %s", axis, mix, gcr_dtype_name((gcr_dtype)dt));
                if (CHECK(h_shape_is(y, 4, ys), "%s: %s", what, gcr_ctx_error(ctx))) {
                    if (mix == 1) CHECK(gcr_tensor_format(y) == GCR_NHWC, "%s: all-NHWC inputs give NHWC", what);
                    float *got = h_read(y), *ins[3];
                    for (int i = 0; i < 3; i++) ins[i] = h_read(xs[i]); /* rounded values */
                    int64_t bad = -1, yn = numel_of(4, ys);
                    for (int64_t e = 0; e < yn && bad < 0; e++) {
                        int64_t idx[4];
                        unravel(e, 4, ys, idx);
                        int i = 0;
                        while (idx[a] >= lens[i]) idx[a] -= lens[i++];
                        if (got[e] != ins[i][ravel(4, shp[i], idx)]) bad = e;
                    }
                    CHECK(bad < 0, "%s: element %lld", what, (long long)bad);
                    free(got);
                    for (int i = 0; i < 3; i++) free(ins[i]);
                }
                gcr_ctx_clear_error(ctx);
                for (int i = 0; i < 3; i++) free(vals[i]);
                gcr_scope_end(ctx, sc);
            }
    /* integer dtypes and a single input; an empty input contributes nothing */
    int64_t v1[] = {((int64_t)1 << 50) + 1, -3}, v2[] = {7, 8, 9, 10}, out[6];
    gcr_tensor *a = gcr_tensor_from_data(ctx, GCR_I64, 2, (int64_t[]){1, 2}, GCR_NCHW, v1);
    gcr_tensor *b = gcr_tensor_from_data(ctx, GCR_I64, 2, (int64_t[]){2, 2}, GCR_NCHW, v2);
    gcr_tensor *e = gcr_tensor_new(ctx, GCR_I64, 2, (int64_t[]){0, 2}, GCR_NCHW);
    gcr_tensor *y = gcr_concat(ctx, (gcr_tensor *[]){a, e, b}, 3, 0);
    CHECK(h_shape_is(y, 2, (int64_t[]){3, 2}), "i64 concat: %s", gcr_ctx_error(ctx));
    CHECK_OK(ctx, gcr_tensor_to_host(y, out, 48));
    CHECK(out[0] == v1[0] && out[1] == -3 && out[2] == 7 && out[5] == 10, "i64 concat exact");
    gcr_tensor *one = gcr_concat(ctx, &b, 1, 1);
    CHECK_OK(ctx, gcr_tensor_to_host(one, out, 32));
    CHECK(h_shape_is(one, 2, (int64_t[]){2, 2}) && out[3] == 10, "concat of one input");
    gcr_ctx_destroy(ctx);
}

static void test_dropout(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 2, (int64_t[]){3, 4}, GCR_NCHW);
    CHECK(gcr_dropout(ctx, x, 0.5f) == x, "dropout returns x itself");
    CHECK(gcr_dropout(ctx, x, 0.0f) == x, "dropout p=0");
    gcr_ctx_destroy(ctx);
}

/* host transfer: dense row-major on the host whatever the layout on the device */
static void test_host_transfer(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t s[] = {2, 3, 5, 7}, n = 210;
    float *host = h_randn(n, -1, 1), *back = malloc(n * 4);
    /* NHWC: from_host scatters, to_host gathers */
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 4, s, GCR_NHWC);
    CHECK_OK(ctx, gcr_tensor_from_host(x, host, n * 4));
    CHECK_OK(ctx, gcr_tensor_to_host(x, back, n * 4));
    CHECK(memcmp(back, host, n * 4) == 0, "NHWC round trip");
    gcr_tensor *mem = gcr_permute(ctx, x, (int[]){0, 2, 3, 1});
    CHECK_OK(ctx, gcr_tensor_to_host(mem, back, n * 4));
    CHECK(back[1] == host[35] && back[3] == host[1], "NHWC storage is channels-last");
    /* from_host into a sliced view writes only the view's elements */
    int64_t bs[] = {4, 9}, n2 = 36;
    float base[36], vals[12];
    for (int i = 0; i < 36; i++) base[i] = (float)i;
    for (int i = 0; i < 12; i++) vals[i] = -1.0f - (float)i;
    gcr_tensor *b = gcr_tensor_from_data(ctx, GCR_F32, 2, bs, GCR_NCHW, base);
    gcr_tensor *v = gcr_slice(ctx, b, 1, 1, 9, 3); /* columns 1, 4, 7 */
    CHECK(h_shape_is(v, 2, (int64_t[]){4, 3}), "slice view");
    CHECK_OK(ctx, gcr_tensor_from_host(v, vals, 48));
    float all[36], vb[12];
    CHECK_OK(ctx, gcr_tensor_to_host(b, all, sizeof all));
    int ok = 1;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 9; j++) {
            float want = j % 3 == 1 ? vals[i * 3 + j / 3] : (float)(i * 9 + j);
            ok &= all[i * 9 + j] == want;
        }
    CHECK(ok, "from_host into a strided view touches only its elements");
    CHECK_OK(ctx, gcr_tensor_to_host(v, vb, sizeof vb));
    CHECK(memcmp(vb, vals, sizeof vb) == 0, "to_host of a strided view");
    /* a permuted view of f16 data */
    gcr_tensor *p = h_view(ctx, GCR_F16, 4, s, H_PERMUTED, host);
    uint16_t hb[210];
    CHECK_OK(ctx, gcr_tensor_to_host(p, hb, sizeof hb));
    gcr_tensor *d = h_tensor(ctx, GCR_F16, 4, s, GCR_NCHW, host);
    uint16_t hd[210];
    CHECK_OK(ctx, gcr_tensor_to_host(d, hd, sizeof hd));
    CHECK(memcmp(hb, hd, sizeof hb) == 0, "to_host of permuted f16 gives logical order");
    (void)n2;
    free(host), free(back);
    gcr_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- expand and its composites */

/* the element of x (shape xs[xnd]) that element i (row-major over o[nd]) of a broadcast of x reads:
 * x's dims are the trailing ones; a dim of size 1 reads index 0, any other index idx % xs (which
 * is idx itself for an expand, and the tiling of repeat) */
static int64_t src_of(int64_t i, int nd, const int64_t *o, int xnd, const int64_t *xs)
{
    int64_t idx[GCR_MAX_DIMS], src[GCR_MAX_DIMS];
    unravel(i, nd, o, idx);
    for (int d = 0; d < xnd; d++) src[d] = idx[d + nd - xnd] % xs[d];
    return ravel(xnd, xs, src);
}

typedef struct bcase { int nd; int64_t arg[5], got[5]; } bcase;

/* expand (or repeat) of x [xs] by each case's argument, from every layout of x: the result has the
 * case's shape and element i is x's element src_of(i), read directly, by a pointwise op and by a
 * copy; an expand has stride 0 on its broadcast dims, a repeat is a dense copy */
static void broadcast_cases(bool expand, int xnd, const int64_t *xs, const bcase *cases, int nc)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    float *host = h_randn(numel_of(xnd, xs), -1, 1);
    const char *name = expand ? "expand" : "repeat";
    for (int l = 0; l < H_LAYOUTS; l++)
        for (int k = 0; k < nc; k++) {
            uint64_t sc = gcr_scope_begin(ctx);
            int nd = cases[k].nd;
            const int64_t *o = cases[k].got;
            gcr_tensor *x = h_view(ctx, GCR_F32, xnd, xs, l, host);
            gcr_tensor *y = expand ? gcr_expand(ctx, x, nd, cases[k].arg) : gcr_repeat(ctx, x, nd, cases[k].arg);
            if (!CHECK(h_shape_is(y, nd, o) && (expand || gcr_tensor_is_contiguous(y)), "%s #%d %s: %s", name, k,
                       h_layout_name(l), gcr_ctx_error(ctx))) {
                gcr_ctx_clear_error(ctx);
                gcr_scope_end(ctx, sc);
                continue;
            }
            for (int d = 0; expand && d < nd; d++) {
                int xd = d - (nd - xnd);
                if (o[d] > 1 && (xd < 0 || xs[xd] == 1))
                    CHECK(gcr_tensor_stride(y, d) == 0, "expand #%d %s: dim %d stride 0", k, h_layout_name(l), d);
            }
            int64_t n = numel_of(nd, o);
            gcr_tensor *twice = gcr_add(ctx, y, y), *copy = gcr_contiguous(ctx, y, GCR_NCHW);
            float *got = h_read(y), *got2 = h_read(twice), *got3 = h_read(copy);
            int64_t bad = -1;
            for (int64_t i = 0; i < n && bad < 0; i++) {
                float want = host[src_of(i, nd, o, xnd, xs)];
                if (got[i] != want || got2[i] != 2 * want || got3[i] != want) bad = i;
            }
            CHECK(bad < 0, "%s #%d %s: element %lld (result, add, contiguous)", name, k, h_layout_name(l), (long long)bad);
            free(got), free(got2), free(got3);
            gcr_scope_end(ctx, sc);
        }
    free(host);
    gcr_ctx_destroy(ctx);
}

/* a view with stride 0 on the broadcast dims (new dims, -1, size 0), its storage shared with x, and
 * the refusals (shapes, a write into it) */
static void test_expand(void)
{
    int64_t xs[3] = {3, 1, 5};
    static const bcase cases[] = {
        {3, {3, 4, 5}, {3, 4, 5}},       {4, {2, 3, 7, 5}, {2, 3, 7, 5}}, {3, {-1, 6, -1}, {3, 6, 5}},
        {3, {3, 1, 5}, {3, 1, 5}},       {5, {2, 1, 3, 0, 5}, {2, 1, 3, 0, 5}}, {3, {3, 0, 5}, {3, 0, 5}},
    };
    broadcast_cases(true, 3, xs, cases, (int)(sizeof cases / sizeof *cases));
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    float *host = h_randn(15, -1, 1);
    /* the view shares x's storage: new data in x shows through it */
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 3, xs, GCR_NCHW, host);
    gcr_tensor *y = gcr_expand(ctx, x, 3, (int64_t[]){3, 2, 5});
    float neg[15], back[30];
    for (int i = 0; i < 15; i++) neg[i] = -host[i];
    CHECK_OK(ctx, gcr_tensor_from_host(x, neg, sizeof neg));
    CHECK_OK(ctx, gcr_tensor_to_host(y, back, sizeof back));
    CHECK(back[0] == neg[0] && back[5] == neg[0] && back[29] == neg[14], "expand is a view of x's storage");
    CHECK(gcr_tensor_from_host(y, back, sizeof back) == GCR_ERR_INVALID && strstr(gcr_ctx_error(ctx), "expand"),
          "a write into an expand view is refused: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    /* refusals */
    static const struct { int nd; int64_t s[4]; gcr_status st; } bad[] = {
        {3, {3, 2, 6}, GCR_ERR_SHAPE},     /* 5 is not size 1 */
        {2, {1, 5}, GCR_ERR_SHAPE},        /* fewer dims than x */
        {4, {-1, 3, 1, 5}, GCR_ERR_SHAPE}, /* -1 on a new dim */
        {3, {3, -2, 5}, GCR_ERR_SHAPE},
        {9, {0}, GCR_ERR_SHAPE},           /* beyond GCR_MAX_DIMS */
    };
    for (int k = 0; k < (int)(sizeof bad / sizeof *bad); k++) {
        CHECK(gcr_expand(ctx, x, bad[k].nd, bad[k].s) == NULL && gcr_ctx_status(ctx) == bad[k].st &&
                  !strncmp(gcr_ctx_error(ctx), "expand: ", 8),
              "expand refusal #%d: %s", k, gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
    }
    CHECK(gcr_expand(ctx, x, 3, NULL) == NULL && gcr_ctx_status(ctx) == GCR_ERR_INVALID, "expand: NULL shape");
    gcr_ctx_clear_error(ctx);
    free(host);
    gcr_ctx_destroy(ctx);
}

/* repeat tiles each dim whole, as PyTorch's repeat, from every layout */
static void test_repeat(void)
{
    int64_t xs[2] = {2, 3};
    static const bcase cases[] = {
        {2, {2, 3}, {4, 9}}, {3, {3, 1, 2}, {3, 2, 6}}, {2, {1, 1}, {2, 3}}, {2, {2, 0}, {4, 0}}, {4, {2, 1, 2, 2}, {2, 1, 4, 6}},
    };
    broadcast_cases(false, 2, xs, cases, (int)(sizeof cases / sizeof *cases));
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    gcr_tensor *x = gcr_tensor_new(ctx, GCR_F32, 2, xs, GCR_NCHW);
    CHECK(gcr_repeat(ctx, x, 1, (int64_t[]){2}) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "repeat: fewer reps than dims");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_repeat(ctx, x, 2, (int64_t[]){2, -1}) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "repeat: negative");
    gcr_ctx_clear_error(ctx);
    gcr_tensor *x5 = gcr_tensor_new(ctx, GCR_F32, 5, (int64_t[]){1, 1, 1, 1, 1}, GCR_NCHW);
    CHECK(gcr_repeat(ctx, x5, 5, (int64_t[]){2, 2, 2, 2, 2}) == NULL && gcr_ctx_status(ctx) == GCR_ERR_UNSUPPORTED &&
              !strncmp(gcr_ctx_error(ctx), "repeat: ", 8),
          "repeat beyond GCR_MAX_DIMS dims in all: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    gcr_ctx_destroy(ctx);
}

/* nearest upsampling repeats each pixel in place; NHWC in, NHWC out */
static void test_upsample(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    int64_t xs[4] = {2, 3, 4, 5};
    float *host = h_randn(120, -1, 1);
    static const int scales[][2] = {{2, 3}, {1, 1}, {3, 1}};
    for (int l = 0; l < H_LAYOUTS; l++)
        for (int k = 0; k < 3; k++) {
            uint64_t sc = gcr_scope_begin(ctx);
            int sh = scales[k][0], sw = scales[k][1];
            int64_t o[4] = {2, 3, 4 * sh, 5 * sw};
            gcr_tensor *x = h_view(ctx, GCR_F32, 4, xs, l, host);
            gcr_tensor *y = gcr_upsample_nearest2d(ctx, x, sh, sw);
            if (CHECK(h_shape_is(y, 4, o), "upsample %dx%d %s: %s", sh, sw, h_layout_name(l), gcr_ctx_error(ctx))) {
                CHECK(gcr_tensor_format(y) == (l == H_NHWC ? GCR_NHWC : GCR_NCHW) &&
                          (l == H_NHWC || gcr_tensor_is_contiguous(y)),
                      "upsample %s: dense in x's format", h_layout_name(l));
                float *got = h_read(y);
                int64_t bad = -1;
                for (int64_t i = 0; i < 2 * 3 * o[2] * o[3] && bad < 0; i++) {
                    int64_t idx[4];
                    unravel(i, 4, o, idx);
                    idx[2] /= sh;
                    idx[3] /= sw;
                    if (got[i] != host[ravel(4, xs, idx)]) bad = i;
                }
                CHECK(bad < 0, "upsample %dx%d %s: element %lld", sh, sw, h_layout_name(l), (long long)bad);
                free(got);
            }
            gcr_ctx_clear_error(ctx);
            gcr_scope_end(ctx, sc);
        }
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, xs, GCR_NCHW, host);
    CHECK(gcr_upsample_nearest2d(ctx, x, 0, 2) == NULL && gcr_ctx_status(ctx) == GCR_ERR_PARAM, "upsample: scale 0");
    gcr_ctx_clear_error(ctx);
    gcr_tensor *x3 = gcr_reshape(ctx, x, 3, (int64_t[]){6, 4, 5});
    CHECK(gcr_upsample_nearest2d(ctx, x3, 2, 2) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "upsample: 3-d input");
    gcr_ctx_clear_error(ctx);
    free(host);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    RUN(test_reshape);
    RUN(test_flatten);
    RUN(test_permute);
    RUN(test_slice);
    RUN(test_contiguous);
    RUN(test_concat);
    RUN(test_dropout);
    RUN(test_host_transfer);
    RUN(test_expand);
    RUN(test_repeat);
    RUN(test_upsample);
    return h_finish();
}
