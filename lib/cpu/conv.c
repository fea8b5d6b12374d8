/* conv.c — CPU conv2d: x [N,C,H,W] (any strides), w [O,C/g,KH,KW], bias [O] -> out [N,O,OH,OW]
 * (dense NCHW, or NHWC when x is NHWC).
 *
 * Paths, chosen by layout rather than by model:
 * - depthwise (groups == C == O): a direct loop; no GEMM has enough reuse for one input channel.
 * - channels-first x: per image and group, out[Og, P] = w[Og, K] @ col[K, P] with K = (c,kh,kw),
 *   P = (oh,ow); a 1x1 stride-1 unpadded conv reads x itself as col.
 * - channels-last x: out[P, Og] = col[P, K] @ w^T with K = (kh,kw,c), so im2col copies runs of
 *   contiguous channels and the GEMM stores contiguous output channels.
 * f16/bf16 are staged to f32 (gemm.h), computed in f32 and rounded once at the end. */
#include "gemm.h"

typedef struct conv_geom {
    int64_t N, C, H, W, O, Cg, Og, KH, KW, OH, OW, G;
    int64_t sh, sw, ph, pw, dh, dw;
    gcr_f32v x;              /* x: n, c, h, w strides */
    float *out;              /* f32 result with out's strides */
    int64_t oN, oC, oH, oW;
    const float *bias;       /* [O] f32 or NULL */
} conv_geom;

/* col [Cg*KH*KW][OH*OW] for image xn, channels c0.. */
static void im2col_kp(const conv_geom *g, const float *xn, int64_t c0, float *col)
{
    int64_t P = g->OH * g->OW, sC = g->x.st[1], sH = g->x.st[2], sW = g->x.st[3];
    for (int64_t c = 0; c < g->Cg; c++)
        for (int64_t kh = 0; kh < g->KH; kh++)
            for (int64_t kw = 0; kw < g->KW; kw++) {
                float *row = col + ((c * g->KH + kh) * g->KW + kw) * P;
                const float *xc = xn + (c0 + c) * sC;
                int64_t off = kw * g->dw - g->pw, lo, hi;
                gcr_cpu_valid_range(g->OW, g->W, g->sw, off, &lo, &hi);
                for (int64_t oh = 0; oh < g->OH; oh++) {
                    float *r = row + oh * g->OW;
                    int64_t ih = oh * g->sh - g->ph + kh * g->dh;
                    if (ih < 0 || ih >= g->H) {
                        memset(r, 0, (size_t)g->OW * sizeof(float));
                        continue;
                    }
                    const float *xr = xc + ih * sH;
                    for (int64_t ow = 0; ow < lo; ow++) r[ow] = 0.0f;
                    if (g->sw == 1 && sW == 1) memcpy(r + lo, xr + lo + off, (size_t)(hi - lo) * sizeof(float));
                    else
                        for (int64_t ow = lo; ow < hi; ow++) r[ow] = xr[(ow * g->sw + off) * sW];
                    for (int64_t ow = hi; ow < g->OW; ow++) r[ow] = 0.0f;
                }
            }
}

/* col [OH*OW][KH*KW*Cg] for image xn, channels c0.. */
static void im2col_pk(const conv_geom *g, const float *xn, int64_t c0, float *col)
{
    int64_t Kg = g->KH * g->KW * g->Cg, sC = g->x.st[1], sH = g->x.st[2], sW = g->x.st[3];
    for (int64_t oh = 0; oh < g->OH; oh++)
        for (int64_t ow = 0; ow < g->OW; ow++) {
            float *r = col + (oh * g->OW + ow) * Kg;
            for (int64_t kh = 0; kh < g->KH; kh++) {
                int64_t ih = oh * g->sh - g->ph + kh * g->dh;
                for (int64_t kw = 0; kw < g->KW; kw++) {
                    float *d = r + (kh * g->KW + kw) * g->Cg;
                    int64_t iw = ow * g->sw - g->pw + kw * g->dw;
                    if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) {
                        memset(d, 0, (size_t)g->Cg * sizeof(float));
                        continue;
                    }
                    const float *s = xn + ih * sH + iw * sW + c0 * sC;
                    if (sC == 1) memcpy(d, s, (size_t)g->Cg * sizeof(float));
                    else
                        for (int64_t c = 0; c < g->Cg; c++) d[c] = s[c * sC];
                }
            }
        }
}

