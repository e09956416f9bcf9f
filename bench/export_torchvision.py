#!/usr/bin/env python3
"""Traces torchvision models for kiln, fp32 and fp16.

    export_torchvision.py OUT_DIR [--batch B] MODEL...

Random weights (seed 0; with --calibrate, BatchNorm statistics measured on
random images: models_vs_torch.calibrated), traced on the CPU at
[B, 3, 224, 224]; writes
OUT_DIR/<model>_f32.pt and <model>_f16.pt. scripts/verify-zoo.sh feeds them
to `kiln-compile --verify`.
"""
import argparse
import os
import sys
import warnings

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models_vs_torch import calibrated  # noqa: E402

warnings.filterwarnings("ignore")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("models", nargs="+")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--calibrate", action="store_true",
                        help="measure BatchNorm statistics on random images")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.models:
        if args.calibrate:
            model = calibrated(name, device="cpu")
        else:
            torch.manual_seed(0)
            model = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(args.batch, 3, 224, 224)
        with torch.no_grad():
            torch.jit.save(torch.jit.trace(model, x, check_trace=False),
                           os.path.join(args.out, f"{name}_f32.pt"))
            torch.jit.save(torch.jit.trace(model.half(), x.half(), check_trace=False),
                           os.path.join(args.out, f"{name}_f16.pt"))
        print(f"exported {name} (fp32, fp16) at batch {args.batch}")


if __name__ == "__main__":
    main()
