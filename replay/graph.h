/* graph.h — captured graphs and their variants (one per input signature), each run by an executor
 * through the backend's table (lib/exec.h: it sees a variant as a job, the graph's settings as
 * parameters). Also the capture API's state on the ctx
 * (replay/capture.c) and the region hooks it calls (replay/region.c). */
#ifndef GCR_REPLAY_GRAPH_H
#define GCR_REPLAY_GRAPH_H

#include "../capture/trace.h"
#include "../lib/exec.h"
#include "../lib/hash.h"
#include "lru.h"
#include <stdio.h>

typedef struct gcr_variant gcr_variant;

/* A variant: the trace specialised to one input signature, fused, planned and built. */
struct gcr_variant {
    UT_hash_handle hh;
    uint64_t key;            /* hash of sig */
    int n_sig;
    gcr_meta *sig;           /* input metas it was built for (graph input order) */
    gcr_ir *ir;              /* fused + planned copy of the graph's trace */
    void *arena;             /* device memory, ir->arena_bytes */
    void **outbuf;           /* per value: its static output buffer (BUF_OUTPUT), else NULL */
    gcr_storage **wrap;      /* per output buffer: the storage the output handles rooted at it share
                                (lent: borrowed while the variant lives; the variant holds a ref) */
    void **ptr;              /* per value: data pointer of its first element this run (NULL: none) */
    gcr_tensor **bound;      /* per value: handle bound to ptr for eager calls (lazily made) */
    const gcr_executor *ex;
    gcr_exec_job job;        /* what ex runs: ir, ptr and bound lent, the graph's settings, ex's state */
    gcr_lru_link lru;        /* in the graph's recency list */
    double build_seconds;
    void *consts;            /* knobs.l2_persist: copies of the constants its kernels read, packed */
    size_t consts_bytes;
    void **cptr;             /* per value: its packed copy in consts (NULL: read in place) */
    gcr_exec_stage *stage;   /* the host staging's copies for this signature (staging.c), lent to job */
    unsigned stage_gen;      /* the graph's stage_gen they were planned for */
    struct gcr_dev_buf *incopy; /* per graph input: device copy of an input bound to memory this variant
                                   writes (its own output), made at the first such run, else NULL */
};

/* A device buffer a variant owns (the backend's memory). */
typedef struct gcr_dev_buf {
    void *buf;
    size_t bytes;
} gcr_dev_buf;

/* A host buffer of a graph's staging (the backend's host memory); buf NULL: not staged. */
typedef struct gcr_host_buf {
    void *buf;
    size_t bytes;
} gcr_host_buf;

struct gcr_graph {
    gcr_ctx *ctx;
    gcr_ir *trace;           /* the op list as recorded: never fused, node/value ids stable */
    bool owns_handles;       /* explicit capture: the graph frees traced handles; regions own theirs */
    struct gcr_region *region; /* owning region or NULL */
    int n_inputs;
    gcr_tensor **in_t;       /* per graph input: tensor read at replay (gcr_graph_bind_input) */
    gcr_meta *sig_now;       /* per graph input: the signature of the replay in progress (kept with
                                the graph: a stack array overflowed with many inputs, and the hot
                                path allocates nothing) */
    gcr_variant *variants;   /* uthash by key */
    gcr_variant *cur;        /* last run */
    gcr_lru lru;             /* the variants, most recently run first */
    gcr_graph_stats stats;
    int tf32;                /* knobs.tf32 at capture: its executors run with it (gcr_graph_settings) */
    gcr_host_buf *host_in;   /* per graph input, its staging buffer (NULL until one is staged) */
    gcr_host_buf *host_out;  /* per graph output, likewise */
    unsigned stage_gen;      /* counts changes of the staging: variants re-plan theirs */
    /* profiling (knobs.profile): events appended by executors, written on destroy */
    int n_prof, cap_prof;
    struct gcr_prof_event *prof;
    /* ctx's list of explicit graphs (freed with the ctx) */
    gcr_graph *next, *prev;
};

typedef struct gcr_prof_event {
    char name[160]; /* the kernel's name and, on CUDA, the function that ran it */
    double ts_us, dur_us;
} gcr_prof_event;

/* The cache policy graphs (their variants) and regions (their entries) share (lru.h): a cache
 * holds at most this many (knobs.graph_cache, at least 1); each run makes its item the most
 * recently used, and eviction, after a new one ran, takes the least recently used other than it. */
int gcr_cache_cap(const gcr_ctx *ctx);
/* The hash of an input signature (n metas), the key of the graph's variant cache. */
uint64_t gcr_sig_hash(const gcr_meta *m, int n);
/* Builds the variant of g for input metas sig (variant.c); a fused kernel the executor cannot
 * build is split into eager kernels and the variant built again (each group is split once; a
 * kernel that still fails is an error). */
gcr_status gcr_variant_build(gcr_graph *g, const gcr_meta *sig, gcr_variant **out);
void gcr_variant_free(gcr_graph *g, gcr_variant *v);
/* Frees every variant of g (sigcache.c). */
void gcr_sigcache_clear(gcr_graph *g);
/* Data pointers of values read from outside (inputs may move between replays) and of views. */
void gcr_variant_refresh_ptrs(gcr_graph *g, gcr_variant *v);
/* After gcr_variant_refresh_ptrs: an input whose bytes overlap a buffer v's run writes (the graph's
 * own output bound as its input, as a recurrent loop does) is copied first into a device buffer of
 * v's, and v reads the copy, so the run computes what the same calls would eagerly. A staged input
 * there is refused (GCR_ERR_INVALID). */
