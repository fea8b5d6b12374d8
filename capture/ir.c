/* ir.c — the capture IR's storage: values and nodes as growable arrays, copies for variants,
 * consumer counts and the output list, and re-inference for a new input signature. */
#include "ir.h"
#include <stdlib.h>

gcr_ir *gcr_ir_new(gcr_ctx *ctx, void *owner)
{
    gcr_ir *ir = calloc(1, sizeof *ir);
    if (!ir) {
        gcr_set_error(ctx, GCR_ERR_OOM, "capture: out of host memory for a trace");
        return NULL;
    }
    ir->ctx = ctx;
    ir->owner = owner ? owner : ir;
    if (ctx->be) {
        ir->budget = ctx->be->operands;
        ir->convconv = ctx->be->convconv;
    }
    return ir;
}

static void kernels_free(gcr_ir *ir)
{
    for (int k = 0; k < ir->n_kernels; k++) {
        gcr_kernel *K = &ir->kernels[k];
        for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++) {
            if (!K->pro[j]) continue;
            free(K->pro[j]->in);
            free(K->pro[j]->expr);
            free(K->pro[j]->out);
            free(K->pro[j]);
        }
        free(K->epi.in);
        free(K->epi.expr);
        free(K->epi.out);
        free(K->nodes);
    }
    free(ir->kernels);
    ir->kernels = NULL;
    ir->n_kernels = 0;
}

void gcr_ir_pin_exts(gcr_ir *ir, int from, int to, bool pin)
{
    for (int v = from; v < to && v < ir->n_values; v++) {
        const gcr_value *x = &ir->values[v];
        if (!x->ext || (x->kind != GCR_V_INPUT && x->kind != GCR_V_CONST)) continue;
        if (pin) gcr_tensor_pin(x->ext);
        else gcr_tensor_unpin(x->ext);
    }
}

void gcr_ir_free(gcr_ir *ir)
{
    if (!ir) return;
    gcr_ir_pin_exts(ir, 0, ir->n_values, false); /* before the owned constants go: they are pinned too */
    kernels_free(ir);
    gcr_fuse_end(ir);
    free(ir->ext_slot);
    for (int i = 0; i < ir->n_owned; i++) gcr_tensor_destroy(ir->owned[i]);
    free(ir->owned);
    free(ir->values);
    free(ir->nodes);
    free(ir->inputs);
    free(ir->outputs);
    free(ir->cons_start);
    free(ir->cons);
    free(ir);
}

/* memcpy of n bytes where an empty trace's arrays may be NULL (memcpy from NULL is undefined even
 * for 0 bytes) */
static void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n) memcpy(dst, src, n);
}

gcr_ir *gcr_ir_copy(const gcr_ir *src)
{
    gcr_ir *ir = gcr_ir_new(src->ctx, src->owner);
    if (!ir) return NULL;
    ir->values = malloc(sizeof *ir->values * (size_t)(src->n_values ? src->n_values : 1));
    ir->nodes = malloc(sizeof *ir->nodes * (size_t)(src->n_nodes ? src->n_nodes : 1));
    ir->inputs = malloc(sizeof(int) * (size_t)(src->n_inputs ? src->n_inputs : 1));
    if (!ir->values || !ir->nodes || !ir->inputs) {
        gcr_ir_free(ir);
        gcr_set_error(src->ctx, GCR_ERR_OOM, "capture: out of host memory copying a trace");
        return NULL;
    }
    copy_bytes(ir->values, src->values, sizeof *ir->values * (size_t)src->n_values);
    copy_bytes(ir->nodes, src->nodes, sizeof *ir->nodes * (size_t)src->n_nodes);
    copy_bytes(ir->inputs, src->inputs, sizeof(int) * (size_t)src->n_inputs);
    ir->n_values = ir->cap_values = src->n_values;
    ir->n_nodes = ir->cap_nodes = src->n_nodes;
    ir->n_inputs = src->n_inputs;
    ir->budget = src->budget;
    ir->convconv = src->convconv;
    gcr_ir_pin_exts(ir, 0, ir->n_values, true); /* the copy reads them too */
    return ir;
}

