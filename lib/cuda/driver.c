/* driver.c — the few driver API functions the backend needs (module load, launch), fetched
 * through cudart's entry-point query so that the library never links libcuda and still loads
 * (and compiles kernels with NVRTC) on machines without a GPU driver; and, optionally, those that
 * patch an instantiated graph's kernel nodes (graph_patch.h). */
#include "cuda_internal.h"
#include "graph_patch.h"
#include <pthread.h>
#include <stdio.h>

static gcr_cuda_drv g_drv;
static gcr_cuda_drv_graph g_graph;
static int g_graph_ok;
static int g_state;             /* 0 not tried, 1 ok, -1 failed */
static char g_err[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* version: the ABI of the symbol as of that CUDA release (12000 for 12.0), so a newer driver still
 * gives us the versions whose signatures we declare in gcr_cuda_drv. */
static int fetch_at(const char *sym, void **fn, int version)
{
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion(sym, fn, version, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !*fn) {
        snprintf(g_err, sizeof g_err, "driver entry point %s unavailable (%s)", sym,
                 e != cudaSuccess ? cudaGetErrorString(e) : "symbol not found");
        cudaGetLastError(); /* the query error is not sticky; do not leave it for the next check */
        return -1;
    }
    return 0;
}

static int fetch(const char *sym, void **fn) { return fetch_at(sym, fn, 12000); }

static void load(void)
{
    int bad = 0;
    bad |= fetch("cuModuleLoadData", (void **)&g_drv.module_load_data);
    bad |= fetch("cuModuleGetFunction", (void **)&g_drv.module_get_function);
    bad |= fetch("cuModuleUnload", (void **)&g_drv.module_unload);
    bad |= fetch("cuLaunchKernel", (void **)&g_drv.launch_kernel);
    bad |= fetch("cuGetErrorString", (void **)&g_drv.get_error_string);
    bad |= fetch("cuFuncSetAttribute", (void **)&g_drv.func_set_attribute);
    /* optional: a failure leaves them NULL (g_err is read only when a required one failed) */
    void **opt[] = {(void **)&g_graph.kernel_node_get_params, (void **)&g_graph.exec_kernel_node_set_params,
                    (void **)&g_graph.func_get_name, (void **)&g_graph.func_get_param_info};
    const char *opt_sym[] = {"cuGraphKernelNodeGetParams", "cuGraphExecKernelNodeSetParams", "cuFuncGetName",
                             "cuFuncGetParamInfo"};
    int opt_bad = 0;
    for (int i = 0; i < 4 && !bad; i++) opt_bad |= fetch_at(opt_sym[i], opt[i], 12040);
    g_graph_ok = !bad && !opt_bad;
    /* optional too: without them every launch is a plain one (no programmatic dependent launch) */
    if (!bad && (fetch("cuLaunchKernelEx", (void **)&g_drv.launch_kernel_ex) ||
                 fetch("cuModuleGetGlobal", (void **)&g_drv.module_get_global)))
        g_drv.launch_kernel_ex = NULL, g_drv.module_get_global = NULL;
    if (!bad && fetch("cuOccupancyMaxActiveClusters", (void **)&g_drv.occupancy_max_active_clusters))
        g_drv.occupancy_max_active_clusters = NULL;
    if (!bad && fetch("cuTensorMapEncodeTiled", (void **)&g_drv.tensor_map_encode_tiled))
        g_drv.tensor_map_encode_tiled = NULL;
    g_state = bad ? -1 : 1;
}

const gcr_cuda_drv *gcr_cuda_driver(gcr_ctx *ctx)
{
    pthread_once(&g_once, load);
    if (g_state == 1) return &g_drv;
    if (ctx) gcr_set_error(ctx, GCR_ERR_DEVICE, "cuda: %s", g_err);
    return NULL;
}

const gcr_cuda_drv_graph *gcr_cuda_driver_graph(void)
{
    pthread_once(&g_once, load);
    return g_graph_ok ? &g_graph : NULL;
}

const char *gcr_cuda_drv_error(CUresult r)
{
    const char *s = NULL;
    if (g_state == 1 && g_drv.get_error_string && g_drv.get_error_string(r, &s) == CUDA_SUCCESS && s) return s;
    return "unknown driver error";
}

gcr_status gcr_cuda_error(gcr_ctx *ctx, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return GCR_OK;
    cudaGetLastError(); /* clear a non-sticky error so later checks do not see it again */
    return gcr_set_error(ctx, GCR_ERR_DEVICE, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
}
