/* test_errors.c — every bad-input class of every op family returns NULL (or a status), records
 * the right status and a message naming the op and the shapes, never crashes and leaks nothing
 * (ASan): NULL tensors, dtype mismatches, non-float math, non-broadcastable shapes, reshape and
 * permute errors, bad axes, clamp bounds, conv/pool parameters, linear/matmul/concat/batch_norm
 * shapes, messages that name the op called and the values passed, bad parameters failing at the
 * call under capture exactly as eagerly, allocation failure, tensors of another context, sticky
 * errors, and the library's eager sections (lib/error.c), which keep their errors off the ctx. */
#include "harness.h"
#include "internal.h"
#include <unistd.h>

/* Huge allocations must fail with NULL under ASan too, not abort the test (visible to the ASan
 * runtime although tests build with -fvisibility=hidden). */
__attribute__((visibility("default"), used)) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* r must be NULL, the status st, and the message contain each needle; clears the error */
static void expect(gcr_ctx *ctx, const void *r, gcr_status st, const char *what, int line, const char *const *needles)
{
    const char *msg = gcr_ctx_error(ctx);
    CHECK(r == NULL, "line %d %s: returned non-NULL", line, what);
    CHECK(gcr_ctx_status(ctx) == st, "line %d %s: status %s, want %s (%s)", line, what, gcr_status_name(gcr_ctx_status(ctx)),
          gcr_status_name(st), msg);
    for (int i = 0; needles[i]; i++)
        CHECK(strstr(msg, needles[i]) != NULL, "line %d %s: message \"%s\" lacks \"%s\"", line, what, msg, needles[i]);
    gcr_ctx_clear_error(ctx);
}
#define EXPECT(ctx, expr, st, ...) expect(ctx, (expr), st, #expr, __LINE__, (const char *const[]){__VA_ARGS__, NULL})

static gcr_ctx *ctx;

static gcr_tensor *T(gcr_dtype dt, int nd, const int64_t *s)
{
    return h_rand_tensor(ctx, dt, nd, s, GCR_NCHW, -1, 1);
}
#define S(...) (int64_t[]){__VA_ARGS__}

static void test_null_tensors(void)
{
    gcr_tensor *x = T(GCR_F32, 4, S(1, 3, 8, 8)), *w = T(GCR_F32, 4, S(4, 3, 3, 3)), *c = T(GCR_F32, 1, S(3));
    gcr_pool2d_params pp = gcr_pool2d_default(2);
    gcr_conv2d_params cp = gcr_conv2d_default();
    typedef gcr_tensor *(*u_fn)(gcr_ctx *, gcr_tensor *);
    static const struct { const char *name; u_fn fn; } unary[] = {
        {"neg", gcr_neg}, {"abs", gcr_abs}, {"relu", gcr_relu}, {"sigmoid", gcr_sigmoid}, {"tanh", gcr_tanh},
        {"exp", gcr_exp}, {"log", gcr_log}, {"sqrt", gcr_sqrt}, {"rsqrt", gcr_rsqrt}, {"hardswish", gcr_hardswish},
        {"hardsigmoid", gcr_hardsigmoid}, {"relu6", gcr_relu6}, {"silu", gcr_silu},
    };
    for (unsigned i = 0; i < sizeof unary / sizeof *unary; i++)
        expect(ctx, unary[i].fn(ctx, NULL), GCR_ERR_INVALID, unary[i].name, __LINE__, (const char *const[]){unary[i].name, "NULL", NULL});
    typedef gcr_tensor *(*b_fn)(gcr_ctx *, gcr_tensor *, gcr_tensor *);
    typedef gcr_tensor *(*s_fn)(gcr_ctx *, gcr_tensor *, float);
    static const struct { const char *name; b_fn fn; s_fn sfn; } binary[] = {
        {"add", gcr_add, gcr_add_scalar}, {"sub", gcr_sub, gcr_sub_scalar}, {"mul", gcr_mul, gcr_mul_scalar},
        {"div", gcr_div, gcr_div_scalar}, {"maximum", gcr_maximum, gcr_maximum_scalar}, {"minimum", gcr_minimum, gcr_minimum_scalar},
    };
    for (unsigned i = 0; i < sizeof binary / sizeof *binary; i++) {
        const char *const nd[] = {binary[i].name, "NULL", NULL};
        expect(ctx, binary[i].fn(ctx, NULL, x), GCR_ERR_INVALID, binary[i].name, __LINE__, nd);
        expect(ctx, binary[i].fn(ctx, x, NULL), GCR_ERR_INVALID, binary[i].name, __LINE__, nd);
        expect(ctx, binary[i].sfn(ctx, NULL, 1.0f), GCR_ERR_INVALID, binary[i].name, __LINE__, nd);
    }
    EXPECT(ctx, gcr_clamp(ctx, NULL, 0, 1), GCR_ERR_INVALID, "clamp");
    EXPECT(ctx, gcr_cast(ctx, NULL, GCR_F16), GCR_ERR_INVALID, "cast");
    EXPECT(ctx, gcr_softmax(ctx, NULL, 0), GCR_ERR_INVALID, "softmax");
    EXPECT(ctx, gcr_sum(ctx, NULL, NULL, 0, 0), GCR_ERR_INVALID, "sum");
    EXPECT(ctx, gcr_mean(ctx, NULL, NULL, 0, 0), GCR_ERR_INVALID, "mean");
    EXPECT(ctx, gcr_max(ctx, NULL, NULL, 0, 0), GCR_ERR_INVALID, "max");
    EXPECT(ctx, gcr_conv2d(ctx, NULL, w, NULL, &cp), GCR_ERR_INVALID, "conv2d");
    EXPECT(ctx, gcr_conv2d(ctx, x, NULL, NULL, &cp), GCR_ERR_INVALID, "conv2d");
    EXPECT(ctx, gcr_batch_norm(ctx, NULL, c, c, c, c, 1e-5f), GCR_ERR_INVALID, "batch_norm");
    EXPECT(ctx, gcr_batch_norm(ctx, x, NULL, c, c, c, 1e-5f), GCR_ERR_INVALID, "batch_norm");
    EXPECT(ctx, gcr_batch_norm(ctx, x, c, NULL, c, c, 1e-5f), GCR_ERR_INVALID, "batch_norm");
    EXPECT(ctx, gcr_linear(ctx, NULL, w, NULL), GCR_ERR_INVALID, "linear");
    EXPECT(ctx, gcr_linear(ctx, c, NULL, NULL), GCR_ERR_INVALID, "linear");
    EXPECT(ctx, gcr_matmul(ctx, NULL, c), GCR_ERR_INVALID, "matmul");
    EXPECT(ctx, gcr_matmul(ctx, c, NULL), GCR_ERR_INVALID, "matmul");
    EXPECT(ctx, gcr_max_pool2d(ctx, NULL, &pp), GCR_ERR_INVALID, "max_pool2d");
    EXPECT(ctx, gcr_max_pool2d(ctx, x, NULL), GCR_ERR_INVALID, "max_pool2d");
    EXPECT(ctx, gcr_avg_pool2d(ctx, NULL, &pp), GCR_ERR_INVALID, "avg_pool2d");
    EXPECT(ctx, gcr_adaptive_avg_pool2d(ctx, NULL, 1, 1), GCR_ERR_INVALID, "adaptive_avg_pool2d");
    EXPECT(ctx, gcr_reshape(ctx, NULL, 1, S(4)), GCR_ERR_INVALID, "reshape");
    EXPECT(ctx, gcr_flatten(ctx, NULL, 0, -1), GCR_ERR_INVALID, "flatten");
    EXPECT(ctx, gcr_permute(ctx, NULL, (int[]){0}), GCR_ERR_INVALID, "permute");
    EXPECT(ctx, gcr_permute(ctx, x, NULL), GCR_ERR_INVALID, "permute");
    EXPECT(ctx, gcr_slice(ctx, NULL, 0, 0, 1, 1), GCR_ERR_INVALID, "slice");
    EXPECT(ctx, gcr_concat(ctx, NULL, 2, 0), GCR_ERR_INVALID, "concat", "NULL");
    EXPECT(ctx, gcr_concat(ctx, (gcr_tensor *[]){x, NULL}, 2, 0), GCR_ERR_INVALID, "concat", "input 1");
    EXPECT(ctx, gcr_contiguous(ctx, NULL, GCR_NHWC), GCR_ERR_INVALID, "contiguous");
    EXPECT(ctx, gcr_dropout(ctx, NULL, 0.1f), GCR_ERR_INVALID, "dropout");
    /* host transfer and a NULL ctx: a status, never a crash */
    float buf[4];
    CHECK(gcr_tensor_to_host(NULL, buf, 16) == GCR_ERR_INVALID, "to_host(NULL)");
    CHECK(gcr_tensor_from_host(NULL, buf, 16) == GCR_ERR_INVALID, "from_host(NULL)");
    CHECK(gcr_relu(NULL, x) == NULL && gcr_add(NULL, x, x) == NULL && gcr_concat(NULL, &x, 1, 0) == NULL, "NULL ctx");
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "NULL ctx calls leave this ctx alone");
}

