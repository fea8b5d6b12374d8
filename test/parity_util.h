/* parity_util.h — shared by the model parity tests (test_resnet, test_mobilenet,
 * test_mobilenet_v2): a sample model on gcr against the logits PyTorch computed for the same weights
 * and input, both kept in a golden safetensors file (tools/export_*.py). Each configuration runs
 * eagerly, then in a region: the capture, a replay, and replays after new data is written into the
 * same input tensor. The tests differ only in the model, described by a pu_model. */
#ifndef GCR_TEST_PARITY_UTIL_H
#define GCR_TEST_PARITY_UTIL_H

#include "harness.h"
#include "../samples/sample_util.h"
#include <unistd.h>

/* a golden file: the weights (borrowed by the model, so they outlive it), input and logits */
typedef struct {
    gcr_weights *w;
    float *x, *logits; /* host copies: [N,3,H,W], [N,classes] */
    double f16_tol;    /* what f16 logits may differ from f32 PyTorch's */
    int64_t xs[4], n, classes;
} pu_golden;

/* One model under test on one golden file. The samples' model structs are large, so model points
 * at a static one, and ops, classes and err into it. */
typedef struct {
    const char *name;    /* the configuration in messages */
    const char *gold;    /* the golden file, relative to the repository root */
    const char *made_by; /* the command that writes it, for the message when it is missing */
    /* f16's limit from the file's logits_f16 (4x PyTorch's own f16 error, at least 2e-3) rather
     * than a flat 1e-2: only where the golden's f16 logits are known to be a fair yardstick */
    int f16_tol_from_file;
    void *model;
    const void *cfg; /* what init needs besides the file (architecture, width) */
    /* builds model on ctx from the file's weights w; 0, or nonzero with err set */
    int (*init)(gcr_ctx *ctx, void *model, const void *cfg, gcr_dtype dt, gcr_format fmt, const gcr_weights *w);
    gcr_tensor *(*forward)(gcr_ctx *ctx, void *model, gcr_tensor *x);
    void (*free)(void *model);
    const int *ops;     /* primitive ops the last forward dispatched: the eager kernel count */
    const int *classes; /* as init took it from the file */
    const char *err;
} pu_model;

static const char *pu_fmt_name(gcr_format fmt) { return fmt == GCR_NHWC ? "nhwc" : "nchw"; }

static int pu_golden_load(gcr_ctx *ctx, const pu_model *pm, pu_golden *g)
{
    memset(g, 0, sizeof *g);
    if (!CHECK(access(pm->gold, R_OK) == 0,
               "%s is missing: it is made on a machine with PyTorch by `%s` (tools/README.md); run the test from the "
               "repository root",
               pm->gold, pm->made_by))
        return -1;
    gcr_status s = gcr_weights_load(ctx, pm->gold, &g->w);
    if (!CHECK(s == GCR_OK, "loading %s: %s", pm->gold, gcr_ctx_error(ctx))) return -1;
    gcr_tensor *x = gcr_weights_get(g->w, "input"), *l = gcr_weights_get(g->w, "logits");
    if (!CHECK(x && l && gcr_tensor_ndim(x) == 4 && gcr_tensor_ndim(l) == 2, "%s holds input and logits", pm->gold))
        return -1;
    for (int i = 0; i < 4; i++) g->xs[i] = gcr_tensor_dim(x, i);
    g->n = g->xs[0];
    g->classes = gcr_tensor_dim(l, 1);
    g->x = h_read(x);
    g->logits = h_read(l);
    g->f16_tol = 1e-2;
    gcr_tensor *l16 = pm->f16_tol_from_file ? gcr_weights_get(g->w, "logits_f16") : NULL;
    if (l16 && gcr_tensor_ndim(l16) == 2 && gcr_tensor_numel(l16) == g->n * g->classes) {
        float *h = h_read(l16);
        double e = smp_rel_diff(h, g->logits, g->n * g->classes);
        free(h);
        g->f16_tol = 4 * e > 2e-3 ? 4 * e : 2e-3;
        printf("PyTorch's own f16 error %.3g: gcr f16 limit %.3g\n", e, g->f16_tol);
    }
    return 0;
}

static void pu_golden_free(pu_golden *g)
{
    free(g->x);
    free(g->logits);
    gcr_weights_free(g->w);
}

