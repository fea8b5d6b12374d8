/* codegen_hooked.c — the generator of an anchored kernel's hooks: a conv2d / linear / matmul /
 * pool kernel keeps its template (lib/cuda/kernels) and gets GCR_PROLOGUE, its 8-wide halves
 * (GCR_PROLOGUE_FETCH8_ASYNC, GCR_PROLOGUE_APPLY8; GCR_PROLOGUE_APPLY8_PACKED where exact),
 * GCR_EPILOGUE, GCR_EPILOGUE8 and GCR_EXTRA_PARAMS from the fused group (contract at the top of
 * kernels/gemm.cuh). */
#include "codegen_emit.h"
#include <stdio.h>
#include <stdlib.h>

static bool is_loaded(const gcr_group *g, int l) /* the anchor's own result is an input no expression loads */
{
    for (int i = 0; i < g->n_expr; i++)
        if (g->expr[i].kind == GCR_E_LOAD && g->expr[i].load == l) return true;
    return false;
}

/* text of the offset of group load l / output value at a hook's (n, o, idx) */
typedef struct hook_gen {
    const gcr_ir *ir;
    const gcr_meta *accm;  /* anchor result meta: idx is an offset in its dense layout */
    gcr_hook_coords coords; /* the anchor kind's (kinds.def) */
    const int64_t *const *lst; /* per load: strides over the group space */
    int main_load;         /* prologue: the load the anchor itself reads (v), -1 */
    int first_param;       /* param index of load 0 */
    bool vec8;             /* the 8-wide epilogue: full-layout loads come from l<l>[j], read before its loop */
} hook_gen;

static bool same_strides(const int64_t *a, const gcr_meta *m)
{
    for (int d = 0; d < m->ndim; d++)
        if (m->shape[d] != 1 && a[d] != m->strides[d]) return false;
    return true;
}

/* offset over the anchor output's coordinates, recovered from idx (or n, o where the hook gives them) */
static void epi_offset(gcr_text *b, const hook_gen *h, const int64_t *st)
{
    const gcr_meta *m = h->accm;
    if (same_strides(st, m)) {
        put(b, "idx");
        return;
    }
    put(b, "(0ll");
    for (int d = 0; d < m->ndim; d++) {
        if (st[d] == 0 || m->shape[d] == 1) continue;
        if (h->coords == GCR_HOOK_NC && d == 0) put(b, " + n * %lldll", (long long)st[d]);
        else if (h->coords == GCR_HOOK_NC && d == 1) put(b, " + o * %lldll", (long long)st[d]);
        else if (h->coords == GCR_HOOK_LAST && d == m->ndim - 1) put(b, " + o * %lldll", (long long)st[d]);
        else
            put(b, " + ((idx / %lldll) %% %lldll) * %lldll", (long long)m->strides[d], (long long)m->shape[d], (long long)st[d]);
    }
    put(b, ")");
}

static void epi_load(gcr_text *b, const gcr_emit *ec, int l)
{
    const hook_gen *h = ec->gen;
    if (h->vec8 && same_strides(ec->g->in[l].strides, h->accm)) {
        put(b, "l%d[j]", l);
        return;
    }
    put(b, "gcr_ld<%d>(g%d, ", (int)h->ir->values[ec->g->in[l].value].m.dtype, h->first_param + l);
    epi_offset(b, h, ec->g->in[l].strides);
    put(b, ", 0.0f)");
}

/* prologue loads other than the anchor's own input depend only on (n, c) */
static void pro_offset(gcr_text *b, const hook_gen *h, const int64_t *st, int nd, const char *c)
{
    put(b, "(0ll");
    for (int d = 0; d < nd; d++) {
        if (st[d] == 0) continue;
        if (h->coords == GCR_HOOK_LAST) put(b, " + %s * %lldll", c, (long long)st[d]); /* only the last dim varies */
        else put(b, " + %s * %lldll", d == 0 ? "n" : c, (long long)st[d]);
    }
    put(b, ")");
}

