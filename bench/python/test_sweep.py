"""Tests of the reduction sweep's Python side without a GPU: sweep_ratio.py on made-up outputs (the
join by case id, the ratio, the order, the worst line, the count under 0.95, failed checks, missing
cases, unsupported results) and gpu_reductions.py's case list, checks and sweep loop on NumPy.

    python3 bench/python/test_sweep.py [XP_BENCH_GPU_REDUCTIONS]

With the program's path, it also runs a few of its --sweep-cases --quick cases with
gpu_reductions.py --numpy and joins them to xp's --cpu output of the same cases."""
import io
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_reductions  # noqa: E402  (imports neither CuPy nor PyTorch)
import sweep_ratio  # noqa: E402

if __name__ == "__main__" and len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
    os.environ["XP_BENCH_GPU_REDUCTIONS"] = sys.argv.pop(1)


def run_report(outputs, cases=None):
    parsed = {key: sweep_ratio.parse_output(text.splitlines(), key) for key, text in outputs.items()}
    out = io.StringIO()
    status = sweep_ratio.report(parsed, None if cases is None else sweep_ratio.parse_case_ids(cases.splitlines()), out)
    return status, out.getvalue()


def table_rows(text):
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| case ")]


CASES = """# a list
sum.float32.all.1M sum float32 262144 all
max.int8.rows24K.16M max int8 682x24576 1
var.int8.cols40K.16M var int8 409x40960 0
argmax.float16.all.1G argmax float16 536870912 all
"""
XP = """# xp on cuda:0
case sum.float32.all.1M 0.010000 0.009 0.011 ok
case max.int8.rows24K.16M 0.020000 0.019 0.021 ok
case var.int8.cols40K.16M 0.040000 0.039 0.041 ok
case argmax.float16.all.1G 0.500000 0.49 0.51 ok
"""
CUPY = """case sum.float32.all.1M 0.012000 0.011 0.013 ok
case max.int8.rows24K.16M 0.010000 0.009 0.011 ok
case var.int8.cols40K.16M 0.030000 0.029 0.031 ok
case argmax.float16.all.1G 0.400000 0.39 0.41 BAD index 0: 3, NumPy 4
"""
TORCH = """case sum.float32.all.1M 0.008000 0.007 0.009 ok
case max.int8.rows24K.16M 0.025000 0.024 0.026 ok
case var.int8.cols40K.16M - - - unsupported std and var only support floating point and complex dtypes
"""


