/* exec.c — the CUDA backend's executor (lib/exec.h): a launch list as generated kernels in one CUDA
 * Graph.
 *
 * build: codegen writes every fused kernel (codegen.h); the pointwise and reduction kernels of the
 * list go into ONE NVRTC program (one compile for all of them), anchored kernels (conv/linear/
 * matmul/pool with hooks) into the template's program with their hooks; all are compiled here,
 * through the runtime's module cache (memory and disk), so a group that does not compile is
 * reported (GCR_ERR_COMPILE, *failed_kernel) and the graph runs it unfused.
 * run: the first run launches plainly (loads every eager module outside any capture); with a
 * profile sink in the settings every run does, timing each kernel between events. With the graphs
 * setting the launch sequence is then captured once into a CUDA Graph and replayed with
 * cudaGraphLaunch; when data pointers change (an input rebound) the new addresses are patched into
 * the kernel nodes' parameters in place (graph_patch.c: the slots found by each kernel's parameter
 * layout); where that is impossible the sequence is captured again and instantiated afresh, with no
 * re-trace and no recompile, and counted (gcr_cuda_exec_stats). Every conv and matmul, fused or
 * eager, runs with the settings' TF32 mode (the graph's, from its capture), never the ctx's knob of
 * the moment.
 * A job's host staging (lib/exec.h) is queued around the launch list, so its copies are nodes of
 * the same CUDA Graph (a change of staging captures again), and a run that stages outputs syncs
 * before it returns. With packed constants (knobs.l2_persist) the captured kernel nodes get an L2
 * access-policy window over them.
 * The hot path is one pointer comparison and cudaGraphLaunch: no device query, no allocation. */
#include "codegen.h"
#include "dense.h"
#include "../chain.h"
#include "../exec.h"
#include "graph_patch.h"
#include <stdio.h>
#include <stdlib.h>

typedef enum { L_EAGER, L_OWN, L_HOOKED } ltype;

/* one launch of the list */
typedef struct launch {
    ltype type;
    gcr_cg_kernel cg;
    gcr_cuda_fn *fn;        /* OWN */
    unsigned grid, block;   /* OWN */
    void *pv[GCR_CUDA_KERNEL_PARAMS];   /* parameter values (data pointers), refreshed from j->ptr */
    void *args[GCR_CUDA_KERNEL_PARAMS]; /* &pv[i] (OWN), the hooks' extras (HOOKED) */
    gcr_tensor *out;        /* HOOKED: shell with the anchor result's meta, data of cg.out_value */
    gcr_cuda_pick pick;     /* HOOKED: the kernel its launcher picked last */
    /* the first kernel of a chain (gcr_kernel.chain): the chain's one kernel (codegen_chain.c), in a
     * program of its own so that one failing to compile only sends its steps back to their own
     * kernels; chain.src NULL: none, the steps launch one by one */
    gcr_cg_kernel chain;
    gcr_cuda_fn *chain_fn;  /* compiled */
    unsigned chain_grid;
    void *chain_pv[GCR_CUDA_KERNEL_PARAMS];
    void *chain_args[GCR_CUDA_KERNEL_PARAMS];
    bool skip;              /* a later step of a chain that runs as one launch: launches nothing */
} launch;

typedef struct cuda_state {
    int n;
    launch *l;
    char *program;          /* the OWN kernels' text */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    void **cap_ptr;         /* j->ptr the exec's nodes hold (captured or patched), [n_values] */
    int runs;
    CUfunction *own;        /* the OWN kernels' functions (all their parameters are data pointers) */
    int n_own;
    gcr_cuda_patch *patch;  /* where the exec's nodes hold rebindable addresses; NULL: re-capture */
    unsigned stage_gen;     /* the job's host staging the exec was captured with */
    gcr_cuda_graph_stats gs;
} cuda_state;

/* A hooked anchor kind's launch (kinds.def names one per kind, column cuda_hooked): the template its
 * hooks go into (named in dumps), its launcher, and whether its eager launches take the graph's
 * numeric mode (TF32) rather than go through the backend's run(). */
typedef struct cuda_hooked {
    const char *file;
    gcr_status (*launch)(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h);
    bool tf32;
} cuda_hooked;

static const cuda_hooked conv_hooked = {"conv.cuh", gcr_cuda_conv2d_hooked, true};
static const cuda_hooked matmul_hooked = {"conv.cuh", gcr_cuda_matmul_hooked, true};
static const cuda_hooked pool_hooked = {"pool.cuh", gcr_cuda_pool_hooked, false};

