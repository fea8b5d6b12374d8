/* codegen_chain.c — the generator of a chain's one kernel (lib/chain.h, kernels/chain.cuh): the
 * steps of kernels k .. k + chain - 1 in order, each step's pointwise epilogue written as a lambda
 * over (n, o) that stores what the step's own kernel would store, a barrier between steps. One
 * image per cluster of R blocks: R grows with the bytes the largest step reads, up to the cluster
 * size the device allows. Every parameter is a data pointer (an OWN kernel). */
#include "codegen_emit.h"
#include "../chain.h"
#include "kernels/abi.h" /* GCR_CHAIN_THREADS */
#include <stdio.h>
#include <stdlib.h>

/* the cluster grows by powers of two while the largest step reads more than 16 KB a block; a chain
 * whose largest step would read more than 128 KB a block even in the largest cluster (below sm_90,
 * without clusters) stays separate kernels */
#define CHAIN_BYTES_PER_BLOCK 16384
#define CHAIN_MAX_BYTES_PER_BLOCK 131072

typedef struct chain_gen {
    const gcr_ir *ir;
    int first_param; /* param index of the epilogue's load 0 */
} chain_gen;

/* an epilogue operand at the result element (n, o): its space is [N, V] or [N, V, 1, 1] */
static void chain_load(gcr_text *b, const gcr_emit *ec, int l)
{
    const chain_gen *c = ec->gen;
    const int64_t *st = ec->g->in[l].strides;
    put(b, "gcr_ldcg<%d>(g%d, n * %lldll + o * %lldll)", (int)c->ir->values[ec->g->in[l].value].m.dtype,
        c->first_param + l, (long long)st[0], (long long)(ec->g->space.ndim > 1 ? st[1] : 0));
}

/* the step's result at (n, o) stored to value v (param p) */
static void store(gcr_text *b, const gcr_ir *ir, int v, int p, const char *what)
{
    const gcr_meta *m = &ir->values[v].m;
    put(b, "            gcr_st<%d>(g%d, n * %lldll + o * %lldll, %s);\n", (int)m->dtype, p, (long long)m->strides[0],
        (long long)(m->ndim > 1 ? m->strides[1] : 0), what);
}

/* only dims 0 and 1 of a step's result may be longer than 1 */
static bool flat_result(const gcr_meta *m)
{
    for (int d = 2; d < m->ndim; d++)
        if (m->shape[d] != 1) return false;
    return true;
}

