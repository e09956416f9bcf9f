#!/usr/bin/env python3
"""A tuning file from two kiln-compile reports, through bench/tune_layers.py's
own choice and writer: made-up times in which every configuration of
TAKEN.json that differs from BASE.json's is twice as fast, so each such
group takes TAKEN's configuration.

    tuning_file.py OUT.json BASE.json TAKEN.json
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import tune_layers  # noqa: E402


def launches(report, ms):
    kernels = report["functions"][0]["kernels"]
    alone = [{"kernel": k["kernel"], "mean_ms": ms} for k in kernels]
    return tune_layers.pair_launches(report, alone)


def main():
    out, base_path, taken_path = sys.argv[1:]
    with open(base_path) as f:
        base = json.load(f)
    with open(taken_path) as f:
        taken = json.load(f)
    samples = {}
    tune_layers.add_samples(samples, launches(base, 0.010), "base")
    tune_layers.add_samples(samples, launches(taken, 0.005), "taken")
    rows = tune_layers.choose(samples, tune_layers.default_configs(base))
    document = tune_layers.tuning_document(rows, base["targets"][0], base["multiprocessors"],
                                           "made up by test/Frontend/tuning_file.py")
    with open(out, "w") as f:
        json.dump(document, f, indent=1)


if __name__ == "__main__":
    main()
