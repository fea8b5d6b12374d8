#!/usr/bin/env python3
"""export_mobilenet.py — golden files for gcr's MobileNet parity: builds torchvision's
mobilenet_v3_large / mobilenet_v3_small / mobilenet_v2 (--model large, small, v2) with a fixed seed
(random init, no downloads), makes every
parameter informative (random BN affine, BN running stats from random data (calibrate), non-zero
biases, Linear layers at their PyTorch default init so logits are O(1)), checks that the logits
depend on the input, runs one input batch in eval mode and writes one
safetensors file holding:
  <state_dict names>  the weights, f32 (num_batches_tracked stays I64 [])
  input               [N,3,H,W] f32
  logits              [N,classes] f32, PyTorch's f32 forward
  logits_f16          [N,classes] f32, PyTorch's forward with model and input in f16 (--f16)
and __metadata__ with the configuration. The file is read by samples/mobilenet_v3.c and
samples/mobilenet_v2.c (--weights/--input/--check) and test/test_mobilenet.c.

The safetensors format is written directly (8-byte little-endian header length, JSON header,
data) so nothing beyond torch and torchvision is needed.

Usage (the committed goldens, see tools/README.md):
    python3 tools/export_mobilenet.py --model small --width 0.5 --classes 100 --batch 2 --size 131 --f16 \
            --out test/data/mnv3_small_w050.safetensors
"""
import argparse
import copy
import json
import struct
import sys

import torch
import torchvision

ST_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
             torch.int32: "I32", torch.int64: "I64", torch.bool: "BOOL"}


def tensor_bytes(t):
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bf16: same bits as int16
        t = t.view(torch.int16)
    return t.numpy().tobytes() if t.numel() else b""


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, tensor) in file order; metadata: dict of str -> str."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors:
        b = tensor_bytes(t)
        header[name] = {"dtype": ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the format pads the header with spaces to keep data 8-aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    inv = {v: k for k, v in ST_DTYPES.items()}
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + en])
        t = torch.frombuffer(raw, dtype=inv[e["dtype"]]) if raw else torch.empty(0, dtype=inv[e["dtype"]])
        out[name] = t.reshape(e["shape"])
    return out


def randomise(model, gen):
    """Every parameter non-trivial, so a missing bias or a BN read as identity shows in the logits."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.2)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) * 1.5 + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            elif isinstance(m, torch.nn.Conv2d) and m.bias is not None:
                m.bias.copy_((torch.rand(m.out_channels, generator=gen) - 0.5) * 0.2)
            elif isinstance(m, torch.nn.Linear):
                k = m.in_features ** -0.5  # nn.Linear's own default range, not torchvision's N(0, 0.01)
                m.weight.copy_((torch.rand(m.weight.shape, generator=gen) * 2 - 1) * k)
                m.bias.copy_((torch.rand(m.out_features, generator=gen) * 2 - 1) * k)


def calibrate(model, gen, batch, size, rounds=4):
    """BN running statistics from data, as training would leave them: with random ones (randomise)
    the activations of a randomly initialised MobileNet shrink layer by layer until the logits
    no longer depend on the input (a zero input reproduced the large golden's logits to 2e-7, so
    its parity check could not see a wrong stem or first half of the network). The affine
    parameters stay randomise's."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(rounds):
            model(torch.randn(max(batch, 8), 3, size, size, generator=gen))
    model.eval()


def input_sensitivity(model, x):
    """max |logits(x) - logits(0)| / max |logits(x)|: how much the logits depend on the input"""
    with torch.inference_mode():
        a = model(x)
        b = model(torch.zeros_like(x))
    return ((a - b).abs().max() / a.abs().max()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["large", "small", "v2"], default="small")
    ap.add_argument("--width", type=float, default=0.5)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=131, help="input height = width (>= 32)")
    ap.add_argument("--classes", type=int, default=1000, help="num_classes (fewer keeps golden files small)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--f16", action="store_true", help="also store PyTorch's f16 logits (needs f16 conv support)")
    ap.add_argument("--device", default="cpu", help="device for the reference forward passes")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    name = "mobilenet_v2" if a.model == "v2" else "mobilenet_v3_" + a.model
    ctor = getattr(torchvision.models, name)
    model = ctor(weights=None, width_mult=a.width, num_classes=a.classes).eval()
    randomise(model, gen)
    calibrate(model, gen, a.batch, a.size)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=gen)
    sens = input_sensitivity(model, x)
    if sens < 0.1:
        sys.exit("export_mobilenet: the logits barely depend on the input (%.3g of their range against a zero input): "
                 "such a golden cannot catch a wrong early layer" % sens)

    # f32 reference with TF32 off so a GPU reference is true f32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    with torch.inference_mode():
        logits = model.to(dev)(x.to(dev)).float().cpu()
        ref64 = model.double()(x.double().to(dev)).cpu()
        model.float()
        f16 = None
        if a.f16:  # on a copy: casting the model itself would round the weights written below
            f16 = copy.deepcopy(model).half()(x.half().to(dev)).float().cpu()
    err = ((logits.double() - ref64).abs().max() / ref64.abs().max()).item()
    top2 = logits.topk(2, dim=1).values
    margin = ((top2[:, 0] - top2[:, 1]) / logits.abs().amax(dim=1)).min().item()

    model.float()
    tensors = [(k, v.cpu()) for k, v in model.state_dict().items()]
    tensors += [("input", x), ("logits", logits)]
    if f16 is not None:
        tensors.append(("logits_f16", f16))
    meta = dict(model=a.model, width=a.width, classes=a.classes, batch=a.batch, size=a.size, seed=a.seed, torch=torch.__version__,
                torchvision=torchvision.__version__, f32_vs_f64_rel_err="%.3g" % err, top1_margin_rel="%.4f" % margin,
                input_sensitivity="%.3g" % sens)
    write_safetensors(a.out, tensors, meta)

    # self-check: a fresh model loaded from the file reproduces the stored logits exactly
    back = read_safetensors(a.out)
    fresh = ctor(weights=None, width_mult=a.width, num_classes=a.classes).eval()
    fresh.load_state_dict({k: back[k] for k in fresh.state_dict()})
    with torch.inference_mode():
        again = fresh.to(dev)(back["input"].to(dev)).float().cpu()
    if not torch.equal(again, back["logits"]):
        sys.exit("export_mobilenet: the written file does not reproduce its logits (max diff %g)"
                 % (again - back["logits"]).abs().max().item())
    nparam = sum(v.numel() for k, v in model.state_dict().items())
    print("wrote %s: %s width %g, %d params, input %s, f32 vs f64 rel err %.2g, top-1 margin %.3f, "
          "input sensitivity %.3g%s" % (a.out, name, a.width, nparam, list(x.shape), err, margin, sens,
                  "" if f16 is None else ", f16 vs f32 rel err %.2g" % ((f16 - logits).abs().max() / logits.abs().max())))
    if margin < 0.03:
        print("warning: top-1 margin %.3f is small; f16 top-1 checks may be fragile (try another --seed)" % margin,
              file=sys.stderr)


if __name__ == "__main__":
    main()