static const cuda_hooked *const hooked_kinds[GCR_KIND_COUNT] = {
#define K(E, name, infer, cpu, cuda, cuda_limits, cuda_hooked, ...) [GCR_KIND_##E] = cuda_hooked,
#include "../kinds.def"
#undef K
};

/* NULL for an op of a kind without hooks */
static const cuda_hooked *hooked_of(gcr_op op) { return hooked_kinds[gcr_op_table[op].kind]; }

static const char *anchor_file(gcr_op op) { return hooked_of(op) ? hooked_of(op)->file : "?"; }

/* GCR_DUMP=source: the list's program text, its chains' and its hooked templates', in
 * dump_dir/cuda_<key>.cu; written as replay's dumps are (files.c), so a directory of any length
 * keeps the file's name and a file that cannot be written is reported at log level 1 */
static void dump_source(gcr_exec_job *j, const cuda_state *st)
{
    gcr_ctx *ctx = j->ctx;
    const char *dir = j->set.dump_dir;
    if (!dir) return;
    if (!gcr_dir_make(ctx, dir, "dump")) return;
    char name[64], *tmp;
    snprintf(name, sizeof name, "cuda_%016llx.cu", (unsigned long long)j->key);
    char *path = gcr_path_join(dir, name);
    if (!path) {
        gcr_progress(ctx, "dump: out of host memory writing %s in %s", name, dir);
        return;
    }
    FILE *f = gcr_file_begin(ctx, path, &tmp, "dump");
    if (!f) {
        free(path);
        return;
    }
    fputs(st->program ? st->program : "", f);
    for (int i = 0; i < st->n; i++)
        if (st->l[i].chain.src) fprintf(f, "\n/* ---- %s: a chain's program ---- */\n%s", st->l[i].chain.fn, st->l[i].chain.src);
    for (int i = 0; i < st->n; i++)
        if (st->l[i].type == L_HOOKED)
            fprintf(f, "\n/* ---- %s: program text of the %s template with these hooks ---- */\n%s",
                    st->l[i].cg.fn, anchor_file(j->ir->nodes[j->ir->kernels[i].anchor].op), st->l[i].cg.src);
    if (gcr_file_commit(ctx, f, tmp, path, "dump")) gcr_info(ctx, "dump: wrote %s", path);
    free(path);
}

/* A conv, matmul or pool call through its hooked launcher (h: the hooks and the graph's settings). */
static gcr_status anchor_launch(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out, const gcr_cuda_hooks *h)
{
    const cuda_hooked *k = hooked_of(c->op);
    GCR_CHECK(ctx, k, GCR_ERR_INTERNAL, "cuda: %s is no hooked anchor", gcr_op_table[c->op].name);
    return k->launch(ctx, c, out, h);
}

/* An eager node of the launch list: convs and matmuls with the graph's numeric mode, the rest
 * through the backend's run(). */
static gcr_status eager_run(gcr_exec_job *j, const gcr_call *c, gcr_tensor *out)
{
    const cuda_hooked *k = hooked_of(c->op);
    if (!k || !k->tf32) return j->ctx->be->run(j->ctx, c, out);
    gcr_cuda_hooks h = {.tf32 = j->set.tf32};
    return anchor_launch(j->ctx, c, out, &h);
}

/* Launches anchored kernel k (its conv / matmul / pool template with the generated hooks) on the
 * job's current pointers; with src_out, only picks its kernel and returns the program text the
 * launch compiles (so a build prefetches exactly those programs). */
static gcr_status hooked_launch(gcr_exec_job *j, int k, launch *L, char **src_out)
{
    gcr_ctx *ctx = j->ctx;
    const gcr_ir *ir = j->ir;
    const gcr_node *A = &ir->nodes[ir->kernels[k].anchor];
    /* an empty result has nothing to compute (and the driver refuses an empty grid): skipped, as
     * eager dispatch skips it */
    if (!src_out && gcr_meta_numel(&L->out->m) == 0) return GCR_OK;
    gcr_call c, d; /* input 0 from the prologue's source when the kernel has one; d: a pair's first conv */
    GCR_TRY(gcr_exec_call(j, A, L->cg.x_value, &c));
    const int inner = ir->kernels[k].inner;
    if (inner >= 0) GCR_TRY(gcr_exec_call(j, &ir->nodes[inner], -1, &d));
    L->out->st->data = j->ptr[L->cg.out_value];
    for (int i = 0; i < L->cg.n_params; i++) L->pv[i] = j->ptr[L->cg.params[i]];
    gcr_cuda_hooks h = {.defs = L->cg.src, .extra = L->args, .n_extra = L->cg.n_params, .src_out = src_out,
                        .pick = &L->pick, .tf32 = j->set.tf32, .prologue = inner < 0 && L->cg.x_value >= 0,
                        .inner = inner >= 0 ? &d : NULL};
    return anchor_launch(ctx, &c, L->out, &h);
}

