#!/usr/bin/env python3
"""Makes the artifact fuzzer's seed corpus (test/fuzz/corpus/).

    make_corpus.py KILN_COMPILE OUT_DIR

Traces tiny models with torch (fixed seed), compiles each with kiln-compile
for one architecture, and writes into OUT_DIR:

  valid-*          artifacts as kiln-compile wrote them (each under 64 KB:
                   one kernel, one cubin plus PTX);
  stub-*           the same plus a Hopper MLP (two GEMMs with TMA tensor
                   maps), every kernel image replaced by a few bytes the
                   reader accepts: valid and small, so mutations land on the
                   structure rather than in the cubins;
  bad-*            truncated and mangled files, each stopping the reader at a
                   different check (checksums recomputed where the damage is
                   behind them).

Rerun it after a format change (the corpus is committed, the models are not):
    python3 test/fuzz/make_corpus.py build/bin/kiln-compile test/fuzz/corpus
"""
import os
import struct
import subprocess
import sys
import tempfile
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_artifact  # noqa: E402

warnings.filterwarnings("ignore")


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


# name -> (module, example inputs, architecture[, extra kiln-compile flags])
MODELS = {
    "elementwise": (lambda: Fn(lambda a: torch.relu(a * 2 + 1)), lambda: (torch.randn(4, 8),), "sm_80"),
    "normalization": (lambda: torch.nn.LayerNorm(8), lambda: (torch.randn(4, 8),), "sm_90a"),
    "softmax": (lambda: Fn(lambda a: torch.softmax(a, -1)), lambda: (torch.randn(3, 8),), "sm_80"),
    "linear_f16": (lambda: torch.nn.Linear(16, 8).half(), lambda: (torch.randn(4, 16).half(),), "sm_90a"),
    # Selected for a 4-multiprocessor GPU, its two tiny GEMMs take the Hopper
    # kernel (2-D tensor maps) rather than split-K, gemm_gemv or gemm_narrow.
    "mlp_f16": (lambda: Mlp().half(), lambda: (torch.randn(8, 16).half(),), "sm_90a,sm_80",
                ["--multiprocessors", "4", "--gemm-gemv-rows=0", "--gemm-narrow-fmas=0"]),
    # The same with its first GEMM's sizes given at launch (integers after
    # its pointers).
    "mlp_sizes_f16": (lambda: Mlp().half(), lambda: (torch.randn(8, 16).half(),), "sm_90a,sm_80",
                      ["--multiprocessors", "4", "--gemm-gemv-rows=0", "--gemm-narrow-fmas=0",
                       "--runtime-sizes"]),
    # The second convolution reads NHWC: a Hopper implicit GEMM with 4-D and
    # 3-D tensor maps (the first reads the NCHW input through a permute).
    "conv_f16": (lambda: torch.nn.Sequential(torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
                                             torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)).half(),
                 lambda: (torch.randn(8, 8, 48, 48).half(),), "sm_90a"),
}
MAX_SEED_BYTES = 64 * 1024


def compile_models(kiln_compile, work):
    artifacts = {}
    for name, (module, inputs, arch, *flags) in MODELS.items():
        torch.manual_seed(0)
        pt = os.path.join(work, name + ".pt")
        torch.jit.save(torch.jit.trace(module().eval(), inputs()), pt)
        out = os.path.join(work, name + ".kiln")
        subprocess.run([kiln_compile, pt, "--arch", arch, "-o", out] + (flags[0] if flags else []),
                       check=True, stdout=subprocess.DEVNULL)
        with open(out, "rb") as f:
            artifacts[name] = f.read()
    return artifacts


