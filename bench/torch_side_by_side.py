#!/usr/bin/env python3
"""torch_side_by_side.py — the PyTorch figures bench/mobilenet.sh puts beside gcr's, measured in the
same run on the same GPU: torchvision mobilenet_v3_large, resnet50 or mobilenet_v2 (--model; random init, eval,
inference_mode, cudnn.benchmark) as PyTorch eager, eager inside one CUDA Graph, and torch.compile(mode=
"reduce-overhead"). Adapted from the project's reference baseline script (shared/bench/
torch_baseline.py): same timing method (CUDA events over back-to-back iterations, median of 5).

float32 math (--tf32): PyTorch's defaults run float32 convolutions on TF32 tensor cores
(torch.backends.cudnn.allow_tf32 = True) and matmuls in FP32 (torch.backends.cuda.matmul.allow_tf32 =
False), while gcr's f32 is exact FP32 unless GCR_TF32=1. So that gcr can be compared like with like,
float32 is measured under PyTorch's default flags (engine names as they are, "math": "tf32-conv")
and/or with both flags off (engine names + "-fp32", "math": "fp32"); --tf32 1 turns both on
(engine names + "-tf32", "math": "tf32"). float16 runs once ("math": "f16").

Prints one JSON line per (engine, math, dtype, batch) and writes them all to --json.
usage: torch_side_by_side.py [--model mobilenet_v3_large|resnet50|mobilenet_v2] [--modes eager,graph,ro] [--batches 1,8,32,128] [--dtypes float32,float16]
                             [--iters 200] [--layout nchw|nhwc] [--tf32 default|0|1|both] [--json FILE]
"""
import argparse
import json
import time

import torch
import torchvision


def timeit(fn, iters, warm=20):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / iters)
    ts.sort()
    return ts[len(ts) // 2]


def kernels_per_forward(fn):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)


# --tf32 choice -> float32 variants as (engine suffix, cudnn.allow_tf32, matmul.allow_tf32); None keeps
# the flag as PyTorch started with it (its default, or what the environment made it)
TF32_VARIANTS = {"default": [("", None, None)], "0": [("-fp32", False, False)], "1": [("-tf32", True, True)],
                 "both": [("", None, None), ("-fp32", False, False)]}


# --model -> (torchvision constructor name, the "model" field of the JSON lines, as gcr's samples write it)
MODELS = {"mobilenet_v3_large": ("mobilenet_v3_large", "large"), "resnet50": ("resnet50", "resnet50"),
          "mobilenet_v2": ("mobilenet_v2", "mobilenet_v2")}


def math_name(conv, mm):
    return "tf32" if conv and mm else "tf32-conv" if conv else "tf32-matmul" if mm else "fp32"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=sorted(MODELS), default="mobilenet_v3_large")
    ap.add_argument("--modes", default="eager,graph,ro")
    ap.add_argument("--batches", default="1,8,32,128")
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    ap.add_argument("--tf32", choices=sorted(TF32_VARIANTS), default="both",
                    help="float32 math: default (PyTorch's flags), 0 (strict FP32), 1 (TF32 convs and matmuls), "
                         "both (default and 0)")
    ap.add_argument("--json", default="torch_side_by_side.json")
    a = ap.parse_args()
    modes = a.modes.split(",")
    default_flags = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    res = []

    def set_math(dname, sfx, conv, mm):
        """Sets the TF32 flags of one variant and returns what its JSON lines say about it. The flags
        are read when PyTorch picks or launches a kernel (cudnn.benchmark keys its algorithm cache on
        them), so each variant re-times eager and captures its own CUDA Graph below; torch.compile
        bakes them in at compile time, hence the torch._dynamo.reset() before every compile."""
        torch.backends.cudnn.allow_tf32 = default_flags[0] if conv is None else conv
        torch.backends.cuda.matmul.allow_tf32 = default_flags[1] if mm is None else mm
        flags = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
        return dict(suffix=sfx, math="f16" if dname == "float16" else math_name(*flags), cudnn_tf32=flags[0],
                    matmul_tf32=flags[1])

    def report(var, engine, dt, bs, ms, nk=None, compile_s=None):
        r = dict(engine=engine + var["suffix"], model=MODELS[a.model][1], dtype={"float32": "f32", "float16": "f16"}.get(dt, dt),
                 math=var["math"], cudnn_tf32=var["cudnn_tf32"], matmul_tf32=var["matmul_tf32"], layout=a.layout,
                 batch=bs, ms=round(ms, 4), img_per_s=round(bs / ms * 1000, 1), kernels=nk, compile_s=compile_s,
                 device=torch.cuda.get_device_name())
        res.append(r)
        print("RESULT " + json.dumps(r), flush=True)

    fmt = torch.channels_last if a.layout == "nhwc" else torch.contiguous_format
    for dname in a.dtypes.split(","):
        dt = getattr(torch, dname)
        base = getattr(torchvision.models, MODELS[a.model][0])().eval().cuda().to(dt).to(memory_format=fmt)
        variants = TF32_VARIANTS[a.tf32] if dname == "float32" else TF32_VARIANTS["default"]
        for bs in [int(b) for b in a.batches.split(",")]:
            x = torch.randn(bs, 3, 224, 224, device="cuda", dtype=dt).to(memory_format=fmt)
            for sfx, conv, mm in variants:
                var = set_math(dname, sfx, conv, mm)
                with torch.inference_mode():
                    if "eager" in modes:
                        f = lambda: base(x)
                        report(var, "torch-eager", dname, bs, timeit(f, a.iters), kernels_per_forward(f))
                    if "graph" in modes:
                        sx = x.clone()
                        s = torch.cuda.Stream()
                        s.wait_stream(torch.cuda.current_stream())
                        with torch.cuda.stream(s):
                            for _ in range(3):
                                base(sx)
                        torch.cuda.current_stream().wait_stream(s)
                        g = torch.cuda.CUDAGraph()
                        with torch.cuda.graph(g):
                            base(sx)
                        report(var, "torch-eager+cudagraph", dname, bs, timeit(lambda: g.replay(), a.iters))
                    if "ro" in modes:
                        torch._dynamo.reset()  # a fresh compile per batch and per math variant
                        m = torch.compile(base, mode="reduce-overhead")
                        t0 = time.time()
                        for _ in range(3):
                            m(x)
                        torch.cuda.synchronize()
                        ct = time.time() - t0
                        report(var, "torch-compile-ro", dname, bs, timeit(lambda: m(x), a.iters),
                               compile_s=round(ct, 1))
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
