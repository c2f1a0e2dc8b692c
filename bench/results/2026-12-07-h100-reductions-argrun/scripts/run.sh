# One call on the GPU machine, from the repository root, .carry holding the ml_dtypes wheel:
#   OUT=<folder> bash bench/results/2026-12-07-h100-reductions-argrun/scripts/run.sh
# The GPU reduction tests with a GPU required, then the sweep's cases that the change touches
# (SWEEP_ONLY, an ERE, by default argmin and argmax of the dtypes without packed words over columns,
# and the sums and means of bfloat16), xp against CuPy and PyTorch in one run
# (bench/reduction_sweep.sh), every output checked against NumPy; its folder packed into sweep.tar.gz.
# SKIP_TESTS=1 leaves the tests out (the full gpu suite runs them).
R=$PWD; t0=$SECONDS; B=$R/build/gpu
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  python3 -c "import sys,torch,cupy,numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  timeout 300 cmake --build $B -j16 --target xp_bench_gpu_reductions test_cuda_reduce xp_cli > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
s=$SECONDS
[[ ${SKIP_TESTS:-0} == 1 ]] || XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 timeout 230 ctest --test-dir $B -j12 --timeout 220 --output-on-failure \
  -R "CudaReduce" > $OUT/ctest_reduce.txt 2>&1
echo "ctest CudaReduce: rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)" $OUT/ctest_reduce.txt
grep -E "Failure" -A4 $OUT/ctest_reduce.txt | head -20
s=$SECONDS
only='^((argmin|argmax)\.(float16|bfloat16|float32|float64|int32|int64)\.cols[0-9]+K\.16M|(argmin|argmax)\.(float16|float32)\.cols[0-9]+K\.(1|128)M|(sum|mean)\.bfloat16\.(cols[0-9]+K|rows[0-9]+K|all)\.16M) '
timeout $((${DEADLINE_S:-540} - SECONDS + t0)) bash bench/reduction_sweep.sh /tmp/sweep $B --python python3 --only "${SWEEP_ONLY:-$only}"
echo "sweep rc=$? $((SECONDS - s)) s"
tar -C /tmp -czf $OUT/sweep.tar.gz sweep; grep -E "^(xp|cupy|torch):|^worst|^under" /tmp/sweep/machine.txt /tmp/sweep/report.md
head -40 /tmp/sweep/report.md
