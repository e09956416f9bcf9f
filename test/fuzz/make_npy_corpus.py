#!/usr/bin/env python3
"""Makes the seed corpus of the .npy reader's fuzzer (NpyFuzzer.cpp).

    make_npy_corpus.py OUT_DIR

Small arrays of every dtype kiln-run reads, as numpy writes them (format
versions 1 and 2, scalars, empty and many-dimensional shapes), and a few
files it must refuse: Fortran order, big-endian, a truncated body
and a shape whose element count overflows 64 bits.
"""
import io
import os
import struct
import sys

import numpy as np


def saved(array, version=None):
    out = io.BytesIO()
    if version is None:
        np.save(out, array)
    else:
        np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def forged(header, data=b""):
    text = header.encode()
    text += b" " * ((64 - (10 + len(text) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + data


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    seeds = {
        "f4-2x3.npy": saved(rng.standard_normal((2, 3)).astype(np.float32)),
        "f2-4.npy": saved(rng.standard_normal(4).astype(np.float16)),
        "i8-scalar.npy": saved(np.array(7, dtype=np.int64)),
        "i4-0x5.npy": saved(np.zeros((0, 5), dtype=np.int32)),
        "b1-3x1.npy": saved(np.array([[True], [False], [True]])),
        "f4-rank6.npy": saved(np.ones((1, 2, 1, 2, 1, 2), dtype=np.float32)),
        "f4-v2.npy": saved(np.arange(6, dtype=np.float32).reshape(3, 2), version=(2, 0)),
        "f8-3.npy": saved(np.zeros(3)),
        "bad-fortran.npy": saved(np.asfortranarray(np.ones((2, 3), dtype=np.float32))),
        "bad-big-endian.npy": saved(np.ones(2, dtype=">f4")),
        "bad-truncated.npy": saved(np.ones(8, dtype=np.float32))[:-5],
        "bad-overflow.npy": forged("{'descr': '<f4', 'fortran_order': False, "
                                   "'shape': (4294967296, 4294967296), }"),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
