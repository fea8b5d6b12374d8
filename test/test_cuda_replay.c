/* test_cuda_replay.c — the CUDA executor on a GPU (skips cleanly without one): for every model of
 * fused_models.h, f32 and f16, NCHW and NHWC, with CUDA Graphs on and off, the replayed graph
 * equals the GPU's eager kernels and the CPU reference over many iterations of fresh input data;
 * kernel counts where the fusion is known; rebinding an input pointer gives the new input's
 * result without a new variant; rebinding both inputs of a conv block, fused and unfused, round
 * after round patches the CUDA Graph's kernel nodes (no re-capture) and equals eager; a shape
 * change re-traces; 100 dependent tiny ops fused and not; a graph keeps the TF32 mode it was
 * captured with; a program that fails to compile leaves an earlier error on the ctx as it was; the
 * source dump keeps its name in a dump directory of any length. */
#include "fused_models.h"
#include "../replay/graph.h"
#include "cuda/cuda_internal.h" /* gcr_cuda_st: the arch NVRTC compiles for */
#include "cuda/graph_patch.h"
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static gcr_ctx *gpu_ctx(int graphs, int fusion)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.graphs = graphs;
    o.knobs.fusion = fusion;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) return NULL;
    return ctx;
}

static int n_runs;

/* capture m on gpu, then iters replays with fresh data, each against GPU eager and CPU eager */
static void check_case(gcr_ctx *gpu, gcr_ctx *cpu, const fm_case *m, gcr_dtype dt, gcr_format fmt, int iters, const char *what)
{
    gcr_tensor *in[CU_MAX], *base[CU_MAX], *out[CU_MAX] = {0};
    float *h[CU_MAX];
    for (int i = 0; i < m->n_in; i++) {
        h[i] = cu_rand(cu_numel(&m->in[i]), m->in[i].positive);
        in[i] = cu_make_from(gpu, &m->in[i], dt, fmt, h[i], &base[i]);
    }
    gcr_graph *g = NULL;
    OK(gpu, gcr_capture_begin(gpu));
    int n_out = m->fn(gpu, in, out);
    OK(gpu, gcr_capture_end(gpu, &g));
    if (!CHECK(g != NULL, "%s: capture failed: %s", what, gcr_ctx_error(gpu))) goto done;
    if (m->kernels) CHECK(cu_kernels(g) == m->kernels, "%s: %d kernels, want %d", what, cu_kernels(g), m->kernels);
    float tol = dt == GCR_F32 ? 2e-4f : 2e-2f;
    for (int it = 0; it <= iters; it++) {
        if (it > 0) {
            for (int i = 0; i < m->n_in; i++) {
                if (m->in[i].is_const) continue;
                free(h[i]);
                h[i] = cu_rand(cu_numel(&m->in[i]), m->in[i].positive);
                cu_fill(base[i] ? base[i] : in[i], h[i]);
            }
            OK(gpu, gcr_graph_replay(g));
        }
        n_runs++;
        uint64_t sg = gcr_scope_begin(gpu), sc = gcr_scope_begin(cpu);
        gcr_tensor *ref[CU_MAX], *cin[CU_MAX], *cbase[CU_MAX], *cref[CU_MAX];
        int nr = m->fn(gpu, in, ref);
        for (int i = 0; i < m->n_in; i++) cin[i] = cu_make_from(cpu, &m->in[i], dt, fmt, h[i], &cbase[i]);
        int nc = m->fn(cpu, cin, cref);
        CHECK(nr == n_out && nc == n_out, "%s: %d/%d/%d outputs", what, n_out, nr, nc);
        for (int o = 0; o < n_out && o < nr && o < nc; o++) {
            int64_t n = gcr_tensor_numel(ref[o]);
            float *a = h_read(out[o]), *b = h_read(ref[o]), *c = h_read(cref[o]);
            char w[160];
            snprintf(w, sizeof w, "%s: output %d iteration %d, replay vs GPU eager", what, o, it);
            int ok = CHECK_CLOSE(a, b, n, tol, tol, w);
            snprintf(w, sizeof w, "%s: output %d iteration %d, replay vs CPU", what, o, it);
            ok &= CHECK_CLOSE(a, c, n, tol, tol, w);
            free(a);
            free(b);
            free(c);
            if (!ok) {
                size_t dn = gcr_graph_describe(g, NULL, 0);
                char *s = malloc(dn);
                gcr_graph_describe(g, s, dn);
                fprintf(stderr, "%s", s);
                free(s);
                it = iters;
            }
        }
        for (int i = 0; i < m->n_in; i++) {
            gcr_tensor_free(cin[i]);
            gcr_tensor_free(cbase[i]);
        }
        gcr_scope_end(cpu, sc);
        gcr_scope_end(gpu, sg);
    }
done:
    gcr_graph_destroy(g);
    for (int i = 0; i < m->n_in; i++) {
        gcr_tensor_free(in[i]);
        gcr_tensor_free(base[i]);
        free(h[i]);
    }
    gcr_ctx_clear_error(gpu);
}

