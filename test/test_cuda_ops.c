/* test_cuda_ops.c — every pointwise, reduction and movement op on the GPU against the CPU backend
 * (two contexts fed the same fresh random data): each float dtype, odd sizes, broadcasting,
 * permuted and sliced (misaligned) inputs, NHWC, the vectorised path at sizes on and off the vector
 * width; casts between all dtypes; plus the backend's error paths (OOM, compile failure), the module
 * cache (memory hit, disk file, corrupt file), allocator reuse, and the kernels' limits (each side
 * of each one, checked on the host; on the GPU, refused at the call eagerly, under capture and at a
 * bind alike); expand views (stride 0) read by each kernel family, and repeat and nearest upsampling.
 * Skips the GPU parts without a GPU. */
#include "harness.h"
#include "cuda/cuda_ops.h"
#include "cuda/dense.h"
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

static gcr_ctx *G, *C; /* GPU and CPU contexts */

static const gcr_dtype FL[3] = {GCR_F32, GCR_F16, GCR_BF16};

/* how a test input is laid out: a dense base (shape, fmt), then optionally a view of it */
typedef struct spec {
    gcr_dtype dt;
    int nd;
    int64_t shape[4];
    gcr_format fmt;
    int view;    /* 0 none, 1 permute(perm), 2 slice(dim, start=1, step) */
    int perm[4];
    int dim, step;
} spec;

static int64_t numel_of(const spec *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->nd; i++) n *= s->shape[i];
    return n;
}

static gcr_tensor *make(gcr_ctx *ctx, const spec *s, const float *host)
{
    gcr_tensor *t = h_tensor(ctx, s->dt, s->nd, s->shape, s->fmt, host);
    if (!t || !s->view) return t;
    gcr_tensor *v = s->view == 1 ? gcr_permute(ctx, t, s->perm)
                                 : gcr_slice(ctx, t, s->dim, 1, s->shape[s->dim], s->step);
    gcr_tensor_free(t);
    return v;
}

/* an input pair (gpu, cpu) holding the same random values in [lo, hi) */
typedef struct pair { gcr_tensor *g, *c; } pair;

static pair mk(const spec *s, float lo, float hi)
{
    int64_t n = numel_of(s);
    float *h = h_randn(n, lo, hi);
    pair p = {make(G, s, h), make(C, s, h)};
    CHECK(p.g && p.c, "making input: gpu %s / cpu %s", gcr_ctx_error(G), gcr_ctx_error(C));
    free(h);
    return p;
}

static void drop(pair p)
{
    gcr_tensor_free(p.g);
    gcr_tensor_free(p.c);
}

static float tol_of(gcr_dtype dt) { return dt == GCR_F32 ? 1e-5f : 1e-2f; }

/* compares a GPU result with the CPU's: same shape and format, values within the dtype's tolerance */
static void same(gcr_tensor *g, gcr_tensor *c, gcr_dtype dt, const char *what)
{
    if (!CHECK(g && c, "%s: gpu %s | cpu %s", what, g ? "ok" : gcr_ctx_error(G), c ? "ok" : gcr_ctx_error(C))) {
        gcr_ctx_clear_error(G);
        gcr_ctx_clear_error(C);
        gcr_tensor_free(g);
        gcr_tensor_free(c);
        return;
    }
    char bg[96], bc[96];
    CHECK(!strcmp(gcr_tensor_describe(g, bg, sizeof bg), gcr_tensor_describe(c, bc, sizeof bc)), "%s: gpu %s cpu %s",
          what, bg, bc);
    int64_t n = gcr_tensor_numel(c);
    float *a = h_read(g), *b = h_read(c);
    float t = tol_of(dt);
    CHECK_CLOSE(a, b, n, t, t, what);
    free(a);
    free(b);
    gcr_tensor_free(g);
    gcr_tensor_free(c);
}

/* the layouts every op is tried on: odd NCHW, NHWC, permuted, sliced with offset 1 and step 2 */
static spec layout(int k, gcr_dtype dt)
{
    spec s = {dt, 4, {3, 5, 7, 9}, GCR_NCHW, 0, {0}, 0, 0};
    if (k == 1) s.fmt = GCR_NHWC;
    if (k == 2) { s.view = 1; s.shape[0] = 9; s.shape[3] = 3; int p[4] = {3, 1, 2, 0}; memcpy(s.perm, p, sizeof p); }
    if (k == 3) { s.view = 2; s.dim = 3; s.step = 2; s.shape[3] = 19; } /* -> [3,5,7,9], offset 1 */
    return s;
}
static const char *LAYOUT[4] = {"nchw", "nhwc", "permuted", "sliced"};

static void test_unary(void)
{
    static const struct { gcr_tensor *(*fn)(gcr_ctx *, gcr_tensor *); const char *name; float lo, hi; } ops[] = {
        {gcr_neg, "neg", -3, 3}, {gcr_abs, "abs", -3, 3}, {gcr_relu, "relu", -3, 3},
        {gcr_sigmoid, "sigmoid", -4, 4}, {gcr_tanh, "tanh", -3, 3}, {gcr_exp, "exp", -3, 3},
        {gcr_log, "log", 0.1f, 5}, {gcr_sqrt, "sqrt", 0.1f, 5}, {gcr_rsqrt, "rsqrt", 0.1f, 5},
        {gcr_hardswish, "hardswish", -5, 5}, {gcr_silu, "silu", -4, 4}, {gcr_relu6, "relu6", -2, 8},
        {gcr_gelu, "gelu", -5, 5},
    };
    char what[96];
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (int f = 0; f < 3; f++)
            for (int k = 0; k < 4; k++) {
                spec s = layout(k, FL[f]);
                pair x = mk(&s, ops[o].lo, ops[o].hi);
                snprintf(what, sizeof what, "%s %s %s", ops[o].name, gcr_dtype_name(FL[f]), LAYOUT[k]);
                same(ops[o].fn(G, x.g), ops[o].fn(C, x.c), FL[f], what);
                drop(x);
            }
    for (int f = 0; f < 3; f++)
        for (int k = 0; k < 4; k++) {
            spec s = layout(k, FL[f]);
            pair x = mk(&s, -3, 3);
            snprintf(what, sizeof what, "clamp %s %s", gcr_dtype_name(FL[f]), LAYOUT[k]);
            same(gcr_clamp(G, x.g, -0.5f, 1.25f), gcr_clamp(C, x.c, -0.5f, 1.25f), FL[f], what);
            drop(x);
        }
}

typedef gcr_tensor *(*binop)(gcr_ctx *, gcr_tensor *, gcr_tensor *);
typedef gcr_tensor *(*scalop)(gcr_ctx *, gcr_tensor *, float);

