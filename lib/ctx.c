/* ctx.c — context life cycle: device selection (auto, GCR_DEVICE, options), knobs from the
 * environment, the backend's init/fini, and the recorder's state freed with the context. */
#include "internal.h"
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
    o.knobs.autotune = o.knobs.pdl = o.knobs.l2_persist = -1;
    return o;
}

static int env_int(const char *name, int api, int dflt)
{
    if (api >= 0) return api;
    const char *v = getenv(name);
    if (v && *v) return atoi(v);
    return dflt;
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

static char *default_cache_dir(void)
{
    char buf[1024];
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && *x) snprintf(buf, sizeof buf, "%s/gcr", x);
    else if (home && *home) snprintf(buf, sizeof buf, "%s/.cache/gcr", home);
    else snprintf(buf, sizeof buf, "/tmp/gcr-cache");
    return strdup(buf);
}

static void knobs_free(gcr_knobs *k)
{
    free((char *)k->skip_fuse);
    free((char *)k->dump);
    free((char *)k->dump_dir);
    free((char *)k->profile);
    free((char *)k->cache_dir);
}

/* Resolves api knobs (-1/NULL = environment, then default) into *k, owning its strings; false
 * when a string could not be copied (knobs_free still frees the others). */
static bool knobs_resolve(gcr_knobs *k, const gcr_knobs *api)
{
    k->fusion = env_int("GCR_FUSION", api->fusion, 1);
    k->graphs = env_int("GCR_GRAPHS", api->graphs, 1);
    k->horizontal = env_int("GCR_HORIZONTAL", api->horizontal, 1);
    k->single_node = env_int("GCR_SINGLE_NODE", api->single_node, 0);
    k->guards = env_int("GCR_GUARDS", api->guards, 1);
    k->retrace = env_int("GCR_RETRACE", api->retrace, 1);
    k->graph_cache = env_int("GCR_GRAPH_CACHE", api->graph_cache, 8);
    if (k->graph_cache < 1) k->graph_cache = 1;
    k->log = env_int("GCR_LOG", api->log, 1);
    k->tf32 = env_int("GCR_TF32", api->tf32, 0);
    k->autotune = env_int("GCR_AUTOTUNE", api->autotune, 0);
    k->pdl = env_int("GCR_PDL", api->pdl, 1);
    k->l2_persist = env_int("GCR_L2_PERSIST", api->l2_persist, 0);
    bool ok = env_str(&k->skip_fuse, "GCR_SKIP_FUSE", api->skip_fuse, NULL);
    ok = env_str(&k->dump, "GCR_DUMP", api->dump, NULL) && ok;
    ok = env_str(&k->dump_dir, "GCR_DUMP_DIR", api->dump_dir, "gcr_dump") && ok;
    ok = env_str(&k->profile, "GCR_PROFILE", api->profile, NULL) && ok;
    ok = env_str(&k->cache_dir, "GCR_CACHE_DIR", api->cache_dir, NULL) && ok;
    if (ok && !k->cache_dir) ok = (k->cache_dir = default_cache_dir()) != NULL;
    return ok;
}

/* API knobs out of range are refused, not taken for "unset": only -1 means that (graph_cache is the
 * one int knob with a range to check: the others read as flags or levels) */
static gcr_status knobs_check(gcr_ctx *ctx, const gcr_knobs *k, const char *fn)
{
    GCR_CHECK(ctx, k->graph_cache >= -1, GCR_ERR_INVALID,
              "%s: knobs.graph_cache %d is negative (-1 leaves it to GCR_GRAPH_CACHE, else the default 8)", fn,
              k->graph_cache);
    return GCR_OK;
}

gcr_status gcr_ctx_create(gcr_ctx **out, const gcr_ctx_opts *opts)
{
    if (!out) return GCR_ERR_INVALID;
    *out = NULL;
    gcr_ctx_opts o = opts ? *opts : gcr_ctx_opts_default();
    gcr_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return GCR_ERR_OOM;
    ctx->live.next = ctx->live.prev = &ctx->live;
    if (!knobs_resolve(&ctx->knobs, &o.knobs)) {
        knobs_free(&ctx->knobs);
        free(ctx);
        return GCR_ERR_OOM;
    }

    /* refused on the ctx being built, whose knobs say whether the message is printed (GCR_LOG=2):
     * no ctx outlives a failed create to hold it */
    gcr_status s = knobs_check(ctx, &o.knobs, "ctx_create");
    if ((unsigned)o.device > GCR_DEVICE_CUDA)
        s = gcr_set_error(ctx, GCR_ERR_INVALID, "ctx_create: device %d is none of GCR_DEVICE_AUTO (%d), "
                          "GCR_DEVICE_CPU (%d), GCR_DEVICE_CUDA (%d)", (int)o.device, (int)GCR_DEVICE_AUTO,
                          (int)GCR_DEVICE_CPU, (int)GCR_DEVICE_CUDA);
    gcr_device want = o.device;
    if (want == GCR_DEVICE_AUTO) {
        const char *e = getenv("GCR_DEVICE");
        if (e && !strcasecmp(e, "cpu")) want = GCR_DEVICE_CPU;
        else if (e && !strcasecmp(e, "cuda")) want = GCR_DEVICE_CUDA;
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

gcr_status gcr_ctx_set_knobs(gcr_ctx *ctx, const gcr_knobs *k)
{
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, k, GCR_ERR_INVALID, "ctx_set_knobs: NULL knobs (fill a gcr_knobs from gcr_ctx_opts_default().knobs)");
    GCR_TRY(knobs_check(ctx, k, "ctx_set_knobs")); /* before any field changes */
    gcr_knobs *c = &ctx->knobs;
#define SET_INT(f) if (k->f >= 0) c->f = k->f
    SET_INT(fusion); SET_INT(graphs); SET_INT(horizontal); SET_INT(single_node);
    SET_INT(guards); SET_INT(retrace); SET_INT(log); SET_INT(tf32); SET_INT(autotune); SET_INT(pdl);
    SET_INT(l2_persist);
    if (k->graph_cache >= 1) c->graph_cache = k->graph_cache;
#undef SET_INT
#define SET_STR(f)                                                                                            \
    if (k->f) {                                                                                               \
        char *copy = strdup(k->f);                                                                            \
        GCR_CHECK(ctx, copy, GCR_ERR_OOM, "ctx_set_knobs: out of host memory copying " #f " \"%s\"", k->f); \
        free((char *)c->f);                                                                                   \
        c->f = copy;                                                                                          \
    }
    SET_STR(skip_fuse); SET_STR(dump); SET_STR(dump_dir); SET_STR(profile); SET_STR(cache_dir);
#undef SET_STR
    return GCR_OK;
}
