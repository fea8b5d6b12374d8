/* files.c — the files the library writes for the user (GCR_DUMP's dumps, the CUDA executor's
 * program text among them, and GCR_PROFILE's trace): each is written to a temporary file beside
 * its path and renamed over it when complete, so a reader, or another context writing the same
 * path from another thread, never sees half a file; paths have no length limit of their own; a
 * failure is reported at the default log level with the system's reason. In lib/ rather than
 * replay/ so that the backends' executors write through it too. */
#include "internal.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *gcr_path_join(const char *dir, const char *name)
{
    size_t nd = dir ? strlen(dir) : 0, nn = strlen(name);
    char *p = malloc(nd + nn + 2);
    if (!p) return NULL;
    if (dir) {
        memcpy(p, dir, nd);
        p[nd++] = '/';
    }
    memcpy(p + nd, name, nn + 1);
    return p;
}

FILE *gcr_file_begin(gcr_ctx *ctx, const char *path, char **tmp, const char *what)
{
    *tmp = NULL;
    size_t n = strlen(path);
    char *t = malloc(n + 8);
    if (!t) {
        gcr_progress(ctx, "%s: out of host memory writing %s", what, path);
        return NULL;
    }
    memcpy(t, path, n);
    memcpy(t + n, ".XXXXXX", 8);
    int fd = mkstemp(t);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        gcr_progress(ctx, "%s: cannot write %s: %s", what, path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(t);
        }
        free(t);
        return NULL;
    }
    fchmod(fd, 0644); /* mkstemp's 0600 would hide a dump from the user's other tools */
    *tmp = t;
    return f;
}

bool gcr_dir_make(gcr_ctx *ctx, const char *dir, const char *what)
{
    if (mkdir(dir, 0777) == 0 || errno == EEXIST) return true;
    gcr_progress(ctx, "%s: cannot create %s: %s", what, dir, strerror(errno));
    return false;
}

bool gcr_file_commit(gcr_ctx *ctx, FILE *f, char *tmp, const char *path, const char *what)
{
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    int err = ok ? 0 : errno;
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        gcr_progress(ctx, "%s: cannot write %s: %s", what, path, strerror(err ? err : EIO));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}