static void test_binary(void)
{
    static const struct { binop fn; scalop sfn; const char *name; } ops[] = {
        {gcr_add, gcr_add_scalar, "add"}, {gcr_sub, gcr_sub_scalar, "sub"}, {gcr_mul, gcr_mul_scalar, "mul"},
        {gcr_div, gcr_div_scalar, "div"}, {gcr_maximum, gcr_maximum_scalar, "maximum"},
        {gcr_minimum, gcr_minimum_scalar, "minimum"},
    };
    /* b shapes broadcast against a [3,5,7,9] in several ways */
    static const struct { int nd; int64_t shape[4]; const char *name; } bs[] = {
        {4, {3, 5, 7, 9}, "same"}, {3, {5, 1, 9}, "bcast[5,1,9]"}, {4, {3, 1, 7, 1}, "bcast[3,1,7,1]"},
        {0, {0}, "0-d"}, {1, {9}, "row[9]"}, {4, {1, 5, 1, 1}, "chan[1,5,1,1]"},
    };
    char what[128];
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (int f = 0; f < 3; f++) {
            for (int k = 0; k < 4; k++)
                for (size_t b = 0; b < sizeof bs / sizeof *bs; b++) {
                    if (k != 0 && b > 1 && b != 5) continue; /* the full cross only on NCHW */
                    spec sa = layout(k, FL[f]), sb = {FL[f], bs[b].nd, {0}, GCR_NCHW, 0, {0}, 0, 0};
                    memcpy(sb.shape, bs[b].shape, sizeof sb.shape);
                    if (b == 0) sb = layout((k + 1) % 4, FL[f]); /* same shape, another layout */
                    pair x = mk(&sa, -3, 3), y = mk(&sb, 0.5f, 2.5f);
                    snprintf(what, sizeof what, "%s %s a %s b %s", ops[o].name, gcr_dtype_name(FL[f]), LAYOUT[k], bs[b].name);
                    same(ops[o].fn(G, x.g, y.g), ops[o].fn(C, x.c, y.c), FL[f], what);
                    snprintf(what, sizeof what, "%s %s b %s a %s (reversed)", ops[o].name, gcr_dtype_name(FL[f]), bs[b].name, LAYOUT[k]);
                    same(ops[o].fn(G, y.g, x.g), ops[o].fn(C, y.c, x.c), FL[f], what);
                    drop(x);
                    drop(y);
                }
            for (int k = 0; k < 4; k++) {
                spec sa = layout(k, FL[f]);
                pair x = mk(&sa, -3, 3);
                snprintf(what, sizeof what, "%s_scalar %s %s", ops[o].name, gcr_dtype_name(FL[f]), LAYOUT[k]);
                same(ops[o].sfn(G, x.g, 1.75f), ops[o].sfn(C, x.c, 1.75f), FL[f], what);
                drop(x);
            }
        }
}

static void test_batch_norm(void)
{
    char what[96];
    for (int f = 0; f < 3; f++)
        for (int k = 0; k < 4; k++)
            for (int miss = 0; miss < 3; miss++) {
                spec s = layout(k, FL[f]), p = {FL[f], 1, {5}, GCR_NCHW, 0, {0}, 0, 0};
                spec ps = {FL[f], 1, {11}, GCR_NCHW, 2, {0}, 0, 2}; /* [5] as a strided slice of [11] */
                pair x = mk(&s, -3, 3), m = mk(&p, -1, 1), v = mk(miss == 2 ? &ps : &p, 0.2f, 2), g = mk(&p, 0.5f, 1.5f),
                     b = mk(&p, -1, 1);
                gcr_tensor *gg = miss == 1 ? NULL : g.g, *gc = miss == 1 ? NULL : g.c;
                gcr_tensor *bg = miss == 1 ? NULL : b.g, *bc = miss == 1 ? NULL : b.c;
                snprintf(what, sizeof what, "batch_norm %s %s %s", gcr_dtype_name(FL[f]), LAYOUT[k],
                         miss == 1 ? "no gamma/beta" : miss == 2 ? "strided var" : "full");
                same(gcr_batch_norm(G, x.g, m.g, v.g, gg, bg, 1e-3f), gcr_batch_norm(C, x.c, m.c, v.c, gc, bc, 1e-3f), FL[f], what);
                drop(x), drop(m), drop(v), drop(g), drop(b);
            }
}

static void test_cast(void)
{
    char what[96];
    for (int a = 0; a < GCR_DTYPE_COUNT; a++)
        for (int b = 0; b < GCR_DTYPE_COUNT; b++)
            for (int k = 0; k < 4; k += 3) {
                spec s = layout(k, (gcr_dtype)a);
                pair x = mk(&s, -100, 100);
                snprintf(what, sizeof what, "cast %s -> %s %s", gcr_dtype_name(a), gcr_dtype_name(b), LAYOUT[k]);
                gcr_dtype t = (gcr_dtype)b;
                same(gcr_cast(G, x.g, t), gcr_cast(C, x.c, t), gcr_dtype_is_float(t) && t != GCR_F32 ? t : GCR_F32, what);
                drop(x);
            }
    /* integers beyond f32's exact range go through int64: exact, i32 wraps */
    int64_t big[5] = {((int64_t)1 << 40) + 3, -((int64_t)1 << 35) - 7, 123456789012345ll, -1, ((int64_t)1 << 33) + 5};
    int64_t shape[1] = {5};
    gcr_tensor *g = gcr_tensor_from_data(G, GCR_I64, 1, shape, GCR_NCHW, big);
    gcr_tensor *c = gcr_tensor_from_data(C, GCR_I64, 1, shape, GCR_NCHW, big);
    int32_t rg[5], rc[5];
    gcr_tensor *g32 = gcr_cast(G, g, GCR_I32), *c32 = gcr_cast(C, c, GCR_I32);
    CHECK_OK(G, gcr_tensor_to_host(g32, rg, sizeof rg));
    CHECK_OK(C, gcr_tensor_to_host(c32, rc, sizeof rc));
    CHECK(!memcmp(rg, rc, sizeof rg) && rg[0] == 3, "i64 -> i32 wraps exactly: %d vs %d", rg[0], rc[0]);
    int64_t back[5];
    gcr_tensor *g64 = gcr_cast(G, g32, GCR_I64);
    CHECK_OK(G, gcr_tensor_to_host(g64, back, sizeof back));
    CHECK(back[3] == -1 && back[0] == 3, "i32 -> i64 sign-extends");
    gcr_tensor *gc = gcr_contiguous(G, g, GCR_NCHW);
    CHECK_OK(G, gcr_tensor_to_host(gc, back, sizeof back));
    CHECK(!memcmp(back, big, sizeof big), "i64 copy is exact");
    gcr_tensor_free(g), gcr_tensor_free(c), gcr_tensor_free(g32), gcr_tensor_free(c32), gcr_tensor_free(g64), gcr_tensor_free(gc);
}

typedef gcr_tensor *(*redop)(gcr_ctx *, gcr_tensor *, const int *, int, int);

