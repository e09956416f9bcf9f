#!/usr/bin/env python3
"""kiln's fused GEMM kernels against cuBLAS (through PyTorch).

    gemm_vs_torch.py BIN_DIR WORK_DIR [--set ffn|transformer|batch-1|pointwise|last-stage|epilogues] [--markdown OUT.md]
                     [--schedules auto,cooperative,pingpong:2,...] [--kiln-flag=FLAG ...]
                     [--rounds N]

Each case is an nn.Linear in fp16 with the epilogue the zoo fuses into it:
bias alone, bias + GELU (erf or tanh), or bias + a residual add. kiln
compiles the traced module (one fused kernel), checks it with kiln-run
against PyTorch's fp32 result, and times it as cuBLAS is timed: the mean
device time of back-to-back launches replayed from a CUDA graph between
CUDA events (kiln-run --time-launches; its plain stream launches, kiln-run
--bench, in a column beside). In the same process PyTorch times F.linear
alone (cuBLAS with its bias epilogue) and F.linear followed by the same
epilogue (eager) as device time too, from a CUDA graph of back-to-back
calls (timing.graph_ms: no Python dispatch in it), and with a residual
also cuBLAS reading it as the GEMM's C (torch.addmm: what the residual
costs cuBLAS's own epilogue).
Prints TFLOP/s and kiln's ratio to the first two.

--schedules: compile each case once per Hopper main-loop schedule named
(kiln-compile --wgmma-schedule), with `:N` its multicast cluster
(--wgmma-multicast) and `:N:B` its blocks a multiprocessor
(--wgmma-blocks-per-sm), a row each; the row names the kernel
configuration kiln-select-kernels took. --kiln-flag adds a kiln-compile flag
to every case (e.g. --kiln-flag=--wgmma-stream-k).

--set ffn: the transformer FFN at d=1024, hidden 4096, 4096 tokens.
--set norm-linear: a pre-norm block's layer norm and the linear it feeds
(ViT-B/16's and GPT-2's QKV and FFN up-projections at batch 32; gamma and
beta drawn away from 1 and 0): kiln's kernels for both (two launches: the
row statistics' and the corrected GEMM's, or with
--kiln-flag=--fold-layer-norm-bytes=-1 the norm's and the GEMM's) against F.linear alone and
F.layer_norm, F.linear and the epilogue in eager.
--set transformer: every GEMM of BERT-base (seq 128), GPT-2 (seq 128) and
ViT-B/16 (197 tokens) at batch 32; --set batch-1: the same layers at
batch 1 (each distinct shape and epilogue once), and the FFN block's (d =
1024, 128 tokens). --set pointwise: the CNNs' 1x1
convolutions at batch 32 as GEMMs (their epilogue-bound shapes). --set
epilogues: one BERT shape with each epilogue, for what the epilogue costs.
--set last-stage: ResNet-50's 1x1 2048 -> 512 at 7 x 7 (batch 32) as a GEMM,
for its variants side by side (--kiln-flag).
--rounds N: each case timed N times, PyTorch and kiln in turn (one compile):
the row gives the medians and, for each ratio, the range of the rounds'
ratios; on the H100, one table's ratios moved by up to 0.05x a shape within
an hour, so a single round does not settle a gap of a few percent.
Run on the GPU machine.
"""
import argparse
import os
import re
import statistics
import subprocess

import torch
import torch.nn.functional as F

from timing import VENDOR_METHOD, graph_ms, kiln_checked_ms, kiln_compiled

LAUNCHES = 100  # back to back, on both sides

