/* mobilenet_v2.c — the MobileNet-v2 sample: torchvision's MobileNet-v2 (samples/mobilenet_v2.h) as
 * the plain eager inference loop a C program already has, then the same loop with its body wrapped
 * in GCR_REGION. Like samples/mobilenet_v3.c it runs three modes (eager, captured+fused,
 * captured+graph), prints the table and RESULT lines and checks the modes' outputs; the program
 * around the model is samples/sample_main.h. A second depthwise-separable network for the
 * benchmarks (bench/mobilenet.sh MODEL=mobilenet_v2): 17 expand -> depthwise -> project blocks,
 * none with squeeze-excite. */
#include "gcr.h"
#include "mobilenet_v2.h"
#include "sample_main.h"

/* the model's own option */
static double width = 1.0;

static int model_option(const char *a, const char *v)
{
    if (!strcmp(a, "--width")) {
        char *end;
        width = strtod(v, &end);
        return end != v && !*end && width > 0 ? 1 : -1;
    }
    return 0;
}

static int init(gcr_ctx *ctx, void *m, const smp_options *o, gcr_dtype dtype, const gcr_weights *w)
{
    return mnv2_init(ctx, m, width, o->classes, dtype, o->fmt, w, o->seed);
}
static const char *error(const void *m) { return ((const mnv2_model *)m)->err; }
static gcr_tensor *forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return mnv2_forward(ctx, m, x); }
static int classes(const void *m) { return ((const mnv2_model *)m)->classes; }
static int ops(const void *m) { return ((const mnv2_model *)m)->ops; }
static void free_model(void *m) { mnv2_free(m); }

static void describe(char *title, size_t tn, char *json, size_t jn)
{
    snprintf(title, tn, "MobileNet-v2 x%g", width);
    snprintf(json, jn, "\"model\":\"mobilenet_v2\",\"width\":%g", width);
}

int main(int argc, char **argv)
{
    static const smp_sample s = {
        .prog = "mobilenet_v2",
        .model_usage = "  --width W               width multiplier (default 1.0)\n",
        .option = model_option,
        .model_size = sizeof(mnv2_model),
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
