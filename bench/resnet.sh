#!/usr/bin/env bash
# resnet.sh — the ResNet-50 benchmark: bench/mobilenet.sh with MODEL=resnet50 (gcr's three modes
# and PyTorch eager / eager + CUDA Graph / torch.compile reduce-overhead, channels_last, batches
# 1 32 128, f16 and f32 in exact FP32 and TF32, one table in bench/results/resnet50-<date>.md).
# Every knob of bench/mobilenet.sh applies (BATCHES, DTYPES, LAYOUT, ITERS, TORCH, COLD, PROFILE, ...).
MODEL=resnet50 exec "$(dirname "$0")/mobilenet.sh" "$@"
