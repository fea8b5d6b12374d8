/* convconv.c — whether the CUDA pair kernel (kernels/dwpw.cuh) beats a depthwise conv and its 1x1
 * conv run apart, pair by pair: the answer GCR_CONVCONV's default (2) asks of every pair the fuser
 * finds (gcr_convconv_caps.faster). With GCR_AUTOTUNE=1 it is measured, as the dense engine's
 * tactics are (autotune.c): the two ways run on scratch operands of the pair's shapes, and the
 * choice is kept in the ctx's memory and with the kernel cache, so a later process measures
 * nothing. Heuristics only (GCR_AUTOTUNE=0), the pairs stay apart: measured this way on an H100,
 * the pair kernel won 4 of MobileNet-v3's 18 pair shapes and batches and 2 of MobileNet-v2's 33,
 * with no rule in shapes alone that picks them (bench/results/convconv-measured-h100-2026-11-28.md). */
#include "autotune.h"
#include "dense.h"
#include <stdio.h>
#include <string.h>

/* the scratch operands of a pair, as gcr_cuda_tune_run gets them: x, the weights (the depthwise
 * taps, then the 1x1 weights from a 256-byte boundary) and the outputs (the result y, then the
 * value between the convs from a 256-byte boundary), all dense channels-last / OIHW */
typedef struct pair_plan {
    const gcr_convconv_pair *p;
    gcr_meta x, wd, wp, mid, y; /* the pair's metas with dense strides */
    size_t wd_bytes, y_bytes;   /* where the second operand of w and of out starts, rounded up */
} pair_plan;

static size_t up256(size_t n) { return (n + 255) / 256 * 256; }

/* m's shape with dense strides in format f */
static gcr_meta dense_meta(const gcr_meta *m, gcr_format f)
{
    gcr_meta d = *m;
    gcr_meta_set_format(&d, f);
    return d;
}

static size_t meta_bytes(const gcr_meta *m) { return (size_t)gcr_meta_numel(m) * gcr_dtype_size(m->dtype); }

/* a tensor over scratch memory: enough of one for the conv launchers, which read its meta and data */
static void wrap(gcr_ctx *ctx, gcr_tensor *t, gcr_storage *st, const gcr_meta *m, void *data)
{
    memset(st, 0, sizeof *st);
    st->refs = 1;
    st->data = data;
    st->bytes = meta_bytes(m);
    st->borrowed = true;
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->m = *m;
    t->st = st;
    t->value = -1;
}

/* tactic 0: the two convs apart; 1: the pair kernel. Both plain (no bias, no fused hooks): a fused
 * epilogue adds about the same to either. The 1x1 conv apart takes the dense engine's heuristic
 * tactic (autotune.c answers a pick inside a measurement with its default), which GCR_AUTOTUNE may
 * better by a few percent. */
static gcr_status run_pair(gcr_ctx *ctx, void *arg, const gcr_cuda_tactic *t, void *x, void *w, void *out)
{
    const pair_plan *pl = arg;
    gcr_storage s[5];
    gcr_tensor tx, twd, twp, tmid, ty;
    wrap(ctx, &tx, &s[0], &pl->x, x);
    wrap(ctx, &twd, &s[1], &pl->wd, w);
    wrap(ctx, &twp, &s[2], &pl->wp, (char *)w + pl->wd_bytes);
    wrap(ctx, &ty, &s[3], &pl->y, out);
    wrap(ctx, &tmid, &s[4], &pl->mid, (char *)out + pl->y_bytes);
    gcr_call d = {.op = GCR_OP_CONV2D, .n_in = 3, .in = {&tx, &twd, NULL}}, c = d;
    d.p.conv = pl->p->dp;
    c.in[0] = &tmid;
    c.in[1] = &twp;
    c.p.conv = (gcr_conv2d_params){.stride = {1, 1}, .dilation = {1, 1}, .groups = 1};
    if (t->gx == 1) {
        gcr_cuda_hooks h = {.inner = &d};
        return gcr_cuda_conv2d_hooked(ctx, &c, &ty, &h);
    }
    gcr_status st = gcr_cuda_conv2d_hooked(ctx, &d, &tmid, NULL);
    return st == GCR_OK ? gcr_cuda_conv2d_hooked(ctx, &c, &ty, NULL) : st;
}

bool gcr_cuda_convconv_faster(gcr_ctx *ctx, const gcr_convconv_pair *p)
{
    /* a capture on another backend may carry these caps (a test of CUDA codegen on the CPU) */
    if (p->form != GCR_CONVCONV_DW_PW || ctx->be != gcr_cuda_backend_get()) return false;
    gcr_cuda_tactic t[2];
    memset(t, 0, sizeof t);
    snprintf(t[0].name, sizeof t[0].name, "depthwise+1x1");
    snprintf(t[1].name, sizeof t[1].name, "gcr_dwpw");
    t[1].gx = 1;
    pair_plan pl = {.p = p};
    pl.x = dense_meta(&p->x, GCR_NHWC);
    pl.wd = dense_meta(&p->wd, GCR_NCHW);
    pl.wp = dense_meta(&p->wp, GCR_NCHW);
    pl.mid = dense_meta(&p->mid, GCR_NHWC);
    pl.y = dense_meta(&p->y, GCR_NHWC);
    pl.wd_bytes = up256(meta_bytes(&pl.wd));
    pl.y_bytes = up256(meta_bytes(&pl.y));
    /* the key: the pair's shapes and the depthwise conv's parameters (dense strides: no pointers) */
    struct {
        gcr_meta x, wd, wp, y;
        gcr_conv2d_params dp;
    } key;
    memset(&key, 0, sizeof key);
    key.x = pl.x, key.wd = pl.wd, key.wp = pl.wp, key.y = pl.y, key.dp = p->dp;
    return gcr_cuda_tune_pick(ctx, &key, sizeof key, t, 2, 0, meta_bytes(&pl.x), pl.wd_bytes + meta_bytes(&pl.wp),
                              pl.y_bytes + meta_bytes(&pl.mid), run_pair, &pl) == 1;
}