static void test_models(void)
{
    gcr_ctx *cpu = h_ctx(GCR_DEVICE_CPU);
    for (int graphs = 0; graphs < 2; graphs++) {
        gcr_ctx *gpu = gpu_ctx(graphs, 1);
        if (!gpu) {
            h_skip_gpu("no CUDA device");
            break;
        }
        static const gcr_dtype dts[2] = {GCR_F32, GCR_F16};
        for (int c = 0; c < FM_N_CASES; c++)
            for (int d = 0; d < 2; d++)
                for (int f = 0; f < 2; f++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s %s %s graphs=%d", fm_cases[c].name, gcr_dtype_name(dts[d]),
                             f ? "nhwc" : "nchw", graphs);
                    check_case(gpu, cpu, &fm_cases[c], dts[d], f ? GCR_NHWC : GCR_NCHW, c == 0 ? 12 : 4, what);
                }
        gcr_ctx_destroy(gpu);
    }
    gcr_ctx_destroy(cpu);
}

/* hswish on x, compared with the GPU eager result on x */
static void expect_hswish(gcr_ctx *ctx, gcr_graph *g, gcr_tensor *x, const char *what)
{
    OK(ctx, gcr_graph_replay(g));
    uint64_t s = gcr_scope_begin(ctx);
    gcr_tensor *ref = gcr_hardswish(ctx, x);
    float *a = h_read(gcr_graph_get_output(g, 0)), *b = h_read(ref);
    CHECK(gcr_tensor_numel(ref) == gcr_tensor_numel(gcr_graph_get_output(g, 0)), "%s: output size", what);
    CHECK_CLOSE(a, b, gcr_tensor_numel(ref), 1e-5f, 1e-5f, what);
    free(a);
    free(b);
    gcr_scope_end(ctx, s);
}

/* a graph of hswish(x), captured on ctx and replayed once against eager; NULL (a failed check)
 * when the capture fails */
static gcr_graph *capture_hswish(gcr_ctx *ctx, gcr_tensor *x)
{
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_hardswish(ctx, x);
    OK(ctx, gcr_capture_end(ctx, &g));
    if (!CHECK(g != NULL, "capture: %s", gcr_ctx_error(ctx))) return NULL;
    expect_hswish(ctx, g, x, "first replay");
    return g;
}

