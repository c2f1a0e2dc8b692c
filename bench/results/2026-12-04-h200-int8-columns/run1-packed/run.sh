# session 10 call 2: packed columns for min/max/argmin/argmax of 8/16-bit ints: GPU tests, A/B bench (base = 3cff0f2)
R=$PWD; t0=$SECONDS
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; python3 -c "import torch, cupy, numpy; print('torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__)"; } > $OUT/machine.txt 2>&1
(cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j10 --target test_cuda_reduce xp_bench_gpu_reductions ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD NEW FAILED; }) &
(cmake -S $R/.carry/base -B <build-base> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build-base> -j6 --target xp_bench_gpu_reductions ><tmp>/build_b.log 2>&1 || { tail -30 <tmp>/build_b.log; echo BUILD BASE FAILED; }) &
wait
echo "builds $((SECONDS-t0)) s"
cd <build>/tests
./test_cuda_reduce --gtest_filter='CudaReduceGpu.PackedColumns*:CudaReduceGpu.ColumnsInVectors*:CudaReduceGpu.PackedSmall*:CudaReduceGpu.EveryOpAndDtype*:CudaReduceGpu.NaNPropagates*' > $OUT/test_reduce_packed.txt 2>&1; echo "rc=$?" >> $OUT/test_reduce_packed.txt; grep -E "OK|FAILED|rc=" $OUT/test_reduce_packed.txt | head -20
echo "t $((SECONDS-t0)) s"
cd /tmp
for i in 1 2; do <build-base>/bench/xp_bench_gpu_reductions > $OUT/reductions_base_$i.txt 2>&1; <build>/bench/xp_bench_gpu_reductions > $OUT/reductions_new_$i.txt 2>&1; done
grep -h "| int8 |" $OUT/reductions_*.txt
echo "t $((SECONDS-t0)) s"
timeout 200 python3 $R/bench/python/gpu_reductions.py --torch > $OUT/py_torch.txt 2>&1; echo "py rc=$?"; grep "| int8 |" $OUT/py_torch.txt
echo "t $((SECONDS-t0)) s"
cd <build>/tests && timeout $((560-SECONDS+t0)) compute-sanitizer --tool memcheck --error-exitcode 9 ./test_cuda_reduce --gtest_filter='CudaReduceGpu.ColumnsInVectors*:CudaReduceGpu.PackedSmall*' > $OUT/memcheck_packed.txt 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck_packed.txt; tail -3 $OUT/memcheck_packed.txt
echo "t $((SECONDS-t0)) s"
