/* weights.c — loads safetensors files (gcr_weights_*): an 8-byte little-endian header length, a
 * JSON header {name: {dtype, shape, data_offsets}} (plus an ignored "__metadata__"), then the
 * raw little-endian data. Every field is validated before any byte is used, because these files
 * come from outside: a malformed file is GCR_ERR_IO naming the file and tensor, never a crash.
 * Tensors land on the ctx's device, constant (capture may fold them) and kept (scopes skip them).
 * The ctx lists the weights loaded on it, so that its end detaches them: the caller owns the
 * gcr_weights and may free it before or after the ctx. */
#include "internal.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reference implementation refuses headers above 100 MB; a larger one is a corrupt length. */
#define GCR_WEIGHTS_MAX_HEADER (100u << 20)

struct gcr_weights {
    gcr_ctx *ctx;         /* NULL once the ctx is destroyed (gcr_weights_detach_all) */
    gcr_weights *prev, *next; /* the ctx's list of live weights (ctx->weights) */
    int n;
    char **names;         /* [n], owned */
    gcr_tensor **tensors; /* [n], owned (kept + const); NULL once detached: the ctx freed them */
};

static const struct {
    const char *name;
    gcr_dtype dt;
} st_dtypes[] = {
    {"F32", GCR_F32}, {"F16", GCR_F16}, {"BF16", GCR_BF16},
    {"I32", GCR_I32}, {"I64", GCR_I64}, {"BOOL", GCR_BOOL},
};