static void test_rebind_and_shapes(void)
{
    for (int graphs = 0; graphs < 2; graphs++) {
        gcr_ctx *ctx = gpu_ctx(graphs, 1);
        if (!ctx) {
            h_skip_gpu("no CUDA device");
            return;
        }
        int64_t sh[4] = {2, 3, 5, 7}, sh2[4] = {2, 3, 5, 9};
        float *h1 = h_randn(210, -4, 4), *h2 = h_randn(210, -4, 4), *h3 = h_randn(270, -4, 4);
        gcr_tensor *x1 = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, sh, GCR_NCHW, h1));
        gcr_tensor *x2 = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, sh, GCR_NCHW, h2));
        gcr_tensor *x3 = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, sh2, GCR_NCHW, h3));
        gcr_graph *g = capture_hswish(ctx, x1);
        if (g) {
            expect_hswish(ctx, g, x1, "x1 again (graph replay)");
            OK(ctx, gcr_graph_bind_input(g, 0, x2));
            expect_hswish(ctx, g, x2, "x2 rebound (new pointers patched)");
            CHECK(cu_variants(g) == 1, "graphs=%d: rebinding made %d variants", graphs, cu_variants(g));
            OK(ctx, gcr_graph_bind_input(g, 0, x1));
            expect_hswish(ctx, g, x1, "x1 rebound back");
            OK(ctx, gcr_graph_bind_input(g, 0, x3));
            expect_hswish(ctx, g, x3, "x3: a new shape re-traces");
            CHECK(cu_variants(g) == 2, "graphs=%d: %d variants after a shape change", graphs, cu_variants(g));
            OK(ctx, gcr_graph_bind_input(g, 0, x2));
            expect_hswish(ctx, g, x2, "x2: back to the first signature");
            /* data written into the bound input is seen by the next replay */
            float *h4 = h_randn(210, -4, 4);
            OK(ctx, gcr_tensor_from_host(x2, h4, 210 * 4));
            expect_hswish(ctx, g, x2, "x2 refilled");
            free(h4);
        }
        gcr_graph_destroy(g);
        gcr_tensor_free(x1);
        gcr_tensor_free(x2);
        gcr_tensor_free(x3);
        free(h1);
        free(h2);
        free(h3);
        gcr_ctx_destroy(ctx);
    }
}

/* A fused kernel whose program fails to compile while an earlier error is on the ctx: the build's
 * search for the failing kernel (each compiled alone) leaves that error as it was, sticky until the
 * caller clears it. NVRTC is made to refuse every new program by asking for an arch it does not
 * know (sm_10); the programs compiled before stay in the memory cache. */
static void test_compile_failure_keeps_sticky_error(void)
{
    gcr_ctx *ctx = gpu_ctx(1, 1);
    if (!ctx) {
        h_skip_gpu("no CUDA device");
        return;
    }
    int64_t sh[4] = {2, 3, 5, 7}, sh2[4] = {2, 3, 5, 9};
    float *h1 = h_randn(210, -4, 4), *h2 = h_randn(270, -4, 4);
    gcr_tensor *x1 = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, sh, GCR_NCHW, h1));
    gcr_tensor *x2 = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, sh2, GCR_NCHW, h2));
    gcr_graph *g = capture_hswish(ctx, x1);
    if (g) {
        gcr_cuda_state *st = gcr_cuda_st(ctx);
        const int arch = st->arch;
        st->arch = 10;
        CHECK(gcr_dropout(ctx, x1, 2.0f) == NULL, "dropout p 2 fails");
        OK(ctx, gcr_graph_bind_input(g, 0, x2));
        gcr_status s = gcr_graph_replay(g); /* a new shape: a new program, which NVRTC refuses */
        CHECK(gcr_ctx_status(ctx) == GCR_ERR_PARAM && strstr(gcr_ctx_error(ctx), "dropout"),
              "the earlier error stays on the ctx after a failed compile (replay %s): %s %s", gcr_status_name(s),
              gcr_status_name(gcr_ctx_status(ctx)), gcr_ctx_error(ctx));
        st->arch = arch;
        gcr_ctx_clear_error(ctx);
    }
    gcr_graph_destroy(g);
    gcr_tensor_free(x1);
    gcr_tensor_free(x2);
    free(h1);
    free(h2);
    gcr_ctx_destroy(ctx);
}

