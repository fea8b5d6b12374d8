/* conv.c — conv2d on the GPU: depthwise convs (groups == C == O) get the memory-bound depthwise
 * kernels of kernels/conv.cuh (channels-last: 16-byte channel groups where the shape allows, else
 * the shared-memory tile, its geometry picked here; NCHW: one channel per thread), every other
 * conv the dense engine (dense.c) as an implicit GEMM. The hooked entry point is the one capture's
 * fused kernels run through (hooks.c). */
#include "dense.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* channels-last depthwise through the shared-memory tile (conv.cuh gcr_dw_tiled); 0 leaves every
 * depthwise conv to the one-channel kernel */
#ifndef GCR_DW_VEC
#define GCR_DW_VEC 1
#endif
/* channels-last 3x3 / 5x5 depthwise with 16-byte channel groups by the channel-group kernel
 * (conv.cuh gcr_dw_vec) where it has enough threads: on MobileNet-v3 f16 at batch 128 the tile ran
 * its depthwise layers in 1.48 ms on an H200 against 1.05 ms for this kernel on an H100 (2026-11-26,
 * -23); 0 sends them to the tile too */
#ifndef GCR_DW_CLASSIC
#define GCR_DW_CLASSIC 1
#endif
/* blocks per SM the channel-group kernel's grid is sized to (its blocks walk the rest) */
#ifndef GCR_DW_BLOCKS_PER_SM
#define GCR_DW_BLOCKS_PER_SM 2
#endif
#define DW_SMEM_F4 3072 /* conv.cuh GCR_DWT_SMEM */
#define DW_RMAX 4       /* conv.cuh GCR_DWT_RMAX */
#define DW_THREADS 256  /* conv.cuh GCR_DWT_THREADS */
/* A tile's block has at least this many threads, unless one block covers a whole image:
 * a block's fixed costs (its launch, the taps' load, two barriers, the staged epilogue) are not in
 * the cost model, and with them 32-thread blocks lost at batch 1. H100, MobileNet-v3 f16 NHWC, the
 * depthwise layers in a replayed graph (bench/kernel_trace.sh, 2026-11-26): batch 1 124.8 -> 96.2
 * us (the forward 401.9 -> 371.4 us), batch 8 194.1 -> 163.0 us; 64 / 96 / 192 / 256 threads
 * measured 101.4 / 97.7 / 99.5 / 93.2 us at batch 1. */
#define DW_MIN_THREADS 128
/* resident blocks per SM (sm_80 / sm_90): the model's wave count assumed up to 64 */
#define DW_MAX_RESIDENT 32

/* The tile of gcr_dw_tiled for this shape (a->tq, tsx, tth, tr, ttiles; threads per block in
 * *threads), or 0 where no tile fits its shared memory (taps too many). u: 4-channel chunks per
 * 16-byte vector (2 for 16-bit types with 16-byte loads; a block's channels are whole vectors).
 * The cost of a candidate is a block's time, the bytes it moves (input tile with halo, output) at
 * ~20 B per clock per SM plus its shared-memory reads at 128 B per clock, never below a DRAM
 * latency (~1500 clocks), times the waves of blocks over the SMs, resident blocks sharing an SM's
 * bandwidth; so big batches get big tiles (less halo), batch 1 tiles small enough to fill the SMs. */
