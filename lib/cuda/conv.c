/* conv.c — conv2d on the GPU: depthwise convs (groups == C == O) get the memory-bound depthwise
 * kernel of kernels/conv.cuh, every other conv the dense engine (dense.c) as an implicit GEMM.
 * The hooked entry point is the one capture's fused kernels run through (hooks.c). */
#include "dense.h"
#include <stdint.h>
#include <stdio.h>

/* channels-last depthwise with 16 bytes of channels per thread (conv.cuh gcr_dw_vec) */
#ifndef GCR_DW_VEC
#define GCR_DW_VEC 1
#endif

static gcr_status depthwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m, *y = &out->m;
    const gcr_conv2d_params *p = &c->p.conv;
    gcr_dw_args a = {.N = x->shape[0], .C = x->shape[1], .H = x->shape[2], .W = x->shape[3], .OH = y->shape[2],
                 .OW = y->shape[3], .KH = w->shape[2], .KW = w->shape[3], .sh = p->stride[0], .sw = p->stride[1],
                 .ph = p->padding[0], .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1]};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ws[i] = w->strides[i];
        a.ys[i] = y->strides[i];
    }
    a.total = a.N * a.C * a.OH * a.OW;
    a.c_fast = y->strides[1] == 1 && a.C > 1;
    const void *xp = gcr_tensor_data(c->in[0]), *wp = gcr_tensor_data(c->in[1]);
    const void *bp = c->in[2] ? gcr_tensor_data(c->in[2]) : NULL;
    void *yp = gcr_tensor_data(out);
    /* the kernel's 4-outputs-per-thread paths (conv.cuh gcr_dw_tile, gcr_dw_vec) need a quarter
     * of the threads; the channels-last one also 16 bytes of channels per thread, every offset of
     * them a multiple of 16 bytes, and at most 65535 blocks of 32 channel groups (grid y) */
    int tile = a.KH == a.KW && (a.KH == 3 || a.KH == 5) && a.dw == 1 && (a.sw == 1 || a.sw == 2) && a.total < (1LL << 31);
    int64_t vc = 16 / (int64_t)gcr_dtype_size(x->dtype);
    if (GCR_DW_VEC && tile && a.c_fast && a.xs[1] == 1 && a.C % vc == 0 && a.C / vc <= 65535LL * 32 && a.xs[0] % vc == 0 &&
        a.xs[2] % vc == 0 && a.xs[3] % vc == 0 && a.ys[0] % vc == 0 && a.ys[2] % vc == 0 && a.ys[3] % vc == 0 &&
        (uintptr_t)xp % 16 == 0 && (uintptr_t)yp % 16 == 0 &&
        a.N * a.OH * ((a.OW + 1) / 2) * (a.C / vc) >= (int64_t)gcr_cuda_sm_count(ctx) * 512)
        a.c_fast = 2; /* ... and enough threads: at batch 1 the one-channel tiles fill the device better */
    gcr_cuda_fn *k;
    char name[32];
    snprintf(name, sizeof name, "gcr_dw%s_%s", a.c_fast == 2 ? "v" : "", gcr_cuda_dt_suffix(x->dtype));
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", x->dtype, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    int64_t work = tile ? a.N * a.C * a.OH * ((a.OW + 3) / 4) : a.total;
    int64_t blocks = (work + 255) / 256, cap = (int64_t)gcr_cuda_sm_count(ctx) * 16, gy = 1;
    if (a.c_fast == 2) { /* gcr_dw_vec: blocks of CB channel groups x 256 / CB pixel slots */
        int64_t ox = vc == 8 ? 2 : 4, cv = a.C / vc, cb = cv < 32 ? cv : 32, slots = 256 / cb;
        gy = (cv + cb - 1) / cb;
        blocks = (a.N * a.OH * ((a.OW + ox - 1) / ox) + slots - 1) / slots;
        cap = (cap + gy - 1) / gy;
    }
    void *std[] = {&a, &xp, &wp, &yp, &bp};
    return gcr_cuda_hooked_launch(ctx, k, (unsigned)(blocks < cap ? blocks : cap), (unsigned)gy, 1, 256, std, 5, h);
}

static bool is_depthwise(const gcr_call *c)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    int64_t C = x->shape[1], O = w->shape[0], G = c->p.conv.groups;
    return G == C && O == C && w->shape[1] == 1;
}

/* the dense engine's problem for a (non-depthwise) conv with result meta y */
static gcr_dense_args conv_dense_args(const gcr_call *c, const gcr_meta *y)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    const gcr_conv2d_params *p = &c->p.conv;
    int64_t O = w->shape[0], G = p->groups, Cg = w->shape[1], Og = O / G;
    gcr_dense_args a = {.M = x->shape[0] * y->shape[2] * y->shape[3], .N = Og, .K = Cg * w->shape[2] * w->shape[3],
                             .OH = y->shape[2], .OW = y->shape[3], .H = x->shape[2], .W = x->shape[3],
                             .KH = w->shape[2], .KW = w->shape[3], .sh = p->stride[0], .sw = p->stride[1],
                             .ph = p->padding[0], .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1]};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ws[i] = w->strides[i];
        a.ys[i] = y->strides[i];
    }
    if (G > 1) { /* z = group: each a GEMM over its own channel slices */
        a.nz = 1;
        a.zshape[0] = G;
        a.zx[0] = Cg * a.xs[1];
        a.zw[0] = Og * a.ws[0];
        a.zy[0] = Og * a.ys[1];
        a.zc = Cg;
        a.zo = Og;
    }
    /* coalesced load order: NHWC inputs run along channels (k), NCHW along output pixels (rows) */
    a.a_kfast = a.xs[1] == 1;
    a.b_kfast = (a.KH * a.KW == 1 ? a.ws[1] : a.ws[3]) == 1;
    return a;
}

int gcr_cuda_conv2d_limits(const gcr_call *c, const gcr_meta *out, gcr_cuda_limit *l)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m;
    const gcr_conv2d_params *p = &c->p.conv;
    int n = 0;
    l[n++] = (gcr_cuda_limit){"images", x->shape[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"input channels", x->shape[1], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"output channels", w->shape[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"padded input height", x->shape[2] + 2 * (int64_t)p->padding[0], GCR_CUDA_IDX_MAX};
    l[n++] = (gcr_cuda_limit){"padded input width", x->shape[3] + 2 * (int64_t)p->padding[1], GCR_CUDA_IDX_MAX};
    if (is_depthwise(c)) return n; /* it indexes outputs in 64 bits past 2^31 */
    gcr_dense_args a = conv_dense_args(c, out);
    return n + gcr_cuda_dense_limits(&a, l + n);
}

gcr_status gcr_cuda_conv2d_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    if (is_depthwise(c)) return depthwise(ctx, c, out, h);
    gcr_dense_args a = conv_dense_args(c, &out->m);
    return gcr_cuda_dense_run(ctx, c->in[0]->m.dtype, &a, gcr_tensor_data(c->in[0]), gcr_tensor_data(c->in[1]),
                              gcr_tensor_data(out), c->in[2] ? gcr_tensor_data(c->in[2]) : NULL, h);
}

gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_conv2d_hooked(ctx, c, out, NULL);
}