def mangled(data):
    """name -> bytes: each stops the reader at another check."""
    a = kiln_artifact.read(data)
    out = {
        "truncated-header": data[:20],
        "truncated-table": data[:100],
        "truncated-half": data[: len(data) // 2],
        "flipped-byte": data[:200] + bytes([data[200] ^ 0x10]) + data[201:],
        "version-2": data[:8] + struct.pack("<I", 2) + data[12:],
    }

    def forge(name, change):
        b = kiln_artifact.read(data)
        change(b)
        out[name] = kiln_artifact.write(b)
    forge("kind", lambda b: b["kernels"][0].update(kind="fancy"))
    forge("block-0", lambda b: b["plans"][0]["launches"][0].update(block=0))
    forge("grid-y", lambda b: b["plans"][0]["launches"][0].update(grid=[1, 65536, 1]))
    forge("buffer-index", lambda b: b["plans"][0]["launches"][0]["args"].__setitem__(0, 99))
    forge("negative-dim", lambda b: b["inputs"][0]["shape"].__setitem__(0, -1))
    forge("rank-17", lambda b: b["inputs"][0].update(shape=[1] * 17))
    forge("same-input-names", lambda b: b["inputs"].append(dict(b["inputs"][0])))
    forge("same-arch", lambda b: b["kernels"][0]["images"].__setitem__(
        1, (b["kernels"][0]["images"][0][0], b["kernels"][0]["images"][1][1])))
    forge("parameters", lambda b: b["plans"][0]["launches"][0].update(args=b["plans"][0]["launches"][0]["args"] * 129))
    forge("name-path", lambda b: b["inputs"][0].update(name="../../x"))
    forge("name-escape", lambda b: b["outputs"][0].update(name="y\x1b[2J"))
    forge("arena-2-64", lambda b: b.update(arena=2**64 - 1))
    forge("tensor-2-41", lambda b: b["inputs"][0].update(shape=[1 << 30, 1 << 10]))

    def misaligned_map(b):  # the tensor map of launch 1 reads the arena buffer
        arena = b["plans"][0]["launches"][1]["maps"][0]["buffer"]
        b["buffers"][arena][2] += 8
        b["arena"] += 8
    forge("misaligned-map", misaligned_map)
    forge("map-rank-6", lambda b: b["plans"][0]["launches"][0]["maps"][0].update(
        dims=[8] * 6, box=[1] * 6, strides=[1] * 6))
    forge("map-stride-9", lambda b: b["plans"][0]["launches"][0]["maps"][0]["strides"].__setitem__(1, 9))
    forge("map-box-row", lambda b: b["plans"][0]["launches"][0]["maps"][0]["box"].__setitem__(0, 72))
    forge("scalars-17", lambda b: b["plans"][0]["launches"][0].update(scalars=[1] * 17))
    forge("scalars-differ", lambda b: b["plans"][0]["launches"][0].update(scalars=[4096, 1024, 64]))
    forge("plan-arch", lambda b: b["plans"][0].update(arch="sm_86"))
    forge("plan-twice", lambda b: b["plans"].append(dict(b["plans"][0])))
    forge("metadata-escape", lambda b: b.update(metadata=[("source.name", "m\x1b[2J.pt")]))
    forge("metadata-key", lambda b: b.update(metadata=[("Source Name", "m.pt")]))
    assert a["kernels"], "the mangled seeds need a kernel"
    return out


def main(kiln_compile, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        artifacts = compile_models(kiln_compile, work)
    seeds = {}
    for name, data in artifacts.items():
        if len(data) <= MAX_SEED_BYTES:
            seeds["valid-" + name] = data
        a = kiln_artifact.read(data)
        kiln_artifact.stub_images(a)
        seeds["stub-" + name] = kiln_artifact.write(a)
    for name, data in mangled(seeds["stub-mlp_f16"]).items():
        seeds["bad-" + name] = data
    for name, data in sorted(seeds.items()):
        assert len(data) <= MAX_SEED_BYTES, f"{name}: {len(data)} bytes"
        with open(os.path.join(out_dir, name + ".kiln"), "wb") as f:
            f.write(data)
        print(f"{name}.kiln: {len(data)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
