/* text.c — the text builder (text.h). An append formats straight into the free room and grows the
 * buffer only when the text did not fit, so most appends format once. And the knobs' list matcher. */
#include "text.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

gcr_text gcr_text_fixed(char *buf, size_t n)
{
    gcr_text b = {buf, 0, buf ? n : 0, true, false};
    if (b.cap) b.p[0] = 0;
    return b;
}

void gcr_text_put(gcr_text *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        size_t room = b->p && b->len < b->cap ? b->cap - b->len : 0;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)k < room || b->fixed) { /* fits, or counted past the caller's buffer */
            b->len += (size_t)k;
            return;
        }
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->len + (size_t)k + 1) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = nc;
    }
}

char *gcr_text_take(gcr_text *b)
{
    if (b->oom) {
        free(b->p);
        *b = (gcr_text){0};
        return NULL;
    }
    char *p = b->p ? b->p : calloc(1, 1);
    *b = (gcr_text){0};
    return p;
}

bool gcr_list_has(const char *list, const char *name)
{
    if (!list || !name) return false;
    const size_t len = strlen(name);
    while (*list) {
        while (*list == ' ' || *list == ',') list++;
        size_t n = strcspn(list, ","), k = n;
        while (k && list[k - 1] == ' ') k--;
        if (k && k == len && !strncasecmp(list, name, k)) return true;
        list += n;
    }
    return false;
}
