/* diskcache.c — compiled modules across processes, one file per program in knobs.cache_dir,
 * named by the hash of the full disk key (progkey.c) and holding that key again before the image,
 * so a hash collision or a damaged file only costs a recompile. Paths are built to their exact
 * length, so a cache_dir of any length keeps every file's full name. Best effort both ways: a
 * cache that cannot be read or written, out of host memory included, only costs a compile. */
#include "program.h"
#include "../text.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MAGIC "GCRMOD1\n"

/* dir and every folder above it; false when out of host memory (nothing created) */
static bool mkdirs(const char *dir)
{
    char *buf = strdup(dir);
    if (!buf) return false;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    mkdir(buf, 0755);
    free(buf);
    return true;
}

/* cache_dir/<hash of the key>.mod, malloc'ed; NULL when out of host memory */
static char *cache_path(gcr_ctx *ctx, const char *key, size_t klen)
{
    char name[32];
    snprintf(name, sizeof name, "%016llx.mod", (unsigned long long)gcr_cuda_fnv1a(key, klen));
    return gcr_path_join(ctx->knobs.cache_dir, name);
}

void *gcr_cuda_disk_load(gcr_ctx *ctx, const char *want, size_t klen, size_t *size)
{
    if (!ctx->knobs.cache_dir || !*ctx->knobs.cache_dir) return NULL;
    char *path = cache_path(ctx, want, klen);
    if (!path) {
        gcr_info(ctx, "kernel cache: out of host memory looking up a program in %s; compiling it", ctx->knobs.cache_dir);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f) return NULL;
    char magic[8];
    uint64_t kl = 0, il = 0;
    void *img = NULL;
    char *key = NULL;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, FILE_MAGIC, 8) || fread(&kl, 8, 1, f) != 1 || kl != klen)
        goto fail;
    if (!(key = malloc(kl)) || fread(key, 1, kl, f) != kl || memcmp(key, want, kl)) goto fail;
    if (fread(&il, 8, 1, f) != 1 || il == 0 || il > ((uint64_t)1 << 32)) goto fail;
    if (!(img = malloc(il)) || fread(img, 1, il, f) != il) goto fail;
    free(key);
    fclose(f);
    *size = il;
    return img;
fail:
    free(key);
    free(img);
    fclose(f);
    return NULL;
}

/* Best effort: a cache that cannot be written only costs a compile next time. Written to a
 * temporary name and renamed, so a reader never sees half a file. */
void gcr_cuda_disk_store(gcr_ctx *ctx, const char *key, size_t klen, const void *img, size_t size)
{
    if (!ctx->knobs.cache_dir || !*ctx->knobs.cache_dir) return;
    static atomic_uint seq; /* unique temporary names across the process's threads */
    char *path = mkdirs(ctx->knobs.cache_dir) ? cache_path(ctx, key, klen) : NULL, *tmp = NULL;
    if (path) {
        gcr_text b = gcr_text_growing();
        gcr_text_put(&b, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
        tmp = gcr_text_take(&b);
    }
    if (!tmp) {
        gcr_info(ctx, "kernel cache: out of host memory storing a program of %zu bytes in %s; not stored", size,
                 ctx->knobs.cache_dir);
        free(path);
        return;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        gcr_info(ctx, "cannot write kernel cache %s: %s", tmp, strerror(errno));
        free(tmp);
        free(path);
        return;
    }
    uint64_t kl = klen, il = size;
    int ok = fwrite(FILE_MAGIC, 1, 8, f) == 8 && fwrite(&kl, 8, 1, f) == 1 && fwrite(key, 1, kl, f) == kl &&
             fwrite(&il, 8, 1, f) == 1 && fwrite(img, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
    free(tmp);
    free(path);
}