/* H and W of x can be read as one axis of P = H*W elements */
static int hw_flat(const conv_geom *g) { return g->H == 1 || g->x.st[2] == g->W * g->x.st[3]; }

static int is_pointwise(const conv_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && hw_flat(g);
}

/* Scratch COL of a * b + c floats. Each term is within a tensor's size, but a product of two may
 * not be: past GCR_MAX_BYTES it fails as OOM naming the sizes instead of wrapping. */
static float *col_scratch(gcr_ctx *ctx, int64_t a, int64_t b, int64_t c)
{
    int64_t n;
    if (!gcr_size_mul(a, b, &n) || !gcr_size_mul(n + c, (int64_t)sizeof(float), &(int64_t){0})) {
        gcr_set_error(ctx, GCR_ERR_OOM, "conv2d: im2col scratch of %lld x %lld + %lld floats is more than 1 PiB",
                      (long long)a, (long long)b, (long long)c);
        return NULL;
    }
    return gcr_cpu_scratch_get(ctx, GCR_SCR_COL, (size_t)(n + c));
}

/* channels-first GEMM path; wf is w as f32 [O][Cg*KH*KW] row-major */
static gcr_status conv_kp(gcr_ctx *ctx, const conv_geom *g, const float *wf)
{
    int64_t Kg = g->Cg * g->KH * g->KW, P = g->OH * g->OW;
    int direct = is_pointwise(g);
    float *col = direct ? NULL : col_scratch(ctx, Kg, P, 0);
    if (!direct && !col) return GCR_ERR_OOM;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t gi = 0; gi < g->G; gi++) {
            const float *xn = g->x.p + n * g->x.st[0];
            const float *B = col;
            int64_t rsb = P, csb = 1;
            if (direct) {
                B = xn + gi * g->Cg * g->x.st[1];
                rsb = g->x.st[1];
                csb = g->x.st[3];
            } else {
                im2col_kp(g, xn, gi * g->Cg, col);
            }
            /* p = oh*OW + ow sits at stride oW in either dense out layout */
            GCR_TRY(gcr_sgemm(ctx, g->Og, P, Kg, wf + gi * g->Og * Kg, Kg, 1, B, rsb, csb,
                              g->out + n * g->oN + gi * g->Og * g->oC, g->oC, g->oW,
                              g->bias ? g->bias + gi * g->Og : NULL, NULL));
        }
    return GCR_OK;
}

/* channels-last GEMM path; wk is w as f32 [O][KH*KW*Cg] ((kh,kw,c) order) */
static gcr_status conv_pk(gcr_ctx *ctx, const conv_geom *g, const float *wk)
{
    int64_t Kg = g->Cg * g->KH * g->KW, P = g->OH * g->OW;
    int direct = is_pointwise(g);
    float *col = direct ? NULL : col_scratch(ctx, Kg, P, 0);
    if (!direct && !col) return GCR_ERR_OOM;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t gi = 0; gi < g->G; gi++) {
            const float *xn = g->x.p + n * g->x.st[0];
            const float *A = col;
            int64_t rsa = Kg, csa = 1;
            if (direct) {
                A = xn + gi * g->Cg * g->x.st[1];
                rsa = g->x.st[3];
                csa = g->x.st[1];
            } else {
                im2col_pk(g, xn, gi * g->Cg, col);
            }
            GCR_TRY(gcr_sgemm(ctx, P, g->Og, Kg, A, rsa, csa, wk + gi * g->Og * Kg, 1, Kg,
                              g->out + n * g->oN + gi * g->Og * g->oC, g->oW, g->oC,
                              NULL, g->bias ? g->bias + gi * g->Og : NULL));
        }
    return GCR_OK;
}

/* depthwise, channels-first: one output row at a time, accumulated as shifted axpys over input
 * rows. wf [C][KH*KW]. A strided conv (or a strided x) first splits each input plane into sw
 * phase planes [sw][H][ceil(W/sw)], so that every tap reads a contiguous run as well. */
