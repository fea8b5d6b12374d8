/* conv.c — conv2d on the GPU: depthwise convs (groups == C == O) go to depthwise.c, a depthwise
 * conv and the 1x1 conv that reads it to the pair kernel (kernels/dwpw.cuh), every other conv to
 * the dense engine (dense.c) as an implicit GEMM. The hooked entry point is the one capture's fused
 * kernels run through (hooks.c). */
#include "dense.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* the shared memory a gcr_dwpw block may take so that two fit an SM (227 KB, less 1 KB each that
 * the driver keeps) */
#define DWPW_SMEM_MAX (112 * 1024)

void gcr_cuda_dwpw_name(char *buf, size_t n, int bn, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t dh,
                        int64_t dw, int64_t items, gcr_dtype dt)
{
    const bool fast = kh == kw && (kh == 3 || kh == 5) && sh == sw && (sh == 1 || sh == 2) && dh == 1 && dw == 1;
    const int ks = fast ? (int)kh : 0, st = fast ? (int)sh : 0;
    int r = GCR_DWPW_RMAX(ks, st);
    while (r > 1 && items / r < 256) r /= 2;
    snprintf(buf, n, "gcr_dwpw%dk%ds%dr%d_%s", bn, ks, st, r, gcr_cuda_dt_suffix(dt));
}

/* a.ksplit and a.kchunk: where a's tiles would leave at least half of the cap resident blocks
 * idle and a tile has several channel steps, its steps split over enough blocks to fill them
 * (a test's gcr_cuda_dwpw_force_split instead), within the split-K scratch (partials and one
 * counter per tile), whose counters are then zeroed on the stream; else one block a tile */
static gcr_status dwpw_split(gcr_ctx *ctx, gcr_dwpw_args *a, int bn, int64_t cap)
{
    const int64_t nk = (a->C + a->kc - 1) / a->kc, force = gcr_cuda_st(ctx)->dwpw_split;
    int64_t S = force > 0 ? force : a->tiles * 2 <= cap ? (cap + a->tiles - 1) / a->tiles : 1;
    const int64_t fit = a->tiles > 0 ? (int64_t)(GCR_CUDA_SPLITK_BYTES / 4 / GCR_DWPW_PART(bn)) / a->tiles : 0;
    S = S < nk ? S : nk;
    S = S < fit ? S : fit;
    a->ksplit = 1, a->kchunk = nk;
    if (S <= 1 || a->tiles > GCR_CUDA_SPLITK_TILES || !gcr_cuda_splitk_ws(ctx, 1, &a->part, &a->sem)) return GCR_OK;
    a->kchunk = (nk + S - 1) / S;
    a->ksplit = (nk + a->kchunk - 1) / a->kchunk; /* no split empty */
    return gcr_cuda_splitk_zeroed(ctx);
}

void gcr_cuda_dwpw_force_split(gcr_ctx *ctx, int splits) { gcr_cuda_st(ctx)->dwpw_split = splits; }

/* A conv->conv pair: depthwise conv d, whose result (through h's prologue) is 1x1 conv c's input,
 * in one kernel (kernels/dwpw.cuh). What it cannot run is refused as GCR_ERR_COMPILE, so the graph
 * runs the pair as two kernels; the fuser offers only pairs within the backend's caps. */
