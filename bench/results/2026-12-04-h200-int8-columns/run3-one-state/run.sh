# session 10 call 4: integer moments in one state per thread (chunk capped): all CudaReduceGpu, A/B bench (base = c3db92e + docs)
R=$PWD; t0=$SECONDS
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; } > $OUT/machine.txt 2>&1
(cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j10 --target test_cuda_reduce xp_bench_gpu_reductions ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD NEW FAILED; }) &
(cmake -S $R/.carry/base -B <build-base> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build-base> -j6 --target xp_bench_gpu_reductions ><tmp>/build_b.log 2>&1 || { tail -30 <tmp>/build_b.log; echo BUILD BASE FAILED; }) &
wait
echo "builds $((SECONDS-t0)) s"
cd /tmp
for i in 1 2; do <build-base>/bench/xp_bench_gpu_reductions > $OUT/reductions_base_$i.txt 2>&1; <build>/bench/xp_bench_gpu_reductions > $OUT/reductions_new_$i.txt 2>&1; done
grep -h "| int8 | 0 \|var | float32 | 0" $OUT/reductions_*.txt
echo "t $((SECONDS-t0)) s"
cd <build>/tests
./test_cuda_reduce --gtest_filter='CudaReduceGpu.*' > $OUT/test_reduce_gpu.txt 2>&1; echo "rc=$?" >> $OUT/test_reduce_gpu.txt; grep -E "^\[ +(OK|FAILED) |rc=|PASSED|FAILED" $OUT/test_reduce_gpu.txt | head -30
echo "t $((SECONDS-t0)) s"
timeout $((500-SECONDS+t0)) compute-sanitizer --tool memcheck --error-exitcode 9 ./test_cuda_reduce --gtest_filter='CudaReduceGpu.ColumnsInVectors*:CudaReduceGpu.PackedSmall*' > $OUT/memcheck_columns.txt 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck_columns.txt; tail -3 $OUT/memcheck_columns.txt
echo "t $((SECONDS-t0)) s"