static gcr_status dw_planes(gcr_ctx *ctx, const conv_geom *g, const float *wf)
{
    int64_t s = g->sw, sH = g->x.st[2], sW = g->x.st[3], Wp = (g->W + s - 1) / s;
    int split = s != 1 || sW != 1;
    /* COL: per-kw tap ranges lo/hi and source offsets (3 x KW int64), then acc [OW], then phases */
    size_t head = (size_t)(3 * g->KW * 2 + 15) & ~(size_t)15;
    float *buf = col_scratch(ctx, split ? s * Wp : 0, g->H, (int64_t)head + g->OW); /* s * Wp < W + s */
    if (!buf) return GCR_ERR_OOM;
    int64_t *lo = (int64_t *)(void *)buf, *hi = lo + g->KW, *src = hi + g->KW;
    float *acc = buf + head, *phase = acc + g->OW;
    for (int64_t kw = 0; kw < g->KW; kw++) {
        int64_t off = kw * g->dw - g->pw; /* input column = ow * s + off */
        gcr_cpu_valid_range(g->OW, g->W, s, off, &lo[kw], &hi[kw]);
        if (split) { /* column (ow + q) * s + p lives at phase p, index ow + q */
            int64_t p = ((off % s) + s) % s, q = (off - p) / s;
            src[kw] = p * g->H * Wp + q;
        } else {
            src[kw] = off;
        }
    }
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            const float *xc = g->x.p + n * g->x.st[0] + c * g->x.st[1], *base = xc;
            int64_t rs = sH;
            if (split) {
                for (int64_t p = 0; p < s; p++)
                    for (int64_t h = 0; h < g->H; h++) {
                        float *d = phase + (p * g->H + h) * Wp;
                        const float *r = xc + h * sH + p * sW;
                        for (int64_t j = 0; j * s + p < g->W; j++) d[j] = r[j * s * sW];
                    }
                base = phase;
                rs = Wp;
            }
            const float *wc = wf + c * g->KH * g->KW;
            float b = g->bias ? g->bias[c] : 0.0f;
            for (int64_t oh = 0; oh < g->OH; oh++) {
                float *orow = g->out + n * g->oN + c * g->oC + oh * g->oH;
                float *a = g->oW == 1 ? orow : acc;
                for (int64_t ow = 0; ow < g->OW; ow++) a[ow] = b;
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    int64_t ih = oh * g->sh - g->ph + kh * g->dh;
                    if (ih < 0 || ih >= g->H) continue;
                    const float *xr = base + ih * rs;
                    for (int64_t kw = 0; kw < g->KW; kw++)
                        gcr_cpu_axpy(hi[kw] - lo[kw], wc[kh * g->KW + kw], xr + src[kw] + lo[kw], a + lo[kw]);
                }
                if (a != orow)
                    for (int64_t ow = 0; ow < g->OW; ow++) orow[ow * g->oW] = a[ow];
            }
        }
    return GCR_OK;
}

/* depthwise, channels-last: per output pixel, vector over contiguous channels. wt [KH*KW][C]. */
static gcr_status dw_pixels(gcr_ctx *ctx, const conv_geom *g, const float *wt)
{
    float *acc = gcr_cpu_scratch_get(ctx, GCR_SCR_COL, (size_t)g->C);
    if (!acc) return GCR_ERR_OOM;
    int64_t sH = g->x.st[2], sW = g->x.st[3];
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float *o = g->out + n * g->oN + oh * g->oH + ow * g->oW;
                float *a = g->oC == 1 ? o : acc;
                for (int64_t c = 0; c < g->C; c++) a[c] = g->bias ? g->bias[c] : 0.0f;
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    int64_t ih = oh * g->sh - g->ph + kh * g->dh;
                    if (ih < 0 || ih >= g->H) continue;
                    for (int64_t kw = 0; kw < g->KW; kw++) {
                        int64_t iw = ow * g->sw - g->pw + kw * g->dw;
                        if (iw < 0 || iw >= g->W) continue;
                        gcr_cpu_fma_vec(g->C, wt + (kh * g->KW + kw) * g->C,
                                        g->x.p + n * g->x.st[0] + ih * sH + iw * sW, a);
                    }
                }
                if (a != o)
                    for (int64_t c = 0; c < g->C; c++) o[c * g->oC] = a[c];
            }
    return GCR_OK;
}

