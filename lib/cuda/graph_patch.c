/* graph_patch.c — in-place rebinding of an instantiated CUDA Graph's data pointers (graph_patch.h).
 *
 * A slot is found by the kernel's parameter layout, never by the values alone: a kernel's
 * parameters are either all data pointers (generated kernels, named by the caller), or one
 * argument struct of kernels/abi.h whose pointer fields are listed below, or a pointer-free
 * parameter struct followed by data pointers (the dense, depthwise and pooling templates, their
 * hook extras included). Only the slots the layout names as pointers are read; one that points into
 * a rebindable buffer is recorded with its offset from the buffer's base. Copy and memset nodes
 * (an eager contiguous copy is a cudaMemcpyAsync) have their source and destination as slots. */
#include "graph_patch.h"
#include "cuda_ops.h"
#include <stdlib.h>

#define MAX_PARAMS 64
#define MAX_FIELDS (2 + GCR_PW_NIN)
/* a rebound buffer keeps its address modulo this: the launchers picked vector widths by it */
#define KEEP_ALIGN 256

/* pointer slots of a kernel: fields of parameter 0 (a struct) and every parameter from `rest` on */
typedef struct layout {
    const char *prefix; /* kernel names it covers */
    int n_fields;
    size_t fields[MAX_FIELDS];
    int rest;           /* first parameter that is a data pointer; MAX_PARAMS: none */
} layout;

#define PW(T) {offsetof(T, out), offsetof(T, in), offsetof(T, in) + 8, offsetof(T, in) + 16, \
               offsetof(T, in) + 24, offsetof(T, in) + 32}
_Static_assert(GCR_PW_NIN == 5, "PW lists the pointwise struct's five inputs");

static const layout layouts[] = {
    {"gcr_pw_flat", 1 + GCR_PW_NIN, PW(gcr_pw_flat_args), MAX_PARAMS},
    {"gcr_pw_vec", 1 + GCR_PW_NIN, PW(gcr_pw_flat_args), MAX_PARAMS},
    {"gcr_pw_nd", 1 + GCR_PW_NIN, PW(gcr_pw_nd_args), MAX_PARAMS},
    {"gcr_copy_", 2, {offsetof(gcr_copy_args, dst), offsetof(gcr_copy_args, src)}, MAX_PARAMS},
    {"gcr_transpose_", 2, {offsetof(gcr_transpose_args, dst), offsetof(gcr_transpose_args, src)}, MAX_PARAMS},
    {"gcr_reduce_", 3, {offsetof(gcr_red_args, out), offsetof(gcr_red_args, in), offsetof(gcr_red_args, part)},
     MAX_PARAMS},
    /* (const gcr_dense_args / gcr_dw_args / gcr_dwpw_args / gcr_pool_args p, x, w, out, bias, hook
     * extras...): no address inside p is patched; the split-K workspace of gcr_dense_args and
     * gcr_dwpw_args never moves (scratch.c) */
    {"gcr_dense_", 0, {0}, 1},
    {"gcr_direct_", 0, {0}, 1},
    {"gcr_patch", 0, {0}, 1},
    {"gcr_shortk", 0, {0}, 1},
    {"gcr_dw", 0, {0}, 1},
    {"gcr_gemv_", 0, {0}, 1},
    {"gcr_pool_", 0, {0}, 1},
    {"gcr_gap_", 0, {0}, 1},
};
static const layout all_pointers = {"", 0, {0}, 0};

/* a buffer: its kernels address [base, base + bytes) (0 bytes: an empty tensor, passed only as
 * base itself) */
typedef struct range {
    uintptr_t base;
    size_t bytes;
} range;

/* one recorded slot: parameter param, byte offset off in it, holds root's base + delta */
typedef struct slot {
    int param, root;
    size_t off;
    int64_t delta;
} slot;

typedef enum { N_KERNEL, N_COPY, N_SET } ntype;

/* a node with at least one slot: its parameters as captured (then as last patched) */
typedef struct knode {
    cudaGraphNode_t node;
    ntype type;
    CUDA_KERNEL_NODE_PARAMS p;    /* N_KERNEL: kernelParams points into args */
    void *ptrs[MAX_PARAMS];
    unsigned char *args;
    struct cudaMemcpy3DParms copy; /* N_COPY: slot parameter 0 is srcPtr.ptr, 1 dstPtr.ptr */
    struct cudaMemsetParams set;   /* N_SET: slot parameter 0 is dst */
    int n_slots;
    slot *slots;
} knode;

