BUILD_TARGETS="test_cuda_math test_array_numpy_gpu test_cpu_math"
source .carry/exp/common.sh
# the NumPy reference script runs under <repo>/.venv/bin/python: the machine's python3 has NumPy 2 and ml_dtypes
mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > .venv/bin/python && chmod +x .venv/bin/python && python3 -c "import numpy, ml_dtypes; print('numpy', numpy.__version__, 'ml_dtypes', ml_dtypes.__version__)" >> $OUT/machine.txt
cd $B
XP_TEST_LABEL=gpu timeout 200 tests/test_cuda_math --gtest_filter="CudaMathGpu.Special*" > $OUT/cuda_math.txt 2>&1; echo "math rc=$?"
grep -E "^\[ ulp \] cuda [a-z0-9]+ +float32|Failure|FAILED|PASSED|Expected|Which is|float(32|64) [a-z0-9]+\(" $OUT/cuda_math.txt | head -60
export XP_TEST_REQUIRE_NUMPY=1
timeout 400 ctest -L gpu -R "gpu/ArrayNumPy" --output-on-failure -j4 > $OUT/ctest_numpy_gpu.txt 2>&1; echo "numpy rc=$?"
grep -E "tests passed|\*\*\*Failed|Test time" $OUT/ctest_numpy_gpu.txt | head -30; grep -A3 "Failure" $OUT/ctest_numpy_gpu.txt | cut -c1-300 | head -60
echo "t $((SECONDS-t0)) s"
