# One call on the GPU machine, from the repository root, .carry holding the ml_dtypes wheel:
#   OUT=<folder> DEADLINE_S=560 bash bench/results/2026-12-07-h100-reductions-onepass/scripts/run.sh
# Builds the reduction test and benchmark, runs `ctest -R CudaReduce` with a GPU required,
# compute-sanitizer (memcheck and racecheck) over the test of the one-pass finish,
# then the sweep's cases of SWEEP_ONLY (xp, CuPy and PyTorch in one run, bench/reduction_sweep.sh,
# every output checked against NumPy). CTEST=0 and SANITIZER=0 leave those steps out; no sweep
# without SWEEP_ONLY. A build folder left by an earlier call (build/gpu) is reused as it
# was configured.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  python3 -c "import sys,torch,cupy,numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
{ [ -f $B/build.ninja ] || cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1; } &&
  timeout 300 cmake --build $B -j16 --target xp_bench_gpu_reductions test_cuda_reduce xp_cli > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
if [[ ${CTEST:-1} == 1 ]]; then
  s=$SECONDS
  XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 timeout 240 ctest --test-dir $B -j12 --timeout 230 --output-on-failure \
    -R "CudaReduce" > $OUT/ctest_reduce.txt 2>&1
  echo "ctest CudaReduce: rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)" $OUT/ctest_reduce.txt
  grep -E "Failure" -A4 $OUT/ctest_reduce.txt | head -20
fi
if [[ ${SANITIZER:-1} == 1 ]]; then
  for tool in memcheck racecheck; do
    s=$SECONDS
    filter='CudaReduceGpu.OnePass*'
    XP_TEST_REQUIRE_GPU=1 timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 \
      $B/tests/test_cuda_reduce --gtest_filter="$filter" > $OUT/$tool.txt 2>&1
    echo "compute-sanitizer $tool: rc=$? $((SECONDS - s)) s"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/$tool.txt | tail -3
  done
fi
[[ -n ${SWEEP_ONLY:-} ]] || exit 0
s=$SECONDS
timeout $((${DEADLINE_S:-540} - SECONDS + t0)) bash bench/reduction_sweep.sh /tmp/sweep $B --python python3 --only "$SWEEP_ONLY"
echo "sweep rc=$? $((SECONDS - s)) s"
tar -C /tmp -czf $OUT/sweep.tar.gz sweep; grep -E "^(xp|cupy|torch):|^worst|^under" /tmp/sweep/machine.txt /tmp/sweep/report.md
head -40 /tmp/sweep/report.md