struct gcr_cuda_patch {
    const gcr_cuda_drv_graph *drv;
    int n_roots;
    int *value;      /* per root: its value of the job's IR */
    uintptr_t *base; /* per root: the address the nodes hold now */
    uintptr_t *now;  /* per root: its address this run (apply's scratch) */
    int n_nodes;
    knode *nodes;
    int patched;     /* nodes the last apply patched */
};

static const layout *find_layout(const char *name, CUfunction f, const CUfunction *own, int n_own)
{
    for (int i = 0; i < n_own; i++)
        if (own[i] == f) return &all_pointers;
    for (size_t i = 0; name && i < sizeof layouts / sizeof layouts[0]; i++)
        if (!strncmp(name, layouts[i].prefix, strlen(layouts[i].prefix))) return &layouts[i];
    return NULL;
}

static bool inside(const range *r, uintptr_t a)
{
    return r->bytes ? a >= r->base && a - r->base < r->bytes : a == r->base;
}

static bool overlap(const range *a, const range *b)
{
    if (!a->bytes) return inside(b, a->base);
    if (!b->bytes) return inside(a, b->base);
    return a->base < b->base + b->bytes && b->base < a->base + a->bytes;
}

/* the root that address a points into: its index, -1 for none, -2 for several */
static int root_of(const range *roots, int n, uintptr_t a)
{
    int r = -1;
    for (int i = 0; i < n && a; i++)
        if (inside(&roots[i], a)) r = r == -1 ? i : -2;
    return r;
}

/* where slot sl of node k keeps its address */
static unsigned char *slot_at(knode *k, const slot *sl)
{
    if (k->type == N_COPY) return (unsigned char *)(sl->param ? &k->copy.dstPtr.ptr : &k->copy.srcPtr.ptr);
    if (k->type == N_SET) return (unsigned char *)&k->set.dst;
    return (unsigned char *)k->ptrs[sl->param] + sl->off;
}

/* Records slot (param, off) of k if the address there points into a root; the reason it cannot
 * (an address inside two roots), or NULL. */
static const char *record_slot(knode *k, int param, size_t off, const range *roots, int n)
{
    slot sl = {param, 0, off, 0};
    uintptr_t a;
    memcpy(&a, slot_at(k, &sl), sizeof a);
    int r = root_of(roots, n, a);
    if (r == -2) return "an address inside two rebindable buffers";
    if (r >= 0) {
        sl.root = r;
        sl.delta = (int64_t)(a - roots[r].base);
        k->slots[k->n_slots++] = sl;
    }
    return NULL;
}

/* Reads copy or memset node nd's addresses that point into a root into k; the reason it cannot,
 * or NULL; *oom on lack of host memory. */
static const char *record_plain(cudaGraphNode_t nd, enum cudaGraphNodeType type, const range *roots, int n, knode *k,
                                bool *oom)
{
    memset(k, 0, sizeof *k);
    k->node = nd;
    k->type = type == cudaGraphNodeTypeMemcpy ? N_COPY : N_SET;
    cudaError_t e = k->type == N_COPY ? cudaGraphMemcpyNodeGetParams(nd, &k->copy) : cudaGraphMemsetNodeGetParams(nd, &k->set);
    if (e != cudaSuccess) return "a copy or memset node whose parameters cannot be read";
    k->slots = malloc(sizeof *k->slots * 2);
    if (!k->slots) {
        *oom = true;
        return "out of host memory";
    }
    const char *why = record_slot(k, 0, 0, roots, n);
    if (!why && k->type == N_COPY) why = record_slot(k, 1, 0, roots, n);
    if (!why && k->n_slots && k->type == N_COPY && (k->copy.srcArray || k->copy.dstArray))
        why = "a copy node between an array and a rebindable buffer";
    return why;
}

static void knode_free(knode *k)
{
    free(k->args);
    free(k->slots);
}

void gcr_cuda_patch_free(gcr_cuda_patch *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_nodes; i++) knode_free(&p->nodes[i]);
    free(p->nodes);
    free(p->value);
    free(p->base);
    free(p->now);
    free(p);
}

