/* pointwise.c — eager pointwise ops on the GPU. The kernel of an op is generated from its formula
 * in the op table (gcr_op_table[op].expr) around kernels/pointwise.cuh, one program per (op,
 * operand dtypes, scalar/missing operands), found after first use in a per-ctx uthash on a packed
 * 64-bit key (gcr_cuda_pw_key), so the hot path builds no strings. Each call first sorts dims into out's memory
 * order and merges dims that are dense for every operand (gcr_cuda_collapse): same-layout
 * operands then form one flat run and take the flat (vectorised when aligned) kernel, anything
 * else the N-d strided kernel. */
#include "cuda_ops.h"
#include <stdio.h>
#include <stdlib.h>
#include "../hash.h"

#define NIN GCR_PW_NIN /* formula inputs a..e, as the kernels' argument blocks (kernels/abi.h) hold */
#define BLOCK 256

typedef struct gcr_cuda_pw_entry {
    uint64_t key;
    gcr_cuda_fn *k[3]; /* vec, flat, nd */
    int vec;          /* elements per access of k[0] (1: no vector kernel) */
    UT_hash_handle hh;
} pw_entry;

int gcr_cuda_divs_init(gcr_divs *dv, int nd, const int64_t *shape, int64_t n)
{
    memset(dv, 0, sizeof *dv);
    if (n >= ((int64_t)1 << 31)) return 0;
    for (int i = 0; i < nd; i++) {
        uint64_t d = (uint64_t)shape[i];
        if (d < 1 || d >= ((uint64_t)1 << 31)) return 0;
        unsigned sh = 0;
        while (((uint64_t)1 << sh) < d) sh++;
        dv->shift[i] = sh;
        dv->magic[i] = (unsigned)((((uint64_t)1 << 32) * (((uint64_t)1 << sh) - d)) / d + 1);
    }
    return 1;
}

unsigned gcr_cuda_grid(gcr_ctx *ctx, int64_t work, unsigned block)
{
    int64_t g = (work + block - 1) / block, cap = (int64_t)gcr_cuda_st(ctx)->sm_count * 2048 / block * 4;
    if (g > cap) g = cap; /* grid-stride beyond a few waves: fills the device, nothing more */
    return g < 1 ? 1 : (unsigned)g;
}

static bool is_int(int t) { return t == GCR_I32 || t == GCR_I64 || t == GCR_BOOL; }

/* Operand description of one call: dtype per input (-1 none), constants for non-tensors. */
typedef struct pw_desc {
    int op, to, ti[NIN], has_scalar;
    float val[NIN];
} pw_desc;

/* Key fields, low bits first: op, scalar flag, output dtype, then per input its dtype + 1 (0: not
 * a tensor). A field too narrow for its values would let two kernels share a key, and the later
 * call would silently run the other's code: the asserts tie the widths to the enums. */
#define KEY_OP_BITS 16
#define KEY_DT_BITS 4
_Static_assert(GCR_OP_COUNT <= 1 << KEY_OP_BITS, "op ids must fit the pointwise kernel key");
_Static_assert(GCR_DTYPE_COUNT + 1 <= 1 << KEY_DT_BITS, "dtypes and 'none' must fit the pointwise kernel key");
_Static_assert(KEY_OP_BITS + 1 + KEY_DT_BITS * (1 + NIN) <= 64, "the pointwise kernel key must fit 64 bits");

uint64_t gcr_cuda_pw_key(int op, gcr_dtype to, const int *ti, int has_scalar)
{
    uint64_t k = (uint64_t)op & ((1u << KEY_OP_BITS) - 1);
    int at = KEY_OP_BITS;
    k |= (uint64_t)(has_scalar != 0) << at++;
    k |= (uint64_t)to << at;
    for (int i = 0; i < NIN; i++) k |= (uint64_t)(ti[i] + 1) << (at += KEY_DT_BITS);
    return k;
}

static uint64_t desc_key(const pw_desc *d) { return gcr_cuda_pw_key(d->op, d->to, d->ti, d->has_scalar); }

static int desc_int_cast(const pw_desc *d) { return d->op == GCR_OP_CAST && is_int(d->to) && is_int(d->ti[0]); }

