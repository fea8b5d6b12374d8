/* test_codegen.c — the CUDA code generator without a GPU: every fused kernel of the models in
 * fused_models.h (captured on a CPU context, f32/f16, NCHW/NHWC) must be generated (codegen may
 * not refuse a supported shape: that would silently unfuse it) and, in CUDA builds, compile with
 * NVRTC for sm_80 and sm_90 (f32, f16, bf16), the OWN kernels as one program like the executor builds them and
 * each anchored kernel as its template with the generated hooks (every epilogue with its 8-wide
 * form, GCR_EPILOGUE8), and every chain (lib/chain.h) as its one kernel, in clusters and without. */
#include "fused_models.h"
#include "../replay/graph.h"
#include "../lib/cuda/codegen.h"
#include "../lib/cuda/kernels/abi.h" /* GCR_CHAIN_THREADS */
#ifdef GCR_HAVE_CUDA
#include "../lib/cuda/dense.h"
#endif

static int n_own, n_hooked, n_chain, n_pro8_vec, n_packed;

#ifdef GCR_HAVE_CUDA
static int n_compiled;

/* arch_mask: bit 0 sm_80, bit 1 sm_90 */
static void nvrtc_ok(const char *what, const char *src, int arch_mask)
{
    static const int archs[2] = {80, 90};
    for (int a = 0; a < 2; a++) {
        if (!(arch_mask >> a & 1)) continue;
        void *img = NULL;
        size_t size = 0;
        int ptx = 0;
        char *log = NULL;
        gcr_status s = gcr_nvrtc_compile(src, NULL, 0, archs[a], &img, &size, &ptx, &log);
        if (!CHECK(s == GCR_OK && size > 0, "%s for sm_%d: %s\n%s", what, archs[a], log ? log : "", src))
            a = 2;
        else n_compiled++;
        free(img);
        free(log);
    }
}
#endif