/* "auto epi<i> = [&](float accv, long long o) { ... };": step st's epilogue, or the plain store */
static gcr_status step_epilogue(gcr_text *b, const gcr_ir *ir, const gcr_chain_step *st, int i, gcr_cg_kernel *cg)
{
    const gcr_kernel *K = &ir->kernels[st->kernel];
    const gcr_group *eg = K->type == GCR_K_FUSED ? &K->epi : NULL;
    put(b, "        auto epi%d = [&](float accv, long long o) {\n", i);
    if (eg && eg->n_expr > 0) {
        if (!flat_result(&eg->space)) return gcr_cg_unsupported(cg, "%s: an epilogue over more than (n, o)", K->name);
        chain_gen c = {ir, cg->n_params};
        for (int l = 0; l < eg->n_in; l++)
            if (gcr_cg_add_param(cg, eg->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
        gcr_emit ec = gcr_cg_emit(eg, &c, chain_load, "            ");
        ec.acc = "accv";
        ec.acc_dtype = ir->values[K->acc_value].m.dtype;
        gcr_emit_exprs(b, &ec);
        for (int o = 0; o < eg->n_out; o++) {
            int p = gcr_cg_add_param(cg, eg->out[o].value);
            if (p < 0 || !flat_result(&ir->values[eg->out[o].value].m))
                return gcr_cg_unsupported(cg, "%s: output %d of the epilogue", K->name, o);
            char e[32];
            snprintf(e, sizeof e, "e%d", eg->out[o].expr);
            store(b, ir, eg->out[o].value, p, e);
        }
    } else {
        int p = gcr_cg_add_param(cg, st->out);
        if (p < 0 || !flat_result(&ir->values[st->out].m)) return gcr_cg_unsupported(cg, "%s: its result", K->name);
        store(b, ir, st->out, p, "accv");
    }
    put(b, "        };\n");
    return GCR_OK;
}

gcr_status gcr_codegen_chain(const gcr_ir *ir, int k, int max_cluster, gcr_cg_kernel *cg)
{
    memset(cg, 0, sizeof *cg);
    cg->x_value = cg->out_value = -1;
    const gcr_kernel *H = &ir->kernels[k];
    int len = H->chain;
    if (len < 2 || len > GCR_CHAIN_MAX_STEPS || k + len > ir->n_kernels)
        return gcr_cg_unsupported(cg, "%s: no chain starts here", H->name);
    gcr_chain_step st[GCR_CHAIN_MAX_STEPS];
    int64_t most = 0, kmax = 1;
    for (int i = 0; i < len; i++) {
        int prev = i ? ir->values[st[i - 1].out].root : -1;
        if (!gcr_chain_step_of(ir, k + i, prev, &st[i]) || st[i].n != st[0].n)
            return gcr_cg_unsupported(cg, "%s: step %d is no chain step", H->name, i);
        if (st[i].bytes > most) most = st[i].bytes;
        if (st[i].k > kmax) kmax = st[i].k; /* shared: the pool's block sums, a product's input */
    }
    if (most > (int64_t)CHAIN_MAX_BYTES_PER_BLOCK * max_cluster)
        return gcr_cg_unsupported(cg, "%s: a step reads %lld bytes, past %d blocks of %d KB", H->name, (long long)most,
                                  max_cluster, CHAIN_MAX_BYTES_PER_BLOCK / 1024);
    int R = 1;
    while (R < max_cluster && most > (int64_t)CHAIN_BYTES_PER_BLOCK * R) R *= 2;
    cg->type = GCR_CG_OWN;
    char base[120];
    gcr_cg_fn_name(H, base, sizeof base);
    snprintf(cg->fn, sizeof cg->fn, "gcr_chain_%s", base + 4);
    gcr_text b = gcr_text_growing();
    gcr_text body = gcr_text_growing();
    gcr_status s = GCR_OK;
    for (int i = 0; i < len && s == GCR_OK; i++) {
        const gcr_chain_step *c = &st[i];
        const gcr_kernel *K = &ir->kernels[c->kernel];
        int dt = (int)ir->values[c->x].m.dtype;
        put(&body, "        /* step %d: %s */\n", i, K->name);
        int px = gcr_cg_add_param(cg, c->x);
        if (px < 0) s = gcr_cg_unsupported(cg, "%s: too many operands", H->name);
        if (s == GCR_OK) s = step_epilogue(&body, ir, c, i, cg);
        if (s != GCR_OK) break;
        if (c->kind == GCR_CHAIN_POOL) {
            put(&body, "        const long long xs%d[4] = {%lldll, %lldll, %lldll, %lldll};\n", i, (long long)c->xs[0],
                (long long)c->xs[1], (long long)c->xs[2], (long long)c->xs[3]);
            put(&body, "        gcr_chain_pool<%d, %d>(g%d, n, %lld, %lld, %lld, xs%d, rank, xsm, epi%d);\n", dt, R, px,
                (long long)c->k, (long long)c->h, (long long)c->w_px, i, i);
        } else {
            int pw = gcr_cg_add_param(cg, c->w), pb = c->bias >= 0 ? gcr_cg_add_param(cg, c->bias) : -2;
            if (pw < 0 || pb == -1) {
                s = gcr_cg_unsupported(cg, "%s: too many operands", H->name);
                break;
            }
            int64_t bs = c->bias >= 0 ? ir->values[c->bias].m.strides[0] : 0;
            put(&body, "        const long long xs%d[2] = {%lldll, %lldll}, ws%d[2] = {%lldll, %lldll};\n", i,
                (long long)c->xs[0], (long long)c->xs[1], i, (long long)c->ws[0], (long long)c->ws[1]);
            put(&body, "        gcr_chain_dense<%d, %d>(g%d, n, xs%d, %lld, %lld, g%d, ws%d, ", dt, R, px, i, (long long)c->k,
                (long long)c->o, pw, i);
            if (pb >= 0) put(&body, "g%d, %lldll, rank, xsm, epi%d);\n", pb, (long long)bs, i);
            else put(&body, "nullptr, 0ll, rank, xsm, epi%d);\n", i);
        }
        if (i + 1 < len) put(&body, "        gcr_chain_sync<%d>();\n", R);
    }
    if (s != GCR_OK) {
        free(gcr_text_take(&body));
        free(gcr_text_take(&b));
        return s;
    }
    put(&b, "#include \"chain.cuh\"\n/* %s: chain of %d kernels (", cg->fn, len);
    for (int i = 0; i < len; i++) put(&b, i ? ", %s" : "%s", ir->kernels[k + i].name);
    put(&b, "), clusters of %d blocks */\n", R);
    put(&b, "extern \"C\" __global__ void __launch_bounds__(GCR_CHAIN_THREADS) ");
    if (R > 1) put(&b, "GCR_CHAIN_CLUSTER(%d) ", R);
    put(&b, "%s(", cg->fn);
    for (int i = 0; i < cg->n_params; i++) put(&b, i ? ", void *g%d" : "void *g%d", i);
    put(&b, ")\n{\n    gcr_grid_dep();\n    __shared__ float xsm[%lld];\n    (void)xsm;\n", (long long)kmax);
    put(&b, "    const int rank = (int)(blockIdx.x %% %du);\n    (void)rank;\n", R);
    put(&b, "    for (long long n = blockIdx.x / %du; n < %lldll; n += gridDim.x / %du) {\n", R, (long long)st[0].n, R);
    char *bt = gcr_text_take(&body);
    if (bt) put(&b, "%s", bt);
    free(bt);
    put(&b, "    }\n}\n");
    cg->rows = (int64_t)R * st[0].n;
    cg->cluster = R > 1 ? R : 0;
    cg->block = GCR_CHAIN_THREADS;
    if (!bt) {
        free(gcr_text_take(&b));
        return GCR_ERR_OOM;
    }
    return gcr_cg_finish(&b, cg);
}
