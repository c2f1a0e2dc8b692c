# One short call on the GPU machine, from the repository root:
#   OUT=<folder> bash bench/results/2026-12-07-gpu-kernels-streams/scripts/run.sh
# A release build of the test programs that the streams and scopes change, the custom kernels and
# the user kernels touch most (no Python extension, no NumPy-suite or reduction-sweep programs,
# which take minutes), every gpu-labelled test they hold with a GPU required, then
# xp_bench_user_kernels on cuda:0 (an ElementwiseKernel's a*b+c against xp's fused expression at
# 2^26 float32, and the first call in a new process with a warm disk cache).
R=$PWD; t0=$SECONDS; B=$R/build/gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  timeout 170 cmake --build $B -j16 --target test_streams_gpu test_user_kernels test_kernels_gpu test_kernel_arrays \
    test_gpu test_array_gpu test_interop_gpu xp_bench_user_kernels xp_cli > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
s=$SECONDS
timeout 80 ctest --test-dir $B -L gpu -j12 --timeout 70 --output-on-failure > $OUT/ctest_gpu.txt 2>&1
echo "ctest -L gpu (these programs): rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -14
s=$SECONDS
timeout 35 $B/bench/xp_bench_user_kernels --device cuda:0 > $OUT/bench_user_kernels.txt 2>&1
echo "bench: rc=$? $((SECONDS - s)) s"; cat $OUT/bench_user_kernels.txt