/* knobs.tf32 belongs to a graph from its capture: a 1x1 NHWC conv + relu large enough for the TF32
 * tile, captured with TF32 on, replays bit for bit the same after the ctx turns TF32 off (plain
 * launches pick their kernel at every replay), while an eager run with TF32 off differs from it.
 * With fusion the conv is a hooked kernel; without, an eager node the executor runs with the
 * graph's setting (lib/cuda/exec.c eager_run). */
static void test_tf32_snapshot(void)
{
    for (int mode = 0; mode < 4; mode++) {
        int graphs = mode & 1, fusion = mode >> 1;
        gcr_ctx *ctx = gpu_ctx(graphs, fusion);
        if (!ctx) {
            h_skip_gpu("no CUDA device");
            return;
        }
        gcr_knobs k = gcr_ctx_opts_default().knobs;
        k.tf32 = 1;
        OK(ctx, gcr_ctx_set_knobs(ctx, &k));
        int64_t xs[4] = {16, 24, 48, 48}, ws[4] = {40, 24, 1, 1}, nx = 16 * 24 * 48 * 48, ny = 16 * 40 * 48 * 48;
        float *hx = h_randn(nx, -1, 1), *hw = h_randn(40 * 24, -1, 1);
        gcr_tensor *x = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, xs, GCR_NHWC, hx));
        gcr_tensor *w = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 4, ws, GCR_NCHW, hw));
        gcr_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_relu(ctx, gcr_conv2d(ctx, x, w, NULL, &p));
        OK(ctx, gcr_capture_end(ctx, &g));
        if (CHECK(g != NULL, "capture: %s", gcr_ctx_error(ctx))) {
            float *first = h_read(gcr_graph_get_output(g, 0)); /* the capture's own run, TF32 on */
            k.tf32 = 0;
            OK(ctx, gcr_ctx_set_knobs(ctx, &k));
            OK(ctx, gcr_graph_replay(g));
            float *again = h_read(gcr_graph_get_output(g, 0));
            uint64_t s = gcr_scope_begin(ctx);
            float *exact = h_read(gcr_relu(ctx, gcr_conv2d(ctx, x, w, NULL, &p)));
            gcr_scope_end(ctx, s);
            if (CHECK(first && again && exact, "reading results")) {
                double same = 0, off = 0, m = 0;
                for (int64_t i = 0; i < ny; i++) {
                    same = fmax(same, fabs((double)again[i] - first[i]));
                    off = fmax(off, fabs((double)exact[i] - first[i]));
                    m = fmax(m, fabs((double)exact[i]));
                }
                CHECK(same == 0, "graphs=%d fusion=%d: the replay after tf32=0 differs from the TF32 capture by %g",
                      graphs, fusion, same);
                CHECK(off > 1e-6 * m && off <= 1e-2 * m,
                      "graphs=%d fusion=%d: exact FP32 eager vs the TF32 graph differ by %g (max |y| %g): expected TF32 rounding",
                      graphs, fusion, off, m);
                CHECK(gcr_ctx_knobs(ctx)->tf32 == 0, "the ctx's own knob is left as set");
            }
            free(first);
            free(again);
            free(exact);
        }
        gcr_graph_destroy(g);
        gcr_tensor_free(x);
        gcr_tensor_free(w);
        free(hx);
        free(hw);
        gcr_ctx_destroy(ctx);
    }
}