static void test_reduce(void)
{
    static const struct { redop fn; const char *name; } ops[] = {{gcr_sum, "sum"}, {gcr_mean, "mean"}, {gcr_max, "max"}};
    static const struct { int n; int axes[4]; } ax[] = {
        {1, {3}}, {1, {1}}, {2, {0, 2}}, {3, {1, 2, 3}}, {0, {0}}, {1, {-1}}, {2, {3, 1}},
    };
    char what[128];
    for (int o = 0; o < 3; o++)
        for (int f = 0; f < 3; f++)
            for (int k = 0; k < 4; k++)
                for (size_t a = 0; a < sizeof ax / sizeof *ax; a++)
                    for (int keep = 0; keep < 2; keep++) {
                        spec s = layout(k, FL[f]);
                        pair x = mk(&s, -2, 2);
                        snprintf(what, sizeof what, "%s %s %s axes#%zu keep %d", ops[o].name, gcr_dtype_name(FL[f]), LAYOUT[k], a, keep);
                        same(ops[o].fn(G, x.g, ax[a].axes, ax[a].n, keep), ops[o].fn(C, x.c, ax[a].axes, ax[a].n, keep),
                             FL[f], what);
                        drop(x);
                    }
    /* row lengths for each kernel shape: thread (<= 16), warp (<= 2048), block per row, and rows
     * split over blocks (few rows longer than 16384: [1,100003], [300007,3] axis 0, [2,65541]) */
    static const int64_t rows[][2] = {{1001, 7}, {37, 300}, {5, 5003}, {1, 100003}, {3, 2048}, {2, 2049},
                                      {300007, 3}, {2, 65541}};
    for (int o = 0; o < 3; o++)
        for (int f = 0; f < 3; f++)
            for (size_t r = 0; r < sizeof rows / sizeof *rows; r++)
                for (int axis = 0; axis < 2; axis++) {
                    spec s = {FL[f], 2, {rows[r][0], rows[r][1]}, GCR_NCHW, 0, {0}, 0, 0};
                    pair x = mk(&s, -2, 2);
                    snprintf(what, sizeof what, "%s %s [%lld,%lld] axis %d", ops[o].name, gcr_dtype_name(FL[f]),
                             (long long)rows[r][0], (long long)rows[r][1], axis);
                    /* f16/bf16 sums of long rows round the result once: relative tolerance holds */
                    same(ops[o].fn(G, x.g, &axis, 1, 0), ops[o].fn(C, x.c, &axis, 1, 0), FL[f], what);
                    drop(x);
                }
    /* everything at once, dense and permuted (split rows with a multi-dim reduced space) */
    for (int o = 0; o < 3; o++)
        for (int f = 0; f < 3; f++)
            for (int v = 0; v < 2; v++) {
                spec s = {FL[f], 4, {8, 33, 97, 8}, GCR_NCHW, v, {3, 1, 2, 0}, 0, 0};
                pair x = mk(&s, -2, 2);
                snprintf(what, sizeof what, "%s %s all of [8,33,97,8]%s", ops[o].name, gcr_dtype_name(FL[f]), v ? " permuted" : "");
                same(ops[o].fn(G, x.g, NULL, 0, 0), ops[o].fn(C, x.c, NULL, 0, 0), FL[f], what);
                int ax2[2] = {0, 2};
                snprintf(what, sizeof what, "%s %s axes 0,2 of [8,33,97,8]%s", ops[o].name, gcr_dtype_name(FL[f]), v ? " permuted" : "");
                same(ops[o].fn(G, x.g, ax2, 2, 1), ops[o].fn(C, x.c, ax2, 2, 1), FL[f], what);
                drop(x);
            }
    /* softmax composes max, sub, exp, sum, div with keepdim broadcasting */
    for (int f = 0; f < 3; f++) {
        spec s = layout(1, FL[f]);
        pair x = mk(&s, -4, 4);
        same(gcr_softmax(G, x.g, 1), gcr_softmax(C, x.c, 1), FL[f], "softmax nhwc axis 1");
        same(gcr_softmax(G, x.g, -1), gcr_softmax(C, x.c, -1), FL[f], "softmax nhwc axis -1");
        drop(x);
    }
}

static void test_movement(void)
{
    char what[128];
    for (int d = 0; d < GCR_DTYPE_COUNT; d++)
        for (int k = 0; k < 4; k++)
            for (int fmt = 0; fmt < 2; fmt++) {
                spec s = layout(k, (gcr_dtype)d);
                pair x = mk(&s, -50, 50);
                gcr_format to = fmt ? GCR_NHWC : GCR_NCHW;
                snprintf(what, sizeof what, "contiguous %s %s -> %s", gcr_dtype_name(d), LAYOUT[k], fmt ? "nhwc" : "nchw");
                same(gcr_contiguous(G, x.g, to), gcr_contiguous(C, x.c, to), GCR_F32, what);
                drop(x);
            }
    for (int d = 0; d < GCR_DTYPE_COUNT; d++)
        for (int axis = 0; axis < 4; axis++)
            for (int k = 0; k < 3; k++) { /* all NCHW, all NHWC, mixed layouts */
                pair xs[3];
                gcr_tensor *gs[3], *cs[3];
                for (int i = 0; i < 3; i++) {
                    spec s = layout(k == 2 ? i % 4 : k, (gcr_dtype)d);
                    if (s.view == 0) s.shape[axis] += i; /* different extents along the axis */
                    xs[i] = mk(&s, -50, 50);
                    gs[i] = xs[i].g;
                    cs[i] = xs[i].c;
                }
                snprintf(what, sizeof what, "concat %s axis %d %s", gcr_dtype_name(d), axis, k == 2 ? "mixed" : LAYOUT[k]);
                same(gcr_concat(G, gs, 3, axis), gcr_concat(C, cs, 3, axis), GCR_F32, what);
                for (int i = 0; i < 3; i++) drop(xs[i]);
            }
}

/* the flat path at sizes on and off the vector width, and misaligned (slice offset 1) */
static void test_vectorised(void)
{
    static const int64_t sizes[] = {1, 3, 8, 4096, 4099, 8200, 65541, 1 << 20};
    char what[96];
    for (int f = 0; f < 3; f++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (int mis = 0; mis < 2; mis++) {
                spec s = {FL[f], 1, {sizes[i] + mis}, GCR_NCHW, mis ? 2 : 0, {0}, 0, 1};
                pair x = mk(&s, -3, 3), y = mk(&s, -3, 3);
                snprintf(what, sizeof what, "add %s n=%lld%s", gcr_dtype_name(FL[f]), (long long)sizes[i], mis ? " offset 1" : "");
                same(gcr_add(G, x.g, y.g), gcr_add(C, x.c, y.c), FL[f], what);
                snprintf(what, sizeof what, "hardswish %s n=%lld%s", gcr_dtype_name(FL[f]), (long long)sizes[i], mis ? " offset 1" : "");
                same(gcr_hardswish(G, x.g), gcr_hardswish(C, x.c), FL[f], what);
                drop(x);
                drop(y);
            }
    /* one aligned and one misaligned operand in the same call */
    spec a = {GCR_F32, 1, {4097}, GCR_NCHW, 0, {0}, 0, 0}, b = {GCR_F32, 1, {4098}, GCR_NCHW, 2, {0}, 0, 1};
    pair x = mk(&a, -3, 3), y = mk(&b, -3, 3);
    same(gcr_mul(G, x.g, y.g), gcr_mul(C, x.c, y.c), GCR_F32, "mul aligned x misaligned");
    drop(x), drop(y);
}

static void test_oom(void)
{
    int64_t shape[1] = {(int64_t)1 << 43}; /* 32 TiB of f32 */
    gcr_tensor *t = gcr_tensor_new(G, GCR_F32, 1, shape, GCR_NCHW);
    CHECK(t == NULL && gcr_ctx_status(G) == GCR_ERR_OOM, "huge tensor: %s %s", gcr_status_name(gcr_ctx_status(G)),
          gcr_ctx_error(G));
    CHECK(strstr(gcr_ctx_error(G), "35184372088832") != NULL, "message has the size: %s", gcr_ctx_error(G));
    gcr_ctx_clear_error(G);
    spec s = layout(0, GCR_F32);
    pair x = mk(&s, -1, 1);
    same(gcr_relu(G, x.g), gcr_relu(C, x.c), GCR_F32, "ops still work after an OOM");
    drop(x);
}

static void test_compile_error(void)
{
    const char *names[1] = {"broken"};
    gcr_cuda_fn *k = NULL;
    gcr_status s = gcr_cuda_program(G, "extern \"C\" __global__ void broken(float *p) { p[0] = no_such_thing; }\n", names, 1, &k);
    CHECK(s == GCR_ERR_COMPILE && gcr_ctx_status(G) == GCR_ERR_COMPILE, "status %s", gcr_status_name(s));
    CHECK(strstr(gcr_ctx_error(G), "no_such_thing") != NULL, "log in the message: %s", gcr_ctx_error(G));
    gcr_ctx_clear_error(G);
    s = gcr_cuda_program(G, "extern \"C\" __global__ void fine(float *p) { p[0] = 1; }\n", names, 1, &k);
    CHECK(s == GCR_ERR_COMPILE && strstr(gcr_ctx_error(G), "broken"), "missing kernel name: %s", gcr_ctx_error(G));
    gcr_ctx_clear_error(G);
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (l > sl && !strcmp(e->d_name + l - sl, suffix)) n++;
    }
    closedir(d);
    return n;
}

