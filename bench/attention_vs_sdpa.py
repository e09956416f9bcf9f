#!/usr/bin/env python3
"""kiln's attention kernel against torch.nn.functional.scaled_dot_product_attention.

    attention_vs_sdpa.py BIN_DIR WORK_DIR [--json OUT.json] [--markdown OUT.md]
                         [--batches 1 32] [--shapes vit_b_16 ...]
                         [--kiln-flag=--attention-rows=128 ...]
    attention_vs_sdpa.py --loop SHAPE [--batch 32]   (SDPA alone, for a profiler)
    attention_vs_sdpa.py --render RUN.json... --markdown OUT.md

--markdown writes the rows as a Markdown table for bench/RESULTS.md (list
it in bench/results/inputs.txt); --render makes that table from earlier
runs' JSON files, without a GPU.

For each shape (the zoo's attention: BERT-base with its padding mask, ViT-B/16,
the GPT-2 block causal; plus ViT-L/14's 257 tokens, one past a whole key tile,
and a long causal sequence at head size 128), at batch 1
and 32, fp16: a traced module calling SDPA on q, k, v [B, H, S, D] is compiled
by kiln-compile (one attention kernel), checked by kiln-run against PyTorch's
fp32 SDPA, and timed by kiln-run as SDPA is: the mean device time of
back-to-back launches replayed from a CUDA graph between CUDA events
(--time-launches; its plain stream launches, --bench, beside it). In the
same process PyTorch runs
SDPA on device-resident tensors as it picks its backend, then under each
backend forced in turn (flash, memory-efficient, cuDNN;
torch.nn.attention.sdpa_kernel): each is checked against the fp32 result
like kiln (a backend that refuses the shape or its mask, or misses the
tolerance, is named as such and is not counted) and timed from a CUDA graph
of back-to-back calls (timing.graph_ms). Called from Python, a call shorter
than Python's dispatch measured the dispatch: SDPA on BERT's shape read
21.9 and 33.5 us in two runs of the same build. kiln's speedup is over the
fastest backend that passed.
Run on the GPU machine.
"""
import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import torch

from timing import VENDOR_METHOD as METHOD, back_to_back_ms, graph_ms, kiln_timed_run
from torch.nn.attention import SDPBackend, sdpa_kernel

warnings.filterwarnings("ignore")

