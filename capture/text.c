/* text.c — text forms of the IR: the description (gcr_graph_describe, the trace/fused dumps), the
 * Graphviz view, and a group's expression as C statements (the "source" dump: the expression
 * emitter that CUDA codegen uses, lib/emit.h, with plain C constants). */
#include "ir.h"
#include "../lib/emit.h"
#include <stdio.h>
#include <stdlib.h>

static const char *vkind_name(gcr_vkind k)
{
    switch (k) {
    case GCR_V_INPUT: return "input";
    case GCR_V_CONST: return "const";
    case GCR_V_INTER: return "inter";
    default: return "view";
    }
}

static void describe_value(gcr_text *b, const gcr_ir *ir, int v)
{
    char m[128];
    const gcr_value *x = &ir->values[v];
    gcr_text_put(b, "v%d:%s %s", v, vkind_name(x->kind), gcr_meta_str(&x->m, m, sizeof m));
    if (x->kind == GCR_V_VIEW) gcr_text_put(b, " (of v%d +%lld)", x->root, (long long)x->offset);
    if (x->out_index >= 0) gcr_text_put(b, " [out %d]", x->out_index);
}

/* the parameters an op sets (gcr_params is zero where unset) */
static void describe_params(gcr_text *b, const gcr_node *n)
{
    if (n->p.has_scalar) gcr_text_put(b, " scalar=%g", n->p.f[0]);
    if (n->op == GCR_OP_CLAMP) gcr_text_put(b, " lo=%g hi=%g", n->p.f[0], n->p.f[1]);
    if (n->op == GCR_OP_BATCH_NORM) gcr_text_put(b, " eps=%g", n->p.f[0]);
    if (n->op == GCR_OP_CAST) gcr_text_put(b, " to=%s", gcr_dtype_name(n->p.dtype));
    if (n->op == GCR_OP_CONV2D)
        gcr_text_put(b, " stride=%d,%d pad=%d,%d dil=%d,%d groups=%d", n->p.conv.stride[0], n->p.conv.stride[1],
                     n->p.conv.padding[0], n->p.conv.padding[1], n->p.conv.dilation[0], n->p.conv.dilation[1],
                     n->p.conv.groups);
    if (n->p.n) {
        gcr_text_put(b, " v=[");
        for (int i = 0; i < n->p.n; i++) gcr_text_put(b, i ? ",%lld" : "%lld", (long long)n->p.v[i]);
        gcr_text_put(b, "]");
    }
    if (n->p.keepdim) gcr_text_put(b, " keepdim");
}

size_t gcr_ir_describe(const gcr_ir *ir, char *buf, size_t n)
{
    gcr_text b = gcr_text_fixed(buf, n);
    gcr_text_put(&b, "trace: %d nodes, %d values, %d inputs, %d outputs\n", ir->n_nodes, ir->n_values, ir->n_inputs,
              ir->n_outputs);
    for (int v = 0; v < ir->n_values; v++) {
        if (ir->values[v].kind != GCR_V_INPUT && ir->values[v].kind != GCR_V_CONST) continue;
        gcr_text_put(&b, "  ");
        describe_value(&b, ir, v);
        gcr_text_put(&b, "\n");
    }
    for (int i = 0; i < ir->n_nodes; i++) {
        const gcr_node *nd = &ir->nodes[i];
        gcr_text_put(&b, "  n%d%s %s(", i, nd->dead ? " (dead)" : "", gcr_op_table[nd->op].name);
        for (int k = 0; k < nd->n_in; k++) gcr_text_put(&b, k ? ", v%d" : "v%d", nd->in[k]);
        gcr_text_put(&b, ")");
        describe_params(&b, nd);
        gcr_text_put(&b, " -> ");
        describe_value(&b, ir, nd->out);
        gcr_text_put(&b, "\n");
    }
    if (ir->n_kernels) {
        gcr_text_put(&b, "kernels: %d (arena %zu bytes, intermediates %zu bytes)\n", ir->n_kernels, ir->arena_bytes,
                  ir->intermediate_bytes);
        if (gcr_ir_launches(ir) != ir->n_kernels) gcr_text_put(&b, "launches: %d (chains count once)\n", gcr_ir_launches(ir));
        for (int k = 0; k < ir->n_kernels; k++) {
            const gcr_kernel *K = &ir->kernels[k];
            gcr_text_put(&b, "  %s %s nodes:", K->type == GCR_K_EAGER ? "eager" : "fused", K->name);
            for (int i = 0; i < K->n_nodes; i++) gcr_text_put(&b, " n%d", K->nodes[i]);
            if (K->type == GCR_K_FUSED) {
                if (K->inner >= 0) gcr_text_put(&b, " | conv->conv: n%d inside", K->inner);
                for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
                    if (K->pro[j]) gcr_text_put(&b, " | prologue[%d] %d exprs", j, K->pro[j]->n_expr);
                gcr_text_put(&b, " | %d exprs, writes", K->epi.n_expr);
                for (int o = 0; o < K->epi.n_out; o++) gcr_text_put(&b, " v%d", K->epi.out[o].value);
                if (K->anchor >= 0 && K->epi.n_expr == 0) gcr_text_put(&b, " v%d", K->acc_value);
            }
            if (K->chain > 1) gcr_text_put(&b, " | chain of %d kernels from here, one launch", K->chain);
            gcr_text_put(&b, "\n");
        }
    }
    return b.len + 1;
}

