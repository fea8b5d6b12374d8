/* codegen_pointwise.c — the generator of a pointwise group's kernel: a grid-stride loop over the
 * group's iteration space, dims collapsed where every operand is dense across them, 16-byte vector
 * accesses where every moving operand is aligned. */
#include "codegen_emit.h"
#include "collapse.h"
#include <stdio.h>
#include <stdlib.h>

#define MAXOPS GCR_CUDA_KERNEL_PARAMS

/* pointwise kernel state: operands are the group's outputs (0..n_out) then its loads */
typedef struct pw_gen {
    const gcr_ir *ir;
    const gcr_group *g;
    int nd, nops, vec;
    int64_t shape[GCR_MAX_DIMS];
    int64_t st[MAXOPS][GCR_MAX_DIMS];
    gcr_dtype dt[MAXOPS];
    bool fits32;
} pw_gen;

static int64_t inner_st(const pw_gen *p, int k) { return p->nd ? p->st[k][p->nd - 1] : 0; }

static void pw_load_scalar(gcr_text *b, const gcr_emit *ec, int l)
{
    const pw_gen *p = ec->gen;
    int k = p->g->n_out + l;
    put(b, "gcr_to_f32<%d>(in%d[o%d])", (int)p->dt[k], l, k);
}

static void pw_load_vec(gcr_text *b, const gcr_emit *ec, int l)
{
    const pw_gen *p = ec->gen;
    int k = p->g->n_out + l;
    if (inner_st(p, k) == 1) put(b, "gcr_to_f32<%d>(pk%d.v[j])", (int)p->dt[k], l);
    else put(b, "s%d", l);
}

/* offsets o<k> of every operand at element `base` (coordinates x<d> over the collapsed shape) */
static void pw_offsets(gcr_text *b, const pw_gen *p, const char *ind, const char *base)
{
    const char *it = gcr_cg_ity(p->fits32);
    if (p->nd <= 1) put(b, "%sconst %s x0 = %s;\n", ind, it, base);
    else {
        put(b, "%s%s r = %s;\n", ind, it, base);
        for (int d = p->nd - 1; d > 0; d--)
            put(b, "%sconst %s x%d = r %% %lld; r /= %lld;\n", ind, it, d, (long long)p->shape[d], (long long)p->shape[d]);
        put(b, "%sconst %s x0 = r;\n", ind, it);
    }
    for (int k = 0; k < p->nops; k++) {
        put(b, "%sconst %s o%d = 0", ind, it, k);
        for (int d = 0; d < p->nd; d++) {
            if (p->st[k][d] == 0) continue;
            if (p->st[k][d] == 1) put(b, " + x%d", d);
            else put(b, " + x%d * %lld", d, (long long)p->st[k][d]);
        }
        put(b, ";\n");
    }
}

static void pw_scalar_body(gcr_text *b, const pw_gen *p, gcr_emit *ec, const char *ind)
{
    pw_offsets(b, p, ind, "i");
    ec->load = pw_load_scalar;
    ec->ind = ind;
    gcr_emit_exprs(b, ec);
    for (int o = 0; o < p->g->n_out; o++)
        put(b, "%sout%d[o%d] = gcr_from_f32<%d>(e%d);\n", ind, o, o, (int)p->dt[o], p->g->out[o].expr);
}

