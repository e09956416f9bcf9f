#!/usr/bin/env python3
"""Runs the C++ API example and compares its outputs with LibTorch's.

    check_example.py KILN_API_EXAMPLE MODEL.pt WORK_DIR

The example compiles MODEL.pt at load time in fp16, serves random inputs
from two threads and, with --io, writes its inputs and outputs. Here the
same inputs go through the TorchScript model in fp32 on the CPU, and each
output must be within rel L2 1e-2 of that (the example computes in fp16).
Exit status: the example's 77 (no GPU) passes through as a skip; 1 on any
mismatch or error.
"""
import os
import subprocess
import sys

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}
TOLERANCE = 1e-2


def read(work, role, name, dtype, shape):
    with open(os.path.join(work, f"{role}.{name}.bin"), "rb") as f:
        data = bytearray(f.read())
    tensor = torch.frombuffer(data, dtype=DTYPES[dtype]) if data else torch.empty(0)
    return tensor.reshape(shape).clone()


def main(example, model_path, work):
    os.makedirs(work, exist_ok=True)
    run = subprocess.run([example, model_path, "--io", work], capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        return run.returncode
    inputs, outputs = [], []
    with open(os.path.join(work, "signature.txt")) as f:
        for line in f:
            role, name, dtype, *dims = line.split()
            tensor = read(work, role, name, dtype, [int(d) for d in dims])
            (inputs if role == "in" else outputs).append((name, tensor))
    module = torch.jit.load(model_path, map_location="cpu").float().eval()
    with torch.no_grad():
        expected = module(*[t.float() if t.is_floating_point() else t for _, t in inputs])
    if isinstance(expected, torch.Tensor):
        expected = [expected]
    if len(expected) != len(outputs):
        print(f"check: the example wrote {len(outputs)} outputs, LibTorch gives {len(expected)}")
        return 1
    ok = True
    for (name, got), want in zip(outputs, expected):
        want = want.float()
        error = float((got.float() - want).norm() / want.norm())
        passed = torch.isfinite(got.float()).all() and error <= TOLERANCE
        ok &= bool(passed)
        print(f"check {name}: rel L2 {error:.3e} against LibTorch fp32 "
              f"(tolerance {TOLERANCE:.0e}) {'ok' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