static void test_dtypes(void)
{
    gcr_tensor *a = T(GCR_F32, 2, S(3, 5)), *b = T(GCR_F16, 2, S(3, 5)), *bb = T(GCR_BF16, 1, S(5));
    gcr_tensor *i = T(GCR_I32, 2, S(3, 5)), *l = T(GCR_I64, 4, S(1, 3, 8, 8)), *bo = T(GCR_BOOL, 1, S(3));
    EXPECT(ctx, gcr_add(ctx, a, b), GCR_ERR_DTYPE, "add", "f32[3,5]", "f16[3,5]");
    EXPECT(ctx, gcr_maximum(ctx, a, bb), GCR_ERR_DTYPE, "maximum", "f32[3,5]", "bf16[5]");
    EXPECT(ctx, gcr_relu(ctx, i), GCR_ERR_DTYPE, "relu", "i32[3,5]");
    EXPECT(ctx, gcr_exp(ctx, bo), GCR_ERR_DTYPE, "exp", "bool[3]");
    EXPECT(ctx, gcr_add(ctx, i, i), GCR_ERR_DTYPE, "add", "i32[3,5]");
    EXPECT(ctx, gcr_mul_scalar(ctx, i, 2.0f), GCR_ERR_DTYPE, "mul", "i32[3,5]");
    EXPECT(ctx, gcr_clamp(ctx, i, 0, 1), GCR_ERR_DTYPE, "clamp", "i32[3,5]");
    EXPECT(ctx, gcr_sum(ctx, i, NULL, 0, 0), GCR_ERR_DTYPE, "sum", "i32[3,5]");
    EXPECT(ctx, gcr_max_pool2d(ctx, l, &(gcr_pool2d_params){{2, 2}, {2, 2}, {0, 0}, {1, 1}, 0, 1}), GCR_ERR_DTYPE,
           "max_pool2d", "i64[1,3,8,8]");
    gcr_tensor *w = T(GCR_F16, 4, S(4, 3, 3, 3)), *x = T(GCR_F32, 4, S(1, 3, 8, 8));
    EXPECT(ctx, gcr_conv2d(ctx, x, w, NULL, NULL), GCR_ERR_DTYPE, "conv2d", "f32[1,3,8,8]", "f16[4,3,3,3]");
    EXPECT(ctx, gcr_conv2d(ctx, l, l, NULL, NULL), GCR_ERR_DTYPE, "conv2d", "i64[1,3,8,8]");
    EXPECT(ctx, gcr_matmul(ctx, a, gcr_permute(ctx, b, (int[]){1, 0})), GCR_ERR_DTYPE, "matmul", "f32[3,5]", "f16[5,3]");
    EXPECT(ctx, gcr_linear(ctx, a, b, NULL), GCR_ERR_DTYPE, "linear", "f32[3,5]", "f16[3,5]");
    EXPECT(ctx, gcr_concat(ctx, (gcr_tensor *[]){a, b}, 2, 0), GCR_ERR_DTYPE, "concat", "f32[3,5]", "f16[3,5]");
    gcr_tensor *c = T(GCR_I32, 1, S(3));
    EXPECT(ctx, gcr_batch_norm(ctx, x, c, c, NULL, NULL, 1e-5f), GCR_ERR_DTYPE, "batch_norm", "i32[3]");
    EXPECT(ctx, gcr_cast(ctx, a, (gcr_dtype)42), GCR_ERR_DTYPE, "cast", "42");
}

static void test_shapes(void)
{
    gcr_tensor *a = T(GCR_F32, 2, S(3, 4)), *b = T(GCR_F32, 1, S(5)), *c = T(GCR_F32, 3, S(2, 3, 4));
    EXPECT(ctx, gcr_add(ctx, a, b), GCR_ERR_SHAPE, "add", "f32[3,4]", "f32[5]", "broadcast");
    EXPECT(ctx, gcr_div(ctx, c, T(GCR_F32, 2, S(2, 4))), GCR_ERR_SHAPE, "div", "f32[2,3,4]", "f32[2,4]");
    /* non-broadcastable operand given strided */
    gcr_tensor *p = gcr_permute(ctx, T(GCR_F32, 2, S(4, 3)), (int[]){1, 0});
    EXPECT(ctx, gcr_sub(ctx, p, T(GCR_F32, 3, S(2, 4, 4))), GCR_ERR_SHAPE, "sub", "f32[3,4]:strided", "f32[2,4,4]");
    /* reshape */
    EXPECT(ctx, gcr_reshape(ctx, a, 2, S(5, 3)), GCR_ERR_SHAPE, "reshape", "f32[3,4]", "12");
    EXPECT(ctx, gcr_reshape(ctx, a, 2, S(-1, 5)), GCR_ERR_SHAPE, "reshape", "f32[3,4]");
    EXPECT(ctx, gcr_reshape(ctx, a, 2, S(-1, -1)), GCR_ERR_SHAPE, "reshape", "f32[3,4]");
    EXPECT(ctx, gcr_reshape(ctx, a, 2, S(-2, 6)), GCR_ERR_SHAPE, "reshape", "f32[3,4]");
    EXPECT(ctx, gcr_reshape(ctx, p, 1, S(13)), GCR_ERR_SHAPE, "reshape", "12");
    EXPECT(ctx, gcr_reshape(ctx, a, 9, S(1, 1, 1, 1, 1, 1, 1, 1, 12)), GCR_ERR_SHAPE, "reshape", "f32[3,4]");
    /* permute */
    EXPECT(ctx, gcr_permute(ctx, c, (int[]){0, 0, 1}), GCR_ERR_PARAM, "permute", "f32[2,3,4]");
    EXPECT(ctx, gcr_permute(ctx, c, (int[]){0, 1, 3}), GCR_ERR_PARAM, "permute", "f32[2,3,4]");
    EXPECT(ctx, gcr_permute(ctx, c, (int[]){-1, 1, 2}), GCR_ERR_PARAM, "permute", "f32[2,3,4]");
    /* flatten, slice */
    EXPECT(ctx, gcr_flatten(ctx, c, 2, 1), GCR_ERR_PARAM, "flatten", "f32[2,3,4]");
    EXPECT(ctx, gcr_flatten(ctx, c, 0, 3), GCR_ERR_PARAM, "flatten", "f32[2,3,4]");
    EXPECT(ctx, gcr_slice(ctx, c, 3, 0, 1, 1), GCR_ERR_PARAM, "slice", "f32[2,3,4]");
    EXPECT(ctx, gcr_slice(ctx, c, 0, 0, 1, 0), GCR_ERR_PARAM, "slice", "f32[2,3,4]");
    /* contiguous NHWC of a 3-d tensor */
    EXPECT(ctx, gcr_contiguous(ctx, c, GCR_NHWC), GCR_ERR_PARAM, "contiguous", "f32[2,3,4]");
    EXPECT(ctx, gcr_dropout(ctx, c, 1.5f), GCR_ERR_PARAM, "dropout", "f32[2,3,4]");
}

