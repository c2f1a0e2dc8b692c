#!/usr/bin/env bash
# Builds xp and runs every test, twice: the release preset (build/release), then the sanitize
# preset (build/sanitize: ASan with LeakSanitizer, and UBSan; any report fails the test), then a
# third time under ThreadSanitizer (the tsan preset, build/tsan) for the programs whose tests run
# threads. The summary gives each step's time.
#
# Setup as scripts/main.sh does it (missing Debian packages, .venv), except that NVRTC's wheel is
# ALWAYS installed into .venv, so the tests exercise xp's wheel search even where a CUDA toolkit
# is present. VIRTUAL_ENV points at .venv for the builds and the tests.
# CI runs this through .ci/run, which sets XP_TEST_REQUIRE_NVRTC=1: a missing NVRTC then fails
# the tests that need it instead of skipping them. XP_TEST_REQUIRE_GPU=1 does the same for GPUs.
#
# Works from any directory and may be run again. Ends with one summary line; exits non-zero when
# any step failed (every step runs even after an earlier one failed, to report them all).
set -euo pipefail

# shellcheck source=SCRIPTDIR/main.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/main.sh"
cd "$XP_ROOT"
start=$SECONDS

xp_install_packages
xp_make_venv
xp_install_nvrtc_wheel
xp_install_test_packages
export VIRTUAL_ENV="$XP_VENV"
# The references were just installed: a test that cannot run them fails instead of skipping.
export XP_TEST_REQUIRE_NUMPY=1
# So was OpenBLAS (libopenblas0): the tests of xp's BLAS path fail if xp cannot load it.
export XP_TEST_REQUIRE_OPENBLAS=1

results=("PASS  setup: Debian packages, .venv, NVRTC and test packages [$(printf '%dm%02ds' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)))]")
failed=0
# run_step NAME COMMAND...: runs it, records PASS or FAIL; returns its status.
# Each step's time is in the summary.
run_step() {
  local name="$1"
  shift
  xp_log "$name: $*"
  local rc=0 t0=$SECONDS
  "$@" || rc=$?
  local took
  took="$(printf '%dm%02ds' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)))"
  if [ "$rc" -eq 0 ]; then
    results+=("PASS  $name [$took]")
  else
    results+=("FAIL  $name (exit $rc) [$took]")
    failed=1
  fi
  return "$rc"
}
# ctest, keeping its output for the summary (called through run_step).
# shellcheck disable=SC2317
run_ctest() {
  local preset="$1" log="$XP_ROOT/build/$1/ctest-summary.log"
  shift
  ctest --preset "$preset" -j2 "$@" 2>&1 | tee "$log"
}
# "99% tests passed, 1 tests failed out of 72; 8 skipped" from the ctest log of a preset.
tests_summary() {
  local log="$XP_ROOT/build/$1/ctest-summary.log" line skipped
  line="$(grep -E 'tests passed|No tests were found' "$log" 2>/dev/null | tail -1)" || line="no ctest summary"
  skipped="$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$log" 2>/dev/null)" || skipped=0
  echo "$line; $skipped skipped"
}
# Adds the ctest results of a preset to the summary: the counts, then each failed test.
add_test_results() {
  local log="$XP_ROOT/build/$1/ctest-summary.log" name
  results[-1]+="  [$(tests_summary "$1")]"
  while IFS= read -r name; do
    results+=("        failed: $name")
  done < <(sed -n '/^The following tests FAILED:/,$p' "$log" 2>/dev/null |
    sed -nE 's/^[[:space:]]+[0-9]+ - (.*)$/\1/p')
}

# run_preset NAME: configures, builds and tests one preset, its results added to the summary.
run_preset() {
  if run_step "$1: configure" cmake --preset "$1" &&
    run_step "$1: build" cmake --build --preset "$1"; then
    run_step "$1: tests" run_ctest "$1" || true
    add_test_results "$1"
  else
    results+=("SKIP  $1: tests (no build)")
  fi
}

# --- release --------------------------------------------------------------------------------------
run_preset release

# --- sanitize -------------------------------------------------------------------------------------
# The library is built at -O1, as the sanitizers advise for speed (CMakeLists.txt; at -O0 the tests
# took half of CI, and with every test program at -O1 the build did). The test
# preset leaves out the seven tests that compile every generated kernel with
# NVRTC (the cache warm's among them): their time is NVRTC's, a library the sanitizers cannot see
# into, and the generators they call, and the compile-only GPU's driver table, run under the
# sanitizers in other tests; the release stage runs them.
# Every sanitizer report is fatal. The same options apply while building, since gtest's test
# discovery runs the test programs at build time.
# allocator_may_return_null: the tests check that a failed allocation is a typed OutOfMemory error.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
if [ -f "$XP_ROOT/tests/lsan.supp" ]; then
  export LSAN_OPTIONS="suppressions=$XP_ROOT/tests/lsan.supp:print_suppressions=0"
fi
run_preset sanitize

# --- tsan -----------------------------------------------------------------------------------------
# The programs whose tests run threads, built with ThreadSanitizer (tests/CMakeLists.txt lists them):
# a report fails the test (exit code 66). xp's own threads are checked there: the kernel preload's
# beside the program's, threads and processes sharing the disk cache, graphs of two threads sharing an input, the fake driver's devices used
# from several threads. The preset sets XP_NUM_THREADS=1, since OpenMP's barriers are invisible to
# TSan, which then reports races between a parallel loop's threads that are not there. For the same
# reason it leaves out the tests that set several CPU threads themselves, those that compile
# with NVRTC (a library TSan cannot see into) from several threads at once, and the cache warm's
# test, whose time is NVRTC's in one thread.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1"
run_preset tsan

elapsed=$((SECONDS - start))
xp_log "summary"
printf '  %s\n' "${results[@]}"
if [ "$failed" -eq 0 ]; then
  printf 'test.sh: PASSED: release and sanitize builds, all tests, and the threaded programs under TSan (%dm%02ds)\n' $((elapsed / 60)) $((elapsed % 60))
else
  printf 'test.sh: FAILED: see the FAIL lines above (%dm%02ds)\n' $((elapsed / 60)) $((elapsed % 60))
fi
exit "$failed"
