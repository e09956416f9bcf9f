#!/usr/bin/env python3
"""Where a kernel's warps stall, instruction by instruction.

    sass_stalls.py KERNEL-sass.csv [MORE-sass.csv ...] [--min SAMPLES]

Reads the SASS with its warp-state samples that `scripts/gpu-ncu.sh` writes
under KILN_NCU_SOURCE=1 (Nsight Compute's source page as CSV) and prints,
for each file, the total samples and every instruction with at least
--min of them (default: 1% of the total): its position, its samples and
the running total up to it, how often it executed, its SASS, and the two
stall reasons it was sampled in most. A kernel's phases show as runs of
positions (the producer's loop, the consumers' main loop between the
first and last HGMMA, the epilogue after it), so two kernels' samples can
be set side by side phase by phase: a bias-only GEMM against the same
GEMM with a residual, or kiln's against cuBLAS's. Runs on any machine.
"""
import argparse
import csv
import sys


def read(path):
    """(header, rows) of Nsight Compute's source CSV: a kernel-name line,
    then the header, then an instruction a row."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for i, row in enumerate(rows):
        if "Source" in row and "Warp Stall Sampling (All Samples)" in row:
            return row, rows[i + 1:]
    raise SystemExit(f"sass_stalls: {path}: no 'Source' and 'Warp Stall Sampling (All Samples)' "
                     "columns (is it `ncu --page source --csv --print-source sass` output?)")


def number(text):
    try:
        return float(text.replace(",", "")) if text else 0.0
    except ValueError:
        return 0.0


def summarize(header, rows, minimum=None):
    """(total samples, the threshold used, [(position, samples, running
    total, executions, SASS, [(reason, samples)] of the two largest)]) of
    the instructions with at least `minimum` samples (None: 1% of the
    total, at least 1)."""
    samples_at = header.index("Warp Stall Sampling (All Samples)")
    source_at = header.index("Source")
    executed_at = header.index("Instructions Executed") if "Instructions Executed" in header \
        else None
    reasons = [(i, name[len("stall_"):]) for i, name in enumerate(header)
               if name.startswith("stall_") and "(Not Issued)" not in name]
    total = sum(number(row[samples_at]) for row in rows if len(row) > samples_at)
    threshold = minimum if minimum is not None else max(1.0, total / 100)
    listed, running = [], 0.0
    for position, row in enumerate(rows):
        if len(row) <= samples_at:
            continue
        samples = number(row[samples_at])
        running += samples
        if samples < threshold:
            continue
        top = sorted(((number(row[i]), name) for i, name in reasons if i < len(row)),
                     reverse=True)[:2]
        executed = row[executed_at] if executed_at is not None and executed_at < len(row) else ""
        listed.append((position, samples, running, executed, row[source_at].strip(),
                       [(name, count) for count, name in top if count > 0]))
    return total, threshold, listed


def report(path, minimum):
    header, rows = read(path)
    total, threshold, listed = summarize(header, rows, minimum)
    print(f"== {path}: {len(rows)} instructions, {total:.0f} samples "
          f"(listed: {threshold:.0f} or more)")
    for position, samples, running, executed, sass, top in listed:
        why = ", ".join(f"{name} {count:.0f}" for name, count in top)
        print(f"{position:6d} {samples:6.0f} {running:7.0f} {executed:>8}  {sass[:64]:64s}  {why}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--min", type=float, help="list instructions with this many samples")
    args = parser.parse_args()
    for path in args.csv:
        try:
            report(path, args.min)
        except BrokenPipeError:  # a pager or `head` closed the output
            sys.stderr.close()
            return
        except OSError as error:
            sys.exit(f"sass_stalls: {error}")


if __name__ == "__main__":
    main()
