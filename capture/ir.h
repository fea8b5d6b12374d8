/* ir.h — making and transforming the capture IR (its types: lib/ir.h): the trace, the fusion
 * passes, the kernel builder, the memory plan and the IR's text forms. */
#ifndef GCR_CAPTURE_IR_H
#define GCR_CAPTURE_IR_H

#include "../lib/ir.h"

gcr_ir *gcr_ir_new(gcr_ctx *ctx, void *owner);
void gcr_ir_free(gcr_ir *ir);
/* A copy of nodes, values, inputs and output marks (no kernels, plan or owned constants);
 * handles and external tensors are shared, not copied. */
gcr_ir *gcr_ir_copy(const gcr_ir *ir);
/* Appends a value / node; returns its id or -1 (OOM recorded on ctx). */
int gcr_ir_add_value(gcr_ir *ir, const gcr_meta *m, gcr_vkind kind);
int gcr_ir_add_node(gcr_ir *ir, const gcr_call *c, const int *in_values, int out_value);
/* Recomputes consumer counts (live nodes only) and the output list (marked + sinks). */
gcr_status gcr_ir_link(gcr_ir *ir);
/* Consumer node ids of value v (after gcr_ir_link); *n gets their count. */
const int *gcr_ir_consumers(const gcr_ir *ir, int v, int *n);
/* The INPUT or CONST value whose tensor is t, or -1 (a hash index that catches up with values
 * added since the last call, so recording n ops costs O(n), not O(n^2)). */
int gcr_ir_find_ext(gcr_ir *ir, const gcr_tensor *t);
/* Keeps t alive with the IR (folded constants). */
gcr_status gcr_ir_own(gcr_ir *ir, gcr_tensor *t);
/* Bytes a value's buffer needs (span * dtype size). */
size_t gcr_value_bytes(const gcr_value *v);
/* Sets the INPUT values' metas to inputs[] (graph input order) and re-runs shape inference over
 * every live node (a new input signature). Nodes hold their parameters as the caller wrote them,
 * so axes, negative indices and -1 dims apply to the new shapes as an eager call would apply
 * them; where they cannot (a literal reshape of another element count, an axis past the new
 * rank) it fails with the op's message. */
gcr_status gcr_ir_reinfer(gcr_ir *ir, const gcr_meta *inputs);
/* Pins (pin) or unpins the external tensors of values [from, to) of ir (gcr_tensor_pin): an IR
 * pins every ext it holds (the trace as it records one, gcr_ir_copy for its copy, a pass that adds
 * a constant) and gcr_ir_free unpins them; code that drops values from an IR unpins theirs. */
void gcr_ir_pin_exts(gcr_ir *ir, int from, int to, bool pin);

/* ---------------------------------------------------------------- fusion */

/* union-find over nodes */
int gcr_group_find(gcr_ir *ir, int n);
/* Per-group state the passes fuse through (legal.c): starts every node in a group of its own
 * and needs gcr_ir_link's consumers; gcr_fuse_end frees it (gcr_ir_free does too). Without it
 * gcr_fuse_legal says no to every merge. */
typedef struct gcr_fuse gcr_fuse;
gcr_status gcr_fuse_begin(gcr_ir *ir);
void gcr_fuse_end(gcr_ir *ir);
/* true when node n's kind may be fused at all (knobs.fusion, skip_fuse, nofuse, dead; not a node
 * that reads or makes a 32- or 64-bit integer, which generated kernels would compute in float) */
bool gcr_fuse_enabled(const gcr_ir *ir, int n);
/* true when knobs.skip_fuse (GCR_SKIP_FUSE, comma-separated) names token want */
bool gcr_fuse_skipped(const gcr_ir *ir, const char *want);

typedef enum gcr_fuse_how {
    GCR_FUSE_POINTWISE,  /* producer pointwise -> consumer pointwise, same space */
    GCR_FUSE_EPILOGUE,   /* producer anchor -> consumer's pointwise group runs in its store */
    GCR_FUSE_PROLOGUE,   /* producer's pointwise group -> runs in consumer anchor's load */
    GCR_FUSE_HORIZONTAL, /* siblings: both read a common value over the same space */
    GCR_FUSE_CONVCONV,   /* depthwise conv a's group -> 1x1 conv b's input 0, inside b's kernel */
} gcr_fuse_how;