/* the input as an ordinary (non-constant) tensor of the model's dtype and layout */
static gcr_tensor *pu_make_input(gcr_ctx *ctx, const pu_golden *g, gcr_dtype dt, gcr_format fmt, const float *host)
{
    gcr_tensor *x = h_tensor(ctx, dt, 4, g->xs, fmt, host);
    CHECK(x && gcr_tensor_format(x) == fmt, "input in %s: %s", pu_fmt_name(fmt), gcr_ctx_error(ctx));
    return x;
}

/* checks logits (any dtype) against PyTorch's f32 logits; f16 also needs the same top-1 per image */
static void pu_expect_parity(gcr_tensor *y, const pu_golden *g, gcr_dtype dt, const char *what)
{
    if (!CHECK(y != NULL, "%s: forward returned NULL", what)) return;
    CHECK(gcr_tensor_ndim(y) == 2 && gcr_tensor_dim(y, 0) == g->n && gcr_tensor_dim(y, 1) == g->classes,
          "%s: logits shape", what);
    float *got = h_read(y);
    double e = smp_rel_diff(got, g->logits, g->n * g->classes), tol = dt == GCR_F32 ? 1e-4 : g->f16_tol;
    CHECK(e <= tol, "%s: max rel err %.3g > %.3g", what, e, tol);
    if (dt != GCR_F32)
        for (int64_t b = 0; b < g->n; b++)
            CHECK(smp_argmax(got + b * g->classes, (int)g->classes) ==
                      smp_argmax(g->logits + b * g->classes, (int)g->classes),
                  "%s: top-1 of image %lld", what, (long long)b);
    free(got);
}

/* The checks of one configuration on a built model: eager, then region passes 0 and 1 (capture,
 * replay) against PyTorch and passes 2 and 3 (replays on new data written into the same input
 * tensor) against eager on that data. */
static void pu_passes(gcr_ctx *ctx, const pu_model *pm, const pu_golden *g, gcr_dtype dt, gcr_format fmt,
                      const char *what)
{
    CHECK(*pm->classes == g->classes, "%s: classes from the file", what);
    gcr_tensor *x = pu_make_input(ctx, g, dt, fmt, g->x);

    uint64_t sc = gcr_scope_begin(ctx);
    gcr_tensor *y = pm->forward(ctx, pm->model, x);
    if (!y) CHECK(0, "%s: eager forward: %s", what, gcr_ctx_error(ctx));
    else pu_expect_parity(y, g, dt, what);
    int eager_ops = *pm->ops;
    gcr_scope_end(ctx, sc);

    /* a second input: eager result on it is the reference for a replay after rebinding data */
    int64_t nx = g->xs[0] * g->xs[1] * g->xs[2] * g->xs[3];
    float *x2h = h_randn(nx, -2, 2), *ref2 = NULL;
    gcr_tensor *x2 = pu_make_input(ctx, g, dt, fmt, x2h);
    sc = gcr_scope_begin(ctx);
    gcr_tensor *y2 = pm->forward(ctx, pm->model, x2);
    if (CHECK(y2 != NULL, "%s: eager forward on new data: %s", what, gcr_ctx_error(ctx))) ref2 = h_read(y2);
    gcr_scope_end(ctx, sc);

    /* x2's bytes as the device holds them (any dtype), to write into x for passes 2 and 3 */
    size_t nb = gcr_tensor_nbytes(x);
    void *raw = malloc(nb);
    gcr_status s = gcr_tensor_to_host(x2, raw, nb);
    CHECK_OK(ctx, s);

    char rwhat[200];
    for (int pass = 0; pass < 4 && gcr_ctx_status(ctx) == GCR_OK; pass++) {
        gcr_tensor *logits = NULL;
        if (pass == 2) { /* new data in the same input tensor: the replay must read it */
            s = gcr_tensor_from_host(x, raw, nb);
            CHECK_OK(ctx, s);
        }
        GCR_REGION(ctx, "forward") { logits = pm->forward(ctx, pm->model, x); }
        snprintf(rwhat, sizeof rwhat, "%s region pass %d", what, pass);
        if (!CHECK(logits != NULL, "%s: %s", rwhat, gcr_ctx_error(ctx))) break;
        if (pass < 2) {
            pu_expect_parity(logits, g, dt, rwhat);
        } else if (CHECK(ref2 != NULL, "%s: eager reference on new data", rwhat)) {
            float *got = h_read(logits);
            double e = smp_rel_diff(got, ref2, g->n * g->classes);
            /* f16: fused and eager kernels round differently, by up to about the f16 error itself */
            CHECK(e <= (dt == GCR_F32 ? 1e-4 : g->f16_tol > 1e-2 ? g->f16_tol : 1e-2),
                  "%s: replay on new data vs eager: rel err %.3g", rwhat, e);
            free(got);
        }
    }
    free(raw);
    gcr_graph *gr = gcr_region_graph(ctx, "forward");
    gcr_graph_stats st;
    memset(&st, 0, sizeof st);
    if (CHECK(gr && gcr_graph_get_stats(gr, &st) == GCR_OK, "%s: region graph and stats", what))
        CHECK(st.kernels > 0 && st.kernels <= eager_ops && st.replays >= 1,
              "%s: %d kernels per replay (eager %d), %llu replays", what, st.kernels, eager_ops,
              (unsigned long long)st.replays);
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "%s: no error left: %s", what, gcr_ctx_error(ctx));
    free(x2h);
    free(ref2);
}

