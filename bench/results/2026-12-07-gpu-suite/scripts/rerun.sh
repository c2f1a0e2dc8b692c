# The second call: the programs of the first call's failures, after their fixes, with a GPU required;
# then compute-sanitizer memcheck over the GPU tests of the streams, kernel-array and user-kernel
# programs (the code the streams change and the user kernels touch), as the device time allows:
#   OUT=<folder> DEADLINE_S=<seconds> bash bench/results/2026-12-07-gpu-suite/scripts/rerun.sh
R=$PWD; t0=$SECONDS; B=$R/build/gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  timeout 200 cmake --build $B -j16 --target test_user_kernels test_kernels_gpu test_cuda_complex test_numpy_extras \
    test_complex test_streams_gpu test_kernel_arrays xp_bench_user_kernels xp_cli > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
s=$SECONDS
timeout 120 ctest --test-dir $B -L gpu -j12 --timeout 110 --output-on-failure \
  -R "UserKernelsGpu|GpuKernels\.|CudaComplexGpu|NumpyExtrasGpu|ComplexGpu" > $OUT/ctest_gpu.txt 2>&1
echo "ctest: rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -14
grep -E "ulp \]|differ from|Failure" $OUT/ctest_gpu.txt | head -30
s=$SECONDS
timeout 35 $B/bench/xp_bench_user_kernels --device cuda:0 > $OUT/bench_user_kernels.txt 2>&1
echo "bench: rc=$? $((SECONDS - s)) s"; cat $OUT/bench_user_kernels.txt
left=$((${DEADLINE_S:-400} - SECONDS + t0))
if [ $left -gt 60 ]; then
  s=$SECONDS
  timeout $((left - 10)) python3 scripts/gpu_sanitize.py $B --tool memcheck -j12 --timeout $((left - 20)) --budget 10 \
    -R 'StreamsGpu|UserKernelsGpu|KernelArraysGpu' --out $OUT/memcheck > $OUT/memcheck.txt 2>&1
  echo "memcheck: rc=$? $((SECONDS - s)) s"; grep -v ': skipped' $OUT/memcheck.txt | tail -8
else
  echo "memcheck: not run ($left s left)"
fi
