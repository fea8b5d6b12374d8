/* codegen_emit.c — the CUDA generators' emitter (codegen_emit.h): the CUDA dialect of the
 * expression emitter and the pieces every generator writes the same way. */
#include "codegen_emit.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void gcr_cg_float(gcr_text *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put(b, "__int_as_float(0x%08x) /* %.9g */", u, (double)f);
}

/* f32 stays; f16 only at an explicit cast (codegen_emit.h says why); bf16 and the rest always */
static void round_to(gcr_text *b, const char *ind, int e, gcr_dtype dt, bool cast)
{
    if (dt == GCR_F32 || (dt == GCR_F16 && !cast)) return;
    put(b, "%se%d = gcr_to_f32<%d>(gcr_from_f32<%d>(e%d));\n", ind, e, (int)dt, (int)dt, e);
}

gcr_emit gcr_cg_emit(const gcr_group *g, const void *gen, void (*load)(gcr_text *, const gcr_emit *, int),
                     const char *ind)
{
    return (gcr_emit){.load = load, .constant = gcr_cg_float, .round = round_to, .gen = gen, .g = g, .ind = ind};
}

void gcr_cg_fn_name(const gcr_kernel *K, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "gcr_");
    for (const char *s = K->name; *s && k + 1 < n; s++) {
        char c = *s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[k++] = ok ? c : '_';
    }
    out[k < n ? k : n - 1] = 0;
}

int gcr_cg_add_param(gcr_cg_kernel *cg, int value)
{
    if (cg->n_params >= (int)(sizeof cg->params / sizeof cg->params[0])) return -1;
    cg->params[cg->n_params] = value;
    return cg->n_params++;
}

gcr_status gcr_cg_unsupported(gcr_cg_kernel *cg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg->why, sizeof cg->why, fmt, ap);
    va_end(ap);
    return GCR_ERR_COMPILE;
}

gcr_status gcr_cg_finish(gcr_text *b, gcr_cg_kernel *cg)
{
    cg->src = gcr_text_take(b);
    return cg->src ? GCR_OK : GCR_ERR_OOM;
}
