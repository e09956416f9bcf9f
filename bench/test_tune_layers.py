#!/usr/bin/env python3
"""Unit tests of tune_layers.py (no GPU, no torch): launches pair with the
report only when both are of one compile, a layer that repeats pools its
launches, a configuration is taken only for a gain past the noise, and the
whole loop on stand-ins for the tools (fake_kiln_tools.py) keeps a gain
that holds in the tuned model and drops one that does not."""
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tune_layers  # noqa: E402

A = "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132>"
B = ("#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 6, grid_limit = 132, "
     "schedule = pingpong>")


def report(*kernels):
    """kernels: (name, key, config) per launch; key None: no group."""
    rows = []
    for name, key, config in kernels:
        row = {"kind": "conv_epilogue", "ops": ["conv2d", "relu"], "result": "32x7x7x512xf16",
               "kernel": name}
        if key:
            row.update(tuning_key=key, kernel_config=config)
        rows.append(row)
    return {"targets": ["sm_90a", "sm_80"], "multiprocessors": 132,
            "functions": [{"function": "forward", "kernels": rows}]}


def alone(*pairs):
    return [{"launch": str(i), "kernel": name, "kind": "conv_epilogue", "mean_ms": ms}
            for i, (name, ms) in enumerate(pairs)]


class PairLaunches(unittest.TestCase):
    def test_pairs_groups_and_skips_others(self):
        launches = tune_layers.pair_launches(
            report(("kiln_1", "k1", A), ("kiln_2", None, None)),
            alone(("kiln_1", 0.010), ("kiln_2", 0.002)))
        self.assertEqual(len(launches), 1)
        self.assertEqual(launches[0]["key"], "k1")
        self.assertAlmostEqual(launches[0]["ms"], 0.010)

    def test_refuses_another_compile(self):
        with self.assertRaisesRegex(tune_layers.TuningError, "not one compile"):
            tune_layers.pair_launches(report(("kiln_1", "k1", A)), alone(("kiln_9", 0.01)))
        with self.assertRaisesRegex(tune_layers.TuningError, "1 launches, kiln-run timed 2"):
            tune_layers.pair_launches(report(("kiln_1", "k1", A)),
                                      alone(("kiln_1", 0.01), ("kiln_2", 0.01)))


class Choose(unittest.TestCase):
    def samples(self, default_ms, other_ms):
        samples = {}
        tune_layers.add_samples(samples, [
            {"key": "k1", "config": A, "ops": "conv2d", "result": "r", "kernel": "kiln_1",
             "ms": ms} for ms in default_ms], "s0c0")
        tune_layers.add_samples(samples, [
            {"key": "k1", "config": B, "ops": "conv2d", "result": "r", "kernel": "kiln_2",
             "ms": ms} for ms in other_ms], "s0c1")
        return samples

    def test_takes_a_clear_gain(self):
        rows = tune_layers.choose(self.samples([0.0110, 0.0112, 0.0111], [0.0090, 0.0091]),
                                  {"k1": A})
        self.assertTrue(rows[0]["taken"])
        self.assertEqual(rows[0]["kernel"], B)
        self.assertAlmostEqual(rows[0]["us"], 9.05)
        self.assertAlmostEqual(rows[0]["default_us"], 11.1)
        document = tune_layers.tuning_document(rows, "sm_90a", 132, "now")
        self.assertEqual(document["format"], "kiln-kernel-tuning 1")
        self.assertEqual([g["kernel"] for g in document["groups"]], [B])

    def test_leaves_noise_alone(self):
        # 2% faster: under the 3% a launch alone moves between processes.
        rows = tune_layers.choose(self.samples([0.0100], [0.0098]), {"k1": A})
        self.assertFalse(rows[0]["taken"])
        self.assertEqual(rows[0]["kernel"], A)
        self.assertEqual(tune_layers.tuning_document(rows, "sm_90a", 132, "now")["groups"], [])
        # 5% of a 4 us launch is under 0.3 us.
        rows = tune_layers.choose(self.samples([0.0040], [0.0038]), {"k1": A})
        self.assertFalse(rows[0]["taken"])

    def test_a_tie_keeps_the_default(self):
        rows = tune_layers.choose(self.samples([0.0100], [0.0100]), {"k1": A})
        self.assertEqual(rows[0]["best"], A)

    def test_needs_the_default_measured(self):
        self.assertEqual(tune_layers.choose(self.samples([0.01], [0.005]), {}), [])

    def test_markdown_counts_the_taken(self):
        rows = tune_layers.choose(self.samples([0.0110], [0.0090]), {"k1": A})
        table = tune_layers.markdown(rows, "resnet50, batch 32")
        self.assertIn("| conv2d, r | 11.0 | 9.0 | yes |", table)
        self.assertIn("1 of 1 layers take another configuration", table)


