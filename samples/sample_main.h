/* sample_main.h — the program around a sample model (samples/mobilenet_v3.c, samples/resnet50.c):
 * options, input, the three modes timed, the table, RESULT JSON lines, and the checks. A sample
 * describes its model in an smp_sample (its own options, how to build, run and free it, how to
 * name it) and its main() calls smp_main(). The model's forward is an ordinary eager function of
 * (ctx, model, input) that this file runs as is or wraps in GCR_REGION.
 *
 *   eager            every op runs when called: one kernel per primitive op
 *   captured+fused   region: traced once, fused, replayed as plain launches (knobs.graphs = 0)
 *   captured+graph   region: the same, replayed as one CUDA Graph (knobs.graphs = 1; on the CPU a
 *                    flat launch list, so equal to the row above)
 *
 * Latency is timed as the PyTorch baselines do: back-to-back forwards with the input already on
 * the device, synchronised at the end of each repetition, median over repetitions.
 *
 * Checking: in exact f32 the modes must agree with each other (1e-4). In f16, or f32 with TF32 convs
 * (GCR_TF32=1), two modes legitimately round differently (eager rounds every primitive op's result
 * to f16, fused kernels keep intermediates in f32; BN folded into the weights rounds them anew), so
 * a mode-vs-mode difference cannot tell a bug from a more accurate kernel; each mode is judged
 * instead against an exact f32 reference (the same model built in f32, one eager forward with TF32
 * off on the input before its cast, then freed): its mean over images of each image's max rel diff
 * within 1e-2, and its worst logit no further off than max(1e-2, 2x eager's own worst), so the
 * dtype's own error (eager's, which grows with the batch as a max over more logits) sets the bar a
 * fused bug would have to clear. --check compares with PyTorch's logits from a golden file. */
#ifndef GCR_SAMPLE_MAIN_H
#define GCR_SAMPLE_MAIN_H

#include "gcr.h"
#include "sample_util.h"
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

/* the options every sample takes; the model's own (--model, --width, --layers, ...) are the
 * sample's */
typedef struct {
    int batch, size, iters, warmup, classes;
    gcr_dtype dtype;
    gcr_device device;
    gcr_format fmt;
    const char *weights, *input, *check;
    int modes; /* bit 0 eager, 1 fused, 2 graph */
    uint64_t seed;
    int reference; /* -1 auto (f32 for f16 when more than one mode ran), 0 none, 1 f32 */
} smp_options;

/* A sample's model, as smp_main drives it. */
typedef struct {
    const char *prog;        /* the program's name, for messages */
    const char *model_usage; /* --help lines of the model's own options */
    /* a model option: 1 taken, 0 not a model option, -1 a bad value */
    int (*option)(const char *name, const char *value);
    size_t model_size; /* smp_main allocates the model structs (zeroed) */
    /* builds the model the options describe in dtype (the run's, or f32 for the reference) and
     * o->fmt, from the weights file w (borrowed) or o->seed: 0, or -1 with error(model) saying why */
    int (*init)(gcr_ctx *ctx, void *model, const smp_options *o, gcr_dtype dtype, const gcr_weights *w);
    const char *(*error)(const void *model);
    gcr_tensor *(*forward)(gcr_ctx *ctx, void *model, gcr_tensor *x); /* x [N,3,H,W] → logits [N,classes] */
    int (*classes)(const void *model);
    int (*ops)(const void *model); /* primitive ops the last forward dispatched = eager kernels */
    void (*free)(void *model);     /* what init made (not the struct) */
    /* the model in the title line ("MobileNet-v3-Large x1") and as JSON fields of the RESULT lines
     * ("\"model\":\"large\",\"width\":1") */
    void (*describe)(char *title, size_t title_size, char *json, size_t json_size);
} smp_sample;

enum { SMP_EAGER, SMP_FUSED, SMP_GRAPH, SMP_NMODES };
static const char *smp_mode_name[SMP_NMODES] = {"eager", "captured+fused", "captured+graph"};
static const char *smp_mode_key[SMP_NMODES] = {"eager", "fused", "graph"};
static const char *smp_prog = "sample";

static double smp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* seconds since this process started (kernel start time, 10 ms resolution), for cold-start
 * figures that include loading the program and libraries; -1 when /proc is unavailable */
