/* graph_patch.h — rebinding the data pointers of an instantiated CUDA Graph in place: after a
 * capture, the kernel nodes' parameter slots that hold the address of a rebindable buffer (a graph
 * input, an external constant) are recorded by each kernel's parameter layout (and copy and memset
 * nodes' operands); a later replay with those buffers elsewhere writes the new addresses into
 * exactly those slots (cuGraphExecKernelNodeSetParams, cudaGraphExecMemcpyNodeSetParams,
 * cudaGraphExecMemsetNodeSetParams), with no re-capture and no cudaGraphExecUpdate. */
#ifndef GCR_CUDA_GRAPH_PATCH_H
#define GCR_CUDA_GRAPH_PATCH_H

#include "cuda_internal.h"
#include "../exec.h"

typedef struct gcr_cuda_patch gcr_cuda_patch;

/* The driver entry points patching needs, from CUDA 12.4 (driver.c fetches them beside the
 * required ones); NULL where the driver lacks one: graphs then re-capture on a rebind. */
typedef struct gcr_cuda_drv_graph {
    CUresult (*kernel_node_get_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS *);
    CUresult (*exec_kernel_node_set_params)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *);
    CUresult (*func_get_name)(const char **, CUfunction);
    CUresult (*func_get_param_info)(CUfunction, size_t, size_t *, size_t *);
} gcr_cuda_drv_graph;
const gcr_cuda_drv_graph *gcr_cuda_driver_graph(void);

/* Records where graph, just captured from job j's launch list, holds the addresses of j's
 * rebindable buffers (its EXTERNAL values: inputs and constants), beside its fixed ones (arena,
 * output buffers): kernel nodes' parameter slots, copy and memset nodes' operands. own: the
 * CUfunctions whose parameters are all data pointers (generated kernels); the library's kernels are
 * known by name. Sets *out NULL, with the reason in *why, where patching is impossible: a kernel of
 * unknown layout, a copy between an array and a rebindable buffer, a node of another kind, a
 * rebindable buffer overlapping another buffer (an address could not be told apart), a driver
 * without the entry points. Fails only for lack of host memory. */
gcr_status gcr_cuda_patch_record(const gcr_exec_job *j, cudaGraph_t graph, const CUfunction *own, int n_own,
                                 gcr_cuda_patch **out, const char **why);
/* j->ptr changed since the capture (or the last patch): writes the moved buffers' new addresses
 * into exec's recorded slots (exec instantiated from the recorded graph). false, for a re-capture
 * that replaces exec, where a buffer moved to another alignment (the launchers picked kernels by
 * it) or the driver refused a node's parameters. No allocation. */
bool gcr_cuda_patch_apply(gcr_cuda_patch *p, const gcr_exec_job *j, cudaGraphExec_t exec);
/* Nodes the last apply patched. */
int gcr_cuda_patch_nodes(const gcr_cuda_patch *p);
void gcr_cuda_patch_free(gcr_cuda_patch *p);

/* A job's CUDA Graph upkeep (tests, benches): captures made, rebinds patched into kernel node
 * parameters, rebinds that captured again, kernel nodes the last patch touched, kernel nodes the
 * last capture gave an L2 access-policy window (knobs.l2_persist), and why the graph cannot be
 * patched (NULL: it can, or none was captured). lib/cuda/exec.c keeps them. */
typedef struct gcr_cuda_graph_stats {
    int captures, patched, recaptured, nodes, windowed;
    const char *why;
} gcr_cuda_graph_stats;
/* The stats of job j, which executor ex runs (zeros unless ex is the CUDA executor). */
void gcr_cuda_exec_stats(const gcr_executor *ex, const gcr_exec_job *j, gcr_cuda_graph_stats *out);

#endif /* GCR_CUDA_GRAPH_PATCH_H */