/* Reads kernel node nd's pointer slots that hold a root's address into k (k->n_slots 0: none).
 * Returns the reason it cannot, or NULL; *oom on lack of host memory. */
static const char *record_kernel(const gcr_cuda_drv_graph *drv, cudaGraphNode_t nd, const range *roots, int n,
                                 const CUfunction *own, int n_own, knode *k, bool *oom)
{
    memset(k, 0, sizeof *k);
    k->node = nd;
    if (drv->kernel_node_get_params(nd, &k->p) != CUDA_SUCCESS || !k->p.func || !k->p.kernelParams || k->p.extra)
        return "a kernel node whose parameters cannot be read";
    const char *name = NULL;
    if (drv->func_get_name(&name, k->p.func) != CUDA_SUCCESS) name = NULL;
    const layout *L = find_layout(name, k->p.func, own, n_own);
    if (!L) return "a kernel of unknown parameter layout";
    size_t off[MAX_PARAMS], size[MAX_PARAMS], total = 0;
    int np = 0;
    while (np < MAX_PARAMS && drv->func_get_param_info(k->p.func, (size_t)np, &off[np], &size[np]) == CUDA_SUCCESS)
        total += size[np++];
    if (np == MAX_PARAMS) return "a kernel of too many parameters";
    k->args = malloc(total ? total : 1);
    k->slots = malloc(sizeof *k->slots * (size_t)(L->n_fields + np + 1));
    if (!k->args || !k->slots) {
        *oom = true;
        return "out of host memory";
    }
    size_t at = 0;
    for (int i = 0; i < np; i++) {
        memcpy(k->args + at, k->p.kernelParams[i], size[i]);
        k->ptrs[i] = k->args + at;
        at += size[i];
    }
    for (int i = 0; i < np; i++) {
        int nf = i == 0 ? L->n_fields : 0;
        for (int f = 0; f < nf + (i >= L->rest); f++) {
            size_t o = f < nf ? L->fields[f] : 0;
            if (o + sizeof(uintptr_t) > size[i]) return "a kernel whose parameters differ from their recorded layout";
            const char *why = record_slot(k, i, o, roots, n);
            if (why) return why;
        }
    }
    k->p.kernelParams = k->ptrs;
    return NULL;
}

/* The job's buffers: its rebindable roots (EXTERNAL values, p->value[i] gets root i's value) into
 * roots, and its fixed ones (the arena, output buffers) into fixed; the counts. */
static void job_ranges(const gcr_exec_job *j, gcr_cuda_patch *p, range *roots, range *fixed, int *n_fixed)
{
    const gcr_ir *ir = j->ir;
    bool arena = false;
    *n_fixed = 0;
    for (int x = 0; x < ir->n_values; x++) {
        const gcr_value *val = &ir->values[x];
        uintptr_t a = (uintptr_t)j->ptr[x];
        if (val->buf == GCR_BUF_EXTERNAL && a) {
            p->value[p->n_roots] = x;
            roots[p->n_roots++] = (range){a, val->bytes};
        } else if (val->buf == GCR_BUF_OUTPUT && a) {
            fixed[(*n_fixed)++] = (range){a, val->bytes ? val->bytes : 1};
        } else if (val->buf == GCR_BUF_ARENA && a && !arena) {
            arena = true;
            fixed[(*n_fixed)++] = (range){a - val->buf_off, ir->arena_bytes};
        }
    }
}

