/* depthwise.c — depthwise conv2d (groups == C == O) on the GPU, the memory-bound kernels of
 * kernels/conv.cuh and kernels/dwstage.cuh. Channels-last with 16-byte channel groups and square
 * 3x3/5x5/7x7 taps: the staged tile (gcr_dws_*, its input copied into shared memory by cp.async a
 * tile ahead) or the channel-group kernel (gcr_dwc_*), whichever the shape suits; other
 * channels-last convs the shared-memory tile (gcr_dwv_*); NCHW one channel per thread. The tiles'
 * geometries are picked here by small cost models. */
#include "dense.h"
#include "autotune.h"
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

/* The staged tile (dwstage.cuh) may take this much shared memory a block, so that two blocks fit an
 * SM (227 KB, less 1 KB each that the driver keeps) */
#define DWS_SMEM_MAX (112 * 1024)
#define DWS_OX 4 /* dwstage.cuh GCR_DWS_OX */

/* The staged tile's geometry for this shape (a->tq channel groups a block, a->tsx strips of DWS_OX
 * columns, a->tth rows, a->ttiles tiles a channel block; the block's threads, its dynamic shared
 * memory and the grid's x in *threads, *smem, *gx), or 0 where none fits. A block takes a tile a
 * period: the copies of the next tile fly while it computes this one, so a period is the longest
 * of a DRAM round trip under load (DWS_LAT clocks), the SM's blocks' arithmetic on a tile each (4
 * warp instructions a clock) and their tiles' bytes at the SM's share of DRAM bandwidth (~18 B a
 * clock). A tile's bytes are its input rows inside the image with the halo, and its outputs, each
 * contiguous run rounded up to 64 bytes (a run is the block's channels of one pixel, or a whole
 * row where the block takes every channel). The cost is the busiest block's periods plus the
 * first copy, the last tile's arithmetic and the taps' load. ncu on an H200 counts about twice the
 * instructions estimated here, issued at about half the rate (bench/results/dws-h200-2026-11-28.md),
 * so the model's times are low on layers bound by issue; GCR_AUTOTUNE times its pick against the
 * heuristic's kernel. */
#define DWS_LAT 2000
static int dws_geometry(gcr_dw_args *a, int sms, int64_t vc, int *threads, unsigned *smem, int64_t *gx)
{
    const int64_t CV = a->C / vc, KS = a->KH, ncol = (DWS_OX - 1) * a->sw + KS;
    /* a thread's instructions per tile: per tap row its column loads and conversions, the row's
     * weights and the FMAs; then the epilogue */
    const double instr = (double)KS * (double)(ncol * (1 + vc / 2) + KS * vc / 4 + DWS_OX * KS * vc) + DWS_OX * vc;
    double best = 0;
    int64_t last = -1;
    for (int64_t nb = (CV + 31) / 32; nb <= CV; nb++) {
        const int64_t cb = (CV + nb - 1) / nb, nbk = (CV + cb - 1) / cb;
        if (cb == last) continue;
        last = cb;
        for (int64_t sx = 1; sx <= (a->OW + DWS_OX - 1) / DWS_OX && cb * sx <= 256; sx++)
            for (int64_t th = 1; th <= a->OH && cb * sx * th <= 256; th++) {
                const int64_t tw = sx * DWS_OX, ih = (th - 1) * a->sh + (KS - 1) * a->dh + 1, iw = (tw - 1) * a->sw + KS;
                const int64_t iwp = iw + (iw - 1) / (DWS_OX * a->sw); /* dwstage.cuh gcr_dws_col */
                const int64_t bytes = KS * KS * cb * vc * 4 + 2 * ih * iwp * cb * 16;
                const int64_t tiles = a->N * ((a->OH + th - 1) / th) * ((a->OW + tw - 1) / tw);
                if (bytes > DWS_SMEM_MAX || tiles >= (1LL << 30)) continue; /* tile + grid x fits an int */
                const int64_t nthr = (cb * sx * th + 31) / 32 * 32;
                int64_t res = 2048 / nthr, rr = 65536 / (nthr * 128), rs = 227 * 1024 / (bytes + 1024);
                res = res < rr ? res : rr;
                res = res < rs ? res : rs;
                res = res < 32 ? res : 32;
                /* one wave: a block that waits for a slot would run its tiles after all the rest */
                const int64_t want = (int64_t)sms * res / nbk > 1 ? (int64_t)sms * res / nbk : 1, x = tiles < want ? tiles : want;
                const int64_t per = (tiles + x - 1) / x, busy = (x * nbk + sms - 1) / sms, on = busy < res ? busy : res;
                const int64_t iwin = iw < a->W ? iw : a->W, run = cb == CV ? iwin * cb * 16 : cb * 16;
                const double fetch = (double)((run + 63) / 64 * 64) / (double)run;
                const double in = (double)(ih < a->H ? ih : a->H) * (double)iwin;
                const double outs = (double)(th < a->OH ? th : a->OH) * (double)(tw < a->OW ? tw : a->OW);
                const double warps = (double)(nthr / 32), comp = (double)on * warps * instr / 4; /* idle lanes too */
                const double mem = (double)on * (in + outs) * (double)(cb * 16) * fetch / 18;
                double period = comp > mem ? comp : mem;
                period = period > DWS_LAT ? period : DWS_LAT;
                const double cost = (double)per * period + DWS_LAT + comp / (double)on + (double)(KS * KS * cb * vc) / (double)nthr * 8;
                if (best == 0 || cost < best * 0.999) {
                    best = cost;
                    a->tq = cb, a->tsx = sx, a->tth = th, a->ttiles = tiles;
                    *threads = (int)nthr, *smem = (unsigned)bytes, *gx = x;
                }
            }
    }
    return best > 0;
}

