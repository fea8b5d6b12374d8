#!/usr/bin/env bash
# ab_conv.sh — per-layer conv times of two builds of gcr side by side in one run on one GPU
# (bench/conv_bench.c on both, then bench/ab_table.py): a kernel or heuristic change against the
# commit before it. The device machine gets a copy of the working tree without .git, so the "before"
# tree is exported here first and carried:
#
#   here:    bash bench/ab_conv.sh export REV         (writes .snap/ from `git archive REV`; ignore
#                                                     /.snap/ in .git/info/exclude, carry .snap)
#   device:  OUT=... bash bench/ab_conv.sh run        (builds .snap and this tree, runs both)
#
# Each net runs before then after, one conv_bench process each (the two builds keep separate kernel
# caches). Writes $OUT/ab.txt (the raw runs, "== <command>" before each) and $OUT/ab.md (a table per
# net, dtype, layout and batch: each layer's µs on both sides and after/before), and prints the
# per-forward lines.
# knobs: NETS="resnet50 mnv3"  ARGS="nhwc f16 head=0 1 32 128"  JOBS=8  T=120 (seconds per run)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
case "${1:-}" in
export)
    rev=${2:?usage: bench/ab_conv.sh export REV}
    rm -rf .snap && mkdir -p .snap && git archive "$rev" | tar -x -C .snap || exit 1
    git rev-parse --short "$rev" > .snap/REV
    echo ".snap: $(cat .snap/REV) (carry .snap to the device)"
    ;;
run)
    [ -d .snap ] || { echo "ab_conv.sh: no .snap (bench/ab_conv.sh export REV first)" >&2; exit 2; }
    O=${OUT:-bench/results/ab-$(date -u +%Y%m%dT%H%M%SZ)}
    mkdir -p "$O"
    : > "$O/ab.txt" # a second run into the same OUT (a warm device keeps /tmp) starts a fresh table
    export GCR_LOG=0
    [ -d .deps ] && ln -sfn "$(pwd)/.deps" .snap/.deps
    (cd .snap && make -j"${JOBS:-8}" BUILD=build bench > "$O/build_before.log" 2>&1) || { echo "before: build failed"; exit 1; }
    make -j"${JOBS:-8}" BUILD=build bench > "$O/build_after.log" 2>&1 || { echo "after: build failed"; exit 1; }
    for net in ${NETS:-resnet50 mnv3}; do
        for side in .snap/build build; do
            echo "== $side/bench/conv_bench net=$net ${ARGS:-nhwc f16 head=0 1 32 128}" >> "$O/ab.txt"
            # shellcheck disable=SC2086 # ARGS is a list of conv_bench arguments
            GCR_CACHE_DIR="/tmp/gcr-ab-${side//\//_}" timeout "${T:-120}" "$side/bench/conv_bench" net="$net" \
                ${ARGS:-nhwc f16 head=0 1 32 128} >> "$O/ab.txt" 2>&1
        done
    done
    python3 bench/ab_table.py "$O/ab.txt" > "$O/ab.md" 2>&1
    grep -E "per forward|^###" "$O/ab.md"
    ;;
*)
    echo "usage: bench/ab_conv.sh export REV | run" >&2
    exit 2
    ;;
esac
