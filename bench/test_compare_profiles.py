#!/usr/bin/env python3
"""Unit tests of compare_profiles.py (and the profile reader under it): the
launches pair up by index, a launch of another group refuses the
comparison, the sums add each launch's kernel mean, and launches timed
alone are read and used where both profiles have them."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_profiles  # noqa: E402
from kiln_profile import ProfileError, parse_profile  # noqa: E402


def profile_text(kernels, launches, runs=10, alone=None):
    """kiln-run --profile's table and kiln-compile's launch report:
    kernels {name: (kind, mean ms)}, launches [(kind, ops, result, kernel)];
    with `alone` [ms per launch], kiln-run --time-launches's table too."""
    calls = {}
    for _, _, _, kernel in launches:
        calls[kernel] = calls.get(kernel, 0) + runs
    lines = ["kiln-run: model.kiln on NVIDIA H200 (sm_90a): profiled",
             "kernel                 kind            calls     total ms      mean ms   % run"]
    for name, (kind, mean) in kernels.items():
        lines.append(f"{name}  {kind:<15} {calls[name]:>5} {mean * calls[name]:>12.4f} "
                     f"{mean:>12.4f}   10.0%")
    lines.append(f"{runs} runs, 1.0000 ms of device time per run (first start to last end)")
    if alone is not None:
        lines += ["launches timed alone (100 back to back each, replayed from a CUDA graph)",
                  "  launch  kernel                 kind              mean ms"]
        for index, ((kind, _, _, kernel), ms) in enumerate(zip(launches, alone)):
            lines.append(f"  {index:>6}  {kernel:<22} {kind:<14} {ms:>10.5f}")
        lines.append(f"{len(alone)} launches alone: {sum(alone):.4f} ms together")
    lines += ["",
              "kiln kernels of @forward",
              "  #   kind           ops                    result              MFLOP    "
              "KiB moved  kernel"]
    for index, (kind, ops, result, kernel) in enumerate(launches):
        lines.append(f"  {index}   {kind}  {ops}   {result}   1.000   2.0  {kernel}")
    lines.append("kiln-compile: model.kiln: 2 kernel launches")
    return "\n".join(lines) + "\n"


