#!/usr/bin/env python3
"""kiln's tuning knobs swept over whole models, on the GPU machine.

    sweep_knobs.py BIN_DIR WORK_DIR --models bert vit_b_16 --batches 1
                   --setting "--split-k-k-tile=32 --split-k-stages=4" --setting ""
                   --setting KILN_PDL=1

A setting is a space-separated list: `--flag=value` tokens go to
kiln-compile (the kernel-selection options: --split-k-max-blocks,
--split-k-min-k, --split-k-k-tile, --split-k-stages, --multiprocessors),
NAME=VALUE tokens to the environment of both tools (runtime switches such
as KILN_PDL).

Exports each model once (bench/models_vs_torch.py's zoo and inputs), then
for each setting (an empty string: the defaults) compiles it with those
variables set, checks it against PyTorch's fp32 result (rel L2 <= 1e-2) and
times it (kiln-run --bench, device-resident I/O, CUDA graph). Settings are
interleaved and the whole sweep repeated --rounds times, so that drift in
the GPU's clocks does not favour one setting. Prints one line per run and a
table of medians. A setting whose check fails in any round is marked FAIL
and shows no median: it computes something else.
"""
import argparse
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models_vs_torch as zoo  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from settings_args import joined_settings  # noqa: E402


def export(name, batch, work):
    model, inputs = zoo.model_and_inputs(name, batch)
    with torch.no_grad():
        reference = model(*[x.cuda() for x in inputs]).float().cpu()
        traced = torch.jit.trace(model, tuple(x.cuda() for x in inputs), check_trace=False,
                                 strict=False)
    path = os.path.join(work, "model.pt")
    torch.jit.save(traced, path)
    names = [v.debugName().split(".")[0] for v in list(traced.graph.inputs())[1:]]
    feeds = []
    for input_name, x in zip(names, inputs):
        x16 = x.half().float() if x.is_floating_point() else x
        np.save(os.path.join(work, f"{input_name}.npy"), x16.numpy())
        feeds += ["--input", f"{input_name}={work}/{input_name}.npy"]
    np.save(os.path.join(work, "ref.npy"), reference.numpy())
    return path, feeds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--batches", nargs="+", type=int, default=[1])
    parser.add_argument("--setting", action="append", default=[],
                        help="kiln-compile flags and NAME=VALUE variables, space-separated; "
                             "empty for the defaults")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(joined_settings(sys.argv[1:]))
    settings = args.setting or [""]
    results, failed = {}, set()
    for name in args.models:
        for batch in args.batches:
            work = os.path.join(args.work, f"{name}_b{batch}")
            os.makedirs(work, exist_ok=True)
            path, feeds = export(name, batch, work)
            for round_index in range(args.rounds):
                for index, setting in enumerate(settings):
                    env = dict(os.environ, KILN_CACHE_DIR=os.path.join(args.work, "cache"))
                    tokens = setting.split()
                    flags = [t for t in tokens if t.startswith("--")]
                    env.update(t.split("=", 1) for t in tokens if not t.startswith("--"))
                    artifact = os.path.join(work, f"s{index}.kiln")
                    if round_index == 0:
                        out = zoo.run([f"{args.bin}/kiln-compile", path, "--precision", "fp16",
                                       *flags, "-o", artifact], env=env)
                        if out.returncode != 0:
                            print(f"{name} b{batch} [{setting}] compile error: "
                                  f"{(out.stderr or out.stdout).strip().splitlines()[-1]}")
                            continue
                    if not os.path.exists(artifact):
                        continue
                    out = zoo.run([f"{args.bin}/kiln-run", artifact, *feeds, "--check",
                                   f"{work}/ref.npy", "--tolerance", "1e-2", "--device-io",
                                   "--bench", str(args.runs)], env=env)
                    text = out.stdout + out.stderr
                    check = re.search(r"rel L2 ([0-9.e+-]+).*?(ok|FAIL)", text)
                    wall = re.search(r"median ([0-9.]+) ms", text)
                    graph = re.search(r"CUDA graph ([0-9.]+) ms", text)
                    if not check or not wall:
                        print(f"{name} b{batch} [{setting}] run error: {text.strip()[-300:]}")
                        continue
                    key = (name, batch, setting)
                    # A run whose check failed computed something else: its
                    # time says nothing about the setting.
                    if check.group(2) == "ok":
                        results.setdefault(key, []).append(float(wall.group(1)))
                    else:
                        failed.add(key)
                    print(f"{name} b{batch} [{setting or 'defaults'}] round {round_index}: "
                          f"wall {wall.group(1)} ms, graph device "
                          f"{graph.group(1) if graph else '?'} ms, check {check.group(1)} "
                          f"{check.group(2)}", flush=True)
    print("\nmedian wall ms per setting (FAIL: a check failed in some round; no median)")
    for key in sorted(set(results) | failed):
        name, batch, setting = key
        median = (f"{statistics.median(results[key]):8.4f}" if key in results and key not in failed else "       -")
        print(f"  {name:>20} b{batch:<3} {median}  {'FAIL ' if key in failed else ''}"
              f"{setting or 'defaults'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
