/* text.c — text forms of the IR: the description (gcr_graph_describe, the trace/fused dumps), the
 * Graphviz view, and a group's expression as C statements (the "source" dump; codegen can reuse
 * its formula text, which comes from gcr_op_table[op].expr). */
#include "ir.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct sbuf {
    char *p;
    size_t n, len; /* capacity, bytes needed so far */
    bool grow;     /* malloc'd: grow on demand */
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (b->grow && b->len + (size_t)k + 1 > b->n) {
        size_t n = (b->n ? b->n : 256);
        while (n < b->len + (size_t)k + 1) n *= 2;
        char *p = realloc(b->p, n);
        if (!p) return;
        b->p = p;
        b->n = n;
    }
    if (b->p && b->len < b->n) {
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->n - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)k;
}

static const char *vkind_name(gcr_vkind k)
{
    switch (k) {
    case GCR_V_INPUT: return "input";
    case GCR_V_CONST: return "const";
    case GCR_V_INTER: return "inter";
    default: return "view";
    }
}

static void describe_value(sbuf *b, const gcr_ir *ir, int v)
{
    char m[128];
    const gcr_value *x = &ir->values[v];
    sb_printf(b, "v%d:%s %s", v, vkind_name(x->kind), gcr_meta_str(&x->m, m, sizeof m));
    if (x->kind == GCR_V_VIEW) sb_printf(b, " (of v%d +%lld)", x->root, (long long)x->offset);
    if (x->out_index >= 0) sb_printf(b, " [out %d]", x->out_index);
}

static void describe_params(sbuf *b, const gcr_node *n)
{
    switch (gcr_op_table[n->op].kind) {
    case GCR_KIND_POINTWISE:
        if (n->p.has_scalar) sb_printf(b, " scalar=%g", n->p.f[0]);
        if (n->op == GCR_OP_CLAMP) sb_printf(b, " lo=%g hi=%g", n->p.f[0], n->p.f[1]);
        if (n->op == GCR_OP_BATCH_NORM) sb_printf(b, " eps=%g", n->p.f[0]);
        if (n->op == GCR_OP_CAST) sb_printf(b, " to=%s", gcr_dtype_name(n->p.dtype));
        break;
    case GCR_KIND_CONV:
        sb_printf(b, " stride=%d,%d pad=%d,%d dil=%d,%d groups=%d", n->p.conv.stride[0], n->p.conv.stride[1],
                  n->p.conv.padding[0], n->p.conv.padding[1], n->p.conv.dilation[0], n->p.conv.dilation[1],
                  n->p.conv.groups);
        break;
    default:
        if (n->p.n) {
            sb_printf(b, " v=[");
            for (int i = 0; i < n->p.n; i++) sb_printf(b, i ? ",%lld" : "%lld", (long long)n->p.v[i]);
            sb_printf(b, "]");
        }
        if (n->p.keepdim) sb_printf(b, " keepdim");
        break;
    }
}

size_t gcr_ir_describe(const gcr_ir *ir, char *buf, size_t n)
{
    sbuf b = {buf, buf ? n : 0, 0, false};
    if (b.n) b.p[0] = 0;
    sb_printf(&b, "trace: %d nodes, %d values, %d inputs, %d outputs\n", ir->n_nodes, ir->n_values, ir->n_inputs,
              ir->n_outputs);
    for (int v = 0; v < ir->n_values; v++) {
        if (ir->values[v].kind != GCR_V_INPUT && ir->values[v].kind != GCR_V_CONST) continue;
        sb_printf(&b, "  ");
        describe_value(&b, ir, v);
        sb_printf(&b, "\n");
    }
    for (int i = 0; i < ir->n_nodes; i++) {
        const gcr_node *nd = &ir->nodes[i];
        sb_printf(&b, "  n%d%s %s(", i, nd->dead ? " (dead)" : "", gcr_op_table[nd->op].name);
        for (int k = 0; k < nd->n_in; k++) sb_printf(&b, k ? ", v%d" : "v%d", nd->in[k]);
        sb_printf(&b, ")");
        describe_params(&b, nd);
        sb_printf(&b, " -> ");
        describe_value(&b, ir, nd->out);
        sb_printf(&b, "\n");
    }
    if (ir->n_kernels) {
        sb_printf(&b, "kernels: %d (arena %zu bytes, intermediates %zu bytes)\n", ir->n_kernels, ir->arena_bytes,
                  ir->intermediate_bytes);
        for (int k = 0; k < ir->n_kernels; k++) {
            const gcr_kernel *K = &ir->kernels[k];
            sb_printf(&b, "  %s %s nodes:", K->type == GCR_K_EAGER ? "eager" : "fused", K->name);
            for (int i = 0; i < K->n_nodes; i++) sb_printf(&b, " n%d", K->nodes[i]);
            if (K->type == GCR_K_FUSED) {
                for (int j = 0; j < GCR_MAX_ANCHOR_IN; j++)
                    if (K->pro[j]) sb_printf(&b, " | prologue[%d] %d exprs", j, K->pro[j]->n_expr);
                sb_printf(&b, " | %d exprs, writes", K->epi.n_expr);
                for (int o = 0; o < K->epi.n_out; o++) sb_printf(&b, " v%d", K->epi.out[o].value);
                if (K->anchor >= 0 && K->epi.n_expr == 0) sb_printf(&b, " v%d", K->acc_value);
            }
            sb_printf(&b, "\n");
        }
    }
    return b.len + 1;
}

