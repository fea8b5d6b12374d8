/* test_weights.c — safetensors loading (lib/weights.c): a valid file of every dtype round trips
 * byte for byte; malformed files (truncated, bad JSON, offsets out of range, unknown dtype,
 * shape/size mismatch, ...) fail with GCR_ERR_IO naming the file and tensor; random corruption
 * and every truncation never crash (run under ASan). Files are written into a temp dir. */
#include "harness.h"
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static int nfiles;

/* Writes a safetensors file: 8-byte little-endian header length, header, data. Returns its path
 * (static buffer). hlen_override != 0 writes that length instead of the real one. */
static const char *write_st(const char *header, const void *data, size_t dbytes, uint64_t hlen_override)
{
    static char path[128];
    snprintf(path, sizeof path, "%s/f%d.safetensors", dir, nfiles++);
    FILE *f = fopen(path, "wb");
    uint64_t hl = hlen_override ? hlen_override : strlen(header);
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(hl >> (8 * i));
    fwrite(b, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    if (dbytes) fwrite(data, 1, dbytes, f);
    fclose(f);
    return path;
}

static void write_raw(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (n) fwrite(p, 1, n, f);
    fclose(f);
}

/* the valid file used by several cases: every dtype, a 0-d and an empty tensor, unaligned offsets */
static unsigned char vdata[512];
static char vheader[1024];
static size_t vbytes;
static void make_valid(void)
{
    h_seed(7);
    for (size_t i = 0; i < sizeof vdata; i++) vdata[i] = (unsigned char)(h_next() >> 56);
    /* bool bytes must be 0/1 to be meaningful; offsets chosen so f32 data starts unaligned at 3 */
    vdata[0] = 1; vdata[1] = 0; vdata[2] = 1;
    snprintf(vheader, sizeof vheader,
             "{\"__metadata__\":{\"format\":\"pt\"},"
             "\"mask\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]},"
             "\"conv.weight\":{\"dtype\":\"F32\",\"shape\":[2,3,5],\"data_offsets\":[3,123]},"
             "\"h\":{\"dtype\":\"F16\",\"shape\":[7],\"data_offsets\":[123,137]},"
             "\"b\":{\"dtype\":\"BF16\",\"shape\":[3,1],\"data_offsets\":[137,143]},"
             "\"i\":{\"dtype\":\"I32\",\"shape\":[4],\"data_offsets\":[143,159]},"
             "\"steps\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[159,167]},"
             "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[167,167]}}    ");
    vbytes = 167;
}

static void valid_round_trip(gcr_device dev)
{
    gcr_ctx *ctx = h_ctx(dev);
    if (!ctx) return;
    const char *p = write_st(vheader, vdata, vbytes, 0);
    uint64_t scope = gcr_scope_begin(ctx);
    gcr_weights *w = NULL;
    gcr_status st = gcr_weights_load(ctx, p, &w); /* CHECK_OK evaluates its argument twice */
    CHECK_OK(ctx, st);
    /* the weights' tensors are kept: a scope around the load must not free them */
    gcr_scope_end(ctx, scope);
    CHECK(w && gcr_weights_count(w) == 7, "7 tensors (metadata skipped), got %d", gcr_weights_count(w));
    struct { const char *name; gcr_dtype dt; int ndim; int64_t shape[3]; size_t off, bytes; } want[] = {
        {"mask", GCR_BOOL, 1, {3}, 0, 3},        {"conv.weight", GCR_F32, 3, {2, 3, 5}, 3, 120},
        {"h", GCR_F16, 1, {7}, 123, 14},         {"b", GCR_BF16, 2, {3, 1}, 137, 6},
        {"i", GCR_I32, 1, {4}, 143, 16},         {"steps", GCR_I64, 0, {0}, 159, 8},
        {"empty", GCR_F32, 2, {0, 4}, 167, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        gcr_tensor *t = gcr_weights_get(w, want[k].name);
        if (!CHECK(t != NULL, "tensor %s present", want[k].name)) continue;
        CHECK(strcmp(gcr_weights_name(w, (int)k), want[k].name) == 0, "order kept: %d is %s", (int)k,
              gcr_weights_name(w, (int)k));
        CHECK(gcr_tensor_dtype(t) == want[k].dt, "%s dtype %s", want[k].name, gcr_dtype_name(gcr_tensor_dtype(t)));
        CHECK(gcr_tensor_ndim(t) == want[k].ndim, "%s ndim %d", want[k].name, gcr_tensor_ndim(t));
        for (int d = 0; d < want[k].ndim; d++)
            CHECK(gcr_tensor_dim(t, d) == want[k].shape[d], "%s dim %d", want[k].name, d);
        CHECK(gcr_tensor_nbytes(t) == want[k].bytes, "%s bytes %zu", want[k].name, gcr_tensor_nbytes(t));
        unsigned char got[128];
        memset(got, 0xAB, sizeof got);
        st = gcr_tensor_to_host(t, got, want[k].bytes);
        CHECK_OK(ctx, st);
        CHECK(memcmp(got, vdata + want[k].off, want[k].bytes) == 0, "%s bytes round trip", want[k].name);
    }
    CHECK(gcr_weights_get(w, "missing") == NULL, "missing name gives NULL");
    CHECK(gcr_weights_get(w, "__metadata__") == NULL, "metadata is not a tensor");
    CHECK(gcr_weights_name(w, 7) == NULL && gcr_weights_name(w, -1) == NULL, "name out of range is NULL");
    CHECK(gcr_weights_get(NULL, "h") == NULL && gcr_weights_count(NULL) == 0, "NULL weights");
    CHECK(gcr_ctx_status(ctx) == GCR_OK, "no error: %s", gcr_ctx_error(ctx));
    gcr_weights_free(w);
    gcr_weights_free(NULL);
    gcr_ctx_destroy(ctx);
}

/* every dtype byte for byte, on the CPU and on CUDA where present */
static void test_valid_round_trip(void)
{
    valid_round_trip(GCR_DEVICE_CPU);
    valid_round_trip(GCR_DEVICE_CUDA);
}

/* larger random f32 payload, loaded on every available device */
static void test_random_f32(void)
{
    for (int dev = 0; dev < 2; dev++) {
        gcr_ctx *ctx = h_ctx(dev ? GCR_DEVICE_CUDA : GCR_DEVICE_CPU);
        if (!ctx) continue;
        int64_t n = 3 * 17 * 19;
        float *x = h_randn(n, -5, 5), *y = malloc(n * 4);
        const char *p = write_st("{\"x\":{\"dtype\":\"F32\",\"shape\":[3,17,19],\"data_offsets\":[0,3876]}}", x,
                                 (size_t)n * 4, 0);
        gcr_weights *w = NULL;
        gcr_status st = gcr_weights_load(ctx, p, &w);
        CHECK_OK(ctx, st);
        gcr_tensor *t = gcr_weights_get(w, "x");
        CHECK(t && gcr_tensor_ctx(t) == ctx, "tensor on the ctx");
        if (t) {
            st = gcr_tensor_to_host(t, y, (size_t)n * 4);
            CHECK_OK(ctx, st);
            CHECK(memcmp(x, y, (size_t)n * 4) == 0, "f32 payload exact on %s", gcr_ctx_device_name(ctx));
        }
        gcr_weights_free(w);
        free(x);
        free(y);
        gcr_ctx_destroy(ctx);
    }
}

/* gcr_weights_free before or after gcr_ctx_destroy: the caller owns the weights either way. After
 * the ctx is gone its tensors are gone too (get gives NULL) and the free touches none of them;
 * ASan sees any use after free. */
static void test_free_order(void)
{
    float x[2] = {1, 2}, y[2];
    const char *p = write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", x, sizeof x, 0);
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    if (!ctx) return;
    gcr_weights *before = NULL, *after = NULL, *after2 = NULL;
    CHECK_OK(ctx, gcr_weights_load(ctx, p, &before));
    CHECK_OK(ctx, gcr_weights_load(ctx, p, &after));
    CHECK_OK(ctx, gcr_weights_load(ctx, p, &after2));
    gcr_weights_free(before); /* the usual order: the ctx lives on with the others */
    gcr_tensor *t = gcr_weights_get(after, "t");
    CHECK(t && gcr_tensor_to_host(t, y, sizeof y) == GCR_OK && y[1] == 2, "weights loaded later still read: %s",
          gcr_ctx_error(ctx));
    gcr_ctx_destroy(ctx);
    CHECK(gcr_weights_get(after, "t") == NULL, "no tensor once the ctx is destroyed");
    CHECK(gcr_weights_count(after) == 1 && gcr_weights_name(after, 0) && !strcmp(gcr_weights_name(after, 0), "t"),
          "count and names stay with the weights");
    gcr_weights_free(after2);
    gcr_weights_free(after); /* frees the weights' own memory only */
}

/* each malformed file fails with GCR_ERR_IO, NULL out, and a message naming file and tensor */
static void expect_io(gcr_ctx *ctx, const char *path, const char *what, const char *needle)
{
    gcr_weights *w = (gcr_weights *)&w; /* non-NULL: the loader must reset it */
    gcr_status s = gcr_weights_load(ctx, path, &w);
    CHECK(s == GCR_ERR_IO, "%s: want GCR_ERR_IO, got %s (%s)", what, gcr_status_name(s), gcr_ctx_error(ctx));
    CHECK(w == NULL, "%s: out is NULL on failure", what);
    CHECK(strstr(gcr_ctx_error(ctx), path) != NULL, "%s: message names the file: %s", what, gcr_ctx_error(ctx));
    if (needle)
        CHECK(strstr(gcr_ctx_error(ctx), needle) != NULL, "%s: message mentions '%s': %s", what, needle,
              gcr_ctx_error(ctx));
    gcr_ctx_clear_error(ctx);
}

static void test_malformed(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    unsigned char d[64];
    for (int i = 0; i < 64; i++) d[i] = (unsigned char)i;
    char path[128];

    snprintf(path, sizeof path, "%s/short", dir);
    write_raw(path, "\x10\x00\x00", 3);
    expect_io(ctx, path, "file shorter than 8 bytes", "too short");
    write_raw(path, "", 0);
    expect_io(ctx, path, "empty file", "too short");

    const char *ok = "{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
    expect_io(ctx, write_st(ok, d, 16, 1000), "header length past the end", "header length");
    expect_io(ctx, write_st(ok, d, 16, 0xFFFFFFFFFFFFFFF0ull), "huge header length", "header length");
    expect_io(ctx, write_st(ok, d, 8, 0), "data truncated", "'t'");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],", d, 16, 0), "bad JSON (cut)", "JSON");
    expect_io(ctx, write_st("{\"t\": nope}", d, 0, 0), "bad JSON (token)", "JSON");
    expect_io(ctx, write_st("[1,2,3]", d, 0, 0), "header is an array", "JSON object");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}} x", d, 16, 0),
              "junk after the JSON", "JSON");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,32]}}", d, 16, 0),
              "offsets out of range", "outside");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", d, 16, 0),
              "end before begin", "outside");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[-4,12]}}", d, 16, 0),
              "negative offset", "data_offsets");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0]}}", d, 16, 0),
              "one offset", "data_offsets");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}", d, 16, 0),
              "unknown dtype", "F64");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":7,\"shape\":[2],\"data_offsets\":[0,16]}}", d, 16, 0),
              "dtype not a string", "dtype");
    expect_io(ctx, write_st("{\"t\":{\"shape\":[2],\"data_offsets\":[0,16]}}", d, 16, 0), "dtype missing", "dtype");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", d, 16, 0),
              "shape/size mismatch", "needs 12");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,16]}}", d, 16, 0),
              "dtype size mismatch", "needs 8");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}", d, 16, 0),
              "negative dim", "shape entry 0");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,10]}}", d, 16, 0),
              "fractional dim", "shape entry 0");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", d, 16, 0),
              "shape not an array", "shape");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,4],\"data_offsets\":[0,16]}}", d,
                            16, 0),
              "too many dims", "dims");
    expect_io(ctx,
              write_st("{\"t\":{\"dtype\":\"I64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,16]}}", d,
                       16, 0),
              "shape overflow", "overflow");
    expect_io(ctx, write_st("{\"t\":[1,2]}", d, 16, 0), "entry not an object", "'t'");
    expect_io(ctx,
              write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
                       d, 16, 0),
              "duplicate name", "twice");
    snprintf(path, sizeof path, "%s/does_not_exist.safetensors", dir);
    expect_io(ctx, path, "missing file", "cannot open");

    /* argument errors are INVALID, not IO */
    gcr_weights *w = NULL;
    CHECK(gcr_weights_load(ctx, NULL, &w) == GCR_ERR_INVALID && !w, "NULL path");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_weights_load(ctx, path, NULL) == GCR_ERR_INVALID, "NULL out");
    gcr_ctx_clear_error(ctx);
    CHECK(gcr_weights_load(NULL, path, &w) == GCR_ERR_INVALID, "NULL ctx");
    gcr_ctx_destroy(ctx);
}

