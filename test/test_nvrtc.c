/* test_nvrtc.c — needs no GPU (runs in CI): every embedded kernel source compiles standalone with
 * NVRTC for sm_80 and sm_90, every eager pointwise program (each op in each float dtype, the
 * scalar and missing-input variants, every cast pair) and every reduction program compiles, and
 * a broken program fails with GCR_ERR_COMPILE and the NVRTC log instead of aborting; every conv /
 * matmul kernel a hooked launch can pick compiles as a program of its own kernel with hooks; a
 * launcher's program text is hashed once for the memory cache, while the disk cache's key keeps
 * the architecture, NVRTC version, embedded headers and options, and under a cache_dir of any
 * length each program's file keeps its full name. */
#include "harness.h"

#if GCR_HAVE_CUDA
#include "cuda/cuda_ops.h"
#include "cuda/dense.h"
#include "cuda/program.h"
#include <sys/stat.h>
#include <unistd.h>

extern const struct gcr_embedded_src { const char *name; const char *text; } gcr_embedded_srcs[];

static const int archs[] = {80, 90};

static int compiles(const char *src, int arch, const char *what)
{
    void *img = NULL;
    size_t n = 0;
    int ptx = 0;
    char *log = NULL;
    gcr_status s = gcr_nvrtc_compile(src, NULL, 0, arch, &img, &n, &ptx, &log);
    int ok = CHECK(s == GCR_OK && img && n > 0, "%s for sm_%d: %s\n%s", what, arch, gcr_status_name(s), log ? log : "");
    free(img);
    free(log);
    return ok;
}

static void test_embedded_sources(void)
{
    int n = 0;
    for (int i = 0; gcr_embedded_srcs[i].name; i++, n++) {
        char src[256];
        snprintf(src, sizeof src, "#include \"%s\"\n", gcr_embedded_srcs[i].name);
        for (int a = 0; a < 2; a++) compiles(src, archs[a], gcr_embedded_srcs[i].name);
        CHECK(gcr_cuda_embedded(gcr_embedded_srcs[i].name) == gcr_embedded_srcs[i].text, "lookup by name");
    }
    CHECK(n >= 4, "at least common, pointwise, reduce and movement are embedded (%d)", n);
    /* the TF32 tiles exist only in f32 conv programs of contexts that ask for them (knobs.tf32) */
    for (int a = 0; a < 2; a++) compiles("#define GCR_TF32 1\n#define GCR_DTYPE_ONLY 0\n#include \"conv.cuh\"\n", archs[a], "conv.cuh f32 + TF32");
    CHECK(gcr_cuda_embedded("pointwise.cuh") && gcr_cuda_embedded("reduce.cuh") && gcr_cuda_embedded("movement.cuh"),
          "the eager kernel sources are embedded");
    CHECK(gcr_cuda_embedded("nope.cuh") == NULL, "unknown name");
}

static void test_pointwise_programs(void)
{
    static const gcr_dtype fl[] = {GCR_F32, GCR_F16, GCR_BF16};
    char src[2048], what[96];
    for (int op = 0; op < GCR_OP_COUNT; op++) {
        if (gcr_op_table[op].kind != GCR_KIND_POINTWISE || op == GCR_OP_CAST) continue;
        int arity = gcr_op_table[op].arity;
        for (int f = 0; f < 3; f++) {
            for (int scalar = 0; scalar < (arity == 2 ? 2 : 1); scalar++) {
                int ti[5] = {-1, -1, -1, -1, -1};
                for (int i = 0; i < arity; i++) ti[i] = fl[f];
                if (scalar) ti[1] = -1;
                if (op == GCR_OP_BATCH_NORM && f == 1) ti[3] = ti[4] = -1; /* gamma, beta missing */
                int n = gcr_cuda_pw_source(src, sizeof src, (gcr_op)op, fl[f], ti, scalar);
                CHECK(n > 0 && n < (int)sizeof src, "source fits");
                CHECK(strstr(src, gcr_op_table[op].expr) != NULL, "%s: the op table's formula is in the source",
                      gcr_op_table[op].name);
                snprintf(what, sizeof what, "%s %s%s", gcr_op_table[op].name, gcr_dtype_name(fl[f]), scalar ? " scalar" : "");
                compiles(src, archs[(op + f) % 2], what); /* alternate archs: both covered, half the time */
            }
        }
    }
    for (int a = 0; a < GCR_DTYPE_COUNT; a++)
        for (int b = 0; b < GCR_DTYPE_COUNT; b++) {
            int ti[5] = {a, -1, -1, -1, -1};
            gcr_cuda_pw_source(src, sizeof src, GCR_OP_CAST, (gcr_dtype)b, ti, 0);
            snprintf(what, sizeof what, "cast %s -> %s", gcr_dtype_name(a), gcr_dtype_name(b));
            compiles(src, archs[(a + b) % 2], what);
        }
}

