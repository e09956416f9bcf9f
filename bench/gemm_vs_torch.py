#!/usr/bin/env python3
"""kiln's fused GEMM kernels against PyTorch (cuBLAS) on the FFN's shapes.

    gemm_vs_torch.py BIN_DIR WORK_DIR

For each shape (the transformer FFN at d=1024, hidden 4096, 4096 tokens,
fp16): a traced nn.Linear (+ GELU) is compiled by kiln-compile, checked by
kiln-run against PyTorch's fp32 result, and timed by kiln-run (plain
launches: the mean device time of back-to-back launches between CUDA
events). In the same process PyTorch times torch.matmul alone and matmul +
bias + GELU (eager) the same way (timing.back_to_back_ms). Prints TFLOP/s and
kiln's ratio to each. Run on the GPU machine.
"""
import os
import re
import subprocess
import sys
import warnings

import torch

from timing import METHOD, back_to_back_ms

warnings.filterwarnings("ignore")
BIN, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
LAUNCHES = 100  # back to back, on both sides
SHAPES = [  # (tokens M, out N, in K)
    (4096, 4096, 1024),  # FFN up-projection
    (4096, 1024, 4096),  # FFN down-projection
    (4096, 4096, 4096),
]


class LinearGelu(torch.nn.Module):
    def __init__(self, k, n, gelu):
        super().__init__()
        self.fc = torch.nn.Linear(k, n)
        self.gelu = gelu

    def forward(self, x):
        y = self.fc(x)
        return torch.nn.functional.gelu(y) if self.gelu else y


def kiln(m, n, k, gelu):
    name = f"linear_{m}x{n}x{k}{'_gelu' if gelu else ''}"
    torch.manual_seed(0)
    module = LinearGelu(k, n, gelu).half().eval()
    x = torch.randn(m, k, dtype=torch.float16)
    path = os.path.join(WORK, name + ".pt")
    torch.jit.save(torch.jit.trace(module, x), path)
    art = os.path.join(WORK, name + ".kiln")
    subprocess.run([f"{BIN}/kiln-compile", path, "-o", art], check=True,
                   stderr=subprocess.DEVNULL)
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    subprocess.run([f"{BIN}/kiln-run", art, "--save-inputs", d], check=True,
                   stdout=subprocess.DEVNULL)
    import numpy as np
    xin = torch.from_numpy(np.load(os.path.join(d, "x.npy")))
    with torch.no_grad():
        ref = module.float().cuda()(xin.cuda()).cpu()
    np.save(os.path.join(d, "ref.npy"), ref.numpy())
    out = subprocess.run([f"{BIN}/kiln-run", art, "--input", f"x={d}/x.npy",
                          "--check", f"{d}/ref.npy", "--bench", str(LAUNCHES)],
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    check = re.search(r"rel L2 ([0-9.e+-]+).*?(ok|FAIL)", text)
    ms = float(re.search(r"plain launches ([0-9.]+) ms", text).group(1))
    return ms, check.group(1) if check else "?", check.group(2) if check else "FAIL"


def main():
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"Timing: {METHOD}, {LAUNCHES} calls.")
    print(f"{'shape (MxNxK)':>20} {'op':>16} {'kiln ms':>9} {'kiln TF/s':>10} "
          f"{'torch ms':>9} {'torch TF/s':>11} {'kiln/torch':>10}  check")
    for m, n, k in SHAPES:
        flops = 2 * m * n * k
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w = torch.randn(n, k, device="cuda", dtype=torch.float16)
        b = torch.randn(n, device="cuda", dtype=torch.float16)
        t_mm = back_to_back_ms(lambda: torch.matmul(a, w.t()), launches=LAUNCHES)
        t_fused = back_to_back_ms(lambda: torch.nn.functional.gelu(torch.matmul(a, w.t()) + b),
                           launches=LAUNCHES)
        for gelu, t in ((False, t_mm), (True, t_fused)):
            ms, err, verdict = kiln(m, n, k, gelu)
            op = "linear+bias+gelu" if gelu else "linear+bias"
            ref = "matmul+bias+gelu" if gelu else "matmul"
            print(f"{f'{m}x{n}x{k}':>20} {op:>16} {ms:9.4f} {flops / ms / 1e9:10.1f} "
                  f"{t:9.4f} {flops / t / 1e9:11.1f} {t / ms:9.2f}x  rel L2 {err} {verdict}"
                  f"  (torch: {ref})")


if __name__ == "__main__":
    main()