static void test_axes(void)
{
    gcr_tensor *c = T(GCR_F32, 3, S(2, 3, 4));
    EXPECT(ctx, gcr_sum(ctx, c, (int[]){1, 1}, 2, 0), GCR_ERR_PARAM, "sum", "f32[2,3,4]");
    EXPECT(ctx, gcr_mean(ctx, c, (int[]){3}, 1, 0), GCR_ERR_PARAM, "mean", "f32[2,3,4]");
    EXPECT(ctx, gcr_max(ctx, c, (int[]){-4}, 1, 1), GCR_ERR_PARAM, "max", "f32[2,3,4]");
    EXPECT(ctx, gcr_sum(ctx, c, (int[]){0, -3}, 2, 0), GCR_ERR_PARAM, "sum", "f32[2,3,4]");
    EXPECT(ctx, gcr_sum(ctx, c, NULL, 2, 0), GCR_ERR_PARAM, "sum", "f32[2,3,4]");
    EXPECT(ctx, gcr_sum(ctx, c, (int[]){0, 1, 2, 0}, 4, 0), GCR_ERR_PARAM, "sum", "f32[2,3,4]");
    EXPECT(ctx, gcr_softmax(ctx, c, 5), GCR_ERR_PARAM, "f32[2,3,4]");
    EXPECT(ctx, gcr_concat(ctx, &c, 1, 3), GCR_ERR_PARAM, "concat", "f32[2,3,4]");
    EXPECT(ctx, gcr_concat(ctx, &c, 0, 0), GCR_ERR_INVALID, "concat");
    /* clamp bounds */
    EXPECT(ctx, gcr_clamp(ctx, c, 2.0f, 1.0f), GCR_ERR_PARAM, "clamp", "f32[2,3,4]");
    EXPECT(ctx, gcr_clamp(ctx, c, NAN, 1.0f), GCR_ERR_PARAM, "clamp", "f32[2,3,4]");
}

static void test_conv_params(void)
{
    gcr_tensor *x = T(GCR_F32, 4, S(1, 3, 8, 8)), *w = T(GCR_F32, 4, S(4, 3, 3, 3)), *b = T(GCR_F32, 1, S(4));
    gcr_conv2d_params p = gcr_conv2d_default();
    p.stride[1] = 0;
    EXPECT(ctx, gcr_conv2d(ctx, x, w, b, &p), GCR_ERR_PARAM, "conv2d", "f32[1,3,8,8]", "stride");
    p = gcr_conv2d_default();
    p.padding[0] = -1;
    EXPECT(ctx, gcr_conv2d(ctx, x, w, b, &p), GCR_ERR_PARAM, "conv2d", "f32[1,3,8,8]", "padding");
    p = gcr_conv2d_default();
    p.dilation[0] = 0;
    EXPECT(ctx, gcr_conv2d(ctx, x, w, b, &p), GCR_ERR_PARAM, "conv2d", "f32[1,3,8,8]");
    p = gcr_conv2d_default();
    p.groups = 2;
    EXPECT(ctx, gcr_conv2d(ctx, x, w, b, &p), GCR_ERR_PARAM, "conv2d", "f32[1,3,8,8]", "groups");
    p.groups = 0;
    EXPECT(ctx, gcr_conv2d(ctx, x, w, b, &p), GCR_ERR_PARAM, "conv2d", "f32[1,3,8,8]", "groups");
    EXPECT(ctx, gcr_conv2d(ctx, x, T(GCR_F32, 4, S(4, 2, 3, 3)), NULL, NULL), GCR_ERR_SHAPE, "conv2d", "f32[1,3,8,8]", "f32[4,2,3,3]");
    EXPECT(ctx, gcr_conv2d(ctx, x, T(GCR_F32, 4, S(4, 3, 9, 3)), NULL, NULL), GCR_ERR_SHAPE, "conv2d", "f32[1,3,8,8]", "f32[4,3,9,3]");
    p = gcr_conv2d_default();
    p.dilation[1] = 4; /* effective kernel 9 > 8 */
    EXPECT(ctx, gcr_conv2d(ctx, x, w, NULL, &p), GCR_ERR_SHAPE, "conv2d", "f32[1,3,8,8]");
    EXPECT(ctx, gcr_conv2d(ctx, x, w, T(GCR_F32, 1, S(3)), NULL), GCR_ERR_SHAPE, "conv2d", "f32[3]");
    EXPECT(ctx, gcr_conv2d(ctx, x, w, T(GCR_F32, 2, S(4, 1)), NULL), GCR_ERR_SHAPE, "conv2d", "f32[4,1]");
    EXPECT(ctx, gcr_conv2d(ctx, T(GCR_F32, 3, S(3, 8, 8)), w, NULL, NULL), GCR_ERR_SHAPE, "conv2d", "f32[3,8,8]");
    EXPECT(ctx, gcr_conv2d(ctx, x, T(GCR_F32, 2, S(4, 27)), NULL, NULL), GCR_ERR_SHAPE, "conv2d", "f32[4,27]");
}