/* 100 dependent scalar ops: fusion off keeps 100 kernels in the graph, on makes one */
static void test_chain100(void)
{
    for (int fusion = 0; fusion < 2; fusion++) {
        gcr_ctx *ctx = gpu_ctx(1, fusion);
        if (!ctx) {
            h_skip_gpu("no CUDA device");
            return;
        }
        int64_t sh[1] = {256};
        float *h = h_randn(256, -1, 1);
        gcr_tensor *x = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 1, sh, GCR_NCHW, h));
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        gcr_tensor *y = x;
        for (int i = 0; i < 100; i++) y = i % 2 ? gcr_mul_scalar(ctx, y, 0.999f) : gcr_add_scalar(ctx, y, 0.01f);
        OK(ctx, gcr_capture_end(ctx, &g));
        if (CHECK(g != NULL, "capture: %s", gcr_ctx_error(ctx))) {
            CHECK(cu_kernels(g) == (fusion ? 1 : 100), "fusion=%d: %d kernels", fusion, cu_kernels(g));
            for (int it = 0; it < 5; it++) {
                h_fill(h, 256, -1, 1);
                OK(ctx, gcr_tensor_from_host(x, h, 256 * 4));
                OK(ctx, gcr_graph_replay(g));
                float *a = h_read(gcr_graph_get_output(g, 0)), ref[256];
                for (int e = 0; e < 256; e++) {
                    float v = h[e];
                    for (int i = 0; i < 100; i++) v = i % 2 ? v * 0.999f : v + 0.01f;
                    ref[e] = v;
                }
                CHECK_CLOSE(a, ref, 256, 1e-5f, 1e-5f, fusion ? "chain fused" : "chain unfused");
                free(a);
            }
        }
        gcr_graph_destroy(g);
        gcr_tensor_free(x);
        free(h);
        gcr_ctx_destroy(ctx);
    }
}

/* captures fm_cases[0] (hswish, one fused kernel k0_add+clamp+mul+div) on ctx and replays it once */
static void replay_first_case(gcr_ctx *ctx)
{
    const fm_case *m = &fm_cases[0];
    gcr_tensor *in[1], *base[1], *out[1];
    float *h = cu_rand(cu_numel(&m->in[0]), m->in[0].positive);
    in[0] = cu_make_from(ctx, &m->in[0], GCR_F32, GCR_NCHW, h, &base[0]);
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    m->fn(ctx, in, out);
    OK(ctx, gcr_capture_end(ctx, &g));
    OK(ctx, gcr_graph_replay(g));
    gcr_graph_destroy(g);
    gcr_tensor_free(in[0]);
    free(h);
}

/* GCR_PROFILE: the first run times every kernel (names carry the group); GCR_DUMP=source writes
 * the generated program */
static void test_profile_and_dump(void)
{
    char dir[] = "/tmp/gcr_cuda_replay_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return;
    }
    char prof[128];
    snprintf(prof, sizeof prof, "%s/prof.json", dir);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.profile = prof;
    o.knobs.dump = "source";
    o.knobs.dump_dir = dir;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) {
        h_skip_gpu("no CUDA device");
        return;
    }
    replay_first_case(ctx);
    char *j = h_slurp(prof);
    CHECK(j && strstr(j, "k0_add+clamp+mul+div"), "profile %s lacks the fused kernel: %s", prof, j ? j : "(none)");
    free(j);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "cat %s/cuda_*.cu > %s/all.txt 2>/dev/null", dir, dir);
    CHECK(system(cmd) == 0, "no source dump in %s", dir);
    snprintf(cmd, sizeof cmd, "%s/all.txt", dir);
    char *src = h_slurp(cmd);
    CHECK(src && strstr(src, "extern \"C\" __global__") && strstr(src, "gcr_k0_add_clamp_mul_div"),
          "source dump lacks the kernel");
    free(src);
    h_rmtree(dir);
    gcr_ctx_destroy(ctx);
}

/* GCR_DUMP=source into a directory longer than any fixed path buffer (1,283 characters): the
 * program lands in it as cuda_<key>.cu, under its full name (a 1024-byte buffer cut the name off
 * and the dump was lost) */
