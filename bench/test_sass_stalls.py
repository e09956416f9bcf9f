"""bench/sass_stalls.py on a made-up Nsight Compute source page."""
import csv
import io
import os
import tempfile
import unittest
from contextlib import redirect_stdout

import sass_stalls

HEADER = ["Address", "Source", "Warp Stall Sampling (All Samples)",
          "Warp Stall Sampling (Not-issued Samples)", "Instructions Executed",
          "stall_barrier", "stall_long_sb", "stall_mio", "stall_long_sb (Not Issued)"]
ROWS = [
    ["0x0", "LDC R1, c[0x0][0x28]", "2", "2", "1536", "0", "0", "0", "0"],
    ["0x10", "@!P0 BRA 0x40", "60", "59", "24576", "1", "57", "2", "99"],
    ["0x20", "HGMMA.64x192x16.F32 R24, gdesc[UR16], R24", "8", "1", "24576", "0", "0", "8", "0"],
    ["0x30", "WARPGROUP.DEPBAR.LE gsb0, 0x1", "30", "30", "24576", "29", "0", "1", "0"],
]


class SassStallsTest(unittest.TestCase):
    def write(self, header, rows):
        handle = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
        writer = csv.writer(handle)
        writer.writerow(["Kernel Name", "kiln_0123"])
        writer.writerow(header)
        writer.writerows(rows)
        handle.close()
        self.addCleanup(os.unlink, handle.name)
        return handle.name

    def test_lists_the_instructions_past_the_threshold_with_their_reasons(self):
        header, rows = sass_stalls.read(self.write(HEADER, ROWS))
        total, threshold, listed = sass_stalls.summarize(header, rows, minimum=10)
        self.assertEqual(total, 100)
        self.assertEqual(threshold, 10)
        self.assertEqual([entry[0] for entry in listed], [1, 3])
        position, samples, running, executed, sass, top = listed[0]
        self.assertEqual((samples, running, executed), (60, 62, "24576"))
        self.assertEqual(sass, "@!P0 BRA 0x40")
        # Not-issued columns are not reasons of their own.
        self.assertEqual(top, [("long_sb", 57), ("mio", 2)])
        self.assertEqual(listed[1][2], 100)

    def test_default_threshold_is_a_hundredth_of_the_samples(self):
        header, rows = sass_stalls.read(self.write(HEADER, ROWS))
        _, threshold, listed = sass_stalls.summarize(header, rows)
        self.assertEqual(threshold, 1)
        self.assertEqual(len(listed), 4)

    def test_report_prints_a_line_an_instruction(self):
        out = io.StringIO()
        with redirect_stdout(out):
            sass_stalls.report(self.write(HEADER, ROWS), 25)
        lines = out.getvalue().splitlines()
        self.assertIn("4 instructions, 100 samples", lines[0])
        self.assertEqual(len(lines), 3)
        self.assertIn("barrier 29", lines[2])

    def test_a_file_without_the_sample_columns_is_refused(self):
        path = self.write(["Address", "Source"], [["0x0", "EXIT"]])
        with self.assertRaises(SystemExit) as raised:
            sass_stalls.read(path)
        self.assertIn("Warp Stall Sampling", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