/* A JSON number that is an exact non-negative integer below 2^53 (doubles are exact there). */
static int json_uint(const cJSON *j, uint64_t *v)
{
    if (!cJSON_IsNumber(j)) return 0;
    double d = j->valuedouble;
    if (!(d >= 0.0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d) return 0;
    *v = (uint64_t)d;
    return 1;
}

/* The ctx's list of live weights: the weights outlive the ctx (the caller frees them, in either
 * order), their tensors do not. */
static void ctx_list_push(gcr_weights *w)
{
    w->next = w->ctx->weights;
    if (w->next) w->next->prev = w;
    w->ctx->weights = w;
}

static void ctx_list_drop(gcr_weights *w)
{
    if (!w->ctx) return;
    if (w->prev) w->prev->next = w->next;
    else w->ctx->weights = w->next;
    if (w->next) w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

void gcr_weights_detach_all(gcr_ctx *ctx)
{
    while (ctx->weights) {
        gcr_weights *w = ctx->weights;
        ctx_list_drop(w);
        w->ctx = NULL;
        for (int i = 0; i < w->n; i++) w->tensors[i] = NULL;
    }
}

void gcr_weights_free(gcr_weights *w)
{
    if (!w) return;
    ctx_list_drop(w);
    for (int i = 0; i < w->n; i++) {
        gcr_tensor_free(w->tensors[i]); /* NULL once detached: a no-op */
        free(w->names[i]);
    }
    free(w->tensors);
    free(w->names);
    free(w);
}

/* One header entry: validates it against the data section (data_bytes long, at data) and
 * creates its tensor as entry w->n. */
static gcr_status load_entry(gcr_weights *w, const char *path, const cJSON *e, const unsigned char *data,
                             uint64_t data_bytes)
{
    gcr_ctx *ctx = w->ctx;
    /* the name in messages: one as long as the message would crowd out what is wrong with it */
    char name[128];
    size_t len = strlen(e->string);
    if (len < sizeof name) memcpy(name, e->string, len + 1);
    else snprintf(name, sizeof name, "%.80s...(%zu bytes)", e->string, len);
    GCR_CHECK(ctx, cJSON_IsObject(e), GCR_ERR_IO, "weights: %s: tensor '%s': entry is not a JSON object", path, name);

    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    GCR_CHECK(ctx, cJSON_IsString(jd), GCR_ERR_IO, "weights: %s: tensor '%s': missing string \"dtype\"", path, name);
    int dt = -1;
    for (size_t i = 0; i < sizeof st_dtypes / sizeof *st_dtypes; i++)
        if (strcmp(jd->valuestring, st_dtypes[i].name) == 0) dt = (int)st_dtypes[i].dt;
    GCR_CHECK(ctx, dt >= 0, GCR_ERR_IO,
              "weights: %s: tensor '%s': dtype \"%s\" not supported (F32, F16, BF16, I32, I64, BOOL)", path, name,
              jd->valuestring);

    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    GCR_CHECK(ctx, cJSON_IsArray(js), GCR_ERR_IO, "weights: %s: tensor '%s': missing array \"shape\"", path, name);
    int ndim = cJSON_GetArraySize(js);
    GCR_CHECK(ctx, ndim <= GCR_MAX_DIMS, GCR_ERR_IO, "weights: %s: tensor '%s': %d dims, at most %d supported", path,
              name, ndim, GCR_MAX_DIMS);
    int64_t shape[GCR_MAX_DIMS];
    uint64_t bytes = gcr_dtype_size((gcr_dtype)dt);
    int k = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, js) {
        uint64_t v;
        GCR_CHECK(ctx, json_uint(d, &v), GCR_ERR_IO,
                  "weights: %s: tensor '%s': shape entry %d is not a non-negative integer", path, name, k);
        GCR_CHECK(ctx, !__builtin_mul_overflow(bytes, v, &bytes), GCR_ERR_IO,
                  "weights: %s: tensor '%s': shape overflows a 64-bit size", path, name);
        shape[k++] = (int64_t)v;
    }
    if (!gcr_shape_fits((gcr_dtype)dt, ndim, shape)) { /* an empty tensor may still have absurd dims: [0, 2^53] */
        char b[256];
        size_t n = 0;
        for (int i = 0; i < ndim && n < sizeof b; i++)
            n += (size_t)snprintf(b + n, sizeof b - n, i ? ",%lld" : "%lld", (long long)shape[i]);
        return gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: tensor '%s': shape [%s] too large (1 PiB at most, empty dims "
                             "counting as 1)", path, name, ndim ? b : "");
    }

    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t beg = 0, end = 0;
    GCR_CHECK(ctx, cJSON_IsArray(jo) && cJSON_GetArraySize(jo) == 2 && json_uint(cJSON_GetArrayItem(jo, 0), &beg) &&
                       json_uint(cJSON_GetArrayItem(jo, 1), &end),
              GCR_ERR_IO, "weights: %s: tensor '%s': \"data_offsets\" must be [begin, end] integers", path, name);
    GCR_CHECK(ctx, beg <= end && end <= data_bytes, GCR_ERR_IO,
              "weights: %s: tensor '%s': data_offsets [%llu, %llu] outside the %llu-byte data section", path, name,
              (unsigned long long)beg, (unsigned long long)end, (unsigned long long)data_bytes);
    GCR_CHECK(ctx, end - beg == bytes, GCR_ERR_IO,
              "weights: %s: tensor '%s': data_offsets span %llu bytes, but %s shape needs %llu", path, name,
              (unsigned long long)(end - beg), jd->valuestring, (unsigned long long)bytes);
    for (int i = 0; i < w->n; i++)
        GCR_CHECK(ctx, strcmp(w->names[i], e->string) != 0, GCR_ERR_IO, "weights: %s: tensor '%s' appears twice",
                  path, name);

    w->names[w->n] = strdup(e->string);
    GCR_CHECK(ctx, w->names[w->n], GCR_ERR_OOM, "weights: %s: out of host memory", path);
    /* data may be NULL for an all-empty data section; from_data wants a pointer even for 0 bytes */
    static const unsigned char none[1];
    gcr_status before = ctx->status;
    gcr_tensor *t = gcr_tensor_from_data(ctx, (gcr_dtype)dt, ndim, shape, GCR_NCHW, data ? data + beg : none);
    if (!t) {
        free(w->names[w->n]);
        gcr_error_prefix(ctx, before, "weights: %s: tensor '%s'", path, name);
        return ctx->status ? ctx->status : GCR_ERR_INTERNAL;
    }
    w->tensors[w->n++] = gcr_tensor_keep(gcr_tensor_set_const(t));
    return GCR_OK;
}

/* Reads exactly n bytes or fails (a short read is a truncated file). */
static int read_all(FILE *f, void *p, size_t n) { return n == 0 || fread(p, 1, n, f) == n; }

gcr_status gcr_weights_load(gcr_ctx *ctx, const char *path, gcr_weights **out)
{
    if (out) *out = NULL;
    if (!ctx) return GCR_ERR_INVALID;
    GCR_CHECK(ctx, path && out, GCR_ERR_INVALID, "weights_load: NULL %s", path ? "out pointer" : "path");
    GCR_CHECK(ctx, ctx->mode == GCR_MODE_EAGER, GCR_ERR_CAPTURE,
              "weights_load: %s: load weights before capturing, not inside a capture", path);

    /* O_NONBLOCK: opening a FIFO no one writes would wait forever, before the regular-file check
     * below could refuse it (regular files ignore the flag) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f && fd >= 0) close(fd);
    GCR_CHECK(ctx, f, GCR_ERR_IO, "weights: cannot open %s: %s", path, strerror(errno));
    gcr_status s = GCR_OK;
    char *hdr = NULL;
    unsigned char *data = NULL;
    cJSON *root = NULL;
    gcr_weights *w = NULL;

    /* opening succeeds on a directory (whose ftell size is LONG_MAX): only regular files load */
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0) {
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: cannot determine the file size: %s", path, strerror(errno));
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: not a regular file%s", path,
                          S_ISDIR(sb.st_mode) ? " (a directory)" : "");
        goto done;
    }
    long fsize = (long)sb.st_size;
    unsigned char lenb[8];
    if (fsize < 8 || !read_all(f, lenb, 8)) {
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: %ld bytes, too short for the 8-byte header length", path,
                          fsize);
        goto done;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | lenb[i]; /* little-endian on any host */
    if (hlen < 2 || hlen > GCR_WEIGHTS_MAX_HEADER || hlen > (uint64_t)fsize - 8) {
        s = gcr_set_error(ctx, GCR_ERR_IO,
                          "weights: %s: header length %llu is not in [2, min(100 MB, %ld bytes left)] (truncated "
                          "or not a safetensors file)",
                          path, (unsigned long long)hlen, fsize - 8);
        goto done;
    }
    uint64_t data_bytes = (uint64_t)fsize - 8 - hlen;
    hdr = malloc(hlen + 1);
    data = data_bytes ? malloc(data_bytes) : NULL;
    if (!hdr || (data_bytes && !data)) {
        s = gcr_set_error(ctx, GCR_ERR_OOM, "weights: %s: out of host memory for %llu bytes", path,
                          (unsigned long long)(hlen + data_bytes));
        goto done;
    }
    if (!read_all(f, hdr, hlen) || !read_all(f, data, data_bytes)) {
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: read failed (file changed while reading?)", path);
        goto done;
    }
    hdr[hlen] = 0;
    const char *nul = memchr(hdr, 0, hlen);
    if (nul) { /* the parser would stop there and accept what came before */
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: header holds a NUL byte at byte %zu of %llu", path,
                          (size_t)(nul - hdr), (unsigned long long)hlen);
        goto done;
    }
    /* the escape \u0000 decodes to the same NUL: a name or dtype would end there ("t\u0000x" loading
     * as "t"). Escapes are a backslash and one character, so skipping pairs finds the real ones. */
    for (size_t i = 0; i + 1 < hlen; i++) {
        if (hdr[i] != '\\') continue;
        if (hdr[i + 1] == 'u' && i + 6 <= hlen && memcmp(hdr + i + 2, "0000", 4) == 0) {
            s = gcr_set_error(ctx, GCR_ERR_IO,
                              "weights: %s: header holds an escaped NUL (\\u0000) at byte %zu of %llu", path, i,
                              (unsigned long long)hlen);
            goto done;
        }
        i++;
    }
    /* require_null_terminated: trailing bytes after the JSON object (other than the spaces the
     * format pads with) make the header malformed */
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(hdr, hlen + 1, &end, 1);
    if (!root || !cJSON_IsObject(root)) {
        size_t at = root ? 0 : (end && end >= hdr ? (size_t)(end - hdr) : 0);
        s = gcr_set_error(ctx, GCR_ERR_IO, "weights: %s: header is not a JSON object (%s near byte %zu)", path,
                          root ? "wrong JSON type" : "parse error", at);
        goto done;
    }

    int cap = cJSON_GetArraySize(root);
    w = calloc(1, sizeof *w);
    if (w) {
        w->ctx = ctx;
        ctx_list_push(w);
        w->names = calloc((size_t)cap + 1, sizeof *w->names);
        w->tensors = calloc((size_t)cap + 1, sizeof *w->tensors);
    }
    if (!w || !w->names || !w->tensors) {
        s = gcr_set_error(ctx, GCR_ERR_OOM, "weights: %s: out of host memory", path);
        goto done;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, root) {
        if (!e->string) continue;
        if (strcmp(e->string, "__metadata__") == 0) continue; /* free-form strings; nothing to load */
        s = load_entry(w, path, e, data, data_bytes);
        if (s != GCR_OK) goto done;
    }

done:
    fclose(f);
    cJSON_Delete(root);
    free(hdr);
    free(data);
    if (s != GCR_OK) {
        gcr_weights_free(w);
        return s;
    }
    *out = w;
    return GCR_OK;
}

gcr_tensor *gcr_weights_get(const gcr_weights *w, const char *name)
{
    if (!w || !name) return NULL;
    for (int i = 0; i < w->n; i++)
        if (strcmp(w->names[i], name) == 0) return w->tensors[i];
    return NULL;
}

int gcr_weights_count(const gcr_weights *w) { return w ? w->n : 0; }

const char *gcr_weights_name(const gcr_weights *w, int i)
{
    return w && i >= 0 && i < w->n ? w->names[i] : NULL;
}