/* a prologue load that moves along c with stride 1: 8 consecutive channels are one vector */
static bool pro_vec_load(const hook_gen *h, const gcr_group *g, int l)
{
    if (l == h->main_load || !is_loaded(g, l)) return false;
    int cd = h->coords == GCR_HOOK_LAST ? g->space.ndim - 1 : 1;
    return cd < g->space.ndim && g->space.shape[cd] != 1 && g->in[l].strides[cd] == 1;
}

static void pro_load(gcr_text *b, const gcr_emit *ec, int l)
{
    const hook_gen *h = ec->gen;
    if (l == h->main_load) {
        put(b, "v");
        return;
    }
    if (h->vec8 && pro_vec_load(h, ec->g, l)) {
        put(b, "l%d[j]", l);
        return;
    }
    put(b, "gcr_ld<%d>(g%d, ", (int)h->ir->values[ec->g->in[l].value].m.dtype, h->first_param + l);
    pro_offset(b, h, ec->g->in[l].strides, ec->g->space.ndim, "c");
    put(b, ", 0.0f)");
}

/* the loads of a prologue may vary only along (n, c) for conv/pool, the last dim for matmul */
static bool pro_load_ok(gcr_hook_coords coords, const int64_t *st, const gcr_meta *space)
{
    for (int d = 0; d < space->ndim; d++) {
        if (st[d] == 0 || space->shape[d] == 1) continue;
        if (coords == GCR_HOOK_LAST ? d != space->ndim - 1 : d > 1) return false;
    }
    return true;
}

static void put_extra_decl(gcr_text *b, const gcr_ir *ir, const gcr_cg_kernel *cg, bool with_types)
{
    for (int i = 0; i < cg->n_params; i++) {
        gcr_dtype dt = ir->values[cg->params[i]].m.dtype;
        if (with_types) put(b, ", gcr_ty<%d>::t *__restrict__ g%d", (int)dt, i);
        else put(b, ", g%d", i);
    }
}

/* "__device__ __forceinline__ <ret> <fn><sfx>(<args>, <extra parameters>) {", then unused */
static void hook_head(gcr_text *b, const gcr_ir *ir, const gcr_cg_kernel *cg, const char *ret, const char *sfx,
                      const char *args, const char *unused)
{
    put(b, "__device__ __forceinline__ %s %s%s(%s", ret, cg->fn, sfx, args);
    put_extra_decl(b, ir, cg, true);
    put(b, ")\n{\n    %s\n", unused);
}

/* "#define <macro> <fn><sfx>(<args>, <extra parameters' names>)": the hook the template calls */
static void hook_macro(gcr_text *b, const gcr_ir *ir, const gcr_cg_kernel *cg, const char *macro, const char *sfx,
                       const char *args)
{
    put(b, "#define %s %s%s(%s", macro, cg->fn, sfx, args);
    put_extra_decl(b, ir, cg, false);
    put(b, ")\n");
}

/* "<fn>_epi8": the epilogue for the 8 consecutive outputs idx8 + j, o8 + j (GCR_EPILOGUE8). Loads
 * and outputs in the anchor result's own layout (offset idx) move as 8-element vectors (common.cuh
 * gcr_ld8 / gcr_st8: 16 bytes at a time where aligned), the loads before the loop over j and the
 * stores after it; the others (per-channel broadcasts, other strides) keep their per-element offset
 * inside it, where idx and o are those of output j. The expressions are the scalar hook's, so every
 * value is computed and rounded as it would be there. */