static void test_pool_params(void)
{
    gcr_tensor *x = T(GCR_F32, 4, S(1, 3, 8, 8));
    gcr_pool2d_params p = gcr_pool2d_default(0);
    EXPECT(ctx, gcr_max_pool2d(ctx, x, &p), GCR_ERR_PARAM, "max_pool2d", "f32[1,3,8,8]", "kernel");
    p = gcr_pool2d_default(3);
    p.padding[0] = 2;
    EXPECT(ctx, gcr_avg_pool2d(ctx, x, &p), GCR_ERR_PARAM, "avg_pool2d", "f32[1,3,8,8]", "padding");
    p = gcr_pool2d_default(9);
    EXPECT(ctx, gcr_max_pool2d(ctx, x, &p), GCR_ERR_SHAPE, "max_pool2d", "f32[1,3,8,8]");
    p = gcr_pool2d_default(3);
    p.dilation[1] = 0;
    EXPECT(ctx, gcr_max_pool2d(ctx, x, &p), GCR_ERR_PARAM, "max_pool2d", "f32[1,3,8,8]");
    p = gcr_pool2d_default(2);
    p.stride[0] = -1;
    EXPECT(ctx, gcr_avg_pool2d(ctx, x, &p), GCR_ERR_PARAM, "avg_pool2d", "f32[1,3,8,8]");
    EXPECT(ctx, gcr_max_pool2d(ctx, T(GCR_F32, 2, S(8, 8)), &p), GCR_ERR_SHAPE, "max_pool2d", "f32[8,8]");
    EXPECT(ctx, gcr_adaptive_avg_pool2d(ctx, x, 0, 1), GCR_ERR_PARAM, "adaptive_avg_pool2d", "f32[1,3,8,8]");
    EXPECT(ctx, gcr_adaptive_avg_pool2d(ctx, T(GCR_F32, 3, S(3, 8, 8)), 1, 1), GCR_ERR_SHAPE, "adaptive_avg_pool2d", "f32[3,8,8]");
}

static void test_matmul_concat_bn(void)
{
    gcr_tensor *a = T(GCR_F32, 2, S(2, 5)), *w = T(GCR_F32, 2, S(3, 4));
    EXPECT(ctx, gcr_linear(ctx, a, w, NULL), GCR_ERR_SHAPE, "linear", "f32[2,5]", "f32[3,4]");
    EXPECT(ctx, gcr_linear(ctx, a, T(GCR_F32, 2, S(3, 5)), T(GCR_F32, 1, S(4))), GCR_ERR_SHAPE, "linear", "f32[4]");
    EXPECT(ctx, gcr_linear(ctx, a, T(GCR_F32, 1, S(5)), NULL), GCR_ERR_SHAPE, "linear", "f32[2,5]", "f32[5]");
    EXPECT(ctx, gcr_matmul(ctx, a, w), GCR_ERR_SHAPE, "matmul", "f32[2,5]", "f32[3,4]");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_F32, 3, S(2, 3, 4)), T(GCR_F32, 3, S(3, 4, 5))), GCR_ERR_SHAPE, "matmul",
           "f32[2,3,4]", "f32[3,4,5]");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_F32, 1, S(4)), T(GCR_F32, 1, S(5))), GCR_ERR_SHAPE, "matmul");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_F32, 0, NULL), a), GCR_ERR_SHAPE, "matmul", "f32[]", "f32[2,5]");
    /* concat */
    gcr_tensor *c = T(GCR_F32, 3, S(2, 3, 4));
    EXPECT(ctx, gcr_concat(ctx, (gcr_tensor *[]){c, a}, 2, 0), GCR_ERR_SHAPE, "concat", "f32[2,3,4]", "f32[2,5]", "rank");
    EXPECT(ctx, gcr_concat(ctx, (gcr_tensor *[]){c, T(GCR_F32, 3, S(2, 4, 4))}, 2, 0), GCR_ERR_SHAPE, "concat",
           "f32[2,3,4]", "f32[2,4,4]");
    /* batch_norm */
    gcr_tensor *x = T(GCR_F32, 4, S(1, 3, 8, 8)), *p3 = T(GCR_F32, 1, S(3)), *p4 = T(GCR_F32, 1, S(4));
    EXPECT(ctx, gcr_batch_norm(ctx, x, p4, p3, NULL, NULL, 1e-5f), GCR_ERR_SHAPE, "batch_norm", "f32[1,3,8,8]", "f32[4]");
    EXPECT(ctx, gcr_batch_norm(ctx, x, p3, p3, p3, p4, 1e-5f), GCR_ERR_SHAPE, "batch_norm", "f32[1,3,8,8]", "f32[4]");
    EXPECT(ctx, gcr_batch_norm(ctx, x, p3, T(GCR_F32, 2, S(3, 1)), NULL, NULL, 1e-5f), GCR_ERR_SHAPE, "batch_norm", "f32[3,1]");
    EXPECT(ctx, gcr_batch_norm(ctx, p3, p3, p3, NULL, NULL, 1e-5f), GCR_ERR_SHAPE, "batch_norm", "f32[3]");
    EXPECT(ctx, gcr_batch_norm(ctx, x, p3, p3, NULL, NULL, -1.0f), GCR_ERR_PARAM, "batch_norm", "eps");
}

