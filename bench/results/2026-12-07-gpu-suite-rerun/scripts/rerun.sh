# The programs of the two failures in ../2026-12-07-gpu-suite-2 (after their fixes) and the Python
# package's tests, with a GPU required, in one call on the GPU machine:
#   OUT=<folder> bash bench/results/2026-12-07-gpu-suite-rerun/scripts/rerun.sh
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl $R/.carry/wheels/*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1 &&
  timeout 300 cmake --build $B -j16 --target test_user_kernels test_cuda_complex xp_python xp_cli xp_fake_cuda > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
s=$SECONDS
timeout 200 ctest --test-dir $B -j12 --timeout 190 --output-on-failure \
  -R "UserKernelsGpu|CudaComplexGpu|python.pytest" > $OUT/ctest.txt 2>&1
echo "ctest: rc=$? $((SECONDS - s)) s"
grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run|ulp \]| passed" $OUT/ctest.txt | tail -16
grep -E "differ from|Failure" -A2 $OUT/ctest.txt | head -30
