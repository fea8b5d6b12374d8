/* mobilenet_v3.c — gcr's main sample: MobileNet-v3 (samples/model.h) as the plain eager inference
 * loop a C program already has, then the same loop with its body wrapped in GCR_REGION. It runs
 * three modes (eager, captured+fused, captured+graph) and prints a table (median latency per
 * forward, images/s, kernels per forward, speedup over eager), checks the modes' outputs, and
 * optionally checks PyTorch parity against a golden file from tools/export_mobilenet.py. The
 * program around the model (options, timing, table, RESULT lines, checks) is samples/sample_main.h,
 * shared with samples/resnet50.c; this file says which model it runs. */
#include "gcr.h"
#include "model.h"
#include "sample_main.h"

/* the model's own options */
static mnv3_arch arch = MNV3_LARGE;
static double width = 1.0;

static int model_option(const char *a, const char *v)
{
    if (!strcmp(a, "--model")) {
        if (!strcmp(v, "large")) arch = MNV3_LARGE;
        else if (!strcmp(v, "small")) arch = MNV3_SMALL;
        else return -1;
        return 1;
    }
    if (!strcmp(a, "--width")) {
        char *end;
        width = strtod(v, &end);
        return end != v && !*end && width > 0 ? 1 : -1;
    }
    return 0;
}

static int init(gcr_ctx *ctx, void *m, const smp_options *o, gcr_dtype dtype, const gcr_weights *w)
{
    return mnv3_init(ctx, m, arch, width, o->classes, dtype, o->fmt, w, o->seed);
}
static const char *error(const void *m) { return ((const mnv3_model *)m)->err; }
static gcr_tensor *forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return mnv3_forward(ctx, m, x); }
static int classes(const void *m) { return ((const mnv3_model *)m)->classes; }
static int ops(const void *m) { return ((const mnv3_model *)m)->ops; }
static void free_model(void *m) { mnv3_free(m); }

static void describe(char *title, size_t tn, char *json, size_t jn)
{
    snprintf(title, tn, "MobileNet-v3-%s x%g", arch == MNV3_LARGE ? "Large" : "Small", width);
    snprintf(json, jn, "\"model\":\"%s\",\"width\":%g", arch == MNV3_LARGE ? "large" : "small", width);
}

int main(int argc, char **argv)
{
    static const smp_sample s = {
        .prog = "mobilenet_v3",
        .model_usage = "  --model large|small     architecture (default large)\n"
                       "  --width W               width multiplier (default 1.0)\n",
        .option = model_option,
        .model_size = sizeof(mnv3_model),
        .init = init,
        .error = error,
        .forward = forward,
        .classes = classes,
        .ops = ops,
        .free = free_model,
        .describe = describe,
    };
    return smp_main(argc, argv, &s);
}