static int desc_vec(const pw_desc *d)
{
    if (desc_int_cast(d)) return 1;
    size_t w = gcr_dtype_size(d->to);
    for (int i = 0; i < NIN; i++)
        if (d->ti[i] >= 0 && gcr_dtype_size(d->ti[i]) > w) w = gcr_dtype_size(d->ti[i]);
    return (int)(16 / w);
}

/* The program text of d: the op table's formula of d->op around kernels/pointwise.cuh. */
static int desc_source(const pw_desc *d, int vec, char *src, size_t cap)
{
    int n = snprintf(src, cap, "#define GCR_EXPR (%s)\n#define GCR_TO %d\n#define GCR_VEC %d\n#define GCR_INT_CAST %d\n",
                     gcr_op_table[d->op].expr, d->to, vec, desc_int_cast(d));
    for (int i = 0; i < NIN && n < (int)cap; i++) {
        n += snprintf(src + n, cap - (size_t)n, "#define GCR_T%c %d\n", 'A' + i, d->ti[i]);
        if (d->ti[i] < 0 && n < (int)cap) {
            if (i == 1 && d->has_scalar) n += snprintf(src + n, cap - (size_t)n, "#define GCR_VAL_B s\n");
            else n += snprintf(src + n, cap - (size_t)n, "#define GCR_VAL_%c ((float)(%.9g))\n", 'A' + i, d->val[i]);
        }
    }
    if (n < (int)cap) n += snprintf(src + n, cap - (size_t)n, "#include \"pointwise.cuh\"\n");
    return n;
}

/* Fills d for an op whose input i has dtype ti[i] (-1: none given). */
static void desc_fill(pw_desc *d, gcr_op op, gcr_dtype to, const int *ti, int has_scalar)
{
    memset(d, 0, sizeof *d);
    d->op = op;
    d->to = to;
    d->has_scalar = has_scalar;
    int arity = gcr_op_table[op].arity;
    for (int i = 0; i < NIN; i++) {
        d->ti[i] = ti[i];
        if (ti[i] < 0 && i < arity && !(i == 1 && has_scalar)) d->val[i] = gcr_op_missing_input(op, i);
    }
}

int gcr_cuda_pw_source(char *buf, size_t n, gcr_op op, gcr_dtype to, const int *ti, int has_scalar)
{
    pw_desc d;
    desc_fill(&d, op, to, ti, has_scalar);
    return desc_source(&d, desc_vec(&d), buf, n);
}

static gcr_status build_entry(gcr_ctx *ctx, const pw_desc *d, pw_entry *e)
{
    char src[2048];
    int n = desc_source(d, e->vec, src, sizeof src);
    GCR_CHECK(ctx, n < (int)sizeof src, GCR_ERR_INTERNAL, "cuda pointwise: source for %s too long", gcr_op_table[d->op].name);
    static const char *const names[3] = {"gcr_pw_vec", "gcr_pw_flat", "gcr_pw_nd"};
    return gcr_cuda_program(ctx, src, names, 3, e->k);
}