static void test_reduce_programs(void)
{
    static const gcr_dtype fl[] = {GCR_F32, GCR_F16, GCR_BF16};
    char src[128], what[64];
    for (int op = 0; op < 3; op++)
        for (int f = 0; f < 3; f++) {
            snprintf(src, sizeof src, "#define GCR_RED_OP %d\n#define GCR_RED_T %d\n#include \"reduce.cuh\"\n", op, (int)fl[f]);
            snprintf(what, sizeof what, "reduce op %d %s", op, gcr_dtype_name(fl[f]));
            compiles(src, archs[(op + f) % 2], what);
        }
}

/* A hooked conv / matmul launch compiles a program holding only the kernel it picked
 * (gcr_cuda_dense_inst): every name the launchers can pick must make one that compiles, with a
 * prologue, an epilogue and an extra parameter, and names outside the scheme are refused. */
static void test_one_kernel_programs(void)
{
    static const char *const dense[] = {"tc128", "tc64", "tc32", "tc128n", "tc64n", "tc32n", "tc128e", "tc64e", "tc32e",
                                        "tc128k", "tc64k", "tc32k", "tc32s", "tc32ks", "tc64s", "tc64ks", "tc128s",
                                        "tc128ks", "tc128d", "tc64d", "tc128kd", "tc64kd", "tc128c", "tc64c", "tc32c",
                                        "tc32p", "tc64p", "tc128w", "tc128kw", "tc128ws", "tc128kws", "tc64w", "tc64kw",
                                        "tc64ws", "tc64kws", "mma64", "mma32", "mmat"};
    static const char *const fma[] = {"fma64", "fma32", "fmat"};
    static const char *const tc[] = {"tc128", "tc64", "tc32", "tc128k", "tc64k", "tc32k", "tc32s", "tc32ks", "tc64s",
                                     "tc64ks", "tc128s", "tc128ks", "tc128d", "tc64d", "tc128kd", "tc64kd", "tc128c",
                                     "tc64c", "tc32c", "tc32p", "tc64p", "tc128w", "tc128kw", "tc128ws", "tc128kws",
                                     "tc64w", "tc64kw", "tc64ws", "tc64kws"};
    static const char *const dt16[] = {"f16", "bf16"};
    static const char *const dtall[] = {"f32", "f16", "bf16"};
    char names[160][40];
    int n = 0;
    for (int i = 0; i < (int)(sizeof dense / sizeof dense[0]); i++)
        for (int d = 0; d < 2; d++) snprintf(names[n++], sizeof names[0], "gcr_dense_%s_%s", dense[i], dt16[d]);
    for (int i = 0; i < 3; i++) snprintf(names[n++], sizeof names[0], "gcr_dense_%s_f32", fma[i]);
    for (int i = 0; i < (int)(sizeof tc / sizeof tc[0]); i++) snprintf(names[n++], sizeof names[0], "gcr_dense_%s_tf32", tc[i]);
    for (int d = 0; d < 3; d++) {
        snprintf(names[n++], sizeof names[0], "gcr_gemv_%s", dtall[d]);
        snprintf(names[n++], sizeof names[0], "gcr_direct_%s", dtall[d]);
        snprintf(names[n++], sizeof names[0], "gcr_dw_%s", dtall[d]);
        snprintf(names[n++], sizeof names[0], "gcr_dwv_%s", dtall[d]);
        snprintf(names[n++], sizeof names[0], "gcr_dwc_%s", dtall[d]);
        snprintf(names[n++], sizeof names[0], "gcr_dws_%s", dtall[d]);
    }
    for (int bn = 16; bn <= 64; bn *= 2)
        for (int d = 0; d < 2; d++) {
            snprintf(names[n++], sizeof names[0], "gcr_patch%d_%s", bn, dt16[d]);
            snprintf(names[n++], sizeof names[0], "gcr_shortk%d_%s", bn, dt16[d]);
        }
    for (int d = 0; d < 2; d++) snprintf(names[n++], sizeof names[0], "gcr_tma128_%s", dt16[d]);
    const gcr_cuda_hooks h = {"#define GCR_EXTRA_PARAMS , float alpha\n"
                              "#define GCR_PROLOGUE(v, n, c) fmaxf((v), 0.0f)\n"
                              "#define GCR_EPILOGUE(acc, n, o, idx) gcr_dn_st(out, (idx), (acc) * alpha)\n",
                              NULL, 0, NULL, NULL, 0, NULL, 1};
    for (int i = 0; i < n; i++) {
        char inst[160];
        if (!CHECK(gcr_cuda_dense_inst(names[i], inst, sizeof inst) == 0, "%s: no instantiation", names[i])) continue;
        CHECK(strstr(inst, names[i]) != NULL, "%s: %s names it", names[i], inst);
        const char *sfx = strrchr(names[i], '_') + 1;
        gcr_dtype dt = !strcmp(sfx, "f16") ? GCR_F16 : !strcmp(sfx, "bf16") ? GCR_BF16 : GCR_F32;
        char *src = gcr_cuda_dense_source("conv.cuh", dt, !strcmp(sfx, "tf32"), &h, inst);
        if (!CHECK(src && strstr(src, "GCR_NO_DEFAULT_KERNELS"), "%s: program text", names[i])) {
            free(src);
            continue;
        }
        compiles(src, archs[i % 2], names[i]); /* alternate archs: both covered, half the time */
        free(src);
    }
    static const char *const bad[] = {"gcr_dense__f16", "gcr_gemv_f64", "gcr_pool_f32", "dense_tc64_f16", "gcr_direct_x_f16", "gcr_dw",
                                      "gcr_patch8_f16", "gcr_patch128_f16", "gcr_patch16x_f16", "gcr_shortk8_f16",
                                      "gcr_shortk128_f16", "gcr_shortk_f16", "gcr_tma128_f32", "gcr_tma64_f16",
                                      "gcr_tma128_tf32"};
    char buf[160];
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) CHECK(gcr_cuda_dense_inst(bad[i], buf, sizeof buf) == -1, "%s is refused", bad[i]);
    CHECK(gcr_cuda_dense_inst("gcr_dense_tc128n_bf16", buf, 20) == -1, "a buffer too short is refused");
}

