# Sourced by each call: machine facts, a release build in build/gpu (kept while the machine stays
# warm), the NumPy suite's reference Python (NumPy from the machine, ml_dtypes from a wheel carried
# in .carry/, behind .venv/bin/python), and the variables that make a missing GPU, NVRTC or NumPy a
# failure.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1; echo "cpus $(nproc)"; compute-sanitizer --version | tail -1
  python3 -c "import sys,torch,cupy,numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cupy', cupy.__version__, 'numpy', numpy.__version__)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
if [ ! -x $B/tools/xp/xp ]; then
  cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF > /dev/null &&
    cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; echo BUILD FAILED; exit 1; }
  echo "build $((SECONDS - t0)) s"
else
  echo "build kept from the last call"
fi
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl 2>/dev/null
mkdir -p .venv/bin
printf '#!/bin/sh\nPYTHONPATH=%s/.carry/pylib${PYTHONPATH:+:$PYTHONPATH} exec python3 "$@"\n' "$R" > .venv/bin/python
chmod +x .venv/bin/python
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
