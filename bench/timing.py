"""Timing of PyTorch calls on the GPU, shared by the kernel benchmarks.

kiln's kernels are timed by `kiln-run --bench` as "plain launches": the mean
device time of back-to-back launches between two CUDA events. PyTorch's side
is timed here the same way, so the two columns of a kernel benchmark are
alike: a single synchronized call between events would add the launch and
Python's dispatch to PyTorch's figure alone.
"""
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


VENDOR_METHOD = ("kiln: mean device time per launch of back-to-back launches between two CUDA "
                 "events (kiln-run --bench); PyTorch: " + GRAPH_METHOD)


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


def kiln_checked_ms(bin_dir, artifact, folder, inputs, reference, launches, extra=()):
    """kiln-run's plain-launch time of `artifact` on `inputs` (input name ->
    CPU tensor, saved into `folder`), checked against `reference`: (ms,
    rel L2, "ok" or "FAIL")."""
    os.makedirs(folder, exist_ok=True)
    feeds = []
    for name, value in inputs.items():
        np.save(os.path.join(folder, f"{name}.npy"), value.numpy())
        feeds += ["--input", f"{name}={folder}/{name}.npy"]
    np.save(os.path.join(folder, "ref.npy"), reference.numpy())
    out = subprocess.run([f"{bin_dir}/kiln-run", artifact, *feeds, "--check",
                          f"{folder}/ref.npy", *extra, "--bench", str(launches)],
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    check = re.search(r"rel L2 ([0-9.e+-]+).*?(ok|FAIL)", text)
    timed = re.search(r"plain launches ([0-9.]+) ms", text)
    if not timed:
        raise RuntimeError(f"kiln-run on {artifact}: {text.strip()[-400:]}")
    return (float(timed.group(1)), check.group(1) if check else "?",
            check.group(2) if check else "FAIL")


def kiln_compiled(bin_dir, model, artifact, flags=()):
    """Compiles `model` into `artifact` with kiln-compile `flags`; returns the
    kernel configurations kiln-select-kernels chose (from the IR it prints
    with `-o -`)."""
    subprocess.run([f"{bin_dir}/kiln-compile", model, "-o", artifact, *flags], check=True,
                   capture_output=True, text=True)
    ir = subprocess.run([f"{bin_dir}/kiln-compile", model, "-o", "-", *flags], check=True,
                        capture_output=True, text=True).stdout
    return re.findall(r"#kiln\.kernel<([^>]*)>", ir)
