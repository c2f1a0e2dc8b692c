# One call on the GPU machine: a release build with the Python extension, then `xp bench launch`
# over the kernel-launch rows that the Python package's RawKernel goal compares (xp.RawKernel
# [Python] against cuda.core and CuPy's RawKernel; xp's C++ row and the Python c = a + b beside
# them), 5 runs of two fresh processes each at n = 2^26.
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
s=$SECONDS
ROWS=xp,cuda-core,cupy-rawkernel,xp-py-rawkernel,xp-py-gpu-add,torch-add
left=$((${DEADLINE_S:-585} - SECONDS + t0))
PYTHONPATH=$B/python:$PYTHONPATH timeout $((left - 5)) $B/tools/xp/xp bench launch --python $PY --only $ROWS --runs 5 \
  --n 67108864 --json $OUT/launch.json --md $OUT/launch.md > $OUT/launch.txt 2>&1
echo "bench launch: rc=$? $((SECONDS - s)) s"; grep -E "^\| (xp|CuPy|cuda|PyTorch)|INTERRUPTED|^###" $OUT/launch.md 2>/dev/null | cut -c1-220
