# conv_bench_torch.py — PyTorch (cuDNN / cuBLAS) side of bench/conv_bench.c: the same
# MobileNet-v3-Large conv shapes, global pool and classifier, each launched 20 times inside one CUDA
# Graph, so the ratio gcr/PyTorch compares device time per kernel.
# usage: python3 bench/conv_bench_torch.py [nhwc] [batch ...]
import sys
import torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

def DW(n, c, h, k, s, cnt): return (n, c, h, c, k, s, c, 0, cnt)
def PW(n, c, h, o, cnt): return (n, c, h, o, 1, 1, 1, 0, cnt)
def SE(n, c, o, cnt): return (n, c, 1, o, 1, 1, 1, 1, cnt)

NET = [("stem 3x3s2", 3, 224, 16, 3, 2, 1, 0, 1),
       DW("b1.dw3", 16, 112, 3, 1, 1), PW("b1.pw", 16, 112, 16, 1),
       PW("b2.ex", 16, 112, 64, 1), DW("b2.dw3s2", 64, 112, 3, 2, 1), PW("b2.pw", 64, 56, 24, 1),
       PW("b3.ex", 24, 56, 72, 1), DW("b3.dw3", 72, 56, 3, 1, 1), PW("b3.pw", 72, 56, 24, 1),
       PW("b4.ex", 24, 56, 72, 1), DW("b4.dw5s2", 72, 56, 5, 2, 1), SE("b4.se1", 72, 24, 1), SE("b4.se2", 24, 72, 1),
       PW("b4.pw", 72, 28, 40, 1),
       PW("b5.ex", 40, 28, 120, 2), DW("b5.dw5", 120, 28, 5, 1, 2), SE("b5.se1", 120, 32, 2), SE("b5.se2", 32, 120, 2),
       PW("b5.pw", 120, 28, 40, 2),
       PW("b7.ex", 40, 28, 240, 1), DW("b7.dw3s2", 240, 28, 3, 2, 1), PW("b7.pw", 240, 14, 80, 1),
       PW("b8.ex", 80, 14, 200, 1), DW("b8.dw3", 200, 14, 3, 1, 1), PW("b8.pw", 200, 14, 80, 1),
       PW("b9.ex", 80, 14, 184, 2), DW("b9.dw3", 184, 14, 3, 1, 2), PW("b9.pw", 184, 14, 80, 2),
       PW("b11.ex", 80, 14, 480, 1), DW("b11.dw3", 480, 14, 3, 1, 1), SE("b11.se1", 480, 120, 1),
       SE("b11.se2", 120, 480, 1), PW("b11.pw", 480, 14, 112, 1),
       PW("b12.ex", 112, 14, 672, 1), DW("b12.dw3", 672, 14, 3, 1, 1), SE("b12.se1", 672, 168, 2),
       SE("b12.se2", 168, 672, 2), PW("b12.pw", 672, 14, 112, 1),
       PW("b13.ex", 112, 14, 672, 1), DW("b13.dw5s2", 672, 14, 5, 2, 1), PW("b13.pw", 672, 7, 160, 1),
       PW("b14.ex", 160, 7, 960, 2), DW("b14.dw5", 960, 7, 5, 1, 2), SE("b14.se1", 960, 240, 2), SE("b14.se2", 240, 960, 2),
       PW("b14.pw", 960, 7, 160, 2),
       PW("last", 160, 7, 960, 1)]

def timed(fn):
    fn(); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn(); torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=s):
            for _ in range(20): fn()
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(10): g.replay()
    e1.record(); torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1000 / 200

def main():
    nhwc = "nhwc" in sys.argv[1:]
    batches = [int(a) for a in sys.argv[1:] if a.isdigit()] or [1, 128]
    mf = torch.channels_last if nhwc else torch.contiguous_format
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for dt in (torch.float32, torch.float16):
        for N in batches:
            total = 0.0
            print(f"torch {dt} batch {N} {'NHWC' if nhwc else 'NCHW'}")
            for (name, C, H, O, k, s, g, b, cnt) in NET:
                x = torch.randn(N, C, H, H, device="cuda", dtype=dt).to(memory_format=mf)
                w = torch.randn(O, C // g, k, k, device="cuda", dtype=dt)
                bias = torch.randn(O, device="cuda", dtype=dt) if b else None
                us = timed(lambda: F.conv2d(x, w, bias, s, k // 2, 1, g))
                total += us * cnt
                print(f"  {name:<14} x{cnt} {us:9.2f} us")
            x = torch.randn(N, 960, 7, 7, device="cuda", dtype=dt).to(memory_format=mf)
            us = timed(lambda: F.adaptive_avg_pool2d(x, 1)); total += us
            print(f"  {'gap 960@7x7':<14} x1 {us:9.2f} us")
            for (name, K, O) in (("fc1 960-1280", 960, 1280), ("fc2 1280-1000", 1280, 1000)):
                x = torch.randn(N, K, device="cuda", dtype=dt)
                w = torch.randn(O, K, device="cuda", dtype=dt)
                bias = torch.randn(O, device="cuda", dtype=dt)
                us = timed(lambda: F.linear(x, w, bias)); total += us
                print(f"  {name:<14} x1 {us:9.2f} us")
            print(f"  total {total:.1f} us per forward\n")

main()
