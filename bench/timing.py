"""Timing of kiln's kernels and PyTorch's calls on the GPU, shared by the
kernel benchmarks.

Both sides are timed alike: the mean device time of back-to-back calls
replayed from one CUDA graph between two CUDA events (kiln: kiln-run
--time-launches, each of the artifact's launches repeated in a graph of its
own, summed; PyTorch: graph_ms). kiln's plain stream launches (kiln-run
--bench) are reported beside it: plain launches may leave gaps between
kernels that a graph replay does not, and set against a vendor kernel
replayed from a graph they would count those gaps against kiln alone. A single
synchronized call between events would add the launch and Python's
dispatch to PyTorch's figure alone.
"""
import collections
import json
import os
import re
import subprocess
import time

import numpy as np
import torch

METHOD = ("mean device time per call of back-to-back calls between two CUDA events "
          "(both sides)")


def back_to_back_ms(fn, launches=100, warmup=10):
    """Mean device time per call of `fn` over `launches` calls issued back
    to back between two CUDA events, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(launches):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / launches


GRAPH_METHOD = ("mean device time per call of back-to-back calls replayed from one CUDA "
                "graph between two CUDA events")


def graph_ms(fn, launches=100, replays=5, warmup=3):
    """Mean device time per call of `fn`, `launches` calls captured in one
    CUDA graph and replayed `replays` times between two CUDA events. Where
    a call takes less GPU time than Python takes to issue it (small
    convolutions: ~20 us of dispatch), back_to_back_ms measures the
    dispatch; the graph issues the kernels back to back."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up (autotuning) off the capture
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / (launches * replays)


VENDOR_METHOD = ("both sides: " + GRAPH_METHOD + " (kiln: kiln-run --time-launches, each launch "
                 "of the artifact in a graph of its own, summed; kiln's plain stream launches, "
                 "kiln-run --bench, beside it)")


def median_ms(fn, runs):
    """Median wall time of `runs` synchronous calls of `fn` after ten
    warm-up calls: how a whole model is timed (kiln-run --bench's "wall per
    run" measures kiln the same way)."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]


KilnTimes = collections.namedtuple("KilnTimes", "ms plain_ms rel_l2 verdict")


def kiln_run_times(report):
    """(graph ms, plain ms, rel L2, "ok" or "FAIL") from kiln-run's --json
    report of a run with --check, --bench and --time-launches: the graph
    time is the sum of the launches' times alone (one launch in the
    kernel benchmarks' artifacts)."""
    alone = report.get("launches_alone", {}).get("launches", [])
    bench = report.get("bench", {})
    if not alone or "plain_launches_ms" not in bench:
        raise RuntimeError("kiln-run's report has no launch times (--bench and --time-launches)")
    checks = report.get("checks", [])
    rel_l2 = max((float(c["rel_l2"]) for c in checks), default=float("nan"))
    verdict = "ok" if checks and all(c["pass"] for c in checks) else "FAIL"
    return KilnTimes(sum(float(t["mean_ms"]) for t in alone), float(bench["plain_launches_ms"]),
                     rel_l2, verdict)


def kiln_timed_run(bin_dir, artifact, feeds, reference, launches, extra=()):
    """Runs kiln-run on `artifact` with input `feeds` (kiln-run --input
    arguments), checked against the .npy `reference`, timed both ways
    (KilnTimes); `extra` are more kiln-run flags (a --tolerance). kiln-run's
    report lands beside `reference`."""
    report_path = os.path.join(os.path.dirname(reference), "kiln-run.json")
    if os.path.exists(report_path):  # a report from an earlier run is no answer
        os.remove(report_path)
    out = subprocess.run([f"{bin_dir}/kiln-run", artifact, *feeds, "--check", reference, *extra,
                          "--bench", str(launches), "--time-launches", str(launches),
                          "--json", report_path], capture_output=True, text=True)
    try:
        with open(report_path) as f:
            report = json.load(f)
        return kiln_run_times(report)
    except (OSError, ValueError, RuntimeError):
        text = out.stdout + out.stderr
        raise RuntimeError(f"kiln-run on {artifact}: {text.strip()[-400:]}") from None


def kiln_checked_ms(bin_dir, artifact, folder, inputs, reference, launches, extra=()):
    """kiln-run's times of `artifact` on `inputs` (input name -> CPU tensor,
    saved into `folder`), checked against `reference`: (KilnTimes, a
    function that runs and times it again on the saved files)."""
    os.makedirs(folder, exist_ok=True)
    feeds = []
    for name, value in inputs.items():
        np.save(os.path.join(folder, f"{name}.npy"), value.numpy())
        feeds += ["--input", f"{name}={folder}/{name}.npy"]
    np.save(os.path.join(folder, "ref.npy"), reference.numpy())

    def again():
        return kiln_timed_run(bin_dir, artifact, feeds, f"{folder}/ref.npy", launches, extra)
    return again(), again


def kiln_compiled(bin_dir, model, artifact, flags=()):
    """Compiles `model` into `artifact` with kiln-compile `flags`; returns the
    kernel configurations kiln-select-kernels chose (from the IR it prints
    with `-o -`)."""
    subprocess.run([f"{bin_dir}/kiln-compile", model, "-o", artifact, *flags], check=True,
                   capture_output=True, text=True)
    ir = subprocess.run([f"{bin_dir}/kiln-compile", model, "-o", "-", *flags], check=True,
                        capture_output=True, text=True).stdout
    return re.findall(r"#kiln\.kernel<([^>]*)>", ir)