static gcr_status compile_hooked(gcr_exec_job *j, int k, launch *L)
{
    char *src = NULL;
    GCR_TRY(hooked_launch(j, k, L, &src));
    /* no names: the launcher fetches its kernel from the cached module at the first launch */
    gcr_status s = gcr_cuda_program(j->ctx, src, NULL, 0, NULL);
    free(src);
    return s;
}

/* Compiles the list's generated program and every hooked template in parallel, so a cold
 * build costs about the slowest program rather than the sum; the compiles below then hit. Best
 * effort: a launch whose kernel cannot be picked is skipped here (its error is left for
 * compile_hooked, which names the kernel so the build can split it). */
static gcr_status prefetch(gcr_exec_job *j, const cuda_state *st, bool own)
{
    gcr_ctx *ctx = j->ctx;
    char **srcs = calloc(2 * (size_t)st->n + 1, sizeof *srcs);
    GCR_CHECK(ctx, srcs, GCR_ERR_OOM, "replay: out of host memory");
    int n = 0; /* srcs [0, lent): texts the state owns; then the hooked programs, freed here */
    if (own) srcs[n++] = st->program;
    for (int k = 0; k < st->n; k++)
        if (st->l[k].chain.src) srcs[n++] = st->l[k].chain.src;
    const int lent = n;
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        if (L->type != L_HOOKED || L->skip) continue;
        char *src = NULL;
        gcr_status before = ctx->status;
        if (hooked_launch(j, k, L, &src) != GCR_OK && before == GCR_OK) gcr_ctx_clear_error(ctx);
        if (src) srcs[n++] = src;
    }
    gcr_status s = gcr_cuda_programs_prefetch(ctx, (const char *const *)srcs, n);
    for (int i = lent; i < n; i++) free(srcs[i]);
    free(srcs);
    return s;
}

/* A chain that will not run as one kernel: its steps launch one by one, as built. */
static void unchain(gcr_exec_job *j, cuda_state *st, int k, const char *why)
{
    launch *L = &st->l[k];
    gcr_info(j->ctx, "replay: the chain at %s runs its %d kernels one by one: %s", j->ir->kernels[k].name,
             j->ir->kernels[k].chain, why);
    gcr_cg_kernel_free(&L->chain);
    memset(&L->chain, 0, sizeof L->chain);
    L->chain_fn = NULL;
    for (int i = 1; i < j->ir->kernels[k].chain; i++) st->l[k + i].skip = false;
}

/* The largest cluster the chain at kernel k may ask for: from sm_90 the portable 8 blocks, or 16
 * where its images' clusters of 16 fit the SMs at once and the driver can tell whether the kernel
 * fits them (chains_compile checks, and falls back to 8); 1 below. An image is one cluster, so at
 * batch 1 a chain has only its cluster's SMs (MobileNet-v3's squeeze-excite chains read up to 0.9
 * MB of weights each). On an H200 (2026-11-27, bench/ab_mobilenet.sh, 4 rounds a side), MobileNet-v3
 * f16 b1 0.372 -> 0.352 ms, b8 0.590 -> 0.563, f32 with TF32 b1 0.468 -> 0.437; b32 and b128 keep 8
 * (clusters of 16 for all 32 images had taken b32 0.823 -> 0.847). */
static int chain_cluster_max(gcr_exec_job *j, int k)
{
    gcr_ctx *ctx = j->ctx;
    if (gcr_cuda_arch(ctx) < 90) return 1;
    const gcr_cuda_drv *d = gcr_cuda_driver(ctx);
    gcr_chain_step s0;
    if (!d || !d->occupancy_max_active_clusters || !gcr_chain_step_of(j->ir, k, -1, &s0)) return 8;
    return s0.n * 16 <= gcr_cuda_sm_count(ctx) ? 16 : 8;
}

