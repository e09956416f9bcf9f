"""gemm_vs_torch.py's table rows from made-up timings (no GPU): medians over
rounds, each ratio's range, the worst round's check."""
import unittest

import gemm_vs_torch as gemm
from timing import KilnTimes

CONFIG = "variant = gemm_wgmma, tile = [128, 192, 64]"


def row(theirs, ours, epilogue="residual"):
    return gemm.table_row("BERT out proj", 4096, 768, 768, epilogue, 2 * 4096 * 768 * 768,
                          theirs, ours, CONFIG)


class TableRow(unittest.TestCase):
    def test_one_round_as_measured(self):
        text = row([(0.0098, 0.0140, 0.0130)], [KilnTimes(0.0100, 0.0105, 2.457e-4, "ok")])
        self.assertEqual(text, "| BERT out proj | 4096x768x768 | residual | 10.0 | 483 | 9.8 | "
                               "0.98x | 14.0 | 1.40x | 13.0 | 10.5 | 2.457e-04 ok | "
                               f"`{CONFIG}` |")

    def test_rounds_give_medians_and_each_ratio_s_range(self):
        theirs = [(0.0100, 0.0140, None), (0.0096, 0.0150, None), (0.0098, 0.0145, None)]
        ours = [KilnTimes(0.0100, 0.0110, 2.4e-4, "ok"), KilnTimes(0.0098, 0.0108, 2.5e-4, "ok"),
                KilnTimes(0.0120, 0.0125, 2.4e-4, "ok")]
        cells = [c.strip() for c in row(theirs, ours, "bias").split("|")[1:-1]]
        # kiln's median 10.0 us; F.linear's 9.8; round by round 1.00, 0.98, 0.82.
        self.assertEqual(cells[3:11], ["10.0", "483", "9.8", "0.98x (0.82-1.00)", "14.5",
                                       "1.45x (1.21-1.53)", "-", "11.0"])
        self.assertEqual(cells[11], "2.500e-04 ok")

    def test_a_failed_round_is_the_row_s_check(self):
        ours = [KilnTimes(0.0100, 0.0110, 2.4e-4, "ok"), KilnTimes(0.0100, 0.0110, 1e-3, "FAIL")]
        theirs = [(0.0098, 0.0140, 0.0130)] * 2
        self.assertIn("| 1.000e-03 FAIL |", row(theirs, ours))


if __name__ == "__main__":
    unittest.main()
