#!/usr/bin/env python3
"""Unit tests of conv_vs_cudnn.py's bytes floors, which need no GPU: the
peak memory rate from a GPU's memory clock and bus width, and --retable,
which writes an earlier run's table again with each launch's floor and
says which launches over 1.2x of cuDNN cannot get under it."""
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conv_vs_cudnn  # noqa: E402
from test_compare_profiles import profile_text  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def earlier_run(rows):
    """conv_vs_cudnn.py's JSON for resnet50 b32: rows [(launch, kernel,
    kiln µs, cuDNN µs)]."""
    return {"header": "GPU: NVIDIA H100 80GB HBM3, torch 2.11.0+cu130.", "launches": 100,
            "dry_run": False,
            "models": [{"model": "resnet50", "batch": 32, "profile": "resnet50_b32.txt",
                        "summary": {"pools": []},
                        "rows": [{"launch": launch, "ops": "conv2d, add, relu", "kernel": kernel,
                                  "convs": ["1x1 64->256 s1 56x56"], "modules": ["layer1.0"],
                                  "class": "dense", "conv_mflop": 3288.3, "kiln_mflop": 3365.4,
                                  "kiln_us": kiln, "kiln_in_model_us": kiln, "cudnn_us": cudnn,
                                  "ratio": kiln / cudnn, "kiln_tflops": 3288.3 / kiln,
                                  "cudnn_fused": None, "cudnn_fused_us": None,
                                  "like_us": cudnn, "like_ratio": kiln / cudnn,
                                  "same_us": cudnn, "same_ratio": kiln / cudnn}
                                 for launch, kernel, kiln, cudnn in rows]}]}


def retable_one_launch(earlier, kiln_ms, memory_rate):
    """conv_vs_cudnn.py --retable `earlier` against a profile of one launch,
    kiln_AA (a 1x1 convolution + residual + ReLU) taking `kiln_ms`."""
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "resnet50_b32.txt")
        with open(profile, "w") as f:
            f.write(profile_text({"kiln_AA": ("conv_epilogue", kiln_ms)},
                                 [("conv_epilogue", "conv2d, add, relu", "32x56x56x256xf16",
                                   "kiln_AA")]))
        path = os.path.join(tmp, "earlier.json")
        with open(path, "w") as f:
            json.dump(earlier, f)
        return subprocess.run([sys.executable, os.path.join(HERE, "conv_vs_cudnn.py"),
                               profile, "--retable", path, "--memory-rate", str(memory_rate)],
                              capture_output=True, text=True)


class BytesFloorTest(unittest.TestCase):
    def test_peak_rate_from_the_clock_and_the_bus(self):
        h100 = types.SimpleNamespace(memory_clock_rate=2619000, memory_bus_width=5120)
        self.assertAlmostEqual(conv_vs_cudnn.peak_memory_rate(h100) / 1e12, 3.352, places=3)
        self.assertAlmostEqual(conv_vs_cudnn.bytes_floor_us(3.35e6, 3.35e12), 1.0)

    def retable(self, rows, kib, extra=()):
        launches = [("conv_epilogue", "conv2d, add, relu", "32x56x56x256xf16", kernel)
                    for _, kernel, _, _ in rows]
        text = profile_text({kernel: ("conv_epilogue", kiln / 1e3) for _, kernel, kiln, _ in rows},
                            launches)
        # The launch report's KiB moved, launch by launch.
        lines = text.splitlines()
        for index, value in enumerate(kib):
            lines = [line.replace("   1.000   2.0  " + rows[index][1],
                                  f"   1.000   {value:.1f}  " + rows[index][1])
                     if line.startswith(f"  {index}   ") else line for line in lines]
        with tempfile.TemporaryDirectory() as tmp:
            profile = os.path.join(tmp, "resnet50_b32.txt")
            with open(profile, "w") as f:
                f.write("\n".join(lines) + "\n")
            earlier = os.path.join(tmp, "earlier.json")
            with open(earlier, "w") as f:
                json.dump(earlier_run(rows), f)
            out_json = os.path.join(tmp, "again.json")
            run = subprocess.run([sys.executable, os.path.join(HERE, "conv_vs_cudnn.py"),
                                  profile, "--retable", earlier, "--json", out_json, *extra],
                                 capture_output=True, text=True)
            again = None
            if os.path.exists(out_json):
                with open(out_json) as f:
                    again = json.load(f)
            return run, again

    def test_floors_and_the_launches_that_cannot_reach_1_2x(self):
        # 115.6 MB at 3.35 TB/s is 34.5 µs: over 1.2x of 26.8 (32.2 µs);
        # 16.4 MB is 4.9 µs, under 1.2x of 8.1.
        rows = [(0, "kiln_AA", 44.9, 26.8), (1, "kiln_BB", 10.0, 8.1)]
        run, again = self.retable(rows, [115638784 / 1024, 16400000 / 1024],
                                  ["--memory-rate", "3.35"])
        self.assertEqual(run.returncode, 0, run.stderr)
        model = again["models"][0]
        self.assertAlmostEqual(model["rows"][0]["floor_us"], 34.52, places=1)
        self.assertAlmostEqual(model["rows"][1]["floor_us"], 4.90, places=1)
        self.assertEqual(model["summary"]["over_under_floor"], [0])
        self.assertIn("Over 1.2x of cuDNN's convolution alone: 2; of them 1 move more bytes",
                      run.stdout)
        self.assertIn("| bytes floor µs |", run.stdout)

    def test_the_fused_column_is_kiln_over_cudnns_fused_call(self):
        # cuDNN's fused convolution + bias + residual + ReLU took 44.6 µs,
        # its convolution alone 24.3: the column says kiln's 31.8 is 0.71x
        # of the fused call, not the convolution alone's 1.31x.
        rows = [(0, "kiln_AA", 31.8, 24.3)]
        earlier = earlier_run(rows)
        earlier["models"][0]["rows"][0].update(cudnn_fused="bias, add, relu",
                                                cudnn_fused_us=44.6)
        run = retable_one_launch(earlier, 0.0318, 4.8)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("| 1.31x | 44.6 (bias, add, relu) | 0.71x |", run.stdout)

    def test_refuses_without_a_rate_or_with_another_profile(self):
        rows = [(0, "kiln_AA", 44.9, 26.8)]
        run, _ = self.retable(rows, [1000.0])
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("names no memory rate", run.stderr)
        # A row whose launch runs another kernel in the profile: not its run.
        earlier = earlier_run(rows)
        earlier["models"][0]["rows"][0]["kernel"] = "kiln_ZZ"
        run = retable_one_launch(earlier, 0.0449, 3.35)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("not the profile of", run.stderr)


if __name__ == "__main__":
    unittest.main()
