#!/usr/bin/env python3
"""profile_top.py — a summary of a gcr GCR_PROFILE trace: the top N kernels by total time and the time
per category (1x1 conv/GEMM, depthwise, stem/direct conv, pointwise/reduce/pool, movement), as
markdown tables (readable in a terminal, pasted as is into bench/results).

The trace (replay/profile.c) is Chrome-trace JSON, {"traceEvents": [{"name", "ph": "X", "ts", "dur"}]},
µs, one event per kernel launch of every profiled replay, in launch order. Names are the IR's kernel
names, "k<index>_<anchor op>+<fused ops>" (capture/kernels.c), unique within a forward; so a forward
starts wherever the index drops, and the first --skip forwards (the first pass loads modules and
warms caches) are left out. A conv2d anchor's name does not say which convolution it is: give
--dump (a GCR_DUMP=fused file, or its GCR_DUMP_DIR) to classify it from its weight shape and groups
and to describe each kernel's problem. Names carrying lib/cuda's function names (gcr_dense_tc*,
gcr_dense_fma*/mma*, gcr_gemv_*, gcr_dw_*, gcr_direct_*, gcr_pw_*, ...) are classified by those
directly; in a trace of such names alone a forward starts at each repeat of the first name.

usage: profile_top.py TRACE.json [--dump FILE|DIR] [--top 15] [--skip 1] [--title TEXT] [--replay-ms MS]
"""
import argparse
import glob
import json
import os
import re
import sys
from collections import OrderedDict

GEMM, DW, STEM, CONV, PW, MOVE, OTHER = ("1x1 conv / GEMM", "depthwise conv", "stem / direct conv",
                                         "conv2d (kind unknown: no --dump)", "pointwise / reduce / pool",
                                         "movement", "other")
# lib/ops.def's movement ops, for kernels named after their anchor (or, unanchored, their first op);
# every other op that is not a conv or GEMM is pointwise, a reduction or a pool
MOVEMENT = {"contiguous", "concat", "permute", "slice", "reshape"}
# lib/cuda function names (lib/cuda/conv.c), should a trace carry them
CUDA_FN = [(re.compile(r"dense_(tc|fma|mma)|gemv"), GEMM), (re.compile(r"(?<![a-z])dw[vcs]?(?![a-z])"), DW),
           (re.compile(r"direct"), STEM), (re.compile(r"gcr_(copy|transpose)"), MOVE),
           (re.compile(r"gcr_(pw|reduce|pool|gap|to_f32)"), PW)]
KNAME = re.compile(r"^k(\d+)_([a-z0-9_]+)")


def load_events(path):
    with open(path) as f:
        d = json.load(f)
    ev = d.get("traceEvents", []) if isinstance(d, dict) else d
    return [e for e in ev if e.get("ph", "X") == "X" and "dur" in e]


def split_forwards(ev):
    """Lists of events, one per forward: a new forward starts where the kernel index does not
    increase (or, in a trace of names without an index, at each repeat of the first name)."""
    fw, last = [], None
    indexed = all(KNAME.match(e["name"]) for e in ev)
    for e in ev:
        if indexed:
            i = int(KNAME.match(e["name"]).group(1))
            new = last is None or i <= last
            last = i
        else:
            new = e["name"] == ev[0]["name"]
        if new:
            fw.append([])
        fw[-1].append(e)
    return fw


def parse_dump(path):
    """{kernel name: (category, description)} from a GCR_DUMP=fused text (gcr_ir_describe in
    capture/text.c); with a directory, the newest *_fused.txt in it."""
    if os.path.isdir(path):
        # g<k>_v<n>_fused.txt: the k-th variant dumped on the context, so the largest k is the newest
        files = sorted(glob.glob(os.path.join(path, "g*_fused.txt")),
                       key=lambda f: int(re.sub(r"\D", "", os.path.basename(f).split("_")[0]) or 0))
        if not files:
            sys.exit("profile_top: no *_fused.txt in %s (was GCR_DUMP=fused set?)" % path)
        path = files[-1]
    shapes, nodes, out = {}, {}, {}
    val = re.compile(r"v(\d+):\w+ \w+\[([\d,]*)\]")
    node = re.compile(r"^\s+n(\d+)(?: \(dead\))? (\w+)\(([^)]*)\)(.*) -> v(\d+):")
    kern = re.compile(r"^\s+(?:eager|fused) (k\d+_\S+) nodes:((?: n\d+)+)")
    for line in open(path):
        m = node.match(line)
        if m:
            nodes[int(m.group(1))] = (m.group(2), [int(v[1:]) for v in m.group(3).split(", ") if v.startswith("v")],
                                      m.group(4), int(m.group(5)))
        for v, dims in val.findall(line):  # value definitions: the const list and every node's result
            shapes.setdefault(int(v), [int(x) for x in dims.split(",") if x])
        m = kern.match(line)
        if m:
            anchor = KNAME.match(m.group(1)).group(2).split("+")[0]
            members = [int(n[1:]) for n in m.group(2).split()]
            a = next((n for n in members if nodes.get(n, ("",))[0] == anchor), members[0])
            out[m.group(1)] = describe(nodes.get(a), shapes)
    return out