static double smp_since_process_start(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces: fields restart after its ')' */
    if (!p) return -1;
    unsigned long long start = 0;
    /* field 22 (starttime) is the 20th after ')' */
    for (int field = 3; p && field <= 22; field++) {
        p = strchr(p + 1, ' ');
        if (p && field == 22) start = strtoull(p + 1, NULL, 10);
    }
    struct timespec ts;
    if (!start || clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return -1;
    return ts.tv_sec + ts.tv_nsec * 1e-9 - (double)start / (double)sysconf(_SC_CLK_TCK);
}

/* the options every sample takes, a line each ("  --name ..."): the usage text, and what
 * smp_known looks options up in */
static const char smp_common_usage[] =
    "  --batch N               batch size (default 1; taken from --input when given)\n"
    "  --size S                input height = width (default 224)\n"
    "  --dtype f32|f16         (default f32)\n"
    "  --device auto|cpu|cuda  (default auto: CUDA when present, else the CPU)\n"
    "  --layout nchw|nhwc      memory format of activations and conv weights (default nchw)\n"
    "  --weights FILE          safetensors with torchvision state_dict names (default: seeded random init)\n"
    "  --input FILE            safetensors holding \"input\" [N,3,H,W] (default: seeded random)\n"
    "  --check FILE            safetensors holding PyTorch's \"logits\": parity check\n"
    "  --iters N               timed forwards per mode (default 100 on CUDA, 3 on the CPU)\n"
    "  --warmup N              untimed forwards per mode (default 10 on CUDA, 1 on the CPU)\n"
    "  --modes LIST            comma list of eager,fused,graph (default all three)\n"
    "  --classes N             classes with random init (default 1000)\n"
    "  --seed N                random init seed (default 1)\n"
    "  --reference none|f32    judge each mode against the same model run eagerly in f32 (default: f32 for\n"
    "                          f16 when more than one mode runs; none otherwise, e.g. one-mode cold starts)\n";

static void smp_usage(const smp_sample *s)
{
    printf("usage: %s [options]\n%s%s", s->prog, s->model_usage, smp_common_usage);
    printf("Environment knobs (GCR_LOG, GCR_CACHE_DIR, GCR_PROFILE, GCR_DUMP, ...) apply as documented in gcr.h.\n");
}

/* v as a whole number in lo..hi (no trailing characters, no wrap: "99999999999" and "1abc" are
 * refused, where atoi gave 1215752191 and 1); 0 when it is not */
static int smp_int(const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi) return 0;
    *out = x;
    return 1;
}

/* whether a is an option, the samples' own or this model's: a line "  --name ..." of the usage */
static int smp_known(const smp_sample *s, const char *a)
{
    char line[80];
    if (strncmp(a, "--", 2) || strlen(a) >= sizeof line - 4) return 0;
    snprintf(line, sizeof line, "  %s ", a);
    return strstr(smp_common_usage, line) || strstr(s->model_usage, line);
}

static int smp_parse(int argc, char **argv, const smp_sample *s, smp_options *o)
{
    long long n;
    *o = (smp_options){1, 224, -1, -1, 1000, GCR_F32, GCR_DEVICE_AUTO, GCR_NCHW, NULL, NULL, NULL, 7, 1, -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { smp_usage(s); exit(0); }
        if (!v) {
            if (smp_known(s, a)) fprintf(stderr, "%s: %s needs a value (--help)\n", s->prog, a);
            else fprintf(stderr, "%s: unknown option %s (--help)\n", s->prog, a);
            return -1;
        }
        i++;
        int taken = s->option(a, v);
        if (taken < 0) goto bad;
        if (taken) continue;
        /* bounds that keep the input's element count (batch x 3 x size^2) well inside int64 */
        if (!strcmp(a, "--batch")) { if (!smp_int(v, 1, 1 << 16, &n)) goto bad; o->batch = (int)n; }
        else if (!strcmp(a, "--size")) { if (!smp_int(v, 32, 1 << 14, &n)) goto bad; o->size = (int)n; }
        else if (!strcmp(a, "--iters")) { if (!smp_int(v, 1, 1000000, &n)) goto bad; o->iters = (int)n; }
        else if (!strcmp(a, "--warmup")) { if (!smp_int(v, 0, 1000000, &n)) goto bad; o->warmup = (int)n; }
        else if (!strcmp(a, "--classes")) { if (!smp_int(v, 1, 1 << 24, &n)) goto bad; o->classes = (int)n; }
        else if (!strcmp(a, "--seed")) { if (!smp_int(v, 0, LLONG_MAX, &n)) goto bad; o->seed = (uint64_t)n; }
        else if (!strcmp(a, "--dtype")) {
            if (!strcmp(v, "f32")) o->dtype = GCR_F32;
            else if (!strcmp(v, "f16")) o->dtype = GCR_F16;
            else goto bad;
        } else if (!strcmp(a, "--device")) {
            if (!strcmp(v, "auto")) o->device = GCR_DEVICE_AUTO;
            else if (!strcmp(v, "cpu")) o->device = GCR_DEVICE_CPU;
            else if (!strcmp(v, "cuda")) o->device = GCR_DEVICE_CUDA;
            else goto bad;
        } else if (!strcmp(a, "--layout")) {
            if (!strcmp(v, "nchw")) o->fmt = GCR_NCHW;
            else if (!strcmp(v, "nhwc")) o->fmt = GCR_NHWC;
            else goto bad;
        } else if (!strcmp(a, "--weights")) o->weights = v;
        else if (!strcmp(a, "--input")) o->input = v;
        else if (!strcmp(a, "--check")) o->check = v;
        else if (!strcmp(a, "--reference")) {
            if (!strcmp(v, "none")) o->reference = 0;
            else if (!strcmp(v, "f32")) o->reference = 1;
            else goto bad;
        } else if (!strcmp(a, "--modes")) {
            o->modes = 0;
            char buf[64];
            if (strlen(v) >= sizeof buf) goto bad; /* cut, its tail would be dropped unread */
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < SMP_NMODES && strcmp(t, smp_mode_key[k])) k++;
                if (k == SMP_NMODES) goto bad;
                o->modes |= 1 << k;
            }
            if (!o->modes) goto bad;
        } else {
            fprintf(stderr, "%s: unknown option %s (--help)\n", s->prog, a);
            return -1;
        }
        continue;
    bad:
        fprintf(stderr, "%s: bad value '%s' for %s (--help)\n", s->prog, v, a);
        return -1;
    }
    return 0;
}

