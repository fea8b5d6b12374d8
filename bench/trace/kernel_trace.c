/* kernel_trace.c — an in-graph kernel timeline without nsys: a CUDA injection library
 * (CUDA_INJECTION64_PATH) that records every kernel's GPU start and end through CUPTI's activity
 * API, replayed graph nodes included, and writes them as CSV at process exit. ncu serialises kernels
 * and flushes caches, so its times miss what a replayed CUDA Graph does: back-to-back kernels, PDL
 * overlap, warm L2. bench/kernel_trace.sh builds it and turns the CSV into per-kernel times and the
 * gaps between kernels.
 *
 * Output: KERNEL_TRACE_OUT (default kernel_trace.csv), one line per kernel in completion order (CUDA 12.x and 13.x records share these leading fields):
 * start_ns,end_ns,grid_x,grid_y,grid_z,block_x,graph_id,name */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BUF_BYTES (8u << 20)

static FILE *out_f;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, BUF_BYTES);
    *size = *buf ? BUF_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *rec = NULL;
    while (out_f && cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
        const CUpti_ActivityKernel9 *k = (const CUpti_ActivityKernel9 *)rec;
        fprintf(out_f, "%llu,%llu,%d,%d,%d,%d,%u,%s\n", (unsigned long long)k->start, (unsigned long long)k->end, k->gridX,
                k->gridY, k->gridZ, k->blockX, k->graphId, k->name ? k->name : "?");
    }
    free(buf);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(1);
    if (out_f) fclose(out_f);
    out_f = NULL;
}

/* the entry point the CUDA driver calls when CUDA_INJECTION64_PATH names this library */
int InitializeInjection(void)
{
    const char *path = getenv("KERNEL_TRACE_OUT");
    out_f = fopen(path && *path ? path : "kernel_trace.csv", "w");
    if (!out_f) return 0;
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        fprintf(stderr, "kernel_trace: CUPTI activity tracing is unavailable\n");
        fclose(out_f);
        out_f = NULL;
        return 0;
    }
    atexit(at_exit);
    return 1;
}
