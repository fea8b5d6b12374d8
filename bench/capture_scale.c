/* capture_scale.c — how gcr_capture_end scales with the op count (prints ops and seconds per
 * trace shape and size). Runs on the CPU backend so it needs no GPU; the cost measured is the
 * host side of a capture: recording, fusion passes, kernel building, memory plan and the
 * executor build, plus the one run at the end of capture on tiny tensors.
 *
 * Trace shapes (each op count N is the number of primitive ops recorded):
 *   chain    N dependent pointwise ops on one tensor: one fused group of N ops
 *   blocks   8 pointwise ops, then a sum over the last axis, repeated: many small kernels
 *   wide     N pointwise ops each reading the input and a constant of its own: N siblings that
 *            the horizontal pass merges into one group
 *   nofuse   the blocks trace with GCR_FUSION=0: N eager kernels
 * Usage: capture_scale [N ...]   (default 20000 50000 200000) */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) { return 1e-6 * bench_now_us(); }

static gcr_tensor *step(gcr_ctx *ctx, gcr_tensor *y, int i)
{
    switch (i % 4) {
    case 0: return gcr_add_scalar(ctx, y, 0.25f);
    case 1: return gcr_mul_scalar(ctx, y, 0.5f);
    case 2: return gcr_relu(ctx, y);
    default: return gcr_clamp(ctx, y, -4.0f, 4.0f);
    }
}

/* records about n ops of the given shape on x; returns the number recorded */
static int record(gcr_ctx *ctx, const char *shape, gcr_tensor *x, gcr_tensor **w, int n)
{
    int ops = 0;
    gcr_tensor *y = x;
    if (!strcmp(shape, "chain")) {
        for (; ops < n; ops++) y = step(ctx, y, ops);
    } else if (!strcmp(shape, "wide")) {
        for (; ops < n; ops++) gcr_add(ctx, x, w[ops]);
    } else { /* blocks, nofuse */
        int axis = -1;
        while (ops < n) {
            for (int i = 0; i < 8 && ops < n; i++, ops++) y = step(ctx, y, i);
            if (ops < n) {
                gcr_tensor *s = gcr_sum(ctx, y, &axis, 1, 1);
                y = gcr_add(ctx, y, s);
                ops += 2;
            }
        }
    }
    return ops;
}

/* seconds for capture_begin + recording + capture_end of n ops, or -1 */
static int run(const char *shape, int n)
{
    gcr_ctx *ctx = bench_ctx(GCR_DEVICE_CPU, strcmp(shape, "nofuse") != 0);
    if (!ctx) {
        fprintf(stderr, "capture_scale: no CPU context\n");
        return 1;
    }
    int64_t shp[2] = {4, 16};
    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)(i % 13) * 0.37f - 2.0f;
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 2, shp, GCR_NCHW, host);
    gcr_tensor **w = NULL;
    if (!strcmp(shape, "wide")) {
        w = malloc(sizeof *w * (size_t)n);
        for (int i = 0; i < n && w; i++) w[i] = gcr_tensor_set_const(gcr_tensor_from_data(ctx, GCR_F32, 2, shp, GCR_NCHW, host));
    }
    double t0 = now_s();
    gcr_graph *g = NULL;
    gcr_status s = gcr_capture_begin(ctx);
    int ops = s == GCR_OK ? record(ctx, shape, x, w, n) : 0;
    double t1 = now_s();
    if (s == GCR_OK) s = gcr_capture_end(ctx, &g);
    double t2 = now_s();
    gcr_graph_stats st = {0};
    if (s == GCR_OK) gcr_graph_get_stats(g, &st);
    if (s != GCR_OK)
        printf("%-7s %8d ops  failed: %s\n", shape, ops, gcr_ctx_error(ctx));
    else
        printf("%-7s %8d ops  %6d kernels  record %7.3f s  capture_end %7.3f s  total %7.3f s\n", shape,
               st.ops_traced, st.kernels, t1 - t0, t2 - t1, t2 - t0);
    fflush(stdout);
    gcr_graph_destroy(g);
    free(w);
    gcr_ctx_destroy(ctx);
    return s != GCR_OK;
}

int main(int argc, char **argv)
{
    int sizes[16], ns = 0;
    for (int i = 1; i < argc && ns < 16; i++) sizes[ns++] = atoi(argv[i]);
    if (!ns) {
        sizes[ns++] = 20000;
        sizes[ns++] = 50000;
        sizes[ns++] = 200000;
    }
    const char *shapes[] = {"chain", "blocks", "wide", "nofuse"};
    const char *only = getenv("CAPTURE_SCALE_SHAPES"); /* e.g. "chain,wide" */
    int rc = 0;
    for (int i = 0; i < ns; i++)
        for (int k = 0; k < 4; k++)
            if (!only || strstr(only, shapes[k])) rc |= run(shapes[k], sizes[i]);
    return rc;
}
