/* test_cuda_divs.c — the magic dividers the CUDA kernels divide by (lib/cuda/pointwise.c
 * gcr_cuda_divs_init, common.cuh gcr_div): the kernel's formula (umulhi(n, magic) + n) >> shift,
 * evaluated here on the host in the same 32-bit arithmetic, must equal n / d for every dividend
 * below the bound passed in. The dense engine's tiles decode rows (by OH*OW, OW) and taps (by
 * channels per tap, KW) with them, so divisors from 1 to 2^31 - 1 and dividends up to 2^31 - 1
 * are covered: powers of two and their neighbours, the shapes of real layers, and random pairs.
 * Host only: runs without a GPU. */
#include "harness.h"
#include "cuda/cuda_ops.h"

/* the device's gcr_div, in the same unsigned 32-bit arithmetic */
static uint32_t magic_div(uint32_t n, uint32_t magic, uint32_t shift)
{
    uint32_t hi = (uint32_t)(((uint64_t)n * magic) >> 32);
    return (hi + n) >> shift;
}

/* d's divider, checked on n; returns 0 on the first wrong quotient */
static int check_one(int64_t d, int64_t n)
{
    gcr_divs dv;
    if (!CHECK(gcr_cuda_divs_init(&dv, 1, &d, n), "divider of %lld for dividends up to %lld", (long long)d, (long long)n))
        return 0;
    uint32_t q = magic_div((uint32_t)n, dv.magic[0], dv.shift[0]);
    return CHECK(q == (uint32_t)(n / d), "%lld / %lld: magic %u shift %u gives %u, want %lld", (long long)n, (long long)d,
                 dv.magic[0], dv.shift[0], q, (long long)(n / d));
}

/* dividends around the multiples of d that matter: 0, d - 1, d, d + 1, the largest below 2^31 and
 * the multiples just under it */
static void check_edges(int64_t d)
{
    const int64_t top = ((int64_t)1 << 31) - 1, last = top / d * d;
    const int64_t ns[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, last - 1, last, top};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        if (ns[i] >= 0 && ns[i] <= top && !check_one(d, ns[i])) return;
}

static void test_divisors(void)
{
    /* powers of two and their neighbours, from 1 to 2^31 - 1 */
    for (int b = 0; b < 31; b++) {
        const int64_t p = (int64_t)1 << b;
        check_edges(p);
        if (p > 1) check_edges(p - 1);
        check_edges(p + 1 < ((int64_t)1 << 31) ? p + 1 : p);
    }
    /* layer shapes: spatial sizes (OH*OW and OW), channels per tap */
    const int64_t layers[] = {3, 7, 14, 28, 49, 56, 112, 196, 784, 3136, 12544, 50176, 24, 40, 72, 120, 184, 480, 960, 2048};
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) check_edges(layers[i]);
    /* random divisors and dividends below 2^31 */
    for (int i = 0; i < 200000; i++) {
        const int64_t d = 1 + (int64_t)(h_next() % (((uint64_t)1 << 31) - 1));
        const int64_t small = 1 + (int64_t)(h_next() % 100000);
        const int64_t n = (int64_t)(h_next() % ((uint64_t)1 << 31));
        if (!check_one(i & 1 ? small : d, n)) return;
    }
}

/* the bounds: a divisor below 1 or past 2^31 - 1, or a dividend bound of 2^31, has no divider */
static void test_refusals(void)
{
    gcr_divs dv;
    const int64_t zero = 0, big = (int64_t)1 << 31, one = 1;
    CHECK(!gcr_cuda_divs_init(&dv, 1, &zero, 10), "divisor 0 is refused");
    CHECK(!gcr_cuda_divs_init(&dv, 1, &big, 10), "divisor 2^31 is refused");
    CHECK(!gcr_cuda_divs_init(&dv, 1, &one, (int64_t)1 << 31), "dividends up to 2^31 are refused");
}

int main(void)
{
    RUN(test_divisors);
    RUN(test_refusals);
    return h_finish();
}
