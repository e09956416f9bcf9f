#!/usr/bin/env python3
"""Writes the torch.export archives (.pt2) the frontend tests read.

    make_pt2.py OUT_DIR

Models (torch.export.export, then torch.export.save; fixed seed):
  mlp.pt2        Linear, ReLU, a buffer, a Python number, LayerNorm, softmax
  dynamic.pt2    batch dimension exported dynamic in [2, 64]: size arithmetic
                 (reshape by x.shape[0]) and chunk (a list of outputs)
  inplace.pt2    a small residual conv block in eval mode: relu_, add_ and
                 dropout_ as the export keeps them
  masked.pt2     masked_fill with -inf, clamp at inf (floats written as strings)
  aliases.pt2    swapaxes and swapdims, F.normalize (vector norm, clamp_min)
  zeroed.pt2     a slice of a cloned parameter zeroed in place (Swin V2)
  unsupported.pt2  cumprod, an op kiln has no converter for
  attention.pt2  nn.MultiheadAttention (ViT's), exported: its output's
                 `.contiguous()` left out of the graph (a no-op there)
Forged archives (rewritten from mlp.pt2 with Python's zipfile):
  truncated.pt2      the first half of the file
  no-weight.pt2      data/weights/weight_0 left out
  schema-9.pt2       models/model.json claiming export schema 9.0
  bad-json.pt2       models/model.json that is not JSON
  aoti.pt2           the layout of an AOTInductor package (no model.json)
  foreign.pt2        a zip of unrelated files in one folder
"""
import json
import os
import sys
import warnings
import zipfile

import torch

warnings.filterwarnings("ignore")


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 8)
        self.norm = torch.nn.LayerNorm(8)
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 8))

    def forward(self, x):
        y = torch.relu(self.fc(x)) * self.scale + 1.5
        return self.norm(y).softmax(-1)


class Dynamic(torch.nn.Module):
    def forward(self, x):
        b = x.shape[0]
        return (x.reshape(b, 4, 4) * 2).sum(-1), x.chunk(2, dim=1)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.drop = torch.nn.Dropout(0.1, inplace=True)

    def forward(self, x):
        y = torch.nn.functional.relu(self.bn(self.conv1(x)), inplace=True)
        y = self.conv2(self.drop(y))
        y += x
        return torch.nn.functional.relu(y, inplace=True)


class Masked(torch.nn.Module):
    """Infinities and NaN as arguments: the export writes them as strings."""
    def forward(self, x):
        return x.masked_fill(x > 1.5, float("-inf")).softmax(-1).clamp(max=float("inf"))


class Aliases(torch.nn.Module):
    """Operators TorchScript's tracer renames and torch.export keeps."""
    def forward(self, x):
        return torch.nn.functional.normalize(x.swapaxes(0, 1).swapdims(1, 2) * 2, dim=-1)


class ZeroedBias(torch.nn.Module):
    """Swin V2's packed projection: the key third of a copy of the bias
    zeroed in place before the linear."""
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x):
        bias = self.qkv.bias.clone()
        length = bias.numel() // 3
        bias[length:2 * length].zero_()
        return torch.nn.functional.linear(x, self.qkv.weight, bias)


class Attention(torch.nn.Module):
    """ViT's self-attention as torch.export records it: the attention's
    output permuted and viewed with no contiguous() between, since in the
    export the output is laid out like the query."""
    def __init__(self):
        super().__init__()
        self.attention = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class Unsupported(torch.nn.Module):
    def forward(self, x):
        return torch.cumprod(x, 1) + 1


def export(module, args, path, dynamic_shapes=None):
    torch.manual_seed(0)
    module = module.eval()
    with torch.no_grad():
        program = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    torch.export.save(program, path)


def rewrite(source, target, change):
    """Copies the zip `source` to `target` (stored entries, one folder named
    after the target) through change(name, data) -> data or None (drop)."""
    root = os.path.splitext(os.path.basename(target))[0]
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            name = info.filename.split("/", 1)[1]
            data = change(name, zin.read(info))
            if data is not None:
                zout.writestr(root + "/" + name, data)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(Mlp(), (torch.randn(4, 16),), os.path.join(out, "mlp.pt2"))
    batch = torch.export.Dim("batch", min=2, max=64)
    export(Dynamic(), (torch.randn(8, 16),), os.path.join(out, "dynamic.pt2"),
           dynamic_shapes={"x": {0: batch}})
    export(Block(), (torch.randn(2, 8, 12, 12),), os.path.join(out, "inplace.pt2"))
    export(Masked(), (torch.randn(4, 6),), os.path.join(out, "masked.pt2"))
    export(Aliases(), (torch.randn(2, 3, 4),), os.path.join(out, "aliases.pt2"))
    export(ZeroedBias(), (torch.randn(5, 8),), os.path.join(out, "zeroed.pt2"))
    export(Unsupported(), (torch.randn(3, 5),), os.path.join(out, "unsupported.pt2"))
    export(Attention(), (torch.randn(2, 5, 16),), os.path.join(out, "attention.pt2"))

    mlp = os.path.join(out, "mlp.pt2")
    with open(mlp, "rb") as f:
        data = f.read()
    with open(os.path.join(out, "truncated.pt2"), "wb") as f:
        f.write(data[: len(data) // 2])
    rewrite(mlp, os.path.join(out, "no-weight.pt2"),
            lambda name, d: None if name == "data/weights/weight_0" else d)

    def schema9(name, d):
        if name != "models/model.json":
            return d
        program = json.loads(d)
        program["schema_version"] = {"major": 9, "minor": 0}
        return json.dumps(program).encode()
    rewrite(mlp, os.path.join(out, "schema-9.pt2"), schema9)
    rewrite(mlp, os.path.join(out, "bad-json.pt2"),
            lambda name, d: b"{\"graph_module\": " if name == "models/model.json" else d)
    with zipfile.ZipFile(os.path.join(out, "aoti.pt2"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("aoti/archive_format", "pt2")
        z.writestr("aoti/archive_version", "0")
        z.writestr("aoti/.data/version", "1\n")
        z.writestr("aoti/data/aotinductor/model/model.wrapper.so", b"\x7fELF")
    with zipfile.ZipFile(os.path.join(out, "foreign.pt2"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("foreign/readme.txt", "not a model")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
