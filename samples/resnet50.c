/* resnet50.c — the ResNet-50 sample: torchvision's ResNet (samples/resnet.h) as the plain eager
 * inference loop a C program already has, then the same loop with its body wrapped in GCR_REGION.
 * Like samples/mobilenet_v3.c it runs three modes (eager, captured+fused, captured+graph), prints
 * the table and RESULT lines, checks the modes' outputs and optionally PyTorch parity against a
 * golden file from tools/export_resnet.py; the program around the model is samples/sample_main.h.
 * --width sets the base width (64: torchvision's resnet50) and --layers the blocks per stage
 * (3,4,23,3 is ResNet-101), so the same program runs the reduced goldens. */
#include "gcr.h"
#include "resnet.h"
#include "sample_main.h"

/* the model's own options */
static int width = 64, layers[4] = {3, 4, 6, 3};

static int model_option(const char *a, const char *v)
{
    long long n;
    if (!strcmp(a, "--width")) {
        if (!smp_int(v, 1, 4096, &n)) return -1;
        width = (int)n;
        return 1;
    }
    if (!strcmp(a, "--layers")) { /* each stage's blocks, at most the model's total (no sum can wrap) */
        char buf[96], *save = NULL;
        int l[4], k = 0;
        if (strlen(v) >= sizeof buf) return -1; /* cut, its tail would be dropped unread */
        snprintf(buf, sizeof buf, "%s", v);
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (k == 4 || !smp_int(t, 1, RN_MAX_BLOCKS, &n)) return -1;
            l[k++] = (int)n;
        }
        if (k != 4) return -1;
        for (int s = 0; s < 4; s++) layers[s] = l[s];
        return 1;
    }
    return 0;
}

static int init(gcr_ctx *ctx, void *m, const smp_options *o, gcr_dtype dtype, const gcr_weights *w)
{
    return rn_init(ctx, m, width, layers, o->classes, dtype, o->fmt, w, o->seed);
}
static const char *error(const void *m) { return ((const rn_model *)m)->err; }
static gcr_tensor *forward(gcr_ctx *ctx, void *m, gcr_tensor *x) { return rn_forward(ctx, m, x); }
static int classes(const void *m) { return ((const rn_model *)m)->classes; }
static int ops(const void *m) { return ((const rn_model *)m)->ops; }
static void free_model(void *m) { rn_free(m); }

static void describe(char *title, size_t tn, char *json, size_t jn)
{
    int d = rn_depth(layers);
    snprintf(title, tn, "ResNet-%d (base width %d, layers %d,%d,%d,%d)", d, width, layers[0], layers[1], layers[2],
             layers[3]);
    snprintf(json, jn, "\"model\":\"resnet%d\",\"width\":%d,\"layers\":\"%d,%d,%d,%d\"", d, width, layers[0], layers[1],
             layers[2], layers[3]);
}

int main(int argc, char **argv)
{
    static const smp_sample s = {
        .prog = "resnet50",
        .model_usage = "  --width W               base width: channels of conv1 and layer1's 3x3 (default 64, torchvision's)\n"
                       "  --layers A,B,C,D        Bottleneck blocks per stage (default 3,4,6,3: ResNet-50)\n",
        .option = model_option,
        .model_size = sizeof(rn_model),
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