/* messages name the op the caller called and the values as passed, not normalised ones */
static void test_messages(void)
{
    gcr_tensor *c = T(GCR_F32, 3, S(2, 3, 4)), *i = T(GCR_I32, 2, S(3, 5));
    EXPECT(ctx, gcr_contiguous(ctx, c, (gcr_format)5), GCR_ERR_PARAM, "contiguous", "format 5", "f32[2,3,4]");
    EXPECT(ctx, gcr_contiguous(ctx, T(GCR_F32, 4, S(1, 2, 3, 4)), (gcr_format)-1), GCR_ERR_PARAM, "contiguous",
           "format -1");
    EXPECT(ctx, gcr_tensor_new(ctx, GCR_F32, 4, S(1, 2, 3, 4), (gcr_format)7), GCR_ERR_PARAM, "tensor_new", "format 7");
    EXPECT(ctx, gcr_tensor_new(ctx, GCR_F32, 3, S(2, 3, 4), GCR_NHWC), GCR_ERR_PARAM, "tensor_new", "NHWC", "3-d");
    CHECK(gcr_ctx_set_knobs(ctx, NULL) == GCR_ERR_INVALID && gcr_ctx_status(ctx) == GCR_ERR_INVALID &&
              strstr(gcr_ctx_error(ctx), "ctx_set_knobs") && strstr(gcr_ctx_error(ctx), "NULL"),
          "set_knobs(NULL) leaves a message: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    /* composites name themselves before the primitive that failed */
    EXPECT(ctx, gcr_softmax(ctx, c, 5), GCR_ERR_PARAM, "softmax", "axis 5", "f32[2,3,4]");
    EXPECT(ctx, gcr_softmax(ctx, i, -1), GCR_ERR_DTYPE, "softmax", "i32[3,5]");
    EXPECT(ctx, gcr_hardswish(ctx, i), GCR_ERR_DTYPE, "hardswish", "i32[3,5]");
    EXPECT(ctx, gcr_hardsigmoid(ctx, i), GCR_ERR_DTYPE, "hardsigmoid", "i32[3,5]");
    EXPECT(ctx, gcr_silu(ctx, i), GCR_ERR_DTYPE, "silu", "i32[3,5]");
    EXPECT(ctx, gcr_relu6(ctx, i), GCR_ERR_DTYPE, "relu6", "i32[3,5]");
    /* axes and dims as given */
    EXPECT(ctx, gcr_slice(ctx, c, -4, 0, 1, 1), GCR_ERR_PARAM, "slice", "dim -4", "f32[2,3,4]");
    EXPECT(ctx, gcr_slice(ctx, c, 5, 0, 1, 1), GCR_ERR_PARAM, "slice", "dim 5", "f32[2,3,4]");
    EXPECT(ctx, gcr_concat(ctx, &c, 1, -4), GCR_ERR_PARAM, "concat", "axis -4", "f32[2,3,4]");
    EXPECT(ctx, gcr_flatten(ctx, c, -5, 1), GCR_ERR_PARAM, "flatten", "-5..1", "f32[2,3,4]");
    EXPECT(ctx, gcr_flatten(ctx, c, -1, -2), GCR_ERR_PARAM, "flatten", "-1..-2", "f32[2,3,4]");
    EXPECT(ctx, gcr_sum(ctx, c, (int[]){-1, 2}, 2, 0), GCR_ERR_PARAM, "sum", "axis 2", "-1,2", "f32[2,3,4]");
    EXPECT(ctx, gcr_permute(ctx, c, (int[]){2, 0, -1}), GCR_ERR_PARAM, "permute", "(-1)", "2,0,-1");
    EXPECT(ctx, gcr_reshape(ctx, c, 3, S(5, -1, 2)), GCR_ERR_SHAPE, "reshape", "[5,-1,2]", "24");
    /* reshape: a NULL shape is an invalid argument, not a rank problem */
    EXPECT(ctx, gcr_reshape(ctx, c, 1, NULL), GCR_ERR_INVALID, "reshape", "NULL shape", "f32[2,3,4]");
    CHECK(gcr_reshape(ctx, c, 1, NULL) == NULL && !strstr(gcr_ctx_error(ctx), "invalid new rank"), "%s",
          gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
    EXPECT(ctx, gcr_reshape(ctx, c, 9, S(1, 2, 3, 4, 5, 6, 7, 8, 9)), GCR_ERR_SHAPE, "reshape", "new rank 9");
    /* matmul's 1-d operands as passed, not as lifted to [1,K] / [K,1] inside */
    gcr_tensor *v4 = T(GCR_F32, 1, S(4)), *v5 = T(GCR_F32, 1, S(5));
    EXPECT(ctx, gcr_matmul(ctx, v4, v5), GCR_ERR_SHAPE, "matmul", "f32[4] and f32[5]");
    EXPECT(ctx, gcr_matmul(ctx, c, v5), GCR_ERR_SHAPE, "matmul", "f32[2,3,4] and f32[5]");
    EXPECT(ctx, gcr_matmul(ctx, v5, c), GCR_ERR_SHAPE, "matmul", "f32[5] and f32[2,3,4]");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_F32, 2, S(4, 1)), v4), GCR_ERR_SHAPE, "matmul", "f32[4,1] and f32[4]");
    EXPECT(ctx, gcr_matmul(ctx, v4, T(GCR_F16, 1, S(4))), GCR_ERR_DTYPE, "matmul", "f32[4] and f16[4]");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_I32, 1, S(4)), T(GCR_I32, 1, S(4))), GCR_ERR_DTYPE, "matmul", "i32[4]");
    EXPECT(ctx, gcr_matmul(ctx, gcr_slice(ctx, T(GCR_F32, 1, S(8)), 0, 0, 8, 2), v5), GCR_ERR_SHAPE, "matmul",
           "f32[4]:strided and f32[5]");
}

typedef gcr_tensor *(*bad_fn)(void);
static gcr_tensor *x4(void) { return T(GCR_F32, 4, S(1, 3, 8, 8)); }
static gcr_tensor *bad_avg_dilation(void)
{
    gcr_pool2d_params p = gcr_pool2d_default(2);
    p.dilation[1] = 2;
    return gcr_avg_pool2d(ctx, x4(), &p);
}
static gcr_tensor *bad_pool_padding(void)
{
    gcr_pool2d_params p = gcr_pool2d_default(3);
    p.padding[0] = 2;
    return gcr_max_pool2d(ctx, x4(), &p);
}
static gcr_tensor *bad_pool_window(void)
{
    gcr_pool2d_params p = gcr_pool2d_default(9);
    return gcr_avg_pool2d(ctx, x4(), &p);
}
static gcr_tensor *bad_conv_stride(void)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.stride[0] = 0;
    return gcr_conv2d(ctx, x4(), T(GCR_F32, 4, S(4, 3, 3, 3)), NULL, &p);
}
static gcr_tensor *bad_conv_groups(void)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.groups = 2;
    return gcr_conv2d(ctx, x4(), T(GCR_F32, 4, S(4, 3, 3, 3)), NULL, &p);
}
static gcr_tensor *bad_conv_kernel(void) { return gcr_conv2d(ctx, x4(), T(GCR_F32, 4, S(4, 3, 9, 9)), NULL, NULL); }
static gcr_tensor *bad_adaptive(void) { return gcr_adaptive_avg_pool2d(ctx, x4(), 0, 2); }
static gcr_tensor *bad_slice_step(void) { return gcr_slice(ctx, x4(), 1, 0, 2, 0); }
static gcr_tensor *bad_permute(void) { return gcr_permute(ctx, x4(), (int[]){0, 1, 1, 3}); }
static gcr_tensor *bad_reshape(void) { return gcr_reshape(ctx, x4(), 2, S(5, -1)); }
static gcr_tensor *bad_flatten(void) { return gcr_flatten(ctx, x4(), 3, 1); }
static gcr_tensor *bad_sum_axis(void) { return gcr_sum(ctx, x4(), (int[]){4}, 1, 0); }
static gcr_tensor *bad_max_empty(void) { return gcr_max(ctx, T(GCR_F32, 2, S(3, 0)), (int[]){1}, 1, 0); }
static gcr_tensor *bad_softmax(void) { return gcr_softmax(ctx, x4(), -5); }
static gcr_tensor *bad_concat(void)
{
    gcr_tensor *x = x4();
    return gcr_concat(ctx, (gcr_tensor *[]){x, T(GCR_F32, 4, S(1, 3, 8, 7))}, 2, 1);
}
static gcr_tensor *bad_contiguous(void) { return gcr_contiguous(ctx, x4(), (gcr_format)5); }
static gcr_tensor *bad_clamp(void) { return gcr_clamp(ctx, x4(), 1.0f, 0.0f); }
static gcr_tensor *bad_cast(void) { return gcr_cast(ctx, x4(), (gcr_dtype)9); }
static gcr_tensor *bad_bn_eps(void)
{
    gcr_tensor *p = T(GCR_F32, 1, S(3));
    return gcr_batch_norm(ctx, x4(), p, p, NULL, NULL, -1.0f);
}
static gcr_tensor *bad_matmul(void) { return gcr_matmul(ctx, T(GCR_F32, 2, S(2, 3)), T(GCR_F32, 2, S(4, 5))); }
static gcr_tensor *bad_relu_dtype(void) { return gcr_relu(ctx, T(GCR_I32, 1, S(3))); }

/* every bad parameter fails at the call with the same status and message under capture as
 * eagerly (no check is left to a backend, where a capture would only find it at its end) */
