"""Flips the last byte of every kernel-library entry in the folder argv[1]."""
import glob
import sys

paths = glob.glob(sys.argv[1] + "/*.kernel")
assert paths, "no entries to corrupt"
for path in paths:
    with open(path, "r+b") as f:
        data = f.read()
        f.seek(len(data) - 1)
        f.write(bytes([data[-1] ^ 1]))