/* a ctx on dev with GCR_CONVCONV = convconv (-1: the default), or NULL after a skip line (no GPU)
 * or a failed check (no CPU context) */
static __attribute__((unused)) gcr_ctx *pu_ctx_cc(gcr_device dev, int convconv)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = dev;
    o.knobs.convconv = convconv;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) == GCR_OK) return ctx;
    if (dev == GCR_DEVICE_CUDA) h_skip_gpu("no CUDA device");
    else CHECK(0, "cannot create a CPU context");
    return NULL;
}

/* one configuration (device, dtype, layout) of pm, on a fresh ctx with GCR_CONVCONV = convconv (-1:
 * the default); without a GPU a CUDA one skips */
static __attribute__((unused)) void pu_parity_cc(gcr_device dev, const pu_model *pm, gcr_dtype dt, gcr_format fmt,
                                                 int convconv)
{
    gcr_ctx *ctx = pu_ctx_cc(dev, convconv);
    if (!ctx) return;
    char what[160];
    snprintf(what, sizeof what, "%s %s %s %s%s", gcr_ctx_device_name(ctx), pm->name, gcr_dtype_name(dt),
             pu_fmt_name(fmt), convconv < 0 ? "" : convconv ? " convconv=1" : " convconv=0");
    printf("parity: %s\n", what); /* progress: GPU configurations compile for a while */
    fflush(stdout);
    pu_golden g;
    if (pu_golden_load(ctx, pm, &g) == 0 &&
        CHECK(pm->init(ctx, pm->model, pm->cfg, dt, fmt, g.w) == 0, "%s: init: %s", what, pm->err)) {
        pu_passes(ctx, pm, &g, dt, fmt, what);
        pm->free(pm->model);
    }
    pu_golden_free(&g);
    gcr_ctx_destroy(ctx);
}

/* one configuration with the default knobs */
static __attribute__((unused)) void pu_parity(gcr_device dev, const pu_model *pm, gcr_dtype dt, gcr_format fmt)
{
    pu_parity_cc(dev, pm, dt, fmt, -1);
}

/* whether a CUDA device is there, so that the GPU configurations say so in one skip line, not one each */
static __attribute__((unused)) int pu_gpu_present(void)
{
    gcr_ctx *probe = h_ctx(GCR_DEVICE_CUDA);
    if (!probe) return 0;
    gcr_ctx_destroy(probe);
    return 1;
}

/* the parity checks can fail: the model, built with other (random) weights, must give logits
 * that differ from the golden's, yet finite */
static __attribute__((unused)) void pu_expect_mismatch(gcr_ctx *ctx, const pu_model *pm, const pu_golden *g)
{
    gcr_tensor *x = pu_make_input(ctx, g, GCR_F32, GCR_NCHW, g->x);
    gcr_tensor *y = pm->forward(ctx, pm->model, x);
    if (!CHECK(y != NULL, "random-init forward: %s", gcr_ctx_error(ctx))) return;
    float *got = h_read(y);
    double e = smp_rel_diff(got, g->logits, g->n * g->classes);
    CHECK(e > 1e-2, "random weights must not match PyTorch's logits (rel err %.3g)", e);
    int finite = 1;
    for (int64_t i = 0; i < g->n * g->classes; i++) finite &= isfinite(got[i]);
    CHECK(finite, "random-init logits finite");
    free(got);
}

#endif
