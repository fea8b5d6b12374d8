/* codegen_cuda.c — CUDA C text for fused kernels (see codegen.h). Pure text: no CUDA API here.
 *
 * Every expression is evaluated in f32 and rounded to its dtype where it is stored and at
 * explicit casts. Between fused ops:
 * - f16 intermediates stay f32 (as in nvFuser and TorchInductor): rounding each one costs two
 *   conversions on the conversion pipe and made the fused f16 hardswish conversion-bound at 62%
 *   of copy bandwidth on an H100 (98% without). Results are at least as accurate as eager and
 *   may differ from it by about an f16 ulp.
 * - bf16 intermediates are rounded as eager stores them (integer ops only, cheap): with an 8-bit
 *   mantissa, skipping the roundings of a chain moved results several bf16 ulps from eager.
 * Shapes and strides of one variant are fixed, so they are written as constants: index math
 * divides by constants (multiply-shift) and uses 32-bit integers whenever every offset fits. */
#include "codegen.h"
#include "cuda/kernels/abi.h" /* the kernels' op and dtype codes */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- text buffer */

typedef struct sb {
    char *p;
    size_t n, cap;
    int oom;
} sb;

static void __attribute__((format(printf, 2, 3))) put(sb *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->n;
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) { b->oom = 1; return; }
        if ((size_t)k < room && b->p) { b->n += (size_t)k; return; }
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + (size_t)k + 1) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) { b->oom = 1; return; }
        b->p = q;
        b->cap = nc;
    }
}

/* a float constant, exactly (bit pattern), with its value as a comment for the reader */
static void put_float(sb *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put(b, "__int_as_float(0x%08x) /* %.9g */", u, (double)f);
}

static const char *ity(bool fits32) { return fits32 ? "int" : "long long"; }

/* ---------------------------------------------------------------- expressions */

/* How a group's loads read: the caller writes the text of load l (an f32 expression). The state
 * of the kernel being written travels here, not in globals, so that contexts on several threads
 * can generate code at once. */
typedef struct emit_ctx {
    void (*load)(sb *b, const struct emit_ctx *ec, int l);
    const void *gen;       /* the load callback's generator: pw_gen, hook_gen or red_gen */
    const char *acc;       /* text of the anchor's result (E_ACC), already f32 */
    gcr_dtype acc_dtype;
    const gcr_ir *ir;
    const gcr_group *g;
    const char *ind;       /* indentation */
} emit_ctx;

static void round_to(sb *b, const char *ind, int e, gcr_dtype dt)
{
    if (dt != GCR_F32 && dt != GCR_F16) put(b, "%se%d = gcr_to_f32<%d>(gcr_from_f32<%d>(e%d));\n", ind, e, (int)dt, (int)dt, e);
}

/* one statement per expression: float eN = ...; (rounded to its dtype) */
static void emit_exprs(sb *b, const emit_ctx *ec)
{
    const gcr_group *g = ec->g;
    const char *ind = ec->ind;
    for (int i = 0; i < g->n_expr; i++) {
        const gcr_expr *e = &g->expr[i];
        switch (e->kind) {
        case GCR_E_LOAD:
            put(b, "%sconst float e%d = ", ind, i);
            ec->load(b, ec, e->load);
            put(b, ";\n");
            break;
        case GCR_E_ACC:
            put(b, "%sfloat e%d = %s;\n", ind, i, ec->acc);
            round_to(b, ind, i, ec->acc_dtype);
            break;
        case GCR_E_OP: {
            const gcr_op_info *oi = &gcr_op_table[e->op];
            put(b, "%sfloat e%d; /* %s */\n%s{\n", ind, i, oi->name, ind);
            static const char nm[5] = {'a', 'b', 'c', 'd', 'e'};
            for (int k = 0; k < 5; k++) {
                put(b, "%s    const float %c = ", ind, nm[k]);
                if (e->arg[k] >= 0) put(b, "e%d", e->arg[k]);
                else if (k == 1 && e->has_scalar) put_float(b, e->p0);
                else if (k < oi->arity) put_float(b, gcr_op_missing_input(e->op, k));
                else put(b, "0.0f");
                put(b, ";\n");
            }
            put(b, "%s    const float p0 = ", ind);
            put_float(b, e->p0);
            put(b, ", p1 = ");
            put_float(b, e->p1);
            put(b, ";\n%s    (void)a; (void)b; (void)c; (void)d; (void)e; (void)p0; (void)p1;\n", ind);
            put(b, "%s    e%d = (float)(%s);\n%s}\n", ind, i, oi->expr, ind);
            if (e->op == GCR_OP_CAST && e->dtype == GCR_F16) put(b, "%se%d = gcr_to_f32<1>(gcr_from_f32<1>(e%d));\n", ind, i, i);
            else round_to(b, ind, i, e->dtype);
            break;
        }
        }
    }
}

