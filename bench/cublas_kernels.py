#!/usr/bin/env python3
"""Which kernels cuBLAS runs for the GEMMs kiln is measured against.

    cublas_kernels.py [--set transformer|batch-1|ffn|pointwise|epilogues] [--markdown OUT.md]
    cublas_kernels.py --loop LABEL [--set ...]

For each shape of a gemm_vs_torch.py set, F.linear (fp16, with its bias) is
run back to back under torch.profiler, and the table names each CUDA kernel
it launched with its grid, block, registers a thread, shared memory a block
and mean duration. cuBLAS's kernel names say its tile, cluster and schedule
(nvjet_hsh_128x192_64x4_2x1_v_... : a 128 x 192 tile, k-slices of 64, four
stages, a 2 x 1 cluster), which is what a kiln kernel behind cuBLAS on that
shape is compared with.

--loop LABEL: run the first shape whose label starts with LABEL (in --set,
then in the other sets), 20 times back to back and nothing else, for a
profiler that attaches to the process (scripts/gpu-ncu.sh --cublas).
Run on the GPU machine.
"""
import argparse
import json
import os
import tempfile

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from gemm_vs_torch import SETS

LAUNCHES = 20


def operands(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    w = torch.randn(n, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, device="cuda", dtype=torch.float16)
    return a, w, b


def kernels(m, n, k):
    """[(name, grid, block, registers, shared bytes, mean µs, launches)] of
    the kernels LAUNCHES calls of F.linear ran, in the order first seen."""
    a, w, b = operands(m, n, k)
    for _ in range(5):  # heuristics and workspace settle off the record
        F.linear(a, w, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(LAUNCHES):
            F.linear(a, w, b)
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(trace)
        with open(trace) as f:
            events = json.load(f).get("traceEvents", [])
    seen = {}
    for event in events:
        if event.get("cat") != "kernel":
            continue
        args = event.get("args", {})
        row = seen.setdefault(event["name"], {
            "grid": args.get("grid"), "block": args.get("block"),
            "registers": args.get("registers per thread"),
            "shared": args.get("shared memory"), "us": [],
        })
        row["us"].append(float(event.get("dur", 0)))
    return [(name, r["grid"], r["block"], r["registers"], r["shared"],
             sum(r["us"]) / len(r["us"]), len(r["us"])) for name, r in seen.items()]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", choices=sorted(SETS), default="transformer")
    parser.add_argument("--markdown", help="also write the table as Markdown")
    parser.add_argument("--loop", metavar="LABEL",
                        help="only run LABEL's F.linear back to back, for a profiler")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("cublas_kernels: no CUDA device (run this on the GPU machine)")
    shapes = {}
    for label, m, n, k, _ in SETS[args.set]:
        shapes.setdefault((label, m, n, k), None)
    if args.loop:
        # The label in --set's shapes first, then in every other set's (so
        # that a profiler's caller names a shape without its set).
        others = [(label, m, n, k) for name in sorted(SETS) if name != args.set
                  for label, m, n, k, _ in SETS[name]]
        match = [s for s in list(shapes) + others if s[0].startswith(args.loop)]
        if not match:
            raise SystemExit(f"cublas_kernels: no shape labelled {args.loop!r} in any set")
        _, m, n, k = match[0]
        a, w, b = operands(m, n, k)
        for _ in range(LAUNCHES):
            F.linear(a, w, b)
        torch.cuda.synchronize()
        return
    lines = [f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. "
             f"torch.profiler over {LAUNCHES} back-to-back F.linear calls (fp16, bias).",
             "",
             "| GEMM | M x N x K | kernel | grid | block | regs | smem B | µs | calls |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, m, n, k in shapes:
        for name, grid, block, registers, shared, us, count in kernels(m, n, k):
            lines.append(f"| {label} | {m}x{n}x{k} | `{name}` | {grid} | {block} | "
                         f"{registers} | {shared} | {us:.1f} | {count} |")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