static void test_capture_twins(void)
{
    static const struct { const char *name; bad_fn fn; } cases[] = {
        {"avg_pool2d dilation", bad_avg_dilation}, {"pool padding", bad_pool_padding},
        {"pool window", bad_pool_window},          {"conv stride", bad_conv_stride},
        {"conv groups", bad_conv_groups},          {"conv kernel", bad_conv_kernel},
        {"adaptive size", bad_adaptive},           {"slice step", bad_slice_step},
        {"permute", bad_permute},                  {"reshape", bad_reshape},
        {"flatten", bad_flatten},                  {"sum axis", bad_sum_axis},
        {"max of empty", bad_max_empty},           {"softmax axis", bad_softmax},
        {"concat shapes", bad_concat},             {"contiguous format", bad_contiguous},
        {"clamp bounds", bad_clamp},               {"cast dtype", bad_cast},
        {"batch_norm eps", bad_bn_eps},            {"matmul shapes", bad_matmul},
        {"relu dtype", bad_relu_dtype},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        gcr_tensor *r = cases[k].fn();
        gcr_status st = gcr_ctx_status(ctx);
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", gcr_ctx_error(ctx));
        gcr_ctx_clear_error(ctx);
        CHECK(r == NULL && st != GCR_OK, "%s: eager call fails (%s)", cases[k].name, gcr_status_name(st));
        if (!CHECK(gcr_capture_begin(ctx) == GCR_OK, "%s: capture_begin: %s", cases[k].name, gcr_ctx_error(ctx))) continue;
        gcr_tensor *rc = cases[k].fn();
        gcr_status stc = gcr_ctx_status(ctx);
        CHECK(rc == NULL && stc == st, "%s: captured call: %s, eager %s (%s)", cases[k].name, gcr_status_name(stc),
              gcr_status_name(st), gcr_ctx_error(ctx));
        CHECK(strcmp(msg, gcr_ctx_error(ctx)) == 0, "%s: messages differ: eager \"%s\", captured \"%s\"", cases[k].name,
              msg, gcr_ctx_error(ctx));
        gcr_graph *g = NULL;
        gcr_capture_end(ctx, &g);
        gcr_graph_destroy(g);
        gcr_ctx_clear_error(ctx);
    }
}

/* gcr_ctx_create(&out, o) with stderr captured: its status, and in msg what it printed */
static gcr_status create_logged(gcr_ctx **out, const gcr_ctx_opts *o, char *msg, size_t n)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    if (tmp) dup2(fileno(tmp), 2);
    gcr_status s = gcr_ctx_create(out, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    msg[0] = 0;
    if (tmp) {
        rewind(tmp);
        size_t k = fread(msg, 1, n - 1, tmp);
        msg[k] = 0;
        fclose(tmp);
    }
    return s;
}

/* options out of range are refused, not taken for defaults: a device outside the enum, a
 * graph_cache below -1 (-1 is "unset": the environment, then the default). There is no ctx to hold
 * the message, so GCR_LOG=2 prints it; gcr_ctx_set_knobs refuses the same knob on the ctx. */
static void test_ctx_create(void)
{
    char msg[2048];
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.knobs.log = 2;
    gcr_ctx *c = (gcr_ctx *)&o; /* not NULL: a failed create must set it */
    o.device = (gcr_device)7;
    CHECK(create_logged(&c, &o, msg, sizeof msg) == GCR_ERR_INVALID && !c, "device 7 refused");
    CHECK(strstr(msg, "ctx_create") && strstr(msg, "device 7"), "message names the device: %s", msg);
    o.device = (gcr_device)-1;
    CHECK(create_logged(&c, &o, msg, sizeof msg) == GCR_ERR_INVALID && !c && strstr(msg, "device -1"),
          "device -1 refused: %s", msg);
    o.device = GCR_DEVICE_CPU;
    o.knobs.graph_cache = -5;
    CHECK(create_logged(&c, &o, msg, sizeof msg) == GCR_ERR_INVALID && !c, "graph_cache -5 refused");
    CHECK(strstr(msg, "ctx_create") && strstr(msg, "graph_cache -5"), "message names the knob: %s", msg);
    o.knobs.log = 0;
    o.knobs.graph_cache = -1;
    CHECK(gcr_ctx_create(&c, &o) == GCR_OK && c && gcr_ctx_knobs(c)->graph_cache == 8, "graph_cache -1: default");
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    k.graph_cache = -2;
    CHECK(gcr_ctx_set_knobs(c, &k) == GCR_ERR_INVALID && strstr(gcr_ctx_error(c), "ctx_set_knobs") &&
              strstr(gcr_ctx_error(c), "graph_cache -2"),
          "set_knobs refuses graph_cache -2: %s", gcr_ctx_error(c));
    CHECK(gcr_ctx_knobs(c)->graph_cache == 8, "a refused set_knobs changes nothing");
    gcr_ctx_destroy(c);
    o.knobs.graph_cache = 3;
    CHECK(gcr_ctx_create(&c, &o) == GCR_OK && c && gcr_ctx_knobs(c)->graph_cache == 3, "graph_cache 3");
    gcr_ctx_destroy(c);
    /* every integer knob in its range: 0/1 flags, log 0..2; -1 alone means unset */
    o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.log = 2;
    o.knobs.guards = 7;
    CHECK(create_logged(&c, &o, msg, sizeof msg) == GCR_ERR_INVALID && !c && strstr(msg, "knobs.guards 7"),
          "guards 7 refused: %s", msg);
    o.knobs.guards = -1;
    o.knobs.log = 0;
    CHECK(gcr_ctx_create(&c, &o) == GCR_OK && c, "ctx");
    k = gcr_ctx_opts_default().knobs;
    k.fusion = -5;
    CHECK(gcr_ctx_set_knobs(c, &k) == GCR_ERR_INVALID && strstr(gcr_ctx_error(c), "knobs.fusion -5"),
          "set_knobs refuses fusion -5: %s", gcr_ctx_error(c));
    CHECK(gcr_ctx_knobs(c)->fusion == 1, "a refused set_knobs changes nothing");
    gcr_ctx_destroy(c);
    /* the environment: a whole number in range (spaces around it allowed), else refused naming the
     * variable; GCR_GUARDS=true read as 0 by atoi had turned the guards off */
    static const struct { const char *env, *val; int ok; } envs[] = {
        {"GCR_GUARDS", "true", 0},  {"GCR_FUSION", "yes", 0},        {"GCR_LOG", "99999999999", 0},
        {"GCR_GUARDS", "2", 0},     {"GCR_GRAPH_CACHE", "-3", 0},    {"GCR_RETRACE", "0x10", 0},
        {"GCR_RETRACE", " 0 ", 1},  {"GCR_GRAPH_CACHE", "12", 1},    {"GCR_DEVICE", "gpu", 0},
    };
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        o = gcr_ctx_opts_default();
        o.device = strcmp(envs[i].env, "GCR_DEVICE") ? GCR_DEVICE_CPU : GCR_DEVICE_AUTO;
        const int is_log = !strcmp(envs[i].env, "GCR_LOG"); /* an API log level would win over it */
        o.knobs.log = is_log ? -1 : 2;
        setenv(envs[i].env, envs[i].val, 1);
        gcr_status st = create_logged(&c, &o, msg, sizeof msg);
        unsetenv(envs[i].env);
        if (envs[i].ok) CHECK(st == GCR_OK && c, "%s=\"%s\" taken: %s", envs[i].env, envs[i].val, msg);
        else
            CHECK(st == GCR_ERR_INVALID && !c && (is_log || (strstr(msg, envs[i].env) && strstr(msg, envs[i].val))),
                  "%s=\"%s\" refused, naming it: %s %s", envs[i].env, envs[i].val, gcr_status_name(st), msg);
        gcr_ctx_destroy(c);
        c = NULL;
    }
    /* GCR_LOG=2 from the environment prints the refusal of any other knob, also one that comes
     * before it in the table (GCR_FUSION was refused while the log level was still the default 1) */
    static const char *const before_log[][2] = {{"GCR_FUSION", "yes"}, {"GCR_GRAPH_CACHE", "-3"}, {"GCR_TF32", "on"}};
    for (size_t i = 0; i < sizeof before_log / sizeof before_log[0]; i++) {
        o = gcr_ctx_opts_default();
        o.device = GCR_DEVICE_CPU;
        setenv("GCR_LOG", "2", 1);
        setenv(before_log[i][0], before_log[i][1], 1);
        gcr_status st = create_logged(&c, &o, msg, sizeof msg);
        unsetenv(before_log[i][0]);
        unsetenv("GCR_LOG");
        CHECK(st == GCR_ERR_INVALID && !c && strstr(msg, before_log[i][0]) && strstr(msg, before_log[i][1]),
              "GCR_LOG=2 prints the refusal of %s=\"%s\": %s \"%s\"", before_log[i][0], before_log[i][1],
              gcr_status_name(st), msg);
        gcr_ctx_destroy(c);
        c = NULL;
    }
    o = gcr_ctx_opts_default(); /* and an API knob out of range, checked before the others are read */
    o.device = GCR_DEVICE_CPU;
    o.knobs.guards = 7;
    setenv("GCR_LOG", "2", 1);
    gcr_status st = create_logged(&c, &o, msg, sizeof msg);
    unsetenv("GCR_LOG");
    CHECK(st == GCR_ERR_INVALID && !c && strstr(msg, "knobs.guards 7"), "GCR_LOG=2 prints knobs.guards 7 refused: %s", msg);
}

