/* text.h — the one text builder: printf-style appends to a growing buffer (generated CUDA, dot and
 * dumps) or to a caller's fixed buffer that counts what did not fit (snprintf's contract, for
 * gcr_graph_describe). Its state is the struct passed in: nothing global, so threads can build
 * text at once. Also the one matcher of the knobs' comma lists of names. */
#ifndef GCR_TEXT_H
#define GCR_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gcr_text {
    char *p;
    size_t len;  /* bytes appended so far (a fixed buffer: also those that did not fit) */
    size_t cap;  /* bytes p holds */
    bool fixed;  /* the caller's buffer: never grown, never freed here */
    bool oom;    /* a growth failed: appends from then on are dropped, gcr_text_take returns NULL */
} gcr_text;

/* A builder that grows with malloc (start from {0}); or one writing into buf[0..n) (buf may be
 * NULL with n 0: it only counts), NUL-terminated where it has room. */
static inline gcr_text gcr_text_growing(void) { return (gcr_text){0}; }
gcr_text gcr_text_fixed(char *buf, size_t n);
void gcr_text_put(gcr_text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A growing builder's text (malloc'ed, "" when nothing was appended), for the caller to free; NULL
 * when a growth failed (the partial text is freed). */
char *gcr_text_take(gcr_text *b);

/* true when the comma-separated list names name, whatever the case and the spaces around each
 * entry (the knobs that take lists of names: GCR_DUMP, GCR_SKIP_FUSE); NULL list: false */
bool gcr_list_has(const char *list, const char *name);

#endif /* GCR_TEXT_H */
