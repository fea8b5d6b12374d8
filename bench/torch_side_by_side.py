#!/usr/bin/env python3
"""torch_side_by_side.py — the PyTorch figures bench/mobilenet.sh puts beside gcr's, measured in the
same run on the same GPU: torchvision mobilenet_v3_large (random init, eval, inference_mode,
cudnn.benchmark) as PyTorch eager, eager inside one CUDA Graph, and torch.compile(mode=
"reduce-overhead"). Adapted from the project's reference baseline script (shared/bench/
torch_baseline.py): same timing method (CUDA events over back-to-back iterations, median of 5).

Prints one JSON line per (engine, dtype, batch) and writes them all to --json.
usage: torch_side_by_side.py [--modes eager,graph,ro] [--batches 1,8,32,128] [--dtypes float32,float16]
                             [--iters 200] [--layout nchw|nhwc] [--json FILE]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="eager,graph,ro")
    ap.add_argument("--batches", default="1,8,32,128")
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    ap.add_argument("--json", default="torch_side_by_side.json")
    a = ap.parse_args()
    modes = a.modes.split(",")
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    res = []

    def report(engine, dt, bs, ms, nk=None, compile_s=None):
        r = dict(engine=engine, model="large", dtype={"float32": "f32", "float16": "f16"}.get(dt, dt),
                 layout=a.layout, batch=bs, ms=round(ms, 4), img_per_s=round(bs / ms * 1000, 1), kernels=nk,
                 compile_s=compile_s, device=torch.cuda.get_device_name())
        res.append(r)
        print("RESULT " + json.dumps(r), flush=True)

    fmt = torch.channels_last if a.layout == "nhwc" else torch.contiguous_format
    for dname in a.dtypes.split(","):
        dt = getattr(torch, dname)
        base = torchvision.models.mobilenet_v3_large().eval().cuda().to(dt).to(memory_format=fmt)
        for bs in [int(b) for b in a.batches.split(",")]:
            x = torch.randn(bs, 3, 224, 224, device="cuda", dtype=dt).to(memory_format=fmt)
            with torch.inference_mode():
                if "eager" in modes:
                    f = lambda: base(x)
                    report("torch-eager", dname, bs, timeit(f, a.iters), kernels_per_forward(f))
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
                    report("torch-eager+cudagraph", dname, bs, timeit(lambda: g.replay(), a.iters))
                if "ro" in modes:
                    torch._dynamo.reset()
                    m = torch.compile(base, mode="reduce-overhead")
                    t0 = time.time()
                    for _ in range(3):
                        m(x)
                    torch.cuda.synchronize()
                    ct = time.time() - t0
                    report("torch-compile-ro", dname, bs, timeit(lambda: m(x), a.iters), compile_s=round(ct, 1))
    with open(a.json, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