static void smp_die(gcr_ctx *ctx, const char *what)
{
    fprintf(stderr, "%s: %s failed: %s: %s\n", smp_prog, what, gcr_status_name(gcr_ctx_status(ctx)),
            gcr_ctx_error(ctx));
    exit(1);
}

/* A tensor of a safetensors file copied to host f32 (the file's tensors are constants on the
 * device; the input must be an ordinary tensor so captured graphs treat it as an input). */
static float *smp_read_file_tensor(gcr_ctx *ctx, const char *path, const char *name, int64_t *shape, int *ndim)
{
    gcr_weights *w = NULL;
    if (gcr_weights_load(ctx, path, &w) != GCR_OK) smp_die(ctx, "loading a safetensors file");
    gcr_tensor *t = gcr_weights_get(w, name);
    if (!t || gcr_tensor_dtype(t) != GCR_F32) {
        fprintf(stderr, "%s: %s has no f32 tensor \"%s\"\n", smp_prog, path, name);
        exit(1);
    }
    *ndim = gcr_tensor_ndim(t);
    for (int i = 0; i < *ndim; i++) shape[i] = gcr_tensor_dim(t, i);
    float *h = malloc(gcr_tensor_nbytes(t) + 1);
    if (!h || gcr_tensor_to_host(t, h, gcr_tensor_nbytes(t)) != GCR_OK) smp_die(ctx, "reading a file tensor");
    gcr_weights_free(w);
    return h;
}

static int smp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    double ms, first_s, first_replay_at;
    /* graph mode's whole loop step (smp_loop_step): explicit copies, staged, staged and replayed
     * without the region's pass; 0: not run */
    double step_ms, step_staged_ms, step_direct_ms;
    int kernels, ran;
    gcr_graph_stats st;
    float *out;
} smp_result;

/* a model allocated and built, or NULL with the reason on stderr */
static void *smp_build(gcr_ctx *ctx, const smp_sample *s, const smp_options *o, gcr_dtype dtype,
                       const gcr_weights *w, const char *what)
{
    void *m = calloc(1, s->model_size);
    if (!m) fprintf(stderr, "%s: building %s: out of host memory\n", s->prog, what);
    else if (s->init(ctx, m, o, dtype, w) != 0) {
        fprintf(stderr, "%s: building %s: %s\n", s->prog, what, s->error(m));
        free(m);
        m = NULL;
    }
    return m;
}

static void smp_destroy(const smp_sample *s, void *m)
{
    s->free(m);
    free(m);
}

/* One forward in the given mode. Eager: the plain call in a scope that frees its intermediates.
 * Captured: the same call wrapped in a region (traced on the first pass, replayed afterwards). */
static gcr_tensor *smp_step(gcr_ctx *ctx, const smp_sample *s, void *m, gcr_tensor *x, int mode, uint64_t *scope)
{
    gcr_tensor *logits = NULL;
    if (mode == SMP_EAGER) {
        *scope = gcr_scope_begin(ctx);
        logits = s->forward(ctx, m, x);
    } else if (mode == SMP_FUSED) {
        GCR_REGION(ctx, "forward-nograph") { logits = s->forward(ctx, m, x); }
    } else {
        GCR_REGION(ctx, "forward") { logits = s->forward(ctx, m, x); }
    }
    if (!logits) smp_die(ctx, smp_mode_name[mode]);
    return logits;
}

