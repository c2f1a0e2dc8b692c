source .carry/exp/common.sh
(cd $B && timeout 330 ctest -L gpu --output-on-failure > $OUT/ctest_gpu.txt 2>&1; echo "rc=$?" >> $OUT/ctest_gpu.txt); grep -E "tests passed|rc=|\(Failed\)|Not Run|Total Test time" $OUT/ctest_gpu.txt
echo "t $((SECONDS-t0)) s"
source .carry/exp/san.sh memcheck 570 "test_gpu|*" "test_interop_gpu|*" "test_kernel_arrays|*" "test_gpu_memory|*" "test_gpu_memory_limit|*" \
  "test_kernels_gpu|-GpuKernelsFault.*:GpuKernels.OutOfMemory*" "test_cuda_linalg|CudaLinalgGpu.*" "test_cuda_random|CudaRandomGpu.*" \
  "test_cuda_take|CudaTakeGpu.*:-*MoreThanTwo*" "test_cuda_codegen|CudaCodegenGpu.*" "test_cache_warm|CacheWarm.OnAGpu*" "test_array_gpu|*" "test_cuda_reduce|CudaReduceGpu.*"
echo "t $((SECONDS-t0)) s"