static void epi8(gcr_text *b, hook_gen *h, const gcr_cg_kernel *cg, const gcr_group *eg, int epi_first,
                 const gcr_value *acc)
{
    const gcr_ir *ir = h->ir;
    hook_head(b, ir, cg, "void", "_epi8", "const float *accv8, long long n, long long o8, long long idx8", "(void)n;");
    for (int l = 0; l < eg->n_in; l++)
        if (is_loaded(eg, l) && same_strides(eg->in[l].strides, h->accm))
            put(b, "    float l%d[8];\n    gcr_ld8<%d>(g%d, idx8, l%d);\n", l, (int)ir->values[eg->in[l].value].m.dtype,
                epi_first + l, l);
    for (int o = 0; o < eg->n_out; o++)
        if (same_strides(ir->values[eg->out[o].value].m.strides, h->accm)) put(b, "    float s%d[8];\n", o);
    put(b, "#pragma unroll\n    for (int j = 0; j < 8; j++) {\n");
    put(b, "        const long long o = o8 + j, idx = idx8 + j;\n        (void)o; (void)idx;\n");
    put(b, "        const float accv = accv8[j];\n");
    h->vec8 = true;
    gcr_emit ec = gcr_cg_emit(eg, h, epi_load, "        ");
    ec.acc = "accv";
    ec.acc_dtype = acc->m.dtype;
    gcr_emit_exprs(b, &ec);
    h->vec8 = false;
    for (int o = 0; o < eg->n_out; o++) {
        const gcr_value *v = &ir->values[eg->out[o].value];
        if (same_strides(v->m.strides, h->accm)) {
            put(b, "        s%d[j] = e%d;\n", o, eg->out[o].expr);
            continue;
        }
        put(b, "        gcr_st<%d>(g%d, ", (int)v->m.dtype, epi_first + eg->n_in + o);
        epi_offset(b, h, v->m.strides);
        put(b, ", e%d);\n", eg->out[o].expr);
    }
    put(b, "    }\n");
    for (int o = 0; o < eg->n_out; o++) {
        const gcr_value *v = &ir->values[eg->out[o].value];
        if (same_strides(v->m.strides, h->accm))
            put(b, "    gcr_st8<%d>(g%d, idx8, s%d);\n", (int)v->m.dtype, epi_first + eg->n_in + o, o);
    }
    put(b, "}\n");
}

/* The staged load l whose product with the anchor's input is the whole prologue, all three f16,
 * else -1: then the 8-wide prologue may run on the packed values (GCR_PROLOGUE_PACKED, common.cuh
 * gcr_mul8_packed gives the scalar hook's bits: the f32 product is exact, and rounded once either
 * way). The squeeze-excite scale in f16 networks is one. */
static int pro_packed_mul(const hook_gen *h, const gcr_group *pg)
{
    const gcr_ir *ir = h->ir;
    const gcr_expr *e = &pg->expr[pg->out[0].expr];
    if (e->dtype != GCR_F16 || e->kind != GCR_E_OP || e->op != GCR_OP_MUL || e->has_scalar)
        return -1;
    int mains = 0, l = -1;
    for (int i = 0; i < 2; i++) {
        if (e->arg[i] < 0) return -1;
        const gcr_expr *a = &pg->expr[e->arg[i]];
        if (a->kind != GCR_E_LOAD || ir->values[pg->in[a->load].value].m.dtype != e->dtype) return -1;
        if (a->load == h->main_load) mains++;
        else if (pro_vec_load(h, pg, a->load)) l = a->load;
    }
    return mains == 1 && l >= 0 ? l : -1;
}

/* The 8-wide prologue in two halves (GCR_PRO_FETCH_T, GCR_PROLOGUE_FETCH8_ASYNC, GCR_PROLOGUE_APPLY8):
 * "<fn>_fetch8s" copies the operands contiguous in c (8 channels c8 + j of image n) into a
 * "<fn>_fetch" in shared memory (gcr_cp8_raw: cp.async where aligned), and "<fn>_apply8" converts
 * them and runs the scalar hook's expressions for each j in place on v8; the other operands keep
 * their per-element load at c = c8 + j there. Every value is computed and rounded as the scalar
 * hook would. */
