/* reduce.c — eager SUM/MEAN/MAX on the GPU (kernels/reduce.cuh). The input splits into the kept
 * dims (row-major, the result's order) and the reduced dims (sorted by input stride so that the
 * threads of one row read neighbouring elements); each side is collapsed. Rows of up to 16
 * elements get a thread each, rows up to 2048 a warp, longer rows a block. */
#include "cuda_ops.h"
#include <math.h>
#include <stdio.h>

#define BLOCK 256

/* Slots of st->red[op][dtype]: a reduction op or dtype without a slot of its own is refused, never
 * run with another's kernels. */
static int red_op_slot(gcr_op op)
{
    _Static_assert(sizeof(((gcr_cuda_state *)0)->red) / sizeof(((gcr_cuda_state *)0)->red[0]) == 3,
                   "st->red has a row per reduction op below");
    return op == GCR_OP_SUM ? GCR_RED_SUM : op == GCR_OP_MEAN ? GCR_RED_MEAN : op == GCR_OP_MAX ? GCR_RED_MAX : -1;
}

static int red_dtype_slot(gcr_dtype dt)
{
    _Static_assert(sizeof(((gcr_cuda_state *)0)->red[0]) / sizeof(((gcr_cuda_state *)0)->red[0][0]) == 3,
                   "st->red has a column per dtype below");
    return dt == GCR_F32 ? 0 : dt == GCR_F16 ? 1 : dt == GCR_BF16 ? 2 : -1;
}

/* kernels of one (op, dtype) program, compiled on first use: 1, 32, 256, part, fin */
static gcr_status load_kernels(gcr_ctx *ctx, gcr_cuda_state *st, int op, int dt)
{
    static const gcr_dtype dts[3] = {GCR_F32, GCR_F16, GCR_BF16};
    static const char *const names[5] = {"gcr_reduce_1", "gcr_reduce_32", "gcr_reduce_256", "gcr_reduce_part", "gcr_reduce_fin"};
    char src[128];
    snprintf(src, sizeof src, "#define GCR_RED_OP %d\n#define GCR_RED_T %d\n#include \"reduce.cuh\"\n", op, (int)dts[dt]);
    return gcr_cuda_program(ctx, src, names, 5, st->red[op][dt]);
}

gcr_status gcr_cuda_reduce(gcr_ctx *ctx, const gcr_call *c, gcr_tensor *out)
{
    gcr_cuda_state *st = gcr_cuda_st(ctx);
    const gcr_tensor *x = c->in[0];
    const gcr_meta *xm = &x->m;
    GCR_ASSERT(ctx, gcr_op_table[c->op].kind == GCR_KIND_REDUCE && gcr_dtype_is_float(xm->dtype));
    GCR_ASSERT(ctx, gcr_meta_is_contiguous(&out->m) && xm->dtype == out->m.dtype);
    gcr_resolved r;
    char err[256];
    GCR_CHECK(ctx, gcr_resolve(c->op, &c->p, xm, &r, err, sizeof err) == GCR_OK, GCR_ERR_INTERNAL, "cuda: %s", err);
    const bool *red = r.red;

    /* kept dims: operand 0 = row-major strides of the result over them, operand 1 = input */
    int64_t osh[GCR_MAX_DIMS], ost[2][GCR_MAX_DIMS], rsh[GCR_MAX_DIMS], rst[1][GCR_MAX_DIMS];
    int no = 0, nr = 0;
    int64_t n_out = 1, n_red = 1;
    for (int d = 0; d < xm->ndim; d++) {
        if (red[d]) {
            rsh[nr] = xm->shape[d];
            rst[0][nr++] = xm->strides[d];
            n_red *= xm->shape[d];
        } else {
            osh[no] = xm->shape[d];
            ost[1][no++] = xm->strides[d];
            n_out *= xm->shape[d];
        }
    }
    int64_t s = 1;
    for (int i = no - 1; i >= 0; i--) {
        ost[0][i] = s;
        s *= osh[i];
    }
    no = gcr_cuda_collapse(no, osh, 2, ost);
    nr = gcr_cuda_collapse(nr, rsh, 1, rst);

    struct gcr_red_args a;
    memset(&a, 0, sizeof a);
    a.out = gcr_tensor_data(out);
    a.in = gcr_tensor_data(x);
    a.n_out = n_out;
    a.n_red = n_red;
    a.nd_out = no;
    a.nd_red = nr;
    for (int i = 0; i < no; i++) {
        a.oshape[i] = osh[i];
        a.ost[i] = ost[1][i];
    }
    for (int i = 0; i < nr; i++) {
        a.rshape[i] = rsh[i];
        a.rst[i] = rst[0][i];
    }
    if (nr == 0) { /* nothing (or only size-1 dims) reduced: one element per row */
        a.nd_red = 1;
        a.rshape[0] = 1;
        a.rst[0] = 0;
    }
    a.scale = c->op == GCR_OP_MEAN ? (n_red ? 1.0 / (double)n_red : NAN) : 1.0;
    int op = red_op_slot(c->op), dt = red_dtype_slot(xm->dtype);
    GCR_CHECK(ctx, op >= 0 && dt >= 0, GCR_ERR_INTERNAL, "cuda %s: no reduce kernel slot for dtype %s",
              gcr_op_table[c->op].name, gcr_dtype_name(xm->dtype));
    if (!st->red[op][dt][0]) GCR_TRY(load_kernels(ctx, st, op, dt));
    void *args[] = {&a};
    if (n_red > 16384 && n_out < st->sm_count) {
        /* few long rows: a block per row would leave most of the device idle; split rows */
        int64_t splits = (n_red + 8191) / 8192, cap = 4 * (int64_t)st->sm_count / n_out;
        if (splits > cap) splits = cap > 1 ? cap : 2;
        if (splits * n_out > GCR_CUDA_RED_PARTS) splits = GCR_CUDA_RED_PARTS / n_out; /* > 1: n_out < SMs */
        a.splits = splits;
        a.chunk = (n_red + splits - 1) / splits;
        /* the partials in the ctx's persistent scratch, not a block of the allocator: inside a
         * graph's capture the block would go back to the cache and to a later tensor, which each
         * replay would then overwrite */
        GCR_TRY(gcr_cuda_reduce_ws(ctx, &a.part));
        GCR_TRY(gcr_cuda_launch(ctx, st->red[op][dt][3], gcr_cuda_grid(ctx, n_out * splits * BLOCK, BLOCK), 1, 1, BLOCK, 1,
                                1, 0, args));
        return gcr_cuda_launch(ctx, st->red[op][dt][4], gcr_cuda_grid(ctx, n_out * 32, BLOCK), 1, 1, BLOCK, 1, 1, 0, args);
    }
    int g = n_red <= 16 ? 0 : n_red <= 2048 ? 1 : 2;
    static const int gsize[3] = {1, 32, 256};
    return gcr_cuda_launch(ctx, st->red[op][dt][g], gcr_cuda_grid(ctx, n_out * gsize[g], BLOCK), 1, 1, BLOCK, 1, 1, 0,
                           args);
}