static void test_compile_error(void)
{
    void *img = (void *)1;
    size_t n = 1;
    int ptx = 0;
    char *log = NULL;
    gcr_status s = gcr_nvrtc_compile("extern \"C\" __global__ void k(float *p) { p[0] = undefined_name; }\n", NULL, 0, 90,
                                     &img, &n, &ptx, &log);
    CHECK(s == GCR_ERR_COMPILE, "broken source: %s", gcr_status_name(s));
    CHECK(img == NULL && n == 0, "no image on failure");
    CHECK(log && strstr(log, "undefined_name"), "the log names the error: %s", log ? log : "(none)");
    free(log);
    CHECK(gcr_nvrtc_version() >= 11000, "NVRTC version %d", gcr_nvrtc_version());
}

/* The hot path's key: a gcr_cuda_src is hashed at its first use only (the GPU side, counted over
 * repeated launches, is test_cuda_hotpath); the disk key still names everything a module depends on. */
static void test_program_keys(void)
{
    const char *text = "#define GCR_DTYPE_ONLY 0\n#include \"pool.cuh\"\n";
    gcr_cuda_src src = GCR_CUDA_SRC(text);
    int hashed = -1;
    uint64_t k1 = gcr_cuda_src_key(&src, &hashed);
    CHECK(hashed == 1 && k1 != 0 && k1 == gcr_cuda_text_key(text), "first use hashes the text");
    uint64_t k2 = gcr_cuda_src_key(&src, &hashed);
    CHECK(hashed == 0 && k2 == k1, "a second use does not");
    atomic_store(&src.key, 12345); /* a kept key is used as it is: the text is not read again */
    CHECK(gcr_cuda_src_key(&src, &hashed) == 12345 && hashed == 0, "the kept key is used");
    CHECK(gcr_cuda_text_key("a") != gcr_cuda_text_key("b") && gcr_cuda_text_key("") != 0, "keys of texts");

    size_t kl = 0, kl80 = 0;
    char *k90 = gcr_cuda_disk_key(90, text, &kl), *k80 = gcr_cuda_disk_key(80, text, &kl80);
    char want[64];
    /* the target as built: sm_90a where NVRTC emits it (gcr_nvrtc_arch_specific) */
    snprintf(want, sizeof want, "|sm_90%s|nvrtc%d|hdr", gcr_nvrtc_arch_specific(90) ? "a" : "", gcr_nvrtc_version());
    if (CHECK(k90 && k80, "disk keys")) {
        CHECK(strstr(k90, want) && strstr(k90, "|--std=c++17 -prec-div=false|"), "disk key %.80s", k90);
        CHECK(kl == strlen(k90) && kl > strlen(text) && !strcmp(k90 + kl - strlen(text), text), "it ends with the text");
        CHECK(strcmp(k90, k80) != 0, "the arch is in the disk key");
    }
    free(k90);
    free(k80);
    CHECK(gcr_nvrtc_version() == gcr_nvrtc_version() && gcr_nvrtc_version() >= 11000, "NVRTC version asked once");
}