char *gcr_ir_dot(const gcr_ir *ir, bool fused)
{
    sbuf b = {NULL, 0, 0, true};
    sb_printf(&b, "digraph gcr {\n  rankdir=TB; node [shape=box, fontname=monospace];\n");
    for (int v = 0; v < ir->n_values; v++)
        if (ir->values[v].kind == GCR_V_INPUT || ir->values[v].kind == GCR_V_CONST) {
            char m[128];
            sb_printf(&b, "  v%d [shape=ellipse, label=\"%s v%d\\n%s\"];\n", v, vkind_name(ir->values[v].kind), v,
                      gcr_meta_str(&ir->values[v].m, m, sizeof m));
        }
    for (int k = 0; fused && k < ir->n_kernels; k++) {
        const gcr_kernel *K = &ir->kernels[k];
        sb_printf(&b, "  subgraph cluster_%d { label=\"%s\"; style=%s;", k, K->name,
                  K->type == GCR_K_FUSED ? "filled" : "dashed");
        for (int i = 0; i < K->n_nodes; i++) sb_printf(&b, " n%d;", K->nodes[i]);
        sb_printf(&b, " }\n");
    }
    for (int i = 0; i < ir->n_nodes; i++) {
        const gcr_node *nd = &ir->nodes[i];
        if (nd->dead) continue;
        char m[128];
        sb_printf(&b, "  n%d [label=\"n%d %s\\n%s\"%s];\n", i, i, gcr_op_table[nd->op].name,
                  gcr_meta_str(&ir->values[nd->out].m, m, sizeof m),
                  ir->values[nd->out].out_index >= 0 ? ", peripheries=2" : "");
        for (int k = 0; k < nd->n_in; k++) {
            int v = nd->in[k];
            if (v < 0) continue;
            int p = ir->values[v].producer;
            if (p >= 0) sb_printf(&b, "  n%d -> n%d;\n", p, i);
            else sb_printf(&b, "  v%d -> n%d;\n", v, i);
        }
    }
    sb_printf(&b, "}\n");
    return b.p;
}

static void expr_text(sbuf *b, const gcr_group *g)
{
    for (int e = 0; e < g->n_expr; e++) {
        const gcr_expr *x = &g->expr[e];
        if (x->kind == GCR_E_LOAD) {
            sb_printf(b, "float e%d = in%d; /* v%d */\n", e, x->load, g->in[x->load].value);
            continue;
        }
        if (x->kind == GCR_E_ACC) {
            sb_printf(b, "float e%d = acc; /* v%d */\n", e, g->in[x->load].value);
            continue;
        }
        /* the op table's formula with a..e and p0/p1 bound by #defines around it */
        sb_printf(b, "float e%d;{", e);
        const char *names = "abcde";
        for (int k = 0; k < 5; k++) {
            if (x->arg[k] >= 0) sb_printf(b, "float %c=e%d;", names[k], x->arg[k]);
            else if (k == 1 && x->has_scalar) sb_printf(b, "float %c=%.9gf;", names[k], x->p0);
            else sb_printf(b, "float %c=%.9gf;", names[k], gcr_op_missing_input(x->op, k));
        }
        sb_printf(b, "float p0=%.9gf,p1=%.9gf;", x->p0, x->p1);
        sb_printf(b, "(void)a;(void)b;(void)c;(void)d;(void)e;(void)p0;(void)p1; e%d = %s;}", e,
                  gcr_op_table[x->op].expr);
        if (x->dtype != GCR_F32) sb_printf(b, " /* round to %s */", gcr_dtype_name(x->dtype));
        sb_printf(b, " /* %s -> v%d */\n", gcr_op_table[x->op].name, x->value);
    }
    for (int o = 0; o < g->n_out; o++) sb_printf(b, "out%d = e%d; /* v%d */\n", o, g->out[o].expr, g->out[o].value);
}

char *gcr_group_expr_c(const gcr_ir *ir, int kernel, int pro)
{
    if (kernel < 0 || kernel >= ir->n_kernels) return NULL;
    const gcr_kernel *K = &ir->kernels[kernel];
    const gcr_group *g = pro < 0 ? &K->epi : pro < GCR_MAX_ANCHOR_IN ? K->pro[pro] : NULL;
    if (!g) return NULL;
    sbuf b = {NULL, 0, 0, true};
    sb_printf(&b, "/* %s %s over [", K->name, pro < 0 ? "epilogue" : "prologue");
    for (int d = 0; d < g->space.ndim; d++) sb_printf(&b, d ? ",%lld" : "%lld", (long long)g->space.shape[d]);
    sb_printf(&b, "] */\n");
    expr_text(&b, g);
    if (!b.p) {
        b.p = malloc(1);
        if (b.p) b.p[0] = 0;
    }
    return b.p;
}
