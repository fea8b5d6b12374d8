/* progkey.c — the keys of the module cache. In memory a program is found by the 64-bit FNV-1a of
 * its text, computed once per text object (gcr_cuda_src) where the launcher keeps its text, so a
 * launch hashes nothing; arch, NVRTC version and options are the ctx's and the process's, the
 * same for every entry of a ctx. On disk, shared by every process and device, the key is
 * "format|target|NVRTC version|embedded headers|options|text" in full (the target sm_<arch>, or
 * sm_90a where programs are built for it): the file name is its hash and the file stores the key
 * again, so a hash collision or a damaged file only costs a compile. */
#include "program.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern const struct gcr_embedded_src { const char *name; const char *text; } gcr_embedded_srcs[];

#define KEY_FORMAT "gcr-module-1"

uint64_t gcr_cuda_fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

uint64_t gcr_cuda_text_key(const char *text)
{
    uint64_t h = gcr_cuda_fnv1a(text, strlen(text));
    return h ? h : 1;
}

uint64_t gcr_cuda_src_key(gcr_cuda_src *s, int *hashed)
{
    /* contexts on several threads may hash the same object at once: they store the same value */
    uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
    if (hashed) *hashed = !k;
    if (!k) {
        k = gcr_cuda_text_key(s->text);
        atomic_store_explicit(&s->key, k, memory_order_relaxed);
    }
    return k;
}

/* computed once (the sources are constants) */
uint64_t gcr_cuda_embedded_hash(void)
{
    static _Atomic uint64_t h; /* contexts on several threads may compute it at once: same value */
    uint64_t x = atomic_load_explicit(&h, memory_order_relaxed);
    if (!x) {
        uint64_t acc = 0;
        for (int i = 0; gcr_embedded_srcs[i].name; i++)
            acc = acc * 1099511628211ull ^ gcr_cuda_fnv1a(gcr_embedded_srcs[i].text, strlen(gcr_embedded_srcs[i].text));
        x = acc | 1; /* never 0, so "computed" is distinguishable */
        atomic_store_explicit(&h, x, memory_order_relaxed);
    }
    return x;
}

char *gcr_cuda_disk_key(int arch, const char *text, size_t *klen)
{
    char head[160];
    /* the key covers the embedded headers a program may include: a library with changed kernel
     * files must never load modules compiled from the old ones */
    int hl = snprintf(head, sizeof head, "%s|sm_%d%s|nvrtc%d|hdr%016llx|--std=c++17 -prec-div=false|", KEY_FORMAT, arch,
                      gcr_nvrtc_arch_specific(arch) ? "a" : "", gcr_nvrtc_version(), (unsigned long long)gcr_cuda_embedded_hash());
    size_t sl = strlen(text), kl = (size_t)hl + sl;
    char *key = malloc(kl + 1);
    if (!key) return NULL;
    memcpy(key, head, (size_t)hl);
    memcpy(key + hl, text, sl + 1);
    *klen = kl;
    return key;
}
