/* ir.h — the IR's types: plain data that capture/ builds (trace, fusion passes, memory plan) and
 * the executors and code generators under lib/ read, as ggml's backends read a ggml_cgraph.
 *
 * Life of an IR: the trace records VALUES (every tensor the trace touches) and NODES (one per op
 * call, views included) in call order, which is a topological order. A graph keeps that recorded
 * IR untouched as its op list; each variant (one per input signature) works on a copy: passes
 * mark nodes dead (BN folding) and merge nodes into fusion groups (union-find on node.group),
 * the kernel builder turns the groups into the launch list (KERNELS), and the memory plan places
 * every materialised intermediate in one arena. Node and value ids are stable across copies, so
 * a variant can be compared with its trace and a failing kernel split by node ids. The functions
 * that make and transform an IR are capture/'s (capture/ir.h). */
#ifndef GCR_IR_H
#define GCR_IR_H

#include "internal.h"

/* ---------------------------------------------------------------- values */

typedef enum gcr_vkind {
    GCR_V_INPUT, /* external tensor, not constant: read by pointer at every replay (guarded) */
    GCR_V_CONST, /* external constant (GCR_TF_CONST, or folded at capture end): read by pointer */
    GCR_V_INTER, /* produced by a non-view node */
    GCR_V_VIEW,  /* produced by a view node: aliases `root`'s buffer at element `offset` */
} gcr_vkind;

/* where a value's bytes live once planned */
typedef enum gcr_vbuf {
    GCR_BUF_NONE,     /* not materialised: lives only inside a fused kernel (registers / tile) */
    GCR_BUF_EXTERNAL, /* INPUT/CONST: the user's tensor (ext), re-read at every replay */
    GCR_BUF_ARENA,    /* intermediate at arena + buf_off, shared by liveness */
    GCR_BUF_OUTPUT,   /* graph output (or root of an output view): its own static buffer */
    GCR_BUF_ALIAS,    /* view: root's buffer + offset elements */
} gcr_vbuf;

typedef struct gcr_value {
    gcr_meta m;          /* views: strides are in elements of the root's buffer */
    gcr_vkind kind;
    int producer;        /* node id; -1 for INPUT/CONST */
    int root;            /* value that owns the bytes: itself, or for a view the viewed root */
    int64_t offset;      /* elements from the root's first element (views; 0 otherwise) */
    int out_index;       /* index in ir->outputs, -1 when not a graph output */
    int marked;          /* passed to gcr_graph_output() */
    gcr_tensor *ext;     /* INPUT/CONST: the user's tensor (or a folded constant owned by the IR) */
    gcr_tensor *handle;  /* INTER/VIEW: the traced tensor the user holds (owned by graph/region) */
    /* filled by gcr_ir_link() */
    int n_cons;          /* live consumer nodes (a node reading it twice counts twice) */
    /* filled by gcr_ir_build_kernels() / gcr_plan() */
    int written;         /* some kernel stores it (eager result, group output, stored accumulator) */
    gcr_vbuf buf;
    size_t buf_off;      /* ARENA: byte offset (256-aligned) */
    size_t bytes;        /* span * dtype size */
    int first, last;     /* liveness in kernel indices (ARENA values) */
} gcr_value;

/* ---------------------------------------------------------------- nodes */

typedef struct gcr_node {
    gcr_op op;
    gcr_params p;            /* zero-initialised in full: memcmp compares two calls */
    int n_in;
    int in[GCR_MAX_INPUTS];  /* value ids; -1 for an absent optional input or a scalar operand */
    int out;                 /* value id */
    int dead;                /* removed by a pass (folded into another node) */
    int group;               /* fusion: union-find parent (node id); itself when alone */
    int nofuse;              /* never fuse (a fused kernel with this node failed to build) */
} gcr_node;

/* ---------------------------------------------------------------- fused groups
 * A group is a pointwise expression DAG over one iteration space (a shape, row-major index
 * order). Loads read group inputs through strides over that space (0 on broadcast dims), so
 * broadcasts, permuted and sliced views and NHWC tensors need no copies. Every expression is
 * computed in f32 and rounded to its dtype as the eager op would store it. */

typedef enum gcr_expr_kind {
    GCR_E_LOAD, /* group input `load` */
    GCR_E_ACC,  /* the anchor's result at this element (group input `load` names the value) */
    GCR_E_OP,   /* gcr_op_table[op].expr applied to args */
} gcr_expr_kind;

typedef struct gcr_expr {
    gcr_expr_kind kind;
    gcr_op op;       /* E_OP */
    float p0, p1;    /* E_OP: params.f[0], f[1] (clamp bounds, eps) */
    int arg[5];      /* E_OP: expr ids of a..e; -1: scalar operand (b = p0, has_scalar) or a missing
                        optional input (gcr_op_missing_input) */
    int has_scalar;  /* E_OP: b is p0 */
    int load;        /* E_LOAD / E_ACC: index into group in[] */
    gcr_dtype dtype; /* result dtype (rounding point; CAST's target) */
    int value;       /* value id computed here; -1 for none */
} gcr_expr;

