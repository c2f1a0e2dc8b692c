# Call 4: after the two reduction planners came to share one simplify (commit ac0f796), the GPU's
# reduction tests on the tree: a release build (no Python), then every gpu-labelled test of
# reductions and scans (CudaReduceGpu.*, the NumPy suite's reductions and cumulative sums on cuda:0).
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
ctest --test-dir $B -L gpu -R 'Reduce|Reduction|CumulativeSum|Scan' -j8 --timeout 200 > $OUT/ctest_reductions.txt 2>&1
echo "ctest: rc=$? $((SECONDS - t0)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)" $OUT/ctest_reductions.txt | tail -8