/* Runs the formula of d over out's shape; in[i] NULL where d->ti[i] < 0. */
static gcr_status pw_launch(gcr_ctx *ctx, const pw_desc *d, gcr_tensor *const *in, gcr_tensor *out, const float *p,
                            pw_entry *e)
{
    const gcr_meta *om = &out->m;
    int64_t shape[GCR_MAX_DIMS], st[1 + NIN][GCR_MAX_DIMS];
    memset(st, 0, sizeof st);
    for (int i = 0; i < om->ndim; i++) {
        shape[i] = om->shape[i];
        st[0][i] = om->strides[i];
    }
    for (int i = 0; i < NIN; i++)
        if (in[i]) gcr_bcast_strides((gcr_op)d->op, i, &in[i]->m, om, st[1 + i]);
    int nd = gcr_cuda_collapse(om->ndim, shape, 1 + NIN, st);
    int64_t n = gcr_meta_numel(om);
    bool flat = nd == 0 || (nd == 1 && st[0][0] == 1);
    int bmask = 0;
    for (int i = 0; i < NIN && flat; i++) {
        if (!in[i]) continue;
        if (nd == 1 && st[1 + i][0] == 1) continue;
        if (nd == 0 || st[1 + i][0] == 0) bmask |= 1 << i;
        else flat = false;
    }
    if (flat) {
        struct gcr_pw_flat_args a;
        memset(&a, 0, sizeof a);
        a.out = gcr_tensor_data(out);
        for (int i = 0; i < NIN; i++) a.in[i] = in[i] ? gcr_tensor_data(in[i]) : NULL;
        a.n = n;
        a.p0 = p[0];
        a.p1 = p[1];
        a.s = p[2];
        a.bmask = bmask;
        bool vec = e->vec > 1 && n >= e->vec;
        size_t osz = gcr_dtype_size(om->dtype);
        vec = vec && ((uintptr_t)a.out % (osz * (size_t)e->vec)) == 0;
        for (int i = 0; i < NIN && vec; i++)
            if (in[i] && !(bmask >> i & 1))
                vec = ((uintptr_t)a.in[i] % (gcr_dtype_size(in[i]->m.dtype) * (size_t)e->vec)) == 0;
        void *args[] = {&a};
        int64_t work = vec ? n / e->vec : n;
        return gcr_cuda_launch(ctx, e->k[vec ? 0 : 1], gcr_cuda_grid(ctx, work, BLOCK), 1, 1, BLOCK, 1, 1, 0, args);
    }
    struct gcr_pw_nd_args a;
    memset(&a, 0, sizeof a);
    a.out = gcr_tensor_data(out);
    for (int i = 0; i < NIN; i++) a.in[i] = in[i] ? gcr_tensor_data(in[i]) : NULL;
    a.n = n;
    a.p0 = p[0];
    a.p1 = p[1];
    a.s = p[2];
    a.ndim = nd;
    a.fast = gcr_cuda_divs_init(&a.divs, nd, shape, n) && gcr_cuda_fits32(nd, shape, 1 + NIN, st);
    for (int i = 0; i < nd; i++) {
        a.shape[i] = shape[i];
        for (int k = 0; k < 1 + NIN; k++) a.st[k][i] = st[k][i];
    }
    void *args[] = {&a};
    return gcr_cuda_launch(ctx, e->k[2], gcr_cuda_grid(ctx, n, BLOCK), 1, 1, BLOCK, 1, 1, 0, args);
}

gcr_status gcr_cuda_pointwise(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    GCR_ASSERT(ctx, gcr_op_table[c->op].kind == GCR_KIND_POINTWISE && c->in[0]);
    pw_desc d;
    gcr_tensor *in[NIN] = {0};
    int ti[NIN];
    for (int i = 0; i < NIN; i++) {
        ti[i] = i < c->n_in && c->in[i] ? (int)c->in[i]->m.dtype : -1;
        if (ti[i] >= 0) in[i] = c->in[i];
    }
    desc_fill(&d, c->op, out->m.dtype, ti, c->p.has_scalar);
    uint64_t key = desc_key(&d);
    pw_entry *e = NULL;
    HASH_FIND(hh, st->pw, &key, sizeof key, e);
    if (!e) {
        e = calloc(1, sizeof *e);
        GCR_CHECK(ctx, e, GCR_ERR_OOM, "%s: out of host memory", gcr_op_table[c->op].name);
        e->key = key;
        e->vec = desc_vec(&d);
        gcr_status s = build_entry(ctx, &d, e);
        if (s != GCR_OK) {
            free(e);
            return s;
        }
        HASH_ADD(hh, st->pw, key, sizeof e->key, e);
        if (GCR_HASH_ADD_FAILED(e)) {
            free(e);
            return gcr_set_error(ctx, GCR_ERR_OOM, "%s: out of host memory caching its kernel", gcr_op_table[c->op].name);
        }
    }
    float p[3] = {c->p.f[0], c->p.f[1], c->p.f[0]};
    return pw_launch(ctx, &d, in, out, p, e);
}

void gcr_cuda_pointwise_fini(gcr_ctx *ctx)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    pw_entry *e, *tmp;
    HASH_ITER(hh, st->pw, e, tmp) {
        HASH_DEL(st->pw, e);
        free(e);
    }
}