static int dw_geometry(gcr_dw_args *a, int sms, int u, int esize, int *threads)
{
    const int64_t cqall = (a->C + 4 * u - 1) / (4 * u) * u, KH = a->KH, KW = a->KW;
    const int stream = a->KH == a->KW && (a->KH == 3 || a->KH == 5 || a->KH == 7) && a->dw == 1 && (a->sw == 1 || a->sw == 2);
    double best = 0;
    int64_t last = -1;
    for (int64_t nb = (cqall + 31) / 32; nb <= cqall / u; nb++) {
        int64_t cq = ((cqall + nb - 1) / nb + u - 1) / u * u;
        if (cq == last) continue;
        last = cq;
        if (cq > 32) continue;
        const int64_t nbk = (cqall + cq - 1) / cq;
        for (int64_t r = DW_RMAX; r >= 1; r /= 2) {
            for (int64_t sx = 1; sx <= (a->OW + r - 1) / r && sx * cq <= DW_THREADS; sx++) {
                int64_t th = DW_THREADS / (cq * sx);
                if (th > a->OH) th = a->OH;
                const int64_t tw = sx * r, ih = (th - 1) * a->sh + (KH - 1) * a->dh + 1, iw = (tw - 1) * a->sw + (KW - 1) * a->dw + 1;
                if ((ih * iw + KH * KW) * cq > DW_SMEM_F4) continue;
                const int64_t nthr = (cq * sx * th + 31) / 32 * 32;
                if (nthr < DW_MIN_THREADS && !(nbk == 1 && th >= a->OH && tw >= a->OW)) continue;
                const int64_t tiles = nbk * a->N * ((a->OH + th - 1) / th) * ((a->OW + tw - 1) / tw);
                const double bytes = (double)(ih * iw + th * tw) * cq * 4 * esize;
                const double reads = (double)(cq * sx * th) * (stream ? KH * ((r - 1) * a->sw + KW) : r * KH * KW);
                double blk = bytes / 20 + reads * 16 / 128;
                int64_t res = 65536 / (nthr * 100), sres = 227 * 1024 / ((ih * iw + KH * KW) * cq * 16 + 1024);
                if (sres < res) res = sres;
                if (res > 2048 / nthr) res = 2048 / nthr;
                if (res > DW_MAX_RESIDENT) res = DW_MAX_RESIDENT;
                if (res < 1) res = 1;
                const int64_t waves = (tiles + sms * res - 1) / (sms * res);
                double wave = blk * (double)res;
                if (wave < blk + 1500) wave = blk + 1500;
                const double cost = (double)waves * wave;
                if (best == 0 || cost < best * 0.999) {
                    best = cost;
                    a->tq = cq;
                    a->tsx = sx;
                    a->tth = th;
                    a->tr = r;
                    a->ttiles = tiles;
                    *threads = (int)nthr;
                }
            }
        }
    }
    return best > 0;
}

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
    const int sms = gcr_cuda_sm_count(ctx);
    int threads = 256;
    /* 3x3 / 5x5 taps at column stride 1 or 2, fewer than 2^31 outputs: the shapes of the channel-group
     * kernel and of the NCHW kernel's 4-outputs-per-thread path */
    const int taps35 = a.KH == a.KW && (a.KH == 3 || a.KH == 5) && a.dw == 1 && (a.sw == 1 || a.sw == 2) &&
                       a.total < (1LL << 31);
    /* channels-last input and output: the channel-group kernel where it applies, else the tile
     * (its geometry adapts to the batch), with 16-byte loads where channels, strides and pointers
     * allow; the tile's indices are 64-bit where they can pass 2^31 (element offsets, tile count) */
    const int64_t vc = 16 / (int64_t)gcr_dtype_size(x->dtype);
    if (GCR_DW_VEC && a.c_fast && a.xs[1] == 1) {
        a.tvec = gcr_cuda_vec16(a.xs, a.C, gcr_dtype_size(x->dtype), xp) && gcr_cuda_vec16(a.ys, a.C, gcr_dtype_size(x->dtype), yp);
        /* the channel-group kernel: 3x3/5x5, column stride 1/2, 16-byte vectors, at most 65535
         * blocks of 32 channel groups (grid y), and at least 512 threads per SM counted as a thread
         * per 2 outputs x 16 bytes, though its threads take 4: counted by 4, MobileNet-v3's 7x7 and
         * 14x14 layers of up to 240 channels at batch 32 would fall to the tile, which ran them
         * 1.1-2.8x slower (H200, f16); at batch 1 the tile's small tiles fill the device better */
        /* tests: "dwv" keeps these on the tile, "dwc" takes the channel-group kernel wherever it can
         * run, whatever the thread count */
        const char *force = gcr_cuda_st(ctx)->dense_force;
        const int classic = GCR_DW_CLASSIC && a.tvec && taps35 && a.C / vc <= 65535LL * 32 &&
                            (a.N * a.OH * ((a.OW + 1) / 2) * (a.C / vc) >= (int64_t)sms * 512 ||
                             (force && strstr(force, "dwc")));
        if (classic && !(force && strstr(force, "dwv"))) a.c_fast = 3;
        else if (dw_geometry(&a, sms, a.tvec ? (int)(vc / 4) : 1, (int)gcr_dtype_size(x->dtype), &threads)) a.c_fast = 2;
    }
    gcr_cuda_fn *k;
    char name[32];
    snprintf(name, sizeof name, "gcr_dw%s_%s", a.c_fast == 3 ? "c" : a.c_fast == 2 ? "v" : "", gcr_cuda_dt_suffix(x->dtype));
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", x->dtype, h, name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    void *std[] = {&a, &xp, &wp, &yp, &bp};
    if (a.c_fast == 3) {
        /* gcr_dw_vec: blocks of CB channel groups x 256 / CB pixel slots, each block first loading
         * its channels' taps (up to 25 x 256 of them). About 2 blocks per SM in all (what its 128
         * registers keep resident), walking the pixels: at 16 per SM a batch-128 5x5 layer's blocks
         * each loaded their taps for one pass of work, and the loads were most of the kernel's
         * (MobileNet-v3 b14.dw5, H100: 11% of the copy bandwidth); a second round of 2 per SM
         * measured 1.1-1.25x slower on the 14x14 and 7x7 layers at batch 128 (H200, f16) */
        int64_t ox = 4, cv = a.C / vc, cb = cv < 32 ? cv : 32, slots = 256 / cb;
        int64_t gy = (cv + cb - 1) / cb, blocks = (a.N * a.OH * ((a.OW + ox - 1) / ox) + slots - 1) / slots;
        int64_t cap = ((int64_t)sms * GCR_DW_BLOCKS_PER_SM + gy - 1) / gy;
        return gcr_cuda_hooked_launch(ctx, k, (unsigned)(blocks < cap ? blocks : cap), (unsigned)gy, 1, 256, 0, std, 5, h);
    }
    if (a.c_fast == 2) { /* a block per tile, up to the grid's limit (the kernel walks the rest) */
        int64_t blocks = a.ttiles < 0x7fffffff ? a.ttiles : 0x7fffffff;
        return gcr_cuda_hooked_launch(ctx, k, (unsigned)blocks, 1, 1, (unsigned)threads, 0, std, 5, h);
    }
    /* gcr_dw_tile's 4-outputs-per-thread path needs a quarter of the threads */
    int64_t work = taps35 ? a.N * a.C * a.OH * ((a.OW + 3) / 4) : a.total;
    int64_t blocks = (work + 255) / 256, cap = (int64_t)sms * 16;
    return gcr_cuda_hooked_launch(ctx, k, (unsigned)(blocks < cap ? blocks : cap), 1, 1, 256, 0, std, 5, h);
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
    if (is_depthwise(c)) return depthwise(ctx, c, out, h);
    gcr_dense_args a = conv_dense_args(c, &out->m);
    return gcr_cuda_dense_run(ctx, c->in[0]->m.dtype, &a, gcr_tensor_data(c->in[0]), gcr_tensor_data(c->in[1]),
                              gcr_tensor_data(out), c->in[2] ? gcr_tensor_data(c->in[2]) : NULL, h);
}

gcr_status gcr_cuda_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    return gcr_cuda_conv2d_hooked(ctx, c, out, NULL);
}
