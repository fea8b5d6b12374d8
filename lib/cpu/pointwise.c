/* pointwise.c — CPU kernels of every POINTWISE op (unary, binary with broadcasting or a scalar,
 * clamp, batch_norm, cast). The math is gcr_pw_eval(), the op table's own formula, always in f32.
 *
 * One N-d iterator (iter.h) walks out's shape with broadcast strides for each input; dims that
 * are dense for everyone merge, so same-layout operands become one flat row. Rows are computed
 * in chunks: f32 operands are read and written in place, f16/bf16 ones go through small f32
 * staging buffers on the stack, so no call allocates. Scalars, broadcast-within-row operands and
 * missing optional inputs (batch_norm gamma/beta) are stride-0 operands. */
#include "cpu.h"
#include "iter.h"
#include "../pw_eval.h"

#define PW_IN 5      /* a..e of the formula */
#define PW_CHUNK 256 /* elements staged at a time */

/* o[i*so] = f(in[k][i*s[k]]) for i < n, with op a constant after inlining so the switch in
 * gcr_pw_eval folds away. The common dense shapes (a and maybe b unit-stride, the rest
 * constant along the row) get loops with compile-time strides, split at a multiple of 8 so
 * that gcc's -O2 (very-cheap cost model, no epilogues) vectorises the main part. */
#define PW_UNIT(OP, B)                                                                           \
    do {                                                                                         \
        const float vc = *c, vd = *d, ve = *e;                                                   \
        int64_t m = n & ~(int64_t)7;                                                             \
        for (int64_t i = 0; i < m; i++) o[i] = gcr_pw_eval(OP, a[i], B, vc, vd, ve, p0, p1);     \
        for (int64_t i = m; i < n; i++) o[i] = gcr_pw_eval(OP, a[i], B, vc, vd, ve, p0, p1);     \
    } while (0)
#define PW_LOOP(OP)                                                                              \
    do {                                                                                         \
        if (unit && sb == 1) {                                                                   \
            PW_UNIT(OP, b[i]);                                                                   \
        } else if (unit && sb == 0) {                                                            \
            const float vb = *b;                                                                 \
            PW_UNIT(OP, vb);                                                                     \
        } else {                                                                                 \
            for (int64_t i = 0; i < n; i++)                                                      \
                o[i * so] = gcr_pw_eval(OP, a[i * sa], b[i * sb], c[i * sc], d[i * sd], e[i * se], p0, p1); \
        }                                                                                        \
    } while (0)

static void pw_row_f32(gcr_op op, int64_t n, float *restrict o, int64_t so, const float *const in[PW_IN],
                       const int64_t s[PW_IN], float p0, float p1)
{
    const float *a = in[0], *b = in[1], *c = in[2], *d = in[3], *e = in[4];
    int64_t sa = s[0], sb = s[1], sc = s[2], sd = s[3], se = s[4];
    int unit = so == 1 && sa == 1 && sc == 0 && sd == 0 && se == 0;
    switch (op) {
#define X(E, name, arity, kind, expr) case GCR_OP_##E: PW_LOOP(GCR_OP_##E); break;
#include "../ops.def"
#undef X
    default: break;
    }
}

/* ---------------------------------------------------------------- cast */

static bool is_int(gcr_dtype t) { return t == GCR_I32 || t == GCR_I64 || t == GCR_BOOL; }