static gcr_ctx *ctx_in(const char *dir)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.cache_dir = dir;
    gcr_ctx *ctx = NULL;
    CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "cuda ctx with cache dir");
    return ctx;
}

/* An eager conv.cuh kernel compiles a program of its own (the family's program of every default
 * kernel took 35-57 s), found by name afterwards without hashing a text; a second ctx loads it
 * from the disk; a name outside the family's scheme is an error that names it. */
static void test_eager_programs(void)
{
    char dir[] = "/tmp/gcr-eager-XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL, "mkdtemp")) return;
    static const char *const names[] = {"gcr_dwv_f16", "gcr_dense_mma32_f16", "gcr_gemv_bf16", "gcr_dense_fma32_f32"};
    static const gcr_dtype dts[] = {GCR_F16, GCR_F16, GCR_BF16, GCR_F32};
    gcr_ctx *a = ctx_in(dir);
    if (!a) return;
    gcr_cuda_cache_stats s0, s1;
    for (int i = 0; i < 4; i++) {
        gcr_cuda_fn *k = NULL;
        gcr_cuda_cache_get_stats(a, &s0);
        CHECK_OK(a, gcr_cuda_hooked_kernel(a, "conv.cuh", dts[i], NULL, names[i], &k));
        gcr_cuda_cache_get_stats(a, &s1);
        CHECK(k && s1.compiles == s0.compiles + 1, "%s: %d compiles, want its own program", names[i], s1.compiles - s0.compiles);
        gcr_cuda_fn *again = NULL;
        CHECK_OK(a, gcr_cuda_hooked_kernel(a, "conv.cuh", dts[i], NULL, names[i], &again));
        gcr_cuda_cache_get_stats(a, &s0);
        CHECK(again == k && s0.compiles == s1.compiles && s0.hashes == s1.hashes && s0.mem_hits == s1.mem_hits + 1,
              "%s again: the same kernel by name (%d compiles, %d hashes, %d memory hits)", names[i],
              s0.compiles - s1.compiles, s0.hashes - s1.hashes, s0.mem_hits - s1.mem_hits);
    }
    CHECK(count_files(dir, ".mod") == 4, "%d module files, want 4", count_files(dir, ".mod"));
    gcr_cuda_fn *k = (gcr_cuda_fn *)1;
    CHECK(gcr_cuda_hooked_kernel(a, "conv.cuh", GCR_F16, NULL, "gcr_nope_f16", &k) == GCR_ERR_INTERNAL && !k &&
              strstr(gcr_ctx_error(a), "gcr_nope_f16"),
          "an unknown name: %s", gcr_ctx_error(a));
    gcr_ctx_destroy(a);
    gcr_ctx *b = ctx_in(dir);
    if (!b) return;
    CHECK_OK(b, gcr_cuda_hooked_kernel(b, "conv.cuh", GCR_F16, NULL, "gcr_dwv_f16", &k));
    gcr_cuda_cache_get_stats(b, &s1);
    CHECK(s1.compiles == 0 && s1.disk_hits == 1, "a second ctx: %d compiles, %d disk hits", s1.compiles, s1.disk_hits);
    gcr_ctx_destroy(b);
    h_rmtree(dir);
}

/* runs k (writes 42 + gridDim.x into p[0]) and returns p[0] */
static float run_probe(gcr_ctx *ctx, const char *src)
{
    const char *names[1] = {"probe"};
    gcr_cuda_fn *k = NULL;
    if (!CHECK(gcr_cuda_program(ctx, src, names, 1, &k) == GCR_OK, "probe: %s", gcr_ctx_error(ctx))) return -1;
    int64_t one = 1;
    gcr_tensor *t = gcr_tensor_new(ctx, GCR_F32, 1, &one, GCR_NCHW);
    void *p = t ? gcr_tensor_data(t) : NULL;
    void *args[] = {&p};
    CHECK_OK(ctx, gcr_cuda_launch(ctx, k, 3, 1, 1, 32, 1, 1, 0, args));
    float v = -1;
    CHECK_OK(ctx, gcr_tensor_to_host(t, &v, 4));
    gcr_tensor_free(t);
    return v;
}

static void test_cache(void)
{
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/gcr-cache-test-%ld/nested/dir", (long)getpid());
    char src[256];
    snprintf(src, sizeof src, "/* %ld */ extern \"C\" __global__ void probe(float *p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] = 42.0f + gridDim.x; }\n",
             (long)getpid());
    gcr_ctx *a = ctx_in(dir);
    if (!a) return;
    gcr_cuda_cache_stats s0, s1, s2;
    gcr_cuda_cache_get_stats(a, &s0);
    CHECK(run_probe(a, src) == 45.0f, "probe result");
    gcr_cuda_cache_get_stats(a, &s1);
    CHECK(s1.compiles == s0.compiles + 1 && s1.disk_hits == s0.disk_hits, "first use compiles");
    CHECK(run_probe(a, src) == 45.0f, "probe again");
    gcr_cuda_cache_get_stats(a, &s2);
    CHECK(s2.compiles == s1.compiles && s2.mem_hits == s1.mem_hits + 1, "second use is a memory hit");
    CHECK(count_files(dir, ".mod") == 1, "one module file in %s", dir);
    CHECK(count_files(dir, "") == count_files(dir, ".mod") + 2, "no temporary files left (. and ..)");
    gcr_ctx_destroy(a);

    gcr_ctx *b = ctx_in(dir); /* a new process would see the same: warm disk cache */
    if (!b) return;
    CHECK(run_probe(b, src) == 45.0f, "probe from disk");
    gcr_cuda_cache_get_stats(b, &s1);
    CHECK(s1.compiles == 0 && s1.disk_hits == 1, "warm start compiles nothing (%d compiles, %d disk hits)", s1.compiles,
          s1.disk_hits);
    gcr_ctx_destroy(b);

    /* damage the file: it is ignored, recompiled and rewritten */
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[600] = "";
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".mod")) snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (d) closedir(d);
    FILE *f = fopen(path, "r+b");
    if (CHECK(f != NULL, "open %s", path)) {
        fseek(f, 200, SEEK_SET);
        fwrite("garbage!garbage!", 1, 16, f);
        fclose(f);
        if (truncate(path, 400) != 0) CHECK(0, "truncate %s", path);
    }
    gcr_ctx *c = ctx_in(dir);
    if (!c) return;
    CHECK(run_probe(c, src) == 45.0f, "probe after corruption");
    gcr_cuda_cache_get_stats(c, &s1);
    CHECK(s1.compiles == 1 && s1.disk_hits == 0, "corrupt file recompiled");
    gcr_ctx_destroy(c);
    gcr_ctx *d2 = ctx_in(dir);
    if (!d2) return;
    CHECK(run_probe(d2, src) == 45.0f, "probe after rewrite");
    gcr_cuda_cache_get_stats(d2, &s1);
    CHECK(s1.compiles == 0 && s1.disk_hits == 1, "rewritten file is used");
    gcr_ctx_destroy(d2);
    unlink(path);
}

