/* exec.h — the executor interface: what runs a planned IR's launch list (lib/ir.h) on a backend,
 * as ggml's graph_compute does. A backend offers its executor in its function table
 * (gcr_backend.executor: the CPU's tile programs, lib/cpu/exec.c; CUDA's generated kernels in a
 * CUDA Graph, lib/cuda/exec.c); the generic one (every node through the backend's run(), lib/exec.c)
 * serves a backend without one. An executor sees plain data, a job, and the settings of the graph it
 * runs for: no graph, variant or knob of the layers above. */
#ifndef GCR_EXEC_H
#define GCR_EXEC_H

#include "ir.h"

/* Per-kernel timings go to prof(user, name, ts_us, dur_us) where it is set. */
typedef void (*gcr_prof_sink)(void *user, const char *name, double ts_us, double dur_us);

/* A graph's settings, fixed when it was captured or read from the knobs when it runs. */
typedef struct gcr_exec_settings {
    /* f32 1x1 convs and GEMMs may run on TF32 tensor cores (knobs.tf32 at capture). The CUDA
     * executor launches every conv and matmul with it; the generic one runs nodes through the
     * backend's run(), as eager calls, with the ctx's knobs.tf32 of the moment. */
    int tf32;
    bool graphs;           /* replay the launch sequence as a CUDA Graph (knobs.graphs) */
    gcr_prof_sink prof;    /* NULL: no profiling (knobs.profile) */
    void *prof_user;
    const char *dump_dir;  /* write the generated source here (knobs.dump "source"); NULL: not */
} gcr_exec_settings;

/* Host staging (gcr_graph_input_host / gcr_graph_output_host): a copy between a host buffer of the
 * graph (the backend's host memory: page-locked on CUDA) and a graph input or output value. An
 * executor's run queues the inputs' copies before its launch list and the outputs' after it, on
 * the ctx's stream (inside its CUDA Graph), and returns once the outputs' copies are done. */
typedef struct gcr_exec_stage {
    int value;            /* the graph input's or output's value in the job's ir */
    void *host;           /* the value's elements, dense in its logical order (the graph's) */
    size_t bytes;
    gcr_tensor *dense;    /* device buffer where a value whose layout is not dense row-major is
                             gathered or scattered (the variant's); NULL: copied straight */
} gcr_exec_stage;

/* One planned launch list and the buffers it runs on: a graph's variant as an executor sees it. */
typedef struct gcr_exec_job {
    gcr_ctx *ctx;
    const gcr_ir *ir;      /* fused and planned */
    void **ptr;            /* per value: data pointer of its first element this run (the owner's,
                              refreshed before each run: inputs may move) */
    gcr_tensor **bound;    /* per value: a handle over ptr[value] for eager backend calls, made on
                              first use (the owner's array; the owner frees the handles) */
    uint64_t key;          /* the input signature's hash: names dump files */
    gcr_exec_settings set;
    const gcr_exec_stage *stage; /* n_stage_in inputs, then n_stage_out outputs (the owner's) */
    int n_stage_in, n_stage_out;
    unsigned stage_gen;    /* changes whenever the staging does: a CUDA Graph captured with other
                              staging is captured again */
    const void *persist;   /* the variant's packed constants (knobs.l2_persist), NULL: none; the CUDA
                              executor gives its kernels an L2 access-policy window over them */
    size_t persist_bytes;
    void *state;           /* the executor's */
} gcr_exec_job;

/* build() prepares everything (compiles, allocates scratch, records a CUDA Graph); a fused kernel
 * it cannot build is reported with GCR_ERR_COMPILE and its index in *failed_kernel, and the caller
 * then splits that group into eager kernels and builds again (each group is split once; a split
 * kernel failing again is an error). run() launches with the pointers in job->ptr. destroy() frees
 * what build() made (also after a failed build). */
typedef struct gcr_executor {
    const char *name;
    gcr_status (*build)(gcr_exec_job *j, int *failed_kernel);
    gcr_status (*run)(gcr_exec_job *j);
    void (*destroy)(gcr_exec_job *j);
    /* launches one run of the built job makes (a chain run as one kernel counts once, one that
     * build left as separate kernels counts each); NULL: the IR's kernels, a chain counting once */
    int (*launches)(const gcr_exec_job *j);
} gcr_executor;

extern const gcr_executor gcr_generic_executor;
/* ctx's executor: the one tests forced (gcr_exec_force), else its backend's, else the generic one. */
const gcr_executor *gcr_exec_pick(const gcr_ctx *ctx);
/* Testing only: every graph of ctx built from now on runs on ex (NULL: back to the backend's). */
void gcr_exec_force(gcr_ctx *ctx, const gcr_executor *ex);

/* The handle of value x bound to j->ptr[x] (made once per job), for eager backend calls. */
gcr_tensor *gcr_exec_bound(gcr_exec_job *j, int value);
/* The backend call of node nd on bound handles (input 0 read from value x0 instead when x0 >= 0:
 * a fused kernel's prologue source). */
gcr_status gcr_exec_call(gcr_exec_job *j, const gcr_node *nd, int x0, gcr_call *c);
/* Runs one node on bound handles through run (NULL: the backend's run()); an empty result is
 * skipped, as eager dispatch skips it; a failure names the node. */
typedef gcr_status (*gcr_exec_run_fn)(gcr_exec_job *j, const gcr_call *c, gcr_tensor *out);
gcr_status gcr_exec_run_node(gcr_exec_job *j, int node, gcr_exec_run_fn run);
/* Queues the job's staged copies of its inputs (in) or outputs (!in) on the backend's stream:
 * straight for a dense value, else through the stage's dense buffer and a layout copy. Waits for
 * nothing: an executor syncs after the outputs' copies (never while a CUDA Graph captures). */
gcr_status gcr_exec_stage_copies(gcr_exec_job *j, bool in);
/* A monotonic clock in microseconds, for profile events. */
double gcr_exec_now_us(void);

#endif /* GCR_EXEC_H */
