#!/usr/bin/env python3
"""Reads and writes .kiln artifacts (format version 9) to forge test inputs.

    kiln_artifact.py forge IN OUT [--version N] [--kind KIND] [--block N]
                                  [--grid X,Y,Z] [--stub-images]
                                  [--metadata KEY=VALUE]...
    kiln_artifact.py dump IN

`forge` rewrites IN with the given changes to kernel 0 / launch 0 of the first plan and
recomputes the checksums, so the reader gets past them to the field under
test (`--version` patches only the header). `--stub-images` replaces every
kernel image by a few bytes that pass the reader's checks (an ELF magic, a
line of PTX): a valid but small file, for the fuzzer's seed corpus.

docs/ARTIFACT.md is the specification; `write` lays a file out exactly as
codegen/lib/ArtifactWriter.cpp does. `read` trusts its input: it is for
files kiln-compile wrote.
"""
import argparse
import struct
import sys

MAGIC = b"KILNART\0"
VERSION = 9
HEADER_BYTES = 24
ENTRY_BYTES = 32
SIGNATURE, KERNELS, PLAN, WEIGHTS, METADATA = 1, 2, 3, 4, 5
SECTIONS = 5


MASK = 0xFFFFFFFFFFFFFFFF
K1, K2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK


def checksum64(data):
    """The section checksum (docs/ARTIFACT.md, Checksums)."""
    size, i = len(data), 0
    lane = [K1, K2, ~K1 & MASK, ~K2 & MASK]
    while i + 32 <= size:
        for l in range(4):
            w = int.from_bytes(data[i + 8 * l:i + 8 * l + 8], "little")
            lane[l] = (_rotl((lane[l] + w * K2) & MASK, 31) * K1) & MASK
        i += 32
    h = (_rotl(lane[0], 1) + _rotl(lane[1], 7) + _rotl(lane[2], 12) + _rotl(lane[3], 18)) & MASK
    h ^= size
    while i + 8 <= size:
        w = int.from_bytes(data[i:i + 8], "little")
        h = (_rotl(h ^ ((w * K2) & MASK), 27) * K1) & MASK
        i += 8
    while i < size:
        h = (_rotl(h ^ ((data[i] * K1) & MASK), 11) * K2) & MASK
        i += 1
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK
    h ^= h >> 31
    return h


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def take_list(self, kind, count):
        values = list(struct.unpack_from("<" + kind * count, self.data, self.pos))
        self.pos += struct.calcsize("<" + kind * count)
        return values

    def bytes(self, n):
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def str(self):
        return self.bytes(self.take("I")).decode()


def read(data):
    """The artifact as a dict of plain Python values."""
    assert data[:8] == MAGIC, "not a kiln artifact"
    version, count, _ = struct.unpack_from("<IIQ", data, 8)
    sections = {}
    for i in range(count):
        kind, _, offset, size, _ = struct.unpack_from("<IIQQQ", data, HEADER_BYTES + i * ENTRY_BYTES)
        sections[kind] = data[offset:offset + size]

    sig = Reader(sections[SIGNATURE])
    n_in, n_out = sig.take("II")

    def tensor():
        name = sig.str()
        dtype, rank = sig.take("II")
        return {"name": name, "dtype": dtype, "shape": [sig.take("q") for _ in range(rank)]}
    inputs = [tensor() for _ in range(n_in)]
    outputs = [tensor() for _ in range(n_out)]
    arena = sig.take("Q")

    ker = Reader(sections[KERNELS])
    kernels = []
    for _ in range(ker.take("I")):
        name, kind = ker.str(), ker.str()
        images = []
        for _ in range(ker.take("I")):
            arch = ker.str()
            images.append((arch, ker.bytes(ker.take("Q"))))
        kernels.append({"name": name, "kind": kind, "images": images})

    plan = Reader(sections[PLAN])
    buffers = [list(plan.take("IIQQ")) for _ in range(plan.take("I"))]
    plans = []
    for _ in range(plan.take("I")):
        arch = plan.str()
        launches = []
        for _ in range(plan.take("I")):
            kernel = plan.take("I")
            grid = list(plan.take("III"))
            block, shared = plan.take("II")
            args = [plan.take("I") for _ in range(plan.take("I"))]
            maps = []
            for _ in range(plan.take("I")):
                buffer, dtype, rank = plan.take("III")
                dims = list(plan.take("Q" * rank))
                box = list(plan.take("I" * rank))
                strides = list(plan.take("I" * rank))
                maps.append({"buffer": buffer, "dtype": dtype, "dims": dims, "box": box,
                             "strides": strides})
            scalars = plan.take_list("q", plan.take("I"))
            launches.append({"kernel": kernel, "grid": grid, "block": block, "shared": shared,
                             "args": args, "maps": maps, "scalars": scalars})
        plans.append({"arch": arch, "launches": launches})
    about = Reader(sections[METADATA])
    metadata = [(about.str(), about.str()) for _ in range(about.take("I"))]
    return {"version": version, "inputs": inputs, "outputs": outputs, "arena": arena,
            "kernels": kernels, "buffers": buffers, "plans": plans,
            "metadata": metadata, "weights": sections[WEIGHTS]}