/* a directory, a header with a NUL inside, an empty tensor with absurd dims: GCR_ERR_IO naming
 * the file (and the tensor), with the values in the file */
static void test_messages(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    expect_io(ctx, dir, "a directory", "not a regular file (a directory)");
    CHECK(!strstr(gcr_ctx_error(ctx), "9223372036854775807"), "no LONG_MAX size");

    /* a valid header, a NUL, then junk: the JSON parser alone stops at the NUL */
    static const char head[] = "{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}\0{\"u\":1}";
    unsigned char buf[8 + sizeof head - 1 + 4];
    uint64_t hl = sizeof head - 1;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(hl >> (8 * i));
    memcpy(buf + 8, head, sizeof head - 1);
    memset(buf + 8 + hl, 0x3f, 4);
    char path[128];
    snprintf(path, sizeof path, "%s/nul.safetensors", dir);
    write_raw(path, buf, sizeof buf);
    expect_io(ctx, path, "NUL in the header", "NUL byte at byte 54");
    /* the same NUL inside a tensor name */
    static const char head2[] = "{\"t\0x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
    hl = sizeof head2 - 1;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(hl >> (8 * i));
    memcpy(buf + 8, head2, hl);
    memset(buf + 8 + hl, 0x3f, 4);
    write_raw(path, buf, 8 + hl + 4);
    expect_io(ctx, path, "NUL in a name", "NUL byte at byte 3");

    /* an escaped NUL decodes to a NUL byte too: the name would silently load as "t", the dtype as "F32" */
    unsigned char z[4] = {0};
    expect_io(ctx, write_st("{\"t\\u0000x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 0),
              "escaped NUL in a name", "\\u0000");
    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\\u0000junk\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 0),
              "escaped NUL in a dtype", "\\u0000");
    /* an escaped backslash before u0000 is not an escaped NUL */
    gcr_weights *w = NULL;
    const char *lit = write_st("{\"t\\\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", z, 4, 0);
    gcr_status s = gcr_weights_load(ctx, lit, &w);
    CHECK(s == GCR_OK && gcr_weights_get(w, "t\\u0000"), "a name holding \\u0000 as text loads: %s",
          gcr_ctx_error(ctx));
    gcr_weights_free(w);
    gcr_ctx_clear_error(ctx);

    /* a name as long as the message itself: what is wrong with the tensor still shows */
    static char longh[2400];
    snprintf(longh, sizeof longh, "{\"%02200d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0);
    unsigned char z8[8] = {0};
    expect_io(ctx, write_st(longh, z8, 8, 0), "a 2200-byte name", "\"F64\" not supported");

    /* a FIFO no one writes: opening it for reading would wait forever (the alarm ends a hang) */
    snprintf(path, sizeof path, "%s/fifo", dir);
    if (CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path)) {
        alarm(10);
        expect_io(ctx, path, "a FIFO", "not a regular file");
        alarm(0);
    }

    expect_io(ctx, write_st("{\"t\":{\"dtype\":\"F32\",\"shape\":[0,9007199254740992],\"data_offsets\":[0,0]}}", NULL, 0, 0),
              "[0, 2^53]", "tensor 't': shape [0,9007199254740992] too large");
    gcr_ctx_destroy(ctx);
}

