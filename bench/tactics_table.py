#!/usr/bin/env python3
"""tactics_table.py — the log of bench/tactics.sh as markdown: for each net, dtype and batch, one row
per layer with the heuristic's pick (the autotune line's default) and its time, the fastest
candidate and its time, their ratio, and the runner-up; then per forward (each layer times its
count) the picks' total against the best candidates'. A layer whose shape an earlier layer of the
block already had is timed once (the in-memory tactic cache): its row says so.

usage: tactics_table.py LOG > tactics.md"""
import re
import sys

LAYER = re.compile(r"^conv_bench: layer (\S+) (\S+) (\S+) batch (\d+) count (\d+)$")
TUNE = re.compile(r"^gcr: autotune: \d+ tactics \(us, \* picked, default (\S+)\):(.*)$")


def short(name):
    """gcr_dense_tc128kw_f16 -> tc128kw (the dtype suffix and prefix say nothing here)"""
    name = re.sub(r"^gcr_(dense_)?", "", name)
    return re.sub(r"_(f16|bf16|f32|tf32)(/s\d+)?$", lambda m: m.group(2) or "", name)


def parse(lines):
    blocks = {}  # (net, dtype, batch) -> list of layer dicts, in log order
    cur = None
    for line in lines:
        line = line.rstrip("\n")
        m = LAYER.match(line)
        if m:
            net, name, dt, n, count = m.groups()
            cur = {"name": name, "count": int(count), "default": None, "times": []}
            blocks.setdefault((net, dt, int(n)), []).append(cur)
            continue
        m = TUNE.match(line)
        if m and cur is not None and cur["default"] is None:
            cur["default"] = m.group(1)
            toks = m.group(2).split()
            for name, us in zip(toks[0::2], toks[1::2]):
                cur["times"].append((name.lstrip("*"), float(us)))
    return blocks


def table(key, layers):
    net, dt, n = key
    out = [f"### {net} {dt} batch {n}", "",
           "| layer | × | pick | µs | best | µs | pick/best | runner-up | µs |", "|---|---|---|---|---|---|---|---|---|"]
    pick_total = best_total = 0.0
    for L in layers:
        if not L["times"]:
            out.append(f"| {L['name']} | {L['count']} | (not timed here: no candidates, or a shape timed before) | | | | | | |")
            continue
        times = dict(L["times"])
        ranked = sorted(L["times"], key=lambda t: t[1])
        best, best_us = ranked[0]
        pick_us = times.get(L["default"], float("nan"))
        second = ranked[1] if len(ranked) > 1 else ("", float("nan"))
        pick_total += pick_us * L["count"]
        best_total += best_us * L["count"]
        ratio = pick_us / best_us if best_us > 0 else float("nan")
        mark = f"**{ratio:.2f}**" if ratio > 1.1 else f"{ratio:.2f}"
        out.append(f"| {L['name']} | {L['count']} | {short(L['default'])} | {pick_us:.1f} | {short(best)} | {best_us:.1f} | "
                   f"{mark} | {short(second[0])} | {second[1]:.1f} |")
    if best_total > 0:
        out += ["", f"per forward (timed layers x count): picks {pick_total:.1f} µs, best candidates {best_total:.1f} µs "
                f"({pick_total / best_total:.3f}x)", ""]
    else:
        out += ["", "per forward: no layer of this block was timed", ""]
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        blocks = parse(f)
    lines = ["# Dense tactics per layer: the heuristic's pick against every candidate (bench/tactics.sh)", "",
             "GCR_AUTOTUNE=1 times each candidate once on the real shape (lib/cuda/autotune.c); **bold**: the pick is "
             "more than 1.1x the best candidate's time.", ""]
    for key in blocks:
        lines += table(key, blocks[key])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
