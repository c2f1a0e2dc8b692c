# One call on the GPU machine: a release build with the Python extension (the machine's python3),
# the Python package's tests with a GPU required, `xp bench launch` with the Python package's GPU
# rows beside xp's C++ rows, CuPy, cuda.core and PyTorch (5 runs, medians), import times, the one
# death test that did not finish under compute-sanitizer, then every gpu-labelled test for the
# time left.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
PY=$(command -v python3)
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl $R/.carry/wheels/*.whl 2>&1 | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"
  $PY -c "import sys,torch,cupy,numpy,nanobind; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__, 'nanobind', nanobind.__version__)"
  $PY -c "import importlib.metadata as m; print('cuda-core', m.version('cuda-core'), 'cuda-bindings', m.version('cuda-bindings'))"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
mkdir -p .venv/bin
printf '#!/bin/sh\nexec %s "$@"\n' "$PY" > .venv/bin/python; chmod +x .venv/bin/python
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1 &&
  cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
s=$SECONDS
ctest --test-dir $B -R python.pytest --output-on-failure > $OUT/ctest_python.txt 2>&1
echo "python.pytest (GPU required): rc=$? $((SECONDS - s)) s"; grep -E "passed|failed|skipped|Error" $OUT/ctest_python.txt | tail -6
s=$SECONDS
PYTHONPATH=$B/python:$PYTHONPATH $PY bench/python/import_time.py --runs 15 xp numpy cupy torch > $OUT/import_time.txt 2>&1
echo "import_time: rc=$? $((SECONDS - s)) s"; cat $OUT/import_time.txt
s=$SECONDS
ROWS=xp,xp-add,xp-add-out,xp-fma,cupy-rawkernel,cupy-add,cupy-add-out,cuda-core,torch-add,torch-add-out,torch-fma
ROWS=$ROWS,xp-py-rawkernel,xp-py-gpu-add,xp-py-gpu-add-out,xp-py-gpu-fma
PYTHONPATH=$B/python:$PYTHONPATH timeout 330 $B/tools/xp/xp bench launch --python $PY --only $ROWS --runs 5 \
  --json $OUT/launch.json --md $OUT/launch.md > $OUT/launch.txt 2>&1
echo "bench launch: rc=$? $((SECONDS - s)) s"; cat $OUT/launch.md 2>/dev/null | head -60
s=$SECONDS
XP_TEST_LABEL=gpu XP_DEVICE=cuda:0 timeout 120 compute-sanitizer --tool memcheck --target-processes application-only \
  --error-exitcode 9 --report-api-errors no $B/tests/test_array_numpy_gpu --gtest_filter='ArrayNumPy.ReshapeEmptyArrays' \
  > $OUT/memcheck_reshape_empty.txt 2>&1
echo "memcheck ReshapeEmptyArrays (application-only): rc=$? $((SECONDS - s)) s"; tail -4 $OUT/memcheck_reshape_empty.txt
left=$((${DEADLINE_S:-585} - SECONDS + t0))
if [ $left -gt 60 ]; then
  s=$SECONDS
  timeout $((left - 5)) ctest --test-dir $B -L gpu -j12 --timeout $((left - 10)) > $OUT/ctest_gpu.txt 2>&1
  echo "ctest -L gpu: rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -12
else
  echo "ctest -L gpu: not run ($left s left)"
fi
