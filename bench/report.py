#!/usr/bin/env python3
"""Merges models_vs_torch.py JSON files into bench/RESULTS.md.

    report.py OUT.md RESULT.json... [KERNELS.md...]

Per model and batch: kiln's latency and the best PyTorch mode's (each the
median over the run's rounds, with the rounds' spread), the speedup (from
the medians), kiln's fraction of the roofline (FLOPs at 790 TFLOP/s against
bytes at 4.3 TB/s), the kernel count, compile times, device memory and the
check against PyTorch's fp32 result; then every PyTorch mode's time.

A row whose check failed shows FAIL in place of its speedup and counts in
no mean. The headline is the geometric mean of kiln's speedup over the best
PyTorch mode at each batch size over HEADLINE_MODELS; the small blocks are
listed apart. Later files win where two measure the same model and batch;
the speedups the earlier files measured are listed beside it, since
PyTorch's timings move between runs.
"""
import argparse
import json
import math
import os

# (key, label): a mode's median is row[key + "_ms"], its rounds
# row[key + "_ms_rounds"]. models_vs_torch.py measures them.
MODES = [("eager", "eager"), ("torchscript", "TorchScript"),
         ("compile_default", "torch.compile"),
         ("compile", "torch.compile reduce-overhead"),
         ("compile_max_autotune", "torch.compile max-autotune"),
         ("torchscript_cpp", "TorchScript C++"),
         ("torchscript_cpp_graph", "TorchScript C++ CUDA graph"),
         ("aoti", "AOTInductor C++"), ("aoti_graph", "AOTInductor C++ CUDA graph"),
         ("aoti_max_autotune", "AOTInductor max-autotune C++"),
         ("aoti_max_autotune_graph", "AOTInductor max-autotune C++ CUDA graph")]
# The modes a max-autotune supplement adds to a full run's rows.
SUPPLEMENT_MODES = {"compile_max_autotune", "aoti_max_autotune", "aoti_max_autotune_graph"}
# The models a deployment would serve; the one-layer GPT-2 block and the
# FFN are listed apart (they flatter a launch-bound comparison).
HEADLINE_MODELS = ["resnet50", "mobilenet_v3_large", "efficientnet_b0", "vit_b_16", "bert",
                   "gpt2"]


