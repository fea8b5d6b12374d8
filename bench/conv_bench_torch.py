#!/usr/bin/env python3
"""conv_bench_torch.py — the cuDNN (PyTorch) side of bench/conv_bench.c (issue 11): the same layer
shapes (bench/conv_shapes.py: every distinct conv of MobileNet-v3-Large and ResNet-50, plus each
net's pool and classifier), torch.nn.functional.conv2d with cudnn.benchmark on channels_last input
and weight, each layer launched 20 times inside one CUDA Graph and timed as the best of 3 rounds of 10
replays, as conv_bench.c times gcr. Prints the same human table and the same "LAYER key=value ..."
lines (side=cudnn) for bench/conv_table.py.

Before timing it checks that conv_bench.c's copy of the shape tables agrees with conv_shapes.py and,
where torchvision is installed, that conv_shapes.py agrees with torchvision's models; a mismatch is
printed as a "SHAPES" line (and fails the run with --strict).

dtypes: f16, bf16; tf32 = f32 with cudnn.allow_tf32 and matmul.allow_tf32 on; f32 = both off.
usage: python3 bench/conv_bench_torch.py [net=mnv3|resnet50|all] [nchw|nhwc] [f32|tf32|f16|bf16 ...]
                                         [head=0|1] [only=NAME-PREFIX] [--strict] [batch ...]
(defaults as conv_bench.c's: net=mnv3 nchw, f32 f16, head=1, batches 1 32 128; issue 11 passes nhwc)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_shapes  # noqa: E402  (beside this file)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DTYPES = {"f32": (torch.float32, False), "tf32": (torch.float32, True), "f16": (torch.float16, False),
          "bf16": (torch.bfloat16, False)}


def timed(fn):
    """Device µs of one call of fn: 20 calls captured in one CUDA Graph, the best of 3 rounds of 10
    replays (the first call, outside the graph, lets cudnn.benchmark pick its algorithm)."""
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(20):
                fn()
    torch.cuda.current_stream().wait_stream(s)
    g.replay()
    torch.cuda.synchronize()
    best = None
    for _ in range(3):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(10):
            g.replay()
        e1.record()
        torch.cuda.synchronize()
        us = e0.elapsed_time(e1) * 1000 / 200
        best = us if best is None or us < best else best
    del g
    return best


def rand(shape, dt, mf=None):
    t = torch.rand(*shape, device="cuda", dtype=torch.float32).sub_(0.5).to(dt)  # [-0.5, 0.5), as gcr's
    return t.to(memory_format=mf) if mf is not None else t


def run_conv(sh, N, dt, mf):
    name, C, H, O, k, s, g, b, cnt = sh
    x = rand((N, C, H, H), dt, mf)
    w = rand((O, C // g, k, k), dt, mf)  # channels_last weight: O x k x k x C/g in memory (OHWI)
    bias = rand((O,), dt) if b else None
    return timed(lambda: F.conv2d(x, w, bias, s, k // 2, 1, g))


def run_head(e, N, dt, mf):
    name, kind, C, H, O, cnt = e
    if kind == "gap":
        x = rand((N, C, H, H), dt, mf)
        return timed(lambda: F.adaptive_avg_pool2d(x, 1))
    x, w, bias = rand((N, C), dt), rand((O, C), dt), rand((O,), dt)
    return timed(lambda: F.linear(x, w, bias))


def check_shapes(strict):
    """SHAPES lines for every disagreement between the three places that hold the shapes."""
    here = os.path.dirname(os.path.abspath(__file__))
    errs = conv_shapes.check_c(os.path.join(here, "conv_bench.c"))
    try:
        import torchvision  # noqa: F401
        have_tv = True
    except ImportError:
        have_tv = False
        print("SHAPES torchvision not installed: the lists are not checked against the models")
    if have_tv:
        for net in conv_shapes.NETS:
            try:
                errs += conv_shapes.check_torchvision(net)
            except Exception as ex:  # a torchvision without the model: say so, time anyway
                errs.append(f"{net}: torchvision check failed: {ex!r}")
    for e in errs:
        print("SHAPES mismatch:", e)
    if not errs:
        print("SHAPES ok: conv_bench.c and conv_shapes.py agree" + (", and with torchvision" if have_tv else ""))
    if errs and strict:
        sys.exit(1)


def main(argv):
    net_sel, layout, dts, batches, head, only, strict = "mnv3", "nchw", [], [], 1, None, False
    for a in argv:
        if a in DTYPES:
            dts.append(a)
        elif a in ("nhwc", "nchw"):
            layout = a
        elif a.startswith("net="):
            net_sel = a[4:]
        elif a.startswith("head="):
            head = int(a[5:])
        elif a.startswith("only="):
            only = a[5:]
        elif a == "--strict":
            strict = True
        elif a.isdigit() and int(a) > 0:
            batches.append(int(a))
        else:
            sys.exit(f"conv_bench_torch: unknown argument {a!r}\n" + __doc__.split("usage:")[1])
    if net_sel != "all" and net_sel not in conv_shapes.NETS:
        sys.exit(f"conv_bench_torch: unknown net {net_sel!r}")
    dts = dts or ["f32", "f16"]
    batches = batches or [1, 32, 128]
    mf = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    torch.backends.cudnn.benchmark = True
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "cudnn", torch.backends.cudnn.version())
    check_shapes(strict)
    print(flush=True)
    for net in conv_shapes.nets(net_sel):
        convs, heads = conv_shapes.NETS[net]
        for dname in dts:
            dt, tf32 = DTYPES[dname]
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            esize = torch.tensor([], dtype=dt).element_size()
            for N in batches:
                rows = []
                for sh in convs:
                    if only and not sh[0].startswith(only):
                        continue
                    fl, by = conv_shapes.conv_work(sh, N, esize)
                    rows.append((sh[0], conv_shapes.conv_kind(sh), sh[-1], lambda sh=sh: run_conv(sh, N, dt, mf), fl, by))
                for e in heads if head else []:
                    if only and not e[0].startswith(only):
                        continue
                    fl, by = conv_shapes.head_work(e, N, esize)
                    rows.append((e[0], e[1], e[-1], lambda e=e: run_head(e, N, dt, mf), fl, by))
                print(f"torch {dname} batch {N} {layout.upper()} {net} (weights {layout})")
                total, lines = 0.0, []
                for (name, kind, cnt, fn, fl, by) in rows:
                    try:
                        us = fn()
                    except Exception as ex:  # report the layer, keep timing the others
                        print(f"  {name:<12} failed: {ex!r}"[:300])
                        lines.append(f"LAYER side=cudnn net={net} name={name} kind={kind} dtype={dname} layout={layout} "
                                     f"wlayout={layout} batch={N} count={cnt} us=fail")
                        torch.cuda.synchronize()
                        continue
                    total += us * cnt
                    print(f"  {name:<12} x{cnt} {us:9.2f} us {fl / us * 1e-6:8.2f} TFLOP/s {by / us * 1e-3:8.1f} GB/s")
                    lines.append(f"LAYER side=cudnn net={net} name={name} kind={kind} dtype={dname} layout={layout} "
                                 f"wlayout={layout} batch={N} count={cnt} us={us:.3f} tflops={fl / us * 1e-6:.3f} "
                                 f"gbs={by / us * 1e-3:.1f} flops={fl:.0f} bytes={by:.0f}")
                print(f"  total {total:.1f} us per forward")
                print("\n".join(lines) + "\n", flush=True)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])