# (label, tokens M, out N, in K, epilogue)
SETS = {
    "ffn": [("FFN up", 4096, 4096, 1024, "bias"), ("FFN up", 4096, 4096, 1024, "gelu"),
            ("FFN down", 4096, 1024, 4096, "bias"), ("FFN down", 4096, 1024, 4096, "gelu"),
            ("square", 4096, 4096, 4096, "bias"), ("square", 4096, 4096, 4096, "gelu")],
    "transformer": [
        ("BERT QKV", 4096, 2304, 768, "bias"),
        ("BERT out proj", 4096, 768, 768, "residual"),
        ("BERT FFN up", 4096, 3072, 768, "gelu"),
        ("BERT FFN down", 4096, 768, 3072, "residual"),
        ("GPT-2 FFN up", 4096, 3072, 768, "gelu_tanh"),
        ("ViT QKV", 6304, 2304, 768, "bias"),
        ("ViT out proj", 6304, 768, 768, "residual"),
        ("ViT FFN up", 6304, 3072, 768, "gelu"),
        ("ViT FFN down", 6304, 768, 3072, "residual"),
        # The FFN block of the zoo (d = 1024, hidden 4096, 4096 tokens).
        ("FFN block up", 4096, 4096, 1024, "gelu"),
        ("FFN block down", 4096, 1024, 4096, "residual"),
    ],
    # The same layers at batch 1 (128 tokens for BERT and GPT-2, 197 for
    # ViT-B/16): one or two 128-row tiles, a block a 128 x 64 tile where
    # those fill a quarter of the GPU (--wgmma-few-rows), else 64 x 64 tiles
    # with K split across a cluster (gemm_split_k).
    "batch-1": [
        ("GPT-2 QKV, batch 1", 128, 2304, 768, "bias"),
        ("GPT-2 out proj, batch 1", 128, 768, 768, "residual"),
        ("GPT-2 FFN up, batch 1", 128, 3072, 768, "gelu_tanh"),
        ("GPT-2 FFN down, batch 1", 128, 768, 3072, "residual"),
        ("BERT FFN up, batch 1", 128, 3072, 768, "gelu"),
        ("ViT QKV, batch 1", 197, 2304, 768, "bias"),
        ("ViT FFN up, batch 1", 197, 3072, 768, "gelu"),
        ("ViT FFN down, batch 1", 197, 768, 3072, "residual"),
        ("FFN block up, batch 1", 128, 4096, 1024, "gelu"),
        ("FFN block down, batch 1", 128, 1024, 4096, "residual"),
    ],
    # The CNNs' 1x1 convolutions at batch 32 as the GEMMs they run as (M =
    # batch x pixels): few input channels leave one k-step a tile, so the
    # epilogue is most of the kernel.
    "pointwise": [
        ("EfficientNet 16->96 112x112", 401408, 96, 16, "silu"),
        ("EfficientNet 24->144 56x56", 100352, 144, 24, "silu"),
        ("EfficientNet 40->240 28x28", 25088, 240, 40, "silu"),
        ("EfficientNet 144->24 56x56", 100352, 24, 144, "bias"),
        ("MobileNetV3 16->64 112x112", 401408, 64, 16, "relu"),
        ("ResNet-50 64->256 56x56", 100352, 256, 64, "residual"),
        ("ResNet-50 256->64 56x56", 100352, 64, 256, "relu"),
    ],
    # ResNet-50's 1x1 2048 -> 512 at 7 x 7 (batch 32) as the GEMM it runs
    # as: 104 tiles of 128 x 64 on 132 multiprocessors, 32 k-steps each,
    # the one launch of its last stage over 1.2x of cuDNN's convolution;
    # for its tile and split variants side by side (--kiln-flag).
    "last-stage": [
        ("ResNet-50 2048->512 7x7", 1568, 512, 2048, "relu"),
    ],
    # A layer norm and the linear it feeds (ln_ epilogues): what folding the
    # norm into the GEMM saves against running it.
    "norm-linear": [
        ("ViT LN + QKV", 6304, 2304, 768, "ln_bias"),
        ("ViT LN + FFN up", 6304, 3072, 768, "ln_gelu"),
        ("GPT-2 LN + QKV", 4096, 2304, 768, "ln_bias"),
        ("GPT-2 LN + FFN up", 4096, 3072, 768, "ln_gelu_tanh"),
    ],
    # One shape with each epilogue: what the epilogue costs on top of the
    # main loop.
    "epilogues": [
        ("BERT FFN up", 4096, 3072, 768, "bias"),
        ("BERT FFN up", 4096, 3072, 768, "relu"),
        ("BERT FFN up", 4096, 3072, 768, "gelu"),
        ("BERT FFN up", 4096, 3072, 768, "residual"),
        ("BERT FFN down", 4096, 768, 3072, "bias"),
        ("BERT FFN down", 4096, 768, 3072, "residual"),
        ("ViT FFN down", 6304, 768, 3072, "bias"),
        ("ViT FFN down", 6304, 768, 3072, "residual"),
    ],
}