def load(paths):
    meta, rows, earlier, supplements, compiles, exported = {}, {}, {}, [], {}, {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        file_meta = data.get("meta", {}) if isinstance(data, dict) else {}
        data = data.get("rows", []) if isinstance(data, dict) else data
        # kiln given the torch.export archive (EXPORT=pt2): a table of its
        # own, beside the traced model's rows rather than in their place.
        pt2 = [row for row in data if row.get("export") == "pt2"]
        for row in pt2:
            row.setdefault("measured", file_meta.get("date", "-"))
            exported[(row["model"], row["batch"])] = row
        data = [row for row in data if row.get("export") != "pt2"]
        for row in data:
            # Files from before the benchmark emptied Inductor's and
            # Triton's caches for each build.
            row.setdefault("warm_peer_builds", not file_meta.get("cold_builds", False))
            if "kiln_compile_phases" in row:
                row.setdefault("measured", file_meta.get("date", "-"))
                compiles[(row["model"], row["batch"])] = row
        if file_meta.get("build_times"):
            # kiln's and PyTorch's build times alone (--build-times): the
            # compile-time table's rows (taken above), no timing; such a row
            # stands for PyTorch's builds of its model and batch too.
            continue
        if file_meta.get("kiln_only"):
            # kiln alone, no peers: its compile times only.
            continue
        if file_meta.get("supplement"):
            supplements.append((file_meta, data))
            continue
        meta.update(file_meta)
        for row in data:
            # Rows of several runs (and builds of kiln) share the table.
            row.setdefault("measured", file_meta.get("date", "-"))
            if row.get("kiln_tuning") and "kernel tuning" not in row["measured"]:
                # Compiled with a tuning file (models_vs_torch.py --kiln-tuning).
                row["measured"] += ", kernel tuning " + row["kiln_tuning"]
            key = (row["model"], row["batch"])
            if key in rows:
                earlier.setdefault(key, []).append(rows[key])
            rows[key] = row
    for file_meta, data in supplements:
        meta[f"{file_meta['supplement']} supplement"] = file_meta.get("date", "?")
        for row in data:
            key = (row["model"], row["batch"])
            if key in rows:
                merge_supplement(rows[key], row)
    return (meta, [rows[k] for k in sorted(rows)], earlier,
            [compiles[k] for k in sorted(compiles)], [exported[k] for k in sorted(exported)])


# kiln's run-to-run spread is about 1%: a supplement whose kiln time is
# further than this from the full run's ran another build of kiln.
SAME_BUILD_TOLERANCE = 0.05


def merge_supplement(base, extra):
    """Adds a supplement run's modes (models_vs_torch.py --only-max-autotune)
    to a full run's row. kiln ran in both runs: where it took the same time
    in both (the same build), each added mode's times are scaled by kiln's
    median in the full run over kiln's in the supplement, so that its ratio
    to kiln is the one measured in its own run. Where kiln's times differ (a
    different build), the modes' measured times are added as they are: the
    peers did not change. The measured times are kept beside them."""
    if "kiln_ms" not in base or "kiln_ms" not in extra or extra.get("check") != "ok":
        return
    scale = base["kiln_ms"] / extra["kiln_ms"]
    if abs(scale - 1) > SAME_BUILD_TOLERANCE:
        scale = 1.0
        base["supplement_other_build"] = True
    base["supplement_kiln_ms"] = extra["kiln_ms"]
    for key, _ in MODES:
        if key in SUPPLEMENT_MODES and mode_ms(extra, key) is not None:
            base[f"{key}_ms_measured"] = extra[f"{key}_ms"]
            base[f"{key}_ms"] = extra[f"{key}_ms"] * scale
            base[f"{key}_ms_rounds"] = [v * scale for v in extra.get(f"{key}_ms_rounds", [])]
            base[f"{key}_scaled"] = scale != 1.0
            base[f"{key}_separate"] = True
        for suffix in ("_rel_l2", "_error", "_compile_s"):
            if key in SUPPLEMENT_MODES and f"{key}{suffix}" in extra:
                base[f"{key}{suffix}"] = extra[f"{key}{suffix}"]
    for base_key in ("compile_max_autotune", "aoti_max_autotune"):
        for suffix in ("_error", "_compile_s"):
            if f"{base_key}{suffix}" in extra:
                base[f"{base_key}{suffix}"] = extra[f"{base_key}{suffix}"]


def mode_ms(row, key):
    """A mode's median over the rounds; older files have one figure."""
    value = row.get(f"{key}_ms")
    return value if isinstance(value, (int, float)) and not math.isnan(value) else None


# A peer held to kiln's own check: a mode whose output missed PyTorch's
# fp32 result by more than this cannot be the best.
PEER_TOLERANCE = 1e-2


def peer_failed(row, key):
    error = row.get(f"{key}_rel_l2")
    return isinstance(error, (int, float)) and not error <= PEER_TOLERANCE


def best_of(row):
    """The fastest PyTorch mode of a row whose output passed its check:
    (ms, label, key), or (nan, '-', None)."""
    measured = [(mode_ms(row, key), label, key) for key, label in MODES
                if mode_ms(row, key) is not None and not peer_failed(row, key)]
    return min(measured) if measured else (float("nan"), "-", None)


def build_seconds(row, key):
    """A mode's build time; a CUDA graph mode is built with its plain one."""
    if key is None:
        return None
    base = key[:-len("_graph")] if key.endswith("_graph") else key
    # Files before 2026-12 named reduce-overhead's "compile_s".
    return row.get(f"{base}_compile_s", row.get("compile_s") if base == "compile" else None)


def passed(row):
    """A row counts only if it was measured and its check passed."""
    return "error" not in row and "kiln_ms" in row and row.get("check") == "ok"


def speedup(row):
    """kiln's speedup over the best PyTorch mode, from the medians; None for
    a row that does not count."""
    if not passed(row):
        return None
    best_ms = best_of(row)[0]
    return None if math.isnan(best_ms) else best_ms / row["kiln_ms"]


def spread(row, key):
    """The median with the rounds' range: '1.234 (1.20-1.30)'."""
    median = mode_ms(row, key)
    if median is None:
        return "-"
    rounds = row.get(f"{key}_ms_rounds") or []
    if len(rounds) > 1:
        return f"{median:.3f} ({min(rounds):.3f}-{max(rounds):.3f})"
    return f"{median:.3f}"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


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


COMPILE_PHASES = [("process start", "start"),
                  ("load, specialize and import", "import"), ("graph passes", "passes"),
                  ("code generation, kernels and artifact", "kernels and artifact"),
                  ("write", "write")]
# The bar: a cold compile (empty kernel cache) within 3 s, and within a
# third of torch.compile's.
COMPILE_BUDGET_S = 3.0


def compile_times(compiles, rows):
    """kiln-compile's cold compile per model, by phase, beside torch.compile's
    (reduce-overhead) and AOTInductor's build times: from the same run where
    it built them (--build-times), else from the full run of the same model
    and batch."""
    if not compiles:
        return []
    full = {(r["model"], r["batch"]): r for r in rows}
    lines = ["", "## Compile time", "",
             "kiln-compile's wall time from process start to the artifact, kernel cache "
             f"empty, and its phases (kiln-compile -v); torch.compile's and AOTInductor's "
             f"build times are from the same run, from empty caches, where it built them, "
             f"else from the full run of the same model and batch. The bar: "
             f"{COMPILE_BUDGET_S:g} s and a third of torch.compile's. kiln's artifact "
             f"carries sm_90a and sm_80 images; torch.compile builds for the GPU it runs on, "
             f"as `kiln-compile --arch native` does (its seconds and ratio in the column "
             f"after, where measured). torch.compile is timed in a Python process that has "
             f"imported torch and Inductor and built one model before; kiln-compile's "
             f"seconds include its process's start, LibTorch's static initialization "
             f"(about 0.2 s) among it. The like for like is kiln compiling at load time "
             f"(kiln/compile.h) in a process that has compiled one model before "
             f"(test/api/CompileTimes.cpp): its seconds and ratio, for both targets and "
             f"for this GPU alone, in the two columns after.", "",
             "| model | batch | kiln s | " + " | ".join(l for _, l in COMPILE_PHASES) +
             " | kernel images | torch.compile s | kiln / torch.compile "
             "| kiln --arch native s (/ torch.compile) "
             "| kiln in process s (/ torch.compile) | kiln in process, native s (/ torch.compile) "
             "| AOTInductor s | measured |",
             "|---|---|---|" + "---|" * len(COMPILE_PHASES) + "---|---|---|---|---|---|---|---|"]
    warm = False
    for row in compiles:
        phases = row["kiln_compile_phases"]
        peer = full.get((row["model"], row["batch"]), {})
        torch_row = row if "compile_compile_s" in row else peer
        aoti_row = row if "aoti_compile_s" in row else peer
        torch_s = torch_row.get("compile_compile_s")
        ratio = (f"{row['kiln_compile_s'] / torch_s:.2f}"
                 if torch_s and "kiln_compile_s" in row else "-")
        def built(text, source):
            """A peer's build time (or kiln's ratio to it), marked where the
            peer's caches may have been warm."""
            return text + "‡" if text != "-" and source.get("warm_peer_builds") else text
        def against_torch(seconds):
            """kiln's seconds and their ratio to torch.compile's."""
            return (f"{seconds:.2f}" + (f" ({seconds / torch_s:.2f})" if torch_s else "")
                    if seconds else "-")
        cells = [built(fmt(torch_s, ".1f"), torch_row), built(ratio, torch_row),
                 against_torch(row.get("kiln_native_compile_s")),
                 built(against_torch(row.get("kiln_in_process_s")), torch_row),
                 built(against_torch(row.get("kiln_in_process_native_s")), torch_row),
                 built(fmt(aoti_row.get("aoti_compile_s"), ".1f"), aoti_row)]
        warm = warm or any(cell.endswith("‡") for cell in cells)
        lines.append(f"| {row['model']} | {row['batch']} | {fmt(row.get('kiln_compile_s'), '.2f')} | "
                     + " | ".join(fmt(phases.get(key), ".2f") for key, _ in COMPILE_PHASES)
                     + f" | {row.get('kiln_images_compiled', '-')} | " + " | ".join(cells)
                     + f" | {row.get('measured', '-')} |")
    if warm:
        lines += ["", "‡ Built with Inductor's and Triton's caches as earlier rows and runs "
                      "on the machine left them (the benchmark empties them for each build "
                      "since 2026-12-02 23:00 UTC): perhaps not a cold build, so kiln's ratio "
                      "to it errs against kiln."]
    return lines


def error_line(row, trailing):
    """A row whose kiln run failed: its error where the check goes, FAIL as
    its speedup, `trailing` empty cells, then when it was measured."""
    return (f"| {row['model']} | {row['batch']} | error: {row.get('error', '?')} | | | | FAIL |"
            + " |" * trailing + f" {row.get('measured', '-')} |")


def speed_cells(row):
    """The cells both model tables share after the model and batch: the
    check, kiln's time, the best PyTorch mode, its time and the speedup."""
    _, best, best_key = best_of(row)
    value = speedup(row)
    check = f"{row['rel_l2']:.1e} {row['check']}" if "rel_l2" in row else row.get("check", "?")
    return (f"{check} | {spread(row, 'kiln')} | {best} | "
            f"{spread(row, best_key) if best_key else '-'} | "
            f"{f'{value:.2f}x' if value is not None else 'FAIL'}")


def from_pt2(exported, rows):
    """The zoo compiled from torch.export archives: kiln's time against the
    best PyTorch mode of the same run, its kernels beside the traced
    model's, and the compile's import phase (where the two frontends
    differ)."""
    if not exported:
        return []
    traced = {(r["model"], r["batch"]): r for r in rows}
    lines = ["", "## From torch.export archives (.pt2)", "",
             "kiln given the `torch.export.save` archive of the same fp32 model "
             "(`EXPORT=pt2 scripts/gpu-bench.sh`), every PyTorch mode timed in the same run; "
             "kernels from the traced model (`.pt`) beside it.", "",
             "| model | batch | check | kiln ms | best PyTorch | its ms | speedup | kernels "
             "| kernels from .pt | kiln compile s | import s | measured |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in exported:
        if "error" in row or "kiln_ms" not in row:
            lines.append(error_line(row, 4))
            continue
        phases = row.get("kiln_compile_phases", {})
        lines.append(
            f"| {row['model']} | {row['batch']} | {speed_cells(row)} | {row.get('kernels', '-')} | "
            f"{traced.get((row['model'], row['batch']), {}).get('kernels', '-')} | "
            f"{fmt(row.get('kiln_compile_s'), '.1f')} | "
            f"{fmt(phases.get('load, specialize and import'), '.2f')} | "
            f"{row.get('measured', '-')} |")
    return lines


def fmt(value, spec):
    return format(value, spec) if isinstance(value, (int, float)) and not (
        isinstance(value, float) and math.isnan(value)) else "-"


def headline(rows):
    """The geometric means per batch over HEADLINE_MODELS, saying which rows
    they average and which they could not; the small blocks apart."""
    lines = []
    for batch in sorted({row["batch"] for row in rows}):
        by_model = {row["model"]: row for row in rows if row["batch"] == batch}
        counted = [(m, speedup(by_model[m])) for m in HEADLINE_MODELS
                   if m in by_model and speedup(by_model[m]) is not None]
        left_out = [f"{m} ({'check FAIL' if m in by_model and 'kiln_ms' in by_model[m] else 'not measured'})"
                    for m in HEADLINE_MODELS if m not in dict(counted)]
        if counted:
            text = (f"**Batch {batch}: {geomean([s for _, s in counted]):.2f}x**, the geometric "
                    f"mean of kiln's speedup over the best PyTorch mode on "
                    f"{', '.join(m for m, _ in counted)}")
        else:
            text = f"**Batch {batch}: no headline model measured with a passing check**"
        text += f"; left out: {', '.join(left_out)}." if left_out else "."
        small = [f"{m} {speedup(r):.2f}x" if speedup(r) is not None else f"{m} FAIL"
                 for m, r in sorted(by_model.items()) if m not in HEADLINE_MODELS]
        if small:
            text += f" Small blocks, not in the mean: {', '.join(small)}."
        lines.append(text)
        lines.append("")
    return lines


def main(out, paths):
    # Markdown files (bench/gemm_vs_torch.py --markdown: kernels against the
    # vendor libraries) are appended as they are.
    tables = [p for p in paths if p.endswith(".md")]
    meta, rows, earlier, compiles, exported = load([p for p in paths if not p.endswith(".md")])
    lines = ["# kiln against PyTorch on the H200", ""]
    facts = ", ".join(f"{k} {v}" for k, v in sorted(meta.items()))
    if facts:
        lines += [f"Setup (the latest run's): {facts}.", ""]
    lines += ["Every time is the median wall time of synchronous calls with device-resident "
              "inputs, over the run's rounds (in brackets: the rounds' range); the rounds "
              "alternate kiln and the peers. A row whose check against PyTorch's fp32 result "
              "failed shows FAIL and counts in no mean.", ""]
    lines += headline(rows)
    lines += ["| model | batch | check | kiln ms | best PyTorch | its ms | speedup | roofline "
              "| kernels | kiln compile s | best mode's build s | kiln MiB | PyTorch MiB "
              "| earlier runs (their own peers) | measured |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row or "kiln_ms" not in row:
            lines.append(error_line(row, 7))
            continue
        best_key = best_of(row)[2]
        before = []
        for old in earlier.get((row["model"], row["batch"]), []):
            if "kiln_ms" in old:
                ms = best_of(old)[0]
                value = speedup(old)
                before.append(f"{value:.2f}x ({old['kiln_ms']:.3f} vs {ms:.3f})"
                              if value is not None else f"FAIL ({old.get('rel_l2', '?')})")
        lines.append(
            f"| {row['model']} | {row['batch']} | {speed_cells(row)} | "
            f"{fmt(100 * row['roofline_fraction'], '.1f') + '%' if 'roofline_fraction' in row else '-'} | "
            f"{row.get('kernels', '-')} | {fmt(row.get('kiln_compile_s'), '.1f')} | "
            f"{fmt(build_seconds(row, best_key), '.1f')} | {fmt(row.get('kiln_mib'), '.0f')} | "
            f"{fmt(row.get('eager_peak_mib'), '.0f')} | {', '.join(before) or '-'} | "
            f"{row.get('measured', '-')} |")
    lines += ["", "## Every PyTorch mode", "",
              "Median ms over the rounds; C++ modes run from a C++ process "
              "(bench/peers), as kiln does; '-' where the mode was not run, 'error' where it "
              "failed (the JSON has why). A C++ mode's output is checked like kiln's; one "
              f"past rel L2 {PEER_TOLERANCE:g} is marked and cannot be the best."]
    if any(r.get(f"{key}_scaled") for r in rows for key in SUPPLEMENT_MODES):
        lines += ["", "\\* Measured in a separate run beside kiln (the max-autotune "
                  "supplement), then scaled by kiln's time here over kiln's time in that run: "
                  "its ratio to kiln is the one measured in its own run."]
    if any(r.get("supplement_other_build") for r in rows):
        lines += ["", "† Measured in a separate run beside an earlier build of kiln (the "
                  "max-autotune supplement): the time as measured, not scaled."]
    lines += [""]
    present = [(key, label) for key, label in MODES
               if any(mode_ms(r, key) is not None or f"{key}_error" in r for r in rows)]
    lines += ["| model | batch | kiln | " + " | ".join(label for _, label in present) + " |",
              "|---|---|---|" + "---|" * len(present)]
    for row in rows:
        cells = []
        for key, _ in present:
            ms = mode_ms(row, key)
            cells.append((f"{ms:.3f}" + ("*" if row.get(f"{key}_scaled") else
                                          "†" if row.get(f"{key}_separate") else "")
                          + (" (check FAIL)" if peer_failed(row, key) else ""))
                         if ms is not None else "error" if f"{key}_error" in row else "-")
        lines.append(f"| {row['model']} | {row['batch']} | {fmt(row.get('kiln_ms'), '.3f')} | "
                     + " | ".join(cells) + " |")
    for table in tables:
        with open(table) as f:
            lines += ["", f"## Kernels against the vendor libraries ({table})", "",
                      f.read().strip()]
    lines += compile_times(compiles, rows)
    lines += from_pt2(exported, rows)
    lines += where_time_goes(rows)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Merges models_vs_torch.py JSON files (and kernel tables in "
                    "Markdown) into one results page; later files win.")
    parser.add_argument("out", help="the Markdown file to write (bench/RESULTS.md)")
    parser.add_argument("inputs", nargs="+", metavar="RESULT",
                        help="models_vs_torch.py JSON files and gemm/conv Markdown tables")
    args = parser.parse_args()
    if not args.out.endswith(".md"):
        parser.error(f"{args.out}: the output must be a Markdown file (.md)")
    missing = [p for p in args.inputs if not os.path.isfile(p)]
    if missing:
        parser.error("no such file: " + ", ".join(missing))
    main(args.out, args.inputs)
