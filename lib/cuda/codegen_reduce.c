/* codegen_reduce.c — the generator of a reduction's kernel with its fused prologue (producers)
 * and epilogue (consumers): a block per output row, or 32 rows per block split into slices. */
#include "codegen_emit.h"
#include "kernels/abi.h" /* the kernels' reduction op codes */
#include <stdio.h>
#include <stdlib.h>

typedef struct red_gen {
    const gcr_ir *ir;
    int first_param;   /* param index of load 0 of the group being written */
    const char *xname[GCR_MAX_DIMS]; /* coordinate text per space dim */
} red_gen;

static void red_load(gcr_text *b, const gcr_emit *ec, int l)
{
    const red_gen *r = ec->gen;
    const int64_t *st = ec->g->in[l].strides;
    put(b, "gcr_ld<%d>(g%d, (0", (int)r->ir->values[ec->g->in[l].value].m.dtype, r->first_param + l);
    for (int d = 0; d < ec->g->space.ndim; d++)
        if (st[d] && ec->g->space.shape[d] != 1) put(b, " + (long long)%s * %lldll", r->xname[d], (long long)st[d]);
    put(b, "), 0.0f)");
}

gcr_status gcr_cg_reduce(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_node *A = &ir->nodes[K->anchor];
    const gcr_value *xin = &ir->values[A->in[0]], *acc = &ir->values[K->acc_value];
    const gcr_meta *xm = &xin->m;
    for (int j = 1; j < GCR_MAX_ANCHOR_IN; j++)
        if (K->pro[j]) return gcr_cg_unsupported(cg, "%s: a prologue on reduction input %d", K->name, j);
    int nd = xm->ndim;
    gcr_resolved r;
    char err[256];
    if (gcr_resolve(A->op, &A->p, xm, &r, err, sizeof err) != GCR_OK) return gcr_cg_unsupported(cg, "%s: %s", K->name, err);
    const bool *red = r.red;
    int64_t R = 1, M = 1;
    for (int d = 0; d < nd; d++) {
        if (red[d]) R *= xm->shape[d];
        else M *= xm->shape[d];
    }
    if (R <= 0 || M <= 0) return gcr_cg_unsupported(cg, "%s: an empty reduction", K->name);
    const gcr_group *pg = K->pro[0], *eg = &K->epi;
    bool has_epi = eg->n_expr > 0;
    if (has_epi && (eg->n_out < 1 || !gcr_meta_same_shape(&eg->space, &acc->m)))
        return gcr_cg_unsupported(cg, "%s: the epilogue's space differs from the reduction's result", K->name);
    if (pg && (pg->n_out != 1 || !gcr_meta_same_shape(&pg->space, xm)))
        return gcr_cg_unsupported(cg, "%s: the prologue's space differs from the reduction's input", K->name);
    /* strategy: a block per output row when the input's innermost dim is reduced (coalesced
     * along the row); else columns: a block takes 32 neighbouring outputs (neighbouring lanes read
     * neighbouring elements, e.g. channels of NHWC) and splits their rows into S slices, one warp
     * each, so a global average pool of a few channels still has thousands of threads */
    int fast = -1;
    for (int d = 0; d < nd; d++)
        if (xm->shape[d] > 1 && (fast < 0 || llabs(xm->strides[d]) < llabs(xm->strides[fast]))) fast = d;
    bool per_block = fast < 0 || red[fast] || M < 64;
    int B = 32, S = 1;
    while (per_block && B < 256 && B < R) B *= 2;
    while (!per_block && S < 32 && S * 16 <= R) S *= 2;
    bool fits32 = true; /* offsets are computed in 64 bits; loop counters in 32 when they fit */
    fits32 = R < ((int64_t)1 << 31) && M < ((int64_t)1 << 31);
    const char *it = gcr_cg_ity(fits32);

    cg->type = GCR_CG_OWN;
    gcr_cg_fn_name(K, cg->fn, sizeof cg->fn);
    /* parameters: input (or prologue loads), epilogue loads, outputs */
    int pro_first = cg->n_params;
    if (pg) {
        for (int l = 0; l < pg->n_in; l++)
            if (gcr_cg_add_param(cg, pg->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    } else if (gcr_cg_add_param(cg, A->in[0]) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    int epi_first = cg->n_params;
    int n_out = has_epi ? eg->n_out : 1;
    if (has_epi)
        for (int l = 0; l < eg->n_in; l++)
            if (gcr_cg_add_param(cg, eg->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    int out_first = cg->n_params;
    for (int o = 0; o < n_out; o++)
        if (gcr_cg_add_param(cg, has_epi ? eg->out[o].value : K->acc_value) < 0)
            return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    cg->block = per_block ? (unsigned)B : (unsigned)(32 * S);
    cg->rows = per_block ? M : (M + 31) / 32; /* blocks */
    cg->threads = 0;

    gcr_text b = gcr_text_growing();
    put(&b, "/* %s: %s of %lld rows x %lld elements, %s */\n", K->name, gcr_op_table[A->op].name, (long long)M,
        (long long)R, per_block ? "a block per row" : "32 rows x slices per block");
    put(&b, "extern \"C\" __global__ void __launch_bounds__(%u) %s(", cg->block, cg->fn);
    for (int i = 0; i < cg->n_params; i++) {
        gcr_dtype dt = ir->values[cg->params[i]].m.dtype;
        put(&b, "%s%sgcr_ty<%d>::t *__restrict__ g%d", i ? ", " : "", i < out_first ? "const " : "", (int)dt, i);
    }
    put(&b, ")\n{\n    gcr_grid_dep();\n"); /* first, before any global access (common.cuh) */
    int OP = A->op == GCR_OP_MAX ? GCR_FR_MAX : GCR_FR_SUM;
    /* coordinate names x<d> over the input's dims: kept ones from the row, reduced from r */
    static const char *const xn[GCR_MAX_DIMS] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
    red_gen rg = {ir, 0, {0}};
    for (int d = 0; d < nd; d++) rg.xname[d] = xn[d];
    if (per_block) {
        put(&b, "    for (%s row = blockIdx.x; row < (%s)%lld; row += gridDim.x) {\n", it, it, (long long)M);
    } else {
        if (S > 1) put(&b, "    __shared__ float part[%d][33];\n", S);
        put(&b, "    const int lane = threadIdx.x & 31, sl = threadIdx.x >> 5;\n");
        put(&b, "    for (%s rb = (%s)blockIdx.x * 32; rb < (%s)%lld; rb += (%s)gridDim.x * 32) {\n", it, it, it, (long long)M, it);
        put(&b, "        const %s row = rb + lane;\n", it);
    }
    put(&b, "        %s q = row;\n", it);
    for (int d = nd - 1; d >= 0; d--) {
        if (red[d]) continue;
        put(&b, "        const %s x%d = q %% %lld; q /= %lld;\n", it, d, (long long)xm->shape[d], (long long)xm->shape[d]);
    }
    put(&b, "        float acc = gcr_fr_init<%d>();\n", OP);
    if (per_block) put(&b, "        for (%s r = threadIdx.x; r < (%s)%lld; r += %d) {\n", it, it, (long long)R, B);
    else put(&b, "        for (%s r = sl; r < (%s)%lld && row < (%s)%lld; r += %d) {\n", it, it, (long long)R, it, (long long)M, S);
    put(&b, "            %s t = r;\n", it);
    for (int d = nd - 1; d >= 0; d--) {
        if (!red[d]) continue;
        put(&b, "            const %s x%d = t %% %lld; t /= %lld;\n", it, d, (long long)xm->shape[d], (long long)xm->shape[d]);
    }
    if (pg) {
        rg.first_param = pro_first;
        gcr_emit ec = gcr_cg_emit(pg, &rg, red_load, "            ");
        gcr_emit_exprs(&b, &ec);
        put(&b, "            acc = gcr_fr_combine<%d>(acc, e%d);\n", OP, pg->out[0].expr);
    } else {
        put(&b, "            acc = gcr_fr_combine<%d>(acc, gcr_ld<%d>(g%d, (0", OP, (int)xm->dtype, pro_first);
        for (int d = 0; d < nd; d++)
            if (xm->strides[d] && xm->shape[d] != 1) put(&b, " + (long long)x%d * %lldll", d, (long long)xm->strides[d]);
        put(&b, "), 0.0f));\n");
    }
    put(&b, "        }\n");
    if (per_block) put(&b, "        acc = gcr_fr_block<%d, %d>(acc);\n        if (threadIdx.x != 0) continue;\n", OP, B);
    if (!per_block && S > 1) {
        /* the first barrier: last round's readers are done with part[] */
        put(&b, "        __syncthreads();\n        part[sl][lane] = acc;\n        __syncthreads();\n");
        put(&b, "        if (sl != 0) continue;\n");
        put(&b, "#pragma unroll\n        for (int s = 1; s < %d; s++) acc = gcr_fr_combine<%d>(acc, part[s][lane]);\n", S, OP);
    }
    if (!per_block) put(&b, "        if (row >= (%s)%lld) continue;\n", it, (long long)M);
    if (A->op == GCR_OP_MEAN) {
        put(&b, "        acc = acc / ");
        gcr_cg_float(&b, (float)R);
        put(&b, ";\n");
    }
    /* epilogue coordinates: the result's dims map to the input's kept dims (keepdim: size 1 at reduced ones) */
    const gcr_meta *om = &acc->m;
    int map[GCR_MAX_DIMS], j = 0;
    for (int d = 0; d < nd && j < om->ndim; d++) {
        if (red[d] && !A->p.keepdim) continue;
        map[j++] = d;
    }
    red_gen eg_rg = {ir, 0, {0}};
    static const char *const zero = "0";
    for (int d = 0; d < om->ndim; d++) eg_rg.xname[d] = red[map[d]] ? zero : xn[map[d]];
    if (has_epi) {
        eg_rg.first_param = epi_first;
        gcr_emit ec = gcr_cg_emit(eg, &eg_rg, red_load, "        ");
        ec.acc = "acc";
        ec.acc_dtype = om->dtype;
        gcr_emit_exprs(&b, &ec);
    } else {
        put(&b, "        const float e0 = acc;\n");
    }
    for (int o = 0; o < n_out; o++) {
        const gcr_value *v = &ir->values[cg->params[out_first + o]];
        put(&b, "        gcr_st<%d>(g%d, (0", (int)v->m.dtype, out_first + o);
        for (int d = 0; d < v->m.ndim; d++)
            if (v->m.strides[d] && v->m.shape[d] != 1 && !red[map[d]])
                put(&b, " + (long long)x%d * %lldll", map[d], (long long)v->m.strides[d]);
        put(&b, "), e%d);\n", has_epi ? eg->out[o].expr : 0);
    }
    put(&b, "    }\n}\n\n");
    return gcr_cg_finish(&b, cg);
}

