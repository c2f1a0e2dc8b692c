"""Runs the Array API conformance suite (data-apis/array-api-tests) against xp: ctest's
python.array_api_tests. The suite is copied to a temporary folder (it writes there), run with
--max-examples=20 and the committed xfails file, and its pass/fail/skip counts printed. Exit 0 when
every failure is listed in the xfails file, 1 otherwise, 77 (ctest's skip) only when the suite's
folder is absent.

The suite is found at $XP_ARRAY_API_TESTS, else <repository>/../shared/third_party/array-api-tests.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def main():
    suite = pathlib.Path(os.environ.get("XP_ARRAY_API_TESTS") or ROOT.parent / "shared" / "third_party" / "array-api-tests")
    if not (suite / "array_api_tests").is_dir():
        print(f"skipped: the Array API conformance suite is not at {suite} (set XP_ARRAY_API_TESTS)")
        return 77
    xfails = HERE / "array-api-xfails.txt"
    with tempfile.TemporaryDirectory(prefix="xp-array-api-tests-") as tmp:
        work = pathlib.Path(tmp) / "array-api-tests"
        shutil.copytree(suite, work)
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, ARRAY_API_TESTS_MODULE="xp", ARRAY_API_TESTS_VERSION="2024.12")
        cmd = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "--max-examples=20", "-p", "no:cacheprovider",
               "--xfails-file", str(xfails), "--json-report", f"--json-report-file={report}", "-o",
               "addopts=", "--tb=line"]
        rc = subprocess.run(cmd, cwd=work, env=env).returncode
        if not report.exists():
            print(f"array-api-tests: no report (pytest exited {rc})")
            return 1
        summary = json.loads(report.read_text()).get("summary", {})
        counts = {k: summary.get(k, 0) for k in ("passed", "failed", "error", "skipped", "xfailed", "xpassed")}
        print("array-api-tests (xp, 2024.12, --max-examples=20): " + ", ".join(f"{v} {k}" for k, v in counts.items()))
        return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
