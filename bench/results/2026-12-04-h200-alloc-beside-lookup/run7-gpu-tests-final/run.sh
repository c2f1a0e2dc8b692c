# Run 7: the GPU suite on the final code (68055fa; its library is 928558d's)
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; lscpu | grep -E "Model name|L3"; echo "tree: 68055fa"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build $T/b -j16 > $T/build.log 2>&1 || { grep -E "error" $T/build.log | head; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
(cd $T/b && timeout 200 ctest -L gpu --output-on-failure > $OUT/ctest_gpu.txt 2>&1; echo "rc=$?" >> $OUT/ctest_gpu.txt); grep -E "tests passed|rc=|\(Failed\)|\*\*\*Failed|Not Run" $OUT/ctest_gpu.txt | head -12
echo "t $((SECONDS-t0)) s"
timeout $((380-SECONDS+t0)) compute-sanitizer --tool memcheck --error-exitcode 9 --report-api-errors no $T/b/tests/test_kernels_gpu --gtest_filter='-GpuKernelsFault.*:GpuKernels.OutOfMemory*' > $OUT/memcheck_kernels.txt 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck_kernels.txt; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck_kernels.txt | head -3
echo "t $((SECONDS-t0)) s"