/* Every chain of the list as its one kernel's text, in clusters of up to chain_cluster_max blocks. */
static gcr_status chains_generate(gcr_exec_job *j, cuda_state *st)
{
    const gcr_ir *ir = j->ir;
    for (int k = 0; k < st->n; k++) {
        const int len = ir->kernels[k].chain;
        if (len < 2) continue;
        for (int i = 1; i < len; i++) st->l[k + i].skip = true;
        gcr_status s = gcr_codegen_chain(ir, k, chain_cluster_max(j, k), &st->l[k].chain);
        if (s == GCR_ERR_COMPILE) unchain(j, st, k, st->l[k].chain.why);
        else GCR_CHECK(j->ctx, s == GCR_OK, s, "codegen: out of host memory writing the chain at %s", ir->kernels[k].name);
        k += len - 1;
    }
    return GCR_OK;
}

/* Whether chain kernel f, in clusters of r blocks, may be launched: past the portable 8 the
 * function must allow a non-portable size and the device must hold at least one such cluster. */
static bool chain_fits(gcr_ctx *ctx, gcr_cuda_fn *f, int r, unsigned block)
{
    if (r <= 8) return true;
    const gcr_cuda_drv *d = gcr_cuda_driver(ctx);
    CUfunction fn = gcr_kernel_function(f);
    if (!d || !d->occupancy_max_active_clusters ||
        d->func_set_attribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) != CUDA_SUCCESS)
        return false;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = (unsigned)r;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = block;
    cfg.blockDimY = cfg.blockDimZ = 1;
    int n = 0;
    return d->occupancy_max_active_clusters(&n, fn, &cfg) == CUDA_SUCCESS && n > 0;
}

/* Compiles every chain's program (the prefetch has most in the cache by now); one that fails to
 * compile or load is reported and runs its steps one by one (their hooked kernels compile next).
 * One whose clusters the device cannot hold is generated again in clusters of 8. */
static gcr_status chains_compile(gcr_exec_job *j, cuda_state *st)
{
    gcr_ctx *ctx = j->ctx;
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        if (!L->chain.src) continue;
        const char *name = L->chain.fn;
        gcr_status before = ctx->status, s = gcr_cuda_program(ctx, L->chain.src, &name, 1, &L->chain_fn);
        if (s == GCR_OK && !chain_fits(ctx, L->chain_fn, L->chain.cluster, L->chain.block)) {
            gcr_info(ctx, "replay: the chain at %s does not fit clusters of %d blocks here; of 8", j->ir->kernels[k].name,
                     L->chain.cluster);
            gcr_cg_kernel_free(&L->chain);
            L->chain_fn = NULL;
            s = gcr_codegen_chain(j->ir, k, 8, &L->chain);
            if (s == GCR_OK) {
                name = L->chain.fn;
                s = gcr_cuda_program(ctx, L->chain.src, &name, 1, &L->chain_fn);
            } else if (s == GCR_ERR_COMPILE) {
                gcr_set_error(ctx, s, "%s", L->chain.why);
            }
        }
        if (s == GCR_ERR_COMPILE) {
            char why[512];
            snprintf(why, sizeof why, "%.500s", ctx->err);
            if (before == GCR_OK) gcr_ctx_clear_error(ctx);
            unchain(j, st, k, why);
            continue;
        }
        GCR_TRY(s);
    }
    return GCR_OK;
}