def write(a):
    """The file bytes for `a`, laid out as the writer does."""
    def s(text):
        raw = text.encode() if isinstance(text, str) else text
        return struct.pack("<I", len(raw)) + raw

    def tensor(t):
        return (s(t["name"]) + struct.pack("<II", t["dtype"], len(t["shape"])) +
                b"".join(struct.pack("<q", d) for d in t["shape"]))
    sig = struct.pack("<II", len(a["inputs"]), len(a["outputs"]))
    sig += b"".join(tensor(t) for t in a["inputs"] + a["outputs"])
    sig += struct.pack("<Q", a["arena"])

    ker = struct.pack("<I", len(a["kernels"]))
    for k in a["kernels"]:
        ker += s(k["name"]) + s(k["kind"]) + struct.pack("<I", len(k["images"]))
        for arch, data in k["images"]:
            ker += s(arch) + struct.pack("<Q", len(data)) + data

    plan = struct.pack("<I", len(a["buffers"]))
    plan += b"".join(struct.pack("<IIQQ", *b) for b in a["buffers"])
    plan += struct.pack("<I", len(a["plans"]))
    for p in a["plans"]:
        plan += s(p["arch"]) + struct.pack("<I", len(p["launches"]))
        for l in p["launches"]:
            plan += struct.pack("<IIIIII", l["kernel"], *l["grid"], l["block"], l["shared"])
            plan += struct.pack("<I", len(l["args"])) + b"".join(struct.pack("<I", x)
                                                                for x in l["args"])
            plan += struct.pack("<I", len(l["maps"]))
            for m in l["maps"]:
                rank = len(m["dims"])
                plan += struct.pack("<III", m["buffer"], m["dtype"], rank)
                plan += struct.pack("<" + "Q" * rank, *m["dims"])
                plan += struct.pack("<" + "I" * rank, *m["box"])
                plan += struct.pack("<" + "I" * rank, *m["strides"])
            scalars = l.get("scalars", [])
            plan += struct.pack("<I", len(scalars)) + struct.pack("<" + "q" * len(scalars),
                                                                  *scalars)

    about = struct.pack("<I", len(a["metadata"]))
    about += b"".join(s(key) + s(value) for key, value in a["metadata"])

    body, table = b"", b""
    at = HEADER_BYTES + SECTIONS * ENTRY_BYTES
    for kind, data in ((SIGNATURE, sig), (KERNELS, ker), (PLAN, plan), (METADATA, about),
                       (WEIGHTS, a["weights"])):
        align = 4096 if kind == WEIGHTS else 8
        offset = (at + align - 1) // align * align
        body += b"\0" * (offset - at) + data
        at = offset + len(data)
        table += struct.pack("<IIQQQ", kind, 0, offset, len(data), checksum64(data))
    size = HEADER_BYTES + len(table) + len(body)
    return MAGIC + struct.pack("<IIQ", a.get("version", VERSION), SECTIONS, size) + table + body


def stub_images(a):
    """Replaces each image by a minimal one the reader accepts."""
    for k in a["kernels"]:
        k["images"] = [(arch, b"\x7fELF" if arch.startswith("sm_") else b".version 8.0\n")
                       for arch, _ in k["images"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    forge = sub.add_parser("forge")
    forge.add_argument("input")
    forge.add_argument("output")
    forge.add_argument("--version", type=int)
    forge.add_argument("--kind")
    forge.add_argument("--block", type=int)
    forge.add_argument("--grid")
    forge.add_argument("--stub-images", action="store_true")
    forge.add_argument("--metadata", action="append", default=[],
                       help="KEY=VALUE: set a metadata entry, VALUE with Python escapes "
                            "(kept even where the reader will refuse it)")
    dump = sub.add_parser("dump")
    dump.add_argument("input")
    args = parser.parse_args()

    with open(args.input, "rb") as f:
        data = f.read()
    if args.command == "dump":
        a = read(data)
        a["weights"] = f"<{len(a['weights'])} bytes>"
        for k in a["kernels"]:
            k["images"] = [(arch, f"<{len(d)} bytes>") for arch, d in k["images"]]
        for key, value in a.items():
            print(f"{key}: {value}")
        return
    a = read(data)
    if args.kind is not None:
        a["kernels"][0]["kind"] = args.kind
    if args.block is not None:
        a["plans"][0]["launches"][0]["block"] = args.block
    if args.grid is not None:
        a["plans"][0]["launches"][0]["grid"] = [int(g) for g in args.grid.split(",")]
    if args.stub_images:
        stub_images(a)
    for entry in args.metadata:
        key, _, value = entry.partition("=")
        value = value.encode().decode("unicode_escape")  # '\x1b' is an escape byte
        a["metadata"] = [(k, v) for k, v in a["metadata"] if k != key] + [(key, value)]
    out = write(a)
    if args.version is not None:
        out = out[:8] + struct.pack("<I", args.version) + out[12:]
    with open(args.output, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    sys.exit(main())
