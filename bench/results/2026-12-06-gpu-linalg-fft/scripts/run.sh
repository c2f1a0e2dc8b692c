# One call on the GPU machine (from the repository root, .carry holding the test wheels):
#   OUT=<folder> DEADLINE_S=570 bash bench/results/2026-12-06-gpu-linalg-fft/scripts/run.sh
# A release build with the Python extension (the machine's python3); the gpu-labelled tests of the
# linalg and fft extensions (cuSOLVER, cuFFT, the public functions on cuda:0 against the CPU) and of
# complex numbers and the NumPy extras (never run on a GPU before); xp against CuPy
# (bench/python/linalg_fft_gpu.py); then the Python tests with a GPU required, for the time left.
# TARGETS (optional): build only these targets (a short call: the tests named in TESTS must be among
# them); PYTEST=0 leaves the Python tests out.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl $R/.carry/wheels/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"
  $PY -c "import sys,numpy,cupy,torch; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)"
  ls /usr/local/cuda/lib64/ | grep -E "libcusolver.so|libcufft.so|libcublas.so" | tr '\n' ' '; echo
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1 &&
  cmake --build $B -j16 ${TARGETS:+--target $TARGETS} > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
$B/tools/xp/xp doctor > $OUT/doctor.txt 2>&1; grep -iE "cusolver|cufft|lapack" $OUT/doctor.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
s=$SECONDS
left=$((${DEADLINE_S:-570} - SECONDS + t0)); ct=$((left / 2 < 200 ? left / 2 : 200))
timeout $ct ctest --test-dir $B -L gpu -j12 -R "${TESTS:-Linalg|Fft|Solver|Complex|NumpyExtrasGpu|CudaMathGpu|SortingGpu}" \
  --timeout $((ct - 10)) > $OUT/ctest_gpu.txt 2>&1
echo "ctest: rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -25
s=$SECONDS
left=$((${DEADLINE_S:-570} - SECONDS + t0))
PYTHONPATH=$B/python:$PYTHONPATH timeout $((left - 20 < 120 ? left - 20 : 120)) $PY bench/python/linalg_fft_gpu.py > $OUT/linalg_fft_gpu.txt 2>&1
echo "bench: rc=$? $((SECONDS - s)) s"; cat $OUT/linalg_fft_gpu.txt | tail -20
left=$((${DEADLINE_S:-570} - SECONDS + t0))
if [ $left -gt 30 ] && [ "${PYTEST:-1}" != 0 ]; then
  s=$SECONDS
  (cd python/tests && PYTHONPATH=$B/python:$PYTHONPATH timeout $((left - 5)) $PY -m pytest -q -p no:cacheprovider test_linalg_fft.py test_complex.py test_numpy_extras.py ${PYTEST_ARGS:-}) > $OUT/pytest_gpu.txt 2>&1
  echo "pytest (GPU): rc=$? $((SECONDS - s)) s"; tail -15 $OUT/pytest_gpu.txt
else
  echo "pytest: not run ($left s left)"
fi