/* One way to run a depthwise conv: its kernel's arguments (with the geometry) and its launch
 * (kernel name, grid, threads, dynamic shared memory). */
typedef struct dw_way {
    gcr_dw_args a;
    gcr_cuda_tactic t;
} dw_way;

/* The heuristic's way for the shape in a (c_fast set where the output is channels-last): the
 * channel-group kernel where it applies, else the tile (its geometry adapts to the batch), with
 * 16-byte loads where channels, strides and pointers allow; NCHW the one-channel kernel. */
static void heuristic_way(gcr_ctx *ctx, const gcr_dw_args *base, gcr_dtype dt, dw_way *wy)
{
    gcr_dw_args a = *base;
    const int sms = gcr_cuda_sm_count(ctx);
    const int64_t vc = 16 / (int64_t)gcr_dtype_size(dt);
    int threads = 256;
    /* 3x3 / 5x5 taps at column stride 1 or 2, fewer than 2^31 outputs: the shapes of the channel-group
     * kernel and of the NCHW kernel's 4-outputs-per-thread path */
    const int taps35 = a.KH == a.KW && (a.KH == 3 || a.KH == 5) && a.dw == 1 && (a.sw == 1 || a.sw == 2) &&
                       a.total < (1LL << 31);
    if (GCR_DW_VEC && a.c_fast && a.xs[1] == 1) {
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
        else if (dw_geometry(&a, sms, a.tvec ? (int)(vc / 4) : 1, (int)gcr_dtype_size(dt), &threads)) a.c_fast = 2;
    }
    static const char *const fam[] = {"", "", "v", "c"};
    wy->t = (gcr_cuda_tactic){.gy = 1, .gz = 1, .threads = 256, .ks = 1};
    snprintf(wy->t.name, sizeof wy->t.name, "gcr_dw%s_%s", fam[a.c_fast], gcr_cuda_dt_suffix(dt));
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
        wy->t.gx = (unsigned)(blocks < cap ? blocks : cap), wy->t.gy = (unsigned)gy;
    } else if (a.c_fast == 2) { /* a block per tile, up to the grid's limit (the kernel walks the rest) */
        wy->t.gx = (unsigned)(a.ttiles < 0x7fffffff ? a.ttiles : 0x7fffffff), wy->t.threads = (unsigned)threads;
    } else { /* gcr_dw_tile's 4-outputs-per-thread path needs a quarter of the threads */
        int64_t work = taps35 ? a.N * a.C * a.OH * ((a.OW + 3) / 4) : a.total;
        int64_t blocks = (work + 255) / 256, cap = (int64_t)sms * 16;
        wy->t.gx = (unsigned)(blocks < cap ? blocks : cap);
    }
    wy->a = a;
}

/* The staged tile's way (dwstage.cuh) where it can run: channels-last with 16-byte vectors, square
 * 3x3/5x5/7x7 taps, column stride 1/2 without column dilation, an image's offsets below 2^31 and
 * a geometry that fits; else 0 */
static int staged_way(gcr_ctx *ctx, const gcr_dw_args *base, gcr_dtype dt, dw_way *wy)
{
    gcr_dw_args a = *base;
    const int64_t vc = 16 / (int64_t)gcr_dtype_size(dt);
    int threads = 0;
    unsigned smem = 0;
    int64_t gx = 0;
    if (!(GCR_DW_VEC && a.c_fast && a.xs[1] == 1 && a.tvec && a.KH == a.KW && (a.KH == 3 || a.KH == 5 || a.KH == 7) &&
          a.dw == 1 && (a.sw == 1 || a.sw == 2) && a.C / vc <= 65535 &&
          (a.H - 1) * a.xs[2] + (a.W - 1) * a.xs[3] + a.C < (1LL << 31) &&
          dws_geometry(&a, gcr_cuda_sm_count(ctx), vc, &threads, &smem, &gx)))
        return 0;
    a.c_fast = 4;
    wy->a = a;
    wy->t = (gcr_cuda_tactic){.gx = (unsigned)gx, .gy = (unsigned)((a.C / vc + a.tq - 1) / a.tq), .gz = 1,
                              .threads = (unsigned)threads, .ks = 1, .smem = smem};
    snprintf(wy->t.name, sizeof wy->t.name, "gcr_dws_%s", gcr_cuda_dt_suffix(dt));
    return 1;
}

