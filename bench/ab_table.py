#!/usr/bin/env python3
"""ab_table.py — per-layer A/B of gcr's own kernels: the LAYER lines of several bench/conv_bench.c runs
(e.g. the heuristic's picks against conv_bench force=NAME, or two builds) side by side, one markdown
table per (net, dtype, layout, batch) with each run's µs, each run's ratio to the first, the kernel
each run timed (conv_bench's kernel=, without its gcr_ prefix and dtype suffix; one name where all
runs agree) and the count-weighted time per forward. Runs come from separate files, or from one
file where each run starts with a line "== <command>" (bench/gpu_all.sh's ab stage writes ab.txt so).

usage: ab_table.py LOG [LOG ...]     (a run's label: its "== " line, else its file name)
"""
import sys


def short(kernel):
    """gcr_dense_tc128w_f16 -> dense_tc128w; "" or "-" -> """""
    if kernel in ("", "-"):
        return ""
    k = kernel[4:] if kernel.startswith("gcr_") else kernel
    head, _, tail = k.rpartition("_")
    return head if head and tail in ("f32", "f16", "bf16", "tf32") else k


def runs_of(paths):
    """[(label, {(net, dtype, layout, batch): {name: (us or None, count, kernel)}}, {block: [names]})]"""
    runs = []
    for path in paths:
        cur = None
        with open(path, errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("== ") or cur is None:
                    cur = (line[3:] if line.startswith("== ") else path, {}, {})
                    runs.append(cur)
                    if line.startswith("== "):
                        continue
                if not line.startswith("LAYER "):
                    continue
                kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
                block = (kv.get("net"), kv.get("dtype"), kv.get("layout"), int(kv.get("batch", 0)))
                us = None if kv.get("us") in (None, "fail") else float(kv["us"])
                cur[1].setdefault(block, {})[kv.get("name")] = (us, int(kv.get("count", 1)), short(kv.get("kernel", "")))
                names = cur[2].setdefault(block, [])
                if kv.get("name") not in names:
                    names.append(kv.get("name"))
    return [r for r in runs if r[1]]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    runs = runs_of(argv[1:])
    if len(runs) < 2:
        print("ab_table.py: fewer than two runs with LAYER lines")
        return 1
    blocks = []
    for r in runs:
        for b in r[1]:
            if b not in blocks:
                blocks.append(b)
    print("runs:")
    for i, r in enumerate(runs):
        print(f"- {chr(65 + i)}: `{r[0]}`")
    for b in blocks:
        have = [r for r in runs if b in r[1]]
        if len(have) < 2:
            continue
        print(f"\n### {b[0]} {b[1]} {b[2]} batch {b[3]}\n")
        heads = [chr(65 + runs.index(r)) for r in have]
        print("| layer | × | " + " | ".join(f"{h} µs" for h in heads) + " | " +
              " | ".join(f"{h}/{heads[0]}" for h in heads[1:]) + " | kernels |")
        print("|---|---|" + "---|" * (2 * len(heads) - 1) + "---|")
        names = have[0][2][b] + [n for r in have[1:] for n in r[2][b] if n not in have[0][2][b]]
        tot = [0.0] * len(have)
        for n in names:
            vals = [r[1][b].get(n, (None, 1, "")) for r in have]
            count = next((c for _, c, _ in vals if c), 1)
            for i, (us, c, _) in enumerate(vals):
                tot[i] += (us or 0.0) * c
            cells = ["fail" if us is None else f"{us:.2f}" for us, _, _ in vals]
            base = vals[0][0]
            ratios = ["" if us is None or not base else f"{us / base:.2f}" for us, _, _ in vals[1:]]
            ks = [k or "?" for _, _, k in vals]
            kern = "" if not any(k for _, _, k in vals) else ks[0] if len(set(ks)) == 1 else " / ".join(ks)
            print(f"| {n} | {count} | " + " | ".join(cells) + " | " + " | ".join(ratios) + f" | {kern} |")
        print(f"| per forward | | " + " | ".join(f"{t:.1f}" for t in tot) + " | " +
              " | ".join(f"{t / tot[0]:.3f}" if tot[0] else "" for t in tot[1:]) + " | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
