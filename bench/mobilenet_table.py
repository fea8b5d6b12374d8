#!/usr/bin/env python3
"""mobilenet_table.py — the markdown table of bench/mobilenet.sh from its JSON lines (gcr, PyTorch and
cold-start records; "math" pairs FP32 with FP32 and TF32 with TF32), for MobileNet-v3-Large or
ResNet-50 as the lines' "model" says. Several files merge into one
table, so gcr and PyTorch measured in separate device calls on the same GPU can share a page.

usage: mobilenet_table.py OUT.md GPU COMMAND LAYOUT RUN.jsonl [RUN.jsonl ...]   (also prints the table)
"""
import json, sys, datetime
md, gpu, cmd, layout = sys.argv[1:5]
rows = [json.loads(l) for jl in sys.argv[5:] for l in open(jl) if l.strip()]
bases = [("gcr-eager", "gcr eager"), ("gcr-fused", "gcr captured+fused (no CUDA Graph)"),
         ("gcr-graph", "gcr captured+graph replay"), ("torch-eager", "PyTorch eager"),
         ("torch-eager+cudagraph", "PyTorch eager + CUDA Graph"),
         ("torch-compile-ro", "torch.compile reduce-overhead")]
# engine suffixes, in table order: none = the engine's default math (gcr: FP32, PyTorch: TF32 convs)
VARIANTS = ["", "-fp32", "-tf32"]
perf = [r for r in rows if r["engine"] in {b + v for b, _ in bases for v in VARIANTS}]
for r in perf:  # lines from before the "math" field: derive it from the engine name
    r.setdefault("math", "f16" if r["dtype"] == "f16" else "tf32" if r["engine"].endswith("-tf32") else
                 "fp32" if r["engine"].startswith("gcr-") or r["engine"].endswith("-fp32") else "tf32-conv")

def pair(m):  # rows compared with each other: FP32 with FP32, any TF32 with any TF32
    return "tf32" if m.startswith("tf32") else m

def math_label(engine, m):
    if m in ("fp32", "f16"):
        return {"fp32": "FP32", "f16": "f16"}[m]
    if engine.startswith("gcr-"):
        return "TF32 1x1 convs+GEMMs (GCR_TF32=1)"
    return {"tf32-conv": "TF32 convs (PyTorch default)", "tf32": "TF32 convs+matmuls"}.get(m, m)

def rows_of(engine, dt):  # {batch: JSON line} of one engine and dtype (one math)
    return {r["batch"]: r for r in perf if r["engine"] == engine and r["dtype"] == dt}

def math_of(sel):
    return next(iter(sel.values()))["math"]

def series(base, dt, p):
    """(engine, rows_of) of the first variant of base with dtype dt whose math pairs with p"""
    for v in VARIANTS:
        sel = rows_of(base + v, dt)
        if sel and pair(math_of(sel)) == p:
            return base + v, sel
    return None, {}

def ratios(ref, sel):  # reference ms / row ms per batch: >1 = the row is faster
    return ["%.2fx" % (ref[b]["ms"] / sel[b]["ms"]) if b in ref and b in sel else "" for b in batches]

batches = sorted({r["batch"] for r in perf})
dtypes = [d for d in ("f32", "f16") if any(r["dtype"] == d for r in perf)]
# the lines' "model" field -> the title's name (lines of other models would not belong in one table)
MODEL_NAMES = {"large": "MobileNet-v3-Large", "resnet50": "ResNet-50", "mobilenet_v2": "MobileNet-v2"}
models = sorted({r.get("model", "large") for r in perf})
out = ["# %s: gcr vs PyTorch" % " + ".join(MODEL_NAMES.get(m, m) for m in models or ["large"]), "",
       "- GPU: %s" % gpu, "- date: %s" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
       "- command: `%s`" % cmd,
       "- layout %s, 224x224, random init; ms = median per forward (back-to-back forwards, input on the device)" % layout]
if "f32" in dtypes:
    out += ["- f32 math, per row: **FP32** = exact IEEE float32 (gcr's default; PyTorch with "
            "`torch.backends.cudnn.allow_tf32` and `torch.backends.cuda.matmul.allow_tf32` False, engines `torch-*-fp32`); "
            "**TF32 convs (PyTorch default)** = PyTorch's default flags: convolutions on TF32 tensor cores, matmuls FP32; "
            "**TF32 1x1 convs+GEMMs (GCR_TF32=1)** = gcr's TF32 knob: 1x1 convs and GEMMs on the TF32 tensor-core tile "
            "where it is picked, depthwise, stem and pointwise in FP32 (engines `gcr-*-tf32`)",
            "- `bN vs RO`: torch.compile reduce-overhead's ms of the same dtype and math / this row's ms (>1: this row is "
            "faster): FP32 rows against the strict-FP32 torch.compile, TF32 rows against PyTorch's default math"]
out.append("")
if perf:
    out += ["| engine | dtype | math | " + " | ".join("b%d ms" % b for b in batches) + " | kernels/fwd (b%d) | " % batches[0] +
            " | ".join("b%d vs RO" % b for b in batches) + " |", "|" + "---|" * (2 * len(batches) + 4)]
head = []  # the headline: gcr's replay against both PyTorch baselines, same math
for dt in dtypes:
    for base, name in bases:
        for v in VARIANTS:
            sel = rows_of(base + v, dt)
            if not sel:
                continue
            m = math_of(sel)
            ro_engine, ro = series("torch-compile-ro", dt, pair(m))
            k = sel[batches[0]].get("kernels") if batches[0] in sel else None
            out.append("| %s | %s | %s | %s | %s | %s |" % (
                name, dt, math_label(base + v, m), " | ".join("%.3f" % sel[b]["ms"] if b in sel else "" for b in batches),
                "" if k is None else k, " | ".join(["ref"] * len(batches) if ro_engine == base + v else ratios(ro, sel))))
            if base != "gcr-graph":
                continue
            for tbase, tname in bases[4:]:
                te, tsel = series(tbase, dt, pair(m))
                if tsel:
                    head.append("| %s | %s | %s | %s | %s |" % (dt, math_label(base + v, m), tname,
                                                                 math_label(te, math_of(tsel)), " | ".join(ratios(tsel, sel))))
if head:
    out += ["", "## gcr captured+graph replay against PyTorch, same math (PyTorch ms / gcr ms; >1: gcr faster)", "",
            "| dtype | gcr math | against | PyTorch math | " + " | ".join("b%d" % b for b in batches) + " |",
            "|" + "---|" * (len(batches) + 4)] + head
out.append("")
cold = [r for r in rows if r["engine"] == "gcr-coldstart"]
if cold:
    out += ["## Cold start (batch 1, process start to the first replayed result)", "",
            "| dtype | kernel cache | first replayed result s | whole process s | compile s |", "|---|---|---|---|---|"]
    for r in cold:
        out.append("| %s | %s | %s | %s | %s |" % (r["dtype"], r["cache"], r["first_replay_at_s"], r["process_s"], r["compile_s"]))
ros = [r for r in perf if r["engine"].startswith("torch-compile-ro") and r.get("compile_s") is not None]
if ros:
    out += ["", "torch.compile reduce-overhead compile (first 3 calls) in this run: " +
            ", ".join("%s %s b%d %.1f s" % (r["dtype"], r["math"], r["batch"], r["compile_s"]) for r in ros)]
open(md, "w").write("\n".join(out) + "\n")
print("\n".join(out))