class CompareProfilesTest(unittest.TestCase):
    def write(self, folder, name, text):
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_pairs_launches_and_sums_by_kind(self):
        launches = [("conv_epilogue", "conv2d, add", "32x56x56x16xf16", "kiln_AA"),
                    ("elementwise", "relu", "32x56x56x16xf16", "kiln_BB")]
        with tempfile.TemporaryDirectory() as tmp:
            before = self.write(os.path.join(tmp, "a"), "mobilenet_v3_large_b32.txt",
                                profile_text({"kiln_AA": ("conv_epilogue", 0.0423),
                                              "kiln_BB": ("elementwise", 0.0050)}, launches))
            after_launches = [(kind, ops, result, kernel.replace("AA", "CC"))
                              for kind, ops, result, kernel in launches]
            after = self.write(os.path.join(tmp, "b"), "mobilenet_v3_large_b32.txt",
                               profile_text({"kiln_CC": ("conv_epilogue", 0.0231),
                                             "kiln_BB": ("elementwise", 0.0050)}, after_launches))
            pairs = compare_profiles.paired_launches(parse_profile(before), parse_profile(after))
        self.assertEqual([round(p[1], 1) for p in pairs], [42.3, 5.0])
        self.assertEqual([round(p[2], 1) for p in pairs], [23.1, 5.0])
        text = compare_profiles.report(pairs, top=1)
        # --top 1 shows the launch that changed most, and the sums all.
        self.assertIn("| 0 | conv_epilogue | conv2d, add | 32x56x56x16f16 | 42.3 | 23.1 | 0.55x | "
                      "changed |", text)
        self.assertNotIn("| 1 | elementwise", text)
        self.assertIn("- all 2 launches: 47.3 -> 28.1 µs (-19.2)", text)
        # kiln_BB in both compiles: the same kernel, apart from the changed one.
        self.assertEqual([p[3] for p in pairs], [False, True])
        self.assertIn("- 1 launches whose kernel changed: 42.3 -> 23.1 µs (-19.2)", text)
        self.assertIn("- 1 launches whose kernel is the same (run-to-run noise): 5.0 -> 5.0 µs "
                      "(+0.0)", text)
        self.assertIn("- conv_epilogue: 1 launches, 42.3 -> 23.1 µs (-19.2)", text)

    def test_launches_timed_alone_when_both_have_them(self):
        launches = [("conv_epilogue", "conv2d, relu", "32x56x56x64xf16", "kiln_AA"),
                    ("conv_epilogue", "conv2d, relu", "32x56x56x64xf16", "kiln_AA")]
        kernels = {"kiln_AA": ("conv_epilogue", 0.0200)}
        with tempfile.TemporaryDirectory() as tmp:
            before = self.write(os.path.join(tmp, "a"), "resnet50_b32.txt",
                                profile_text(kernels, launches, alone=[0.01512, 0.01498]))
            after = self.write(os.path.join(tmp, "b"), "resnet50_b32.txt",
                               profile_text(kernels, launches, alone=[0.01301, 0.01311]))
            plain = self.write(os.path.join(tmp, "c"), "resnet50_b32.txt",
                               profile_text(kernels, launches))
            first = parse_profile(before)
            self.assertEqual(first["alone_repetitions"], 100)
            self.assertEqual([l["alone_ms"] for l in first["launches"]], [0.01512, 0.01498])
            self.assertIsNone(parse_profile(plain)["alone_repetitions"])
            pairs = compare_profiles.paired_launches(first, parse_profile(after))
            self.assertEqual([(round(p[1], 2), round(p[2], 2)) for p in pairs],
                             [(15.12, 13.01), (14.98, 13.11)])
            # The same kernel both ways: all of the change is noise.
            text = compare_profiles.report(pairs, top=2)
            self.assertIn("| 0 | conv_epilogue | conv2d, relu | 32x56x56x64f16 | 15.1 | 13.0 | "
                          "0.86x | same |", text)
            self.assertIn("- 0 launches whose kernel changed: 0.0 -> 0.0 µs (+0.0)", text)
            self.assertIn("- 2 launches whose kernel is the same (run-to-run noise): 30.1 -> "
                          "26.1 µs (-4.0)", text)
            # One side without them: both by the kernels' means in the model.
            pairs = compare_profiles.paired_launches(first, parse_profile(plain))
            self.assertEqual([(round(p[1], 1), round(p[2], 1)) for p in pairs],
                             [(20.0, 20.0), (20.0, 20.0)])
            # A launch timed alone as another kernel: the files are of two compiles.
            with open(before) as f:
                text = f.read().replace("       0  kiln_AA", "       0  kiln_ZZ")
            mixed = self.write(os.path.join(tmp, "d"), "resnet50_b32.txt", text)
            with self.assertRaisesRegex(ProfileError, "launch 0 is not timed alone as kiln_AA"):
                parse_profile(mixed)

    def test_refuses_launches_of_other_groups(self):
        with tempfile.TemporaryDirectory() as tmp:
            before = self.write(os.path.join(tmp, "a"), "resnet50_b1.txt", profile_text(
                {"kiln_AA": ("conv_epilogue", 0.01)},
                [("conv_epilogue", "conv2d, relu", "1x56x56x64xf16", "kiln_AA")]))
            after = self.write(os.path.join(tmp, "b"), "resnet50_b1.txt", profile_text(
                {"kiln_AA": ("conv_epilogue", 0.01)},
                [("conv_epilogue", "conv2d, add, relu", "1x56x56x64xf16", "kiln_AA")]))
            with self.assertRaisesRegex(ProfileError, "launch 0: .* not the same group"):
                compare_profiles.paired_launches(parse_profile(before), parse_profile(after))
            with open(after) as f:
                other = self.write(os.path.join(tmp, "c"), "resnet50_b32.txt", f.read())
            with self.assertRaisesRegex(ProfileError, "not the same model and batch"):
                compare_profiles.paired_launches(parse_profile(before), parse_profile(other))


if __name__ == "__main__":
    unittest.main()