static gcr_status cuda_build(gcr_exec_job *j, int *failed_kernel)
{
    gcr_ctx *ctx = j->ctx;
    const gcr_ir *ir = j->ir;
    cuda_state *st = calloc(1, sizeof *st);
    GCR_CHECK(ctx, st, GCR_ERR_OOM, "replay: out of host memory");
    j->state = st;
    st->n = ir->n_kernels;
    st->l = calloc((size_t)(st->n ? st->n : 1), sizeof *st->l);
    st->cap_ptr = calloc((size_t)ir->n_values + 1, sizeof *st->cap_ptr);
    GCR_CHECK(ctx, st->l && st->cap_ptr, GCR_ERR_OOM, "replay: out of host memory");
    /* codegen */
    int n_own = 0;
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        const gcr_kernel *K = &ir->kernels[k];
        if (K->type == GCR_K_EAGER) {
            L->type = L_EAGER;
            continue;
        }
        gcr_status s = gcr_codegen_kernel(ir, k, &L->cg);
        if (s == GCR_ERR_COMPILE) {
            *failed_kernel = k;
            return gcr_set_error(ctx, s, "codegen: %s", L->cg.why);
        }
        GCR_CHECK(ctx, s == GCR_OK, s, "codegen: out of host memory writing %s", K->name);
        L->type = L->cg.type == GCR_CG_OWN ? L_OWN : L_HOOKED;
        n_own += L->type == L_OWN;
    }
    GCR_TRY(chains_generate(j, st));
    /* one program for every generated kernel of the list */
    gcr_cg_kernel *cgs = calloc((size_t)st->n + 1, sizeof *cgs);
    const char **names = calloc((size_t)n_own + 1, sizeof *names);
    gcr_cuda_fn **fns = calloc((size_t)n_own + 1, sizeof *fns);
    if (!cgs || !names || !fns) {
        free(cgs); free(names); free(fns);
        return gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    }
    int named = 0;
    for (int k = 0; k < st->n; k++) {
        cgs[k] = st->l[k].cg;
        if (st->l[k].type == L_OWN) names[named++] = st->l[k].cg.fn;
    }
    st->program = gcr_codegen_program(cgs, st->n);
    gcr_status s = st->program ? GCR_OK : gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
    dump_source(j, st);
    /* anchored kernels' output shells (the launchers read their layout), before the prefetch picks
     * their kernels */
    for (int k = 0; k < st->n && s == GCR_OK; k++) {
        launch *L = &st->l[k];
        if (L->type != L_HOOKED) continue;
        const gcr_value *acc = &ir->values[ir->kernels[k].acc_value];
        L->out = gcr_tensor_shell(ctx, &acc->m);
        if (!L->out) s = gcr_set_error(ctx, GCR_ERR_OOM, "replay: out of host memory");
        else s = gcr_tensor_bind(L->out, j->ptr[L->cg.out_value], acc->bytes);
        for (int i = 0; i < L->cg.n_params; i++) L->args[i] = &L->pv[i];
    }
    if (s == GCR_OK) s = prefetch(j, st, n_own > 0);
    if (s == GCR_OK && n_own) {
        gcr_status before = ctx->status;
        s = gcr_cuda_program(ctx, st->program, names, n_own, fns);
        if (s == GCR_ERR_COMPILE) {
            /* find the culprit: each generated kernel in a program of its own. Only errors the
             * search raises are cleared, and only when the ctx held none before the build's
             * compile: an earlier error stays on the ctx until the caller clears it (sticky). */
            gcr_status saved = s;
            char msg[2048];
            snprintf(msg, sizeof msg, "%s", ctx->err);
            for (int k = 0; k < st->n && *failed_kernel < 0; k++) {
                if (st->l[k].type != L_OWN) continue;
                char *one = gcr_codegen_program(&cgs[k], 1);
                if (!one) break;
                if (before == GCR_OK) gcr_ctx_clear_error(ctx);
                if (gcr_cuda_program(ctx, one, NULL, 0, NULL) == GCR_ERR_COMPILE) *failed_kernel = k;
                free(one);
            }
            if (before == GCR_OK) {
                gcr_ctx_clear_error(ctx);
                gcr_set_error(ctx, saved, "%s", msg);
            }
        }
        for (int k = 0, i = 0; s == GCR_OK && k < st->n; k++)
            if (st->l[k].type == L_OWN) st->l[k].fn = fns[i++];
    }
    free(cgs);
    free(names);
    free(fns);
    GCR_TRY(s);
    GCR_TRY(chains_compile(j, st));
    /* anchored kernels: their template with hooks, compiled now so a failure splits the group */
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        if (L->type != L_HOOKED || L->skip) continue;
        s = compile_hooked(j, k, L);
        if (s == GCR_ERR_COMPILE) *failed_kernel = k;
        GCR_TRY(s);
    }
    /* launch shapes */
    int sms = gcr_cuda_sm_count(ctx);
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        if (L->type != L_OWN) continue;
        L->block = L->cg.block;
        if (L->cg.rows > 0) {
            int64_t cap = (int64_t)sms * 32;
            L->grid = (unsigned)(L->cg.rows < cap ? L->cg.rows : cap);
        } else {
            L->grid = gcr_cuda_grid(ctx, L->cg.threads, L->block);
        }
        for (int i = 0; i < L->cg.n_params; i++) L->args[i] = &L->pv[i];
    }
    st->own = malloc(sizeof *st->own * (size_t)(2 * st->n + 1));
    GCR_CHECK(ctx, st->own, GCR_ERR_OOM, "replay: out of host memory");
    for (int k = 0; k < st->n; k++) {
        launch *L = &st->l[k];
        if (L->type == L_OWN) st->own[st->n_own++] = gcr_kernel_function(L->fn);
        if (!L->chain_fn) continue;
        st->own[st->n_own++] = gcr_kernel_function(L->chain_fn);
        int64_t cap = (int64_t)sms * 32; /* a multiple of the cluster (a power of two up to 16) */
        L->chain_grid = (unsigned)(L->chain.rows < cap ? L->chain.rows : cap);
        for (int i = 0; i < L->chain.n_params; i++) L->chain_args[i] = &L->chain_pv[i];
    }
    return GCR_OK;
}