/* generates (and compiles) every fused kernel of g's current variant */
static void gen_all(gcr_graph *g, const char *what, int hooked_archs, int expect_refusal)
{
    int refused = 0;
    const gcr_ir *ir = g->cur->ir;
    gcr_cg_kernel *cgs = calloc((size_t)ir->n_kernels + 1, sizeof *cgs);
    int own = 0;
    for (int k = 0; k < ir->n_kernels; k++) {
        if (ir->kernels[k].type != GCR_K_FUSED) continue;
        gcr_status s = gcr_codegen_kernel(ir, k, &cgs[k]);
        if (expect_refusal && s == GCR_ERR_COMPILE) {
            refused++;
            CHECK(cgs[k].why[0] != 0, "%s: a refusal without a reason", what);
            gcr_cg_kernel_free(&cgs[k]);
            memset(&cgs[k], 0, sizeof cgs[k]);
            continue;
        }
        if (!CHECK(s == GCR_OK, "%s: codegen of %s: %s (%s)", what, ir->kernels[k].name, gcr_status_name(s), cgs[k].why))
            continue;
        CHECK(cgs[k].src && cgs[k].n_params > 0, "%s: %s has no text or no parameters", what, ir->kernels[k].name);
        if (cgs[k].type == GCR_CG_OWN) {
            own++;
            n_own++;
            CHECK(strstr(cgs[k].src, cgs[k].fn) != NULL, "%s: the kernel is not named %s", what, cgs[k].fn);
            CHECK(cgs[k].block > 0 && (cgs[k].threads > 0 || cgs[k].rows > 0), "%s: %s has no launch shape", what,
                  cgs[k].fn);
        } else {
            n_hooked++;
            CHECK(strstr(cgs[k].src, "GCR_EXTRA_PARAMS") != NULL, "%s: hooks without GCR_EXTRA_PARAMS", what);
            if (strstr(cgs[k].src, "#define GCR_PROLOGUE(")) {
                /* every prologue comes with its 8-wide halves; the squeeze-excite scale, a
                 * per-(image, channel) operand contiguous in c, is fetched 8 channels at a time */
                char fn8[sizeof cgs[k].fn + 10];
                snprintf(fn8, sizeof fn8, "%s_fetch8s(", cgs[k].fn);
                const char *p8 = strstr(cgs[k].src, fn8);
                CHECK(strstr(cgs[k].src, "#define GCR_PROLOGUE_FETCH8_ASYNC(") && strstr(cgs[k].src, "#define GCR_PROLOGUE_APPLY8(") && p8,
                      "%s: %s has a prologue without its 8-wide halves", what, cgs[k].fn);
                /* the f16 scale's product runs on the packed halves (exact); an f32 one cannot */
                const bool packed = strstr(cgs[k].src, "#define GCR_PROLOGUE_PACKED 1") != NULL;
                CHECK(!packed || strstr(what, "f32") == NULL, "%s: %s: an f32 prologue on packed values", what, cgs[k].fn);
                if (!strcmp(what, "se f16 nhwc") || !strcmp(what, "se f32 nchw")) {
                    n_pro8_vec += p8 && strstr(p8, "gcr_cp8_raw<") != NULL;
                    n_packed += packed;
                    if (getenv("GCR_TEST_PRINT")) fputs(cgs[k].src, stderr);
                }
            }
            if (strstr(cgs[k].src, "#define GCR_EPILOGUE(")) {
                /* every epilogue comes with its 8-wide form, whose full-layout operands move as
                 * vectors: the output's store, and the residual's load */
                char fn8[sizeof cgs[k].fn + 8];
                snprintf(fn8, sizeof fn8, "%s_epi8(", cgs[k].fn);
                CHECK(strstr(cgs[k].src, "#define GCR_EPILOGUE8(") && strstr(cgs[k].src, fn8),
                      "%s: %s has an epilogue without GCR_EPILOGUE8", what, cgs[k].fn);
                CHECK(strstr(cgs[k].src, "gcr_st8<") != NULL, "%s: %s stores no output 8 at a time", what, cgs[k].fn);
                if (!strncmp(what, "residual ", 9))
                    CHECK(strstr(cgs[k].src, "gcr_ld8<") != NULL, "%s: the residual is not loaded 8 at a time", what);
            }
#ifdef GCR_HAVE_CUDA
            if (hooked_archs) {
                const gcr_node *A = &ir->nodes[ir->kernels[k].anchor];
                gcr_cuda_hooks h = {cgs[k].src, NULL, 0, NULL, NULL, 0, NULL, cgs[k].x_value >= 0 && ir->kernels[k].inner < 0};
                gcr_dtype adt = ir->values[A->in[0]].m.dtype;
                /* a conv->conv pair's hooks go into its own kernel, which no default program holds */
                char inst[160];
                bool pair = ir->kernels[k].inner >= 0;
                if (pair) {
                    const gcr_node *D = &ir->nodes[ir->kernels[k].inner];
                    const gcr_meta *wd = &ir->values[D->in[1]].m;
                    const gcr_conv2d_params *cp = &D->p.conv;
                    char name[48];
                    gcr_cuda_dwpw_name(name, sizeof name, 48, wd->shape[2], wd->shape[3], cp->stride[0], cp->stride[1],
                                       cp->dilation[0], cp->dilation[1], 1 << 20, adt);
                    CHECK(gcr_cuda_dense_inst(name, inst, sizeof inst) == 0, "%s: no instantiation of %s", what, name);
                }
                char *src = gcr_cuda_dense_source(gcr_op_table[A->op].kind == GCR_KIND_POOL ? "pool.cuh" : "conv.cuh", adt, 0,
                                                  &h, pair ? inst : NULL);
                char w[160];
                snprintf(w, sizeof w, "%s: %s", what, ir->kernels[k].name);
                nvrtc_ok(w, src, hooked_archs);
                free(src);
            }
#endif
        }
    }
    if (expect_refusal) CHECK(refused == 1, "%s: codegen refused %d kernels, want 1", what, refused);
    /* each chain as one kernel: in clusters of up to 16 and 8 blocks (sm_90) and of one block (sm_80 too) */
    for (int k = 0; k < ir->n_kernels; k++) {
        if (ir->kernels[k].chain < 2) continue;
        for (int c = 16; c >= 1; c = c == 16 ? 8 : c / 8) {
            gcr_cg_kernel cg;
            gcr_status s = gcr_codegen_chain(ir, k, c, &cg);
            if (CHECK(s == GCR_OK && cg.src && cg.type == GCR_CG_OWN && cg.rows > 0 && cg.block == GCR_CHAIN_THREADS &&
                          cg.cluster <= c && cg.rows % (cg.cluster ? cg.cluster : 1) == 0,
                      "%s: chain at %s, clusters of %d: %s (%s)", what, ir->kernels[k].name, c, gcr_status_name(s), cg.why)) {
                n_chain++;
#ifdef GCR_HAVE_CUDA
                char w[160];
                snprintf(w, sizeof w, "%s: chain at %s, clusters of %d", what, ir->kernels[k].name, c);
                nvrtc_ok(w, cg.src, c > 1 ? 2 : 3); /* a whole program, as the executor compiles it */
#endif
            }
            gcr_cg_kernel_free(&cg);
        }
    }
    char *prog = gcr_codegen_program(cgs, ir->n_kernels);
    CHECK(prog != NULL, "%s: no program text", what);
#ifdef GCR_HAVE_CUDA
    if (prog && own) nvrtc_ok(what, prog, 3);
#else
    (void)hooked_archs;
#endif
    free(prog);
    for (int k = 0; k < ir->n_kernels; k++) gcr_cg_kernel_free(&cgs[k]);
    free(cgs);
}

