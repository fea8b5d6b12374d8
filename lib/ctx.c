/* ctx.c — context life cycle: device selection (auto, GCR_DEVICE, options), knobs from the
 * environment, the backend's init/fini, and the recorder's state freed with the context. */
#include "internal.h"
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

gcr_ctx_opts gcr_ctx_opts_default(void)
{
    gcr_ctx_opts o;
    memset(&o, 0, sizeof o);
    o.device = GCR_DEVICE_AUTO;
    o.knobs.fusion = o.knobs.graphs = o.knobs.horizontal = o.knobs.single_node = -1;
    o.knobs.guards = o.knobs.retrace = o.knobs.graph_cache = o.knobs.log = o.knobs.tf32 = -1;
    o.knobs.autotune = o.knobs.pdl = o.knobs.l2_persist = o.knobs.convconv = -1;
    return o;
}

/* The integer knobs: field, environment variable, default and the values they take. -1 in the API
 * means "unset" (the variable, else the default); any other value outside lo..hi, and a variable
 * that is not a whole number in lo..hi, is refused, never read as 0 or clamped: GCR_GUARDS=true
 * read by atoi as 0 turned the guards off. */
typedef struct int_knob {
    const char *name, *env;
    size_t off;
    int dflt, lo, hi;
} int_knob;

#define KNOB(f, env, dflt, lo, hi) {#f, env, offsetof(gcr_knobs, f), dflt, lo, hi}
static const int_knob int_knobs[] = {
    KNOB(fusion, "GCR_FUSION", 1, 0, 1),           KNOB(graphs, "GCR_GRAPHS", 1, 0, 1),
    KNOB(horizontal, "GCR_HORIZONTAL", 1, 0, 1),   KNOB(single_node, "GCR_SINGLE_NODE", 0, 0, 1),
    KNOB(guards, "GCR_GUARDS", 1, 0, 1),           KNOB(retrace, "GCR_RETRACE", 1, 0, 1),
    KNOB(graph_cache, "GCR_GRAPH_CACHE", 8, 0, INT_MAX), KNOB(log, "GCR_LOG", 1, 0, 2),
    KNOB(tf32, "GCR_TF32", 0, 0, 1),               KNOB(autotune, "GCR_AUTOTUNE", 0, 0, 1),
    KNOB(pdl, "GCR_PDL", 1, 0, 1),                 KNOB(l2_persist, "GCR_L2_PERSIST", 0, 0, 1),
    KNOB(convconv, "GCR_CONVCONV", 2, 0, 2),
};
#undef KNOB
#define N_INT_KNOBS (int)(sizeof int_knobs / sizeof int_knobs[0])

static int *knob_at(gcr_knobs *k, const int_knob *d) { return (int *)(void *)((char *)k + d->off); }
static int knob_of(const gcr_knobs *k, const int_knob *d) { return *(const int *)(const void *)((const char *)k + d->off); }

/* Every integer knob of api (-1: unset) in its range, before anything uses them: fn names the call */
static gcr_status knobs_check(gcr_ctx *ctx, const gcr_knobs *api, const char *fn)
{
    for (int i = 0; i < N_INT_KNOBS; i++) {
        const int_knob *d = &int_knobs[i];
        const int v = knob_of(api, d);
        GCR_CHECK(ctx, v == -1 || (v >= d->lo && v <= d->hi), GCR_ERR_INVALID,
                  "%s: knobs.%s %d is outside %d..%d (-1 leaves it to %s, else the default %d)", fn, d->name, v, d->lo,
                  d->hi, d->env, d->dflt);
    }
    return GCR_OK;
}

/* knob d of *k: api's value where set, else the environment's (a whole number in range, spaces
 * around it allowed), else the default */
static gcr_status knob_resolve(gcr_ctx *ctx, const int_knob *d, gcr_knobs *k, const gcr_knobs *api)
{
    int *dst = knob_at(k, d);
    *dst = knob_of(api, d) != -1 ? knob_of(api, d) : d->dflt;
    const char *v = knob_of(api, d) == -1 ? getenv(d->env) : NULL;
    if (!v || !*v) return GCR_OK;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    GCR_CHECK(ctx, end != v && !*end && errno == 0 && x >= d->lo && x <= d->hi, GCR_ERR_INVALID,
              "ctx_create: %s=\"%.64s\" is not a whole number in %d..%d", d->env, v, d->lo, d->hi);
    *dst = (int)x;
    return GCR_OK;
}

/* *dst = a copy of api, else of the variable name, else of dflt (NULL when none of them is set);
 * false when the copy could not be made */