static void pro8(gcr_text *b, hook_gen *h, const gcr_cg_kernel *cg, const gcr_group *pg, const gcr_emit *scalar)
{
    const gcr_ir *ir = h->ir;
    put(b, "struct %s_fetch {\n", cg->fn);
    int nv = 0;
    for (int l = 0; l < pg->n_in; l++)
        if (pro_vec_load(h, pg, l)) {
            put(b, "    gcr_raw8<%d> l%d;\n", (int)ir->values[pg->in[l].value].m.dtype, l);
            nv++;
        }
    if (!nv) put(b, "    char none;\n");
    put(b, "};\n#define GCR_PRO_FETCH_T %s_fetch\n", cg->fn);
    hook_head(b, ir, cg, "void", "_fetch8s", "GCR_PRO_FETCH_T *fp, long long n, long long c8", "(void)fp; (void)n; (void)c8;");
    for (int l = 0; l < pg->n_in; l++)
        if (pro_vec_load(h, pg, l)) {
            put(b, "    gcr_cp8_raw<%d>(&fp->l%d, g%d, ", (int)ir->values[pg->in[l].value].m.dtype, l, h->first_param + l);
            pro_offset(b, h, pg->in[l].strides, pg->space.ndim, "c8");
            put(b, ");\n");
        }
    put(b, "}\n");
    hook_macro(b, ir, cg, "GCR_PROLOGUE_FETCH8_ASYNC(fp, n, c)", "_fetch8s", "(fp), (n), (c)");
    hook_head(b, ir, cg, "void", "_apply8", "float *v8, const GCR_PRO_FETCH_T &f, long long n, long long c8",
              "(void)f; (void)n;");
    for (int l = 0; l < pg->n_in; l++)
        if (pro_vec_load(h, pg, l))
            put(b, "    float l%d[8];\n    gcr_raw8_f32<%d>(f.l%d, l%d);\n", l, (int)ir->values[pg->in[l].value].m.dtype, l, l);
    put(b, "#pragma unroll\n    for (int j = 0; j < 8; j++) {\n");
    put(b, "        const long long c = c8 + j;\n        (void)c;\n        const float v = v8[j];\n        (void)v;\n");
    h->vec8 = true;
    gcr_emit ec = *scalar;
    ec.ind = "        ";
    gcr_emit_exprs(b, &ec);
    h->vec8 = false;
    put(b, "        v8[j] = e%d;\n    }\n}\n", pg->out[0].expr);
    hook_macro(b, ir, cg, "GCR_PROLOGUE_APPLY8(v8, f, n, c)", "_apply8", "(v8), (f), (n), (c)");
    const int pl = pro_packed_mul(h, pg);
    if (pl >= 0)
        put(b, "#define GCR_PROLOGUE_PACKED 1\n#define GCR_PROLOGUE_APPLY8_PACKED(q, f, n, c) gcr_mul8_packed((q), (f).l%d)\n", pl);
}