int gcr_ir_add_value(gcr_ir *ir, const gcr_meta *m, gcr_vkind kind)
{
    if (ir->n_values == ir->cap_values) {
        int cap = ir->cap_values ? 2 * ir->cap_values : 64;
        gcr_value *v = realloc(ir->values, sizeof *v * (size_t)cap);
        if (!v) {
            gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for values");
            return -1;
        }
        ir->values = v;
        ir->cap_values = cap;
    }
    int id = ir->n_values++;
    gcr_value *v = &ir->values[id];
    memset(v, 0, sizeof *v);
    v->m = *m;
    v->kind = kind;
    v->producer = -1;
    v->root = id;
    v->out_index = -1;
    if (kind == GCR_V_INPUT) {
        int *in = realloc(ir->inputs, sizeof(int) * (size_t)(ir->n_inputs + 1));
        if (!in) {
            gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for inputs");
            ir->n_values--; /* not half-added */
            return -1;
        }
        ir->inputs = in;
        ir->inputs[ir->n_inputs++] = id;
    }
    return id;
}

int gcr_ir_add_node(gcr_ir *ir, const gcr_call *c, const int *in_values, int out_value)
{
    if (ir->n_nodes == ir->cap_nodes) {
        int cap = ir->cap_nodes ? 2 * ir->cap_nodes : 64;
        gcr_node *n = realloc(ir->nodes, sizeof *n * (size_t)cap);
        if (!n) {
            gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for nodes");
            return -1;
        }
        ir->nodes = n;
        ir->cap_nodes = cap;
    }
    int id = ir->n_nodes++;
    gcr_node *n = &ir->nodes[id];
    memset(n, 0, sizeof *n);
    n->op = c->op;
    n->p = c->p;
    n->n_in = c->n_in;
    for (int i = 0; i < c->n_in; i++) n->in[i] = in_values[i];
    n->out = out_value;
    n->group = id;
    ir->values[out_value].producer = id;
    return id;
}

gcr_status gcr_ir_link(gcr_ir *ir)
{
    for (int v = 0; v < ir->n_values; v++) ir->values[v].n_cons = 0;
    for (int i = 0; i < ir->n_nodes; i++) {
        gcr_node *n = &ir->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) ir->values[n->in[k]].n_cons++;
    }
    free(ir->cons_start);
    free(ir->cons);
    ir->cons_start = calloc((size_t)ir->n_values + 1, sizeof(int));
    ir->cons = NULL;
    if (!ir->cons_start) return gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for consumers");
    for (int v = 0; v < ir->n_values; v++) ir->cons_start[v + 1] = ir->cons_start[v] + ir->values[v].n_cons;
    ir->cons = malloc(sizeof(int) * (size_t)(ir->cons_start[ir->n_values] + 1));
    int *fill = calloc((size_t)ir->n_values + 1, sizeof(int));
    if (!ir->cons || !fill) {
        free(fill);
        return gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for consumers");
    }
    for (int i = 0; i < ir->n_nodes; i++) {
        gcr_node *n = &ir->nodes[i];
        if (n->dead) continue;
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k] >= 0) ir->cons[ir->cons_start[n->in[k]] + fill[n->in[k]]++] = i;
    }
    free(fill);
    free(ir->outputs);
    ir->outputs = malloc(sizeof(int) * (size_t)(ir->n_values ? ir->n_values : 1));
    ir->n_outputs = 0;
    if (!ir->outputs) return gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory for outputs");
    for (int v = 0; v < ir->n_values; v++) {
        gcr_value *x = &ir->values[v];
        x->out_index = -1;
        if (x->kind != GCR_V_INTER && x->kind != GCR_V_VIEW) continue;
        if (x->producer < 0 || ir->nodes[x->producer].dead) continue;
        if (x->marked || x->n_cons == 0) {
            x->out_index = ir->n_outputs;
            ir->outputs[ir->n_outputs++] = v;
        }
    }
    return GCR_OK;
}

const int *gcr_ir_consumers(const gcr_ir *ir, int v, int *n)
{
    *n = ir->cons_start[v + 1] - ir->cons_start[v];
    return ir->cons + ir->cons_start[v];
}

gcr_status gcr_ir_own(gcr_ir *ir, gcr_tensor *t)
{
    gcr_tensor **o = realloc(ir->owned, sizeof *o * (size_t)(ir->n_owned + 1));
    if (!o) return gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory");
    ir->owned = o;
    ir->owned[ir->n_owned++] = t;
    return GCR_OK;
}

