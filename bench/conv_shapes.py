#!/usr/bin/env python3
"""conv_shapes.py — the one list of the layer shapes that bench/conv_bench.c (gcr) and
bench/conv_bench_torch.py (cuDNN) time: every distinct conv shape of torchvision MobileNet-v3-Large and
ResNet-50 (v1.5: stride on the 3x3) at 224x224, each once with its count per forward, plus each net's
head (global average pool, classifier). conv_bench.c keeps a C copy of the tables, so this file also
prints that copy (--c) and checks it (--check conv_bench.c), and, where torchvision is installed,
checks the lists against the models themselves (--torchvision), so a shape typed wrong in one place
cannot go unnoticed.

usage: conv_shapes.py [--c] [--check PATH/conv_bench.c] [--torchvision]   (no option: list the shapes)
"""
import re
import sys
from collections import Counter


# A conv: input C x H x H, O outputs, k x k taps, stride s, padding k // 2, groups g, bias 0/1,
# count = how many times one forward runs this shape. Same field order as conv_bench.c's struct shape.
def CONV(n, c, h, o, k, s, g, b, cnt): return (n, c, h, o, k, s, g, b, cnt)
def DW(n, c, h, k, s, cnt): return CONV(n, c, h, c, k, s, c, 0, cnt)         # depthwise
def PW(n, c, h, o, cnt): return CONV(n, c, h, o, 1, 1, 1, 0, cnt)            # 1x1
def PWS(n, c, h, o, s, cnt): return CONV(n, c, h, o, 1, s, 1, 0, cnt)        # strided 1x1 (downsample)
def SE(n, c, o, cnt): return CONV(n, c, 1, o, 1, 1, 1, 1, cnt)               # squeeze-excite 1x1 at 1x1, bias
def C3(n, c, h, o, s, cnt): return CONV(n, c, h, o, 3, s, 1, 0, cnt)         # dense 3x3


# Head ops: kind "gap" (global average pool of C at H x H) or "fc" (linear C -> O with bias).
def GAP(n, c, h, cnt): return (n, "gap", c, h, c, cnt)
def FC(n, c, o, cnt): return (n, "fc", c, 1, o, cnt)


# MobileNet-v3-Large, named after the first block that runs each shape (b6, b10, b15 repeat b5, b9,
# b14; b4.ex = b3.ex, b13.ex = b12.ex, b13's SE = b12's, the last conv 160->960 = b14.ex).
MNV3 = [
    CONV("stem", 3, 224, 16, 3, 2, 1, 0, 1),
    DW("b1.dw3", 16, 112, 3, 1, 1), PW("b1.pw", 16, 112, 16, 1),
    PW("b2.ex", 16, 112, 64, 1), DW("b2.dw3s2", 64, 112, 3, 2, 1), PW("b2.pw", 64, 56, 24, 1),
    PW("b3.ex", 24, 56, 72, 2), DW("b3.dw3", 72, 56, 3, 1, 1), PW("b3.pw", 72, 56, 24, 1),
    DW("b4.dw5s2", 72, 56, 5, 2, 1), SE("b4.se1", 72, 24, 1), SE("b4.se2", 24, 72, 1), PW("b4.pw", 72, 28, 40, 1),
    PW("b5.ex", 40, 28, 120, 2), DW("b5.dw5", 120, 28, 5, 1, 2), SE("b5.se1", 120, 32, 2), SE("b5.se2", 32, 120, 2),
    PW("b5.pw", 120, 28, 40, 2),
    PW("b7.ex", 40, 28, 240, 1), DW("b7.dw3s2", 240, 28, 3, 2, 1), PW("b7.pw", 240, 14, 80, 1),
    PW("b8.ex", 80, 14, 200, 1), DW("b8.dw3", 200, 14, 3, 1, 1), PW("b8.pw", 200, 14, 80, 1),
    PW("b9.ex", 80, 14, 184, 2), DW("b9.dw3", 184, 14, 3, 1, 2), PW("b9.pw", 184, 14, 80, 2),
    PW("b11.ex", 80, 14, 480, 1), DW("b11.dw3", 480, 14, 3, 1, 1), SE("b11.se1", 480, 120, 1),
    SE("b11.se2", 120, 480, 1), PW("b11.pw", 480, 14, 112, 1),
    PW("b12.ex", 112, 14, 672, 2), DW("b12.dw3", 672, 14, 3, 1, 1), SE("b12.se1", 672, 168, 2),
    SE("b12.se2", 168, 672, 2), PW("b12.pw", 672, 14, 112, 1),
    DW("b13.dw5s2", 672, 14, 5, 2, 1), PW("b13.pw", 672, 7, 160, 1),
    PW("b14.ex", 160, 7, 960, 3), DW("b14.dw5", 960, 7, 5, 1, 2), SE("b14.se1", 960, 240, 2),
    SE("b14.se2", 240, 960, 2), PW("b14.pw", 960, 7, 160, 2),
]
MNV3_HEAD = [GAP("gap", 960, 7, 1), FC("fc1", 960, 1280, 1), FC("fc2", 1280, 1000, 1)]

