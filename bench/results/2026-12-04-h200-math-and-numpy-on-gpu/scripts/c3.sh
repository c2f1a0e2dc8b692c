BUILD_TARGETS="test_gpu_memory test_gpu_memory_limit test_gpu_memory_percent test_gpu_out_of_memory test_interop_gpu test_array_gpu test_cuda_math test_array_numpy_gpu"
source .carry/exp/common.sh
left() { echo $(( ${END:-415} - (SECONDS - t0) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target <site> .whl/*.whl && export PYTHONPATH=<site> || exit
mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > .venv/bin/python && chmod +x .venv/bin/python
python3 -c "import numpy, ml_dtypes; print('numpy', numpy.__version__, 'ml_dtypes', ml_dtypes.__version__)" >> $OUT/machine.txt; tail -1 $OUT/machine.txt
cd $B
timeout $(left) ctest -L gpu -R "^(ArrayGpu|CudaMathGpu|GpuMatmul|GpuMemory|GpuMemoryLimit|GpuMemoryPercent|GpuOutOfMemory|GpuTransfers|GpuVecdot|InteropGpu)\." --output-on-failure -j4 > $OUT/ctest_changed.txt 2>&1; echo "changed rc=$?"
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Test time" $OUT/ctest_changed.txt | head; grep -B2 -A8 "Failure" $OUT/ctest_changed.txt | cut -c1-250 | head -50
echo "t $((SECONDS-t0)) s"
export XP_TEST_REQUIRE_NUMPY=1
timeout $(left) ctest -L gpu -R "^gpu/ArrayNumPy\.(ElementwiseNonContiguous|Reductions|ElementwiseMixedDtypes|Creation|AstypeEveryPair|ElementwiseOperators|ElementwiseEager|RandomGraphsLazyEqualsEagerEqualsNumPy|ElementwiseWeakScalars)" --output-on-failure -j9 > $OUT/ctest_numpy_gpu.txt 2>&1; echo "numpy rc=$?"
grep -E "tests passed|Test +#|Test time" $OUT/ctest_numpy_gpu.txt | head -20; grep -A3 "Failure" $OUT/ctest_numpy_gpu.txt | cut -c1-250 | head -30
echo "t $((SECONDS-t0)) s"