size_t gcr_value_bytes(const gcr_value *v)
{
    return (size_t)gcr_meta_span(&v->m) * gcr_dtype_size(v->m.dtype);
}

gcr_status gcr_ir_reinfer(gcr_ir *ir, const gcr_meta *inputs)
{
    /* stand-in tensors carry the metas gcr_infer reads */
    gcr_tensor *tmp = calloc((size_t)(ir->n_values ? ir->n_values : 1), sizeof *tmp);
    if (!tmp) return gcr_set_error(ir->ctx, GCR_ERR_OOM, "capture: out of host memory re-inferring");
    for (int v = 0; v < ir->n_values; v++) {
        tmp[v].ctx = ir->ctx;
        tmp[v].m = ir->values[v].m;
        tmp[v].value = v;
    }
    for (int i = 0; i < ir->n_inputs; i++) {
        ir->values[ir->inputs[i]].m = inputs[i];
        tmp[ir->inputs[i]].m = inputs[i];
    }
    gcr_status s = GCR_OK;
    for (int i = 0; i < ir->n_nodes && s == GCR_OK; i++) {
        gcr_node *n = &ir->nodes[i];
        if (n->dead) continue;
        gcr_call c;
        memset(&c, 0, sizeof c);
        c.op = n->op;
        c.p = n->p;
        c.n_in = n->n_in;
        for (int k = 0; k < n->n_in; k++) c.in[k] = n->in[k] >= 0 ? &tmp[n->in[k]] : NULL;
        gcr_meta m;
        char err[512];
        s = gcr_validate(ir->ctx, &c, &m, err, sizeof err); /* the backend's limits too, as at the call */
        if (s != GCR_OK) {
            gcr_set_error(ir->ctx, s, "re-specialising the graph for new input shapes: %s", err);
            break;
        }
        gcr_value *o = &ir->values[n->out];
        o->m = m;
        tmp[n->out].m = m;
        if (o->kind == GCR_V_VIEW) {
            const gcr_value *src = &ir->values[n->in[0]];
            o->root = src->root;
            o->offset = src->offset + gcr_view_offset(&c);
        }
    }
    free(tmp);
    return s;
}

/* ---------------------------------------------------------------- external tensor index */

static bool is_ext(const gcr_value *x, const gcr_tensor *t)
{
    return x->ext == t && (x->kind == GCR_V_INPUT || x->kind == GCR_V_CONST);
}

static size_t ext_hash(const gcr_tensor *t, int cap)
{
    return (size_t)(((uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (size_t)(cap - 1);
}

/* indexes values [ext_upto, n_values), growing (and rebuilding) the table at half full; false
 * when out of memory (the caller then scans) */
static bool ext_catch_up(gcr_ir *ir)
{
    if (ir->ext_upto > ir->n_values) ir->ext_upto = ir->ext_cap = 0; /* truncated: rebuild */
    if (2 * ir->n_values >= ir->ext_cap) {
        int cap = 64;
        while (cap <= 2 * ir->n_values) cap *= 2;
        int *slot = malloc(sizeof(int) * (size_t)cap);
        if (!slot) return false;
        free(ir->ext_slot);
        ir->ext_slot = slot;
        ir->ext_cap = cap;
        ir->ext_upto = 0;
        for (int i = 0; i < cap; i++) slot[i] = -1;
    }
    for (; ir->ext_upto < ir->n_values; ir->ext_upto++) {
        const gcr_value *x = &ir->values[ir->ext_upto];
        if (!is_ext(x, x->ext)) continue;
        size_t h = ext_hash(x->ext, ir->ext_cap);
        while (ir->ext_slot[h] >= 0) h = (h + 1) & (size_t)(ir->ext_cap - 1);
        ir->ext_slot[h] = ir->ext_upto;
    }
    return true;
}

int gcr_ir_find_ext(gcr_ir *ir, const gcr_tensor *t)
{
    if (!ext_catch_up(ir)) {
        for (int v = 0; v < ir->n_values; v++)
            if (is_ext(&ir->values[v], t)) return v;
        return -1;
    }
    for (size_t h = ext_hash(t, ir->ext_cap); ir->ext_slot[h] >= 0; h = (h + 1) & (size_t)(ir->ext_cap - 1)) {
        int v = ir->ext_slot[h];
        if (is_ext(&ir->values[v], t)) return v;
    }
    return -1;
}