def describe(nd, shapes):
    """(category, text) of a kernel's anchor node, e.g. (GEMM, "1x1 96->576 @7x7"), or None."""
    if nd is None:
        return None
    op, ins, params, res_v = nd
    if op == "conv2d" and len(ins) >= 2 and len(shapes.get(ins[1], [])) == 4:
        co, ci, kh, kw = shapes[ins[1]]
        g = int((re.search(r"groups=(\d+)", params) or [0, 1])[1])
        s = (re.search(r"stride=(\d+)", params) or [0, 1])[1]
        y = shapes.get(res_v, [])
        res = "%dx%d s%s" % (kh, kw, s)
        io = "%d->%d" % (ci * g, co)
        at = " @%dx%d" % tuple(y[2:4]) if len(y) == 4 else ""
        if g > 1:
            return DW, "dw %s %dch%s" % (res, co, at)
        if kh * kw == 1:
            return GEMM, "1x1 %s%s" % (io, at)
        return STEM, "%s %s%s" % (res, io, at)
    if op in ("linear", "matmul") and len(ins) >= 2:
        return GEMM, "%s %s by %s" % (op, *("x".join(map(str, shapes.get(v, []))) for v in ins[:2]))
    return None


def category(name):
    for rx, cat in CUDA_FN:
        if rx.search(name):
            return cat
    m = KNAME.match(name)
    anchor = (m.group(2) if m else name).split("+")[0]
    if anchor == "conv2d":
        return CONV
    if anchor in ("linear", "matmul"):
        return GEMM
    if anchor in MOVEMENT:
        return MOVE
    return PW if m else OTHER  # generated pointwise / reduction kernels, and the pools


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--dump", help="GCR_DUMP=fused file or GCR_DUMP_DIR, to tell the convolutions apart")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--skip", type=int, default=1, help="leading forwards left out (default 1: the first pass)")
    ap.add_argument("--title", default=None)
    ap.add_argument("--replay-ms", type=float, default=None,
                    help="the unprofiled replay's ms per forward, printed beside the sum of kernel times")
    a = ap.parse_args()

    fw = split_forwards(load_events(a.trace))
    skip = min(a.skip, len(fw) - 1) if len(fw) > 1 else 0
    kept = [e for f in fw[skip:] for e in f]
    if not kept:
        sys.exit("profile_top: no kernel events in %s" % a.trace)
    nfw = len(fw) - skip
    info = parse_dump(a.dump) if a.dump else {}

    per = OrderedDict()  # name -> [count, total µs], in launch order
    for e in kept:
        p = per.setdefault(e["name"], [0, 0.0])
        p[0] += 1
        p[1] += float(e["dur"])
    total = sum(p[1] for p in per.values())
    cat = {n: (info.get(n) or (category(n), ""))[0] for n in per}
    if a.title:
        print("### %s\n" % a.title)
    line = ("%s: %d forward(s) summed (first %d skipped), %d kernel launches per forward, %.1f µs per forward "
            "(sum of kernel times)" % (os.path.basename(a.trace), nfw, skip, round(len(kept) / nfw), total / nfw))
    if a.replay_ms:
        line += "; unprofiled replay %.1f µs per forward" % (1e3 * a.replay_ms)
    print(line + "\n")

    top = sorted(per.items(), key=lambda kv: -kv[1][1])[:a.top]
    what = bool(info)
    print("| # | kernel | category |%s count | total µs | %% of fwd | mean µs |" % (" problem |" if what else ""))
    print("|---|---|---|%s---|---|---|---|" % ("---|" if what else ""))
    for i, (n, (c, t)) in enumerate(top, 1):
        desc = " %s |" % (info.get(n) or ("", ""))[1] if what else ""
        print("| %d | %s | %s |%s %d | %.1f | %.1f | %.2f |" % (i, n, cat[n], desc, c, t, 100 * t / total, t / c))

    cats = OrderedDict()  # category -> [launches, total µs]
    for n, (c, t) in per.items():
        s = cats.setdefault(cat[n], [0, 0.0])
        s[0] += c
        s[1] += t
    print("\n| category | kernels per forward | µs per forward | % of fwd |\n|---|---|---|---|")
    for k, (c, t) in sorted(cats.items(), key=lambda kv: -kv[1][1]):
        print("| %s | %g | %.1f | %.1f |" % (k, round(c / nfw, 1), t / nfw, 100 * t / total))
    print()


if __name__ == "__main__":
    main()