static void test_allocator(void)
{
    spec s = layout(0, GCR_F32);
    pair x = mk(&s, -1, 1);
    for (int i = 0; i < 3; i++) gcr_tensor_free(gcr_relu(G, x.g)); /* warm-up */
    size_t held0;
    uint64_t m0, m1;
    gcr_cuda_alloc_stats(G, &held0, NULL, &m0);
    for (int i = 0; i < 100; i++) {
        gcr_tensor *y = gcr_relu(G, x.g), *z = gcr_add(G, y, x.g);
        gcr_tensor_free(y);
        gcr_tensor_free(z);
    }
    gcr_cuda_alloc_stats(G, NULL, NULL, &m1);
    CHECK(m1 <= m0 + 1, "no cudaMalloc per op after warm-up (%llu -> %llu)", (unsigned long long)m0, (unsigned long long)m1);
    same(gcr_relu(G, x.g), gcr_relu(C, x.c), GCR_F32, "results after reuse");
    drop(x);
    CHECK_OK(G, gcr_ctx_sync(G));
}

/* The eager pointwise kernel table's key (host code, no device needed): every combination of op
 * id, output dtype, input dtypes and scalar operand has its own key, for the ops of today and for
 * op ids up to the key's bound, so a new op never runs another op's cached kernel. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_pw_key(void)
{
    int ops[GCR_OP_COUNT + 8], nop = 0;
    for (int op = 0; op < GCR_OP_COUNT; op++) ops[nop++] = op;
    const int later[] = {63, 64, 65, 127, 128, 1000, 4095, 65535}; /* ops not yet in the table */
    for (int i = 0; i < 8; i++) ops[nop++] = later[i];
    /* input patterns: none, one, two and five tensors of each dtype, mixed */
    int pats[GCR_DTYPE_COUNT * 4 + 2][5], npat = 0;
    for (int t = 0; t < GCR_DTYPE_COUNT; t++) {
        const int p[4][5] = {{t, -1, -1, -1, -1}, {t, t, -1, -1, -1}, {-1, t, -1, -1, -1}, {t, t, t, t, t}};
        memcpy(pats[npat], p, sizeof p);
        npat += 4;
    }
    const int mixed[2][5] = {{GCR_F32, GCR_F16, GCR_BF16, GCR_I64, GCR_BOOL}, {GCR_BOOL, -1, GCR_I32, -1, GCR_F16}};
    memcpy(pats[npat], mixed, sizeof mixed);
    npat += 2;
    size_t n = (size_t)nop * GCR_DTYPE_COUNT * (size_t)npat * 2, k = 0;
    uint64_t *keys = malloc(sizeof *keys * n);
    for (int a = 0; a < nop; a++)
        for (int to = 0; to < GCR_DTYPE_COUNT; to++)
            for (int p = 0; p < npat; p++)
                for (int sc = 0; sc < 2; sc++) keys[k++] = gcr_cuda_pw_key(ops[a], (gcr_dtype)to, pats[p], sc);
    qsort(keys, n, sizeof *keys, cmp_u64);
    size_t dup = 0;
    for (size_t i = 1; i < n; i++) dup += keys[i] == keys[i - 1];
    CHECK(dup == 0, "%zu of %zu pointwise kernel keys collide", dup, n);
    free(keys);
}

/* ---------------------------------------------------------------- the kernels' limits */

/* A conv2d (groups, padding), matmul, linear (no bias) or max_pool2d (1x1 windows) call on inputs
 * of these shapes. */
typedef struct lim_call {
    gcr_op op;
    int groups, pad;
    int nd[2];
    int64_t shape[2][GCR_MAX_DIMS];
} lim_call;

#define LIM_X GCR_CUDA_IDX_MAX /* the largest index the kernels take in ints */
/* Calls on each side of every limit of gcr_cuda_check: want NULL for a call the CUDA backend takes,
 * else a part of its refusal. f16 keeps every shape within 1 PiB. */
