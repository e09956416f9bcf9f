#!/usr/bin/env python3
"""Each layer's Hopper GEMM or convolution tile, measured: a tuning file.

    tune_layers.py BIN_DIR WORK_DIR --model resnet50 --batch 32
                   [--candidates 8] [--setting "" --setting "--wgmma-residual-ring=false"]
                   [--rounds 2] [--repetitions 100] [--min-gain 0.03]
                   --out tuning.json [--markdown tuning.md]

On the GPU machine. The selection stage's cost model picks one tile a
layer from a formula; where two tiles are close it can pick the slower one,
and one knob set for the whole model (`--wgmma-schedule`, `--wgmma-rows`)
trades one layer's gain for another's loss. Here every layer gets the
fastest of the tiles the cost model considered, timed on the GPU:

1. The model is exported as models_vs_torch.py exports it (its inputs in
   fp16, PyTorch's fp32 reference).
2. For each setting (kiln-compile flags; "" is the defaults) and each
   N < --candidates, kiln-compile --wgmma-candidate=N gives every Hopper
   GEMM and convolution its N-th candidate tile at once, and
   kiln-compile's report names each launch's tuning key and
   configuration. kiln-run --time-launches times each launch alone.
   Variants are interleaved and repeated --rounds times.
3. Per tuning key (a layer, wherever it repeats in the model): the median
   of each configuration's times; the default's (the first setting's
   candidate 0) against the fastest. Only a gain of --min-gain (3%) and
   0.3 us over the default is taken: launches timed alone move by a few
   percent from one process to the next.
4. The tuning file keeps the winners (kiln-compile --kernel-tuning reads
   it); then the model compiled with it is checked against PyTorch's fp32
   result and timed, launch by launch and whole (CUDA graph), against the
   default in the same run.

The file is valid for the architecture and multiprocessor count it was
measured on (kiln-apply-kernel-tuning refuses others) and for groups that
compute exactly what they computed here (the key is a hash of the group's
kind, types and body): the same layer in another model takes it too.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from settings_args import joined_settings  # noqa: E402

FORMAT = "kiln-kernel-tuning 1"


class TuningError(Exception):
    pass


def pair_launches(report, alone):
    """kiln-compile's --report-json (one function) and kiln-run's
    launches_alone rows, launch by launch: [{key, config, ops, result,
    kernel, ms}] for the fusion groups that have a configuration. The two
    must be of one compile: each launch's kernel named the same."""
    functions = report.get("functions", [])
    if len(functions) != 1:
        raise TuningError(f"the report has {len(functions)} functions; one expected")
    kernels = functions[0]["kernels"]
    if len(kernels) != len(alone):
        raise TuningError(f"the report has {len(kernels)} launches, kiln-run timed "
                          f"{len(alone)}: not one compile")
    launches = []
    for index, (kernel, timed) in enumerate(zip(kernels, alone)):
        if kernel.get("kernel") != timed["kernel"]:
            raise TuningError(f"launch {index}: the report's kernel {kernel.get('kernel')} is "
                              f"not the timed {timed['kernel']}: not one compile")
        if not kernel.get("tuning_key") or not kernel.get("kernel_config"):
            continue
        launches.append({"key": kernel["tuning_key"], "config": kernel["kernel_config"],
                         "ops": ", ".join(kernel["ops"]), "result": kernel["result"],
                         "kernel": timed["kernel"], "ms": float(timed["mean_ms"])})
    return launches


def default_configs(report):
    """Each tuning key's configuration in a compile's report."""
    return {kernel["tuning_key"]: kernel["kernel_config"]
            for function in report.get("functions", []) for kernel in function["kernels"]
            if kernel.get("tuning_key") and kernel.get("kernel_config")}


def add_samples(samples, launches, variant):
    """Pools each launch's time under its key and configuration (a layer
    that repeats, ResNet-50's blocks, adds a sample a repetition)."""
    for launch in launches:
        layer = samples.setdefault(launch["key"], {"ops": launch["ops"],
                                                   "result": launch["result"],
                                                   "launches": set(), "configs": {}})
        layer["launches"].add(launch["kernel"])
        entry = layer["configs"].setdefault(launch["config"], {"ms": [], "variants": set()})
        entry["ms"].append(launch["ms"])
        entry["variants"].add(variant)


def choose(samples, defaults, min_gain=0.03, min_us=0.3):
    """Per key, the default configuration's median against the fastest
    one's: [{key, ops, result, kernel, us, default, default_us, taken}],
    slowest default first. `defaults` maps each key to its configuration
    under the defaults; a key without one (not compiled by the default) is
    left out."""
    rows = []
    for key, layer in samples.items():
        default = defaults.get(key)
        if default is None or default not in layer["configs"]:
            continue
        medians = {config: statistics.median(entry["ms"]) * 1e3
                   for config, entry in layer["configs"].items()}
        best = min(medians, key=lambda config: (medians[config], config != default))
        default_us = medians[default]
        gain = default_us - medians[best]
        taken = best != default and gain >= max(min_gain * default_us, min_us)
        rows.append({"key": key, "ops": layer["ops"], "result": layer["result"],
                     "kernel": best if taken else default,
                     "us": round(medians[best] if taken else default_us, 3),
                     "default": default, "default_us": round(default_us, 3),
                     "best": best, "best_us": round(medians[best], 3),
                     "configs": len(medians), "taken": taken})
    rows.sort(key=lambda row: -row["default_us"])
    return rows