class Confirm(unittest.TestCase):
    def row(self, key):
        return {"key": key, "ops": "conv2d", "result": "r", "taken": True, "kernel": B,
                "us": 9.0, "default": A, "default_us": 11.0, "best": B, "best_us": 9.0,
                "configs": 2}

    def test_keeps_what_holds_and_drops_what_does_not(self):
        default_runs = [[{"key": "k1", "ms": 0.0110}, {"key": "k2", "ms": 0.0110}],
                        [{"key": "k1", "ms": 0.0111}, {"key": "k2", "ms": 0.0109}]]
        tuned_runs = [[{"key": "k1", "ms": 0.0090}, {"key": "k2", "ms": 0.0112}],
                      [{"key": "k1", "ms": 0.0091}, {"key": "k2", "ms": 0.0111}]]
        rows, lines = tune_layers.confirm([self.row("k1"), self.row("k2")], default_runs,
                                          tuned_runs)
        self.assertEqual([row["taken"] for row in rows], [True, False])
        self.assertEqual(rows[1]["kernel"], A)
        self.assertIn("kept", lines[0])
        self.assertIn("not confirmed", lines[1])
        document = tune_layers.tuning_document(rows, "sm_90a", 132, "now")
        self.assertEqual([g["key"] for g in document["groups"]], ["k1"])

    def test_refuses_a_layer_missing_from_a_model(self):
        with self.assertRaisesRegex(tune_layers.TuningError, "not in both"):
            tune_layers.confirm([self.row("k1")], [[{"key": "k1", "ms": 0.01}]], [[]])


class WholeLoop(unittest.TestCase):
    """tune_layers.main on stand-ins for kiln-compile and kiln-run
    (fake_kiln_tools.py) and for the model's export: the sweep, the
    choice, the file, the tuned model beside the default, and the
    confirmation that keeps a gain or drops one that does not hold."""

    def run_main(self, tmp, slow_tuned):
        import subprocess
        import types
        from unittest import mock
        tools = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_kiln_tools.py")
        bin_dir = os.path.join(tmp, "bin")
        os.makedirs(bin_dir)
        for tool, mode in (("kiln-compile", "compile"), ("kiln-run", "run")):
            path = os.path.join(bin_dir, tool)
            with open(path, "w") as f:
                f.write(f'#!/bin/sh\nexec "{sys.executable}" "{tools}" {mode} "$@"\n')
            os.chmod(path, 0o755)

        def export_for_kiln(name, batch, work):
            open(os.path.join(work, "model.pt"), "w").close()
            return None, None, None, ["x"], 0.0, [os.path.join(work, "ref0.npy")]

        zoo = types.SimpleNamespace(
            export_for_kiln=export_for_kiln,
            run=lambda cmd, **kw: subprocess.run(cmd, capture_output=True, text=True, **kw))
        fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(
            get_device_properties=lambda index: types.SimpleNamespace(name="fake GPU")))
        out = os.path.join(tmp, "tuning.json")
        argv = ["tune_layers.py", bin_dir, os.path.join(tmp, "work"), "--model", "m",
                "--batch", "32", "--candidates", "3", "--rounds", "2", "--runs", "5",
                "--out", out, "--markdown", os.path.join(tmp, "tuning.md")]
        env = {"FAKE_TUNED_SLOW": "1" if slow_tuned else "0"}
        with mock.patch.dict(sys.modules, {"models_vs_torch": zoo, "torch": fake_torch}), \
                mock.patch.object(sys, "argv", argv), mock.patch.dict(os.environ, env), \
                mock.patch("sys.stdout", new_callable=io.StringIO):
            tune_layers.main()
        with open(out) as f, open(os.path.join(tmp, "tuning.md")) as g:
            return json.load(f), g.read()

    def test_a_gain_that_holds_is_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            document, table = self.run_main(tmp, slow_tuned=False)
        self.assertEqual((document["arch"], document["multiprocessors"]), ("sm_90a", 132))
        self.assertEqual([(g["key"], g["kernel"]) for g in document["groups"]],
                         [("00000000000000k1", B)])
        self.assertIn("11.0 -> 9.0 µs in the models side by side", table)
        self.assertIn("kept", table)
        self.assertIn("round 2 tuned: check 1.000e-03 ok", table)

    def test_a_gain_that_does_not_hold_goes_back_to_the_cost_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            document, table = self.run_main(tmp, slow_tuned=True)
        self.assertEqual(document["groups"], [])
        self.assertIn("11.0 -> 12.0 µs in the models side by side (11.0 -> 9.0 in the sweep): "
                      "not confirmed", table)
        self.assertIn("| no |", table)


if __name__ == "__main__":
    unittest.main()