LAUNCHES = 200  # back to back, on both sides
TOLERANCE = 1e-2  # rel L2 against PyTorch's fp32 SDPA, for kiln and each backend
# SDPA's own pick first, then each backend forced.
BACKENDS = [("picked", None), ("flash", SDPBackend.FLASH_ATTENTION),
            ("memory-efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]
SHAPES = [  # (name, heads, seq, head size, mask kind)
    ("bert", 12, 128, 64, "padding"),
    ("vit_b_16", 12, 197, 64, "none"),
    ("vit_l_14", 16, 257, 64, "none"),
    ("gpt2", 12, 128, 64, "causal"),
    ("long_causal", 16, 1024, 128, "causal"),
]


class Sdpa(torch.nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)


class MaskedSdpa(torch.nn.Module):
    def forward(self, q, k, v, mask):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def inputs(batch, heads, seq, d, kind, device="cpu"):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(batch, heads, seq, d, generator=g).half() for _ in range(3))
    args = [q, k, v]
    if kind == "padding":  # the last eighth of each sequence is padding
        keep = torch.ones(batch, 1, 1, seq, dtype=torch.bool)
        keep[..., seq - seq // 8:] = False
        args.append(torch.where(keep, 0.0, -1e4).half())
    return [a.to(device) for a in args]


def run(bin_dir, work, name, batch, heads, seq, d, kind, flags=()):
    tag = f"{name}_b{batch}"
    module = (MaskedSdpa() if kind == "padding" else Sdpa(kind == "causal")).eval()
    args = inputs(batch, heads, seq, d, kind)
    pt = os.path.join(work, tag + ".pt")
    torch.jit.save(torch.jit.trace(module, tuple(args)), pt)
    art = os.path.join(work, tag + ".kiln")
    compiled = subprocess.run([f"{bin_dir}/kiln-compile", pt, "-o", art, *flags],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        raise RuntimeError(compiled.stderr)
    launches = re.search(r"(\d+) kernel launches", compiled.stderr)
    d_in = os.path.join(work, tag)
    os.makedirs(d_in, exist_ok=True)
    names = ["q", "k", "v", "mask"][:len(args)]
    specs = []
    for n, a in zip(names, args):
        np.save(os.path.join(d_in, n + ".npy"), a.numpy())
        specs += ["--input", f"{n}={d_in}/{n}.npy"]
    with torch.no_grad():
        ref = module(*[a.float().cuda() for a in args]).cpu()
    np.save(os.path.join(d_in, "ref.npy"), ref.numpy())
    kiln = kiln_timed_run(bin_dir, art, specs, f"{d_in}/ref.npy", LAUNCHES,
                          extra=["--tolerance", str(TOLERANCE)])
    dev = [a.cuda() for a in args]
    with torch.no_grad():
        backends = {label: time_backend(module, dev, ref.cuda(), backend)
                    for label, backend in BACKENDS}
    fastest = fastest_backend(backends)
    if fastest is None:
        raise RuntimeError("no SDPA backend ran this shape within tolerance: "
                           + "; ".join(f"{k}: {v.get('error', v.get('rel_l2'))}"
                                       for k, v in backends.items()))
    sdpa_ms = backends[fastest]["ms"]
    flops = 4 * batch * heads * seq * seq * d * (0.5 if kind == "causal" else 1.0)
    return {
        "shape": name, "batch": batch, "heads": heads, "seq": seq, "head_size": d, "mask": kind,
        "kiln_flags": list(flags),
        "kernels": int(launches.group(1)) if launches else None,
        "kiln_ms": kiln.ms, "kiln_plain_ms": kiln.plain_ms, "sdpa_ms": sdpa_ms,
        "sdpa_fastest": fastest, "sdpa_backends": backends,
        "check_rel_l2": kiln.rel_l2, "check_ok": kiln.verdict == "ok",
        "kiln_tflops": flops / kiln.ms / 1e9, "sdpa_tflops": flops / sdpa_ms / 1e9,
    }


def time_backend(module, dev, ref, backend):
    """SDPA on `dev` with `backend` forced (None: its own pick), checked
    against the fp32 `ref`: {"ms", "method", "rel_l2", "ok"}, or {"error"}
    where the backend refuses the shape or its mask."""
    def call():
        with sdpa_kernel(backend) if backend is not None else contextlib.nullcontext():
            return module(*dev)
    try:
        out = call()
        torch.cuda.synchronize()
    except RuntimeError as error:
        return {"error": (str(error).strip().splitlines() or ["refused"])[0][:200]}
    rel_l2 = float((out.float() - ref).norm() / ref.norm())
    try:
        ms, method = graph_ms(call, launches=LAUNCHES // 2), "graph"
    except RuntimeError:  # a backend that cannot be captured: timed from Python
        torch.cuda.synchronize()
        ms, method = back_to_back_ms(call, launches=LAUNCHES), "back to back"
    return {"ms": ms, "method": method, "rel_l2": rel_l2, "ok": rel_l2 <= TOLERANCE}


def fastest_backend(backends):
    """The label of the fastest backend that ran within tolerance, or None."""
    passed = [(v["ms"], k) for k, v in backends.items() if v.get("ok")]
    return min(passed)[1] if passed else None


def backend_cell(entry):
    if entry is None:
        return "-"
    if "error" in entry:
        return "refused"
    cell = f"{1000 * entry['ms']:.1f}"
    if entry["method"] != "graph":
        cell += " (from Python)"
    if not entry["ok"]:
        cell += f" (rel L2 {entry['rel_l2']:.1e} FAIL)"
    return cell


def markdown(rows, meta):
    """The rows as a Markdown table: kiln's kernel against each SDPA backend
    and its speedup over the fastest that passed. Rows of runs that timed
    SDPA's own pick alone show that in its column and '-' for the others;
    rows of runs that timed kiln's plain launches alone are marked so."""
    labels = [label for label, _ in BACKENDS]
    lines = [f"GPU: {meta.get('gpu', '?')}, torch {meta.get('torch', '?')}. Timing: "
             f"{meta.get('timing', METHOD)}. fp16; 'picked' is SDPA choosing its backend, "
             "the others each backend forced ('refused': it does not run the shape or its "
             f"mask). kiln and every backend checked against PyTorch's fp32 SDPA (rel L2 "
             f"within {TOLERANCE:g}).", "",
             "| shape | batch | heads x seq x head size | mask | kiln µs | SDPA picked µs | "
             "flash µs | memory-efficient µs | cuDNN µs | kiln speedup over the fastest "
             "| kiln TFLOP/s | fastest's TFLOP/s | kiln, plain launches µs | check "
             "| kiln flags |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['shape']} | {r['batch']} | - | - | - | - | - | - | - | - | - | - "
                         f"| - | error: {r['error'][-200:]} | - |".replace("\n", " "))
            continue
        backends = r.get("sdpa_backends")
        if backends is None:  # an earlier run: SDPA's pick, timed from Python
            cells = [f"{1000 * r['sdpa_ms']:.1f} (from Python)"] + ["-"] * (len(labels) - 1)
        else:
            cells = [backend_cell(backends.get(label)) for label in labels]
        fastest = r.get("sdpa_fastest", "picked")
        # Runs before 2026-12-07 timed kiln's plain launches alone.
        plain = r.get("kiln_plain_ms")
        kiln_cell = f"{1000 * r['kiln_ms']:.1f}" + ("" if plain else " (plain launches)")
        plain_cell = f"{1000 * (plain or r['kiln_ms']):.1f}"
        lines.append(
            f"| {r['shape']} | {r['batch']} | {r['heads']} x {r['seq']} x {r['head_size']} | "
            f"{r['mask']} | {kiln_cell} | {' | '.join(cells)} | "
            f"{r['sdpa_ms'] / r['kiln_ms']:.2f}x ({fastest}) | {r['kiln_tflops']:.0f} | "
            f"{r['sdpa_tflops']:.0f} | {plain_cell} | {r['check_rel_l2']:.1e} "
            f"{'ok' if r['check_ok'] else 'FAIL'} | {' '.join(r['kiln_flags']) or 'default'} |")
    return "\n".join(lines) + "\n"


def render(paths, out):
    rows, meta = [], {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        meta = data.get("meta", meta)
        rows += data["rows"]
    with open(out, "w") as f:
        f.write(markdown(rows, meta))


def main():
    if "--render" in sys.argv:
        parser = argparse.ArgumentParser()
        parser.add_argument("--render", nargs="+", required=True)
        parser.add_argument("--markdown", required=True)
        args = parser.parse_args()
        render(args.render, args.markdown)
        return
    if "--loop" in sys.argv:
        # Under Nsight Compute (scripts/gpu-ncu.sh --sdpa): SDPA's backend (its
        # pick, or --backend forced) on one shape at batch 32, 20 calls,
        # nothing else on the GPU.
        parser = argparse.ArgumentParser()
        parser.add_argument("--loop", required=True, choices=[s[0] for s in SHAPES])
        parser.add_argument("--batch", type=int, default=32)
        parser.add_argument("--backend", choices=[label for label, _ in BACKENDS],
                            default="picked")
        args = parser.parse_args()
        name, heads, seq, d, kind = next(s for s in SHAPES if s[0] == args.loop)
        module = (MaskedSdpa() if kind == "padding" else Sdpa(kind == "causal")).eval()
        dev = inputs(args.batch, heads, seq, d, kind, device="cuda")
        backend = dict(BACKENDS)[args.backend]
        with torch.no_grad(), (sdpa_kernel(backend) if backend is not None
                               else contextlib.nullcontext()):
            for _ in range(20):
                module(*dev)
        torch.cuda.synchronize()
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--shapes", nargs="+", choices=[s[0] for s in SHAPES],
                        help="only these shapes (default: all)")
    parser.add_argument("--kiln-flag", action="append", default=[],
                        help="an extra kiln-compile flag (repeatable), e.g. "
                             "--kiln-flag=--attention-rows=128")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"Timing: {METHOD}, {LAUNCHES} calls.")
    print(f"{'shape':>12} {'batch':>5} {'kiln ms':>9} {'SDPA ms':>9} {'SDPA/kiln':>9} "
          f"{'kiln TF/s':>9} {'SDPA TF/s':>9}  check, SDPA's fastest backend")
    rows = []
    for name, heads, seq, d, kind in SHAPES:
        if args.shapes and name not in args.shapes:
            continue
        for batch in args.batches:
            try:
                r = run(args.bin, args.work, name, batch, heads, seq, d, kind, args.kiln_flag)
            except Exception as error:  # one failing shape must not hide the others
                print(f"{name:>12} {batch:>5}  error: {str(error)[-400:]}")
                rows.append({"shape": name, "batch": batch, "error": str(error)[-2000:]})
                continue
            rows.append(r)
            print(f"{name:>12} {batch:>5} {r['kiln_ms']:9.4f} {r['sdpa_ms']:9.4f} "
                  f"{r['sdpa_ms'] / r['kiln_ms']:8.2f}x {r['kiln_tflops']:9.1f} "
                  f"{r['sdpa_tflops']:9.1f}  rel L2 {r['check_rel_l2']} "
                  f"{'ok' if r['check_ok'] else 'FAIL'}, {r['sdpa_fastest']} (of "
                  + ", ".join(f"{k} {backend_cell(v)}" for k, v in r["sdpa_backends"].items())
                  + ")")
    meta = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "timing": METHOD}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, meta))


if __name__ == "__main__":
    main()
