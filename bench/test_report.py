#!/usr/bin/env python3
"""Unit tests of report.py: failed checks count in no mean, the headline
says what it averages, medians and spreads come from the rounds."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


def row(model, batch, kiln, peers, check="ok", rel_l2=1e-3):
    """A measured row: kiln's rounds and each peer's, by mode key."""
    result = {"model": model, "batch": batch, "check": check, "rel_l2": rel_l2,
              "kiln_ms_rounds": kiln, "kiln_ms": sorted(kiln)[len(kiln) // 2], "kernels": 9}
    for key, rounds in peers.items():
        result[f"{key}_ms_rounds"] = rounds
        result[f"{key}_ms"] = sorted(rounds)[len(rounds) // 2]
    return result


class ReportTest(unittest.TestCase):
    def render(self, *runs, supplements=()):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for index, rows in enumerate(runs):
                paths.append(os.path.join(tmp, f"run{index}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"meta": {"gpu": "test"}, "rows": rows}, f)
            for index, rows in enumerate(supplements):
                paths.append(os.path.join(tmp, f"supplement{index}.json"))
                with open(paths[-1], "w") as f:
                    json.dump({"meta": {"gpu": "test", "supplement": "max-autotune",
                                        "date": "later"}, "rows": rows}, f)
            out = os.path.join(tmp, "RESULTS.md")
            report.main(out, paths)
            with open(out) as f:
                return f.read()

    def test_kiln_only_rows_give_compile_times_and_never_replace_a_full_row(self):
        full = row("resnet50", 32, [1.0], {"compile": [2.0]})
        full["compile_compile_s"] = 12.0
        full["aoti_compile_s"] = 40.0
        alone = row("resnet50", 32, [5.0], {})
        alone.update(kiln_compile_s=2.4, kiln_images_compiled=62,
                     kiln_compile_phases={"load, specialize and import": 0.8,
                                          "graph passes": 0.1,
                                          "code generation, kernels and artifact": 1.3,
                                          "write": 0.02})
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, "full.json"), os.path.join(tmp, "alone.json")]
            with open(paths[0], "w") as f:
                json.dump({"meta": {"gpu": "test", "cold_builds": True}, "rows": [full]}, f)
            with open(paths[1], "w") as f:
                json.dump({"meta": {"gpu": "test", "kiln_only": True, "date": "d"},
                           "rows": [alone]}, f)
            out = os.path.join(tmp, "RESULTS.md")
            report.main(out, paths)
            with open(out) as f:
                text = f.read()
        self.assertIn("**Batch 32: 2.00x**", text)  # the full row's kiln, not 5.0 ms
        line = next(l for l in text.splitlines() if l.startswith("| resnet50 | 32 | 2.40 |"))
        self.assertIn("| 0.80 | 0.10 | 1.30 | 0.02 | 62 | 12.0 | 0.20 | - | - | - | 40.0 | d |", line)

    def test_build_times_from_before_cold_builds_are_marked(self):
        full = row("resnet50", 32, [1.0], {"compile": [2.0]})
        full.update(compile_compile_s=12.0, kiln_compile_s=2.4, kiln_images_compiled=62,
                    kiln_compile_phases={"load, specialize and import": 0.8})
        text = self.render([full])
        self.assertIn("| 12.0‡ | 0.20‡ | - | - | - | - |", text)
        self.assertIn("‡ Built with Inductor's and Triton's caches", text)

    def test_build_times_run_gives_cold_peer_builds_and_never_replaces_a_full_row(self):
        full = row("ffn", 32, [1.0], {"compile": [2.0]})
        full.update(compile_compile_s=1.8, aoti_compile_s=6.7)
        built = {"model": "ffn", "batch": 32, "kiln_compile_s": 1.2, "compile_compile_s": 4.8,
                 "kiln_images_compiled": 8, "kiln_native_compile_s": 0.6,
                 "kiln_in_process_s": 0.48, "kiln_in_process_native_s": 0.24,
                 "kiln_compile_phases": {"load, specialize and import": 0.1}}
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, "full.json"), os.path.join(tmp, "built.json")]
            with open(paths[0], "w") as f:
                json.dump({"meta": {"gpu": "test"}, "rows": [full]}, f)
            with open(paths[1], "w") as f:
                json.dump({"meta": {"gpu": "test", "build_times": True, "cold_builds": True,
                                    "date": "d"}, "rows": [built]}, f)
            out = os.path.join(tmp, "RESULTS.md")
            report.main(out, paths)
            with open(out) as f:
                text = f.read()
        self.assertIn("ffn 2.00x", text)  # the full row is still the table's
        line = next(l for l in text.splitlines() if l.startswith("| ffn | 32 | 1.20 |"))
        # torch.compile from the cold build; AOTInductor, not built there,
        # from the full run and marked as perhaps warm.
        # kiln for this GPU alone beside it, then kiln compiling at load
        # time in a warm process (both targets, this GPU alone): the like
        # for like of torch.compile in its warm Python process.
        self.assertIn("| 8 | 4.8 | 0.25 | 0.60 (0.12) | 0.48 (0.10) | 0.24 (0.05) | 6.7‡ | d |",
                      line)

    def test_rows_from_pt2_get_their_own_table_and_never_replace_a_traced_row(self):
        traced = row("vit_b_16", 32, [3.0], {"compile": [3.3]})
        traced["kernels"] = 90
        exported = row("vit_b_16", 32, [2.0], {"compile": [3.0]})
        exported.update(export="pt2", kernels=91,
                        kiln_compile_phases={"load, specialize and import": 2.67})
        failed = {"model": "bert", "batch": 32, "export": "pt2", "error": "kiln-run failed"}
        text = self.render([traced], [exported, failed])
        main, pt2 = text.split("## From torch.export archives (.pt2)")
        # The traced row keeps its own time (1.10x), not the export's.
        self.assertIn("| vit_b_16 | 32 | 1.0e-03 ok | 3.000 | torch.compile reduce-overhead | "
                      "3.300 | 1.10x |", main)
        self.assertIn("**Batch 32: 1.10x**", main)
        self.assertNotIn("| bert |", main)
        # The export's row: its speedup, its kernels beside the traced ones.
        self.assertIn("| 1.50x | 91 | 90 | - | 2.67 |", pt2)
        self.assertIn("| bert | 32 | error: kiln-run failed | | | | FAIL | | | | | ", pt2)

    def test_failed_row_is_excluded_from_every_mean(self):
        rows = [
            # 2x faster than the best peer (reduce-overhead at 2.0).
            row("resnet50", 32, [1.0, 1.1, 0.9], {"eager": [4.0, 4.0, 4.0],
                                                   "compile": [2.0, 2.1, 1.9]}),
            # 10x "faster", but its check failed: it must not lift the mean.
            row("bert", 32, [0.1, 0.1, 0.1], {"eager": [1.0, 1.0, 1.0]}, check="FAIL",
                rel_l2=0.5),
        ]
        text = self.render(rows)
        self.assertIn("**Batch 32: 2.00x**", text)
        self.assertIn("bert (check FAIL)", text)
        bert = next(line for line in text.splitlines() if line.startswith("| bert | 32 |"))
        self.assertIn("| FAIL |", bert)
        self.assertNotIn("10.00x", text)

    def test_headline_names_what_it_averages_and_lists_small_blocks_apart(self):
        rows = [row("vit_b_16", 1, [1.0], {"eager": [3.0]}),
                row("bert", 1, [1.0], {"eager": [1.0]}),
                row("ffn", 1, [1.0], {"eager": [100.0]})]
        text = self.render(rows)
        self.assertIn("**Batch 1: 1.73x**", text)  # sqrt(3 * 1): ffn's 100x stays out
        self.assertIn("on vit_b_16, bert", text)
        self.assertIn("gpt2 (not measured)", text)
        self.assertIn("Small blocks, not in the mean: ffn 100.00x", text)

    def test_a_row_compiled_with_a_tuning_file_says_so(self):
        tuned = row("resnet50", 32, [1.0], {"eager": [3.0]})
        tuned["kiln_tuning"] = "resnet50_b32.json"
        text = self.render([tuned, row("bert", 32, [1.0], {"eager": [2.0]})])
        self.assertIn("| -, kernel tuning resnet50_b32.json |", text)
        self.assertEqual(text.count("kernel tuning"), 1)

    def test_best_mode_is_the_fastest_median_over_python_and_cpp_peers(self):
        rows = [row("gpt2", 32, [1.0, 1.2, 1.1],
                    {"compile": [0.9, 2.0, 0.95], "aoti_graph": [0.8, 0.85, 0.9]})]
        text = self.render(rows)
        line = next(line for line in text.splitlines() if line.startswith("| gpt2 | 32 |"))
        self.assertIn("| AOTInductor C++ CUDA graph | 0.850 (0.800-0.900) | 0.77x |", line)
        self.assertIn("| 1.100 (1.000-1.200) |", line)

    def test_earlier_failed_run_shows_fail_not_a_speedup(self):
        old = [row("resnet50", 1, [0.1], {"compile": [1.0]}, check="FAIL", rel_l2=0.02)]
        new = [row("resnet50", 1, [0.5], {"compile": [1.0]})]
        text = self.render(old, new)
        line = next(line for line in text.splitlines() if line.startswith("| resnet50 | 1 |"))
        self.assertIn("| 2.00x |", line)
        self.assertIn("FAIL (0.02)", line)
        self.assertNotIn("10.00x", line)

    def test_peer_whose_own_check_failed_cannot_be_the_best(self):
        fast_but_wrong = row("bert", 32, [1.0], {"compile": [2.0], "aoti_graph": [0.5]})
        fast_but_wrong["aoti_graph_rel_l2"] = 0.3
        text = self.render([fast_but_wrong])
        self.assertIn("**Batch 32: 2.00x**", text)
        self.assertIn("0.500 (check FAIL)", text)

    def test_supplement_adds_its_modes_at_the_ratio_measured_in_its_own_run(self):
        full = [row("vit_b_16", 32, [2.0, 2.0, 2.0], {"compile": [3.0, 3.0, 3.0]})]
        # In the supplement kiln took 2.06 ms (the same build, 3% slower)
        # and max-autotune 2.06: a tie, which must stay a tie (1.00x), not
        # 2.06 / 2.0 = 1.03x.
        supplement = [row("vit_b_16", 32, [2.06], {"compile_max_autotune": [2.06]})]
        text = self.render(full, supplements=[supplement])
        line = next(line for line in text.splitlines() if line.startswith("| vit_b_16 | 32 |"))
        self.assertIn("| torch.compile max-autotune | 2.000 | 1.00x |", line)
        self.assertIn("2.000*", text)
        self.assertIn("max-autotune supplement later", text)
        # The supplement is not an earlier run of the row.
        self.assertNotIn("1.03x", text)

    def test_supplement_whose_kiln_check_failed_adds_nothing(self):
        full = [row("bert", 32, [2.0], {"compile": [3.0]})]
        supplement = [row("bert", 32, [2.0], {"compile_max_autotune": [1.0]}, check="FAIL")]
        text = self.render(full, supplements=[supplement])
        self.assertIn("**Batch 32: 1.50x**", text)
        self.assertNotIn("max-autotune |", text.split("## Every PyTorch mode")[0])

    def test_supplement_beside_another_kiln_build_adds_times_as_measured(self):
        full = [row("bert", 32, [2.0], {"compile": [3.0]})]
        # kiln took 3.6 ms in the supplement: another build. Scaling would
        # turn max-autotune's 2.2 ms into 1.22 ms; the peer did not change.
        supplement = [row("bert", 32, [3.6], {"compile_max_autotune": [2.2]})]
        text = self.render(full, supplements=[supplement])
        self.assertIn("2.200†", text)
        self.assertIn("an earlier build of kiln", text)
        self.assertIn("**Batch 32: 1.10x**", text)
        self.assertNotIn("1.222", text)


if __name__ == "__main__":
    unittest.main()
