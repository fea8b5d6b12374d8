/* pool.c — max/avg/adaptive-avg pooling on the GPU (kernels/pool.cuh): a thread per output in
 * general, and a reduction kernel for global average pooling (adaptive 1x1), chosen by which
 * input dim is contiguous, split over pixels when images x channels are too few to fill the GPU.
 * Window rules are PyTorch's, as in lib/cpu/pool.c. */
#include "dense.h"
#include <stdio.h>

int gcr_cuda_pool_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l)
{
    const gcr_meta *x = &c->in[0]->m;
    int n = 0;
    /* image and channel indices are ints; global pooling by channels (gap_cols) has a grid row per image */
    l[n++] = (gcr_cuda_limit){"images", x->shape[0], 65535};
    l[n++] = (gcr_cuda_limit){"channels", x->shape[1], GCR_CUDA_IDX_MAX};
    /* pixels, windows and padded coordinates are ints (padding is at most 2^19 here: half a kernel) */
    l[n++] = (gcr_cuda_limit){"input pixels (height x width)", x->shape[2] * x->shape[3], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"outputs", gcr_meta_numel(out), (1LL << 40) - 1};
    return n;
}

/* Pixel splits of a global average over channels (gcr_gap_cols_body): with few groups (image x
 * block of cb channels) each block walks many pixels while the GPU holds few loads in flight, as
 * MobileNet-v3's squeeze-excite pools do at batch 1 (3 to 30 blocks over 28x28 to 7x7) and its
 * 14x14x480 one at batch 128 (256 groups: 15.6 us whole, 11.2 split in two, H200). So the pixels
 * split until about GAP_BLOCKS_PER_SM blocks per SM, each split at least GAP_MIN_PIXELS pixels, at
 * most 64 splits (8 blocks an SM with splits of 32 pixels ran slower); sets a's workspace. 1 without
 * split-K's scratch (or with src_out: only the program is wanted). */
#define GAP_BLOCKS_PER_SM 2
#define GAP_MIN_PIXELS 64
static unsigned gap_splits(gcr_ctx *ctx, gcr_pool_args *a, int64_t groups, int64_t cb, const gcr_cuda_hooks *h)
{
    int64_t sms = gcr_cuda_sm_count(ctx), hw = a->H * a->W, want = GAP_BLOCKS_PER_SM * sms;
    if (groups >= want || hw < 2 * GAP_MIN_PIXELS || (h && h->src_out)) return 1;
    int64_t s = (want + groups - 1) / groups;
    if (s > hw / GAP_MIN_PIXELS) s = hw / GAP_MIN_PIXELS;
    if (s > 64) s = 64;
    if (s < 2 || groups > GCR_CUDA_SPLITK_TILES || groups * s * cb * 4 > (int64_t)GCR_CUDA_SPLITK_BYTES) return 1;
    if (!gcr_cuda_splitk_ws(ctx, 1, &a->part, &a->sem)) return 1;
    a->splits = s;
    return (unsigned)s;
}

gcr_status gcr_cuda_pool_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *x = &c->in[0]->m, *y = &out->m;
    const gcr_pool2d_params *p = &c->p.pool;
    gcr_dtype dt = x->dtype;
    gcr_pool_args a = {.N = x->shape[0], .C = x->shape[1], .H = x->shape[2], .W = x->shape[3], .OH = y->shape[2],
                   .OW = y->shape[3], .splits = 1};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ys[i] = y->strides[i];
    }
    const char *kind;
    unsigned gx, gy = 1, gz = 1;
    if (c->op == GCR_OP_ADAPTIVE_AVG_POOL2D && a.OH == 1 && a.OW == 1) {
        a.total = a.N * a.C;
        /* channels contiguous: coalesce over C; also where a warp per (n, c) row would need more
         * blocks than grid x holds (2^31 - 1) */
        if ((a.xs[1] == 1 && a.C > 1) || (a.total + 7) / 8 > INT32_MAX) {
            /* 16-byte vectors of channels where every pixel's start is aligned */
            a.vec = gcr_cuda_vec16(a.xs, a.C, gcr_dtype_size(dt), gcr_tensor_data(c->in[0]));
            const int64_t cb = a.vec ? 32 * (16 / (int64_t)gcr_dtype_size(dt)) : 32;
            kind = "gap_cols";
            gx = (unsigned)((a.C + cb - 1) / cb);
            gy = (unsigned)a.N;
            gz = gap_splits(ctx, &a, (int64_t)gx * gy, cb, h);
        } else {
            kind = "gap_rows";
            gx = (unsigned)((a.total + 7) / 8);
        }
    } else {
        a.mode = c->op == GCR_OP_MAX_POOL2D ? 0 : c->op == GCR_OP_AVG_POOL2D ? 1 : 2;
        if (a.mode != 2) {
            a.KH = p->kernel[0];
            a.KW = p->kernel[1];
            a.sh = p->stride[0];
            a.sw = p->stride[1];
            a.ph = p->padding[0];
            a.pw = p->padding[1];
            a.dh = p->dilation[0];
            a.dw = p->dilation[1];
            a.count_include_pad = p->count_include_pad;
        }
        a.total = a.N * a.C * a.OH * a.OW;
        a.c_fast = a.ys[1] == 1 && a.C > 1;
        int64_t blocks = (a.total + 255) / 256, cap = (int64_t)gcr_cuda_sm_count(ctx) * 16;
        gx = (unsigned)(blocks < cap ? blocks : cap);
        kind = "pool";
    }
    char name[40];
    snprintf(name, sizeof name, "gcr_%s_%s", kind, gcr_cuda_dt_suffix(dt));
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "pool.cuh", dt, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    const void *xp = gcr_tensor_data(c->in[0]);
    void *yp = gcr_tensor_data(out);
    void *std[] = {&a, &xp, &yp};
    if (gz > 1) GCR_TRY(gcr_cuda_splitk_zeroed(ctx));
    return gcr_cuda_hooked_launch(ctx, k, gx, gy, gz, 256, 0, std, 3, h);
}

gcr_status gcr_cuda_pool(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_pool_hooked(ctx, c, out, NULL);
}
