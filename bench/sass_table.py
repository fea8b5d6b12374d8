#!/usr/bin/env python3
"""sass_table.py — where one kernel's instructions and stalls go, from ncu's source page at SASS level
(bench/sass_profile.sh writes it: `ncu -i REPORT --page source --csv --print-source sass`).

Prints markdown: the kernel's totals (warp instructions executed, warp-stall samples), its regions
(runs of consecutive instructions executed the same number of times: straight-line code once a warp,
a loop body, a rarely taken branch) with their share of instructions and samples and top stall
reasons, and the instructions with the most samples. Region boundaries come from the counts alone, so
a loop shows as a run whose count is a multiple of the warps' (ncu gives no source lines for NVRTC
programs built without -lineinfo); read the region's first instruction to place it.

usage: sass_table.py SASS.csv [--regions 12] [--top 15] [--min-share 1.0]
"""
import argparse
import csv
import sys


def num(s):
    try:
        return float(s.replace(",", ""))
    except (ValueError, AttributeError):
        return 0.0


def load(path):
    """(kernel name, [instruction dicts]) of the first kernel in the CSV"""
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    name, head, body = "?", None, []
    for r in rows:
        if len(r) >= 2 and r[0] == "Kernel Name":
            if head is not None:
                break  # a second kernel: the first one's table is complete
            name = r[1]
        elif head is None and r and r[0] == "Address":
            head = r
        elif head is not None and len(r) == len(head):
            body.append(dict(zip(head, r)))
    return name, head or [], body


def stalls(ins, head, k=3):
    tot = {}
    for r in ins:
        for h in head:
            if h.startswith("stall_") and "Not Issued" not in h:
                tot[h[6:]] = tot.get(h[6:], 0.0) + num(r[h])
    top = sorted(tot.items(), key=lambda kv: -kv[1])[:k]
    return ", ".join(f"{s} {v:.0f}" for s, v in top if v > 0)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--regions", type=int, default=12, help="largest regions to list")
    ap.add_argument("--top", type=int, default=15, help="instructions with the most samples to list")
    ap.add_argument("--min-share", type=float, default=1.0, help="regions under this %% of both are left out")
    a = ap.parse_args(argv[1:])
    name, head, ins = load(a.csv)
    if not ins or "Instructions Executed" not in head:
        print(f"sass_table: no SASS rows with 'Instructions Executed' in {a.csv}", file=sys.stderr)
        return 1
    samp = "Warp Stall Sampling (All Samples)"
    tot_e = sum(num(r["Instructions Executed"]) for r in ins)
    tot_s = sum(num(r.get(samp, "0")) for r in ins)
    print(f"## {name}\n")
    print(f"{len(ins)} SASS instructions; {tot_e:,.0f} warp instructions executed; {tot_s:,.0f} stall samples; "
          f"top stalls: {stalls(ins, head)}\n")
    regions, i = [], 0
    while i < len(ins):
        e, j = num(ins[i]["Instructions Executed"]), i
        while j < len(ins) and num(ins[j]["Instructions Executed"]) == e:
            j += 1
        part = ins[i:j]
        regions.append((i, j, e, sum(num(r["Instructions Executed"]) for r in part),
                        sum(num(r.get(samp, "0")) for r in part), part))
        i = j
    print("| instructions | executed each | share of executed | share of samples | top stalls | first |")
    print("|---|---|---|---|---|---|")
    shown = sorted(regions, key=lambda g: -(g[3] / (tot_e or 1) + g[4] / (tot_s or 1)))[:a.regions]
    for lo, hi, e, ex, sm, part in sorted(shown):
        pe, ps = 100 * ex / (tot_e or 1), 100 * sm / (tot_s or 1)
        if pe < a.min_share and ps < a.min_share:
            continue
        first = part[0]["Source"].strip().replace("|", "/")[:48]
        print(f"| {lo}-{hi - 1} | {e:,.0f} | {pe:.1f}% | {ps:.1f}% | {stalls(part, head)} | `{first}` |")
    print("\n| # | instruction | executed | samples | top stalls |")
    print("|---|---|---|---|---|")
    top = sorted(range(len(ins)), key=lambda k: -num(ins[k].get(samp, "0")))[:a.top]
    for k in sorted(top):
        r = ins[k]
        src = r["Source"].strip().replace("|", "/")[:60]
        print(f"| {k} | `{src}` | {num(r['Instructions Executed']):,.0f} | {num(r.get(samp, '0')):.0f} | "
              f"{stalls([r], head, 2)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