/* THE fusion legality rule: may the groups of nodes a and b (a's output feeds b, except for
 * HORIZONTAL) become one kernel? Checks kinds and knobs, single consumer for anchor edges, graph
 * outputs, iteration spaces, view aliasing, one anchor per kernel (two only as CONVCONV's pair,
 * within the backend's gcr_convconv_caps), prologue shape, the
 * operand budget (ir->budget: the merged kernel's data pointers, counted as codegen passes
 * them), and that the merged group would not form a cycle with nodes outside it. */
bool gcr_fuse_legal(gcr_ir *ir, int a, int b, gcr_fuse_how how);
/* true when the last gcr_fuse_legal said no because the merged kernel would pass the budget */
bool gcr_fuse_over_budget(const gcr_ir *ir);
/* The anchor of node n's group (for a conv->conv pair, the second conv), or -1. */
int gcr_fuse_anchor(gcr_ir *ir, int n);
/* Merges the groups of a and b (after gcr_fuse_legal said yes). */
void gcr_fuse_merge(gcr_ir *ir, int a, int b);
/* Proposals shared by the epilogue/prologue/reduction passes: merge the pointwise group reading
 * anchor a's result into a's kernel; merge pointwise producers of anchor b's inputs into b's. */
void gcr_fuse_try_epilogue(gcr_ir *ir, int a);
void gcr_fuse_try_prologue(gcr_ir *ir, int b);

/* Passes, run in this order by gcr_ir_optimize(). Each reads and rewrites the IR. */
gcr_status gcr_pass_fold_bn(gcr_ir *ir);     /* conv -> batch_norm with constants: new weights */
gcr_status gcr_pass_pointwise(gcr_ir *ir);   /* connected pointwise ops over one space */
gcr_status gcr_pass_epilogue(gcr_ir *ir);    /* pointwise tails into conv/linear/matmul stores */
gcr_status gcr_pass_prologue(gcr_ir *ir);    /* pointwise producers into conv/matmul loads */
gcr_status gcr_pass_reduction(gcr_ir *ir);   /* producers/consumers into reductions and pools */
gcr_status gcr_pass_convconv(gcr_ir *ir);    /* a depthwise conv's group into the 1x1 conv reading it */
gcr_status gcr_pass_horizontal(gcr_ir *ir);  /* sibling groups on a shared input (knob) */
/* link + all passes (as the knobs say) + gcr_ir_build_kernels + gcr_pass_chain + gcr_plan (optimize.c) */
gcr_status gcr_ir_optimize(gcr_ir *ir);

/* Turns the groups into the launch list (topologically ordered). */
gcr_status gcr_ir_build_kernels(gcr_ir *ir);
/* Kernel-level fusion after the build: marks chains of small consecutive kernels that run as one
 * launch (gcr_kernel.chain; pass_chain.c states the rule). */
gcr_status gcr_pass_chain(gcr_ir *ir);
/* Launch units of the built list: its kernels, a chain counting once. */
int gcr_ir_launches(const gcr_ir *ir);
/* Memory plan: arena offsets by liveness (256-byte aligned), output buffers, aliases. */
gcr_status gcr_plan(gcr_ir *ir);

/* ---------------------------------------------------------------- text forms */

/* The expression a group stores as C text over loads in0..inN and the accumulator acc, one
 * statement per expression ("float e3 = (e1 + e2);"), then the stores ("out0 = e3;"); for
 * codegen and the "source" dump. Caller frees. pro: -1 for the epilogue, else the slot. */
char *gcr_group_expr_c(const gcr_ir *ir, int kernel, int pro);
/* Text of the IR (nodes, and kernels once built) into buf; returns the bytes needed. */
size_t gcr_ir_describe(const gcr_ir *ir, char *buf, size_t n);
/* Graphviz of the IR (fused: nodes clustered by kernel). Caller frees. */
char *gcr_ir_dot(const gcr_ir *ir, bool fused);

#endif /* GCR_CAPTURE_IR_H */