class SweepRatio(unittest.TestCase):
    def test_joins_by_id_and_sorts_by_the_best_others_time_over_xps(self):
        status, text = run_report({"xp": XP, "cupy": CUPY, "torch": TORCH}, CASES)
        rows = table_rows(text)
        self.assertEqual([r[0] for r in rows],
                         ["max.int8.rows24K.16M", "var.int8.cols40K.16M", "sum.float32.all.1M", "argmax.float16.all.1G"])
        by_id = {r[0]: r for r in rows}
        # max: CuPy 0.010 beats PyTorch 0.025 -> 0.010 / 0.020
        self.assertEqual(by_id["max.int8.rows24K.16M"][1:], ["0.0200", "0.0100", "0.0250", "0.500", "CuPy"])
        # var: PyTorch lacks it -> CuPy alone: 0.030 / 0.040
        self.assertEqual(by_id["var.int8.cols40K.16M"][3:], ["unsupported", "0.750", "CuPy"])
        # sum: PyTorch 0.008 / 0.010
        self.assertEqual(by_id["sum.float32.all.1M"][4:], ["0.800", "PyTorch"])
        # argmax: CuPy's check failed and PyTorch has no result: no ratio
        self.assertEqual(by_id["argmax.float16.all.1G"][2:], ["BAD (0.4000)", "missing", "-", "-"])
        self.assertIn("worst ratio: 0.500 (max.int8.rows24K.16M: xp 0.0200 ms, CuPy 0.0100 ms)", text)
        self.assertIn("worst at 16M: 0.500 (max.int8.rows24K.16M)", text)
        self.assertIn("worst at 1M: 0.800 (sum.float32.all.1M)", text)
        self.assertIn("under 0.95: 3 of 3 cases with a ratio (1 without one", text)
        self.assertIn("failed checks: 1\n- CuPy argmax.float16.all.1G: BAD index 0: 3, NumPy 4", text)
        self.assertIn("missing cases: 1\n- PyTorch has no result for argmax.float16.all.1G", text)
        self.assertIn("- PyTorch var.int8 (1 cases): std and var only support floating point", text)
        self.assertEqual(status, 1)

    def test_a_faster_xp_has_a_ratio_over_one_and_a_clean_run_exits_zero(self):
        xp = "case a.float32.all.1M 0.010000 0.01 0.01 ok\ncase b.float32.all.1M 0.020000 0.02 0.02 ok\n"
        cupy = "case a.float32.all.1M 0.015000 0.01 0.02 ok\ncase b.float32.all.1M 0.019000 0.02 0.02 ok\n"
        status, text = run_report({"xp": xp, "cupy": cupy})
        self.assertEqual([r[0] for r in table_rows(text)], ["b.float32.all.1M", "a.float32.all.1M"])
        self.assertEqual(table_rows(text)[1][3], "1.500")
        self.assertIn("worst ratio: 0.950 (b.float32.all.1M", text)
        self.assertIn("under 0.95: 0 of 2", text)
        self.assertIn("failed checks: 0", text)
        self.assertIn("missing cases: 0", text)
        self.assertEqual(status, 0)

    def test_cases_missing_from_xp_or_absent_from_the_list_are_reported(self):
        status, text = run_report({"xp": "case a.x.all.1M 1 1 1 ok\ncase z.x.all.1M 1 1 1 ok\n",
                                   "cupy": "case a.x.all.1M 1 1 1 ok\ncase b.x.all.1M 1 1 1 ok\n"},
                                  "a.x.all.1M sum float32 4 all\nb.x.all.1M sum float32 4 all\n")
        self.assertIn("- xp has no result for b.x.all.1M", text)
        self.assertIn("cases not in the list: 1\n- xp ran z.x.all.1M", text)
        self.assertEqual(status, 1)

    def test_a_failed_xp_check_gives_no_ratio_and_is_listed(self):
        status, text = run_report({"xp": "case a.x.all.1M 1 1 1 BAD index 3: GPU 1, CPU 2\n",
                                   "torch": "case a.x.all.1M 2 2 2 ok\n"})
        self.assertEqual(table_rows(text)[0][1:], ["BAD (1.0000)", "2.0000", "-", "-"])
        self.assertIn("- xp a.x.all.1M: BAD index 3: GPU 1, CPU 2", text)
        self.assertIn("worst ratio: none", text)
        self.assertEqual(status, 1)

    def test_malformed_lines_are_errors_that_name_the_line(self):
        for text, message in (("case a 1 2\n", "t:1: expected"), ("case a x 1 1 ok\n", "t:1: times are not numbers"),
                              ("case a 1 1 1 fine\n", "t:1: check is not ok"),
                              ("case a 1 1 1 ok\ncase a 1 1 1 ok\n", "t:2: case a appears twice"),
                              ("case a - - - ok\n", "t:1: a passed check without a time")):
            with self.assertRaises(ValueError) as e:
                sweep_ratio.parse_output(text.splitlines(), "t")
            self.assertIn(message, str(e.exception))

    def test_the_command_line_reads_files(self):
        with tempfile.TemporaryDirectory() as d:
            paths = {}
            for key, text in (("xp", XP), ("cupy", CUPY), ("cases", CASES)):
                paths[key] = os.path.join(d, key + ".txt")
                with open(paths[key], "w") as f:
                    f.write(text)
            r = subprocess.run([sys.executable, sweep_ratio.__file__, "--xp", paths["xp"], "--cupy", paths["cupy"],
                                "--cases", paths["cases"]], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stderr)  # CuPy's failed check
            self.assertIn("worst ratio: 0.500 (max.int8.rows24K.16M", r.stdout)
            r = subprocess.run([sys.executable, sweep_ratio.__file__, "--xp", os.path.join(d, "none.txt")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("none.txt", r.stderr)


class GpuReductionsSweep(unittest.TestCase):
    def test_reads_a_case_list_and_names_a_bad_line(self):
        cases = gpu_reductions.read_cases(CASES.splitlines(), "c")
        self.assertEqual(cases[1], gpu_reductions.Case("max.int8.rows24K.16M", "max", "int8", (682, 24576), 1))
        self.assertIsNone(cases[0].axis)
        for line, message in (("a sum float32 4", "c:1: expected 5 words"), ("a cumsum float32 4 all", "unknown op"),
                              ("a sum complex64 4 all", "unknown dtype"), ("a sum float32 4x 1", "bad shape"),
                              ("a sum float32 4x4 2", "bad axis '2'")):
            with self.assertRaises(ValueError) as e:
                gpu_reductions.read_cases([line], "c")
            self.assertIn(message, str(e.exception))
        with self.assertRaises(ValueError) as e:
            gpu_reductions.read_cases(["a sum float32 4 all", "a max float32 4 all"], "c")
        self.assertIn("c:2: id 'a' repeats line 1", str(e.exception))

    def test_checks_exact_ops_exactly_and_float_ones_within_the_tolerance(self):
        check = gpu_reductions.check
        self.assertEqual(check("sum", "float32", [1.00005], [1.0]), "")
        self.assertIn("index 0", check("sum", "float32", [1.001], [1.0]))
        self.assertEqual(check("sum", "float16", [1.005], [1.0]), "")  # 16-bit floats: 1e-2
        self.assertIn("index 1", check("sum", "int8", [5, 7], [5, 8]))  # integer sums: exact
        self.assertIn("index 0", check("argmin", "float32", [3], [4]))
        self.assertEqual(check("max", "float64", [float("nan")], [float("nan")]), "")
        self.assertIn("shape", check("max", "float64", [1, 2], [1]))

    def test_the_reference_widens_16_bit_floats(self):
        import numpy as np
        x = np.full(200000, 1.0, dtype=np.float16)  # NumPy's own float16 sum of squares overflows
        self.assertAlmostEqual(float(gpu_reductions.reference("var", "float16", x + np.float16(0.5) * (
            np.arange(200000) % 2).astype(np.float16), None)), 0.0625, places=6)

    def test_the_reference_agrees_with_numpys_own_answers(self):
        import numpy as np
        rng = np.random.default_rng(3)
        old_block = gpu_reductions.Reference.BLOCK
        gpu_reductions.Reference.BLOCK = 1000  # several blocks, the last one short
        try:
            for dtype in ("int8", "uint8", "int32", "int64", "float32"):
                low = 0 if dtype == "uint8" else -100
                x = rng.integers(low, 100, size=(37, 301)).astype(dtype) if dtype != "float32" else (
                    rng.uniform(-1, 1, size=(37, 301)).astype(np.float32))
                ref = gpu_reductions.Reference(dtype, x)
                for op in ("sum", "mean", "max", "min", "argmax", "argmin", "var", "std", "prod"):
                    for axis in (None, 0, 1):
                        want = np.asarray(getattr(np, op)(x.astype(np.float64) if op in ("var", "std") else x,
                                                          axis=axis))
                        got = ref(op, axis)
                        self.assertEqual(got.shape, want.shape, (dtype, op, axis))
                        if op in ("var", "std", "mean") or dtype == "float32":
                            tol = 1e-5 if dtype == "float32" else 1e-12  # float32 results; exact integer sums
                            np.testing.assert_allclose(got, want, rtol=tol, atol=tol if dtype == "float32" else 0,
                                                       err_msg=f"{dtype} {op} {axis}")
                        else:
                            np.testing.assert_array_equal(got, want, err_msg=f"{dtype} {op} {axis}")
        finally:
            gpu_reductions.Reference.BLOCK = old_block

    def test_the_sweep_runs_on_numpy_and_reports_what_it_lacks(self):
        gpu_reductions.load("numpy")
        cases = gpu_reductions.read_cases([
            "sum.float32.rows1K.1M sum float32 4x256 1", "argmin.int8.cols1K.1M argmin int8 4x1024 0",
            "var.int8.cols1K.1M var int8 4x1024 0", "all.bool.all.1M all bool 4096 all",
            "any.bool.all.1M any bool 4096 all", "sum.bfloat16.all.1M sum bfloat16 512 all"], "c")
        out = io.StringIO()
        self.assertEqual(gpu_reductions.run_sweep(cases, out), 0)
        results = sweep_ratio.parse_output(out.getvalue().splitlines())
        self.assertEqual(list(results), [c.id for c in cases])
        self.assertTrue(all(r.check == "ok" and r.ms > 0 for k, r in results.items() if "bfloat16" not in k))
        self.assertEqual(results["sum.bfloat16.all.1M"].check, "unsupported NumPy has no bfloat16")


@unittest.skipUnless(os.environ.get("XP_BENCH_GPU_REDUCTIONS"), "no xp_bench_gpu_reductions given")
class WithXp(unittest.TestCase):
    def test_xp_and_numpy_run_the_same_cases_and_join(self):
        program = os.environ["XP_BENCH_GPU_REDUCTIONS"]
        listed = subprocess.run([program, "--sweep-cases", "--quick"], capture_output=True, text=True, check=True).stdout
        # A few of each kind: rows and columns between the thresholds, the whole array, bool.
        chosen = [line for line in listed.splitlines() if line.startswith(("sum.float32.rows24K.1M ",
                  "argmax.float32.cols96K.1M ", "var.int8.rows40K.16M ", "all.bool.cols40K.16M ", "prod.int32.all.1G ",
                  "mean.float16.cols24K.128M "))]
        self.assertEqual(len(chosen), 6, chosen)
        with tempfile.TemporaryDirectory() as d:
            cases = os.path.join(d, "cases.txt")
            with open(cases, "w") as f:
                f.write("\n".join(chosen) + "\n")
            xp = subprocess.run([program, "--sweep", "--cpu", "--cases", cases], capture_output=True, text=True,
                                env=dict(os.environ, XP_DEVICE="cpu"))
            self.assertEqual(xp.returncode, 0, xp.stdout + xp.stderr)
            numpy = subprocess.run([sys.executable, gpu_reductions.__file__, "--sweep", cases, "--numpy"],
                                   capture_output=True, text=True)
            self.assertEqual(numpy.returncode, 0, numpy.stdout + numpy.stderr)
            outputs = {"xp": sweep_ratio.parse_output(xp.stdout.splitlines()),
                       "cupy": sweep_ratio.parse_output(numpy.stdout.splitlines())}
            out = io.StringIO()
            self.assertEqual(sweep_ratio.report(outputs, sweep_ratio.parse_case_ids(chosen), out), 0, out.getvalue())
            self.assertEqual(len(table_rows(out.getvalue())), 6)
            self.assertIn("failed checks: 0", out.getvalue())
            self.assertIn("missing cases: 0", out.getvalue())


if __name__ == "__main__":
    unittest.main()