static void test_dump_long_dir(void)
{
    char top[64];
    snprintf(top, sizeof top, "/tmp/gcr_cuda_dump_long_%d", (int)getpid());
    char *deep = h_long_dir(top, 6);
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CUDA;
    o.knobs.dump = "source";
    o.knobs.dump_dir = deep;
    gcr_ctx *ctx = NULL;
    if (gcr_ctx_create(&ctx, &o) != GCR_OK) {
        h_skip_gpu("no CUDA device");
    } else {
        replay_first_case(ctx);
        int found = 0;
        DIR *d = opendir(deep);
        for (struct dirent *e; d && (e = readdir(d));) {
            size_t l = strlen(e->d_name);
            if (strncmp(e->d_name, "cuda_", 5) || l != 5 + 16 + 3 || strcmp(e->d_name + l - 3, ".cu")) continue;
            char *file = malloc(strlen(deep) + l + 2);
            sprintf(file, "%s/%s", deep, e->d_name);
            char *src = h_slurp(file);
            found += src && strstr(src, "gcr_k0_add_clamp_mul_div") != NULL;
            free(src);
            unlink(file);
            free(file);
        }
        if (d) closedir(d);
        CHECK(found == 1, "one source dump with the kernel in the %d-character directory, found %d", (int)strlen(deep),
              found);
        gcr_ctx_destroy(ctx);
    }
    h_rmtree(top);
    free(deep);
}

/* the graph's CUDA Graph upkeep (captures, patched rebinds, re-captures) from its last variant */
static gcr_cuda_graph_stats upkeep(gcr_graph *g)
{
    gcr_cuda_graph_stats s;
    gcr_cuda_exec_stats(g->cur ? g->cur->ex : NULL, g->cur ? &g->cur->job : NULL, &s);
    return s;
}

typedef struct bind_weights {
    gcr_tensor *w, *b, *wd, *fw, *fb;
} bind_weights;

/* x -> conv 3x3 + hardswish -> * y -> depthwise 3x3 -> (+ x) and -> max pool 2 -> mean -> linear,
 * and x, y concatenated: templates with hooks reading x (dense), y's product (depthwise), the pool
 * and the GEMV; generated kernels reading x and y; copy nodes reading x and y (the concat's
 * contiguous slabs); with fusion off every op is a library kernel (pointwise, reduction, dense,
 * depthwise, pool) whose parameters carry the addresses in its own struct */
static int bind_model(gcr_ctx *ctx, const bind_weights *W, gcr_tensor *x, gcr_tensor *y, gcr_tensor **out)
{
    gcr_conv2d_params cp = {{1, 1}, {1, 1}, {1, 1}, 1}, dp = {{1, 1}, {1, 1}, {1, 1}, 8};
    gcr_pool2d_params pp = {{2, 2}, {0, 0}, {0, 0}, {1, 1}, 0, 0};
    int hw[2] = {2, 3};
    gcr_tensor *a = gcr_mul(ctx, gcr_hardswish(ctx, gcr_conv2d(ctx, x, W->w, W->b, &cp)), y);
    gcr_tensor *d = gcr_conv2d(ctx, a, W->wd, NULL, &dp);
    out[0] = gcr_add(ctx, d, x);
    gcr_tensor *m = gcr_mean(ctx, gcr_max_pool2d(ctx, d, &pp), hw, 2, 0);
    out[1] = gcr_linear(ctx, m, W->fw, W->fb);
    gcr_tensor *xy[2] = {x, y};
    out[2] = gcr_concat(ctx, xy, 2, 0);
    return 3;
}

/* Rebinding both inputs to other tensors of the same signature, round after round with fresh
 * data: the replay equals the eager ops on the bound tensors, no variant is added, and the CUDA
 * Graph is captured once: every rebind is patched into the kernel nodes' parameters. */