/* the default cache_dir under a long XDG_CACHE_HOME is that directory's gcr/, not a prefix of it
 * (a 1024-byte buffer cut it short, naming another directory). GCR_CACHE_DIR would override the
 * default, so it is unset for the case and put back after. */
static void test_long_cache_home(void)
{
    char *home = malloc(1200), *want = malloc(1300);
    const char *saved = getenv("XDG_CACHE_HOME"), *saved_dir = getenv("GCR_CACHE_DIR");
    char *keep = saved ? strdup(saved) : NULL, *keep_dir = saved_dir ? strdup(saved_dir) : NULL;
    unsetenv("GCR_CACHE_DIR");
    int n = snprintf(home, 1200, "/tmp/gcr_test_cache_%d/", (int)getpid());
    while (n < 1100) home[n++] = 'c';
    home[n] = 0;
    snprintf(want, 1300, "%s/gcr", home);
    setenv("XDG_CACHE_HOME", home, 1);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.log = 0;
    gcr_ctx *c = NULL;
    if (CHECK(gcr_ctx_create(&c, &o) == GCR_OK, "ctx"))
        CHECK(!strcmp(gcr_ctx_knobs(c)->cache_dir, want), "cache_dir is $XDG_CACHE_HOME/gcr (%zu characters), got %zu",
              strlen(want), strlen(gcr_ctx_knobs(c)->cache_dir));
    gcr_ctx_destroy(c);
    if (keep) setenv("XDG_CACHE_HOME", keep, 1);
    else unsetenv("XDG_CACHE_HOME");
    if (keep_dir) setenv("GCR_CACHE_DIR", keep_dir, 1);
    free(keep);
    free(keep_dir);
    free(home);
    free(want);
}

/* the knobs in force, copied, changed in one field and set again and again: the copy's strings are
 * the ctx's own, which a set_knobs must not free under it (the second call read freed memory) */
static void test_knobs_copy(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.log = 0;
    o.knobs.dump_dir = "knobs_copy_dir";
    gcr_ctx *c = NULL;
    if (!CHECK(gcr_ctx_create(&c, &o) == GCR_OK, "ctx")) return;
    gcr_knobs k = *gcr_ctx_knobs(c);
    for (int i = 0; i < 3; i++) {
        k.fusion = i & 1;
        CHECK(gcr_ctx_set_knobs(c, &k) == GCR_OK, "set_knobs %d: %s", i, gcr_ctx_error(c));
    }
    CHECK(!strcmp(k.dump_dir, "knobs_copy_dir") && !strcmp(gcr_ctx_knobs(c)->dump_dir, "knobs_copy_dir") &&
              gcr_ctx_knobs(c)->fusion == 0,
          "knobs kept: dump_dir %s, fusion %d", gcr_ctx_knobs(c)->dump_dir, gcr_ctx_knobs(c)->fusion);
    k.dump_dir = "another_dir"; /* a new value is still taken */
    CHECK(gcr_ctx_set_knobs(c, &k) == GCR_OK && !strcmp(gcr_ctx_knobs(c)->dump_dir, "another_dir"), "dump_dir %s",
          gcr_ctx_knobs(c)->dump_dir);
    gcr_ctx_destroy(c);
}

/* a string knob set to "" takes its default, as an empty variable does at ctx_create: set_knobs can
 * turn a profile or dumps off (they were taken as the path "", and each capture and graph printed
 * that it could not write there) */
static void test_knobs_empty(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.log = 0;
    o.knobs.profile = "/nonexistent_gcr_dir/p.json";
    o.knobs.dump = "all";
    o.knobs.dump_dir = "/nonexistent_gcr_dir";
    o.knobs.skip_fuse = "conv";
    gcr_ctx *c = NULL;
    if (!CHECK(gcr_ctx_create(&c, &o) == GCR_OK, "ctx")) return;
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    k.profile = k.dump = k.dump_dir = k.skip_fuse = k.cache_dir = "";
    CHECK(gcr_ctx_set_knobs(c, &k) == GCR_OK, "set_knobs: %s", gcr_ctx_error(c));
    const gcr_knobs *in = gcr_ctx_knobs(c);
    CHECK(!in->profile && !in->dump && !in->skip_fuse, "profile, dump and skip_fuse off: %s %s %s",
          in->profile ? in->profile : "(null)", in->dump ? in->dump : "(null)", in->skip_fuse ? in->skip_fuse : "(null)");
    CHECK(in->dump_dir && !strcmp(in->dump_dir, "gcr_dump"), "dump_dir default: %s", in->dump_dir ? in->dump_dir : "(null)");
    CHECK(in->cache_dir && *in->cache_dir, "cache_dir default: %s", in->cache_dir ? in->cache_dir : "(null)");
    gcr_ctx_destroy(c);
}