# ResNet-50: lN.B.cK = layer N, block B, conv K; a shape that recurs is named after its first use
# (l1.0.c3 also covers layer 1's downsample 64->256, the same 1x1 at 56x56).
RESNET50 = [
    CONV("stem", 3, 224, 64, 7, 2, 1, 0, 1),
    PW("l1.0.c1", 64, 56, 64, 1), C3("l1.0.c2", 64, 56, 64, 1, 3), PW("l1.0.c3", 64, 56, 256, 4),
    PW("l1.1.c1", 256, 56, 64, 2),
    PW("l2.0.c1", 256, 56, 128, 1), C3("l2.0.c2", 128, 56, 128, 2, 1), PWS("l2.0.ds", 256, 56, 512, 2, 1),
    PW("l2.0.c3", 128, 28, 512, 4), PW("l2.1.c1", 512, 28, 128, 3), C3("l2.1.c2", 128, 28, 128, 1, 3),
    PW("l3.0.c1", 512, 28, 256, 1), C3("l3.0.c2", 256, 28, 256, 2, 1), PWS("l3.0.ds", 512, 28, 1024, 2, 1),
    PW("l3.0.c3", 256, 14, 1024, 6), PW("l3.1.c1", 1024, 14, 256, 5), C3("l3.1.c2", 256, 14, 256, 1, 5),
    PW("l4.0.c1", 1024, 14, 512, 1), C3("l4.0.c2", 512, 14, 512, 2, 1), PWS("l4.0.ds", 1024, 14, 2048, 2, 1),
    PW("l4.0.c3", 512, 7, 2048, 3), PW("l4.1.c1", 2048, 7, 512, 2), C3("l4.1.c2", 512, 7, 512, 1, 2),
]
RESNET50_HEAD = [GAP("gap", 2048, 7, 1), FC("fc", 2048, 1000, 1)]

NETS = {"mnv3": (MNV3, MNV3_HEAD), "resnet50": (RESNET50, RESNET50_HEAD)}
# torchvision's constructor of each net, for --torchvision
TV_MODELS = {"mnv3": "mobilenet_v3_large", "resnet50": "resnet50"}


def nets(sel):
    """The net names that a selector ("mnv3", "resnet50", "all") means."""
    return list(NETS) if sel == "all" else [sel]