static const struct {
    const char *name;
    lim_call k;
    const char *want;
} LIM[] = {
    {"matmul, 4 batch dims that do not collapse", {GCR_OP_MATMUL, 0, 0, {6, 6}, {{2, 2, 2, 2, 3, 4}, {2, 1, 2, 1, 4, 5}}}, NULL},
    {"matmul, 5 batch dims that do not collapse", {GCR_OP_MATMUL, 0, 0, {7, 7}, {{2, 2, 2, 2, 2, 3, 4}, {2, 1, 2, 1, 2, 4, 5}}},
     "batch dims that do not collapse (grid z) is 5, beyond the CUDA kernels' limit of 4"},
    {"matmul, 6 batch dims that collapse", {GCR_OP_MATMUL, 0, 0, {8, 8}, {{2, 2, 2, 2, 2, 2, 3, 4}, {2, 2, 2, 2, 2, 2, 4, 5}}}, NULL},
    {"matmul, 65535 batches", {GCR_OP_MATMUL, 0, 0, {3, 3}, {{65535, 2, 3}, {65535, 3, 4}}}, NULL},
    {"matmul, 65536 batches", {GCR_OP_MATMUL, 0, 0, {3, 3}, {{65536, 2, 3}, {65536, 3, 4}}},
     "batch items (grid z) is 65536, beyond the CUDA kernels' limit of 65535"},
    {"matmul, 65536 batches of a shared weight (rows)", {GCR_OP_MATMUL, 0, 0, {3, 2}, {{65536, 2, 3}, {3, 4}}}, NULL},
    {"matmul, rows at the limit", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{LIM_X, 1}, {1, 1}}}, NULL},
    {"matmul, rows", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{LIM_X + 1, 1}, {1, 1}}}, "GEMM rows is 2143289345, beyond"},
    {"matmul, reduction", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{1, LIM_X + 1}, {LIM_X + 1, 1}}}, "GEMM reduction length is 2143289345"},
    {"matmul, columns", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{1, 1}, {1, LIM_X + 1}}}, "GEMM columns is 2143289345"},
    {"matmul, 65535 column tiles", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{9, 1}, {1, 65535 * 64}}}, NULL},
    {"matmul, 65536 column tiles", {GCR_OP_MATMUL, 0, 0, {2, 2}, {{9, 1}, {1, 65535 * 64 + 1}}},
     "GEMM column tiles of 64 (grid y) is 65536, beyond the CUDA kernels' limit of 65535"},
    {"matmul, 1 row, 65536 column tiles (weight not k-contiguous: no GEMV)",
     {GCR_OP_MATMUL, 0, 0, {2, 2}, {{1, 1}, {1, 65535 * 64 + 1}}}, "GEMM column tiles of 64 (grid y) is 65536"},
    {"linear, 1 row, 65536 column tiles (GEMV)", {GCR_OP_LINEAR, 0, 0, {2, 2}, {{1, 1}, {65535 * 64 + 1, 1}}}, NULL},
    {"linear, 9 rows, 65536 column tiles", {GCR_OP_LINEAR, 0, 0, {2, 2}, {{9, 1}, {65535 * 64 + 1, 1}}},
     "GEMM column tiles of 64 (grid y) is 65536"},
    {"conv2d, 65535 groups", {GCR_OP_CONV2D, 65535, 0, {4, 4}, {{1, 65535, 1, 1}, {131070, 1, 1, 1}}}, NULL},
    {"conv2d, 65536 groups", {GCR_OP_CONV2D, 65536, 0, {4, 4}, {{1, 65536, 1, 1}, {131072, 1, 1, 1}}},
     "batch items (grid z) is 65536, beyond the CUDA kernels' limit of 65535"},
    {"conv2d, 9 pixels, 65536 column tiles", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, 3, 3}, {65535 * 64 + 1, 1, 1, 1}}},
     "GEMM column tiles of 64 (grid y) is 65536"},
    {"conv2d, 1 pixel, 65536 column tiles (GEMV)", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, 1, 1}, {65535 * 64 + 1, 1, 1, 1}}}, NULL},
    {"conv2d, 2^31 rows", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, 65536, 32768}, {2, 1, 1, 1}}}, "GEMM rows is 2147483648"},
    {"depthwise conv2d, 2^31 outputs", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, 65536, 32768}, {1, 1, 1, 1}}}, NULL},
    {"conv2d, reduction", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 65536, 256, 256}, {1, 65536, 256, 256}}},
     "GEMM reduction length is 4294967296"},
    {"conv2d, height at the limit", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, LIM_X, 1}, {1, 1, 1, 1}}}, NULL},
    {"conv2d, padded height", {GCR_OP_CONV2D, 1, 1, {4, 4}, {{1, 1, LIM_X - 1, 1}, {1, 1, 1, 1}}},
     "padded input height is 2143289345, beyond the CUDA kernels' limit of 2143289344"},
    {"conv2d, images", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{LIM_X + 1, 1, 1, 1}, {1, 1, 1, 1}}}, "images is 2143289345"},
    {"conv2d, input channels", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, LIM_X + 1, 1, 1}, {1, LIM_X + 1, 1, 1}}},
     "input channels is 2143289345"},
    {"conv2d, output channels", {GCR_OP_CONV2D, 1, 0, {4, 4}, {{1, 1, 1, 1}, {LIM_X + 1, 1, 1, 1}}}, "output channels is 2143289345"},
    {"max_pool2d, 65535 images", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{65535, 1, 1, 1}}}, NULL},
    {"max_pool2d, 65536 images", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{65536, 1, 1, 1}}},
     "images is 65536, beyond the CUDA kernels' limit of 65535"},
    {"max_pool2d, channels", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{1, LIM_X + 1, 1, 1}}}, "channels is 2143289345"},
    {"max_pool2d, pixels", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{1, 1, 65536, 32768}}}, "input pixels (height x width) is 2147483648"},
    {"max_pool2d, 2^40 - 2^24 outputs", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{65535, 4096, 4096, 1}}}, NULL},
    {"max_pool2d, 2^41 - 2^25 outputs", {GCR_OP_MAX_POOL2D, 0, 0, {4, 0}, {{65535, 8192, 4096, 1}}},
     "outputs is 2198989701120, beyond the CUDA kernels' limit of 1099511627775"},
};

/* the call k through the public API on tensors in */
static gcr_tensor *lim_run(gcr_ctx *ctx, const lim_call *k, gcr_tensor **in)
{
    gcr_conv2d_params cp = gcr_conv2d_default();
    cp.groups = k->groups;
    cp.padding[0] = cp.padding[1] = k->pad;
    gcr_pool2d_params pp = gcr_pool2d_default(1);
    switch (k->op) {
    case GCR_OP_MATMUL: return gcr_matmul(ctx, in[0], in[1]);
    case GCR_OP_LINEAR: return gcr_linear(ctx, in[0], in[1], NULL);
    case GCR_OP_CONV2D: return gcr_conv2d(ctx, in[0], in[1], NULL, &cp);
    default: return gcr_max_pool2d(ctx, in[0], &pp);
    }
}

/* Host side, no device: k on stand-in tensors of dtype dt (metas only) through what dispatch runs
 * at every call, gcr_infer and then the CUDA backend's check; the message lands in err. */
static gcr_status lim_check(const lim_call *k, gcr_dtype dt, char *err, size_t errn)
{
    gcr_tensor t[2];
    gcr_call c;
    memset(t, 0, sizeof t);
    memset(&c, 0, sizeof c);
    c.op = k->op;
    c.n_in = k->op == GCR_OP_MAX_POOL2D ? 1 : k->op == GCR_OP_MATMUL ? 2 : 3;
    for (int i = 0; i < 2 && k->nd[i]; i++) {
        t[i].m.dtype = dt;
        t[i].m.ndim = k->nd[i];
        memcpy(t[i].m.shape, k->shape[i], sizeof k->shape[i]);
        gcr_meta_set_contiguous(&t[i].m);
        c.in[i] = &t[i];
    }
    if (k->op == GCR_OP_CONV2D) {
        c.p.conv = gcr_conv2d_default();
        c.p.conv.groups = k->groups;
        c.p.conv.padding[0] = c.p.conv.padding[1] = k->pad;
    }
    if (k->op == GCR_OP_MAX_POOL2D) c.p.pool = gcr_pool2d_default(1);
    gcr_meta out;
    gcr_status s = gcr_infer(&c, &out, err, errn);
    if (s == GCR_OK) s = gcr_cuda_backend_get()->check(&c, &out, err, errn);
    return s;
}

