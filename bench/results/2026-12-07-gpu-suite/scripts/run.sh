# One call on the GPU machine, from the repository root, .carry holding the test wheels:
#   OUT=<folder> DEADLINE_S=570 bash bench/results/2026-12-07-gpu-suite/scripts/run.sh
# A release build with the Python extension (the machine's python3); every test of the gpu label
# (-j12, failures with their output); xp_bench_user_kernels on cuda:0 (an ElementwiseKernel against
# xp's fused expression, and its first call in a new process); xp against CuPy for the linalg and
# fft rows (bench/python/linalg_fft_gpu.py); then the Python package's tests with a GPU required.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl $R/.carry/wheels/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"
  $PY -c "import sys,numpy,cupy,torch; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1 &&
  cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
s=$SECONDS
timeout 330 ctest --test-dir $B -L gpu -j12 --timeout 300 --output-on-failure > $OUT/ctest_gpu.txt 2>&1
echo "ctest -L gpu: rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -12
s=$SECONDS
timeout 60 $B/bench/xp_bench_user_kernels --device cuda:0 > $OUT/bench_user_kernels.txt 2>&1
echo "bench_user_kernels: rc=$? $((SECONDS - s)) s"; cat $OUT/bench_user_kernels.txt
s=$SECONDS
left=$((${DEADLINE_S:-570} - SECONDS + t0))
PYTHONPATH=$B/python:$PYTHONPATH timeout $((left - 20 < 120 ? left - 20 : 120)) $PY bench/python/linalg_fft_gpu.py > $OUT/linalg_fft_gpu.txt 2>&1
echo "bench: rc=$? $((SECONDS - s)) s"; tail -12 $OUT/linalg_fft_gpu.txt
left=$((${DEADLINE_S:-570} - SECONDS + t0))
if [ $left -gt 30 ]; then
  s=$SECONDS
  timeout $((left - 5)) ctest --test-dir $B -R python.pytest --output-on-failure > $OUT/ctest_python.txt 2>&1
  echo "python.pytest (GPU required): rc=$? $((SECONDS - s)) s"; grep -E "passed|failed|skipped|Error" $OUT/ctest_python.txt | tail -6
else
  echo "python.pytest: not run ($left s left)"
fi
