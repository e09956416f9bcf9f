#!/usr/bin/env python3
"""Unit tests of model-sweep.py's turns on the GPU: checks run side by side,
a timing has the GPU to itself on the cores kept back for it, and a timing
waiting is not overtaken by a check that asks after it."""
import importlib.util
import os
import shutil
import tempfile
import threading
import time
import unittest

spec = importlib.util.spec_from_file_location(
    "model_sweep", os.path.join(os.path.dirname(os.path.abspath(__file__)), "model-sweep.py"))
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)


class MachineLockTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.work, ignore_errors=True)
        self.order, self.lock = [], threading.Lock()

    def hold(self, name, turn, entered, release):
        """Takes `turn`, notes the entry, holds it until `release` is set."""
        with turn(self.work):
            with self.lock:
                self.order.append(name)
            entered.set()
            release.wait(10)

    def start(self, name, turn, release):
        entered = threading.Event()
        thread = threading.Thread(target=self.hold, args=(name, turn, entered, release))
        thread.start()
        return thread, entered

    def test_checks_share_and_a_waiting_measurement_goes_first(self):
        release_a, release_b, release_c, release_d = (threading.Event() for _ in range(4))
        a, a_in = self.start("check a", sweep.using_gpu, release_a)
        self.assertTrue(a_in.wait(5))
        b, b_in = self.start("check b", sweep.using_gpu, release_b)
        self.assertTrue(b_in.wait(5), "a second check waited for the first")
        c, c_in = self.start("time c", sweep.measuring, release_c)
        self.assertFalse(c_in.wait(0.3), "a timing ran beside checks")
        d, d_in = self.start("check d", sweep.using_gpu, release_d)
        self.assertFalse(d_in.wait(0.3), "a check overtook a waiting measurement")
        release_a.set()
        self.assertFalse(c_in.wait(0.3), "a timing ran beside a check")
        release_b.set()
        self.assertTrue(c_in.wait(5))
        self.assertFalse(d_in.wait(0.3), "a check ran beside a timing")
        release_c.set()
        self.assertTrue(d_in.wait(5))
        release_d.set()
        for thread in (a, b, c, d):
            thread.join(5)
        self.assertEqual(self.order, ["check a", "check b", "time c", "check d"])

    def test_a_timing_runs_on_the_cores_kept_for_it(self):
        before = os.sched_getaffinity(0)
        kept = {min(before)}
        with sweep.measuring(self.work, kept):
            self.assertEqual(os.sched_getaffinity(0), kept)
        self.assertEqual(os.sched_getaffinity(0), before)
        with sweep.measuring(self.work):
            self.assertEqual(os.sched_getaffinity(0), before)


if __name__ == "__main__":
    unittest.main()