static gcr_status launch_one(gcr_exec_job *j, int k)
{
    cuda_state *st = j->state;
    launch *L = &st->l[k];
    if (L->skip) return GCR_OK;
    if (L->chain_fn) {
        for (int i = 0; i < L->chain.n_params; i++) L->chain_pv[i] = j->ptr[L->chain.params[i]];
        return gcr_cuda_launch(j->ctx, L->chain_fn, L->chain_grid, 1, 1, L->chain.block, 1, 1, 0, L->chain_args);
    }
    switch (L->type) {
    case L_EAGER: return gcr_exec_run_node(j, j->ir->kernels[k].nodes[0], eager_run);
    case L_HOOKED: return hooked_launch(j, k, L, NULL);
    case L_OWN:
        for (int i = 0; i < L->cg.n_params; i++) L->pv[i] = j->ptr[L->cg.params[i]];
        return gcr_cuda_launch(j->ctx, L->fn, L->grid, 1, 1, L->block, 1, 1, 0, L->args);
    }
    return GCR_ERR_INTERNAL;
}

/* the launch list between the host staging's copies (queued: inside a capture they are nodes of
 * the CUDA Graph) */
static gcr_status launch_all(gcr_exec_job *j)
{
    cuda_state *st = j->state;
    GCR_TRY(gcr_exec_stage_copies(j, true));
    for (int k = 0; k < st->n; k++) GCR_TRY(launch_one(j, k));
    return gcr_exec_stage_copies(j, false);
}

/* a run that staged outputs returns with them in their host buffers */
static gcr_status staged_sync(gcr_exec_job *j)
{
    if (!j->n_stage_out) return GCR_OK;
    return gcr_cuda_error(j->ctx, cudaStreamSynchronize(gcr_cuda_stream(j->ctx)), "replay: staged outputs: cudaStreamSynchronize");
}

/* Plain launches, each between two events; the timings become profile events. */
static gcr_status run_profiled(gcr_exec_job *j)
{
    gcr_ctx *ctx = j->ctx;
    cuda_state *st = j->state;
    cudaStream_t s = gcr_cuda_stream(ctx);
    cudaEvent_t *ev = malloc(sizeof *ev * (size_t)(st->n + 1));
    GCR_CHECK(ctx, ev, GCR_ERR_OOM, "profile: out of host memory");
    int made = 0;
    gcr_status rs = GCR_OK;
    for (; made <= st->n; made++)
        if (cudaEventCreate(&ev[made]) != cudaSuccess) break;
    if (made <= st->n) rs = gcr_cuda_error(ctx, cudaGetLastError(), "profile: cudaEventCreate");
    double t0 = gcr_exec_now_us();
    const char **fn = calloc((size_t)st->n + 1, sizeof *fn);
    if (!fn) rs = gcr_set_error(ctx, GCR_ERR_OOM, "profile: out of host memory");
    if (rs == GCR_OK) rs = gcr_exec_stage_copies(j, true);
    if (rs == GCR_OK) {
        cudaEventRecord(ev[0], s);
        for (int k = 0; k < st->n && rs == GCR_OK; k++) {
            gcr_cuda_st(ctx)->last_fn = NULL;
            rs = launch_one(j, k);
            fn[k] = gcr_cuda_st(ctx)->last_fn; /* an eager node of several launches: its last */
            cudaEventRecord(ev[k + 1], s);
        }
    }
    if (rs == GCR_OK) rs = gcr_exec_stage_copies(j, false);
    if (rs == GCR_OK) rs = gcr_cuda_error(ctx, cudaStreamSynchronize(s), "profile: cudaStreamSynchronize");
    double ts = t0;
    for (int k = 0; k < st->n && rs == GCR_OK; k++) {
        float ms = 0;
        cudaEventElapsedTime(&ms, ev[k], ev[k + 1]);
        /* "k3_conv2d+relu gcr_dense_tc64_f16": the fused kernel and the function that ran it */
        char name[sizeof j->ir->kernels[k].name + 64]; /* gcr_prof_add keeps what fits its event */
        snprintf(name, sizeof name, "%s%s%s", j->ir->kernels[k].name, fn[k] ? " " : "", fn[k] ? fn[k] : "");
        j->set.prof(j->set.prof_user, name, ts, 1e3 * ms);
        ts += 1e3 * ms;
    }
    for (int i = 0; i < made; i++) cudaEventDestroy(ev[i]);
    free(ev);
    free(fn);
    return rs;
}

