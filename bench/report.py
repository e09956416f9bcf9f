#!/usr/bin/env python3
"""Merges models_vs_torch.py JSON files into bench/RESULTS.md.

    report.py OUT.md RESULT.json...

Per model and batch: kiln's latency, the best PyTorch mode and its latency,
the ratio, kiln's fraction of the roofline (FLOPs at 790 TFLOP/s against
bytes at 4.3 TB/s), the kernel count, compile times, device memory, and the
check against PyTorch's fp32 result. The headline is the geometric mean of
kiln's speedup over the best PyTorch mode, per batch size. Later files win
where two measure the same model and batch; the speedups the earlier files
measured are listed beside it, since PyTorch's timings move between runs.
"""
import json
import math
import sys

MODES = [("eager_ms", "eager"), ("torchscript_ms", "TorchScript"),
         ("compile_default_ms", "torch.compile"),
         ("compile_ms", "torch.compile reduce-overhead")]


def load(paths):
    meta, rows, earlier = {}, {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, dict):
            meta.update(data.get("meta", {}))
            data = data.get("rows", [])
        for row in data:
            key = (row["model"], row["batch"])
            if key in rows:
                earlier.setdefault(key, []).append(rows[key])
            rows[key] = row
    return meta, [rows[k] for k in sorted(rows)], earlier


def best_of(row):
    """The fastest PyTorch mode of a row: (ms, name), or (nan, '-')."""
    measured = [(row[key], name) for key, name in MODES if isinstance(row.get(key), float)
                and not math.isnan(row[key])]
    return min(measured) if measured else (float("nan"), "-")


def where_time_goes(rows):
    """Per model and batch with a profile (models_vs_torch.py --profile): the
    device time per run of each kernel kind beside that kind's roofline
    floor (its FLOPs at 790 TFLOP/s or its bytes at 4.3 TB/s, whichever is
    longer), and the slowest kernels."""
    lines = []
    for row in rows:
        kinds = row.get("profile_ms_by_kind")
        if not kinds:
            continue
        total = sum(kinds.values())
        lines += ["", f"### {row['model']}, batch {row['batch']}: where kiln's time goes "
                      f"(kiln-run --profile)", "",
                  "| kind | kernels | ms per run | share | roofline floor ms | fraction |",
                  "|---|---|---|---|---|---|"]
        report = row.get("report_by_kind", {})
        for kind, ms in sorted(kinds.items(), key=lambda item: -item[1]):
            entry = report.get(kind, {})
            floor = max(entry.get("mflop", 0) * 1e6 / 790e12,
                        entry.get("kib", 0) * 1024 / 4.3e12) * 1e3
            lines.append(f"| {kind} | {entry.get('kernels', '-')} | {ms:.3f} | "
                         f"{100 * ms / total:.0f}% | {floor:.4f} | "
                         f"{100 * floor / ms:.1f}% |" if ms else f"| {kind} | | | | | |")
        by_kernel = row.get("report_by_kernel", {})
        if by_kernel:
            # Runs whose report names the kernels: each beside its own floor.
            lines += ["", "| slowest kernels | ops | result | launches | us each | floor us "
                          "| fraction |", "|---|---|---|---|---|---|---|"]
            for k in row.get("profile_top", [])[:6]:
                entry = by_kernel.get(k["kernel"], {})
                floor_us = max(entry.get("mflop", 0) * 1e6 / 790e12,
                               entry.get("kib", 0) * 1024 / 4.3e12) * 1e6
                lines.append(f"| {k['kernel']} | {entry.get('ops', '?')} | "
                             f"{entry.get('result', '?')} | {k['launches_per_run']} | "
                             f"{k['mean_ms'] * 1e3:.1f} | {floor_us:.1f} | "
                             f"{100 * floor_us / (k['mean_ms'] * 1e3):.1f}% |")
            continue
        slowest = ", ".join(f"{k['kernel']} ({k['kind']}, {k['launches_per_run']}x, "
                            f"{k['mean_ms'] * 1e3:.1f} us)" for k in row.get("profile_top", [])[:4])
        if slowest:
            lines += ["", f"Slowest kernels: {slowest}."]
    return lines


def fmt(value, spec):
    return format(value, spec) if isinstance(value, (int, float)) and not (
        isinstance(value, float) and math.isnan(value)) else "-"


def main(out, paths):
    meta, rows, earlier = load(paths)
    lines = ["# kiln against PyTorch on the H200", ""]
    facts = ", ".join(f"{k} {v}" for k, v in sorted(meta.items()))
    if facts:
        lines += [f"Measured: {facts}.", ""]
    lines += ["| model | batch | kiln ms | best PyTorch | its ms | speedup | roofline | kernels "
              "| kiln compile s | torch.compile s | kiln MiB | PyTorch MiB | check "
              "| every PyTorch mode ms (eager / TorchScript / compile / reduce-overhead) "
              "| kiln ms with PDL | earlier runs |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    speedups = {}
    for row in rows:
        if "error" in row or "kiln_ms" not in row:
            lines.append(f"| {row['model']} | {row['batch']} | error: {row.get('error', '?')} "
                         "| | | | | | | | | | | | | |")
            continue
        best_ms, best = best_of(row)
        before = []
        for old in earlier.get((row["model"], row["batch"]), []):
            if "kiln_ms" in old:
                ms, name = best_of(old)
                before.append(f"{ms / old['kiln_ms']:.2f}x ({old['kiln_ms']:.3f} vs {ms:.3f})")
        speedup = best_ms / row["kiln_ms"]
        if not math.isnan(speedup):
            speedups.setdefault(row["batch"], []).append(speedup)
        compile_s = row.get("compile_s", row.get("compile_default_s"))
        lines.append(
            f"| {row['model']} | {row['batch']} | {row['kiln_ms']:.3f} | {best} | "
            f"{fmt(best_ms, '.3f')} | {fmt(speedup, '.2f')}x | "
            f"{fmt(100 * row['roofline_fraction'], '.1f') + '%' if 'roofline_fraction' in row else '-'} | "
            f"{row.get('kernels', '-')} | {fmt(row.get('kiln_compile_s'), '.1f')} | "
            f"{fmt(compile_s, '.1f')} | {fmt(row.get('kiln_mib'), '.0f')} | "
            f"{fmt(row.get('eager_peak_mib'), '.0f')} | {row['rel_l2']:.1e} {row['check']} | "
            f"{' / '.join(fmt(row.get(key), '.3f') for key, _ in MODES)} | "
            f"{fmt(row.get('kiln_pdl_ms'), '.3f')} | {', '.join(before) or '-'} |")
    lines.append("")
    for batch, values in sorted(speedups.items()):
        mean = math.exp(sum(math.log(v) for v in values) / len(values))
        lines.append(f"Geometric-mean speedup over the best PyTorch mode at batch {batch}: "
                     f"{mean:.2f}x ({len(values)} models).")
    lines += where_time_goes(rows)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
