/* gpu_compare.h — shared by the tests that hold GPU kernels to the CPU backend (test_cuda_dense,
 * test_cuda_depthwise): a CPU and a GPU context, random operands with the same values on both,
 * and the comparison of the two results at the dtype's tolerance. Each test lays its operands out
 * its own way (its make2) on top of rand2. In CUDA builds this also brings in cuda/dense.h, whose
 * hooked kernels the tests call directly. */
#ifndef GCR_TEST_GPU_COMPARE_H
#define GCR_TEST_GPU_COMPARE_H

#include "harness.h"
#ifdef GCR_HAVE_CUDA
#include "cuda/dense.h"
#endif

static gcr_ctx *cpu, *gpu;
static __attribute__((unused)) int tf32_on; /* gpu runs with knobs.tf32: f32 compares at TF32's tolerance */
/* the reduction length of the op being compared (a conv's C / groups * KH * KW, a linear layer's
 * input features), which TF32's bound grows with; 0 where the caller does not say */
static __attribute__((unused)) int64_t tf32_k;

/* Opens cpu and gpu, the data seeded first so each run draws the same operands; 0 (after a skip
 * line, or a failed check for want of a CPU context) when the test cannot run. */
static int open2(uint64_t seed)
{
    h_seed(seed);
    h_case = "setup";
    gpu = h_ctx(GCR_DEVICE_CUDA);
    if (!gpu) return 0;
    cpu = h_ctx(GCR_DEVICE_CPU);
    if (cpu) return 1;
    gcr_ctx_destroy(gpu);
    return 0;
}

/* main's ending after open2 succeeded */
static int close2(void)
{
    gcr_ctx_destroy(cpu);
    gcr_ctx_destroy(gpu);
    return h_finish();
}

/* The same random values in [-1, 1) as a dense tensor of nd dims phys in format f on both
 * contexts: t[0] on cpu, t[1] on gpu, each NULL where it could not be made. */
static void rand2(gcr_dtype dt, int nd, const int64_t *phys, gcr_format f, gcr_tensor *t[2])
{
    int64_t n = 1;
    for (int i = 0; i < nd; i++) n *= phys[i];
    float *h = h_randn(n, -1.0f, 1.0f);
    t[0] = h_tensor(cpu, dt, nd, phys, f, h);
    t[1] = h_tensor(gpu, dt, nd, phys, f, h);
    free(h);
}

static void tol(gcr_dtype dt, float *atol, float *rtol)
{
    /* TF32 rounds operands to 11 significant bits (2^-11 relative each): on these [-1, 1) inputs
     * with K <= 200 the error stays near 1e-3, while a wrong index or fragment is O(1). The
     * products' rounding errors have random signs, so a sum's error grows as sqrt(K), and so does
     * the bound past K 200: the same number of standard deviations at every K. (Fixed, it failed
     * 1 element of 216 at K 4608 on an H200: got -0.0605 want -0.0496, where a typical output of
     * that sum is about 22.) A wrong index still errs by about a typical output, sqrt(K) / 3. */
    float f32 = tf32_on ? 1e-2f * (tf32_k > 200 ? sqrtf((float)tf32_k / 200.0f) : 1.0f) : 1e-4f;
    *atol = *rtol = dt == GCR_F32 ? f32 : dt == GCR_F16 ? 1e-2f : 2e-2f;
}

/* Reads both results and compares them as logical values, whatever the layout; with same_format
 * the GPU must also produce the CPU's memory format. Frees nothing (scopes do). */
static void compare_as(gcr_tensor *rc, gcr_tensor *rg, gcr_dtype dt, int same_format, const char *what)
{
    if (!CHECK(rc && rg, "%s: cpu %s / gpu %s", what, rc ? "ok" : gcr_ctx_error(cpu), rg ? "ok" : gcr_ctx_error(gpu))) {
        gcr_ctx_clear_error(cpu);
        gcr_ctx_clear_error(gpu);
        return;
    }
    int64_t n = gcr_tensor_numel(rc);
    CHECK(n == gcr_tensor_numel(rg) && (!same_format || gcr_tensor_format(rc) == gcr_tensor_format(rg)),
          "%s: result %s differ", what, same_format ? "shapes" : "sizes");
    float *a = h_read(rc), *b = h_read(rg), at, rt;
    tol(dt, &at, &rt);
    CHECK_CLOSE(b, a, n, at, rt, what);
    free(a);
    free(b);
}

#ifdef GCR_HAVE_CUDA
/* a tensor on ctx for the result of call c (shape, dtype and format as the op infers them), for
 * the hooked kernels, which write into a given output */
static __attribute__((unused)) gcr_tensor *new_result(gcr_ctx *ctx, gcr_call *c)
{
    gcr_meta m;
    char err[256];
    if (gcr_infer(c, &m, err, sizeof err) != GCR_OK) return NULL;
    return gcr_tensor_alloc(ctx, &m, "hooked");
}
#endif

#endif