gcr_status gcr_cuda_patch_record(const gcr_exec_job *j, cudaGraph_t graph, const CUfunction *own, int n_own,
                                 gcr_cuda_patch **out, const char **why)
{
    *out = NULL;
    *why = NULL;
    const gcr_cuda_drv_graph *drv = gcr_cuda_driver_graph();
    if (!drv) {
        *why = "the driver lacks the graph-node entry points (CUDA 12.4)";
        return GCR_OK;
    }
    size_t nv = (size_t)j->ir->n_values + 1;
    gcr_cuda_patch *p = calloc(1, sizeof *p);
    range *roots = malloc(sizeof *roots * nv), *fixed = malloc(sizeof *fixed * nv);
    if (p) {
        p->value = malloc(sizeof *p->value * nv);
        p->base = malloc(sizeof *p->base * nv);
        p->now = malloc(sizeof *p->now * nv);
    }
    bool oom = !p || !roots || !fixed || !p->value || !p->base || !p->now;
    int n_roots = 0, n_fixed = 0;
    if (!oom) {
        job_ranges(j, p, roots, fixed, &n_fixed);
        n_roots = p->n_roots;
    }
    for (int i = 0; i < n_roots && !*why; i++) {
        for (int b = i + 1; b < n_roots && !*why; b++)
            if (overlap(&roots[i], &roots[b])) *why = "two rebindable buffers overlap";
        for (int b = 0; b < n_fixed && !*why; b++)
            if (overlap(&roots[i], &fixed[b])) *why = "a rebindable buffer overlaps one of the graph's own";
    }
    size_t n = 0;
    if (!oom && !*why && cudaGraphGetNodes(graph, NULL, &n) != cudaSuccess) *why = "cudaGraphGetNodes failed";
    cudaGraphNode_t *nodes = NULL;
    if (!oom && !*why) {
        nodes = malloc(sizeof *nodes * (n ? n : 1));
        p->nodes = calloc(n ? n : 1, sizeof *p->nodes);
        oom = !nodes || !p->nodes;
    }
    if (!oom && !*why && cudaGraphGetNodes(graph, nodes, &n) != cudaSuccess) {
        (void)cudaGetLastError();
        *why = "cudaGraphGetNodes failed";
    }
    for (size_t i = 0; i < n && !oom && !*why; i++) {
        enum cudaGraphNodeType type;
        if (cudaGraphNodeGetType(nodes[i], &type) != cudaSuccess) type = cudaGraphNodeTypeCount;
        knode *k = &p->nodes[p->n_nodes];
        if (type == cudaGraphNodeTypeKernel)
            *why = record_kernel(drv, nodes[i], roots, n_roots, own, n_own, k, &oom);
        else if (type == cudaGraphNodeTypeMemcpy || type == cudaGraphNodeTypeMemset)
            *why = record_plain(nodes[i], type, roots, n_roots, k, &oom);
        else if (type != cudaGraphNodeTypeEmpty)
            *why = "a graph node of another kind";
        else
            continue;
        if (!*why && k->n_slots) p->n_nodes++;
        else knode_free(k);
    }
    (void)cudaGetLastError();
    free(nodes);
    for (int i = 0; i < n_roots; i++) p->base[i] = roots[i].base;
    free(roots);
    free(fixed);
    if (oom || *why) {
        gcr_cuda_patch_free(p);
        if (oom) *why = "out of host memory";
        return oom ? gcr_set_error(j->ctx, GCR_ERR_OOM, "replay: out of host memory recording the graph's pointers")
                   : GCR_OK;
    }
    p->drv = drv;
    *out = p;
    return GCR_OK;
}

bool gcr_cuda_patch_apply(gcr_cuda_patch *p, const gcr_exec_job *j, cudaGraphExec_t exec)
{
    p->patched = 0;
    for (int r = 0; r < p->n_roots; r++) {
        p->now[r] = (uintptr_t)j->ptr[p->value[r]];
        if ((p->now[r] - p->base[r]) % KEEP_ALIGN) return false;
    }
    for (int i = 0; i < p->n_nodes; i++) {
        knode *k = &p->nodes[i];
        bool moved = false;
        for (int s = 0; s < k->n_slots; s++) {
            const slot *sl = &k->slots[s];
            if (p->now[sl->root] == p->base[sl->root]) continue;
            uintptr_t a = p->now[sl->root] + (uintptr_t)sl->delta;
            memcpy(slot_at(k, sl), &a, sizeof a);
            moved = true;
        }
        if (!moved) continue;
        /* a refusal leaves exec half patched: the caller captures again and instantiates afresh */
        bool ok = k->type == N_KERNEL ? p->drv->exec_kernel_node_set_params(exec, k->node, &k->p) == CUDA_SUCCESS
                  : k->type == N_COPY ? cudaGraphExecMemcpyNodeSetParams(exec, k->node, &k->copy) == cudaSuccess
                                      : cudaGraphExecMemsetNodeSetParams(exec, k->node, &k->set) == cudaSuccess;
        if (!ok) {
            (void)cudaGetLastError();
            return false;
        }
        p->patched++;
    }
    for (int r = 0; r < p->n_roots; r++) p->base[r] = p->now[r];
    return true;
}

int gcr_cuda_patch_nodes(const gcr_cuda_patch *p) { return p ? p->patched : 0; }
