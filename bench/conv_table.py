#!/usr/bin/env python3
"""conv_table.py — joins the LAYER lines of bench/conv_bench.c (side=gcr) and
bench/conv_bench_torch.py (side=cudnn) into the per-layer tables of issue 11: one markdown table per
(net, dtype, layout, batch) with gcr's and cuDNN's µs, the ratio gcr/cuDNN, gcr's TFLOP/s against the
dtype's tensor-core peak, GB/s against the memory bandwidth for the layers the roofline calls
memory-bound (the depthwise convs, the small 1x1s), each side's share of its roofline floor, the
count-weighted time per forward and the geometric mean of the conv layers' ratios. A layer slower than
--slow x cuDNN is marked; the summary (printed last, also at the end of the markdown) says per
block whether the targets hold (every conv layer <= --slow, geomean <= --target). Head ops (global
pool, classifier) are listed but stay out of the geomean and the targets, which are about convs.
A layer measured several times (LAYER lines from several runs) keeps its best time.

usage: conv_table.py LOG [LOG ...] [-o OUT.md] [--peak-f16 989] [--peak-tf32 494.7] [--peak-f32 66.9]
                     [--bw 3350] [--slow 1.1] [--target 0.9]
(peaks in TFLOP/s, bandwidth in GB/s; defaults: H100 SXM dense tensor-core f16/bf16 and TF32, FP32
FMA, HBM3. Without -o the markdown goes to stdout; with it only the summary does.)
"""
import argparse
import math
import sys

CONV_KINDS = ("conv", "dw")


def parse_logs(paths):
    """({(net, dtype, layout, batch): {name: row}}, [names in order per block], header lines).
    row: kind, count, flops, bytes and us per side (None: failed or absent)."""
    blocks, order, heads = {}, {}, []
    for path in paths:
        with open(path, errors="replace") as f:
            first = True
            for line in f:
                line = line.rstrip("\n")
                if first and line.strip():
                    heads.append(f"{path}: {line.strip()}")
                    first = False
                if line.startswith("SHAPES"):
                    heads.append(f"{path}: {line}")
                if not line.startswith("LAYER "):
                    continue
                kv = dict(p.split("=", 1) for p in line.split()[1:] if "=" in p)
                try:
                    key = (kv["net"], kv["dtype"], kv["layout"], int(kv["batch"]))
                    side, name = kv["side"], kv["name"]
                except (KeyError, ValueError):
                    print(f"conv_table: {path}: skipping malformed line: {line}", file=sys.stderr)
                    continue
                b = blocks.setdefault(key, {})
                if name not in b:
                    b[name] = {"kind": kv.get("kind", "conv"), "count": int(kv.get("count", 1)), "flops": None,
                               "bytes": None, "us": {}}
                    order.setdefault(key, []).append(name)
                row = b[name]
                try:
                    us = float(kv.get("us", "fail"))
                except ValueError:
                    us = None
                if us is not None and (us <= 0 or math.isnan(us)):
                    us = None
                old = row["us"].get(side)
                row["us"][side] = us if old is None else old if us is None else min(old, us)
                for k in ("flops", "bytes"):
                    if row[k] is None and kv.get(k) not in (None, ""):
                        row[k] = float(kv[k])
    return blocks, order, heads


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def peak_of(dtype, a):
    return {"f16": a.peak_f16, "bf16": a.peak_f16, "tf32": a.peak_tf32, "f32": a.peak_f32}.get(dtype, a.peak_f16)


def roof_share(row, us, peak, bw):
    """the roofline floor (max of compute and traffic time at the peaks) over the measured µs"""
    if us is None or row["flops"] is None or row["bytes"] is None:
        return None
    floor = max(row["flops"] / (peak * 1e6), row["bytes"] / (bw * 1e3))
    return 100.0 * floor / us


