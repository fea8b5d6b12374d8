/* dump.c — knobs.dump (GCR_DUMP=trace,fused,source,plan, or all) writes, under knobs.dump_dir, for
 * each variant built: the trace before fusion (text + dot), after fusion (text + dot), the CPU
 * source of every fused group (expression text), and the memory plan. Files are named
 * g<k>_v<n>_*: the k-th variant dumped in the process (one count for every context, so contexts
 * sharing a directory do not overwrite each other's dumps), the graph's n-th variant. */
#include "graph.h"
#include "../lib/text.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_ulong dumped; /* variants dumped in the process */

bool gcr_dump_wants(const char *dump, const char *what)
{
    return gcr_list_has(dump, what) || gcr_list_has(dump, "all");
}

static void write_file(gcr_ctx *ctx, const char *dir, const char *stem, const char *suffix, const char *text)
{
    char name[96], *tmp;
    snprintf(name, sizeof name, "%s_%s", stem, suffix);
    char *path = gcr_path_join(dir, name);
    FILE *f = path ? gcr_file_begin(ctx, path, &tmp, "dump") : NULL;
    if (f) {
        fputs(text ? text : "", f);
        if (gcr_file_commit(ctx, f, tmp, path, "dump")) gcr_info(ctx, "dump: wrote %s", path);
    }
    free(path);
}

static char *describe(const gcr_ir *ir)
{
    size_t n = gcr_ir_describe(ir, NULL, 0);
    char *s = malloc(n);
    if (s) gcr_ir_describe(ir, s, n);
    return s;
}

void gcr_dump_variant(gcr_graph *g, gcr_variant *v)
{
    gcr_ctx *ctx = g->ctx;
    if (!ctx->knobs.dump || !ctx->knobs.dump_dir) return;
    const char *dir = ctx->knobs.dump_dir;
    if (!gcr_dir_make(ctx, dir, "dump")) return;
    char stem[64];
    snprintf(stem, sizeof stem, "g%lu_v%d", atomic_fetch_add(&dumped, 1) + 1, g->stats.variants);
    if (gcr_dump_wants(ctx->knobs.dump, "trace")) {
        char *t = describe(g->trace), *d = gcr_ir_dot(g->trace, false);
        write_file(ctx, dir, stem, "trace.txt", t);
        write_file(ctx, dir, stem, "trace.dot", d);
        free(t);
        free(d);
    }
    if (gcr_dump_wants(ctx->knobs.dump, "fused")) {
        char *t = describe(v->ir), *d = gcr_ir_dot(v->ir, true);
        write_file(ctx, dir, stem, "fused.txt", t);
        write_file(ctx, dir, stem, "fused.dot", d);
        free(t);
        free(d);
    }
    if (gcr_dump_wants(ctx->knobs.dump, "source")) {
        size_t cap = 1, len = 0;
        char *all = calloc(1, 1);
        for (int k = 0; k < v->ir->n_kernels && all; k++) {
            for (int p = -1; p < GCR_MAX_ANCHOR_IN; p++) {
                if (v->ir->kernels[k].type != GCR_K_FUSED) continue;
                char *s = gcr_group_expr_c(v->ir, k, p);
                if (!s) continue;
                size_t n = strlen(s);
                char *grown = realloc(all, cap + n + 1);
                if (grown) {
                    all = grown;
                    memcpy(all + len, s, n + 1);
                    len += n;
                    cap += n + 1;
                }
                free(s);
            }
        }
        write_file(ctx, dir, stem, "source.c", all);
        free(all);
    }
    if (gcr_dump_wants(ctx->knobs.dump, "plan")) {
        size_t n = 256 + (size_t)v->ir->n_values * 128;
        char *s = malloc(n);
        if (s) {
            size_t k = (size_t)snprintf(s, n, "arena %zu bytes (intermediates %zu bytes unplanned), outputs %zu bytes\n",
                                        v->ir->arena_bytes, v->ir->intermediate_bytes, v->ir->output_bytes);
            static const char *bufname[] = {"none", "external", "arena", "output", "alias"};
            for (int x = 0; x < v->ir->n_values && k < n; x++) {
                const gcr_value *val = &v->ir->values[x];
                char m[96];
                k += (size_t)snprintf(s + k, n - k, "v%d %s %s bytes=%zu off=%zu live=[%d,%d]\n", x, bufname[val->buf],
                                      gcr_meta_str(&val->m, m, sizeof m), val->bytes, val->buf_off, val->first, val->last);
            }
            write_file(ctx, dir, stem, "plan.txt", s);
            free(s);
        }
    }
}
