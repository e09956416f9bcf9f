#!/usr/bin/env python3
"""Writes the TorchScript fixtures the frontend tests load, into argv[1].

Made at test time (never committed): small models with fixed seeds, plus the
broken files the loader must reject with a clear message.
"""
import os
import sys
import warnings

import torch

warnings.filterwarnings("ignore", category=DeprecationWarning)  # torch.jit in 2.11
warnings.filterwarnings("ignore", category=FutureWarning)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.drop = torch.nn.Dropout(0.1)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Mlp().eval()
    example = torch.randn(8, 16)
    torch.jit.save(torch.jit.trace(model, example), os.path.join(out, "mlp_traced.pt"))
    torch.jit.save(torch.jit.script(model), os.path.join(out, "mlp_scripted.pt"))
    # A zip that is not TorchScript: what torch.save writes.
    torch.save(model.state_dict(), os.path.join(out, "mlp_state_dict.pt"))
    # A truncated archive, as an interrupted copy leaves it.
    with open(os.path.join(out, "mlp_traced.pt"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out, "not_a_model.pt"), "w") as f:
        f.write("this is not a model\n")


if __name__ == "__main__":
    main(sys.argv[1])
