"""Timing of PyTorch calls on the GPU, shared by the kernel benchmarks."""
import torch


def event_ms(fn, runs=100, warmup=10):
    """Median device time of `fn` over `runs` calls, each between two CUDA
    events and synchronized, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]