static void smp_run_mode(gcr_ctx *ctx, const smp_sample *s, void *m, gcr_tensor *x, int mode, const smp_options *o,
                         smp_result *r)
{
    /* the modes differ only in these two knobs; a GCR_FUSION set by the user (to debug) wins */
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    if (!getenv("GCR_FUSION")) k.fusion = mode != SMP_EAGER;
    k.graphs = mode == SMP_GRAPH;
    if (gcr_ctx_set_knobs(ctx, &k) != GCR_OK) smp_die(ctx, "setting knobs");
    int64_t nout = (int64_t)o->batch * s->classes(m);
    r->out = malloc((size_t)nout * sizeof(float));
    uint64_t scope = 0;

    /* first pass: for the regions this traces, fuses, compiles and runs once */
    double t0 = smp_now();
    gcr_tensor *y = smp_step(ctx, s, m, x, mode, &scope);
    if (gcr_ctx_sync(ctx) != GCR_OK) smp_die(ctx, "sync");
    r->first_s = smp_now() - t0;
    r->kernels = s->ops(m);
    if (mode == SMP_EAGER) gcr_scope_end(ctx, scope);
    else { /* the first true replay, for cold-start figures */
        y = smp_step(ctx, s, m, x, mode, &scope);
        if (gcr_ctx_sync(ctx) != GCR_OK) smp_die(ctx, "sync");
        r->first_replay_at = smp_since_process_start();
    }

    for (int i = 0; i < o->warmup; i++) {
        y = smp_step(ctx, s, m, x, mode, &scope);
        if (mode == SMP_EAGER) gcr_scope_end(ctx, scope);
    }
    if (gcr_ctx_sync(ctx) != GCR_OK) smp_die(ctx, "sync");

    int reps = o->iters < 5 ? o->iters : 5, per = o->iters / reps;
    double ms[5];
    for (int rep = 0; rep < reps; rep++) {
        t0 = smp_now();
        for (int i = 0; i < per; i++) {
            y = smp_step(ctx, s, m, x, mode, &scope);
            /* eager frees each forward's intermediates, stream-ordered, as a real loop must */
            if (mode == SMP_EAGER && (rep < reps - 1 || i < per - 1)) gcr_scope_end(ctx, scope);
        }
        if (gcr_ctx_sync(ctx) != GCR_OK) smp_die(ctx, "sync");
        ms[rep] = (smp_now() - t0) * 1e3 / per;
    }
    qsort(ms, (size_t)reps, sizeof *ms, smp_cmp_double);
    r->ms = ms[reps / 2];
    /* region outputs are static buffers overwritten by the next replay: copy out now (f16
     * logits through an eager cast) */
    gcr_tensor *f = gcr_tensor_dtype(y) == GCR_F32 ? y : gcr_cast(ctx, y, GCR_F32);
    if (!f || gcr_tensor_to_host(f, r->out, (size_t)nout * sizeof(float)) != GCR_OK) smp_die(ctx, "reading logits");
    if (f != y) gcr_tensor_free(f);
    if (mode == SMP_EAGER) gcr_scope_end(ctx, scope);
    else {
        gcr_graph *g = gcr_region_graph(ctx, mode == SMP_FUSED ? "forward-nograph" : "forward");
        if (!g || gcr_graph_get_stats(g, &r->st) != GCR_OK) smp_die(ctx, "graph stats");
        r->kernels = r->st.kernels;
    }
    r->ran = 1;
}

/* The median of reps timings of per calls of one loop step, in ms: with g NULL explicit copies
 * around the region; else g staged, run by the region's pass or, with direct, by gcr_graph_replay. */
static double smp_time_steps(gcr_ctx *ctx, const smp_sample *s, void *m, gcr_tensor *x, const smp_options *o,
                             gcr_graph *g, int direct, void *host_in, size_t in_bytes, float *host_out, size_t out_bytes)
{
    void *in_buf = NULL, *out_buf = NULL;
    if (g && (gcr_graph_input_host(g, 0, in_bytes, &in_buf) != GCR_OK ||
              gcr_graph_output_host(g, 0, out_bytes, &out_buf) != GCR_OK))
        smp_die(ctx, "staging the loop step's host buffers");
    if (g) memcpy(in_buf, host_in, in_bytes); /* where a loop would decode its image straight into */
    uint64_t scope = 0;
    int reps = o->iters < 5 ? o->iters : 5, per = o->iters / reps;
    double ms[5];
    for (int rep = 0; rep < reps; rep++) {
        double t0 = smp_now();
        for (int i = 0; i < per; i++) {
            if (g && direct) { /* nothing of the body changes: the graph alone, no check pass */
                if (gcr_graph_replay(g) != GCR_OK) smp_die(ctx, "replaying the staged graph");
            } else if (g) { /* one replay uploads, runs and downloads: the logits are in out_buf at return */
                smp_step(ctx, s, m, x, SMP_GRAPH, &scope);
            } else {
                if (gcr_tensor_from_host(x, host_in, in_bytes) != GCR_OK) smp_die(ctx, "uploading the input");
                gcr_tensor *y = smp_step(ctx, s, m, x, SMP_GRAPH, &scope);
                if (gcr_tensor_to_host(y, host_out, out_bytes) != GCR_OK) smp_die(ctx, "downloading the logits");
            }
        }
        ms[rep] = (smp_now() - t0) * 1e3 / per;
    }
    if (g) memcpy(host_out, out_buf, out_bytes);
    qsort(ms, (size_t)reps, sizeof *ms, smp_cmp_double);
    return ms[reps / 2];
}