def out_hw(h, k, s):
    return (h + 2 * (k // 2) - k) // s + 1


def conv_kind(sh):
    n, c, h, o, k, s, g, b, cnt = sh
    return "dw" if g > 1 and g == c == o else "conv"


def conv_work(sh, batch, esize):
    """(FLOPs, compulsory bytes) of one conv: x, w, bias and the output each moved once; the same
    formula as conv_bench.c's."""
    n, c, h, o, k, s, g, b, cnt = sh
    p = out_hw(h, k, s) ** 2
    flops = 2.0 * batch * o * p * (c // g) * k * k
    elems = batch * c * h * h + o * (c // g) * k * k + (o if b else 0) + batch * o * p
    return flops, float(esize * elems)


def head_work(e, batch, esize):
    n, kind, c, h, o, cnt = e
    if kind == "gap":
        return float(batch * c * h * h), float(esize * (batch * c * h * h + batch * c))
    return 2.0 * batch * c * o, float(esize * (batch * c + c * o + o + batch * o))


# ---------------------------------------------------------------- the C copy

def c_table():
    """conv_bench.c's tables, as C text (field order of struct shape / struct head_shape)."""
    out = []
    for net, (convs, head) in NETS.items():
        out.append(f"static const shape {net}_convs[] = {{")
        for (n, c, h, o, k, s, g, b, cnt) in convs:
            out.append(f'    CONV("{n}", {c}, {h}, {o}, {k}, {s}, {g}, {b}, {cnt}),')
        out.append("};")
        out.append(f"static const head_shape {net}_head[] = {{")
        for (n, kind, c, h, o, cnt) in head:
            out.append(f'    GAP("{n}", {c}, {h}, {cnt}),' if kind == "gap" else f'    FC("{n}", {c}, {o}, {cnt}),')
        out.append("};")
    return "\n".join(out)


_MACROS = {"CONV": CONV, "DW": DW, "PW": PW, "PWS": PWS, "SE": SE, "C3": C3, "GAP": GAP, "FC": FC}
_CALL = re.compile(r'\b(CONV|DW|PW|PWS|SE|C3|GAP|FC)\(\s*"([^"]*)"((?:\s*,\s*-?\d+)*)\s*\)')


def parse_c(text):
    """{net: (convs, head)} from the C source's `static const shape NET_convs[] = {...};` and
    `static const head_shape NET_head[] = {...};` arrays, their macro calls expanded as above."""
    found = {}
    for m in re.finditer(r"static const (shape|head_shape) (\w+)_(convs|head)\[\]\s*=\s*\{(.*?)\};", text, re.S):
        rows = []
        for c in _CALL.finditer(m.group(4)):
            args = [int(v) for v in re.findall(r"-?\d+", c.group(3))]
            rows.append(_MACROS[c.group(1)](c.group(2), *args))
        found.setdefault(m.group(2), [[], []])[0 if m.group(3) == "convs" else 1] = rows
    return {k: (v[0], v[1]) for k, v in found.items()}


def check_c(path):
    """Differences between conv_bench.c's tables and this file's (empty list: they agree)."""
    try:
        text = open(path).read()
    except OSError as e:
        return [f"cannot read {path}: {e}"]
    c = parse_c(text)
    errs = []
    for net, (convs, head) in NETS.items():
        if net not in c:
            errs.append(f"{path}: no {net}_convs / {net}_head table")
            continue
        for what, mine, theirs in (("convs", convs, c[net][0]), ("head", head, c[net][1])):
            if list(mine) != list(theirs):
                extra = [r for r in theirs if r not in mine]
                missing = [r for r in mine if r not in theirs]
                errs.append(f"{net} {what}: C table differs (only in C: {extra}; only here: {missing}"
                            f"{'; order differs' if not extra and not missing else ''})")
    for net in c:
        if net not in NETS:
            errs.append(f"{path}: table {net} is not in conv_shapes.py")
    return errs


# ---------------------------------------------------------------- torchvision's own models

def torchvision_counts(net):
    """Counter of (C, H, O, k, s, g, bias) over every nn.Conv2d that torchvision's model runs on a
    1x3x224x224 input (CPU, random weights: only the shapes matter). Needs torch and torchvision."""
    import torch
    import torchvision
    model = getattr(torchvision.models, TV_MODELS[net])(weights=None).eval()
    seen = Counter()
    bad = []

    def hook(mod, inp, out):
        x = inp[0]
        k, s, p, d = mod.kernel_size, mod.stride, mod.padding, mod.dilation
        if k[0] != k[1] or s[0] != s[1] or x.shape[2] != x.shape[3] or p != (k[0] // 2, k[0] // 2) or d != (1, 1):
            bad.append(f"{mod}: input {tuple(x.shape)} is outside the square, padding k//2 form")
        seen[(x.shape[1], x.shape[2], mod.out_channels, k[0], s[0], mod.groups, int(mod.bias is not None))] += 1

    hs = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        model(torch.randn(1, 3, 224, 224))
    for h in hs:
        h.remove()
    return seen, bad


def list_counts(convs):
    cnt = Counter()
    for (n, c, h, o, k, s, g, b, count) in convs:
        cnt[(c, h, o, k, s, g, b)] += count
    return cnt


def check_torchvision(net):
    """Differences between this file's conv list of net and torchvision's model (empty: they agree)."""
    tv, bad = torchvision_counts(net)
    mine = list_counts(NETS[net][0])
    errs = list(bad)
    for key in sorted(set(tv) | set(mine)):
        if tv[key] != mine[key]:
            errs.append(f"{net}: (C, H, O, k, s, groups, bias) {key}: torchvision runs it {tv[key]}x, the list says {mine[key]}x")
    dup = [k for k, v in Counter((c, h, o, k_, s, g, b) for (n, c, h, o, k_, s, g, b, cnt) in NETS[net][0]).items() if v > 1]
    errs += [f"{net}: shape {k} listed more than once" for k in dup]
    return errs


def main(argv):
    if "--c" in argv:
        print(c_table())
        return 0
    rc = 0
    if "--check" in argv:
        path = argv[argv.index("--check") + 1]
        errs = check_c(path)
        print("\n".join(errs) if errs else f"{path}: tables agree with conv_shapes.py")
        rc |= bool(errs)
    if "--torchvision" in argv:
        for net in NETS:
            errs = check_torchvision(net)
            print("\n".join(errs) if errs else f"{net}: agrees with torchvision.models.{TV_MODELS[net]}")
            rc |= bool(errs)
    if "--check" not in argv and "--torchvision" not in argv:
        for net, (convs, head) in NETS.items():
            print(f"{net}: {len(convs)} distinct conv shapes, {sum(r[-1] for r in convs)} convs per forward")
            for r in convs:
                print("  %-10s C=%-4d H=%-3d O=%-4d k=%d s=%d g=%-4d bias=%d x%d" % r)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
