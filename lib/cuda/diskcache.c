/* diskcache.c — compiled modules across processes, one file per program in knobs.cache_dir,
 * named by the hash of the full disk key (progkey.c) and holding that key again before the image,
 * so a hash collision or a damaged file only costs a recompile. Best effort both ways: a cache
 * that cannot be read or written only costs a compile. */
#include "program.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_MAGIC "GCRMOD1\n"

static void mkdirs(const char *dir)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    mkdir(buf, 0755);
}

static void cache_path(gcr_ctx *ctx, const char *key, size_t klen, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%016llx.mod", ctx->knobs.cache_dir, (unsigned long long)gcr_cuda_fnv1a(key, klen));
}

void *gcr_cuda_disk_load(gcr_ctx *ctx, const char *want, size_t klen, size_t *size)
{
    if (!ctx->knobs.cache_dir || !*ctx->knobs.cache_dir) return NULL;
    char path[1100];
    cache_path(ctx, want, klen, path, sizeof path);
    FILE *f = fopen(path, "rb");
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
    mkdirs(ctx->knobs.cache_dir);
    char path[1100], tmp[1200];
    cache_path(ctx, key, klen, path, sizeof path);
    static atomic_uint seq; /* unique temporary names across the process's threads */
    snprintf(tmp, sizeof tmp, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        gcr_info(ctx, "cannot write kernel cache %s: %s", tmp, strerror(errno));
        return;
    }
    uint64_t kl = klen, il = size;
    int ok = fwrite(FILE_MAGIC, 1, 8, f) == 8 && fwrite(&kl, 8, 1, f) == 1 && fwrite(key, 1, kl, f) == kl &&
             fwrite(&il, 8, 1, f) == 1 && fwrite(img, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) unlink(tmp);
}