gcr_status gcr_cg_pointwise(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_group *g = &K->epi;
    pw_gen p;
    memset(&p, 0, sizeof p);
    p.ir = ir;
    p.g = g;
    p.nops = g->n_out + g->n_in;
    if (g->n_out < 1) return gcr_cg_unsupported(cg, "%s: a group with no output", K->name);
    if (p.nops > MAXOPS) return gcr_cg_unsupported(cg, "%s: %d operands (at most %d)", K->name, p.nops, MAXOPS);
    int nd = g->space.ndim;
    for (int o = 0; o < g->n_out; o++) {
        const gcr_value *v = &ir->values[g->out[o].value];
        if (v->m.ndim != nd || memcmp(v->m.shape, g->space.shape, sizeof(int64_t) * (size_t)nd))
            return gcr_cg_unsupported(cg, "%s: output %d's shape differs from the iteration space", K->name, o);
        memcpy(p.st[o], v->m.strides, sizeof(int64_t) * (size_t)nd);
        p.dt[o] = v->m.dtype;
    }
    for (int l = 0; l < g->n_in; l++) {
        memcpy(p.st[g->n_out + l], g->in[l].strides, sizeof(int64_t) * (size_t)nd);
        p.dt[g->n_out + l] = ir->values[g->in[l].value].m.dtype;
    }
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        p.shape[d] = g->space.shape[d];
        n *= p.shape[d];
    }
    if (n <= 0) return gcr_cg_unsupported(cg, "%s: empty iteration space", K->name);
    p.nd = gcr_cuda_collapse(nd, p.shape, p.nops, p.st);
    /* 32-bit index math when the element count and every operand's span fit */
    p.fits32 = n < ((int64_t)1 << 31) && gcr_cuda_fits32(p.nd, p.shape, p.nops, p.st);
    /* vector width: 16 bytes of the widest operand that moves along the innermost dim */
    size_t wmax = 0;
    bool vec_ok = p.nd >= 1;
    for (int k = 0; k < p.nops && vec_ok; k++) {
        int64_t s = inner_st(&p, k);
        if (k < g->n_out && s != 1) vec_ok = false;
        if (s != 0 && s != 1) vec_ok = false;
        if (s == 1 && gcr_dtype_size(p.dt[k]) > wmax) wmax = gcr_dtype_size(p.dt[k]);
    }
    p.vec = vec_ok && wmax ? (int)(16 / wmax) : 1;
    if (p.vec > 1) {
        int64_t inner = p.shape[p.nd - 1];
        if (p.nd > 1 && inner % p.vec) p.vec = 1;
        if (p.nd == 1 && inner < p.vec) p.vec = 1;
        for (int k = 0; k < p.nops && p.vec > 1; k++)
            if (inner_st(&p, k) == 1)
                for (int d = 0; d < p.nd - 1; d++)
                    if (p.st[k][d] % p.vec) p.vec = 1;
    }

    gcr_cg_fn_name(K, cg->fn, sizeof cg->fn);
    cg->type = GCR_CG_OWN;
    cg->block = 256;
    for (int l = 0; l < g->n_in; l++)
        if (gcr_cg_add_param(cg, g->in[l].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    for (int o = 0; o < g->n_out; o++)
        if (gcr_cg_add_param(cg, g->out[o].value) < 0) return gcr_cg_unsupported(cg, "%s: too many operands", K->name);
    cg->threads = p.vec > 1 ? n / p.vec : n;

    gcr_text b = gcr_text_growing();
    char buf[256];
    put(&b, "/* %s: %lld elements over [", K->name, (long long)n);
    for (int d = 0; d < p.nd; d++) put(&b, "%s%lld", d ? "," : "", (long long)p.shape[d]);
    put(&b, "] (collapsed), %d-wide accesses */\n", p.vec);
    put(&b, "extern \"C\" __global__ void __launch_bounds__(256) %s(", cg->fn);
    for (int l = 0; l < g->n_in; l++)
        put(&b, "%sconst gcr_ty<%d>::t *__restrict__ in%d", l ? ", " : "", (int)p.dt[g->n_out + l], l);
    for (int o = 0; o < g->n_out; o++)
        put(&b, "%sgcr_ty<%d>::t *__restrict__ out%d", (g->n_in || o) ? ", " : "", (int)p.dt[o], o);
    put(&b, ")\n{\n    gcr_grid_dep();\n"); /* first, before any global access (common.cuh) */
    const char *it = gcr_cg_ity(p.fits32);
    put(&b, "    const %s tid = (%s)(blockIdx.x * blockDim.x + threadIdx.x), nth = (%s)(gridDim.x * blockDim.x);\n", it, it,
        it);
    gcr_emit ec = gcr_cg_emit(g, &p, pw_load_scalar, "");
    if (p.vec > 1) {
        int V = p.vec;
        put(&b, "    /* vector path when every moving operand is aligned to its %d-element access */\n", V);
        put(&b, "    if (((0ull");
        for (int k = 0; k < p.nops; k++)
            if (inner_st(&p, k) == 1)
                put(&b, " | ((unsigned long long)%s%d %% %zu)", k < g->n_out ? "out" : "in", k < g->n_out ? k : k - g->n_out,
                    gcr_dtype_size(p.dt[k]) * (size_t)V);
        put(&b, ")) == 0) {\n");
        put(&b, "        for (%s i = tid; i < (%s)%lld; i += nth) {\n", it, it, (long long)(n / V));
        snprintf(buf, sizeof buf, "i * %d", V);
        pw_offsets(&b, &p, "            ", buf);
        for (int l = 0; l < g->n_in; l++) {
            int k = g->n_out + l;
            if (inner_st(&p, k) == 1)
                put(&b, "            const gcr_pack<gcr_ty<%d>::t, %d> pk%d = *(const gcr_pack<gcr_ty<%d>::t, %d> *)(in%d + o%d);\n",
                    (int)p.dt[k], V, l, (int)p.dt[k], V, l, k);
            else put(&b, "            const float s%d = gcr_to_f32<%d>(in%d[o%d]);\n", l, (int)p.dt[k], l, k);
        }
        for (int o = 0; o < g->n_out; o++) put(&b, "            gcr_pack<gcr_ty<%d>::t, %d> q%d;\n", (int)p.dt[o], V, o);
        put(&b, "#pragma unroll\n            for (int j = 0; j < %d; j++) {\n", V);
        ec.load = pw_load_vec;
        ec.ind = "                ";
        gcr_emit_exprs(&b, &ec);
        for (int o = 0; o < g->n_out; o++)
            put(&b, "                q%d.v[j] = gcr_from_f32<%d>(e%d);\n", o, (int)p.dt[o], g->out[o].expr);
        put(&b, "            }\n");
        for (int o = 0; o < g->n_out; o++)
            put(&b, "            *(gcr_pack<gcr_ty<%d>::t, %d> *)(out%d + o%d) = q%d;\n", (int)p.dt[o], V, o, o, o);
        put(&b, "        }\n");
        if (n % V) {
            put(&b, "        for (%s i = (%s)%lld + tid; i < (%s)%lld; i += nth) {\n", it, it, (long long)(n / V * V), it,
                (long long)n);
            pw_scalar_body(&b, &p, &ec, "            ");
            put(&b, "        }\n");
        }
        put(&b, "        return;\n    }\n");
    }
    put(&b, "    for (%s i = tid; i < (%s)%lld; i += nth) {\n", it, it, (long long)n);
    pw_scalar_body(&b, &p, &ec, "        ");
    put(&b, "    }\n}\n\n");
    return gcr_cg_finish(&b, cg);
}