static bool env_str(const char **dst, const char *name, const char *api, const char *dflt)
{
    const char *v = api ? api : getenv(name);
    if (!v || !*v) v = dflt;
    *dst = v ? strdup(v) : NULL;
    return !v || *dst;
}

#define DEFAULT_DUMP_DIR "gcr_dump" /* GCR_DUMP_DIR unset or empty */

/* sized to the variable: a fixed buffer cut a long XDG_CACHE_HOME or HOME short, so the kernels
 * went to another directory, a prefix of the one named */
static char *default_cache_dir(void)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    const char *base = x && *x ? x : home && *home ? home : NULL, *tail = x && *x ? "/gcr" : "/.cache/gcr";
    if (!base) return strdup("/tmp/gcr-cache");
    size_t n = strlen(base) + strlen(tail) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s", base, tail);
    return p;
}

static void knobs_free(gcr_knobs *k)
{
    free((char *)k->skip_fuse);
    free((char *)k->dump);
    free((char *)k->dump_dir);
    free((char *)k->profile);
    free((char *)k->cache_dir);
}

/* Resolves api knobs (-1/NULL = environment, then default) into ctx->knobs, owning its strings:
 * GCR_ERR_INVALID for a value out of range (recorded on ctx), GCR_ERR_OOM when a string could not
 * be copied (knobs_free still frees the others). */
static gcr_status knobs_resolve(gcr_ctx *ctx, const gcr_knobs *api)
{
    gcr_knobs *k = &ctx->knobs;
    /* the log level first: it says whether a refusal below is printed, so GCR_LOG=2 prints those
     * of the knobs before it in the table too (a GCR_LOG refused itself leaves the default 1 and is
     * refused again, with the same message, in the loop below) */
    for (int i = 0; i < N_INT_KNOBS; i++)
        if (int_knobs[i].off == offsetof(gcr_knobs, log)) (void)knob_resolve(ctx, &int_knobs[i], k, api);
    gcr_status s = knobs_check(ctx, api, "ctx_create");
    for (int i = 0; i < N_INT_KNOBS && s == GCR_OK; i++) s = knob_resolve(ctx, &int_knobs[i], k, api);
    if (k->graph_cache < 1) k->graph_cache = 1;
    bool ok = env_str(&k->skip_fuse, "GCR_SKIP_FUSE", api->skip_fuse, NULL);
    ok = env_str(&k->dump, "GCR_DUMP", api->dump, NULL) && ok;
    ok = env_str(&k->dump_dir, "GCR_DUMP_DIR", api->dump_dir, DEFAULT_DUMP_DIR) && ok;
    ok = env_str(&k->profile, "GCR_PROFILE", api->profile, NULL) && ok;
    ok = env_str(&k->cache_dir, "GCR_CACHE_DIR", api->cache_dir, NULL) && ok;
    if (ok && !k->cache_dir) ok = (k->cache_dir = default_cache_dir()) != NULL;
    return s != GCR_OK ? s : ok ? GCR_OK : GCR_ERR_OOM;
}

gcr_status gcr_ctx_create(gcr_ctx **out, const gcr_ctx_opts *opts)
{
    if (!out) return GCR_ERR_INVALID;
    *out = NULL;
    gcr_ctx_opts o = opts ? *opts : gcr_ctx_opts_default();
    gcr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return GCR_ERR_OOM;
    ctx->live.next = ctx->live.prev = &ctx->live;
    /* refused on the ctx being built, whose knobs say whether the message is printed (GCR_LOG=2):
     * no ctx outlives a failed create to hold it */
    gcr_status s = knobs_resolve(ctx, &o.knobs);
    if (s == GCR_ERR_OOM) {
        knobs_free(&ctx->knobs);
        free(ctx);
        return GCR_ERR_OOM;
    }
    if (s == GCR_OK && (unsigned)o.device > GCR_DEVICE_CUDA)
        s = gcr_set_error(ctx, GCR_ERR_INVALID, "ctx_create: device %d is none of GCR_DEVICE_AUTO (%d), "
                          "GCR_DEVICE_CPU (%d), GCR_DEVICE_CUDA (%d)", (int)o.device, (int)GCR_DEVICE_AUTO,
                          (int)GCR_DEVICE_CPU, (int)GCR_DEVICE_CUDA);
    gcr_device want = o.device;
    if (want == GCR_DEVICE_AUTO) {
        const char *e = getenv("GCR_DEVICE");
        if (e && !strcasecmp(e, "cpu")) want = GCR_DEVICE_CPU;
        else if (e && !strcasecmp(e, "cuda")) want = GCR_DEVICE_CUDA;
        else if (e && *e && strcasecmp(e, "auto") && s == GCR_OK)
            s = gcr_set_error(ctx, GCR_ERR_INVALID, "ctx_create: GCR_DEVICE=\"%.64s\" is none of cpu, cuda, auto", e);
    }
    const gcr_backend *cuda = gcr_cuda_backend_get();
    if (s == GCR_OK && (want == GCR_DEVICE_CUDA || (want == GCR_DEVICE_AUTO && cuda))) {
        if (!cuda) {
            s = GCR_ERR_DEVICE; /* asked for CUDA explicitly, built without it */
        } else {
            ctx->be = cuda;
            s = cuda->init(ctx, o.device_index);
            if (s != GCR_OK && want == GCR_DEVICE_AUTO) { /* no usable GPU: CPU fallback */
                gcr_info(ctx, "no CUDA device (%s); using the CPU", ctx->err);
                gcr_ctx_clear_error(ctx);
                ctx->be = NULL;
                s = GCR_OK;
            }
        }
    }
    if (s == GCR_OK && !ctx->be) {
        ctx->be = &gcr_cpu_backend;
        s = ctx->be->init(ctx, 0);
    }
    if (s != GCR_OK) {
        knobs_free(&ctx->knobs);
        free(ctx);
        return s;
    }
    ctx->device = ctx->be->device;
    gcr_info(ctx, "context on %s (%s)", ctx->be->name, ctx->device_name);
    *out = ctx;
    return GCR_OK;
}