char *gcr_ir_dot(const gcr_ir *ir, bool fused)
{
    gcr_text b = gcr_text_growing();
    gcr_text_put(&b, "digraph gcr {\n  rankdir=TB; node [shape=box, fontname=monospace];\n");
    for (int v = 0; v < ir->n_values; v++)
        if (ir->values[v].kind == GCR_V_INPUT || ir->values[v].kind == GCR_V_CONST) {
            char m[128];
            gcr_text_put(&b, "  v%d [shape=ellipse, label=\"%s v%d\\n%s\"];\n", v, vkind_name(ir->values[v].kind), v,
                      gcr_meta_str(&ir->values[v].m, m, sizeof m));
        }
    for (int k = 0; fused && k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        gcr_text_put(&b, "  subgraph cluster_%d { label=\"%s%s\"; style=%s;", k, K->name,
                  K->chain > 1 ? " (chain head)" : "", K->type == GCR_K_FUSED ? "filled" : "dashed");
        for (int i = 0; i < K->n_nodes; i++) gcr_text_put(&b, " n%d;", K->nodes[i]);
        gcr_text_put(&b, " }\n");
    }
    for (int i = 0; i < ir->n_nodes; i++) {
        const gcr_node *nd = &ir->nodes[i];
        if (nd->dead) continue;
        char m[128];
        gcr_text_put(&b, "  n%d [label=\"n%d %s\\n%s\"%s];\n", i, i, gcr_op_table[nd->op].name,
                  gcr_meta_str(&ir->values[nd->out].m, m, sizeof m),
                  ir->values[nd->out].out_index >= 0 ? ", peripheries=2" : "");
        for (int k = 0; k < nd->n_in; k++) {
            int v = nd->in[k];
            if (v < 0) continue;
            int p = ir->values[v].producer;
            if (p >= 0) gcr_text_put(&b, "  n%d -> n%d;\n", p, i);
            else gcr_text_put(&b, "  v%d -> n%d;\n", v, i);
        }
    }
    gcr_text_put(&b, "}\n");
    return gcr_text_take(&b);
}

/* the "source" dump's dialect of the expression emitter: loads in0..inN, plain C constants,
 * roundings as comments */
static void dump_load(gcr_text *b, const gcr_emit *em, int l) { gcr_text_put(b, "in%d", l); }
static void dump_constant(gcr_text *b, float f) { gcr_text_put(b, "%.9gf", (double)f); }
static void dump_round(gcr_text *b, const char *ind, int e, gcr_dtype dt, bool cast)
{
    if (dt != GCR_F32) gcr_text_put(b, "%s/* e%d rounded to %s */\n", ind, e, gcr_dtype_name(dt));
}

char *gcr_group_expr_c(const gcr_ir *ir, int kernel, int pro)
{
    if (kernel < 0 || kernel >= ir->n_kernels) return NULL;
    const gcr_kernel *K = &ir->kernels[kernel];
    const gcr_group *g = pro < 0 ? &K->epi : pro < GCR_MAX_ANCHOR_IN ? K->pro[pro] : NULL;
    if (!g) return NULL;
    gcr_text b = gcr_text_growing();
    gcr_text_put(&b, "/* %s %s over [", K->name, pro < 0 ? "epilogue" : "prologue");
    for (int d = 0; d < g->space.ndim; d++) gcr_text_put(&b, d ? ",%lld" : "%lld", (long long)g->space.shape[d]);
    gcr_text_put(&b, "] */\n");
    gcr_emit em = {.load = dump_load, .constant = dump_constant, .round = dump_round, .acc = "acc", .g = g, .ind = ""};
    gcr_emit_exprs(&b, &em);
    for (int o = 0; o < g->n_out; o++) gcr_text_put(&b, "out%d = e%d; /* v%d */\n", o, g->out[o].expr, g->out[o].value);
    return gcr_text_take(&b);
}
