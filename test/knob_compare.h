/* knob_compare.h — shared by the tests of knobs that must not change a single result bit
 * (test_cuda_pdl: GCR_PDL, test_cuda_l2: GCR_L2_PERSIST): a model of fused_models.h run on two
 * contexts that differ in one knob, captured, replayed on fresh inputs and run eagerly, every
 * output compared byte for byte; and a model whose successors would read a slow conv's result too
 * early if a launch or a cache setting broke the ordering. */
#ifndef GCR_TEST_KNOB_COMPARE_H
#define GCR_TEST_KNOB_COMPARE_H

#include "fused_models.h"
#include <stdbool.h>

/* a slow conv, then a chain of dependent small ops over its result: the successors would read the
 * conv's output (and the arena slots it reuses) too early without the waits */
static __attribute__((unused)) int kc_chain(gcr_ctx *ctx, gcr_tensor **in, gcr_tensor **out)
{
    gcr_conv2d_params p = gcr_conv2d_default();
    p.padding[0] = p.padding[1] = 1;
    gcr_tensor *y = gcr_relu(ctx, gcr_conv2d(ctx, in[0], in[1], NULL, &p));
    gcr_tensor *m = gcr_mean(ctx, y, (int[]){2, 3}, 2, true);
    for (int i = 0; i < 12; i++) m = gcr_add_scalar(ctx, gcr_mul(ctx, m, m), 0.25f);
    out[0] = gcr_mul(ctx, y, m);
    out[1] = m;
    return 2;
}

static const fm_case kc_chain_case = {"chain", kc_chain, 2, {{4, {4, 64, 56, 56}, 0, 0, 0}, {4, {64, 64, 3, 3}, 1, 0, 0}}, 0};

/* the outputs' bytes, concatenated (malloc'ed) */
static __attribute__((unused)) unsigned char *kc_out_bytes(gcr_tensor **out, int n, size_t *len)
{
    size_t total = 0;
    for (int o = 0; o < n; o++) total += gcr_tensor_nbytes(out[o]);
    unsigned char *b = malloc(total ? total : 1), *p = b;
    for (int o = 0; o < n && b; o++) {
        size_t nb = gcr_tensor_nbytes(out[o]);
        if (gcr_tensor_to_host(out[o], p, nb) != GCR_OK) memset(p, 0xee, nb);
        p += nb;
    }
    *len = total;
    return b;
}

/* m on ctx c[0] and c[1] (two settings of one knob) with the same data: captured, replayed with fresh inputs,
 * and eager; every result byte-equal between the two */
static __attribute__((unused)) void kc_same_bytes(gcr_ctx *c[2], const fm_case *m, gcr_dtype dt, gcr_format fmt, const char *what)
{
    gcr_tensor *in[2][CU_MAX], *base[2][CU_MAX], *out[2][CU_MAX];
    gcr_graph *g[2] = {0};
    int n_out[2] = {0};
    for (int i = 0; i < m->n_in; i++) {
        float *h = cu_rand(cu_numel(&m->in[i]), m->in[i].positive);
        for (int s = 0; s < 2; s++) in[s][i] = cu_make_from(c[s], &m->in[i], dt, fmt, h, &base[s][i]);
        free(h);
    }
    for (int s = 0; s < 2; s++) {
        OK(c[s], gcr_capture_begin(c[s]));
        n_out[s] = m->fn(c[s], in[s], out[s]);
        OK(c[s], gcr_capture_end(c[s], &g[s]));
    }
    if (!CHECK(g[0] && g[1] && n_out[0] == n_out[1], "%s: capture: %s / %s", what, gcr_ctx_error(c[0]), gcr_ctx_error(c[1])))
        goto done;
    for (int it = 0; it < 4; it++) {
        if (it > 0) {
            for (int i = 0; i < m->n_in; i++) {
                if (m->in[i].is_const) continue;
                float *h = cu_rand(cu_numel(&m->in[i]), m->in[i].positive);
                for (int s = 0; s < 2; s++) cu_fill(base[s][i] ? base[s][i] : in[s][i], h);
                free(h);
            }
            for (int s = 0; s < 2; s++) OK(c[s], gcr_graph_replay(g[s]));
        }
        size_t len[2];
        unsigned char *b0 = kc_out_bytes(out[0], n_out[0], &len[0]), *b1 = kc_out_bytes(out[1], n_out[1], &len[1]);
        CHECK(b0 && b1 && len[0] == len[1] && !memcmp(b0, b1, len[0]), "%s: replay %d differs between the two settings", what, it);
        free(b0);
        free(b1);
    }
    /* eager: the same calls outside a capture */
    gcr_tensor *ref[2][CU_MAX];
    uint64_t sc[2];
    for (int s = 0; s < 2; s++) {
        sc[s] = gcr_scope_begin(c[s]);
        m->fn(c[s], in[s], ref[s]);
    }
    size_t len[2];
    unsigned char *b0 = kc_out_bytes(ref[0], n_out[0], &len[0]), *b1 = kc_out_bytes(ref[1], n_out[1], &len[1]);
    CHECK(b0 && b1 && len[0] == len[1] && !memcmp(b0, b1, len[0]), "%s: eager differs between the two settings", what);
    free(b0);
    free(b1);
    for (int s = 0; s < 2; s++) gcr_scope_end(c[s], sc[s]);
done:
    for (int s = 0; s < 2; s++) {
        gcr_graph_destroy(g[s]);
        for (int i = 0; i < m->n_in; i++) gcr_tensor_free(base[s][i] ? base[s][i] : in[s][i]);
    }
}

/* kc_same_bytes over every model of fused_models.h and kc_chain_case, f32 and f16, NCHW and NHWC,
 * with fusion on and off, on the contexts make(1, fusion) and make(0, fusion) (the knob under test
 * on and off); skips without a GPU */
static __attribute__((unused)) void kc_all_models(gcr_ctx *(*make)(int knob, int fusion))
{
    for (int fusion = 1; fusion >= 0; fusion--) {
        gcr_ctx *c[2] = {make(1, fusion), make(0, fusion)};
        if (!c[0] || !c[1]) {
            h_skip_gpu("no CUDA device");
            if (c[0]) gcr_ctx_destroy(c[0]);
            if (c[1]) gcr_ctx_destroy(c[1]);
            return;
        }
        for (int d = 0; d < 2; d++)
            for (int f = 0; f < 2; f++)
                for (int i = 0; i <= FM_N_CASES; i++) {
                    const fm_case *m = i < FM_N_CASES ? &fm_cases[i] : &kc_chain_case;
                    char what[128];
                    snprintf(what, sizeof what, "%s %s %s fusion=%d", m->name, d ? "f16" : "f32", f ? "nhwc" : "nchw", fusion);
                    kc_same_bytes(c, m, d ? GCR_F16 : GCR_F32, f ? GCR_NHWC : GCR_NCHW, what);
                    gcr_ctx_clear_error(c[0]);
                    gcr_ctx_clear_error(c[1]);
                }
        gcr_ctx_destroy(c[0]);
        gcr_ctx_destroy(c[1]);
    }
}

#endif /* GCR_TEST_KNOB_COMPARE_H */