/* Graph mode's whole loop step, host input to host logits, as a C inference loop runs it: with
 * explicit copies (gcr_tensor_from_host, the region, gcr_tensor_to_host: three syncs), and with the
 * region's graph owning page-locked host buffers (gcr_graph_input_host / output_host: the copies
 * are nodes of its CUDA Graph, one launch and one sync). Either way the input starts in host memory
 * the loop owns (host_in, or the staged buffer it decodes into) and the logits end in host memory
 * (host_out, or the staged buffer); the input's bytes are x's own. A loop whose body calls stay the
 * same may also skip the region's check pass and replay its graph directly (gcr_graph_replay). */
static void smp_loop_step(gcr_ctx *ctx, const smp_sample *s, void *m, gcr_tensor *x, const smp_options *o,
                          smp_result *r)
{
    gcr_graph *g = gcr_region_graph(ctx, "forward");
    gcr_tensor *y = g && gcr_graph_num_outputs(g) == 1 ? gcr_graph_get_output(g, 0) : NULL;
    if (!g || !y || gcr_graph_num_inputs(g) != 1 || gcr_graph_get_input(g, 0) != x) {
        printf("loop step: the forward's graph does not have the input as its only input and the logits as its only "
               "output; not timed\n");
        return;
    }
    size_t in_bytes = gcr_tensor_nbytes(x), out_bytes = gcr_tensor_nbytes(y);
    void *host_in = malloc(in_bytes), *host_out = malloc(out_bytes);
    if (!host_in || !host_out || gcr_tensor_to_host(x, host_in, in_bytes) != GCR_OK) smp_die(ctx, "loop step buffers");
    r->step_ms = smp_time_steps(ctx, s, m, x, o, NULL, 0, host_in, in_bytes, host_out, out_bytes);
    r->step_staged_ms = smp_time_steps(ctx, s, m, x, o, g, 0, host_in, in_bytes, host_out, out_bytes);
    r->step_direct_ms = smp_time_steps(ctx, s, m, x, o, g, 1, host_in, in_bytes, host_out, out_bytes);
    free(host_in);
    free(host_out);
}

/* How far logits [batch, classes] are from reference logits: the max rel diff over the whole
 * batch (smp_rel_diff), the mean over images of each image's own max rel diff, and the number of
 * images whose top-1 class is the reference's. */
typedef struct {
    double max_rel, mean_image_rel;
    int top1_same;
} smp_errors;

static smp_errors smp_compare(const float *a, const float *ref, int batch, int classes)
{
    smp_errors e = {smp_rel_diff(a, ref, (int64_t)batch * classes), 0, 0};
    for (int b = 0; b < batch; b++) {
        const float *ai = a + (int64_t)b * classes, *ri = ref + (int64_t)b * classes;
        e.mean_image_rel += smp_rel_diff(ai, ri, classes) / batch;
        e.top1_same += smp_argmax(ai, classes) == smp_argmax(ri, classes);
    }
    return e;
}

/* The f32 reference: the model rebuilt in f32 with the same layout from the same weights file or
 * seed (the models seed a per-model generator, so the random weights are the ones the run used
 * before its cast), one eager forward on the f32 host input, logits into out [batch * classes].
 * Everything it made is freed before it returns. Returns its wall time in seconds. */
static double smp_f32_reference(gcr_ctx *ctx, const smp_sample *s, const smp_options *o, const gcr_weights *w,
                                const int64_t *xs, const float *xin, int classes, float *out)
{
    double t0 = smp_now();
    /* exact: TF32 off for the reference, restored after */
    int tf32 = gcr_ctx_knobs(ctx)->tf32;
    gcr_knobs k = gcr_ctx_opts_default().knobs;
    k.tf32 = 0;
    if (gcr_ctx_set_knobs(ctx, &k) != GCR_OK) smp_die(ctx, "setting knobs");
    void *rm = smp_build(ctx, s, o, GCR_F32, w, "the f32 reference");
    if (!rm) exit(1);
    if (s->classes(rm) != classes) {
        fprintf(stderr, "%s: the f32 reference has %d classes, the model %d\n", s->prog, s->classes(rm), classes);
        exit(1);
    }
    uint64_t scope = gcr_scope_begin(ctx); /* frees the input and every intermediate */
    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, xs, o->fmt, xin);
    gcr_tensor *y = x ? s->forward(ctx, rm, x) : NULL;
    if (!y || gcr_tensor_to_host(y, out, (size_t)xs[0] * classes * sizeof(float)) != GCR_OK)
        smp_die(ctx, "the f32 reference forward");
    gcr_scope_end(ctx, scope);
    smp_destroy(s, rm);
    k.tf32 = tf32;
    if (gcr_ctx_set_knobs(ctx, &k) != GCR_OK) smp_die(ctx, "setting knobs");
    return smp_now() - t0;
}