void gcr_ctx_destroy(gcr_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->rec) ctx->rec->free(ctx); /* graphs and regions hold tensors: before the list */
    gcr_weights_detach_all(ctx);       /* the caller's weights outlive their tensors, freed below */
    while (ctx->live.next != &ctx->live) gcr_tensor_free(ctx->live.next);
    if (ctx->be && ctx->be->fini) ctx->be->fini(ctx);
    knobs_free(&ctx->knobs);
    free(ctx);
}

gcr_device gcr_ctx_device(const gcr_ctx *ctx) { return ctx ? ctx->device : GCR_DEVICE_CPU; }
const char *gcr_ctx_device_name(const gcr_ctx *ctx) { return ctx ? ctx->device_name : ""; }
const gcr_knobs *gcr_ctx_knobs(const gcr_ctx *ctx) { return ctx ? &ctx->knobs : NULL; }

gcr_status gcr_ctx_sync(gcr_ctx *ctx)
{
    if (!ctx) return GCR_ERR_INVALID;
    return ctx->be->sync ? ctx->be->sync(ctx) : GCR_OK;
}

static char *default_dump_dir(void) { return strdup(DEFAULT_DUMP_DIR); }

/* *out = the value a string knob set to v takes: a copy of v, or for "" what ctx_create takes for an
 * empty variable, the default (dflt's copy; NULL: the knob is off), so that a set_knobs can turn
 * GCR_PROFILE or GCR_DUMP off rather than write to the path ""; false when out of host memory */
static bool str_value(char **out, const char *v, char *(*dflt)(void))
{
    *out = *v ? strdup(v) : dflt ? dflt() : NULL;
    return *out || (!*v && !dflt);
}

gcr_status gcr_ctx_set_knobs(gcr_ctx *ctx, const gcr_knobs *k)
{
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, k, GCR_ERR_INVALID, "ctx_set_knobs: NULL knobs (fill a gcr_knobs from gcr_ctx_opts_default().knobs)");
    GCR_TRY(knobs_check(ctx, k, "ctx_set_knobs")); /* before any field changes */
    gcr_knobs *c = &ctx->knobs;
    for (int i = 0; i < N_INT_KNOBS; i++)
        if (knob_of(k, &int_knobs[i]) != -1) *knob_at(c, &int_knobs[i]) = knob_of(k, &int_knobs[i]);
    if (c->graph_cache < 1) c->graph_cache = 1;
    /* a string equal to the one in force is kept, pointer and all: a caller's copy of
     * *gcr_ctx_knobs() passed back (one field changed, set again and again) points at the ctx's own
     * strings, which replacing them would free under it */
#define SET_STR(f, dflt)                                                                                      \
    if (k->f && k->f != c->f && (!c->f || strcmp(k->f, c->f))) {                                             \
        char *copy;                                                                                           \
        GCR_CHECK(ctx, str_value(&copy, k->f, dflt), GCR_ERR_OOM,                                             \
                  "ctx_set_knobs: out of host memory copying " #f " \"%s\"", k->f);                           \
        free((char *)c->f);                                                                                   \
        c->f = copy;                                                                                          \
    }
    SET_STR(skip_fuse, NULL); SET_STR(dump, NULL); SET_STR(dump_dir, default_dump_dir); SET_STR(profile, NULL);
    SET_STR(cache_dir, default_cache_dir);
#undef SET_STR
    return GCR_OK;
}