static void test_bind_patches(void)
{
    for (int fusion = 0; fusion < 2; fusion++) {
        gcr_ctx *ctx = gpu_ctx(1, fusion);
        if (!ctx) {
            h_skip_gpu("no CUDA device");
            return;
        }
        enum { SETS = 3, ROUNDS = 12 };
        int64_t sx[4] = {2, 8, 10, 10}, sw[4] = {8, 8, 3, 3}, sd[4] = {8, 1, 3, 3}, sf[2] = {4, 8}, s8 = 8, s4 = 4;
        bind_weights W = {
            gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 4, sw, GCR_NCHW, -0.3f, 0.3f)),
            gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 1, &s8, GCR_NCHW, -0.5f, 0.5f)),
            gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 4, sd, GCR_NCHW, -0.5f, 0.5f)),
            gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 2, sf, GCR_NCHW, -0.5f, 0.5f)),
            gcr_tensor_set_const(h_rand_tensor(ctx, GCR_F32, 1, &s4, GCR_NCHW, -0.5f, 0.5f)),
        };
        gcr_tensor *xs[SETS], *ys[SETS], *out[3] = {0};
        for (int k = 0; k < SETS; k++) {
            xs[k] = gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, 4, sx, GCR_NCHW, -3, 3));
            ys[k] = gcr_tensor_keep(h_rand_tensor(ctx, GCR_F32, 4, sx, GCR_NCHW, -2, 2));
        }
        gcr_graph *g = NULL;
        OK(ctx, gcr_capture_begin(ctx));
        bind_model(ctx, &W, xs[0], ys[0], out);
        for (int o = 0; o < 3; o++) OK(ctx, gcr_graph_output(ctx, out[o]));
        OK(ctx, gcr_capture_end(ctx, &g));
        if (!CHECK(g != NULL, "fusion=%d: capture: %s", fusion, gcr_ctx_error(ctx))) {
            gcr_ctx_destroy(ctx);
            continue;
        }
        OK(ctx, gcr_graph_replay(g)); /* captures the CUDA Graph (the first run launched plainly) */
        int64_t n = 2 * 8 * 10 * 10;
        for (int r = 0; r < ROUNDS; r++) {
            int k = (r + 1) % SETS;
            float *hx = h_randn(n, -3, 3), *hy = h_randn(n, -2, 2);
            OK(ctx, gcr_tensor_from_host(xs[k], hx, (size_t)n * 4));
            OK(ctx, gcr_tensor_from_host(ys[k], hy, (size_t)n * 4));
            free(hx);
            free(hy);
            OK(ctx, gcr_graph_bind_input(g, 0, xs[k]));
            OK(ctx, gcr_graph_bind_input(g, 1, ys[k]));
            OK(ctx, gcr_graph_replay(g));
            uint64_t s = gcr_scope_begin(ctx);
            gcr_tensor *ref[3];
            bind_model(ctx, &W, xs[k], ys[k], ref);
            for (int o = 0; o < 3; o++) {
                float *a = h_read(gcr_graph_get_output(g, o)), *b = h_read(ref[o]);
                char w[96];
                snprintf(w, sizeof w, "fusion=%d round %d (set %d) output %d: replay vs eager", fusion, r, k, o);
                CHECK_CLOSE(a, b, gcr_tensor_numel(ref[o]), 1e-4f, 1e-4f, w);
                free(a);
                free(b);
            }
            gcr_scope_end(ctx, s);
        }
        gcr_cuda_graph_stats st = upkeep(g);
        CHECK(cu_variants(g) == 1, "fusion=%d: rebinding made %d variants", fusion, cu_variants(g));
        CHECK(st.captures == 1 && st.recaptured == 0, "fusion=%d: %d captures, %d re-captures (%s)", fusion,
              st.captures, st.recaptured, st.why ? st.why : "patchable");
        CHECK(st.patched == ROUNDS, "fusion=%d: %d rebinds patched", fusion, st.patched);
        CHECK(st.nodes > 0, "fusion=%d: the last patch touched %d nodes", fusion, st.nodes);
        gcr_graph_destroy(g);
        gcr_ctx_destroy(ctx);
    }
}

int main(void)
{
    h_seed(11);
    RUN(test_models);
    RUN(test_rebind_and_shapes);
    RUN(test_bind_patches);
    RUN(test_chain100);
    RUN(test_profile_and_dump);
    RUN(test_dump_long_dir);
    RUN(test_tf32_snapshot);
    RUN(test_compile_failure_keeps_sticky_error);
    printf("%d replays compared\n", n_runs);
    return h_finish();
}
