#!/usr/bin/env python3
"""The machine code of kiln's kernels for sm_90a, read without a GPU.

    sass_report.py BIN_DIR IR.mlir [--kernel NAME] [--from OP] [--to OP]

Compiles the kiln IR's fusion groups as kiln-translate --kiln-to-sm90a-ptx
does (NVRTC, the kernel configurations written in the IR or chosen by
kiln-select-kernels beforehand), assembles each kernel's PTX with ptxas -O3
for sm_90a and disassembles it with nvdisasm. For each kernel (or the one
named): registers and spills, how many instructions of each opcode the
code holds, and over a region from the first instruction whose opcode
starts with --from to the last whose opcode starts with --to (default: the
whole kernel) the instructions, the cycles ptxas told the warp scheduler
to stall after each (the control bits' stall counts: the region's issue
time for one warp that never waits longer) and the instructions that wait
on a scoreboard (a variable-latency result: MUFU, shared or global memory),
whose waits add to that.

The counts are static: a loop's body counts once. For kiln's unrolled
epilogues (a tile's elements in straight-line code) the region between the
epilogue's first and last instruction is one tile's epilogue for one warp.

ptxas comes from the CUDA toolkit (/usr/local/cuda/bin or the PATH);
nvdisasm from the PATH, the toolkit, or the copy Triton (a PyTorch
dependency) bundles.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\* (0x[0-9a-f]+) \*/")
_HIGH_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]+) \*/\s*$")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


def control_bits(high_word):
    """The scheduling fields of a Volta-to-Hopper instruction, from the high
    64 bits of its 128-bit encoding (bits 105-125 of the instruction)."""
    bits = high_word >> 41
    return {"stall": bits & 0xF, "yield": (bits >> 4) & 1, "write_barrier": (bits >> 5) & 7,
            "read_barrier": (bits >> 8) & 7, "wait_mask": (bits >> 11) & 0x3F}


def parse_nvdisasm(text):
    """nvdisasm -hex's listing as instructions: address, text, opcode and
    control bits."""
    lines = text.splitlines()
    instructions = []
    for i, line in enumerate(lines):
        match = _INSTRUCTION.match(line)
        if not match or i + 1 >= len(lines):
            continue
        high = _HIGH_WORD.match(lines[i + 1])
        if not high:
            continue
        body = match.group(2).strip()
        opcode = _PREDICATE.sub("", body).split()[0]
        instructions.append({"address": int(match.group(1), 16), "text": body,
                             "opcode": opcode, **control_bits(int(high.group(1), 16))})
    return instructions


def region(instructions, first_opcode=None, last_opcode=None):
    """The instructions from the first whose opcode starts with
    `first_opcode` to the last whose opcode starts with `last_opcode`."""
    begin = 0
    end = len(instructions)
    if first_opcode:
        starts = [k for k, ins in enumerate(instructions) if ins["opcode"].startswith(first_opcode)]
        if not starts:
            raise ValueError(f"no {first_opcode} instruction")
        begin = starts[0]
    if last_opcode:
        ends = [k for k, ins in enumerate(instructions) if ins["opcode"].startswith(last_opcode)]
        if not ends or ends[-1] < begin:
            raise ValueError(f"no {last_opcode} instruction after the region's start")
        end = ends[-1] + 1
    return instructions[begin:end]


def summary(instructions):
    """Instructions, static stall cycles and scoreboard waits of a region."""
    return {"instructions": len(instructions),
            "stall_cycles": sum(ins["stall"] for ins in instructions),
            "scoreboard_waits": sum(1 for ins in instructions if ins["wait_mask"]),
            "opcodes": collections.Counter(ins["opcode"].split(".")[0] for ins in instructions)}


def _tool(name, extra_dirs=()):
    found = shutil.which(name)
    if found:
        return found
    for folder in ["/usr/local/cuda/bin", *extra_dirs]:
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    raise SystemExit(f"sass_report: {name} not found (CUDA toolkit, PATH or Triton)")


def _triton_bin():
    try:
        import triton  # noqa: F401 (a PyTorch dependency that bundles nvdisasm)
        return [os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")]
    except ImportError:
        return []


def kernels_ptx(bin_dir, ir):
    """kernel name -> PTX, as kiln-translate --kiln-to-sm90a-ptx emits them."""
    translate = os.path.join(bin_dir, "kiln-translate")
    if not os.path.exists(translate):
        raise SystemExit(f"sass_report: {translate} not found (BIN_DIR is build/bin)")
    out = subprocess.run([translate, "--kiln-to-sm90a-ptx", ir, "--split-input-file"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"sass_report: kiln-translate failed:\n{out.stderr.strip()}")
    parts = re.split(r"^// === ptx (\S+)\n", out.stdout, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bin_dir")
    parser.add_argument("ir")
    parser.add_argument("--kernel", help="only this kernel (as kiln-translate names it)")
    parser.add_argument("--from", dest="first", help="the region starts at this opcode's first")
    parser.add_argument("--to", dest="last", help="and ends at this opcode's last")
    args = parser.parse_args()
    ptxas = _tool("ptxas")
    nvdisasm = _tool("nvdisasm", _triton_bin())
    kernels = kernels_ptx(args.bin_dir, args.ir)
    if args.kernel:
        if args.kernel not in kernels:
            raise SystemExit(f"sass_report: no kernel {args.kernel} (have {', '.join(kernels)})")
        kernels = {args.kernel: kernels[args.kernel]}
    with tempfile.TemporaryDirectory() as folder:
        for name, ptx in kernels.items():
            source, cubin = os.path.join(folder, name + ".ptx"), os.path.join(folder, name + ".cubin")
            with open(source, "w") as f:
                f.write(ptx)
            assembled = subprocess.run([ptxas, "-arch=sm_90a", "-O3", "-v", source, "-o", cubin],
                                       capture_output=True, text=True)
            if assembled.returncode != 0:
                print(f"{name}: ptxas failed: {assembled.stderr.strip()}")
                continue
            resources = " ".join(line.split("info    :")[-1].strip()
                                 for line in assembled.stderr.splitlines()
                                 if "registers" in line or "spill" in line)
            listing = subprocess.run([nvdisasm, "-hex", "-c", cubin], capture_output=True,
                                     text=True).stdout
            instructions = parse_nvdisasm(listing)
            print(f"=== {name}: {resources}")
            try:
                part = summary(region(instructions, args.first, args.last))
            except ValueError as e:
                print(f"    {e}")
                continue
            print(f"    region ({args.first or 'start'} .. {args.last or 'end'}): "
                  f"{part['instructions']} instructions, {part['stall_cycles']} stall cycles, "
                  f"{part['scoreboard_waits']} scoreboard waits")
            print("    " + ", ".join(f"{op} {n}" for op, n in part["opcodes"].most_common(16)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