gcr_status gcr_cg_hooked(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_node *A = &ir->nodes[K->anchor];
    const gcr_kind_info *kind = gcr_kind_of(A->op);
    const gcr_value *acc = &ir->values[K->acc_value];
    /* a conv->conv pair (kernels/dwpw.cuh): the prologue is the depthwise conv's epilogue, its E_ACC
     * the depthwise sum with the bias added ("v"); 16-bit, channels-last input */
    const gcr_value *inner = K->inner >= 0 ? &ir->values[ir->nodes[K->inner].out] : NULL;
    if (inner) {
        const gcr_node *D = &ir->nodes[K->inner];
        const gcr_meta *x = &ir->values[D->in[0]].m;
        if (D->op != GCR_OP_CONV2D || D->p.conv.groups != x->shape[1] || ir->values[A->in[1]].m.shape[2] != 1 ||
            ir->values[A->in[1]].m.shape[3] != 1)
            return gcr_cg_unsupported(cg, "%s: a conv->conv pair of a %s conv into a %s one (the kernel takes depthwise into 1x1)",
                                      K->name, D->p.conv.groups == x->shape[1] ? "depthwise" : "dense",
                                      ir->values[A->in[1]].m.shape[2] == 1 ? "1x1" : "KxK");
        if (A->op != GCR_OP_CONV2D || (x->dtype != GCR_F16 && x->dtype != GCR_BF16) || (x->shape[1] > 1 && x->strides[1] != 1))
            return gcr_cg_unsupported(cg, "%s: a conv->conv pair of %s %s (the kernel takes channels-last f16 and bf16)",
                                      K->name, gcr_dtype_name(x->dtype), x->strides[1] == 1 ? "nhwc" : "nchw");
    }
    for (int j = 1; j < GCR_MAX_ANCHOR_IN; j++)
        if (K->pro[j]) return gcr_cg_unsupported(cg, "%s: a prologue on %s input %d (the kernel hooks only input 0)", K->name,
                                          gcr_op_table[A->op].name, j);
    if (!kind->prologue && K->pro[0])
        return gcr_cg_unsupported(cg, "%s: a prologue on a pool (its padding reads the raw input)", K->name);
    if (A->op == GCR_OP_MATMUL && K->pro[0] && ir->values[A->in[0]].m.ndim < 2)
        return gcr_cg_unsupported(cg, "%s: a prologue on a 1-d matmul operand", K->name);
    cg->type = GCR_CG_HOOKED;
    cg->x_value = -1;
    gcr_cg_fn_name(K, cg->fn, sizeof cg->fn);
    hook_gen h = {ir, &acc->m, kind->hook, NULL, -1, 0, false};
    gcr_text b = gcr_text_growing();
    put(&b, "/* %s: hooks of the %s kernel */\n#include \"common.cuh\"\n", K->name, gcr_op_table[A->op].name);
    const gcr_group *pg = K->pro[0], *eg = &K->epi;
    /* parameters: prologue loads, epilogue loads, epilogue outputs */
    int pro_first = cg->n_params;
    if (pg) {
        if (pg->n_out != 1) return gcr_cg_unsupported(cg, "%s: a prologue with %d results", K->name, pg->n_out);
        gcr_dtype udt = ir->values[pg->out[0].value].m.dtype;
        int main = -1;
        for (int l = 0; inner && l < pg->n_in && main < 0; l++)
            if (pg->in[l].value == ir->nodes[K->inner].out) main = l; /* E_ACC: "v" through ec.acc */
        for (int pass = 0; !inner && pass < 2 && main < 0; pass++)
            for (int l = 0; l < pg->n_in && main < 0; l++) {
                const gcr_value *x = &ir->values[pg->in[l].value];
                if (x->m.dtype != udt || !gcr_meta_same_shape(&x->m, &pg->space) || !same_strides(pg->in[l].strides, &x->m))
                    continue;
                if (pass == 0 && pro_load_ok(kind->hook, pg->in[l].strides, &pg->space)) continue; /* prefer the full-size one */
                main = l;
            }
        if (main < 0 && !inner) return gcr_cg_unsupported(cg, "%s: no prologue load can stand for the anchor's input", K->name);
        for (int l = 0; l < pg->n_in; l++)
            if (l != main && !pro_load_ok(kind->hook, pg->in[l].strides, &pg->space))
                return gcr_cg_unsupported(cg, "%s: prologue load %d varies along more than the hooked coordinates", K->name, l);
        if (!inner) {
            cg->x_value = pg->in[main].value;
            h.main_load = main;
        }
        for (int l = 0; l < pg->n_in; l++)
            if (gcr_cg_add_param(cg, pg->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    }
    if (inner) cg->x_value = ir->nodes[K->inner].in[0]; /* bound for the call: the pair's kernel reads it */
    int epi_first = cg->n_params;
    bool has_epi = eg->n_expr > 0;
    if (has_epi) {
        if (eg->n_out < 1) return gcr_cg_unsupported(cg, "%s: an epilogue with no output", K->name);
        if (eg->space.ndim != acc->m.ndim || !gcr_meta_same_shape(&eg->space, &acc->m))
            return gcr_cg_unsupported(cg, "%s: the epilogue's space differs from the anchor's result", K->name);
        for (int l = 0; l < eg->n_in; l++)
            if (gcr_cg_add_param(cg, eg->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
        for (int o = 0; o < eg->n_out; o++) {
            const gcr_value *v = &ir->values[eg->out[o].value];
            if (!gcr_meta_same_shape(&v->m, &acc->m)) return gcr_cg_unsupported(cg, "%s: output %d's shape differs", K->name, o);
            if (gcr_cg_add_param(cg, eg->out[o].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
        }
        cg->out_value = eg->out[0].value;
    } else {
        cg->out_value = K->acc_value;
    }
    if (cg->n_params > GCR_CUDA_HOOK_PARAMS)
        return gcr_cg_unsupported(cg, "%s: %d extra parameters (the launcher takes %d)", K->name, cg->n_params, GCR_CUDA_HOOK_PARAMS);
    /* the extra parameters are typed by value, loads const-less (one declaration list for both) */
    put(&b, "#define GCR_EXTRA_PARAMS ");
    put_extra_decl(&b, ir, cg, true);
    put(&b, "\n");
    if (pg) {
        h.first_param = pro_first;
        hook_head(&b, ir, cg, "float", "_pro", "float v, long long n, long long c", "(void)n; (void)c;");
        gcr_emit ec = gcr_cg_emit(pg, &h, pro_load, "    ");
        if (inner) {
            ec.acc = "v";
            ec.acc_dtype = inner->m.dtype;
        }
        gcr_emit_exprs(&b, &ec);
        put(&b, "    return e%d;\n}\n", pg->out[0].expr);
        hook_macro(&b, ir, cg, "GCR_PROLOGUE(v, n, c)", "_pro", "(v), (n), (c)");
        pro8(&b, &h, cg, pg, &ec);
    }
    if (has_epi) {
        h.first_param = epi_first;
        hook_head(&b, ir, cg, "void", "_epi", "float accv, long long n, long long o, long long idx", "(void)n; (void)o;");
        gcr_emit ec = gcr_cg_emit(eg, &h, epi_load, "    ");
        ec.acc = "accv";
        ec.acc_dtype = acc->m.dtype;
        gcr_emit_exprs(&b, &ec);
        for (int o = 0; o < eg->n_out; o++) {
            const gcr_value *v = &ir->values[eg->out[o].value];
            put(&b, "    gcr_st<%d>(g%d, ", (int)v->m.dtype, epi_first + eg->n_in + o);
            epi_offset(&b, &h, v->m.strides);
            put(&b, ", e%d);\n", eg->out[o].expr);
        }
        put(&b, "}\n");
        bool has_bias = A->n_in > 2 && A->in[2] >= 0; /* conv2d's and linear's input 2 */
        hook_macro(&b, ir, cg, "GCR_EPILOGUE(acc, n, o, idx)", "_epi",
                   has_bias ? "(acc) + gcr_dn_ld(bias, (o)), (n), (o), (idx)" : "(acc), (n), (o), (idx)");
        epi8(&b, &h, cg, eg, epi_first, acc);
        hook_macro(&b, ir, cg, "GCR_EPILOGUE8(acc8, n, o, idx)", "_epi8",
                   has_bias ? "gcr_dn_bias8((acc8), bias, (o)).v, (n), (o), (idx)" : "(acc8), (n), (o), (idx)");
    }
    return gcr_cg_finish(&b, cg);
}