# The transformer shapes still behind F.linear alone at batch 32 (the H200,
# 2026-12-07: 0.97-0.99x), for their tile candidates side by side
# (--kiln-flag=--wgmma-candidate=N).
SETS["behind"] = [case for case in SETS["transformer"]
                  if case[0] in ("BERT FFN down", "ViT FFN up", "ViT FFN down")]


class LinearEpilogue(torch.nn.Module):
    """An nn.Linear and its epilogue; an ln_ epilogue puts an nn.LayerNorm
    (gamma and beta drawn away from 1 and 0) before the linear."""

    def __init__(self, k, n, epilogue):
        super().__init__()
        self.norm = None
        if epilogue.startswith("ln_"):
            self.norm = torch.nn.LayerNorm(k)
            with torch.no_grad():
                self.norm.weight.normal_(1.0, 0.3)
                self.norm.bias.normal_(0.0, 0.3)
            epilogue = epilogue[len("ln_"):]
        self.fc = torch.nn.Linear(k, n)
        self.epilogue = epilogue

    def forward(self, x, r):
        y = self.fc(self.norm(x) if self.norm is not None else x)
        if self.epilogue == "gelu":
            return F.gelu(y)
        if self.epilogue == "gelu_tanh":
            return F.gelu(y, approximate="tanh")
        if self.epilogue == "residual":
            return y + r
        if self.epilogue == "silu":
            return F.silu(y)
        if self.epilogue == "relu":
            return F.relu(y)
        return y


def kiln(bin_dir, work, m, n, k, epilogue, schedule="auto", extra_flags=()):
    """kiln's fused kernel: (timing.KilnTimes, kernel configuration, a
    function that times it again)."""
    schedule, _, rest = schedule.partition(":")
    multicast, _, blocks = rest.partition(":")
    suffix = re.sub(r"[^A-Za-z0-9]+", "_", "".join(extra_flags))
    name = f"linear_{m}x{n}x{k}_{epilogue}_{schedule}{multicast}{blocks}{suffix}"
    torch.manual_seed(0)
    module = LinearEpilogue(k, n, epilogue).half().eval()
    x = torch.randn(m, k, dtype=torch.float16)
    r = torch.randn(m, n, dtype=torch.float16)
    inputs = (x, r) if epilogue == "residual" else (x,)
    path = os.path.join(work, name + ".pt")
    traced = torch.jit.trace(module if epilogue == "residual" else
                             _OneInput(module), inputs)
    torch.jit.save(traced, path)
    artifact = os.path.join(work, name + ".kiln")
    flags = [f"--wgmma-schedule={schedule}", f"--wgmma-multicast={multicast or 0}",
             f"--wgmma-blocks-per-sm={blocks or 0}", *extra_flags]
    configs = kiln_compiled(bin_dir, path, artifact, flags)
    names = [v.debugName().split(".")[0] for v in list(traced.graph.inputs())[1:]]
    with torch.no_grad():
        reference = module.float().cuda()(x.float().cuda(), r.float().cuda()).cpu()
    times, again = kiln_checked_ms(bin_dir, artifact, os.path.join(work, name),
                                   dict(zip(names, inputs)), reference, LAUNCHES)
    return times, "; ".join(configs), again


class _OneInput(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x, None)


def torch_times(m, n, k, epilogue):
    """cuBLAS's F.linear alone, followed by the epilogue (eager), and for a
    residual cuBLAS's own fused form: torch.addmm with the residual as C,
    which the GEMM reads in its epilogue (the bias left out: timing only)."""
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    w = torch.randn(n, k, device="cuda", dtype=torch.float16)
    b = torch.randn(n, device="cuda", dtype=torch.float16)
    r = torch.randn(m, n, device="cuda", dtype=torch.float16)
    gamma = torch.randn(k, device="cuda", dtype=torch.float16)
    beta = torch.randn(k, device="cuda", dtype=torch.float16)
    alone = graph_ms(lambda: F.linear(a, w, b), launches=LAUNCHES)
    # An ln_ epilogue's norm runs before the linear.
    norm = epilogue.startswith("ln_")
    epilogue = epilogue[len("ln_"):] if norm else epilogue
    before = (lambda x: F.layer_norm(x, (k,), gamma, beta)) if norm else (lambda x: x)
    then = {"bias": lambda y: y, "gelu": F.gelu,
            "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"),
            "residual": lambda y: y + r, "silu": F.silu, "relu": F.relu}[epilogue]
    fused = graph_ms(lambda: then(F.linear(before(a), w, b)), launches=LAUNCHES)
    with_c = (graph_ms(lambda: torch.addmm(r, a, w.t()), launches=LAUNCHES)
              if epilogue == "residual" else None)
    return alone, fused, with_c


