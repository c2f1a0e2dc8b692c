# One call on the GPU machine, from the repository root:
#   OUT=<folder> bash bench/results/2026-12-07-h100-reductions-profile/scripts/profile.sh
# The sweep's worst cases at 16 MiB and a few at 128 MiB (cases.txt): their times as the sweep takes
# them (CUDA events around 10 calls), then each kernel's duration under Nsight Compute
# (gpu__time_duration), to tell the kernels' time from the time between them; then the complex
# functions' GPU test, after its pow fix.
R=$PWD; t0=$SECONDS; B=$R/build/gpu; S=$R/bench/results/2026-12-07-h100-reductions-profile/scripts
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  ncu --version | tail -1; echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  timeout 300 cmake --build $B -j16 --target xp_bench_gpu_reductions test_cuda_complex xp_cli > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_DEVICE=cuda:0
s=$SECONDS
for i in 1 2 3; do timeout 60 $B/bench/xp_bench_gpu_reductions --sweep --cases $S/cases.txt > $OUT/times$i.txt 2>&1; done
echo "times: $((SECONDS - s)) s"; paste <(awk '/^case/{print $2, $3}' $OUT/times1.txt) <(awk '/^case/{print $3}' $OUT/times2.txt) <(awk '/^case/{print $3, $6}' $OUT/times3.txt)
s=$SECONDS
timeout 150 ncu --metrics gpu__time_duration.sum --csv --print-units base \
  $B/bench/xp_bench_gpu_reductions --sweep --cases $S/cases.txt > $OUT/ncu.csv 2> $OUT/ncu.err
echo "ncu: rc=$? $((SECONDS - s)) s, $(grep -c gpu__time_duration $OUT/ncu.csv) kernels"
s=$SECONDS
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
timeout 200 ctest --test-dir $B --timeout 190 --output-on-failure -R "CudaComplexGpu" > $OUT/ctest.txt 2>&1
echo "ctest CudaComplexGpu: rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|ulp \]" $OUT/ctest.txt; grep -E "differ from" -A2 $OUT/ctest.txt | head -12
