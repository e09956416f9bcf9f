#!/usr/bin/env python3
"""kiln-run --profile's output with kiln-compile's per-launch report after
it, as models_vs_torch.py --raw-dir writes them (MODEL_bBATCH.txt): the
per-kernel table and the launches, for the tools that compare profiles
(conv_vs_cudnn.py, compare_profiles.py). No torch: it reads text.
"""
import os
import re
import sys

FILE_NAME = re.compile(r"^(?P<model>.+)_b(?P<batch>\d+)\.txt$")
KERNEL_ROW = re.compile(
    r"^(?P<name>kiln_\w+)\s+(?P<kind>\S+)\s+(?P<calls>\d+)\s+(?P<total>[\d.]+)\s+"
    r"(?P<mean>[\d.]+)\s+[\d.]+%\s*$")
RUNS_ROW = re.compile(r"^(?P<runs>\d+) runs, (?P<ms>[\d.]+) ms of device time per run")
LAUNCH_HEADER = re.compile(r"^kiln kernels of @forward\s*$")
# kiln-run --time-launches: each launch alone, back to back from a graph.
ALONE_HEADER = re.compile(r"^launches timed alone \((?P<repetitions>\d+) back to back")
ALONE_ROW = re.compile(
    r"^\s+(?P<launch>\d+)\s+(?P<kernel>kiln_\w+)\s+(?P<kind>\S+)\s+(?P<mean>[\d.]+)\s*$")
LAUNCH_ROW = re.compile(
    r"^\s*(?P<index>\d+)\s+(?P<kind>\S+)\s+(?P<ops>\S.*?)\s+"
    r"(?P<shape>\d+(?:x\d+)*)x(?P<dtype>[a-z]+\d*)\s+(?P<mflop>[\d.]+)\s+"
    r"(?P<kib>[\d.]+)\s+(?P<kernel>kiln_\w+)\s*$")


class ProfileError(Exception):
    pass


def parse_profile(path):
    """The model, batch, per-kernel table and per-launch report of a profile."""
    named = FILE_NAME.match(os.path.basename(path))
    if not named:
        raise ProfileError(f"{path}: the file name is not MODEL_bBATCH.txt")
    with open(path) as f:
        lines = f.read().splitlines()
    kernels, launches, runs, run_ms = {}, [], None, None
    alone, alone_repetitions = {}, None
    in_launches = False
    for number, line in enumerate(lines, 1):
        header = ALONE_HEADER.match(line)
        if header:
            alone_repetitions = int(header["repetitions"])
            continue
        row = ALONE_ROW.match(line) if alone_repetitions and not in_launches else None
        if row:
            alone[int(row["launch"])] = {"kernel": row["kernel"], "mean_ms": float(row["mean"])}
            continue
        if LAUNCH_HEADER.match(line):
            if in_launches or launches:
                raise ProfileError(f"{path}:{number}: a second 'kiln kernels of @forward'")
            in_launches = True
            continue
        if in_launches:
            row = LAUNCH_ROW.match(line)
            if row:
                launches.append({
                    "index": int(row["index"]), "kind": row["kind"],
                    "ops": [op.strip() for op in row["ops"].split(",")],
                    "shape": tuple(int(d) for d in row["shape"].split("x")),
                    "dtype": row["dtype"], "mflop": float(row["mflop"]),
                    "bytes": float(row["kib"]) * 1024, "kernel": row["kernel"]})
            elif launches and not line.lstrip().startswith("#"):
                in_launches = False  # the report's closing totals
            continue
        row = KERNEL_ROW.match(line)
        if row:
            # total / calls rather than the printed mean: the mean has 4
            # decimals of a millisecond, 1-2% of the smallest kernels.
            calls = int(row["calls"])
            kernels[row["name"]] = {"kind": row["kind"], "calls": calls,
                                    "mean_ms": float(row["total"]) / calls if calls
                                    else float(row["mean"])}
            continue
        row = RUNS_ROW.match(line)
        if row:
            runs, run_ms = int(row["runs"]), float(row["ms"])
    if not kernels:
        raise ProfileError(f"{path}: no per-kernel table (kiln-run --profile's "
                           "'kiln_...  kind  calls  total ms  mean ms  % run' rows)")
    if not launches:
        raise ProfileError(f"{path}: no per-launch report ('kiln kernels of @forward' "
                           "followed by '#  kind  ops  result  MFLOP  KiB moved  kernel' rows)")
    for launch in launches:
        if launch["kernel"] not in kernels:
            raise ProfileError(f"{path}: launch {launch['index']}'s kernel {launch['kernel']} "
                               "is not in the per-kernel table")
    if runs:
        # A kernel's calls are its launches times the runs: otherwise the
        # report and the profile are of different compiles.
        per_kernel = {}
        for launch in launches:
            per_kernel[launch["kernel"]] = per_kernel.get(launch["kernel"], 0) + 1
        odd = [name for name, count in per_kernel.items()
               if kernels[name]["calls"] != count * runs]
        if odd:
            print(f"warning: {path}: calls of {', '.join(odd[:3])} are not their launches "
                  f"times {runs} runs: is the report of the profiled compile?", file=sys.stderr)
    if alone:
        # Each launch's own time (kiln-run --time-launches), where the
        # profile's is its kernel's mean inside the model.
        for launch in launches:
            timed = alone.get(launch["index"])
            if not timed or timed["kernel"] != launch["kernel"]:
                raise ProfileError(f"{path}: launch {launch['index']} is not timed alone as "
                                   f"{launch['kernel']}: is the report of the profiled compile?")
            launch["alone_ms"] = timed["mean_ms"]
    return {"model": named["model"], "batch": int(named["batch"]), "kernels": kernels,
            "launches": launches, "runs": runs, "run_ms": run_ms,
            "alone_repetitions": alone_repetitions}
