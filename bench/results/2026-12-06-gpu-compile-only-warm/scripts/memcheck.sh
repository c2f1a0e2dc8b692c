# One call on the GPU machine: a release build (with the Python extension), then every test of the
# gpu label under compute-sanitizer memcheck (scripts/gpu_sanitize.py, -j12, 240 s a test; the death
# test gpu/ArrayNumPy.ReshapeEmptyArrays checked in its own process only), then the Python package's
# tests with a GPU required, for the time left. MEMCHECK_R (a ctest regex) and MEMCHECK_J narrow
# the sweep (call 4: the two tests that did not pass in call 3, -j2).
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl $R/.carry/wheels/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"; compute-sanitizer --version | tail -1
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1 &&
  cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
left=$((${DEADLINE_S:-585} - SECONDS + t0))
$PY scripts/gpu_sanitize.py $B ${MEMCHECK_R:+-R "$MEMCHECK_R"} --tool memcheck -j${MEMCHECK_J:-12} --timeout 240 --budget $((left - 270 > 60 ? left - 270 : 60)) \
  --application-only '^gpu/ArrayNumPy\.ReshapeEmptyArrays$' --out $OUT/memcheck > $OUT/memcheck.txt 2>&1
echo "memcheck: rc=$?"; grep -v ': skipped' $OUT/memcheck.txt | tail -12
tar czf $OUT/memcheck_logs.tgz -C $OUT memcheck && rm -rf $OUT/memcheck
left=$((${DEADLINE_S:-585} - SECONDS + t0))
if [ $left -gt 60 ]; then
  s=$SECONDS
  timeout $((left - 5)) ctest --test-dir $B -R python.pytest --output-on-failure > $OUT/ctest_python.txt 2>&1
  echo "python.pytest (GPU required): rc=$? $((SECONDS - s)) s"; grep -E "passed|failed|skipped|Error" $OUT/ctest_python.txt | tail -4
else
  echo "python.pytest: not run ($left s left)"
fi
