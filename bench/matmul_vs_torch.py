#!/usr/bin/env python3
"""kiln's matmul and bmm kernels (products of two activations) against cuBLAS.

    matmul_vs_torch.py BIN_DIR WORK_DIR [--markdown OUT.md] [--kiln-flag=FLAG ...]

Each case is `x @ y` in fp16 between two inputs of a traced module (no
weight: B arrives [K, N], N-contiguous, as matmul's right operand does),
alone or followed by a GELU. kiln compiles it (one fused kernel), checks it
with kiln-run against PyTorch's fp32 result and times it as cuBLAS is timed
(back-to-back launches replayed from a CUDA graph between CUDA events,
kiln-run --time-launches; its plain launches beside). In the same process
PyTorch times torch.matmul (cuBLAS) and torch.matmul + GELU as
device time too, from a CUDA graph of back-to-back calls (timing.graph_ms):
called from Python, a batched product shorter than Python's dispatch (BERT's
attention-shaped bmm, about 20 us of dispatch) measured the dispatch. Prints
TFLOP/s and kiln's ratio to each. Run on the GPU machine.
"""
import argparse
import os
import re
import subprocess

import numpy as np
import torch
import torch.nn.functional as F

from timing import VENDOR_METHOD, graph_ms, kiln_checked_ms, kiln_compiled

LAUNCHES = 100

# (label, lhs shape, rhs shape, epilogue)
CASES = [
    ("2-D, one matrix", (4096, 768), (768, 3072), "none"),
    ("2-D + GELU", (4096, 768), (768, 3072), "gelu"),
    ("tokens x shared B", (32, 196, 768), (768, 768), "none"),
    ("attention scores (BERT, b32)", (32, 12, 128, 64), (32, 12, 64, 128), "none"),
    ("attention P V (BERT, b32)", (32, 12, 128, 128), (32, 12, 128, 64), "none"),
    ("attention scores (ViT, b32)", (32, 12, 200, 64), (32, 12, 64, 200), "none"),
    ("token mixing (Mixer, b32)", (32, 768, 196), (196, 384), "gelu"),
]


class Product(torch.nn.Module):
    def __init__(self, epilogue):
        super().__init__()
        self.epilogue = epilogue

    def forward(self, x, y):
        z = torch.matmul(x, y)
        return F.gelu(z) if self.epilogue == "gelu" else z


def name_of(lhs, rhs, epilogue, flags):
    shape = "_".join("x".join(map(str, s)) for s in (lhs, rhs))
    return f"matmul_{shape}_{epilogue}{re.sub(r'[^A-Za-z0-9]+', '_', ''.join(flags))}"


def kiln(bin_dir, work, lhs, rhs, epilogue, flags):
    """kiln's kernel: (timing.KilnTimes, kernel configurations)."""
    name = name_of(lhs, rhs, epilogue, flags)
    torch.manual_seed(0)
    module = Product(epilogue).eval()
    x = torch.randn(*lhs, dtype=torch.float16)
    y = torch.randn(*rhs, dtype=torch.float16) / rhs[-2] ** 0.5
    path = os.path.join(work, name + ".pt")
    traced = torch.jit.trace(module, (x, y))
    torch.jit.save(traced, path)
    artifact = os.path.join(work, name + ".kiln")
    configs = kiln_compiled(bin_dir, path, artifact, flags)
    names = [v.debugName().split(".")[0] for v in list(traced.graph.inputs())[1:]]
    with torch.no_grad():
        reference = module(x.float().cuda(), y.float().cuda()).cpu()
    times, _ = kiln_checked_ms(bin_dir, artifact, os.path.join(work, name),
                               dict(zip(names, (x, y))), reference, LAUNCHES)
    return times, "; ".join(configs)


def torch_times(lhs, rhs):
    """cuBLAS's torch.matmul alone, and followed by a GELU (eager)."""
    x = torch.randn(*lhs, device="cuda", dtype=torch.float16)
    y = torch.randn(*rhs, device="cuda", dtype=torch.float16)
    alone = graph_ms(lambda: torch.matmul(x, y), launches=LAUNCHES)
    gelu = graph_ms(lambda: F.gelu(torch.matmul(x, y)), launches=LAUNCHES)
    return alone, gelu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--markdown", help="also write the table as Markdown")
    parser.add_argument("--kiln-flag", action="append", default=[],
                        help="a kiln-compile flag for every case (repeatable)")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    header = (f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. "
              f"Timing: {VENDOR_METHOD}, {LAUNCHES} calls.")
    print(header)
    rows = ["| product | lhs @ rhs | epilogue | kiln us | kiln TFLOP/s | cuBLAS us "
            "| kiln speedup | kiln, plain launches us | check | kiln's kernel |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    status = 0
    for label, lhs, rhs, epilogue in CASES:
        batch = int(np.prod(np.broadcast_shapes(lhs[:-2], rhs[:-2]))) if len(lhs) > 2 else 1
        flops = 2 * batch * lhs[-2] * lhs[-1] * rhs[-1]
        alone, gelu = torch_times(lhs, rhs)
        theirs = gelu if epilogue == "gelu" else alone
        shapes = f"{list(lhs)} @ {list(rhs)}"
        try:
            times, config = kiln(args.bin, args.work, lhs, rhs, epilogue, args.kiln_flag)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            why = (getattr(e, "stderr", None) or str(e)).strip().splitlines()[:1]
            rows.append(f"| {label} | {shapes} | {epilogue} | - | - | {theirs * 1e3:.1f} | - "
                        f"| - | kiln failed: {' '.join(why)} | - |")
            print(rows[-1], flush=True)
            status = 1
            continue
        if times.verdict != "ok":
            status = 1
        ms = times.ms
        rows.append(f"| {label} | {shapes} | {epilogue} | {ms * 1e3:.1f} | "
                    f"{flops / ms / 1e9:.0f} | {theirs * 1e3:.1f} | {theirs / ms:.2f}x | "
                    f"{times.plain_ms * 1e3:.1f} | {times.rel_l2:.3e} {times.verdict} | "
                    f"`{config}` |")
        print(rows[-1], flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n" + "\n".join(rows) + "\n")
    raise SystemExit(status)


if __name__ == "__main__":
    main()
