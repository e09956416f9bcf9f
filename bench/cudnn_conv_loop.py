#!/usr/bin/env python3
"""One convolution on cuDNN, back to back, for a profiler that attaches to
the process (scripts/gpu-ncu.sh --cudnn).

    cudnn_conv_loop.py N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]] [--calls 20]

F.conv2d in fp16 on channels-last tensors with cuDNN's autotuner on, as
conv_vs_cudnn.py times it: the input [N, C, H, W], K filters of R x S,
stride and padding on both axes (default 1 and 0), groups (default 1). The
autotuner's trial kernels run first, outside the profiled range: the calls
that count run between cudaProfilerStart and cudaProfilerStop, so a
profiler started with --profile-from-start off sees cuDNN's chosen kernels
alone. Run on the GPU machine.
"""
import argparse
import sys

import torch
import torch.nn.functional as F


def parse_spec(text):
    """N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]] -> a dict of ints, or ValueError."""
    fields = text.split(",")
    if not 7 <= len(fields) <= 10:
        raise ValueError(f"'{text}': want N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]]")
    values = [int(f) for f in fields]
    if any(v <= 0 for v in values[:7]) or (len(values) > 8 and values[8] < 0):
        raise ValueError(f"'{text}': sizes must be positive, padding not negative")
    names = ["n", "c", "h", "w", "k", "r", "s", "stride", "pad", "groups"]
    spec = dict(zip(names, values))
    spec.setdefault("stride", 1)
    spec.setdefault("pad", 0)
    spec.setdefault("groups", 1)
    if spec["stride"] <= 0 or spec["groups"] <= 0 or spec["c"] % spec["groups"] or \
            spec["k"] % spec["groups"]:
        raise ValueError(f"'{text}': stride and groups must be positive and divide the channels")
    return spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="N,C,H,W,K,R,S[,STRIDE[,PAD[,GROUPS]]]")
    parser.add_argument("--calls", type=int, default=20, help="calls profiled (default 20)")
    args = parser.parse_args()
    try:
        spec = parse_spec(args.spec)
    except ValueError as error:
        sys.exit(f"cudnn_conv_loop: {error}")
    if not torch.cuda.is_available():
        sys.exit("cudnn_conv_loop: no CUDA device")
    torch.backends.cudnn.benchmark = True
    x = torch.randn(spec["n"], spec["c"], spec["h"], spec["w"], device="cuda",
                    dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    w = (torch.randn(spec["k"], spec["c"] // spec["groups"], spec["r"], spec["s"], device="cuda",
                     dtype=torch.float16) * 0.1).contiguous(memory_format=torch.channels_last)

    def call():
        return F.conv2d(x, w, stride=spec["stride"], padding=spec["pad"], groups=spec["groups"])

    with torch.no_grad():
        for _ in range(20):  # the autotuner's trials, then warm clocks and caches
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for _ in range(args.calls):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