/* the ways measured for one shape (GCR_AUTOTUNE) */
typedef struct dw_tune {
    dw_way w[2];
    gcr_cuda_tactic t[2];
    gcr_dtype dt;
} dw_tune;

/* GCR_AUTOTUNE runs a way's eager kernel (no hooks, no bias) on scratch operands */
static gcr_status dw_run(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w, void *out)
{
    const dw_tune *u = arg;
    gcr_dw_args a = u->w[t - u->t].a;
    const void *b = NULL;
    const char *names[2] = {u->t[0].name, u->t[1].name};
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_candidate_kernel(ctx, u->dt, NULL, names, 2, t->name, &k));
    void *std[] = {&a, &x, &w, &out, &b};
    return gcr_cuda_hooked_launch(ctx, k, t->gx, t->gy, t->gz, t->threads, t->smem, std, 5, NULL);
}

gcr_status gcr_cuda_depthwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const gcr_meta *x = &c->in[0]->m, *w = &c->in[1]->m, *y = &out->m;
    const gcr_conv2d_params *p = &c->p.conv;
    const gcr_dtype dt = x->dtype;
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
    const int64_t vc = 16 / (int64_t)gcr_dtype_size(dt);
    if (a.c_fast && a.xs[1] == 1)
        a.tvec = gcr_cuda_vec16(a.xs, a.C, gcr_dtype_size(dt), xp) && gcr_cuda_vec16(a.ys, a.C, gcr_dtype_size(dt), yp);
    /* the ways: the heuristic's, and the staged tile where it runs. The staged tile by default
     * where the channel-group kernel's blocks would hold fewer than 8 channel groups at column
     * stride 1 (its 256 threads then cover few pixels of a row and wait on their loads: MobileNet-v3
     * b1.dw3, 16 channels at 112x112, H200 f16, 60.1 -> 41.5 us at batch 128, 16.7 -> 11.8 at 32,
     * 5.6 -> 3.9 at 1); elsewhere GCR_AUTOTUNE measures both; "dws" (tests) takes it wherever it runs.
     * The staged tile's geometry is worked out only where it may be picked: it costs 3-15 us of host
     * time a call (x86, -O2), up to ~100 us an eager MobileNet-v3 forward */
    dw_tune u = {.dt = dt};
    heuristic_way(ctx, &a, dt, &u.w[0]);
    const char *force = gcr_cuda_st(ctx)->dense_force;
    const int by_default = a.sw == 1 && a.C / vc < 8;
    const int n = 1 + ((force || ctx->knobs.autotune == 1 || by_default) && staged_way(ctx, &a, dt, &u.w[1]));
    int pick = n == 2 && by_default;
    if (n == 2 && force) {
        pick = strstr(force, "dws") != NULL;
    } else if (n == 2 && a.N > 0 && a.OH * a.OW > 0) {
        /* keyed by the shape and strides, none of the geometry; heuristics only answer the default */
        struct { gcr_dw_args a; int32_t dt, pad; } key;
        memset(&key, 0, sizeof key);
        key.a = a;
        key.dt = dt;
        const int64_t es = (int64_t)gcr_dtype_size(dt), xe[4] = {a.N, a.C, a.H, a.W}, we[4] = {a.C, 1, a.KH, a.KW},
                      ye[4] = {a.N, a.C, a.OH, a.OW};
        const size_t xb = (size_t)(gcr_cuda_span(xe, a.xs, 4) * es), wb = (size_t)(gcr_cuda_span(we, a.ws, 4) * es),
                     yb = (size_t)(gcr_cuda_span(ye, a.ys, 4) * es);
        u.t[0] = u.w[0].t, u.t[1] = u.w[1].t;
        pick = gcr_cuda_tune_pick(ctx, &key, sizeof key, u.t, 2, pick, xb, wb, yb, dw_run, &u);
    }
    const dw_way *wy = &u.w[pick];
    gcr_cuda_fn *k;
    GCR_TRY(gcr_cuda_hooked_kernel(ctx, "conv.cuh", dt, h, wy->t.name, &k));
    if (!k) return GCR_OK; /* h->src_out: the program text only */
    gcr_dw_args v = wy->a;
    void *std[] = {&v, &xp, &wp, &yp, &bp};
    return gcr_cuda_hooked_launch(ctx, k, wy->t.gx, wy->t.gy, wy->t.gz, wy->t.threads, wy->t.smem, std, 5, h);
}
