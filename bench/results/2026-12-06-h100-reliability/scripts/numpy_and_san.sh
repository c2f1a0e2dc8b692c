# Call 2: the NumPy suite with every array on cuda:0, and compute-sanitizer memcheck over every GPU
# test program but that suite, side by side (DEADLINE_S seconds after the call's start).
source bench/results/2026-12-06-h100-reliability/scripts/common.sh
dl=${DEADLINE_S:-540}
( ctest --test-dir $B -L gpu -R '^gpu/ArrayNumPy' -j12 --timeout $((dl - 20)) > $OUT/ctest_numpy_gpu.txt 2>&1
  echo "ctest numpy-gpu rc=$? $((SECONDS - t0)) s" >> $OUT/ctest_numpy_gpu.txt ) &
f=$OUT/memcheck.txt
for spec in "test_gpu|*" "test_kernels_gpu|*" "test_array_gpu|*" "test_interop_gpu|*" "test_kernel_arrays|*" \
  "test_gpu_memory|*" "test_gpu_memory_limit|*" "test_gpu_memory_percent|*" "test_semantics_gpu|*" \
  "test_cuda_math|CudaMathGpu.*" "test_cuda_codegen|CudaCodegenGpu.*" "test_cuda_random|CudaRandomGpu.*" \
  "test_cuda_linalg|CudaLinalgGpu.*" "test_matmul_precision|MatmulPrecisionGpu.*" "test_cuda_reduce|CudaReduceGpu.*" \
  "test_cuda_take|CudaTakeGpu.*" "test_cache_warm|CacheWarm.OnAGpu*" "test_gpu_out_of_memory|*"; do
  exe=${spec%%|*}; filt=${spec#*|}; left=$((dl - SECONDS + t0))
  if [ $left -lt 15 ]; then echo "memcheck $exe: NOT RUN (no time left)" | tee -a $f; continue; fi
  extra=(XP_DEVICE=cuda:0)
  [ $exe = test_gpu_memory_limit ] && extra+=(XP_GPU_MEMORY_LIMIT=256M)
  [ $exe = test_gpu_memory_percent ] && extra+=(XP_GPU_MEMORY_LIMIT=12.5%)
  echo "==== memcheck $exe --gtest_filter=$filt" >> $f; s=$SECONDS
  env XP_TEST_LABEL=gpu "${extra[@]}" timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 \
    --report-api-errors no $B/tests/$exe --gtest_filter="$filt" > /tmp/san_cur.txt 2>&1; rc=$?
  cat /tmp/san_cur.txt >> $f
  echo "memcheck $exe rc=$rc $((SECONDS - s)) s | $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' /tmp/san_cur.txt | tr '\n' ' ') | $(grep -E 'ERROR SUMMARY' /tmp/san_cur.txt | tail -1)" | tee -a $f
done
wait
tail -1 $OUT/ctest_numpy_gpu.txt; grep -E "tests passed|\(Failed\)|\(Timeout\)" $OUT/ctest_numpy_gpu.txt | tail -8