static gcr_status dwpw(gcr_ctx *ctx, const gcr_call *d, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *x = &d->in[0]->m, *wd = &d->in[1]->m, *w = &c->in[1]->m, *y = &out->m;
    const gcr_conv2d_params *p = &d->p.conv;
    const gcr_dtype dt = x->dtype;
    const int64_t C = x->shape[1], O = w->shape[0], M = y->shape[0] * y->shape[2] * y->shape[3];
    GCR_CHECK(ctx, (dt == GCR_F16 || dt == GCR_BF16) && gcr_cuda_arch(ctx) >= 80 && C % GCR_DWPW_C_ALIGN == 0 && O <= GCR_DWPW_MAX_OUT &&
                       x->strides[1] == 1 && M < (1LL << 31) && is_depthwise(d) && w->shape[2] == 1 && w->shape[3] == 1 &&
                       c->p.conv.groups == 1 && c->p.conv.stride[0] == 1 && c->p.conv.stride[1] == 1 &&
                       c->p.conv.padding[0] == 0 && c->p.conv.padding[1] == 0,
              GCR_ERR_COMPILE, "conv->conv: no kernel for %s, %lld depthwise channels into a 1x1 conv of %lld, %lld pixels on sm_%d",
              gcr_dtype_name(dt), (long long)C, (long long)O, (long long)M, gcr_cuda_arch(ctx));
    gcr_dwpw_args a = {.N = x->shape[0], .C = C, .H = x->shape[2], .W = x->shape[3], .OH = y->shape[2], .OW = y->shape[3],
                       .KH = wd->shape[2], .KW = wd->shape[3], .sh = p->stride[0], .sw = p->stride[1], .ph = p->padding[0],
                       .pw = p->padding[1], .dh = p->dilation[0], .dw = p->dilation[1], .O = O, .M = M,
                       .ws = {w->strides[0], w->strides[1]}};
    for (int i = 0; i < 4; i++) {
        a.xs[i] = x->strides[i];
        a.ds[i] = wd->strides[i];
        a.ys[i] = y->strides[i];
    }
    const void *xp = gcr_tensor_data(d->in[0]), *dp = gcr_tensor_data(d->in[1]), *wp = gcr_tensor_data(c->in[1]);
    const void *dbp = d->n_in > 2 && d->in[2] ? gcr_tensor_data(d->in[2]) : NULL;
    const void *bp = c->n_in > 2 && c->in[2] ? gcr_tensor_data(c->in[2]) : NULL;
    void *yp = gcr_tensor_data(out);
    a.xvec = gcr_cuda_vec16(a.xs, C, 2, xp);
    a.wvec = w->strides[1] == 1 && w->strides[0] % 8 == 0 && (uintptr_t)wp % 16 == 0;
    const int bn = (int)((O + 15) / 16 * 16);
    const int64_t taps = a.KH * a.KW, bm = GCR_DWPW_BM(bn), call = (C + 15) / 16 * 16;
    /* the tile's shape: the columns (a power of two) that leave least of the image uncovered, the
     * squarer on a tie (its halo is smaller) */
    int64_t best = INT64_MAX, best_skew = INT64_MAX;
    for (int twl = 2; twl <= 5; twl++) {
        const int64_t tw = 1 << twl, th = bm / tw, tx = (a.OW + tw - 1) / tw, ty = (a.OH + th - 1) / th;
        const int64_t area = tx * tw * ty * th, skew = tw > th ? tw / th : th / tw;
        if (area < best || (area == best && skew < best_skew)) {
            best = area, best_skew = skew;
            a.twl = twl, a.tiles_x = tx, a.tiles_y = ty;
        }
    }
    a.hh = (bm / ((int64_t)1 << a.twl) - 1) * a.sh + (a.KH - 1) * a.dh + 1;
    a.hw = (((int64_t)1 << a.twl) - 1) * a.sw + (a.KW - 1) * a.dw + 1;
    a.tiles = a.N * a.tiles_y * a.tiles_x;
    /* channels a step: the widest multiple of 16 that leaves two blocks an SM, with the weights of
     * every channel resident where that fits, else loaded each step. Resident, they take whole
     * steps (zeros past C): a last step of fewer than kc channels still multiplies kc columns. */
    a.kc = 0;
    for (int resident = 1; resident >= 0 && !a.kc; resident--)
        for (int64_t kc = call; kc >= 16 && !a.kc; kc = kc > 16 ? (kc / 2 + 15) / 16 * 16 : 0) {
            const int64_t wc = resident ? (call + kc - 1) / kc * kc : kc;
            if (GCR_DWPW_SMEM((int64_t)bn, taps, wc, kc, a.hh * a.hw) <= DWPW_SMEM_MAX) a.kc = kc, a.wc = wc;
        }
    GCR_CHECK(ctx, (a.H - 1) * a.xs[2] + (a.W - 1) * a.xs[3] + C < (1LL << 31), GCR_ERR_COMPILE,
              "conv->conv: an image of %lldx%lldx%lld is past 32-bit offsets", (long long)C, (long long)a.H, (long long)a.W);
    GCR_CHECK(ctx, a.kc > 0, GCR_ERR_COMPILE, "conv->conv: a %lldx%lld halo of %lld taps takes more than %d bytes of shared memory",
              (long long)a.hh, (long long)a.hw, (long long)taps, DWPW_SMEM_MAX);
    GCR_CHECK(ctx, a.tiles * ((C + a.kc - 1) / a.kc) < (1LL << 31), GCR_ERR_COMPILE,
              "conv->conv: %lld tiles of %lld channel steps each are past the kernel's 32-bit step count", (long long)a.tiles,
              (long long)((C + a.kc - 1) / a.kc));
    const int64_t smem = GCR_DWPW_SMEM((int64_t)bn, taps, a.wc, a.kc, a.hh * a.hw);
    char name[48];
    gcr_cuda_dwpw_name(name, sizeof name, bn, a.KH, a.KW, a.sh, a.sw, a.dh, a.dw, bm * (a.kc / 8), dt);
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", dt, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    /* the grid: as many items as are resident at once (their blocks walk the rest) */
    const int64_t per_sm = smem * GCR_DWPW_MINB(bn) <= 227 * 1024 ? GCR_DWPW_MINB(bn) : 227 * 1024 / smem;
    const int64_t cap = (int64_t)gcr_cuda_sm_count(ctx) * per_sm;
    GCR_TRY(dwpw_split(ctx, &a, bn, cap));
    const int64_t items = a.tiles * a.ksplit;
    void *std[] = {&a, &xp, &dp, &dbp, &wp, &bp, &yp};
    return gcr_cuda_hooked_launch(ctx, k, (unsigned)(items < cap ? items : cap), 1, 1, 256, (unsigned)smem, std, 7, h);
}

gcr_status gcr_cuda_conv2d_hooked(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    if (h && h->inner) return dwpw(ctx, h->inner, c, out, h);
    if (is_depthwise(c)) return gcr_cuda_depthwise(ctx, c, out, h);
    gcr_dense_args a = conv_dense_args(c, &out->m);
    return gcr_cuda_dense_run(ctx, c->in[0]->m.dtype, &a, gcr_tensor_data(c->in[0]), gcr_tensor_data(c->in[1]),
                              gcr_tensor_data(out), c->in[2] ? gcr_tensor_data(c->in[2]) : NULL, h);
}

gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_conv2d_hooked(ctx, c, out, NULL);
}