def block_table(key, names, rows, a):
    """markdown lines of one block and its summary dict"""
    net, dtype, layout, batch = key
    peak = peak_of(dtype, a)
    ridge = peak * 1e12 / (a.bw * 1e9)  # FLOP per byte where the roofline turns
    out = [f"### {net} {dtype} {layout} batch {batch}", "",
           f"peak {peak:g} TFLOP/s, {a.bw:g} GB/s (ridge {ridge:.0f} FLOP/byte); "
           f"**bold**: a conv gcr runs slower than {a.slow:g}x cuDNN", "",
           "| layer | kind | × | gcr µs | cuDNN µs | gcr/cuDNN | gcr TFLOP/s | % peak | gcr GB/s | % BW | bound "
           "| gcr % roof | cuDNN % roof |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios, slow, missing = [], [], []
    tot = {"conv": [0.0, 0.0], "head": [0.0, 0.0]}
    for name in names:
        r = rows[name]
        g, c = r["us"].get("gcr"), r["us"].get("cudnn")
        ratio = g / c if g is not None and c is not None else None
        is_conv = r["kind"] in CONV_KINDS
        if is_conv:
            if ratio is None:
                missing.append(name)
            else:
                ratios.append((name, ratio))
                if ratio > a.slow:
                    slow.append((name, ratio))
        if g is not None and c is not None:
            t = tot["conv" if is_conv else "head"]
            t[0] += g * r["count"]
            t[1] += c * r["count"]
        tf = r["flops"] / g * 1e-6 if g is not None and r["flops"] is not None else None
        gbs = r["bytes"] / g * 1e-3 if g is not None and r["bytes"] is not None else None
        mem = r["flops"] is not None and r["bytes"] and r["flops"] / r["bytes"] < ridge
        rs = fmt(ratio, ".2f")
        if is_conv and ratio is not None and ratio > a.slow:
            rs = f"**{rs}**"
        out.append("| " + " | ".join([
            name, r["kind"], str(r["count"]),
            "fail" if g is None and "gcr" in r["us"] else fmt(g, ".2f"),
            "fail" if c is None and "cudnn" in r["us"] else fmt(c, ".2f"),
            rs, fmt(tf, ".2f"), fmt(None if tf is None else 100 * tf / peak, ".1f"),
            fmt(gbs, ".0f") if mem else "", fmt(None if gbs is None else 100 * gbs / a.bw, ".1f") if mem else "",
            "memory" if mem else "compute",
            fmt(roof_share(r, g, peak, a.bw), ".0f"), fmt(roof_share(r, c, peak, a.bw), ".0f")]) + " |")
    gm = math.exp(sum(math.log(x) for _, x in ratios) / len(ratios)) if ratios else None
    cg, cc = tot["conv"]
    out.append("")
    out.append(f"- convs per forward (count-weighted, layers measured on both sides): gcr {cg:.1f} µs, "
               f"cuDNN {cc:.1f} µs, ratio {fmt(cg / cc if cc else None, '.3f')}")
    if tot["head"][1]:
        hg, hc = tot["head"]
        out.append(f"- head (pool, classifier): gcr {hg:.1f} µs, cuDNN/cuBLAS {hc:.1f} µs, ratio {hg / hc:.3f}")
    out.append(f"- geometric mean of gcr/cuDNN over {len(ratios)} conv layers: {fmt(gm, '.3f')}")
    out.append(f"- layers over {a.slow:g}x: " + (", ".join(f"{n} {x:.2f}" for n, x in slow) if slow else "none"))
    if missing:
        out.append(f"- not measured on both sides: {', '.join(missing)}")
    out.append("")
    worst = max(ratios, key=lambda t: t[1]) if ratios else None
    summary = {"key": key, "n": len(ratios), "gm": gm, "total": cg / cc if cc else None, "slow": len(slow),
               "worst": worst, "missing": len(missing),
               "met": gm is not None and not missing and not slow and gm <= a.target, "ratios": ratios}
    return out, summary


def summary_lines(sums, a):
    out = [f"## Summary: targets every conv layer <= {a.slow:g}x cuDNN, geomean <= {a.target:g}x", "",
           "| net | dtype | layout | batch | conv layers | geomean gcr/cuDNN | per-forward convs gcr/cuDNN "
           f"| layers > {a.slow:g}x | worst | targets met |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for s in sums:
        net, dtype, layout, batch = s["key"]
        worst = f"{s['worst'][0]} {s['worst'][1]:.2f}" if s["worst"] else "—"
        met = "yes" if s["met"] else "no" + (f" ({s['missing']} missing)" if s["missing"] else "")
        out.append(f"| {net} | {dtype} | {layout} | {batch} | {s['n']} | {fmt(s['gm'], '.3f')} | "
                   f"{fmt(s['total'], '.3f')} | {s['slow']} | {worst} | {met} |")
    allr = [x for s in sums for _, x in s["ratios"]]
    if allr:
        gm = math.exp(sum(math.log(x) for x in allr) / len(allr))
        over = sum(x > a.slow for x in allr)
        out += ["", f"All blocks: {len(allr)} layer measurements, geomean gcr/cuDNN {gm:.3f}, "
                    f"{over} over {a.slow:g}x; blocks meeting both targets: {sum(s['met'] for s in sums)} of {len(sums)}"]
    return out


def main(argv):
    ap = argparse.ArgumentParser(description="per-layer gcr vs cuDNN tables from LAYER lines")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("-o", dest="out")
    ap.add_argument("--peak-f16", type=float, default=989.0, help="f16/bf16 dense tensor-core TFLOP/s")
    ap.add_argument("--peak-tf32", type=float, default=494.7, help="TF32 dense tensor-core TFLOP/s")
    ap.add_argument("--peak-f32", type=float, default=66.9, help="FP32 (FMA) TFLOP/s")
    ap.add_argument("--bw", type=float, default=3350.0, help="memory bandwidth, GB/s")
    ap.add_argument("--slow", type=float, default=1.1, help="per-layer limit of gcr/cuDNN")
    ap.add_argument("--target", type=float, default=0.9, help="geomean target of gcr/cuDNN")
    a = ap.parse_args(argv)
    blocks, order, heads = parse_logs(a.logs)
    if not blocks:
        print("conv_table: no LAYER lines in " + ", ".join(a.logs), file=sys.stderr)
        return 1
    dorder = {"f16": 0, "bf16": 1, "tf32": 2, "f32": 3}
    nets = []
    for k in blocks:
        if k[0] not in nets:
            nets.append(k[0])
    keys = sorted(blocks, key=lambda k: (nets.index(k[0]), dorder.get(k[1], 9), k[1], k[2], k[3]))
    md = ["# gcr conv kernels against cuDNN, per layer (issue 11)", "",
          "gcr: bench/conv_bench.c; cuDNN: bench/conv_bench_torch.py (F.conv2d, cudnn.benchmark); both "
          "launch each layer 20 times in one CUDA Graph and keep the best of 3 rounds of 10 replays. "
          "TFLOP/s and GB/s count the compulsory work (x, w, bias, output once); % roof is the "
          "roofline floor over the measured time.", ""]
    md += [f"- {h}" for h in heads] + [""]
    sums = []
    for k in keys:
        lines, s = block_table(k, order[k], blocks[k], a)
        md += lines
        sums.append(s)
    summ = summary_lines(sums, a)
    md += summ
    text = "\n".join(md) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        print("\n".join(summ))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