/* w as f32 at the given strides (for dims O, Cg, KH, KW), in slot IN1 unless w already is */
static const float *weights_as(gcr_ctx *ctx, const gcr_tensor *w, const int64_t *st)
{
    int same = w->m.dtype == GCR_F32;
    for (int d = 0; d < 4 && same; d++)
        if (w->m.shape[d] != 1 && w->m.strides[d] != st[d]) same = 0;
    /* an empty w has no storage to point at (NULL would read as out of memory): scratch then */
    if (same && gcr_meta_numel(&w->m) > 0) return gcr_tensor_data(w);
    float *p = gcr_cpu_scratch_get(ctx, GCR_SCR_IN1, (size_t)gcr_meta_numel(&w->m));
    if (p) gcr_cpu_gather_f32(w, p, st);
    return p;
}

gcr_status gcr_cpu_conv2d(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    const gcr_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
    const gcr_conv2d_params *p = &c->p.conv;
    conv_geom g;
    g.N = x->m.shape[0]; g.C = x->m.shape[1]; g.H = x->m.shape[2]; g.W = x->m.shape[3];
    g.O = w->m.shape[0]; g.Cg = w->m.shape[1]; g.KH = w->m.shape[2]; g.KW = w->m.shape[3];
    g.OH = out->m.shape[2]; g.OW = out->m.shape[3];
    g.G = p->groups; g.Og = g.O / g.G;
    g.sh = p->stride[0]; g.sw = p->stride[1]; g.ph = p->padding[0]; g.pw = p->padding[1];
    g.dh = p->dilation[0]; g.dw = p->dilation[1];
    g.oN = out->m.strides[0]; g.oC = out->m.strides[1]; g.oH = out->m.strides[2]; g.oW = out->m.strides[3];

    GCR_TRY(gcr_cpu_f32_view(ctx, x, GCR_SCR_IN0, &g.x));
    g.bias = NULL;
    if (b) {
        gcr_f32v bv;
        GCR_TRY(gcr_cpu_f32_view(ctx, b, GCR_SCR_IN2, &bv));
        if (bv.st[0] != 1 && g.O > 1) { /* a strided bias: make it dense for the loops below */
            float *d = gcr_cpu_scratch_get(ctx, GCR_SCR_IN2, (size_t)g.O);
            if (!d) return GCR_ERR_OOM;
            int64_t one = 1;
            gcr_cpu_gather_f32(b, d, &one);
            bv.p = d;
        }
        g.bias = bv.p;
    }
    g.out = gcr_cpu_out_f32(ctx, out);
    if (!g.out) return GCR_ERR_OOM;

    int channels_last = g.C > 1 && g.x.st[1] == 1;
    gcr_status s;
    int64_t KK = g.KH * g.KW;
    if (g.G == g.C && g.O == g.C && g.Cg == 1) {
        if (channels_last) {
            int64_t st[4] = {1, 0, g.KW * g.C, g.C}; /* wt [KH][KW][C] */
            const float *wt = weights_as(ctx, w, st);
            s = wt ? dw_pixels(ctx, &g, wt) : GCR_ERR_OOM;
        } else {
            int64_t st[4] = {KK, 0, g.KW, 1}; /* [C][KH][KW] */
            const float *wf = weights_as(ctx, w, st);
            s = wf ? dw_planes(ctx, &g, wf) : GCR_ERR_OOM;
        }
    } else {
        if (channels_last) {
            int64_t st[4] = {KK * g.Cg, 1, g.KW * g.Cg, g.Cg}; /* [O][KH][KW][Cg] */
            const float *wk = weights_as(ctx, w, st);
            s = wk ? conv_pk(ctx, &g, wk) : GCR_ERR_OOM;
        } else {
            int64_t st[4] = {KK * g.Cg, KK, g.KW, 1}; /* [O][Cg][KH][KW] */
            const float *wf = weights_as(ctx, w, st);
            s = wf ? conv_kp(ctx, &g, wf) : GCR_ERR_OOM;
        }
    }
    if (s == GCR_OK) gcr_cpu_out_finish(out, g.out);
    return s;
}