def confirm(rows, default_runs, tuned_runs, min_gain=0.03, min_us=0.3):
    """The taken rows measured again, in the default and the tuned model
    side by side (each run: pair_launches's launches of one kiln-run): a
    layer keeps its configuration only where the tuned model's launches of
    it beat the default model's by the same margin as in the sweep (a
    sweep's winner can be its noise). Returns the rows, with the ones not
    confirmed back on the default, and a line for each taken row."""
    def medians(runs):
        times = {}
        for launches in runs:
            for launch in launches:
                times.setdefault(launch["key"], []).append(launch["ms"] * 1e3)
        return {key: statistics.median(values) for key, values in times.items()}
    before, after = medians(default_runs), medians(tuned_runs)
    lines = []
    for row in rows:
        if not row["taken"]:
            continue
        key = row["key"]
        if key not in before or key not in after:
            raise TuningError(f"layer {key} ({row['ops']}) is not in both models' launches")
        gain = before[key] - after[key]
        kept = gain >= max(min_gain * before[key], min_us)
        lines.append(f"{row['ops']}, {row['result']}: {before[key]:.1f} -> {after[key]:.1f} µs "
                     f"in the models side by side ({row['default_us']:.1f} -> {row['us']:.1f} "
                     f"in the sweep): {'kept' if kept else 'not confirmed, left to the cost model'}")
        if not kept:
            row.update(taken=False, kernel=row["default"], us=row["default_us"])
    return rows, lines


def tuning_document(rows, arch, multiprocessors, measured):
    """The tuning file: the rows whose fastest configuration was taken."""
    groups = [{"key": row["key"], "kernel": row["kernel"], "ops": row["ops"],
               "result": row["result"], "us": row["us"], "default_us": row["default_us"]}
              for row in rows if row["taken"]]
    return {"format": FORMAT, "arch": arch, "multiprocessors": multiprocessors,
            "measured": measured, "groups": groups}


