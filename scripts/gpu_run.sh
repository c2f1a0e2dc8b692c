#!/usr/bin/env bash
# On a GPU machine: builds xp, runs the whole suite with XP_TEST_REQUIRE_GPU=1, xp doctor, the
# detection benchmark and the GPU tests under compute-sanitizer; logs go to ${OUT:-gpu-out}.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
export XP_TEST_REQUIRE_GPU=1
# The NumPy suite (test_array_numpy, and gpu/ArrayNumPy.* with every array on the GPU) runs its
# reference under .venv/bin/python. Without that .venv, a python3 that has NumPy 2 and ml_dtypes 0.7
# serves through a two-line wrapper (a symbolic link would lose the packages of a python3 that is
# itself a virtual environment's).
if [ ! -x .venv/bin/python ] && python3 -c 'import numpy, ml_dtypes' 2>/dev/null; then
  mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' >.venv/bin/python && chmod +x .venv/bin/python
fi
{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  uname -r; g++ --version | head -1; cmake --version | head -1
} >"$OUT/machine.txt" 2>&1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
ninja -C build-gpu >"$OUT/build.log" 2>&1 || { grep -E 'error|warning' "$OUT/build.log" | head -40; exit 1; }
grep -c 'warning:' "$OUT/build.log" | sed 's/^/compiler warnings: /'
(cd build-gpu && ctest --output-on-failure -j8 ${CTEST_ARGS:-} >"$OUT/ctest.log" 2>&1)
grep -E 'tests passed|tests failed|\(Failed\)|\(Skipped\)|Not Run|Timeout' "$OUT/ctest.log" | head -30
./build-gpu/tools/xp/xp doctor >"$OUT/doctor.txt" 2>&1; echo "doctor exit $?"
./build-gpu/tools/xp/xp doctor --json >"$OUT/doctor.json" 2>&1
./build-gpu/bench/xp_bench_detect 21 >"$OUT/detect.txt" 2>&1
FORCE_CPU=1 ./build-gpu/bench/xp_bench_detect 21 >>"$OUT/detect.txt" 2>&1
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 --report-api-errors no ./build-gpu/tests/test_kernels_gpu \
      --gtest_filter='-GpuKernelsFault.*:GpuKernels.OutOfMemory*' >"$OUT/sanitizer-$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $?: $(tail -3 "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
  done
fi