/* ---------------------------------------------------------------- names */

static void fn_name(const gcr_kernel *K, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "gcr_");
    for (const char *s = K->name; *s && k + 1 < n; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[k++] = ok ? c : '_';
    }
    out[k < n ? k : n - 1] = 0;
}

static int add_param(gcr_cg_kernel *cg, int value)
{
    if (cg->n_params >= (int)(sizeof cg->params / sizeof cg->params[0])) return -1;
    cg->params[cg->n_params] = value;
    return cg->n_params++;
}

static gcr_status unsupported(gcr_cg_kernel *cg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static gcr_status unsupported(gcr_cg_kernel *cg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg->why, sizeof cg->why, fmt, ap);
    va_end(ap);
    return GCR_ERR_COMPILE;
}

static gcr_status finish(sb *b, gcr_cg_kernel *cg)
{
    if (b->oom) {
        free(b->p);
        return GCR_ERR_OOM;
    }
    cg->src = b->p;
    return GCR_OK;
}

/* ---------------------------------------------------------------- pointwise groups */

#define MAXOPS GCR_CUDA_KERNEL_PARAMS

/* Sorts dims by operand 0's strides (outermost first), drops size-1 dims and merges dims that
 * are contiguous for every operand. Returns the collapsed rank. */
static int collapse(int nd, int64_t *shape, int nops, int64_t (*st)[GCR_MAX_DIMS])
{
    int perm[GCR_MAX_DIMS], n = 0;
    for (int d = 0; d < nd; d++)
        if (shape[d] != 1) perm[n++] = d;
    for (int i = 1; i < n; i++) { /* stable insertion sort by |stride of operand 0|, descending */
        int p = perm[i], j = i;
        int64_t sp = llabs(st[0][p]);
        while (j > 0 && llabs(st[0][perm[j - 1]]) < sp) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = p;
    }
    int64_t sh[GCR_MAX_DIMS], s2[MAXOPS][GCR_MAX_DIMS];
    int m = 0;
    for (int i = 0; i < n; i++) {
        int d = perm[i];
        bool merge = m > 0;
        for (int k = 0; k < nops && merge; k++) merge = st[k][d] * shape[d] == s2[k][m - 1];
        if (merge) {
            sh[m - 1] *= shape[d];
            for (int k = 0; k < nops; k++) s2[k][m - 1] = st[k][d];
        } else {
            sh[m] = shape[d];
            for (int k = 0; k < nops; k++) s2[k][m] = st[k][d];
            m++;
        }
    }
    for (int i = 0; i < m; i++) {
        shape[i] = sh[i];
        for (int k = 0; k < nops; k++) st[k][i] = s2[k][i];
    }
    return m;
}

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

static void pw_load_scalar(sb *b, const emit_ctx *ec, int l)
{
    const pw_gen *p = ec->gen;
    int k = p->g->n_out + l;
    put(b, "gcr_to_f32<%d>(in%d[o%d])", (int)p->dt[k], l, k);
}

static void pw_load_vec(sb *b, const emit_ctx *ec, int l)
{
    const pw_gen *p = ec->gen;
    int k = p->g->n_out + l;
    if (inner_st(p, k) == 1) put(b, "gcr_to_f32<%d>(pk%d.v[j])", (int)p->dt[k], l);
    else put(b, "s%d", l);
}

