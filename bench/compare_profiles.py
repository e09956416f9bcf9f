#!/usr/bin/env python3
"""Two profiles of one model, launch by launch: which launches a kernel
choice made faster and which slower.

    compare_profiles.py BEFORE/MODEL_bB.txt AFTER/MODEL_bB.txt [--top 15]
                        [--markdown OUT.md]

Each file is `kiln-run --profile`'s output with kiln-compile's per-launch
report after it, as `models_vs_torch.py --profile --raw-dir` writes them;
the two are compiles of the same model and batch that differ in a
selection flag (`--kiln-flag=--gemm-gemv-rows=32`), so their launches are
the same groups in the same order, each timed by the mean device time of
its kernel (or, where both profiles have them, by the launches timed
alone: kiln-run --time-launches). Launches whose ops or result differ between the two are not
the same group: the comparison is refused, naming the first such launch.

Prints the launches by how much they changed (the --top largest either
way), each with its kind, ops, result, both means in µs, the ratio and
whether its kernel changed (kernels are named by a hash of their source,
so the same name in both compiles is the same kernel), and the sums over
all launches, by kind, and apart for the launches whose kernel changed and
those whose kernel did not: what the latter moved is run-to-run noise,
the yardstick for the former (launches timed alone moved up to 30% on
unchanged kernels between two runs on an H100, 2026-12-05).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kiln_profile import ProfileError, parse_profile  # noqa: E402


def launch_us(profile, launch, alone):
    """The launch timed alone (kiln-run --time-launches) when both profiles
    have it, else its kernel's mean inside the model."""
    if alone:
        return launch["alone_ms"] * 1e3
    return profile["kernels"][launch["kernel"]]["mean_ms"] * 1e3


def paired_launches(before, after):
    """[(launch, before µs, after µs, same kernel)] in launch order;
    ProfileError when the two are not the same model and groups."""
    if (before["model"], before["batch"]) != (after["model"], after["batch"]):
        raise ProfileError(f"{before['model']} b{before['batch']} against "
                           f"{after['model']} b{after['batch']}: not the same model and batch")
    if len(before["launches"]) != len(after["launches"]):
        raise ProfileError(f"{len(before['launches'])} launches against "
                           f"{len(after['launches'])}: not the same groups")
    alone = bool(before.get("alone_repetitions") and after.get("alone_repetitions"))
    pairs = []
    for first, second in zip(before["launches"], after["launches"]):
        if (first["ops"], first["shape"], first["dtype"]) != (
                second["ops"], second["shape"], second["dtype"]):
            raise ProfileError(
                f"launch {first['index']}: {', '.join(first['ops'])} -> {describe(first)} "
                f"against {', '.join(second['ops'])} -> {describe(second)}: not the same group")
        pairs.append((first, launch_us(before, first, alone), launch_us(after, second, alone),
                      first["kernel"] == second["kernel"]))
    return pairs


def describe(launch):
    return "x".join(str(d) for d in launch["shape"]) + launch["dtype"]


def report(pairs, top):
    lines = ["| launch # | kind | ops | result | before µs | after µs | after/before | kernel |",
             "|---|---|---|---|---|---|---|---|"]
    changed = sorted(pairs, key=lambda p: abs(p[2] - p[1]), reverse=True)[:top]
    for launch, first, second, same in sorted(changed, key=lambda p: p[0]["index"]):
        lines.append(f"| {launch['index']} | {launch['kind']} | {', '.join(launch['ops'])} | "
                     f"{describe(launch)} | {first:.1f} | {second:.1f} | "
                     f"{second / first if first else float('inf'):.2f}x | "
                     f"{'same' if same else 'changed'} |")
    total_before = sum(p[1] for p in pairs)
    total_after = sum(p[2] for p in pairs)
    lines += ["", f"- all {len(pairs)} launches: {total_before:.1f} -> {total_after:.1f} µs "
                  f"({total_after - total_before:+.1f})"]
    for same, what in ((False, "whose kernel changed"),
                       (True, "whose kernel is the same (run-to-run noise)")):
        group = [p for p in pairs if p[3] == same]
        first = sum(p[1] for p in group)
        second = sum(p[2] for p in group)
        lines.append(f"- {len(group)} launches {what}: {first:.1f} -> {second:.1f} µs "
                     f"({second - first:+.1f})")
    kinds = {}
    for launch, first, second, _ in pairs:
        sums = kinds.setdefault(launch["kind"], [0, 0.0, 0.0])
        sums[0] += 1
        sums[1] += first
        sums[2] += second
    for kind, (count, first, second) in sorted(kinds.items()):
        lines.append(f"- {kind}: {count} launches, {first:.1f} -> {second:.1f} µs "
                     f"({second - first:+.1f})")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--top", type=int, default=15,
                        help="launches shown, the largest changes either way (default 15)")
    parser.add_argument("--markdown", help="also write the table as Markdown")
    args = parser.parse_args()
    try:
        pairs = paired_launches(parse_profile(args.before), parse_profile(args.after))
    except (OSError, ProfileError) as error:
        print(f"compare_profiles: {error}", file=sys.stderr)
        return 1
    text = report(pairs, args.top)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"{args.before} -> {args.after}\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
