#!/usr/bin/env python3
"""export_resnet.py — golden files for gcr's ResNet parity (samples/resnet.h): builds torchvision's
Bottleneck ResNet at a reduced base width with a fixed seed (random init, no downloads), makes every
parameter informative (export_mobilenet.randomise: random BN running stats and affine, the fc at
nn.Linear's default range), runs one input batch in eval mode and writes one safetensors file
holding:
  <state_dict names>  the weights, f32 (conv1.weight, bn1.running_mean, layer1.0.downsample.0.weight,
                      fc.bias, ...; num_batches_tracked stays I64 [])
  input               [N,3,H,W] f32
  logits              [N,classes] f32, PyTorch's f32 forward (TF32 off)
  logits_f16          [N,classes] f32, PyTorch's forward with model and input in f16 (--f16)
and __metadata__ with the configuration. The file is read by samples/resnet50.c
(--weights/--input/--check) and test/test_resnet.c.

The reduced model is torchvision's own ResNet class with every stage's width scaled: conv1 has
`width` channels and the stages have planes width, 2 width, 4 width, 8 width (torchvision: 64, 128,
256, 512), built with torchvision's Bottleneck and _make_layer, so its state_dict names are
torchvision's and, at width 64 and layers 3,4,6,3, it *is* torchvision.models.resnet50 (--selftest
checks that: same keys, shapes and outputs for the same weights).

The safetensors writer and reader are export_mobilenet.py's (imported, not copied).

Usage (the committed golden, see tools/README.md):
    python3 tools/export_resnet.py --selftest
    python3 tools/export_resnet.py --width 8 --layers 3,4,6,3 --classes 10 --batch 2 --size 64 --f16 --device cuda \\
            --out test/data/resnet50_w8.safetensors
"""
import argparse
import copy
import os
import sys

import torch
import torchvision
from torchvision.models.resnet import Bottleneck, ResNet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_mobilenet import randomise, read_safetensors, write_safetensors  # noqa: E402


class ResNetW(ResNet):
    """torchvision's ResNet with base width `width` instead of 64: only __init__ differs (it sets
    what ResNet.__init__ sets, with the widths scaled); _make_layer, forward and the module names
    are ResNet's own."""

    def __init__(self, width=64, layers=(3, 4, 6, 3), num_classes=1000):
        torch.nn.Module.__init__(self)
        self._norm_layer = torch.nn.BatchNorm2d
        self.inplanes = width
        self.dilation = 1
        self.groups = 1
        self.base_width = 64  # Bottleneck's own knob: its 3x3 conv has `planes` channels
        self.conv1 = torch.nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(width)
        self.relu = torch.nn.ReLU(inplace=True)
        self.maxpool = torch.nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(Bottleneck, width, layers[0])
        self.layer2 = self._make_layer(Bottleneck, 2 * width, layers[1], stride=2)
        self.layer3 = self._make_layer(Bottleneck, 4 * width, layers[2], stride=2)
        self.layer4 = self._make_layer(Bottleneck, 8 * width, layers[3], stride=2)
        self.avgpool = torch.nn.AdaptiveAvgPool2d((1, 1))
        self.fc = torch.nn.Linear(8 * width * Bottleneck.expansion, num_classes)
        for m in self.modules():  # torchvision's init (ResNet.__init__, zero_init_residual=False)
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, torch.nn.BatchNorm2d):
                torch.nn.init.constant_(m.weight, 1)
                torch.nn.init.constant_(m.bias, 0)


