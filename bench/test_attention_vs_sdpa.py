"""attention_vs_sdpa.py's Markdown table, on made-up rows (no GPU)."""
import json
import os
import tempfile
import unittest

import attention_vs_sdpa as attention

META = {"gpu": "Made-up GPU", "torch": "0.0", "timing": "made-up timing"}
OK_ROW = {"shape": "bert", "batch": 32, "heads": 12, "seq": 128, "head_size": 64,
          "mask": "padding", "kiln_flags": [], "kernels": 1, "kiln_ms": 0.0201,
          "sdpa_ms": 0.0253, "check_rel_l2": 2.654e-4, "check_ok": True,
          "kiln_tflops": 80.1, "sdpa_tflops": 63.6}
FAILED_ROW = dict(OK_ROW, shape="vit_b_16", kiln_ms=0.05, check_ok=False,
                  kiln_flags=["--attention-overlap"])
ERROR_ROW = {"shape": "long_causal", "batch": 32, "error": "kiln-compile failed:\nspills"}
# A run that timed every backend: flash refuses the mask, cuDNN is fastest,
# the memory-efficient one missed the tolerance and came from Python.
BACKENDS = {
    "picked": {"ms": 0.0180, "method": "graph", "rel_l2": 2.4e-4, "ok": True},
    "flash": {"error": "No available kernel. Aborting execution."},
    "memory-efficient": {"ms": 0.0150, "method": "back to back", "rel_l2": 3.1e-2,
                         "ok": False},
    "cudnn": {"ms": 0.0160, "method": "graph", "rel_l2": 2.5e-4, "ok": True},
}
EVERY_BACKEND_ROW = dict(OK_ROW, sdpa_backends=BACKENDS, sdpa_fastest="cudnn", sdpa_ms=0.0160,
                         sdpa_tflops=100.7, kiln_plain_ms=0.0213)


class MarkdownTable(unittest.TestCase):
    def rows(self, text):
        return [line for line in text.splitlines() if line.startswith("| ")][1:]

    def test_a_row_per_run_with_the_speedup_in_microseconds(self):
        text = attention.markdown([OK_ROW, FAILED_ROW, ERROR_ROW], META)
        self.assertIn("GPU: Made-up GPU, torch 0.0. Timing: made-up timing", text)
        ok, failed, error = self.rows(text)
        # An earlier run's row: SDPA's own pick, timed from Python, and
        # kiln's plain launches alone.
        self.assertEqual(ok, "| bert | 32 | 12 x 128 x 64 | padding | 20.1 (plain launches) "
                             "| 25.3 (from Python) | - | - | - | 1.26x (picked) | 80 | 64 | 20.1 "
                             "| 2.7e-04 ok | default |")
        self.assertIn("| 50.0 (plain launches) | 25.3 (from Python) | - | - | - | 0.51x (picked) |",
                      failed)
        self.assertIn("FAIL | --attention-overlap |", failed)
        # An error stays on its row.
        self.assertIn("error: kiln-compile failed: spills", error)

    def test_every_backend_and_the_speedup_over_the_fastest_that_passed(self):
        (row,) = self.rows(attention.markdown([EVERY_BACKEND_ROW], META))
        self.assertEqual(row, "| bert | 32 | 12 x 128 x 64 | padding | 20.1 | 18.0 | refused "
                              "| 15.0 (from Python) (rel L2 3.1e-02 FAIL) | 16.0 | 0.80x (cudnn) "
                              "| 80 | 101 | 21.3 | 2.7e-04 ok | default |")

    def test_the_fastest_backend_skips_refusals_and_failed_checks(self):
        self.assertEqual(attention.fastest_backend(BACKENDS), "cudnn")
        self.assertIsNone(attention.fastest_backend({"flash": BACKENDS["flash"],
                                                     "memory-efficient":
                                                     BACKENDS["memory-efficient"]}))

    def test_render_joins_runs_in_order(self):
        with tempfile.TemporaryDirectory() as work:
            paths = []
            for i, row in enumerate([OK_ROW, FAILED_ROW]):
                paths.append(os.path.join(work, f"run{i}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"meta": META, "rows": [row]}, f)
            out = os.path.join(work, "table.md")
            attention.render(paths, out)
            with open(out) as f:
                self.assertEqual(f.read(), attention.markdown([OK_ROW, FAILED_ROW], META))


if __name__ == "__main__":
    unittest.main()