static void test_models(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    static const gcr_dtype dts[3] = {GCR_F32, GCR_F16, GCR_BF16};
    for (int c = 0; c < FM_N_CASES; c++)
        for (int d = 0; d < 3; d++)
            for (int f = 0; f < 2; f++) {
                const fm_case *m = &fm_cases[c];
                gcr_tensor *in[CU_MAX];
                /* values are the CPU executor's tests' business (test_fusion); here only the text */
                gcr_tensor *base[CU_MAX], *out[CU_MAX];
                for (int i = 0; i < m->n_in; i++) in[i] = cu_make(ctx, &m->in[i], dts[d], f ? GCR_NHWC : GCR_NCHW, &base[i]);
                gcr_graph *g = NULL;
                OK(ctx, gcr_capture_begin(ctx));
                m->fn(ctx, in, out);
                OK(ctx, gcr_capture_end(ctx, &g));
                char what[96];
                snprintf(what, sizeof what, "%s %s %s", m->name, gcr_dtype_name(dts[d]), f ? "nhwc" : "nchw");
                if (CHECK(g && g->cur, "%s: capture failed: %s", what, gcr_ctx_error(ctx))) {
                    if (m->kernels) CHECK(cu_kernels(g) == m->kernels, "%s: %d kernels, want %d", what, cu_kernels(g), m->kernels);
                    /* templates are large: their hooks compile for one arch in two of the four combinations */
                    bool pair = !strncmp(m->name, FM_CONVCONV, strlen(FM_CONVCONV));
                    gen_all(g, what, d != f ? 0 : d ? 2 : 1, /* bf16 (d == 2): own kernels only */
                            !strcmp(m->name, FM_REFUSED) || (pair && (dts[d] == GCR_F32 || !f)) ||
                                !strncmp(m->name, FM_PWDW, strlen(FM_PWDW)));
                }
                gcr_graph_destroy(g);
                for (int i = 0; i < m->n_in; i++) {
                    gcr_tensor_free(in[i]);
                    gcr_tensor_free(base[i]);
                }
                gcr_ctx_clear_error(ctx);
            }
    CHECK(n_own >= 10 && n_hooked >= 10, "generated %d own and %d hooked kernels", n_own, n_hooked);
    CHECK(n_pro8_vec >= 2, "%d squeeze-excite prologues fetch their scale 8 channels at a time, want 2", n_pro8_vec);
    CHECK(n_packed == 1, "%d squeeze-excite prologues multiply packed halves, want 1 (f16)", n_packed);
    CHECK(n_chain >= 12, "generated %d chain kernels (the squeeze-excite case, every dtype and layout, three cluster limits)",
          n_chain);
    gcr_ctx_destroy(ctx);
}

/* 100 dependent tiny ops with single_node fusion become one flat kernel of 100 expressions */
static void test_long_chain(void)
{
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    gcr_ctx *ctx = NULL;
    if (!CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "ctx")) return;
    int64_t sh[1] = {257};
    float *h = h_randn(257, -1, 1);
    gcr_tensor *x = gcr_tensor_keep(gcr_tensor_from_data(ctx, GCR_F32, 1, sh, GCR_NCHW, h));
    gcr_graph *g = NULL;
    OK(ctx, gcr_capture_begin(ctx));
    gcr_tensor *y = x;
    for (int i = 0; i < 100; i++) y = i % 2 ? gcr_mul_scalar(ctx, y, 0.999f) : gcr_add_scalar(ctx, y, 0.01f);
    OK(ctx, gcr_capture_end(ctx, &g));
    if (CHECK(g && g->cur, "capture: %s", gcr_ctx_error(ctx))) {
        CHECK(cu_kernels(g) == 1, "100 scalar ops: %d kernels", cu_kernels(g));
        gen_all(g, "chain100", 0, 0);
    }
    gcr_graph_destroy(g);
    gcr_tensor_free(x);
    free(h);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    h_seed(7);
    RUN(test_models);
    RUN(test_long_chain);
#ifdef GCR_HAVE_CUDA
    printf("%d kernels generated (%d own, %d hooked), %d NVRTC compiles\n", n_own + n_hooked, n_own, n_hooked, n_compiled);
#else
    h_skip_gpu("NVRTC compiles: built without CUDA");
#endif
    return h_finish();
}