/* allocation failure: a huge tensor or op result gives OOM and NULL, and the ctx stays usable */
static void test_oom(void)
{
    EXPECT(ctx, gcr_tensor_new(ctx, GCR_F32, 3, S(1 << 20, 1 << 20, 1 << 8), GCR_NCHW), GCR_ERR_OOM, "tensor_new",
           "f32[1048576,1048576,256]");
    /* element counts past int64 are refused before any arithmetic overflows (UBSan checks) */
    const int64_t big = (int64_t)1 << 40;
    EXPECT(ctx, gcr_tensor_new(ctx, GCR_F32, 3, S(big, big, big), GCR_NCHW), GCR_ERR_OOM, "tensor_new",
           "f32[1099511627776,1099511627776,1099511627776]", "too large");
    EXPECT(ctx, gcr_tensor_new(ctx, GCR_I64, 2, S(big, (int64_t)1 << 21), GCR_NCHW), GCR_ERR_OOM, "tensor_new");
    EXPECT(ctx, gcr_reshape(ctx, T(GCR_F32, 1, S(12)), 3, S(-1, big, big)), GCR_ERR_SHAPE, "reshape", "f32[12]");
    EXPECT(ctx, gcr_reshape(ctx, T(GCR_F32, 1, S(12)), 3, S(big, big, big)), GCR_ERR_SHAPE, "reshape", "f32[12]");
    gcr_tensor *a = T(GCR_F32, 2, S(1 << 24, 1)), *b = T(GCR_F32, 2, S(1, 1 << 24));
    EXPECT(ctx, gcr_add(ctx, a, b), GCR_ERR_OOM, "add", "f32[16777216,16777216]");
    gcr_tensor *y = gcr_relu(ctx, T(GCR_F32, 1, S(3)));
    CHECK(y != NULL && gcr_ctx_status(ctx) == GCR_OK, "ctx usable after OOM");
}

/* a tensor of another context is refused, whichever input it is */
static void test_other_ctx(void)
{
    gcr_ctx *other = h_ctx(GCR_DEVICE_CPU);
    float h[12] = {0};
    gcr_tensor *a = T(GCR_F32, 2, S(3, 4));
    gcr_tensor *o = gcr_tensor_from_data(other, GCR_F32, 2, S(3, 4), GCR_NCHW, h);
    EXPECT(ctx, gcr_add(ctx, a, o), GCR_ERR_INVALID, "add", "another context", "f32[3,4]");
    EXPECT(ctx, gcr_relu(ctx, o), GCR_ERR_INVALID, "relu", "another context");
    EXPECT(ctx, gcr_dropout(ctx, o, 0.1f), GCR_ERR_INVALID, "dropout", "another context"); /* returns x: no dispatch */
    EXPECT(ctx, gcr_concat(ctx, (gcr_tensor *[]){a, o}, 2, 0), GCR_ERR_INVALID, "concat", "another context");
    /* calls that run another op first (matmul lifts a 1-d operand, reshape and flatten copy a
     * strided input) name the op that was called */
    gcr_tensor *o1 = gcr_tensor_from_data(other, GCR_F32, 1, S(3), GCR_NCHW, h);
    gcr_tensor *ot = gcr_permute(other, o, (int[]){1, 0});
    EXPECT(ctx, gcr_matmul(ctx, o1, a), GCR_ERR_INVALID, "matmul", "another context", "f32[3]");
    EXPECT(ctx, gcr_matmul(ctx, T(GCR_F32, 2, S(2, 3)), o1), GCR_ERR_INVALID, "matmul", "another context");
    EXPECT(ctx, gcr_reshape(ctx, ot, 1, S(-1)), GCR_ERR_INVALID, "reshape", "another context", "f32[4,3]");
    EXPECT(ctx, gcr_flatten(ctx, ot, 0, -1), GCR_ERR_INVALID, "flatten", "another context");
    CHECK(gcr_ctx_status(other) == GCR_OK, "the other context is not blamed");
    gcr_ctx_destroy(other);
}

/* the first error sticks until cleared; later failures do not overwrite it */
static void test_sticky(void)
{
    gcr_tensor *a = T(GCR_F32, 2, S(3, 4)), *i = T(GCR_I32, 1, S(2));
    CHECK(gcr_add(ctx, a, T(GCR_F32, 1, S(5))) == NULL, "first error");
    CHECK(gcr_relu(ctx, i) == NULL, "second error");
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_SHAPE && strstr(gcr_ctx_error(ctx), "add"), "first error kept: %s", gcr_ctx_error(ctx));
    CHECK(gcr_relu(ctx, a) != NULL, "valid ops still run while an error is recorded");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_ctx_status(ctx) == GCR_OK && !strcmp(gcr_ctx_error(ctx), ""), "cleared");
}

/* An eager section (what BN folding runs in at capture end) returns its own first error and leaves
 * the ctx's mode, status and message as they were: inside an open capture its ops run eagerly (they
 * have data) and a failing one neither reaches the user's error nor fails the capture. */
static void test_eager_section(void)
{
    gcr_tensor *a = T(GCR_F32, 2, S(3, 4)), *b = T(GCR_F32, 1, S(5));
    CHECK(gcr_add(ctx, a, b) == NULL && gcr_ctx_status(ctx) == GCR_ERR_SHAPE, "the user's error");
    char before[sizeof ctx->err];
    snprintf(before, sizeof before, "%s", gcr_ctx_error(ctx));
    gcr_eager_section sec;
    gcr_eager_begin(ctx, &sec);
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "a section starts clear");
    CHECK(gcr_relu(ctx, T(GCR_I32, 1, S(2))) == NULL, "failing op in the section");
    gcr_status st = gcr_eager_end(ctx, &sec);
    CHECK(st == GCR_ERR_DTYPE, "the section's error is returned: %s", gcr_status_name(st));
    CHECK(gcr_ctx_status(ctx) == GCR_ERR_SHAPE && !strcmp(gcr_ctx_error(ctx), before),
          "the user's error is as it was: %s", gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);

    CHECK_OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = gcr_relu(ctx, a); /* traced */
    gcr_eager_begin(ctx, &sec);
    gcr_tensor *e = gcr_neg(ctx, a); /* runs now */
    CHECK(gcr_add(ctx, a, b) == NULL, "failing op in the section, under capture");
    st = gcr_eager_end(ctx, &sec);
    CHECK(st == GCR_ERR_SHAPE && gcr_ctx_status(ctx) == GCR_OK, "section error %s, ctx %s", gcr_status_name(st),
          gcr_status_name(gcr_ctx_status(ctx)));
    CHECK(gcr_ctx_capturing(ctx), "the capture is still open");
    float ha[12], he[12];
    CHECK(e && gcr_tensor_to_host(e, he, sizeof he) == GCR_OK && gcr_tensor_to_host(a, ha, sizeof ha) == GCR_OK,
          "the section's result has data: %s", gcr_ctx_error(ctx));
    for (int i = 0; e && i < 12; i++) CHECK(he[i] == -ha[i], "neg[%d] %g for %g", i, he[i], ha[i]);
    gcr_graph *g = NULL;
    CHECK(y && gcr_capture_end(ctx, &g) == GCR_OK && g, "the capture ends well: %s", gcr_ctx_error(ctx));
    gcr_graph_destroy(g);
    gcr_tensor_free(e);
    gcr_ctx_clear_error(ctx);
}

int main(void)
{
    ctx = h_ctx(GCR_DEVICE_CPU);
    RUN(test_null_tensors);
    RUN(test_dtypes);
    RUN(test_shapes);
    RUN(test_axes);
    RUN(test_conv_params);
    RUN(test_pool_params);
    RUN(test_matmul_concat_bn);
    RUN(test_messages);
    RUN(test_capture_twins);
    RUN(test_ctx_create);
    RUN(test_long_cache_home);
    RUN(test_knobs_copy);
    RUN(test_knobs_empty);
    RUN(test_oom);
    RUN(test_other_ctx);
    RUN(test_sticky);
    RUN(test_eager_section);
    gcr_ctx_destroy(ctx);
    return h_finish();
}
