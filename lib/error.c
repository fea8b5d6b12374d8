/* error.c — the sticky per-context status and its message, eager sections (lib work that runs ops
 * apart from the user's error state), and opt-in logging. */
#include "internal.h"
#include <stdio.h>

const char *gcr_status_name(gcr_status s)
{
    static const char *names[] = {"GCR_OK", "GCR_ERR_INVALID", "GCR_ERR_SHAPE", "GCR_ERR_DTYPE",
                                  "GCR_ERR_PARAM", "GCR_ERR_OOM", "GCR_ERR_DEVICE", "GCR_ERR_COMPILE",
                                  "GCR_ERR_UNSUPPORTED", "GCR_ERR_CAPTURE", "GCR_ERR_GUARD",
                                  "GCR_ERR_IO", "GCR_ERR_INTERNAL"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "GCR_ERR_UNKNOWN";
}

gcr_status gcr_set_error(gcr_ctx *ctx, gcr_status s, const char *fmt, ...)
{
    if (!ctx || s == GCR_OK) return s;
    char msg[sizeof ctx->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx->knobs.log >= 2) fprintf(stderr, "gcr: error: %s: %s\n", gcr_status_name(s), msg);
    if (ctx->mode != GCR_MODE_EAGER && ctx->capture_err == GCR_OK) ctx->capture_err = s;
    if (ctx->status == GCR_OK) { /* sticky: the first error stays until cleared */
        ctx->status = s;
        snprintf(ctx->err, sizeof ctx->err, "%s", msg);
    }
    return s;
}

void gcr_error_prefix(gcr_ctx *ctx, gcr_status before, const char *fmt, ...)
{
    if (!ctx || before != GCR_OK || ctx->status == GCR_OK) return;
    char pre[256], msg[sizeof ctx->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s: %.1780s", pre, ctx->err); /* the prefix wins over the message's tail */
    memcpy(ctx->err, msg, sizeof msg);
}

void gcr_error_rename(gcr_ctx *ctx, gcr_status before, int n, const char *const *from, const char *const *to)
{
    if (!ctx || before != GCR_OK || ctx->status == GCR_OK) return;
    char msg[sizeof ctx->err];
    size_t k = 0;
    const char *p = ctx->err;
    for (int i = 0; i < n; i++) {
        const char *hit = strstr(p, from[i]);
        if (!hit) continue;
        k += (size_t)snprintf(msg + k, sizeof msg - k, "%.*s%s", (int)(hit - p), p, to[i]);
        if (k >= sizeof msg) return; /* cannot grow past the buffer: keep the message as it is */
        p = hit + strlen(from[i]);
    }
    snprintf(msg + k, sizeof msg - k, "%s", p);
    memcpy(ctx->err, msg, sizeof msg);
}

static void vlog(const gcr_ctx *ctx, int level, const char *fmt, va_list ap)
{
    if (!ctx || ctx->knobs.log < level) return;
    fputs("gcr: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void gcr_progress(const gcr_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(ctx, 1, fmt, ap);
    va_end(ap);
}

void gcr_info(const gcr_ctx *ctx, const char *fmt, ...)
{
    if (!ctx || ctx->knobs.log < 2) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(ctx, 2, fmt, ap);
    va_end(ap);
}

gcr_status gcr_ctx_status(const gcr_ctx *ctx) { return ctx ? ctx->status : GCR_ERR_INVALID; }
const char *gcr_ctx_error(const gcr_ctx *ctx) { return ctx ? ctx->err : "NULL context"; }
void gcr_ctx_clear_error(gcr_ctx *ctx)
{
    if (!ctx) return;
    ctx->status = GCR_OK;
    ctx->capture_err = GCR_OK;
    ctx->err[0] = 0;
}

void gcr_eager_begin(gcr_ctx *ctx, gcr_eager_section *s)
{
    s->mode = ctx->mode;
    s->status = ctx->status;
    memcpy(s->err, ctx->err, sizeof s->err);
    ctx->mode = GCR_MODE_EAGER;
    ctx->status = GCR_OK;
    ctx->err[0] = 0;
}

gcr_status gcr_eager_end(gcr_ctx *ctx, gcr_eager_section *s)
{
    gcr_status st = ctx->status;
    ctx->mode = s->mode;
    ctx->status = s->status;
    memcpy(ctx->err, s->err, sizeof s->err);
    return st;
}