static void test_limits_host(void)
{
    char err[512];
    for (size_t i = 0; i < sizeof LIM / sizeof *LIM; i++) {
        gcr_status s = lim_check(&LIM[i].k, GCR_F16, err, sizeof err);
        if (!LIM[i].want) {
            CHECK(s == GCR_OK, "%s: refused (%s: %s)", LIM[i].name, gcr_status_name(s), err);
            continue;
        }
        CHECK(s == GCR_ERR_UNSUPPORTED && strstr(err, LIM[i].want), "%s: %s \"%s\", want GCR_ERR_UNSUPPORTED \"%s\"",
              LIM[i].name, gcr_status_name(s), s ? err : "", LIM[i].want);
        CHECK(strncmp(err, gcr_op_table[LIM[i].k.op].name, strlen(gcr_op_table[LIM[i].k.op].name)) == 0,
              "%s: the message names the op first: %s", LIM[i].name, err);
    }
    /* the whole message: op, input shapes, result shape, the quantity, its value and the limit */
    lim_check(&LIM[1].k, GCR_F32, err, sizeof err);
    CHECK(!strcmp(err, "matmul: f32[2,2,2,2,2,3,4], f32[2,1,2,1,2,4,5] -> f32[2,2,2,2,2,3,5]: batch dims that do not "
                       "collapse (grid z) is 5, beyond the CUDA kernels' limit of 4"), "message: %s", err);
    /* ops of other kinds have no limits of their own */
    gcr_tensor x;
    memset(&x, 0, sizeof x);
    x.m.dtype = GCR_F16;
    x.m.ndim = 1;
    x.m.shape[0] = (int64_t)1 << 40;
    gcr_meta_set_contiguous(&x.m);
    gcr_call c = {.op = GCR_OP_RELU, .n_in = 1, .in = {&x}};
    CHECK(gcr_cuda_backend_get()->check(&c, &x.m, err, sizeof err) == GCR_OK, "relu of 2^40 elements: %s", err);
}

/* inputs of k on the GPU and the CPU holding the same random values; false when they are large
 * (the host test above covers those calls) */
static bool lim_inputs(const lim_call *k, gcr_tensor **g, gcr_tensor **c)
{
    int64_t total = 0, n[2] = {0, 0};
    for (int i = 0; i < 2 && k->nd[i]; i++) {
        n[i] = 1;
        for (int d = 0; d < k->nd[i]; d++) n[i] *= k->shape[i][d];
        total += n[i];
    }
    if (total > ((int64_t)1 << 23)) return false;
    for (int i = 0; i < 2; i++) {
        g[i] = c[i] = NULL;
        if (!k->nd[i]) continue;
        float *h = h_randn(n[i], -1, 1);
        g[i] = h_tensor(G, GCR_F32, k->nd[i], k->shape[i], GCR_NCHW, h);
        c[i] = h_tensor(C, GCR_F32, k->nd[i], k->shape[i], GCR_NCHW, h);
        free(h);
    }
    return true;
}

/* On the GPU, each call of LIM with small inputs: one the backend takes runs and equals the CPU; one
 * it refuses returns NULL at the call with GCR_ERR_UNSUPPORTED, eagerly and under capture alike,
 * with one message (before the check, the captured call was recorded and failed only at
 * gcr_capture_end, or at replay) and fails gcr_capture_end; the CPU runs it (the limits are CUDA's). */
static void test_limits_at_call(void)
{
    for (size_t i = 0; i < sizeof LIM / sizeof *LIM; i++) {
        const lim_call *k = &LIM[i].k;
        gcr_tensor *g[2], *c[2];
        if (!lim_inputs(k, g, c)) continue;
        if (!CHECK(g[0] && c[0] && (!k->nd[1] || (g[1] && c[1])), "%s: inputs: %s", LIM[i].name, gcr_ctx_error(G))) break;
        if (!LIM[i].want) {
            same(lim_run(G, k, g), lim_run(C, k, c), GCR_F32, LIM[i].name);
        } else {
            gcr_tensor *r = lim_run(G, k, g);
            gcr_status st = gcr_ctx_status(G);
            char msg[2048];
            snprintf(msg, sizeof msg, "%s", gcr_ctx_error(G));
            gcr_ctx_clear_error(G);
            CHECK(r == NULL && st == GCR_ERR_UNSUPPORTED && strstr(msg, LIM[i].want), "%s: eager: %s \"%s\"", LIM[i].name,
                  gcr_status_name(st), msg);
            if (CHECK_OK(G, gcr_capture_begin(G))) {
                gcr_tensor *rc = lim_run(G, k, g);
                CHECK(rc == NULL && gcr_ctx_status(G) == st, "%s: captured call: %s, eager %s (%s)", LIM[i].name,
                      gcr_status_name(gcr_ctx_status(G)), gcr_status_name(st), gcr_ctx_error(G));
                CHECK(!strcmp(msg, gcr_ctx_error(G)), "%s: messages differ: eager \"%s\", captured \"%s\"", LIM[i].name, msg,
                      gcr_ctx_error(G));
                gcr_graph *gr = NULL;
                CHECK(gcr_capture_end(G, &gr) == st && gr == NULL, "%s: capture_end after the refusal", LIM[i].name);
                gcr_graph_destroy(gr);
                gcr_ctx_clear_error(G);
            }
            gcr_tensor *rcpu = lim_run(C, k, c);
            CHECK(rcpu != NULL, "%s: the CPU runs it: %s", LIM[i].name, gcr_ctx_error(C));
            gcr_tensor_free(rcpu);
        }
        for (int j = 0; j < 2; j++) {
            gcr_tensor_free(g[j]);
            gcr_tensor_free(c[j]);
        }
    }
}

/* A graph re-specialised for an input the kernels cannot serve (gcr_ir_reinfer runs the same check)
 * fails at the replay with the eager call's message, and runs nothing; bound back, it replays. */
static void test_limits_bind(void)
{
    const int64_t small[4] = {8, 2, 4, 4}, big[4] = {65536, 2, 4, 4};
    float *h = h_randn(8 * 2 * 4 * 4, -1, 1);
    gcr_tensor *x = h_tensor(G, GCR_F32, 4, small, GCR_NCHW, h), *xc = h_tensor(C, GCR_F32, 4, small, GCR_NCHW, h);
    gcr_tensor *xb = h_rand_tensor(G, GCR_F32, 4, big, GCR_NCHW, -1, 1);
    free(h);
    gcr_pool2d_params p = gcr_pool2d_default(2);
    gcr_graph *g = NULL;
    if (!CHECK_OK(G, gcr_capture_begin(G))) return;
    gcr_tensor *y = gcr_max_pool2d(G, x, &p);
    CHECK(y != NULL, "captured pool: %s", gcr_ctx_error(G));
    if (!CHECK_OK(G, gcr_capture_end(G, &g))) return;
    CHECK(gcr_max_pool2d(G, xb, &p) == NULL && gcr_ctx_status(G) == GCR_ERR_UNSUPPORTED, "eager pool of 65536 images: %s",
          gcr_ctx_error(G));
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", gcr_ctx_error(G));
    gcr_ctx_clear_error(G);
    CHECK_OK(G, gcr_graph_bind_input(g, 0, xb));
    gcr_status s = gcr_graph_replay(g);
    CHECK(s == GCR_ERR_UNSUPPORTED && strstr(gcr_ctx_error(G), msg), "replay bound to 65536 images: %s \"%s\", eager \"%s\"",
          gcr_status_name(s), gcr_ctx_error(G), msg);
    gcr_ctx_clear_error(G);
    CHECK_OK(G, gcr_graph_bind_input(g, 0, x));
    CHECK_OK(G, gcr_graph_replay(g));
    gcr_tensor *out = gcr_graph_get_output(g, 0), *ref = gcr_max_pool2d(C, xc, &p);
    if (CHECK(out && ref && gcr_tensor_numel(out) == gcr_tensor_numel(ref), "outputs after binding back")) {
        float *a = h_read(out), *b = h_read(ref);
        CHECK_CLOSE(a, b, gcr_tensor_numel(ref), 0, 0, "pool replayed after the failed bind");
        free(a);
        free(b);
    }
    gcr_tensor_free(ref);
    gcr_graph_destroy(g);
    gcr_tensor_free(x);
    gcr_tensor_free(xc);
    gcr_tensor_free(xb);
}

