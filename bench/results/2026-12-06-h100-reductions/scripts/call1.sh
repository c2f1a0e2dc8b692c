# Call 1: every test of the gpu label, the NumPy suite on the GPU among them (NumPy 2 from the
# machine, ml_dtypes 0.7 from a wheel carried in .carry/, both behind .venv/bin/python, where the
# tests look for the reference's Python), then compute-sanitizer memcheck over the GPU reduction tests.
source bench/results/2026-12-06-h100-reductions/scripts/common.sh
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl
mkdir -p .venv/bin
printf '#!/bin/sh\nPYTHONPATH=%s/.carry/pylib${PYTHONPATH:+:$PYTHONPATH} exec python3 "$@"\n' "$R" > .venv/bin/python
chmod +x .venv/bin/python
.venv/bin/python -c "import numpy, ml_dtypes; print('reference: numpy', numpy.__version__, 'ml_dtypes', ml_dtypes.__version__)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_NUMPY=1
s=$SECONDS
ctest --test-dir $B -L gpu -j12 --timeout 400 > $OUT/ctest_gpu.txt 2>&1
echo "ctest gpu rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)" $OUT/ctest_gpu.txt | tail -15
left=$((${DEADLINE_S:-560} - SECONDS + t0))
if [ $left -gt 60 ]; then
  env XP_TEST_LABEL=gpu XP_DEVICE=cuda:0 timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 \
    --report-api-errors no $B/tests/test_cuda_reduce --gtest_filter='CudaReduceGpu.*' > $OUT/memcheck_reduce.txt 2>&1
  echo "memcheck test_cuda_reduce rc=$? | $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $OUT/memcheck_reduce.txt | tr '\n' ' ') | $(grep 'ERROR SUMMARY' $OUT/memcheck_reduce.txt | tail -1)"
else
  echo "memcheck: not run ($left s left)"
fi