/* offsets o<k> of every operand at element `base` (coordinates x<d> over the collapsed shape) */
static void pw_offsets(sb *b, const pw_gen *p, const char *ind, const char *base)
{
    const char *it = ity(p->fits32);
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

static void pw_scalar_body(sb *b, const pw_gen *p, emit_ctx *ec, const char *ind)
{
    pw_offsets(b, p, ind, "i");
    ec->load = pw_load_scalar;
    ec->ind = ind;
    emit_exprs(b, ec);
    for (int o = 0; o < p->g->n_out; o++)
        put(b, "%sout%d[o%d] = gcr_from_f32<%d>(e%d);\n", ind, o, o, (int)p->dt[o], p->g->out[o].expr);
}

static gcr_status gen_pointwise(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_group *g = &K->epi;
    pw_gen p;
    memset(&p, 0, sizeof p);
    p.ir = ir;
    p.g = g;
    p.nops = g->n_out + g->n_in;
    if (g->n_out < 1) return unsupported(cg, "%s: a group with no output", K->name);
    if (p.nops > MAXOPS) return unsupported(cg, "%s: %d operands (at most %d)", K->name, p.nops, MAXOPS);
    int nd = g->space.ndim;
    for (int o = 0; o < g->n_out; o++) {
        const gcr_value *v = &ir->values[g->out[o].value];
        if (v->m.ndim != nd || memcmp(v->m.shape, g->space.shape, sizeof(int64_t) * (size_t)nd))
            return unsupported(cg, "%s: output %d's shape differs from the iteration space", K->name, o);
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
    if (n <= 0) return unsupported(cg, "%s: empty iteration space", K->name);
    p.nd = collapse(nd, p.shape, p.nops, p.st);
    /* 32-bit index math when the element count and every operand's span fit */
    p.fits32 = n < ((int64_t)1 << 31);
    for (int k = 0; k < p.nops && p.fits32; k++) {
        int64_t span = 0;
        for (int d = 0; d < p.nd; d++) span += (p.shape[d] - 1) * llabs(p.st[k][d]);
        p.fits32 = span < ((int64_t)1 << 31);
    }
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

    fn_name(K, cg->fn, sizeof cg->fn);
    cg->type = GCR_CG_OWN;
    cg->block = 256;
    for (int l = 0; l < g->n_in; l++)
        if (add_param(cg, g->in[l].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
    for (int o = 0; o < g->n_out; o++)
        if (add_param(cg, g->out[o].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
    cg->threads = p.vec > 1 ? n / p.vec : n;

    sb b = {0};
    char buf[256];
    put(&b, "/* %s: %lld elements over [", K->name, (long long)n);
    for (int d = 0; d < p.nd; d++) put(&b, "%s%lld", d ? "," : "", (long long)p.shape[d]);
    put(&b, "] (collapsed), %d-wide accesses */\n", p.vec);
    put(&b, "extern \"C\" __global__ void __launch_bounds__(256) %s(", cg->fn);
    for (int l = 0; l < g->n_in; l++)
        put(&b, "%sconst gcr_ty<%d>::t *__restrict__ in%d", l ? ", " : "", (int)p.dt[g->n_out + l], l);
    for (int o = 0; o < g->n_out; o++)
        put(&b, "%sgcr_ty<%d>::t *__restrict__ out%d", (g->n_in || o) ? ", " : "", (int)p.dt[o], o);
    put(&b, ")\n{\n");
    const char *it = ity(p.fits32);
    put(&b, "    const %s tid = (%s)(blockIdx.x * blockDim.x + threadIdx.x), nth = (%s)(gridDim.x * blockDim.x);\n", it, it,
        it);
    emit_ctx ec = {0};
    ec.ir = ir;
    ec.g = g;
    ec.gen = &p;
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
        emit_exprs(&b, &ec);
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
    return finish(&b, cg);
}

/* ---------------------------------------------------------------- anchors with hooks */

/* text of the offset of group load l / output value at a hook's (n, o, idx) */
typedef struct hook_gen {
    const gcr_ir *ir;
    const gcr_meta *accm;  /* anchor result meta: idx is an offset in its dense layout */
    gcr_kind kind;
    const int64_t *const *lst; /* per load: strides over the group space */
    int main_load;         /* prologue: the load the anchor itself reads (v), -1 */
    int first_param;       /* param index of load 0 */
} hook_gen;

static bool same_strides(const int64_t *a, const gcr_meta *m)
{
    for (int d = 0; d < m->ndim; d++)
        if (m->shape[d] != 1 && a[d] != m->strides[d]) return false;
    return true;
}

/* offset over the anchor output's coordinates, recovered from idx (or n, o where the hook gives them) */
static void epi_offset(sb *b, const hook_gen *h, const int64_t *st)
{
    const gcr_meta *m = h->accm;
    if (same_strides(st, m)) {
        put(b, "idx");
        return;
    }
    put(b, "(0ll");
    for (int d = 0; d < m->ndim; d++) {
        if (st[d] == 0 || m->shape[d] == 1) continue;
        if ((h->kind == GCR_KIND_CONV || h->kind == GCR_KIND_POOL) && d == 0) put(b, " + n * %lldll", (long long)st[d]);
        else if ((h->kind == GCR_KIND_CONV || h->kind == GCR_KIND_POOL) && d == 1) put(b, " + o * %lldll", (long long)st[d]);
        else if (h->kind == GCR_KIND_MATMUL && d == m->ndim - 1) put(b, " + o * %lldll", (long long)st[d]);
        else
            put(b, " + ((idx / %lldll) %% %lldll) * %lldll", (long long)m->strides[d], (long long)m->shape[d], (long long)st[d]);
    }
    put(b, ")");
}

static void epi_load(sb *b, const emit_ctx *ec, int l)
{
    const hook_gen *h = ec->gen;
    put(b, "gcr_ld<%d>(g%d, ", (int)h->ir->values[ec->g->in[l].value].m.dtype, h->first_param + l);
    epi_offset(b, h, ec->g->in[l].strides);
    put(b, ", 0.0f)");
}

/* prologue loads other than the anchor's own input depend only on (n, c) */
static void pro_offset(sb *b, const hook_gen *h, const int64_t *st, int nd)
{
    put(b, "(0ll");
    for (int d = 0; d < nd; d++) {
        if (st[d] == 0) continue;
        if (h->kind == GCR_KIND_MATMUL) put(b, " + c * %lldll", (long long)st[d]); /* only the last dim varies */
        else put(b, " + %s * %lldll", d == 0 ? "n" : "c", (long long)st[d]);
    }
    put(b, ")");
}

static void pro_load(sb *b, const emit_ctx *ec, int l)
{
    const hook_gen *h = ec->gen;
    if (l == h->main_load) {
        put(b, "v");
        return;
    }
    put(b, "gcr_ld<%d>(g%d, ", (int)h->ir->values[ec->g->in[l].value].m.dtype, h->first_param + l);
    pro_offset(b, h, ec->g->in[l].strides, ec->g->space.ndim);
    put(b, ", 0.0f)");
}

/* the loads of a prologue may vary only along (n, c) for conv/pool, the last dim for matmul */
static bool pro_load_ok(gcr_kind kind, const int64_t *st, const gcr_meta *space)
{
    for (int d = 0; d < space->ndim; d++) {
        if (st[d] == 0 || space->shape[d] == 1) continue;
        if (kind == GCR_KIND_MATMUL ? d != space->ndim - 1 : d > 1) return false;
    }
    return true;
}

static void put_extra_decl(sb *b, const gcr_ir *ir, const gcr_cg_kernel *cg, bool with_types)
{
    for (int i = 0; i < cg->n_params; i++) {
        gcr_dtype dt = ir->values[cg->params[i]].m.dtype;
        if (with_types) put(b, ", gcr_ty<%d>::t *__restrict__ g%d", (int)dt, i);
        else put(b, ", g%d", i);
    }
}

static gcr_status gen_hooked(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_node *A = &ir->nodes[K->anchor];
    gcr_kind kind = gcr_op_table[A->op].kind;
    const gcr_value *acc = &ir->values[K->acc_value];
    for (int j = 1; j < GCR_MAX_ANCHOR_IN; j++)
        if (K->pro[j]) return unsupported(cg, "%s: a prologue on %s input %d (the kernel hooks only input 0)", K->name,
                                          gcr_op_table[A->op].name, j);
    if (kind == GCR_KIND_POOL && K->pro[0])
        return unsupported(cg, "%s: a prologue on a pool (its padding reads the raw input)", K->name);
    if (A->op == GCR_OP_MATMUL && K->pro[0] && ir->values[A->in[0]].m.ndim < 2)
        return unsupported(cg, "%s: a prologue on a 1-d matmul operand", K->name);
    cg->type = GCR_CG_HOOKED;
    cg->x_value = -1;
    fn_name(K, cg->fn, sizeof cg->fn);
    hook_gen h = {ir, &acc->m, kind, NULL, -1, 0};
    sb b = {0};
    put(&b, "/* %s: hooks of the %s kernel */\n#include \"common.cuh\"\n", K->name, gcr_op_table[A->op].name);
    const gcr_group *pg = K->pro[0], *eg = &K->epi;
    /* parameters: prologue loads, epilogue loads, epilogue outputs */
    int pro_first = cg->n_params;
    if (pg) {
        if (pg->n_out != 1) return unsupported(cg, "%s: a prologue with %d results", K->name, pg->n_out);
        gcr_dtype udt = ir->values[pg->out[0].value].m.dtype;
        int main = -1;
        for (int pass = 0; pass < 2 && main < 0; pass++)
            for (int l = 0; l < pg->n_in && main < 0; l++) {
                const gcr_value *x = &ir->values[pg->in[l].value];
                if (x->m.dtype != udt || !gcr_meta_same_shape(&x->m, &pg->space) || !same_strides(pg->in[l].strides, &x->m))
                    continue;
                if (pass == 0 && pro_load_ok(kind, pg->in[l].strides, &pg->space)) continue; /* prefer the full-size one */
                main = l;
            }
        if (main < 0) return unsupported(cg, "%s: no prologue load can stand for the anchor's input", K->name);
        for (int l = 0; l < pg->n_in; l++)
            if (l != main && !pro_load_ok(kind, pg->in[l].strides, &pg->space))
                return unsupported(cg, "%s: prologue load %d varies along more than the hooked coordinates", K->name, l);
        cg->x_value = pg->in[main].value;
        h.main_load = main;
        for (int l = 0; l < pg->n_in; l++)
            if (add_param(cg, pg->in[l].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
    }
    int epi_first = cg->n_params;
    bool has_epi = eg->n_expr > 0;
    if (has_epi) {
        if (eg->n_out < 1) return unsupported(cg, "%s: an epilogue with no output", K->name);
        if (eg->space.ndim != acc->m.ndim || !gcr_meta_same_shape(&eg->space, &acc->m))
            return unsupported(cg, "%s: the epilogue's space differs from the anchor's result", K->name);
        for (int l = 0; l < eg->n_in; l++)
            if (add_param(cg, eg->in[l].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
        for (int o = 0; o < eg->n_out; o++) {
            const gcr_value *v = &ir->values[eg->out[o].value];
            if (!gcr_meta_same_shape(&v->m, &acc->m)) return unsupported(cg, "%s: output %d's shape differs", K->name, o);
            if (add_param(cg, eg->out[o].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
        }
        cg->out_value = eg->out[0].value;
    } else {
        cg->out_value = K->acc_value;
    }
    if (cg->n_params > GCR_CUDA_HOOK_PARAMS)
        return unsupported(cg, "%s: %d extra parameters (the launcher takes %d)", K->name, cg->n_params, GCR_CUDA_HOOK_PARAMS);
    /* the extra parameters are typed by value, loads const-less (one declaration list for both) */
    put(&b, "#define GCR_EXTRA_PARAMS ");
    put_extra_decl(&b, ir, cg, true);
    put(&b, "\n");
    emit_ctx ec = {0};
    ec.ir = ir;
    ec.gen = &h;
    if (pg) {
        h.first_param = pro_first;
        put(&b, "__device__ __forceinline__ float %s_pro(float v, long long n, long long c", cg->fn);
        put_extra_decl(&b, ir, cg, true);
        put(&b, ")\n{\n    (void)n; (void)c;\n");
        ec.g = pg;
        ec.load = pro_load;
        ec.ind = "    ";
        emit_exprs(&b, &ec);
        put(&b, "    return e%d;\n}\n", pg->out[0].expr);
        put(&b, "#define GCR_PROLOGUE(v, n, c) %s_pro((v), (n), (c)", cg->fn);
        put_extra_decl(&b, ir, cg, false);
        put(&b, ")\n");
    }
    if (has_epi) {
        h.first_param = epi_first;
        put(&b, "__device__ __forceinline__ void %s_epi(float accv, long long n, long long o, long long idx", cg->fn);
        put_extra_decl(&b, ir, cg, true);
        put(&b, ")\n{\n    (void)n; (void)o;\n");
        ec.g = eg;
        ec.load = epi_load;
        ec.acc = "accv";
        ec.acc_dtype = acc->m.dtype;
        ec.ind = "    ";
        emit_exprs(&b, &ec);
        for (int o = 0; o < eg->n_out; o++) {
            const gcr_value *v = &ir->values[eg->out[o].value];
            put(&b, "    gcr_st<%d>(g%d, ", (int)v->m.dtype, epi_first + eg->n_in + o);
            epi_offset(&b, &h, v->m.strides);
            put(&b, ", e%d);\n", eg->out[o].expr);
        }
        put(&b, "}\n");
        bool has_bias = (kind == GCR_KIND_CONV || A->op == GCR_OP_LINEAR) && A->n_in > 2 && A->in[2] >= 0;
        put(&b, "#define GCR_EPILOGUE(acc, n, o, idx) %s_epi((acc)%s, (n), (o), (idx)", cg->fn,
            has_bias ? " + gcr_dn_ld(bias, (o))" : "");
        put_extra_decl(&b, ir, cg, false);
        put(&b, ")\n");
    }
    return finish(&b, cg);
}

/* ---------------------------------------------------------------- reductions */

typedef struct red_gen {
    const gcr_ir *ir;
    int first_param;   /* param index of load 0 of the group being written */
    const char *xname[GCR_MAX_DIMS]; /* coordinate text per space dim */
} red_gen;

static void red_load(sb *b, const emit_ctx *ec, int l)
{
    const red_gen *r = ec->gen;
    const int64_t *st = ec->g->in[l].strides;
    put(b, "gcr_ld<%d>(g%d, (0", (int)r->ir->values[ec->g->in[l].value].m.dtype, r->first_param + l);
    for (int d = 0; d < ec->g->space.ndim; d++)
        if (st[d] && ec->g->space.shape[d] != 1) put(b, " + (long long)%s * %lldll", r->xname[d], (long long)st[d]);
    put(b, "), 0.0f)");
}

static gcr_status gen_reduce(const gcr_ir *ir, const gcr_kernel *K, gcr_cg_kernel *cg)
{
    const gcr_node *A = &ir->nodes[K->anchor];
    const gcr_value *xin = &ir->values[A->in[0]], *acc = &ir->values[K->acc_value];
    const gcr_meta *xm = &xin->m;
    for (int j = 1; j < GCR_MAX_ANCHOR_IN; j++)
        if (K->pro[j]) return unsupported(cg, "%s: a prologue on reduction input %d", K->name, j);
    int nd = xm->ndim;
    gcr_resolved r;
    char err[256];
    if (gcr_resolve(A->op, &A->p, xm, &r, err, sizeof err) != GCR_OK) return unsupported(cg, "%s: %s", K->name, err);
    const bool *red = r.red;
    int64_t R = 1, M = 1;
    for (int d = 0; d < nd; d++) {
        if (red[d]) R *= xm->shape[d];
        else M *= xm->shape[d];
    }
    if (R <= 0 || M <= 0) return unsupported(cg, "%s: an empty reduction", K->name);
    const gcr_group *pg = K->pro[0], *eg = &K->epi;
    bool has_epi = eg->n_expr > 0;
    if (has_epi && (eg->n_out < 1 || !gcr_meta_same_shape(&eg->space, &acc->m)))
        return unsupported(cg, "%s: the epilogue's space differs from the reduction's result", K->name);
    if (pg && (pg->n_out != 1 || !gcr_meta_same_shape(&pg->space, xm)))
        return unsupported(cg, "%s: the prologue's space differs from the reduction's input", K->name);
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
    const char *it = ity(fits32);

    cg->type = GCR_CG_OWN;
    fn_name(K, cg->fn, sizeof cg->fn);
    /* parameters: input (or prologue loads), epilogue loads, outputs */
    int pro_first = cg->n_params;
    if (pg) {
        for (int l = 0; l < pg->n_in; l++)
            if (add_param(cg, pg->in[l].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
    } else if (add_param(cg, A->in[0]) < 0) return unsupported(cg, "%s: too many operands", K->name);
    int epi_first = cg->n_params;
    int n_out = has_epi ? eg->n_out : 1;
    if (has_epi)
        for (int l = 0; l < eg->n_in; l++)
            if (add_param(cg, eg->in[l].value) < 0) return unsupported(cg, "%s: too many operands", K->name);
    int out_first = cg->n_params;
    for (int o = 0; o < n_out; o++)
        if (add_param(cg, has_epi ? eg->out[o].value : K->acc_value) < 0)
            return unsupported(cg, "%s: too many operands", K->name);
    cg->block = per_block ? (unsigned)B : (unsigned)(32 * S);
    cg->rows = per_block ? M : (M + 31) / 32; /* blocks */
    cg->threads = 0;

    sb b = {0};
    put(&b, "/* %s: %s of %lld rows x %lld elements, %s */\n", K->name, gcr_op_table[A->op].name, (long long)M,
        (long long)R, per_block ? "a block per row" : "32 rows x slices per block");
    put(&b, "extern \"C\" __global__ void __launch_bounds__(%u) %s(", cg->block, cg->fn);
    for (int i = 0; i < cg->n_params; i++) {
        gcr_dtype dt = ir->values[cg->params[i]].m.dtype;
        put(&b, "%s%sgcr_ty<%d>::t *__restrict__ g%d", i ? ", " : "", i < out_first ? "const " : "", (int)dt, i);
    }
    put(&b, ")\n{\n");
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
    emit_ctx ec = {0};
    ec.ir = ir;
    if (pg) {
        rg.first_param = pro_first;
        ec.gen = &rg;
        ec.g = pg;
        ec.load = red_load;
        ec.ind = "            ";
        emit_exprs(&b, &ec);
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
        put_float(&b, (float)R);
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
        ec.gen = &eg_rg;
        eg_rg.first_param = epi_first;
        ec.g = eg;
        ec.load = red_load;
        ec.acc = "acc";
        ec.acc_dtype = om->dtype;
        ec.ind = "        ";
        emit_exprs(&b, &ec);
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
    return finish(&b, cg);
}

/* ---------------------------------------------------------------- entry points */

gcr_status gcr_codegen_kernel(const gcr_ir *ir, int k, gcr_cg_kernel *cg)
{
    memset(cg, 0, sizeof *cg);
    cg->x_value = cg->out_value = -1;
    const gcr_kernel *K = &ir->kernels[k];
    if (K->type != GCR_K_FUSED) return unsupported(cg, "%s: not a fused kernel", K->name);
    if (K->anchor < 0) return gen_pointwise(ir, K, cg);
    switch (gcr_op_table[ir->nodes[K->anchor].op].kind) {
    case GCR_KIND_CONV:
    case GCR_KIND_MATMUL:
    case GCR_KIND_POOL: return gen_hooked(ir, K, cg);
    case GCR_KIND_REDUCE: return gen_reduce(ir, K, cg);
    default: return unsupported(cg, "%s: no code generator for anchor %s", K->name, gcr_op_table[ir->nodes[K->anchor].op].name);
    }
}

void gcr_cg_kernel_free(gcr_cg_kernel *cg)
{
    if (!cg) return;
    free(cg->src);
    cg->src = NULL;
}

char *gcr_codegen_program(const gcr_cg_kernel *cgs, int n)
{
    sb b = {0};
    put(&b, "/* generated by gcr codegen: the fused kernels of one graph variant */\n");
    put(&b, "#include \"common.cuh\"\n#include \"fused_reduce.cuh\"\n\n");
    for (int i = 0; i < n; i++)
        if (cgs[i].type == GCR_CG_OWN && cgs[i].src) put(&b, "%s", cgs[i].src);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
