/* profile.c — knobs.profile: per-kernel timings collected by the executors (clock_gettime on the
 * CPU; a CUDA executor adds event timings through gcr_prof_add) and written as Chrome trace JSON
 * (traceEvents, ph "X", ts/dur in microseconds) when the graph is destroyed (explicitly or with
 * its ctx). Each write replaces the file whole (files.c), so with several graphs, on any number of
 * contexts, the last one destroyed is kept. */
#include "graph.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void gcr_prof_add(gcr_graph *g, const char *name, double ts_us, double dur_us)
{
    if (!g->ctx->knobs.profile) return;
    if (g->n_prof == g->cap_prof) {
        /* bounded: a long-running loop keeps the first 1M events */
        if (g->cap_prof >= (1 << 20)) return;
        int cap = g->cap_prof ? 2 * g->cap_prof : 1024;
        gcr_prof_event *p = realloc(g->prof, sizeof *p * (size_t)cap);
        if (!p) return;
        g->prof = p;
        g->cap_prof = cap;
    }
    gcr_prof_event *e = &g->prof[g->n_prof++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ts_us = ts_us;
    e->dur_us = dur_us;
}

void gcr_prof_write(gcr_graph *g)
{
    const char *path = g->ctx->knobs.profile;
    char *tmp;
    if (!path || !g->n_prof) return;
    FILE *f = gcr_file_begin(g->ctx, path, &tmp, "profile");
    if (!f) return;
    fprintf(f, "{\"traceEvents\":[\n");
    for (int i = 0; i < g->n_prof; i++) {
        const gcr_prof_event *e = &g->prof[i];
        fprintf(f, "{\"name\":\"");
        for (const char *c = e->name; *c; c++)
            if (*c != '"' && *c != '\\') fputc(*c, f);
        fprintf(f, "\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%.3f,\"dur\":%.3f}%s\n", e->ts_us, e->dur_us,
                i + 1 < g->n_prof ? "," : "");
    }
    fprintf(f, "]}\n");
    if (gcr_file_commit(g->ctx, f, tmp, path, "profile")) gcr_info(g->ctx, "profile: wrote %d kernel timings to %s", g->n_prof, path);
}
