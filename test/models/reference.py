#!/usr/bin/env python3
"""PyTorch reference outputs for inputs saved as .npy.

    reference.py MODEL.pt DIR [--bench N]

Reads DIR/<input name>.npy for every input of the TorchScript model (as
`kiln-run --save-inputs DIR` writes them), runs the model in float32 on
those inputs (on the CPU) and writes DIR/reference<i>.npy
for each output: the fp32 PyTorch result kiln's outputs are checked against.
With --bench N (and a GPU) it also times PyTorch eager running the model in
its own dtype on those inputs: the median of N synchronous calls after
warm-up, the way `kiln-run --bench` times kiln.
"""
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
# The reference is fp32: cuDNN would otherwise run fp32 convolutions in TF32
# (its default), 1e-4-ish away from fp32 and past the fp32 tolerance.
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False


def bench(model_path, inputs, runs):
    module = torch.jit.load(model_path, map_location="cuda").eval()
    dtype = next(module.parameters()).dtype
    args = [x.to("cuda", dtype) if x.is_floating_point() else x.cuda() for x in inputs]
    import time
    with torch.no_grad():
        for _ in range(10):
            module(*args)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            module(*args)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    print(f"  torch eager ({dtype}): median {times[len(times) // 2]:.4f} ms per call "
          f"over {runs} calls")


def main(model_path, directory, runs=0):
    module = torch.jit.load(model_path, map_location="cpu").eval()
    names = [v.debugName().split(".")[0] for v in list(module.graph.inputs())[1:]]
    # Floats in fp32 (the reference precision); token ids and masks keep
    # their integer type.
    inputs = [torch.from_numpy(np.load(os.path.join(directory, n + ".npy"))) for n in names]
    inputs = [x.float() if x.is_floating_point() else x for x in inputs]
    # The reference runs on the CPU: cuDNN may pick lower-precision fp32
    # algorithms (Winograd, FFT) whatever the TF32 switches say, and kiln's
    # fp32 results are held to 1e-5. The test models are small enough.
    device = "cpu"
    with torch.no_grad():
        out = module.float()(*inputs)
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    for i, y in enumerate(outputs):
        np.save(os.path.join(directory, f"reference{i}.npy"), y.float().cpu().numpy())
    print(f"reference: {len(outputs)} output(s) of {os.path.basename(model_path)} "
          f"computed in float32 on {device}")
    if runs and torch.cuda.is_available():
        try:
            bench(model_path, inputs, runs)
        except RuntimeError as e:
            # e.g. constants traced onto the CPU in a model moved to the GPU
            print(f"  torch eager: not timed ({str(e).splitlines()[0]})")


if __name__ == "__main__":
    runs = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--bench" else 0
    main(sys.argv[1], sys.argv[2], runs)
