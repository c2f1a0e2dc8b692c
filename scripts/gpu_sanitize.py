#!/usr/bin/env python3
"""Runs every test of the gpu label under compute-sanitizer, in parallel, on a GPU machine.

    scripts/gpu_sanitize.py BUILD_DIR [--tool memcheck|racecheck|synccheck|initcheck]
                            [-j N] [--timeout S] [--out DIR] [-R REGEX] [--application-only REGEX]

The tests and their environments come from ctest itself (`ctest -L gpu --show-only=json-v1`), so
a test added to the gpu label is swept without editing this file. Each test runs as ctest would
run it (RUN_SERIAL ones alone, after the others), under `compute-sanitizer --tool TOOL --error-exitcode 9 --report-api-errors no` (xp's
tests provoke API errors on purpose: out-of-memory, bad handles). Tests whose purpose is a device
fault (a kernel that reads an illegal address, planted in a child process) are left out, since
the sanitizer rightly reports them; they are listed in the output.

Writes one log per test under --out (default: sanitize-TOOL) and prints one line per test as it
ends (so that a run cut short still says what finished), then a summary: tests run, passed, failed,
timed out, sanitizer errors. Exits 0 only when every test passed with no sanitizer error.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

# A test is left out when its name matches: its kernel faults on purpose.
DELIBERATE_FAULTS = re.compile(r"GpuKernelsFault\.")


def gpu_tests(build_dir, regex):
    cmd = ["ctest", "--test-dir", build_dir, "-L", "gpu", "--show-only=json-v1"]
    if regex:
        cmd += ["-R", regex]
    listing = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    tests = []
    for t in listing.get("tests", []):
        env = {}
        workdir = None
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if props.get("DISABLED"):
            continue  # a child case, run by its parent test (the sanitizer follows child processes)
        for p in t.get("properties", []):
            if p["name"] == "ENVIRONMENT":
                for kv in p["value"]:
                    k, _, v = kv.partition("=")
                    env[k] = v
            elif p["name"] == "ENVIRONMENT_MODIFICATION":
                for mod in p["value"]:
                    k, _, rest = mod.partition("=")
                    op, _, v = rest.partition(":")
                    base = env.get(k, os.environ.get(k, ""))
                    if op in ("set", "reset"):
                        env[k] = v
                    elif op == "unset":
                        env[k] = None
                    elif op == "string_append":
                        env[k] = base + v
                    elif op == "string_prepend":
                        env[k] = v + base
                    elif op == "path_list_append":
                        env[k] = base + os.pathsep + v if base else v
                    elif op == "path_list_prepend":
                        env[k] = v + os.pathsep + base if base else v
            elif p["name"] == "WORKING_DIRECTORY":
                workdir = p["value"]
        if "command" in t:
            tests.append({"name": t["name"], "command": t["command"], "env": env, "cwd": workdir,
                          "serial": bool(props.get("RUN_SERIAL"))})
    return tests


def run_one(test, tool, timeout, out_dir, stop_at, application_only=None):
    left = stop_at - time.monotonic()
    if left <= 0:
        return test["name"], "not run", None, 0.0, ""
    timeout = min(timeout, left)  # nothing runs past the budget
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", test["name"])
    log = os.path.join(out_dir, safe + ".log")
    cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "9", "--report-api-errors", "no"]
    if application_only is not None and application_only.search(test["name"]):
        cmd += ["--target-processes", "application-only"]
    cmd += test["command"]
    env = dict(os.environ)
    for k, v in test["env"].items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    t0 = time.monotonic()
    with open(log, "w") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, env=env, cwd=test["cwd"], stdout=f, stderr=subprocess.STDOUT,
                                timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    with open(log, errors="replace") as f:
        text = f.read()
    m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
    errors = int(m[-1]) if m else None
    return test["name"], rc, errors, time.monotonic() - t0, log


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--tool", default="memcheck")
    ap.add_argument("-j", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default=None)
    ap.add_argument("-R", dest="regex", default=None)
    ap.add_argument("--budget", type=float, default=None,
                    help="end by this many seconds: a test not started by then is reported as not run, "
                         "one still running is stopped and reported as timed out")
    ap.add_argument("--application-only", default=None, metavar="REGEX",
                    help="tests whose names match are checked in their own process only "
                         "(--target-processes application-only): gtest death tests, which run the program "
                         "again per case, did not finish under the sanitizer otherwise")
    args = ap.parse_args()
    out_dir = args.out or "sanitize-" + args.tool
    os.makedirs(out_dir, exist_ok=True)

    tests = gpu_tests(args.build_dir, args.regex)
    app_only = re.compile(args.application_only) if args.application_only else None
    left_out = [t["name"] for t in tests if DELIBERATE_FAULTS.search(t["name"])]
    tests = [t for t in tests if not DELIBERATE_FAULTS.search(t["name"])]
    print(f"compute-sanitizer --tool {args.tool}: {len(tests)} tests of the gpu label, -j{args.j}; "
          f"left out (deliberate device faults): {', '.join(left_out) or 'none'}", flush=True)
    t0 = time.monotonic()
    stop_at = t0 + args.budget if args.budget else float("inf")
    passed = failed = timed_out = not_run = skipped = 0
    total_errors = 0
    unreadable = 0
    def one(t):
        return run_one(t, args.tool, args.timeout, out_dir, stop_at, app_only)

    def results():
        # In the order they end, each reported at once: a run cut short still says what finished.
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
            futures = [pool.submit(one, t) for t in tests if not t["serial"]]
            for f in concurrent.futures.as_completed(futures):
                yield f.result()
        # RUN_SERIAL tests (ctest runs them with no other test beside them: they take most of a
        # device's memory) one at a time, after the others.
        for t in tests:
            if t["serial"]:
                yield one(t)

    for name, rc, errors, took, log in results():
        if rc == "not run":
            not_run += 1
            continue
        if errors is None:
            unreadable += 1
        else:
            total_errors += errors
        if rc == 0 and errors == 0:
            passed += 1
            print(f"  {name}: passed, {took:.0f} s", flush=True)
            continue
        if rc == 77 and errors == 0:
            skipped += 1
            print(f"  {name}: skipped ({os.path.basename(log)})", flush=True)
            continue
        if rc == "timeout":
            timed_out += 1
        else:
            failed += 1
        print(f"  {name}: exit {rc}, sanitizer errors {errors}, {took:.0f} s ({os.path.basename(log)})",
              flush=True)
    print(f"{args.tool}: {len(tests)} tests, {passed} passed, {skipped} skipped, {failed} failed, {timed_out} timed out, {not_run} not run (budget); "
          f"{total_errors} sanitizer errors; {unreadable} logs without an error summary; "
          f"{time.monotonic() - t0:.0f} s")
    sys.exit(0 if passed == len(tests) else 1)


if __name__ == "__main__":
    main()