def microseconds(ms):
    return f"{ms * 1e3:.1f}" if ms is not None else "-"


def ratio_cell(theirs, ours):
    """Their median over ours, with the rounds' range where there are
    several rounds (round r's time against round r's)."""
    cell = f"{statistics.median(theirs) / statistics.median(ours):.2f}x"
    if len(ours) > 1:
        each = [t / o for t, o in zip(theirs, ours)]
        cell += f" ({min(each):.2f}-{max(each):.2f})"
    return cell


def table_row(label, m, n, k, epilogue, flops, theirs, ours, config):
    """A table row from the rounds: `theirs` of (F.linear, F.linear +
    epilogue, addmm or None), `ours` of timing.KilnTimes; times are medians,
    the check is the worst round's."""
    alone = [t[0] for t in theirs]
    fused = [t[1] for t in theirs]
    with_c = [t[2] for t in theirs if t[2] is not None]
    kiln_ms = [t.ms for t in ours]
    ms = statistics.median(kiln_ms)
    worst = max(ours, key=lambda t: (t.verdict != "ok", t.rel_l2))
    return (f"| {label} | {m}x{n}x{k} | {epilogue} | {ms * 1e3:.1f} | "
            f"{flops / ms / 1e9:.0f} | {statistics.median(alone) * 1e3:.1f} | "
            f"{ratio_cell(alone, kiln_ms)} | {statistics.median(fused) * 1e3:.1f} | "
            f"{ratio_cell(fused, kiln_ms)} | "
            f"{microseconds(statistics.median(with_c) if with_c else None)} | "
            f"{statistics.median(t.plain_ms for t in ours) * 1e3:.1f} | "
            f"{worst.rel_l2:.3e} {worst.verdict} | `{config}` |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--set", choices=sorted(SETS), default="ffn")
    parser.add_argument("--markdown", help="also write the table as Markdown")
    parser.add_argument("--schedules", default="auto",
                        help="comma-separated Hopper main-loop schedules to compile each "
                             "case with (auto, cooperative, pingpong)")
    parser.add_argument("--kiln-flag", action="append", default=[],
                        help="a kiln-compile flag for every case (repeatable)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="time each case this many times, PyTorch and kiln in turn; the "
                             "row gives the medians and the rounds' range of each ratio")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.makedirs(args.work, exist_ok=True)
    header = (f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}. "
              f"Timing: {VENDOR_METHOD}, {LAUNCHES} calls"
              + (f"; the median of {args.rounds} rounds, PyTorch and kiln in turn, the "
                 "rounds' range of each ratio in brackets." if args.rounds > 1 else "."))
    print(header)
    schedules = args.schedules.split(",")
    rows = ["| GEMM | M x N x K | epilogue | kiln us | kiln TFLOP/s | cuBLAS F.linear us "
            "| kiln speedup over F.linear | F.linear + epilogue us | kiln speedup over that "
            "| cuBLAS addmm, residual as C us | kiln, plain launches us | check "
            "| kiln's kernel |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, m, n, k, epilogue in SETS[args.set]:
        flops = 2 * m * n * k
        for schedule in schedules:
            theirs = [torch_times(m, n, k, epilogue)]
            try:
                times, config, again = kiln(args.bin, args.work, m, n, k, epilogue, schedule,
                                            args.kiln_flag)
            except subprocess.CalledProcessError as e:
                alone, fused, with_c = theirs[0]
                why = (e.stderr or "").strip().splitlines()[:1]
                rows.append(f"| {label} | {m}x{n}x{k} | {epilogue} | - | - | "
                            f"{alone * 1e3:.1f} | - | {fused * 1e3:.1f} | - | "
                            f"{microseconds(with_c)} | - | "
                            f"kiln-compile failed ({schedule}: {' '.join(why)}) | - |")
                print(rows[-1], flush=True)
                continue
            ours = [times]
            for _ in range(args.rounds - 1):
                theirs.append(torch_times(m, n, k, epilogue))
                ours.append(again())
            rows.append(table_row(label, m, n, k, epilogue, flops, theirs, ours, config))
            print(rows[-1], flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(header + "\n\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