typedef struct gcr_gin {
    int value;                      /* value id read (for a view: read via root + offset) */
    int64_t strides[GCR_MAX_DIMS];  /* elements per step of each space dim in the value's buffer */
} gcr_gin;

typedef struct gcr_gout {
    int value; /* value id written; its strides (dense, maybe NHWC) over the space */
    int expr;  /* expression stored */
} gcr_gout;

typedef struct gcr_group {
    gcr_meta space;      /* iteration space: ndim and shape (dtype/strides unused) */
    int n_in;
    gcr_gin *in;
    int n_expr;
    gcr_expr *expr;      /* topological order */
    int n_out;
    gcr_gout *out;
} gcr_group;

/* ---------------------------------------------------------------- kernels (launch units) */

#define GCR_MAX_ANCHOR_IN 3

typedef enum gcr_ktype {
    GCR_K_EAGER, /* one node run by the backend's run() on bound tensors */
    GCR_K_FUSED, /* a generated kernel: optional anchor + prologues + pointwise epilogue/group */
} gcr_ktype;

typedef struct gcr_kernel {
    gcr_ktype type;
    /* FUSED: the anchor node (CONV2D/LINEAR/MATMUL/REDUCE/POOL), or -1 for a pointwise-only
     * kernel. EAGER: its one node, of any kind, as in nodes[0] (which the executors run). */
    int anchor;
    /* FUSED conv->conv (capture/pass_convconv.c): the depthwise conv whose result, through pro[0],
     * is the anchor's input 0, computed inside the kernel and never stored; -1 for none. pro[0]
     * then reads that result as E_ACC; without pro[0] the anchor reads it as is. */
    int inner;
    /* FUSED: prologue per anchor input slot (NULL: read the input value as is). Its space is the
     * input's shape; its single out names the (unmaterialised) input value. */
    gcr_group *pro[GCR_MAX_ANCHOR_IN];
    /* FUSED: the pointwise DAG. With an anchor its space is the anchor's output shape and E_ACC
     * reads the anchor's result; an empty epilogue (n_expr 0) stores the anchor's result as its
     * output value. */
    gcr_group epi;
    int acc_value;   /* anchor's output value id (-1 without anchor) */
    int n_nodes;
    int *nodes;      /* member nodes in trace order (a failed build splits into these) */
    char name[96];   /* "k3_conv2d+add+clamp+mul+div" */
    /* Chains (capture/pass_chain.c): on the first kernel of a chain, its length (>= 2): kernels
     * k .. k + chain - 1, consecutive in the launch list, each reading the vector the one before
     * wrote, run as one launch where the executor can (the CUDA executor: one kernel with a
     * barrier between steps); 0 on every other kernel. Every member stays a kernel of its own with
     * its own buffers, so an executor that runs them one by one computes the same values. */
    int chain;
} gcr_kernel;

/* ---------------------------------------------------------------- the IR */

typedef struct gcr_ir {
    gcr_ctx *ctx;
    void *owner;          /* identity stored in traced tensors' ->trace (the trace or the region) */
    int n_values, cap_values;
    gcr_value *values;
    int n_nodes, cap_nodes;
    gcr_node *nodes;
    int n_inputs;
    int *inputs;          /* INPUT value ids in first-use order (graph input i) */
    int n_outputs;
    int *outputs;         /* value ids: marked values and sinks, in value order (gcr_ir_link) */
    int n_kernels;
    gcr_kernel *kernels;  /* launch order */
    int n_owned;
    gcr_tensor **owned;   /* constants made by passes (folded weights), freed with the IR */
    size_t arena_bytes;        /* gcr_plan */
    size_t intermediate_bytes; /* sum of all intermediates as eager would allocate them */
    size_t output_bytes;
    int *cons_start;      /* gcr_ir_link: consumers of value v are cons[cons_start[v] .. cons_start[v+1]) */
    int *cons;            /* node ids, live nodes only, repeated when a node reads v twice */
    gcr_status failed;    /* trace: first recording error (the capture then fails) */
    struct gcr_fuse *fuse; /* fusion passes: per-group facts (legal.c), NULL outside them */
    gcr_operand_budget budget; /* operands one kernel may take (the ctx's backend's; copied) */
    gcr_convconv_caps convconv; /* conv->conv groups its executor runs (the backend's; copied) */
    int *ext_slot;        /* gcr_ir_find_ext: open-addressing index of INPUT/CONST values by tensor */
    int ext_cap, ext_upto; /* its slots (a power of two) and the values indexed so far */
} gcr_ir;

#endif /* GCR_IR_H */
