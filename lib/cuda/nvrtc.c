/* nvrtc.c — run-time compilation: a program is compiled by NVRTC for a device architecture, with
 * every embedded .cuh file of lib/cuda/kernels available as a header. No device is needed (CI
 * compiles every kernel here); the module cache (progcache.c) loads what this returns. */
#include "cuda_internal.h"
#include <nvrtc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern const struct gcr_embedded_src { const char *name; const char *text; } gcr_embedded_srcs[];

const char *gcr_cuda_embedded(const char *name)
{
    for (int i = 0; name && gcr_embedded_srcs[i].name; i++)
        if (!strcmp(gcr_embedded_srcs[i].name, name)) return gcr_embedded_srcs[i].text;
    return NULL;
}

int gcr_nvrtc_version(void)
{
    static atomic_int v; /* asked once: the library in the process does not change (0: not yet) */
    int x = atomic_load_explicit(&v, memory_order_relaxed);
    if (!x) {
        int maj = 0, min = 0;
        if (nvrtcVersion(&maj, &min) != NVRTC_SUCCESS) return 0;
        x = maj * 1000 + min * 10;
        atomic_store_explicit(&v, x, memory_order_relaxed);
    }
    return x;
}

/* The arch to emit: the device's own when NVRTC knows it (cubin), else the newest NVRTC knows
 * below it, as PTX that the driver JIT-compiles forward. */
static int pick_arch(int arch, int *ptx)
{
    int n = 0, best = 0, archs[64];
    *ptx = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 64 ||
        nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return arch;
    for (int i = 0; i < n; i++) {
        if (archs[i] == arch) return arch;
        if (archs[i] < arch && archs[i] > best) best = archs[i];
    }
    if (!best) return arch; /* older than anything NVRTC emits: let its error say so */
    *ptx = 1;
    return best;
}

/* whether programs for a device of this arch are built for its arch-specific target (sm_90a:
 * wgmma), where only that exact arch runs them; PTX for a newer device stays portable. The dense
 * engine asks on every conv it plans, so NVRTC's answer is kept for the process (0: not asked yet,
 * 1: yes, 2: no; threads that race store the same answer). */
int gcr_nvrtc_arch_specific(int arch)
{
    static _Atomic int known;
    if (arch != 90) return 0;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        int ptx = 0;
        k = pick_arch(arch, &ptx) == 90 && !ptx ? 1 : 2;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 1;
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

gcr_status gcr_nvrtc_compile(const char *source, const char *const *opts, int nopts, int arch,
                             void **image, size_t *size, int *is_ptx, char **log)
{
    *image = NULL;
    *size = 0;
    *log = NULL;
    int nh = 0;
    while (gcr_embedded_srcs[nh].name) nh++;
    const char **hdr = malloc(sizeof *hdr * (size_t)(nh + 1)), **hname = malloc(sizeof *hname * (size_t)(nh + 1));
    const char **o = malloc(sizeof *o * (size_t)(nopts + 4));
    if (!hdr || !hname || !o) {
        free(hdr); free(hname); free(o);
        *log = dupstr("out of host memory");
        return GCR_ERR_OOM;
    }
    for (int i = 0; i < nh; i++) {
        hdr[i] = gcr_embedded_srcs[i].text;
        hname[i] = gcr_embedded_srcs[i].name;
    }
    int ptx = 0, a = pick_arch(arch, &ptx);
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d%s", ptx ? "compute" : "sm", a,
             gcr_nvrtc_arch_specific(arch) ? "a" : "");
    int no = 0;
    o[no++] = archopt;
    /* approximate f32 division (within 2 ulp): IEEE division made a fused f16 hardswish
     * compute-bound at 67% of copy bandwidth; with this it streams at ~95% */
    o[no++] = "--std=c++17";
    o[no++] = "-prec-div=false";
    for (int i = 0; i < nopts; i++) o[no++] = opts[i];

    gcr_status s = GCR_OK;
    nvrtcProgram prog = NULL;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, "gcr_program.cu", nh, hdr, hname);
    if (r != NVRTC_SUCCESS) {
        *log = dupstr(nvrtcGetErrorString(r));
        s = GCR_ERR_COMPILE;
        goto done;
    }
    r = nvrtcCompileProgram(prog, no, o);
    size_t ln = 0;
    if (nvrtcGetProgramLogSize(prog, &ln) == NVRTC_SUCCESS && ln > 1 && (*log = malloc(ln)))
        if (nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS) (*log)[0] = 0;
    if (r != NVRTC_SUCCESS) {
        if (!*log) *log = dupstr(nvrtcGetErrorString(r));
        s = GCR_ERR_COMPILE;
        goto done;
    }
    size_t n = 0;
    r = ptx ? nvrtcGetPTXSize(prog, &n) : nvrtcGetCUBINSize(prog, &n);
    if (r == NVRTC_SUCCESS && n && (*image = malloc(n)))
        r = ptx ? nvrtcGetPTX(prog, *image) : nvrtcGetCUBIN(prog, *image);
    if (r != NVRTC_SUCCESS || !*image) {
        free(*image);
        *image = NULL;
        free(*log);
        *log = dupstr(r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "out of host memory");
        s = r != NVRTC_SUCCESS ? GCR_ERR_COMPILE : GCR_ERR_OOM; /* OOM must not split a group as if it failed to compile */
        goto done;
    }
    *size = n;
    if (is_ptx) *is_ptx = ptx;
done:
    if (prog) nvrtcDestroyProgram(&prog);
    free(hdr);
    free(hname);
    free(o);
    return s;
}
