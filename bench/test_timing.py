"""kiln's side of the kernel benchmarks (bench/timing.py): kiln-run's report
read into graph and plain-launch times, on made-up reports and a stand-in
kiln-run (no GPU)."""
import json
import math
import os
import stat
import sys
import tempfile
import unittest

import timing

REPORT = {
    "checks": [{"output": "out0", "rel_l2": 2.077e-4, "pass": True}],
    "bench": {"plain_launches_ms": 0.0253, "cuda_graph_ms": 0.0262},
    "launches_alone": {"repetitions": "100",
                       "launches": [{"launch": "0", "kernel": "k0", "mean_ms": 0.0239},
                                    {"launch": "1", "kernel": "k1", "mean_ms": 0.0011}]},
}

# A stand-in kiln-run: writes FAKE_REPORT (a JSON text) to its --json path
# and records its arguments beside it.
FAKE_KILN_RUN = """#!{python}
import json, os, sys
args = sys.argv[1:]
path = args[args.index("--json") + 1]
with open(path + ".args", "w") as f:
    json.dump(args, f)
report = os.environ.get("FAKE_REPORT")
if report:
    with open(path, "w") as f:
        f.write(report)
print("kiln-run: something went wrong", file=sys.stderr)
sys.exit(0 if report else 1)
"""


class KilnRunTimes(unittest.TestCase):
    def test_the_graph_time_sums_the_launches_alone(self):
        times = timing.kiln_run_times(REPORT)
        self.assertAlmostEqual(times.ms, 0.0250)
        self.assertAlmostEqual(times.plain_ms, 0.0253)
        self.assertAlmostEqual(times.rel_l2, 2.077e-4)
        self.assertEqual(times.verdict, "ok")

    def test_a_failed_or_missing_check_fails(self):
        failed = dict(REPORT, checks=[{"rel_l2": 0.5, "pass": False},
                                      {"rel_l2": 1e-4, "pass": True}])
        times = timing.kiln_run_times(failed)
        self.assertEqual((times.rel_l2, times.verdict), (0.5, "FAIL"))
        unchecked = timing.kiln_run_times(dict(REPORT, checks=[]))
        self.assertTrue(math.isnan(unchecked.rel_l2))
        self.assertEqual(unchecked.verdict, "FAIL")

    def test_a_report_without_times_is_an_error(self):
        with self.assertRaisesRegex(RuntimeError, "--time-launches"):
            timing.kiln_run_times({k: v for k, v in REPORT.items() if k != "launches_alone"})
        with self.assertRaisesRegex(RuntimeError, "--bench"):
            timing.kiln_run_times({k: v for k, v in REPORT.items() if k != "bench"})


class KilnTimedRun(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.work.name, "bin")
        os.makedirs(self.bin)
        tool = os.path.join(self.bin, "kiln-run")
        with open(tool, "w") as f:
            f.write(FAKE_KILN_RUN.format(python=sys.executable))
        os.chmod(tool, os.stat(tool).st_mode | stat.S_IEXEC)
        self.reference = os.path.join(self.work.name, "ref.npy")

    def tearDown(self):
        os.environ.pop("FAKE_REPORT", None)
        self.work.cleanup()

    def test_both_timings_asked_for_and_read(self):
        os.environ["FAKE_REPORT"] = json.dumps(REPORT)
        times = timing.kiln_timed_run(self.bin, "a.kiln", ["--input", "x=x.npy"],
                                      self.reference, 200, extra=["--tolerance", "0.01"])
        self.assertAlmostEqual(times.ms, 0.0250)
        with open(os.path.join(self.work.name, "kiln-run.json.args")) as f:
            args = json.load(f)
        self.assertEqual(args[:5], ["a.kiln", "--input", "x=x.npy", "--check", self.reference])
        for flag in ("--tolerance", "--bench", "--time-launches"):
            self.assertIn(flag, args)
        self.assertEqual(args[args.index("--time-launches") + 1], "200")

    def test_no_report_raises_with_what_kiln_run_said(self):
        # A report left by an earlier run is not taken for this one's.
        with open(os.path.join(self.work.name, "kiln-run.json"), "w") as f:
            json.dump(REPORT, f)
        with self.assertRaisesRegex(RuntimeError, "something went wrong"):
            timing.kiln_timed_run(self.bin, "a.kiln", [], self.reference, 10)


if __name__ == "__main__":
    unittest.main()