/* Two texts of one key (a 64-bit collision, forced here) keep two entries: a hit compares the
 * text, so neither text ever gets the other's module. Host data only: no module is loaded. */
static void test_program_collision(void)
{
    gcr_cuda_state st;
    memset(&st, 0, sizeof st);
    const char *ta = "extern \"C\" __global__ void a() {}\n", *tb = "extern \"C\" __global__ void b() {}\n";
    gcr_cuda_prog *a = gcr_cuda_prog_new(42, ta), *b = gcr_cuda_prog_new(42, tb);
    if (!CHECK(a && b, "entries")) return;
    CHECK(gcr_cuda_prog_find(&st, 42, ta) == NULL, "empty cache");
    CHECK(gcr_cuda_prog_add(&st, a) == GCR_OK && gcr_cuda_prog_add(&st, b) == GCR_OK, "both added");
    CHECK(gcr_cuda_prog_find(&st, 42, ta) == a && gcr_cuda_prog_find(&st, 42, tb) == b, "each text finds its own");
    CHECK(gcr_cuda_prog_find(&st, 42, "another text") == NULL, "a third text of the key finds none");
    CHECK(gcr_cuda_prog_find(&st, 43, ta) == NULL, "another key finds none");
    gcr_cuda_progs_free(&st); /* both freed (ASan: no leak) */
    CHECK(st.programs == NULL, "cache empty after free");
}

/* The disk cache under a cache_dir longer than any fixed path buffer (1,283 characters, created by
 * the store): each program's file keeps its full name, <hash of its key>.mod, so two programs
 * keep two files and each load finds its own image (1100-byte buffers cut the names inside the
 * directory, so every program went to one truncated path and a load found the other's key). Host
 * files only: a CPU ctx carries the knob, no module is loaded. */
static void test_disk_cache_long_dir(void)
{
    char top[64];
    snprintf(top, sizeof top, "/tmp/gcr_test_diskcache_%d", (int)getpid());
    char *deep = h_long_dir(top, 0); /* the cache makes every level */
    gcr_ctx_opts o = gcr_ctx_opts_default();
    o.device = GCR_DEVICE_CPU;
    o.knobs.cache_dir = deep;
    gcr_ctx *ctx = NULL;
    if (CHECK(gcr_ctx_create(&ctx, &o) == GCR_OK, "cpu ctx: %s", gcr_ctx_error(ctx))) {
        const char *keys[2] = {"fmt|sm_90|program a", "fmt|sm_90|program b"};
        const char imgs[2][16] = {"image of a", "image of b, too"};
        for (int i = 0; i < 2; i++) gcr_cuda_disk_store(ctx, keys[i], strlen(keys[i]), imgs[i], sizeof imgs[i]);
        for (int i = 0; i < 2; i++) {
            char name[32];
            snprintf(name, sizeof name, "%016llx.mod", (unsigned long long)gcr_cuda_fnv1a(keys[i], strlen(keys[i])));
            char *file = malloc(strlen(deep) + strlen(name) + 2);
            sprintf(file, "%s/%s", deep, name);
            struct stat sb;
            CHECK(stat(file, &sb) == 0 && S_ISREG(sb.st_mode), "program %d stored as %s in the %d-character directory", i,
                  name, (int)strlen(deep));
            free(file);
            size_t size = 0;
            char *img = gcr_cuda_disk_load(ctx, keys[i], strlen(keys[i]), &size);
            CHECK(img && size == sizeof imgs[i] && !memcmp(img, imgs[i], size), "program %d loads its own image (%s)", i,
                  img ? "another" : "none");
            free(img);
        }
        CHECK(gcr_ctx_status(ctx) == GCR_OK, "the cache raises no error: %s", gcr_ctx_error(ctx));
        gcr_ctx_destroy(ctx);
    }
    h_rmtree(top);
    free(deep);
}

int main(void)
{
    RUN(test_program_keys);
    RUN(test_disk_cache_long_dir);
    RUN(test_program_collision);
    RUN(test_embedded_sources);
    RUN(test_pointwise_programs);
    RUN(test_reduce_programs);
    RUN(test_compile_error);
    RUN(test_one_kernel_programs);
    return h_finish();
}
#else
int main(void)
{
    h_case = "nvrtc";
    h_skip_gpu("built without CUDA");
    return h_finish();
}
#endif
