/* pool.c — CPU max_pool2d, avg_pool2d and adaptive_avg_pool2d over x [N,C,H,W] (any strides) into
 * a dense out [N,C,OH,OW], with PyTorch's window rules exactly (the output size itself comes from
 * lib/infer.c, including ceil_mode's "last window starts inside input or left padding"). */
#include "gemm.h"
#include <math.h>

typedef struct pool_geom {
    int64_t N, C, H, W, OH, OW;
    gcr_f32v x;
    float *out;
    const int64_t *os; /* out strides */
} pool_geom;

static float *out_at(const pool_geom *g, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return g->out + n * g->os[0] + c * g->os[1] + h * g->os[2] + w * g->os[3];
}

/* max over the dilated window; NaN wins, as in PyTorch; padding never contributes */
static void max_pool(const pool_geom *g, const gcr_pool2d_params *p)
{
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = g->x.p + n * g->x.st[0] + c * g->x.st[1];
            for (int64_t oh = 0; oh < g->OH; oh++)
                for (int64_t ow = 0; ow < g->OW; ow++) {
                    float m = -INFINITY;
                    for (int64_t kh = 0; kh < p->kernel[0]; kh++) {
                        int64_t ih = oh * p->stride[0] - p->padding[0] + kh * p->dilation[0];
                        if (ih < 0 || ih >= g->H) continue;
                        for (int64_t kw = 0; kw < p->kernel[1]; kw++) {
                            int64_t iw = ow * p->stride[1] - p->padding[1] + kw * p->dilation[1];
                            if (iw < 0 || iw >= g->W) continue;
                            float v = xc[ih * g->x.st[2] + iw * g->x.st[3]];
                            if (v > m || isnan(v)) m = v;
                        }
                    }
                    *out_at(g, n, c, oh, ow) = m;
                }
        }
}

/* sum of x over rows [h0,h1) and columns [w0,w1) of one channel */
static double window_sum(const pool_geom *g, const float *xc, int64_t h0, int64_t h1, int64_t w0, int64_t w1)
{
    double s = 0;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++) s += xc[h * g->x.st[2] + w * g->x.st[3]];
    return s;
}

/* window o of an average pool along one axis of length in: [*lo, *hi) is its part inside the input;
 * returns its length clipped to input + padding only (that axis's count_include_pad divisor) */
static int64_t avg_window(int64_t o, int stride, int pad, int k, int64_t in, int64_t *lo, int64_t *hi)
{
    int64_t a = o * stride - pad;
    int64_t b = a + k < in + pad ? a + k : in + pad;
    *lo = a < 0 ? 0 : a;
    *hi = b > in ? in : b;
    return b - a;
}

/* PyTorch: the divisor with count_include_pad is the window clipped to input + padding (so a
 * ceil_mode window overhanging the right edge counts less), else the in-input element count */
static void avg_pool(const pool_geom *g, const gcr_pool2d_params *p)
{
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = g->x.p + n * g->x.st[0] + c * g->x.st[1];
            for (int64_t oh = 0; oh < g->OH; oh++) {
                int64_t h0, h1, ph = avg_window(oh, p->stride[0], p->padding[0], p->kernel[0], g->H, &h0, &h1);
                for (int64_t ow = 0; ow < g->OW; ow++) {
                    int64_t w0, w1, pw = avg_window(ow, p->stride[1], p->padding[1], p->kernel[1], g->W, &w0, &w1);
                    int64_t div = p->count_include_pad ? ph * pw : (h1 - h0) * (w1 - w0);
                    double s = h1 > h0 && w1 > w0 ? window_sum(g, xc, h0, h1, w0, w1) : 0.0;
                    *out_at(g, n, c, oh, ow) = div > 0 ? (float)(s / (double)div) : 0.0f;
                }
            }
        }
}

/* PyTorch: window i of an adaptive pool from in to out spans [floor(i*in/out), ceil((i+1)*in/out)),
 * computed as i*(in/out) plus the remainder's share so that no product exceeds out * out */
static int64_t adaptive_lo(int64_t i, int64_t in, int64_t out) { return i * (in / out) + i * (in % out) / out; }
static int64_t adaptive_hi(int64_t i, int64_t in, int64_t out)
{
    return (i + 1) * (in / out) + ((i + 1) * (in % out) + out - 1) / out;
}

static void adaptive_avg_pool(const pool_geom *g)
{
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = g->x.p + n * g->x.st[0] + c * g->x.st[1];
            for (int64_t oh = 0; oh < g->OH; oh++) {
                int64_t h0 = adaptive_lo(oh, g->H, g->OH), h1 = adaptive_hi(oh, g->H, g->OH);
                for (int64_t ow = 0; ow < g->OW; ow++) {
                    int64_t w0 = adaptive_lo(ow, g->W, g->OW), w1 = adaptive_hi(ow, g->W, g->OW);
                    int64_t cnt = (h1 - h0) * (w1 - w0);
                    double s = window_sum(g, xc, h0, h1, w0, w1);
                    *out_at(g, n, c, oh, ow) = cnt > 0 ? (float)(s / (double)cnt) : 0.0f;
                }
            }
        }
}

gcr_status gcr_cpu_pool(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_tensor *x = c->in[0];
    const gcr_pool2d_params *p = &c->p.pool; /* validated by gcr_infer (avg_pool2d never dilates) */
    pool_geom g;
    g.N = x->m.shape[0]; g.C = x->m.shape[1]; g.H = x->m.shape[2]; g.W = x->m.shape[3];
    g.OH = out->m.shape[2]; g.OW = out->m.shape[3];
    g.os = out->m.strides;
    GCR_TRY(gcr_cpu_f32_view(ctx, x, GCR_SCR_IN0, &g.x));
    g.out = gcr_cpu_out_f32(ctx, out);
    if (!g.out) return GCR_ERR_OOM;
    switch (c->op) {
    case GCR_OP_MAX_POOL2D: max_pool(&g, p); break;
    case GCR_OP_AVG_POOL2D: avg_pool(&g, p); break;
    case GCR_OP_ADAPTIVE_AVG_POOL2D: adaptive_avg_pool(&g); break;
    default: return gcr_set_error(ctx, GCR_ERR_INTERNAL, "cpu: %s is not a pool op", gcr_op_table[c->op].name);
    }
    gcr_cpu_out_finish(out, g.out);
    return GCR_OK;
}