/* knobs.l2_persist: every kernel node of graph gets an access-policy window over the job's packed
 * constants (persisting hits, streaming misses), and the device's persisting-L2 limit is raised to
 * cover them. Constants larger than the device's persisting maximum get no window: a partial one
 * (hit ratio below 1) took L2 from the activations and made ResNet-50 f16 b32 19% slower on an
 * H100 (2026-11-26), while MobileNet-v3's 11 MB, which fit, replayed 2-3% faster at b32. A device
 * without L2 persistence is left as it is. */
static gcr_status persist_window(gcr_exec_job *j, cudaGraph_t graph)
{
    cuda_state *st = j->state;
    st->gs.windowed = 0;
    if (!j->persist || !j->persist_bytes) return GCR_OK;
    gcr_ctx *ctx = j->ctx;
    int dev = gcr_cuda_st(ctx)->device, max_win = 0, max_persist = 0;
    if (cudaDeviceGetAttribute(&max_win, cudaDevAttrMaxAccessPolicyWindowSize, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev) != cudaSuccess || max_win <= 0 ||
        max_persist <= 0) {
        cudaGetLastError();
        return GCR_OK;
    }
    size_t win = j->persist_bytes, limit = 0;
    if (win > (size_t)max_win || win > (size_t)max_persist) return GCR_OK;
    GCR_TRY(gcr_cuda_error(ctx, cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize), "l2 persist: cudaDeviceGetLimit"));
    if (limit < win)
        GCR_TRY(gcr_cuda_error(ctx, cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, win), "l2 persist: cudaDeviceSetLimit"));
    cudaKernelNodeAttrValue a;
    memset(&a, 0, sizeof a);
    a.accessPolicyWindow.base_ptr = (void *)j->persist;
    a.accessPolicyWindow.num_bytes = win;
    a.accessPolicyWindow.hitRatio = 1.0f;
    a.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    a.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    size_t n = 0;
    GCR_TRY(gcr_cuda_error(ctx, cudaGraphGetNodes(graph, NULL, &n), "l2 persist: cudaGraphGetNodes"));
    cudaGraphNode_t *nodes = malloc(sizeof *nodes * (n ? n : 1));
    GCR_CHECK(ctx, nodes, GCR_ERR_OOM, "l2 persist: out of host memory");
    cudaError_t e = cudaGraphGetNodes(graph, nodes, &n);
    for (size_t i = 0; e == cudaSuccess && i < n; i++) {
        enum cudaGraphNodeType t;
        e = cudaGraphNodeGetType(nodes[i], &t);
        if (e == cudaSuccess && t == cudaGraphNodeTypeKernel) {
            e = cudaGraphKernelNodeSetAttribute(nodes[i], cudaKernelNodeAttributeAccessPolicyWindow, &a);
            st->gs.windowed += e == cudaSuccess;
        }
    }
    free(nodes);
    return gcr_cuda_error(ctx, e, "l2 persist: the kernel nodes' access-policy window");
}

/* Captures the launch sequence with the current pointers, instantiates it as the exec and records
 * where its nodes hold rebindable addresses. */