/* the whole program: returns main()'s exit status */
static int smp_main(int argc, char **argv, const smp_sample *s)
{
    smp_prog = s->prog;
    smp_options o;
    if (smp_parse(argc, argv, s, &o) != 0) return 2;
    gcr_ctx_opts co = gcr_ctx_opts_default();
    co.device = o.device;
    gcr_ctx *ctx = NULL;
    gcr_status st = gcr_ctx_create(&ctx, &co);
    if (st != GCR_OK) {
        fprintf(stderr, "%s: no context on the requested device: %s\n", s->prog, gcr_status_name(st));
        return 1;
    }
    int gpu = gcr_ctx_device(ctx) == GCR_DEVICE_CUDA;
    if (o.iters < 0) o.iters = gpu ? 100 : 3;
    if (o.warmup < 0) o.warmup = gpu ? 10 : 1;

    /* input: from a file, else seeded uniform [-1, 1) (dense NCHW host order, whatever the layout) */
    float *xin;
    int64_t xs[GCR_MAX_DIMS];
    int xnd = 4;
    if (o.input) {
        xin = smp_read_file_tensor(ctx, o.input, "input", xs, &xnd);
        if (xnd != 4 || xs[0] < 1 || xs[1] != 3 || xs[2] < 32 || xs[3] < 32 || xs[2] != xs[3]) {
            fprintf(stderr, "%s: %s: \"input\" must be [N,3,S,S] with N >= 1 and S >= 32\n", s->prog, o.input);
            return 1;
        }
        o.batch = (int)xs[0];
        o.size = (int)xs[2];
    } else {
        xs[0] = o.batch, xs[1] = 3, xs[2] = xs[3] = o.size;
        int64_t n = xs[0] * 3 * xs[2] * xs[3]; /* at most 2^16 x 3 x 2^28 (smp_parse's bounds) */
        xin = malloc((size_t)n * sizeof *xin);
        if (!xin) {
            fprintf(stderr, "%s: out of host memory for a %lld-element input\n", s->prog, (long long)n);
            return 1;
        }
        uint64_t rng = o.seed * 7919 + 17;
        for (int64_t i = 0; i < n; i++) xin[i] = (float)(2 * smp_uniform(&rng) - 1);
    }

    gcr_weights *w = NULL;
    if (o.weights && gcr_weights_load(ctx, o.weights, &w) != GCR_OK) smp_die(ctx, "loading weights");
    double t0 = smp_now();
    void *m = smp_build(ctx, s, &o, o.dtype, w, "the model");
    if (!m) return 1;
    double init_s = smp_now() - t0;
    int classes = s->classes(m);

    gcr_tensor *x = gcr_tensor_from_data(ctx, GCR_F32, 4, xs, o.fmt, xin);
    if (x && o.dtype != GCR_F32) {
        gcr_tensor *h = gcr_cast(ctx, x, o.dtype);
        gcr_tensor_free(x);
        x = h;
    }
    if (!x) smp_die(ctx, "creating the input");
    gcr_tensor_keep(x);

    char title[128], json[256];
    s->describe(title, sizeof title, json, sizeof json);
    printf("gcr %s: batch %d, %s, %s, %dx%d, %s weights, on %s (%s)\n", title, o.batch, gcr_dtype_name(o.dtype),
           o.fmt == GCR_NHWC ? "nhwc" : "nchw", o.size, o.size, w ? o.weights : "random", gcr_ctx_device_name(ctx),
           gpu ? "cuda" : "cpu");
    printf("model built in %.2f s; timing %d forwards per mode after %d warm-up\n\n", init_s, o.iters, o.warmup);

    smp_result r[SMP_NMODES];
    memset(r, 0, sizeof r);
    for (int k = 0; k < SMP_NMODES; k++)
        if (o.modes & (1 << k)) smp_run_mode(ctx, s, m, x, k, &o, &r[k]);
    if (r[SMP_GRAPH].ran) smp_loop_step(ctx, s, m, x, &o, &r[SMP_GRAPH]);

    int base = r[SMP_EAGER].ran ? SMP_EAGER : -1;
    printf("%-16s %12s %12s %12s %9s %13s\n", "mode", "median ms", "images/s", "kernels/fwd", "speedup",
           "first pass s");
    for (int k = 0; k < SMP_NMODES; k++) {
        if (!r[k].ran) continue;
        char sp[32] = "-";
        if (base >= 0) snprintf(sp, sizeof sp, "%.2fx", r[base].ms / r[k].ms);
        printf("%-16s %12.3f %12.1f %12d %9s %13.3f\n", smp_mode_name[k], r[k].ms, o.batch * 1e3 / r[k].ms,
               r[k].kernels, sp, r[k].first_s);
    }
    for (int k = 1; k < SMP_NMODES; k++)
        if (r[k].ran)
            printf("%s: %d ops traced -> %d kernels (%d fused), arena %.1f MB, compile %.2f s, cache %d hits / %d "
                   "misses\n",
                   smp_mode_name[k], r[k].st.ops_traced, r[k].st.kernels, r[k].st.fused_groups,
                   r[k].st.arena_bytes / 1048576.0, r[k].st.compile_seconds, r[k].st.cache_hits,
                   r[k].st.cache_misses);
    if (r[SMP_GRAPH].step_ms > 0)
        printf("captured+graph loop step (host input -> host logits): %.3f ms with explicit copies, %.3f ms staged in "
               "the graph, %.3f ms staged and replayed without the region's pass\n",
               r[SMP_GRAPH].step_ms, r[SMP_GRAPH].step_staged_ms, r[SMP_GRAPH].step_direct_ms);
    for (int k = 1; k < SMP_NMODES; k++)
        if (r[k].ran && r[k].first_replay_at > 0)
            printf("%s: first replayed result %.2f s after process start\n", smp_mode_name[k], r[k].first_replay_at);
    /* one JSON line per mode for the bench scripts (bench/mobilenet.sh) */
    for (int k = 0; k < SMP_NMODES; k++)
        if (r[k].ran)
            printf("RESULT {\"engine\":\"gcr-%s\",%s,\"dtype\":\"%s\",\"layout\":\"%s\","
                   "\"batch\":%d,\"ms\":%.4f,\"img_per_s\":%.1f,\"kernels\":%d,\"first_pass_s\":%.3f,"
                   "\"first_replay_at_s\":%.3f,\"compile_s\":%.3f,\"step_ms\":%.4f,\"step_staged_ms\":%.4f,"
                   "\"step_direct_ms\":%.4f,"
                   "\"device\":\"%s\"}\n",
                   smp_mode_key[k], json, gcr_dtype_name(o.dtype), o.fmt == GCR_NHWC ? "nhwc" : "nchw", o.batch,
                   r[k].ms, o.batch * 1e3 / r[k].ms, r[k].kernels, r[k].first_s, r[k].first_replay_at,
                   r[k].st.compile_seconds, r[k].step_ms, r[k].step_staged_ms, r[k].step_direct_ms,
                   gcr_ctx_device_name(ctx));

    int rc = 0;
    int64_t nout = (int64_t)o.batch * classes;
    /* reduced precision: f16, or f32 whose convs ran on TF32 */
    int tf32 = o.dtype == GCR_F32 && gpu && gcr_ctx_knobs(ctx)->tf32 > 0, reduced = o.dtype != GCR_F32 || tf32;
    const char *prec = tf32 ? "f32 with TF32 convs" : gcr_dtype_name(o.dtype);
    double tol = reduced ? 1e-2 : 1e-4;
    int first = -1, nran = 0;
    for (int k = 0; k < SMP_NMODES; k++)
        if (r[k].ran) { nran++; if (first < 0) first = k; }

    /* reduced precision: each mode against the exact f32 reference (by default only when several
     * modes ran, so a one-mode cold-start run pays nothing); the reference runs after the timings */
    float *ref = NULL;
    if (o.reference == 1 || (o.reference < 0 && reduced && nran > 1)) {
        ref = malloc((size_t)nout * sizeof *ref);
        if (!ref) smp_die(ctx, "allocating the f32 reference");
        double secs = smp_f32_reference(ctx, s, &o, w, xs, xin, classes, ref);
        printf("\nvs f32 reference (same weights and input, eager f32, %.2f s): tolerance %.0e\n", secs, tol);
        printf("%-16s %12s %15s %12s\n", "mode", "max rel diff", "mean image rel", "top-1 same");
        smp_errors e[SMP_NMODES];
        for (int k = 0; k < SMP_NMODES; k++) {
            if (!r[k].ran) continue;
            e[k] = smp_compare(r[k].out, ref, o.batch, classes);
            char top1[32];
            snprintf(top1, sizeof top1, "%d/%d", e[k].top1_same, o.batch);
            printf("%-16s %12.2g %15.2g %12s\n", smp_mode_name[k], e[k].max_rel, e[k].mean_image_rel, top1);
        }
        /* the bar for the worst logit: the dtype's own error as eager shows it, at least tol */
        double bar = tol;
        if (reduced && r[SMP_EAGER].ran && 2 * e[SMP_EAGER].max_rel > bar) bar = 2 * e[SMP_EAGER].max_rel;
        int bad = -1;
        for (int k = 0; k < SMP_NMODES && bad < 0; k++)
            if (r[k].ran && !(e[k].mean_image_rel <= tol && e[k].max_rel <= bar)) bad = k;
        if (bad < 0)
            printf("outputs agree with the f32 reference (%s): mean image rel diff within %.0e, worst logit within "
                   "%.2g\n", prec, tol, bar);
        else {
            printf("OUTPUTS DISAGREE with the f32 reference (%s): %s mean image rel diff %.3g (limit %.0e), worst %.3g "
                   "(limit %.2g)\n", prec, smp_mode_key[bad], e[bad].mean_image_rel, tol, e[bad].max_rel, bar);
            rc = 1;
        }
    }

    /* mode vs mode: the verdict in f32; in f16 for information only (rounding differs by design) */
    if (nran > 1) {
        double worst = 0;
        char buf[256] = "";
        for (int k = first + 1; k < SMP_NMODES; k++) {
            if (!r[k].ran) continue;
            double d = smp_rel_diff(r[k].out, r[first].out, nout);
            if (!(d <= worst)) worst = d;
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s %.2g", buf[0] ? ", " : "", smp_mode_key[k], d);
        }
        if (reduced)
            printf("%smodes vs %s (information, not judged: %s modes round differently): max rel diff %.2g (%s)\n",
                   ref ? "" : "\n", smp_mode_key[first], prec, worst, buf);
        else if (worst <= tol)
            printf("\noutputs agree: max rel diff %.2g vs %s (%s; tolerance %.0e)\n", worst, smp_mode_key[first], buf,
                   tol);
        else {
            printf("\nOUTPUTS DISAGREE: max rel diff %.3g vs %s (%s) exceeds %.0e\n", worst, smp_mode_key[first], buf,
                   tol);
            rc = 1;
        }
    }
    free(ref);

    if (o.check) {
        int64_t gs[GCR_MAX_DIMS];
        int gnd;
        float *gold = smp_read_file_tensor(ctx, o.check, "logits", gs, &gnd);
        if (gnd != 2 || gs[0] != o.batch || gs[1] != classes) {
            fprintf(stderr, "%s: %s: \"logits\" is not [%d,%d]\n", s->prog, o.check, o.batch, classes);
            return 1;
        }
        /* in f16, PyTorch's own f16 logits in the file (logits_f16) say how far f16 rounding takes the
         * logits of this model and input: the limit is 4x that, at least tol (as test/parity_util.h) */
        double limit = tol;
        gcr_weights *gw = NULL;
        if (o.dtype == GCR_F16 && gcr_weights_load(ctx, o.check, &gw) == GCR_OK) {
            gcr_tensor *t16 = gcr_weights_get(gw, "logits_f16");
            float *h16 = t16 && gcr_tensor_dtype(t16) == GCR_F32 && gcr_tensor_numel(t16) == nout ? malloc(gcr_tensor_nbytes(t16)) : NULL;
            if (h16 && gcr_tensor_to_host(t16, h16, gcr_tensor_nbytes(t16)) == GCR_OK && 4 * smp_rel_diff(h16, gold, nout) > limit)
                limit = 4 * smp_rel_diff(h16, gold, nout);
            free(h16);
            gcr_weights_free(gw);
        }
        gcr_ctx_clear_error(ctx);
        for (int k = 0; k < SMP_NMODES; k++) {
            if (!r[k].ran) continue;
            smp_errors e = smp_compare(r[k].out, gold, o.batch, classes);
            int top1 = e.top1_same == o.batch;
            int ok = e.max_rel <= limit && (!reduced || top1);
            printf("parity vs PyTorch (%s): %s: max rel err %.2g (limit %.2g), top-1 %s\n", o.check, smp_mode_name[k],
                   e.max_rel, limit, top1 ? "same" : "DIFFERS");
            if (!ok) {
                printf("PARITY FAILED for %s\n", smp_mode_name[k]);
                rc = 1;
            }
        }
        free(gold);
    }

    for (int k = 0; k < SMP_NMODES; k++) free(r[k].out);
    free(xin);
    smp_destroy(s, m);
    gcr_weights_free(w);
    gcr_ctx_destroy(ctx);
    return rc;
}

#endif /* GCR_SAMPLE_MAIN_H */