/* every truncation and random corruption of the valid file: OK or IO, never a crash or a leak */
static void test_corruption(void)
{
    gcr_ctx *ctx = h_ctx(GCR_DEVICE_CPU);
    size_t hl = strlen(vheader), total = 8 + hl + vbytes;
    unsigned char *full = malloc(total), *buf = malloc(total);
    for (int i = 0; i < 8; i++) full[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(full + 8, vheader, hl);
    memcpy(full + 8 + hl, vdata, vbytes);
    char path[128];
    snprintf(path, sizeof path, "%s/corrupt", dir);
    int bad_status = 0, loaded = 0, rejected = 0;
    for (size_t n = 0; n < total; n++) {
        write_raw(path, full, n);
        gcr_weights *w = NULL;
        gcr_status s = gcr_weights_load(ctx, path, &w);
        if (s == GCR_OK) loaded++; else rejected++;
        if (s != GCR_ERR_IO) bad_status++;
        gcr_weights_free(w);
        gcr_ctx_clear_error(ctx);
    }
    CHECK(bad_status == 0 && loaded == 0, "every truncation is GCR_ERR_IO (%d other statuses, %d loaded)",
          bad_status, loaded);
    h_seed(99);
    bad_status = 0;
    for (int it = 0; it < 400; it++) {
        memcpy(buf, full, total);
        int flips = 1 + (int)(h_next() % 4);
        for (int k = 0; k < flips; k++) buf[h_next() % total] = (unsigned char)(h_next() >> 56);
        write_raw(path, buf, total);
        gcr_weights *w = NULL;
        gcr_status s = gcr_weights_load(ctx, path, &w);
        if (s != GCR_OK && s != GCR_ERR_IO) bad_status++;
        if (s == GCR_OK) CHECK(w != NULL, "OK gives weights");
        s == GCR_OK ? loaded++ : rejected++;
        gcr_weights_free(w);
        gcr_ctx_clear_error(ctx);
    }
    CHECK(bad_status == 0, "random corruption gives OK or GCR_ERR_IO only (%d others)", bad_status);
    CHECK(rejected > 0, "some corruptions rejected (%d loaded, %d rejected)", loaded, rejected);
    free(full);
    free(buf);
    gcr_ctx_destroy(ctx);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/gcr_weights_XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL cannot create a temp dir\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    make_valid();
    RUN(test_valid_round_trip);
    RUN(test_random_f32);
    RUN(test_free_order);
    RUN(test_malformed);
    RUN(test_messages);
    RUN(test_corruption);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return h_finish();
}