static int64_t load_i64(const void *p, gcr_dtype t, int64_t i)
{
    switch (t) {
    case GCR_I32: return ((const int32_t *)p)[i];
    case GCR_I64: return ((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i] != 0;
    }
}

static void store_i64(void *p, gcr_dtype t, int64_t i, int64_t v)
{
    switch (t) {
    case GCR_I32: ((int32_t *)p)[i] = (int32_t)v; break; /* wraps, as C and PyTorch do */
    case GCR_I64: ((int64_t *)p)[i] = v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

/* Any dtype to any: same dtype copies bits; integer/bool to integer/bool goes through int64
 * (exact); anything involving a float goes through f32, which truncates toward zero and
 * saturates for float to int (gcr_store_f32). */
static void cast(const gcr_tensor *x, gcr_tensor *out)
{
    gcr_dtype ti = x->m.dtype, to = out->m.dtype;
    size_t es = gcr_dtype_size(ti);
    const char *src = gcr_tensor_data(x);
    char *dst = gcr_tensor_data(out);
    int64_t st[2][GCR_MAX_DIMS];
    for (int d = 0; d < out->m.ndim; d++) {
        st[0][d] = out->m.strides[d];
        st[1][d] = x->m.strides[d];
    }
    gcr_iter it;
    if (gcr_iter_init(&it, out->m.ndim, out->m.shape, 2, (const int64_t(*)[GCR_MAX_DIMS])st) == 0) return;
    do {
        int64_t oo = it.off[0], io = it.off[1], so = it.inner[0], si = it.inner[1];
        if (ti == to) {
            for (int64_t i = 0; i < it.n; i++) memcpy(dst + (oo + i * so) * es, src + (io + i * si) * es, es);
        } else if (is_int(ti) && is_int(to)) {
            for (int64_t i = 0; i < it.n; i++) store_i64(dst, to, oo + i * so, load_i64(src, ti, io + i * si));
        } else {
            for (int64_t i = 0; i < it.n; i++) gcr_store_f32(dst, to, oo + i * so, gcr_load_f32(src, ti, io + i * si));
        }
    } while (gcr_iter_next(&it));
}

/* ---------------------------------------------------------------- math ops */

gcr_status gcr_cpu_pointwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    GCR_ASSERT(ctx, gcr_op_table[c->op].kind == GCR_KIND_POINTWISE && c->in[0]);
    if (c->op == GCR_OP_CAST) {
        cast(c->in[0], out);
        return GCR_OK;
    }

    const gcr_meta *om = &out->m;
    int nd = om->ndim;
    /* operand 0 is out; operands 1..5 the inputs a..e (stride 0 everywhere when constant) */
    int64_t st[1 + PW_IN][GCR_MAX_DIMS]; /* [operand][dim] element strides over out's shape */
    const void *base[PW_IN];
    gcr_dtype dt[PW_IN];
    float cst[PW_IN]; /* value of a constant operand */
    bool is_cst[PW_IN];
    for (int d = 0; d < nd; d++) st[0][d] = om->strides[d];
    int arity = gcr_op_table[c->op].arity;
    for (int k = 0; k < PW_IN; k++) {
        const gcr_tensor *t = k < c->n_in ? c->in[k] : NULL;
        is_cst[k] = !t;
        cst[k] = 0.0f;
        base[k] = NULL;
        dt[k] = GCR_F32;
        if (t) {
            GCR_ASSERT(ctx, gcr_dtype_is_float(t->m.dtype));
            base[k] = gcr_tensor_data(t);
            dt[k] = t->m.dtype;
            gcr_bcast_strides(c->op, k, &t->m, om, st[1 + k]);
        } else {
            if (k == 1 && c->p.has_scalar) cst[k] = c->p.f[0];
            else if (k < arity) cst[k] = gcr_op_missing_input(c->op, k);
            for (int d = 0; d < nd; d++) st[1 + k][d] = 0;
        }
    }
    float p0 = c->p.f[0], p1 = c->p.f[1];
    void *obase = gcr_tensor_data(out);
    gcr_dtype odt = om->dtype;

    gcr_iter it;
    if (gcr_iter_init(&it, nd, om->shape, 1 + PW_IN, (const int64_t(*)[GCR_MAX_DIMS])st) == 0) return GCR_OK;
    float stage[PW_IN][PW_CHUNK], ostage[PW_CHUNK]; /* f32 copies of non-f32 rows, 6 KiB on the stack */
    do {
        for (int64_t j = 0; j < it.n; j += PW_CHUNK) {
            int64_t n = it.n - j < PW_CHUNK ? it.n - j : PW_CHUNK;
            const float *in[PW_IN];
            int64_t s[PW_IN];
            for (int k = 0; k < PW_IN; k++) {
                int64_t si = it.inner[1 + k], off = it.off[1 + k] + j * si;
                if (is_cst[k]) {
                    in[k] = &cst[k];
                    s[k] = 0;
                } else if (dt[k] == GCR_F32) {
                    in[k] = (const float *)base[k] + off;
                    s[k] = si;
                } else if (si == 0) { /* broadcast along the row: convert once */
                    gcr_load_f32_n(stage[k], 1, base[k], dt[k], off, 0, 1);
                    in[k] = stage[k];
                    s[k] = 0;
                } else {
                    gcr_load_f32_n(stage[k], 1, base[k], dt[k], off, si, n);
                    in[k] = stage[k];
                    s[k] = 1;
                }
            }
            int64_t so = it.inner[0], ooff = it.off[0] + j * so;
            if (odt == GCR_F32) {
                pw_row_f32(c->op, n, (float *)obase + ooff, so, in, s, p0, p1);
            } else {
                pw_row_f32(c->op, n, ostage, 1, in, s, p0, p1);
                gcr_store_f32_n(obase, odt, ooff, so, ostage, 1, n);
            }
        }
    } while (gcr_iter_next(&it));
    return GCR_OK;
}