def markdown(rows, title):
    lines = [f"### {title}", "",
             "| layer (ops, result) | default µs | fastest µs | taken | fastest configuration "
             "| candidates |", "|---|---|---|---|---|---|"]
    for row in rows:
        config = re.sub(r"^#kiln\.kernel<(.*)>$", r"\1", row["best"])
        lines.append(f"| {row['ops']}, {row['result']} | {row['default_us']:.1f} | "
                     f"{row['best_us']:.1f} | {'yes' if row['taken'] else 'no'} | "
                     f"{config} | {row['configs']} |")
    taken = [row for row in rows if row["taken"]]
    lines += ["", f"{len(taken)} of {len(rows)} layers take another configuration; their "
              f"launches alone: {sum(r['default_us'] for r in taken):.1f} -> "
              f"{sum(r['us'] for r in taken):.1f} µs (a layer counted once, however often "
              "it repeats)."]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bin")
    parser.add_argument("work")
    parser.add_argument("--model", required=True)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--setting", action="append", default=[],
                        help="kiln-compile flags, space-separated; the first is the baseline "
                             "(default: one setting, the defaults)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--min-gain", type=float, default=0.03)
    parser.add_argument("--runs", type=int, default=50, help="whole-model runs timed at the end")
    parser.add_argument("--out", required=True)
    parser.add_argument("--markdown")
    args = parser.parse_args(joined_settings(sys.argv[1:]))
    settings = args.setting or [""]

    import models_vs_torch as zoo  # torch: only where the model is exported
    import torch

    work = os.path.join(args.work, f"{args.model}_b{args.batch}")
    os.makedirs(work, exist_ok=True)
    _, _, _, names, _, references = zoo.export_for_kiln(args.model, args.batch, work)
    feeds = [arg for name in names for arg in ("--input", f"{name}={work}/{name}.npy")]
    properties = torch.cuda.get_device_properties(0)
    env = dict(os.environ, KILN_CACHE_DIR=os.path.join(args.work, "cache"))
    common = ["--precision", "fp16", "--io-dtype", "f16"]

    def compile_variant(name, flags):
        artifact = os.path.join(work, f"{name}.kiln")
        report = os.path.join(work, f"{name}.json")
        out = zoo.run([f"{args.bin}/kiln-compile", os.path.join(work, "model.pt"), *common,
                       *flags, "--report-json", report, "-o", artifact], env=env)
        if out.returncode != 0:
            print(f"{name} [{' '.join(flags)}]: compile error: "
                  f"{(out.stderr or out.stdout).strip().splitlines()[-1]}", flush=True)
            return None
        with open(report) as f:
            return artifact, json.load(f)

    def time_launches(artifact):
        timed = os.path.join(work, "alone.json")
        out = zoo.run([f"{args.bin}/kiln-run", artifact, *feeds, "--device-io",
                       "--time-launches", str(args.repetitions), "--json", timed], env=env)
        if out.returncode != 0:
            raise TuningError(f"kiln-run {artifact}: {(out.stderr or out.stdout).strip()[-300:]}")
        with open(timed) as f:
            return json.load(f)["launches_alone"]["launches"]

    variants = []
    for s, setting in enumerate(settings):
        for n in range(args.candidates):
            name = f"s{s}c{n}"
            compiled = compile_variant(name, setting.split() + [f"--wgmma-candidate={n}"])
            if compiled:
                variants.append((name, setting, n, *compiled))
    if not variants or variants[0][0] != "s0c0":
        raise TuningError("the baseline (the first setting's candidate 0) did not compile")
    defaults = default_configs(variants[0][4])
    # What the compiles' selection saw, which the tuning file must name.
    arch, multiprocessors = variants[0][4]["targets"][0], variants[0][4]["multiprocessors"]
    samples = {}
    for round_index in range(args.rounds):
        for name, setting, n, artifact, report in variants:
            launches = pair_launches(report, time_launches(artifact))
            add_samples(samples, launches, name)
            print(f"round {round_index + 1} {name} [{setting}] candidate {n}: "
                  f"{sum(l['ms'] for l in launches) * 1e3:.1f} µs over {len(launches)} launches",
                  flush=True)
    rows = choose(samples, defaults, args.min_gain)
    measured = (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on "
                f"{properties.name}, {args.model} batch {args.batch}, settings "
                f"{settings}, {args.candidates} candidates, {args.rounds} rounds")
    document = tuning_document(rows, arch, multiprocessors, measured)
    with open(args.out, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")
    table = markdown(rows, f"{args.model}, batch {args.batch} ({measured})")
    print(table)

    # The tuned model against the default, checked and timed side by side
    # (the order alternating by round, against drift in the GPU's clocks);
    # the layers whose gain does not hold there go back to the cost model.
    checks = [arg for path in references for arg in ("--check", path)]
    summary = []

    def side_by_side(tuned, rounds):
        default_runs, tuned_runs = [], []
        for round_index in range(rounds):
            order = [("default", variants[0][3], variants[0][4], default_runs),
                     ("tuned", *tuned, tuned_runs)]
            for label, artifact, report, runs in order[::1 - 2 * (round_index % 2)]:
                out = zoo.run([f"{args.bin}/kiln-run", artifact, *feeds, *checks, "--tolerance",
                               "1e-2", "--device-io", "--bench", str(args.runs)], env=env)
                text = out.stdout + out.stderr
                check = re.findall(r"^  check .*?: rel L2 ([0-9.e+-]+),.*?(ok|FAIL)$", text,
                                   re.M)
                if out.returncode != 0 or not check or any(v != "ok" for _, v in check):
                    raise TuningError(f"{label}: the check failed:\n{text.strip()[-600:]}")
                wall = re.search(r"CUDA graph ([0-9.]+) ms", text)
                runs.append(pair_launches(report, time_launches(artifact)))
                line = (f"round {round_index + 1} {label}: check "
                        f"{', '.join(f'{r} {v}' for r, v in check)}; launch plan as a CUDA "
                        f"graph {wall.group(1) if wall else '?'} ms; launches alone "
                        f"{sum(l['ms'] for l in runs[-1]) * 1e3:.1f} µs")
                print(line, flush=True)
                summary.append(line)
        return default_runs, tuned_runs

    if any(row["taken"] for row in rows):
        tuned = compile_variant("tuned", [f"--kernel-tuning={os.path.abspath(args.out)}"])
        if not tuned:
            raise TuningError("the model did not compile with its tuning file")
        sweep_taken = sum(row["taken"] for row in rows)
        rows, lines = confirm(rows, *side_by_side(tuned, 2), args.min_gain)
        confirmed = sum(row["taken"] for row in rows)
        for line in lines:
            print(line, flush=True)
        summary += lines
        document = tuning_document(rows, arch, multiprocessors, measured)
        with open(args.out, "w") as f:
            json.dump(document, f, indent=1)
            f.write("\n")
        if 0 < confirmed < sweep_taken:
            tuned = compile_variant("confirmed", [f"--kernel-tuning={os.path.abspath(args.out)}"])
            if not tuned:
                raise TuningError("the model did not compile with its confirmed tuning file")
            summary.append("the confirmed layers alone:")
            side_by_side(tuned, 2)
        table = markdown(rows, f"{args.model}, batch {args.batch} ({measured})")
    else:
        summary.append("no layer gained past the noise: the tuning file holds none")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n" + "\n".join(f"- {line}" for line in summary) + "\n")


if __name__ == "__main__":
    try:
        main()
    except TuningError as error:
        print(f"tune_layers.py: {error}", file=sys.stderr)
        sys.exit(1)