/* A fused kernel can see a layout no call had: a matmul prologue hands the kernel its source, of
 * A's shape but with the source's strides. relu(p) of a permuted p is dense, so matmul(relu(p), b)
 * collapses its 5 batch dims into 1 at the call; p's strides merge none, more than the kernels
 * take, so that fused kernel cannot be built and the graph runs relu and matmul unfused: the
 * capture succeeds and equals the CPU (it failed at gcr_capture_end before). */
static void test_limits_prologue(void)
{
    const int64_t base[7] = {4, 3, 2, 2, 2, 2, 2}, bs[7] = {2, 2, 2, 2, 2, 4, 5};
    const int perm[7] = {6, 5, 4, 3, 2, 1, 0};
    float *hp = h_randn(4 * 3 * 32, -1, 1), *hb = h_randn(32 * 20, -1, 1);
    gcr_tensor *pg = h_tensor(G, GCR_F32, 7, base, GCR_NCHW, hp), *pc = h_tensor(C, GCR_F32, 7, base, GCR_NCHW, hp);
    gcr_tensor *bg = h_tensor(G, GCR_F32, 7, bs, GCR_NCHW, hb), *bc = h_tensor(C, GCR_F32, 7, bs, GCR_NCHW, hb);
    free(hp);
    free(hb);
    gcr_graph *g = NULL;
    if (!CHECK_OK(G, gcr_capture_begin(G))) return;
    gcr_tensor *y = gcr_matmul(G, gcr_relu(G, gcr_permute(G, pg, perm)), bg);
    CHECK(y != NULL, "captured matmul of relu(permute): %s", gcr_ctx_error(G));
    if (CHECK_OK(G, gcr_capture_end(G, &g))) {
        gcr_tensor *ref = gcr_matmul(C, gcr_relu(C, gcr_permute(C, pc, perm)), bc);
        gcr_tensor *out = gcr_graph_get_output(g, 0);
        if (CHECK(out && ref && gcr_tensor_numel(out) == gcr_tensor_numel(ref), "output of the graph")) {
            float *a = h_read(out), *b = h_read(ref);
            CHECK_CLOSE(a, b, gcr_tensor_numel(ref), 1e-5f, 1e-5f, "matmul(relu(permuted), b) replayed");
            free(a);
            free(b);
        }
    }
    gcr_ctx_clear_error(G);
    gcr_graph_destroy(g);
    gcr_tensor_free(pg);
    gcr_tensor_free(pc);
    gcr_tensor_free(bg);
    gcr_tensor_free(bc);
}

/* expand views (stride 0) read by pointwise, copy, reduction and matmul kernels, and expand's
 * composites repeat and nearest upsampling, from each layout (NHWC stays NHWC) */
static void test_expand(void)
{
    char what[128];
    for (int f = 0; f < 3; f++)
        for (int k = 0; k < 4; k++) {
            spec s = layout(k, FL[f]);
            pair x = mk(&s, -3, 3);
            gcr_tensor *sg = gcr_slice(G, x.g, 2, 3, 4, 1), *sc = gcr_slice(C, x.c, 2, 3, 4, 1); /* [3,5,1,9] */
            int64_t to[5] = {2, 3, 5, 6, 9};
            gcr_tensor *eg = gcr_expand(G, sg, 5, to), *ec = gcr_expand(C, sc, 5, to);
            const char *dt = gcr_dtype_name(FL[f]);
            snprintf(what, sizeof what, "gelu(expand) %s %s", dt, LAYOUT[k]);
            same(gcr_gelu(G, eg), gcr_gelu(C, ec), FL[f], what);
            /* x's first 6 rows of dim 2, [3,5,6,9], broadcast against the expanded [2,3,5,6,9] */
            gcr_tensor *rg = gcr_slice(G, x.g, 2, 0, 6, 1), *rc = gcr_slice(C, x.c, 2, 0, 6, 1);
            snprintf(what, sizeof what, "x * expand %s %s", dt, LAYOUT[k]);
            same(gcr_mul(G, rg, eg), gcr_mul(C, rc, ec), FL[f], what);
            gcr_tensor_free(rg), gcr_tensor_free(rc);
            snprintf(what, sizeof what, "contiguous(expand) %s %s", dt, LAYOUT[k]);
            same(gcr_contiguous(G, eg, GCR_NCHW), gcr_contiguous(C, ec, GCR_NCHW), FL[f], what);
            int ax[2] = {0, 3};
            snprintf(what, sizeof what, "sum(expand) %s %s", dt, LAYOUT[k]);
            same(gcr_sum(G, eg, ax, 2, 0), gcr_sum(C, ec, ax, 2, 0), FL[f], what);
            spec ws = {FL[f], 2, {9, 4}, GCR_NCHW, 0, {0}, 0, 0};
            pair w = mk(&ws, -1, 1);
            snprintf(what, sizeof what, "expand @ w %s %s", dt, LAYOUT[k]);
            same(gcr_matmul(G, eg, w.g), gcr_matmul(C, ec, w.c), FL[f], what);
            snprintf(what, sizeof what, "repeat %s %s", dt, LAYOUT[k]);
            int64_t reps[5] = {2, 1, 2, 1, 3};
            same(gcr_repeat(G, x.g, 5, reps), gcr_repeat(C, x.c, 5, reps), FL[f], what);
            snprintf(what, sizeof what, "upsample_nearest2d %s %s", dt, LAYOUT[k]);
            same(gcr_upsample_nearest2d(G, x.g, 3, 2), gcr_upsample_nearest2d(C, x.c, 3, 2), FL[f], what);
            gcr_tensor_free(sg), gcr_tensor_free(sc), gcr_tensor_free(eg), gcr_tensor_free(ec);
            drop(w);
            drop(x);
        }
}

int main(void)
{
    h_seed(20261122);
    RUN(test_pw_key);
    RUN(test_limits_host);
    h_case = "cuda";
    G = h_ctx(GCR_DEVICE_CUDA);
    if (!G) return h_finish();
    C = h_ctx(GCR_DEVICE_CPU);
    printf("device: %s (sm_%d, %d SMs)\n", gcr_ctx_device_name(G), gcr_cuda_arch(G), gcr_cuda_sm_count(G));
    RUN(test_unary);
    RUN(test_binary);
    RUN(test_batch_norm);
    RUN(test_cast);
    RUN(test_reduce);
    RUN(test_movement);
    RUN(test_vectorised);
    RUN(test_oom);
    RUN(test_compile_error);
    RUN(test_cache);
    RUN(test_eager_programs);
    RUN(test_allocator);
    RUN(test_limits_at_call);
    RUN(test_limits_bind);
    RUN(test_limits_prologue);
    RUN(test_expand);
    CHECK_OK(G, gcr_ctx_sync(G));
    gcr_ctx_destroy(G);
    gcr_ctx_destroy(C);
    return h_finish();
}