static gcr_status capture(gcr_exec_job *j)
{
    gcr_ctx *ctx = j->ctx;
    cuda_state *st = j->state;
    cudaStream_t s = gcr_cuda_stream(ctx);
    /* relaxed: the eager launchers may touch the allocator or module cache (never a sync) */
    GCR_TRY(gcr_cuda_error(ctx, cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), "replay: cudaStreamBeginCapture"));
    gcr_status ls = launch_all(j);
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(s, &graph);
    if (ls != GCR_OK) {
        if (graph) cudaGraphDestroy(graph);
        return ls;
    }
    GCR_TRY(gcr_cuda_error(ctx, e, "replay: cudaStreamEndCapture"));
    gcr_status ps = persist_window(j, graph);
    if (ps != GCR_OK) {
        cudaGraphDestroy(graph);
        return ps;
    }
    /* a fresh exec: the patch records nodes of the graph it was instantiated from */
    if (st->exec) cudaGraphExecDestroy(st->exec);
    gcr_cuda_patch_free(st->patch);
    st->patch = NULL;
    e = cudaGraphInstantiate(&st->exec, graph, 0);
    if (e != cudaSuccess) {
        st->exec = NULL;
        cudaGraphDestroy(graph);
        return gcr_cuda_error(ctx, e, "replay: cudaGraphInstantiate");
    }
    if (st->graph) cudaGraphDestroy(st->graph);
    st->graph = graph;
    memcpy(st->cap_ptr, j->ptr, sizeof *j->ptr * (size_t)j->ir->n_values);
    st->stage_gen = j->stage_gen;
    st->gs.captures++;
    GCR_TRY(gcr_cuda_patch_record(j, graph, st->own, st->n_own, &st->patch, &st->gs.why));
    if (!st->patch) gcr_info(ctx, "replay: a rebound input will re-capture this graph: %s", st->gs.why);
    return GCR_OK;
}

/* The pointers moved since the exec's nodes took theirs (an input rebound): patched in place where
 * the recorded layout allows, else captured again. */
static gcr_status rebind(gcr_exec_job *j)
{
    cuda_state *st = j->state;
    if (st->patch && gcr_cuda_patch_apply(st->patch, j, st->exec)) {
        memcpy(st->cap_ptr, j->ptr, sizeof *j->ptr * (size_t)j->ir->n_values);
        st->gs.patched++;
        st->gs.nodes = gcr_cuda_patch_nodes(st->patch);
        return GCR_OK;
    }
    st->gs.recaptured++;
    return capture(j);
}

static gcr_status cuda_run(gcr_exec_job *j)
{
    gcr_ctx *ctx = j->ctx;
    cuda_state *st = j->state;
    /* profiling times every kernel of every run, so it launches plainly (no graph) */
    if (j->set.prof) return run_profiled(j);
    /* the first run launches plainly: every module gets loaded outside a capture */
    if (st->runs++ == 0 || !j->set.graphs) {
        GCR_TRY(launch_all(j));
        return staged_sync(j);
    }
    if (!st->exec || st->stage_gen != j->stage_gen) GCR_TRY(capture(j));
    else if (memcmp(st->cap_ptr, j->ptr, sizeof *j->ptr * (size_t)j->ir->n_values)) GCR_TRY(rebind(j));
    GCR_TRY(gcr_cuda_error(ctx, cudaGraphLaunch(st->exec, gcr_cuda_stream(ctx)), "replay: cudaGraphLaunch"));
    return staged_sync(j);
}

static void cuda_destroy(gcr_exec_job *j)
{
    cuda_state *st = j->state;
    if (!st) return;
    if (st->exec) cudaGraphExecDestroy(st->exec);
    if (st->graph) cudaGraphDestroy(st->graph);
    for (int k = 0; k < st->n && st->l; k++) {
        gcr_cg_kernel_free(&st->l[k].cg);
        gcr_cg_kernel_free(&st->l[k].chain);
        if (st->l[k].out) gcr_tensor_destroy(st->l[k].out);
    }
    free(st->l);
    free(st->program);
    free(st->cap_ptr);
    free(st->own);
    gcr_cuda_patch_free(st->patch);
    free(st);
    j->state = NULL;
}

static int cuda_launches(const gcr_exec_job *j)
{
    const cuda_state *st = j->state;
    int n = 0;
    for (int k = 0; st && k < st->n; k++) n += !st->l[k].skip;
    return n;
}

const gcr_executor gcr_cuda_executor = {"cuda", cuda_build, cuda_run, cuda_destroy, cuda_launches};

void gcr_cuda_exec_stats(const gcr_executor *ex, const gcr_exec_job *j, gcr_cuda_graph_stats *out)
{
    const cuda_state *st = ex == &gcr_cuda_executor && j ? j->state : NULL;
    if (st) *out = st->gs;
    else memset(out, 0, sizeof *out);
}