gcr_status gcr_variant_unalias_inputs(gcr_graph *g, gcr_variant *v);
/* Frees g and its variants; gcr_graph_destroy is this for graphs the user owns (not a region's). */
void gcr_graph_free(gcr_graph *g);
/* Makes a graph from a finished trace and runs it once. With owns_handles (explicit capture) the
 * graph takes the trace and its handles, also when it fails; a region keeps its own. */
gcr_status gcr_graph_from_trace(gcr_ctx *ctx, gcr_ir *trace, bool owns_handles, gcr_graph **out);
/* Builds (or finds) the variant for the current inputs and runs it; binds outputs. */
gcr_status gcr_graph_run(gcr_graph *g);
/* Runs the trace eagerly, node by node, reading graph input i from in_t[i] (NULL: the traced
 * tensors); binds the output handles to the results (retrace=0 and region fallbacks). */
gcr_status gcr_ir_interpret(gcr_ctx *ctx, const gcr_ir *trace, gcr_tensor *const *in_t);
/* The trace of the region whose body is capturing now, or NULL. */
gcr_ir *gcr_region_open_trace(gcr_ctx *ctx);
/* Points output handles at variant v's output buffers (meta included): each shares the storage
 * of its root, an output buffer of v or, for a view of an input, that input's storage. */
gcr_status gcr_variant_bind_outputs(gcr_graph *g, gcr_variant *v);
/* The settings g's executors run with: its numeric mode from the capture, the rest from the knobs
 * now (binding.c). */
gcr_exec_settings gcr_graph_settings(gcr_graph *g);
/* Per-kernel timings (no-op unless profiling), the executors' profile sink. */
void gcr_prof_add(gcr_graph *g, const char *name, double ts_us, double dur_us);
void gcr_prof_write(gcr_graph *g);
/* host staging (staging.c): v's copies planned for g's staging when it changed (a size that no
 * longer matches v's signature is GCR_ERR_SHAPE); freed with v; the same copies around an eager
 * run of the op list (in: before it, !in: after); g's buffers freed with g */
gcr_status gcr_variant_stage(gcr_graph *g, gcr_variant *v);
void gcr_variant_stage_free(gcr_graph *g, gcr_variant *v);
gcr_status gcr_graph_stage_eager(gcr_graph *g, bool in);
void gcr_graph_staging_free(gcr_graph *g);
/* Dumps (knobs.dump) of a variant: trace/fused text and dot, source, plan. */
void gcr_dump_variant(gcr_graph *g, gcr_variant *v);
/* whether the comma list dump (knobs.dump) names the dump what, or all (case and spaces around a
 * name ignored) */
bool gcr_dump_wants(const char *dump, const char *what);

/* The recorder's state on ctx->rec_state (replay/capture.c): the open explicit trace, the ctx's
 * explicit graphs and its regions. */
typedef struct gcr_capstate {
    gcr_ir *cur;                /* open trace (explicit capture, CAPTURE mode) */
    gcr_graph *graphs;          /* explicit graphs not yet destroyed */
    struct gcr_region *regions; /* uthash by name (replay/region.c) */
    struct gcr_region *region;  /* the region whose body runs now, or NULL */
    gcr_tensor failed;          /* sentinel of the list of the handles of failed explicit captures:
                                   without data, freed with the ctx (gcr_capture_failed) */
} gcr_capstate;
/* ctx's state, made on first use with the recorder installed on ctx (NULL on OOM). */
gcr_capstate *gcr_capstate_get(gcr_ctx *ctx);
/* Frees the trace of an explicit capture that failed (at capture_end, or its graph's build or first
 * run): the handles its calls returned stay valid, without data, until the ctx ends, as the caller
 * may still hold, read or free them. */
void gcr_capture_failed(gcr_ctx *ctx, gcr_ir *ir);
/* ctx's state, or NULL when the ctx has not captured or run a region yet. */
gcr_capstate *gcr_capstate_of(const gcr_ctx *ctx);

/* regions (replay/region.c) */
gcr_tensor *gcr_region_check(gcr_ctx *ctx, const gcr_call *c, const gcr_meta *out);
/* The recorder's replayed(): the traced result when c matches the node at the pass's cursor. */
gcr_tensor *gcr_region_replayed(gcr_ctx *ctx, const gcr_call *c);
gcr_status gcr_region_mark_output(gcr_ctx *ctx, gcr_tensor *t);
/* Frees ctx's regions (the recorder's state_free). */
void gcr_regions_free(gcr_ctx *ctx);
/* A replay of g, a graph of region r, ended with s: r's other results stop holding data (or all
 * do, when s failed). */
void gcr_region_graph_ran(struct gcr_region *r, gcr_graph *g, gcr_status s);
const char *gcr_region_name(const struct gcr_region *r);
/* The recorder's host-access rules for regions: a region's tensor inside its own body, a write into a
 * tensor its pass has already read, and why a region's tensor has no data. */
gcr_status gcr_region_host_access(const gcr_tensor *t, bool write, const char *fn);
/* Tensor handles region name keeps, live and retired (tests: bounded by its cache). */
int gcr_region_handle_count(gcr_ctx *ctx, const char *name);

#endif /* GCR_REPLAY_GRAPH_H */