def selftest():
    """At width 64, layers 3,4,6,3 ResNetW is torchvision.models.resnet50: same state_dict keys in
    the same order with the same shapes, and the same logits for the same weights and input."""
    torch.manual_seed(0)
    ours = ResNetW(64, (3, 4, 6, 3), 1000).eval()
    ref = torchvision.models.resnet50(weights=None).eval()
    a, b = ours.state_dict(), ref.state_dict()
    if list(a) != list(b):
        sys.exit("selftest: state_dict keys differ: only ours %s, only torchvision's %s"
                 % (sorted(set(a) - set(b))[:5], sorted(set(b) - set(a))[:5]))
    bad = [k for k in a if a[k].shape != b[k].shape]
    if bad:
        sys.exit("selftest: shapes differ for %s" % bad[:5])
    randomise(ref, torch.Generator().manual_seed(1))
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 96, 96, generator=torch.Generator().manual_seed(2))
    with torch.inference_mode():
        ya, yb = ours(x), ref(x)
    if not torch.equal(ya, yb):
        sys.exit("selftest: logits differ (max %g)" % (ya - yb).abs().max().item())
    print("selftest: ResNetW(64, [3,4,6,3]) is torchvision resnet50: %d state_dict entries, same shapes, same "
          "logits" % len(a))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--width", type=int, default=8, help="base width (torchvision's resnet50: 64)")
    ap.add_argument("--layers", default="3,4,6,3", help="Bottleneck blocks per stage (3,4,6,3: ResNet-50)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=64, help="input height = width (>= 32)")
    ap.add_argument("--classes", type=int, default=10, help="num_classes (fewer keeps golden files small)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--f16", action="store_true", help="also store PyTorch's f16 logits (needs f16 conv support)")
    ap.add_argument("--device", default="cpu", help="device for the reference forward passes")
    ap.add_argument("--out", default="test/data/resnet50_w8.safetensors")
    ap.add_argument("--selftest", action="store_true", help="check ResNetW(64, 3,4,6,3) against torchvision's resnet50 "
                    "and exit")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return
    layers = tuple(int(v) for v in a.layers.split(","))
    if len(layers) != 4 or min(layers) < 1:
        sys.exit("export_resnet: --layers wants four positive counts, e.g. 3,4,6,3")

    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed + 1)
    model = ResNetW(a.width, layers, a.classes).eval()
    randomise(model, gen)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=gen)

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
    f16_err = None if f16 is None else ((f16.double() - ref64).abs().max() / ref64.abs().max()).item()
    top2 = logits.topk(2, dim=1).values
    margin = ((top2[:, 0] - top2[:, 1]) / logits.abs().amax(dim=1)).min().item()

    tensors = [(k, v.cpu()) for k, v in model.state_dict().items()]
    tensors += [("input", x), ("logits", logits)]
    if f16 is not None:
        tensors.append(("logits_f16", f16))
    meta = dict(model="resnet", width=a.width, layers=",".join(map(str, layers)), classes=a.classes, batch=a.batch,
                size=a.size, seed=a.seed, device=a.device, torch=torch.__version__,
                torchvision=torchvision.__version__, f32_vs_f64_rel_err="%.3g" % err, top1_margin_rel="%.4f" % margin)
    if f16_err is not None:
        meta["f16_vs_f64_rel_err"] = "%.3g" % f16_err
    write_safetensors(a.out, tensors, meta)

    # self-check: a fresh model loaded from the file reproduces the stored logits exactly
    back = read_safetensors(a.out)
    fresh = ResNetW(a.width, layers, a.classes).eval()
    fresh.load_state_dict({k: back[k] for k in fresh.state_dict()})
    with torch.inference_mode():
        again = fresh.to(dev)(back["input"].to(dev)).float().cpu()
    if not torch.equal(again, back["logits"]):
        sys.exit("export_resnet: the written file does not reproduce its logits (max diff %g)"
                 % (again - back["logits"]).abs().max().item())
    nparam = sum(v.numel() for v in model.state_dict().values())
    size = os.path.getsize(a.out)
    print("wrote %s (%.2f MB): resnet width %d layers %s, %d params, input %s, logits max |%.3g|, f32 vs f64 rel err "
          "%.2g, top-1 margin %.3f%s" % (a.out, size / 1e6, a.width, a.layers, nparam, list(x.shape),
                                        logits.abs().max().item(), err, margin,
                                        "" if f16_err is None else ", f16 vs f64 rel err %.2g" % f16_err))
    if size > 3e6:
        print("warning: %.2f MB is more than the ~3 MB a committed golden should take (smaller --width)" % (size / 1e6),
              file=sys.stderr)
    if margin < 0.03:
        print("warning: top-1 margin %.3f is small; f16 top-1 checks may be fragile (try another --seed)" % margin,
              file=sys.stderr)


if __name__ == "__main__":
    main()
