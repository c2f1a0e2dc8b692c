# On the GPU machine, from the repository root, .carry holding ml_dtypes and the test wheels:
#   OUT=<folder> DEADLINE_S=580 STEPS="suite" bash bench/results/2026-12-07-gpu-suite-4/scripts/run.sh
# Builds (release, the Python extension, build/gpu; a build folder left by an earlier call on the
# same machine is reused), then runs the STEPS in order, each given what is left of DEADLINE_S:
#   suite     every test of the gpu label, a GPU, NVRTC and NumPy required (-j12)
#   memcheck  compute-sanitizer memcheck over every test of the gpu label (scripts/gpu_sanitize.py)
#   racecheck the same with racecheck, over the reduction and kernel tests (RACE_R, an ERE)
#   sweep     the reduction sweep's cases matching SWEEP_ONLY: xp, CuPy and PyTorch in one run
#   python    the Python package's tests with a GPU required
#   bench     xp_bench_user_kernels and the linalg/FFT rows against CuPy
R=$PWD; t0=$SECONDS; B=$R/build/gpu; D=${DEADLINE_S:-580}
left() { echo $((D - SECONDS + t0)); }
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
{ [ -f $B/build.ninja ] || cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=ON -DPython_EXECUTABLE=$PY > $OUT/configure.log 2>&1; } &&
  cmake --build $B -j16 > $OUT/build.log 2>&1 || { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s, warnings: $(grep -c 'warning:' $OUT/build.log)"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1 XP_TEST_REQUIRE_NUMPY=1
for step in ${STEPS:-suite}; do
  s=$SECONDS; l=$(left)
  [ $l -gt 20 ] || { echo "$step: not run ($l s left)"; continue; }
  case $step in
  suite)
    timeout $((l - 5)) ctest --test-dir $B -L gpu -j12 --timeout $((l - 10)) --output-on-failure ${SUITE_ARGS:-} > $OUT/ctest_gpu.txt 2>&1
    echo "ctest -L gpu: rc=$? $((SECONDS - s)) s"
    grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped\)|Not Run" $OUT/ctest_gpu.txt | tail -12 ;;
  memcheck|racecheck)
    R_ARGS=(); [ $step = racecheck ] && R_ARGS=(-R "${RACE_R:-CudaReduce|GpuKernels}")
    $PY scripts/gpu_sanitize.py $B --tool $step -j12 --timeout $((l - 15)) --budget $((l - 15)) "${R_ARGS[@]}" \
      --out /tmp/$step > $OUT/$step.txt 2>&1
    echo "$step: rc=$? $((SECONDS - s)) s"; tail -6 $OUT/$step.txt
    mkdir -p $OUT/$step-logs; grep -lE "ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]" /tmp/$step/* 2>/dev/null | head -5 | xargs -r cp -t $OUT/$step-logs ;;
  sweep)
    rm -rf /tmp/sweep
    timeout $((l - 10)) bash bench/reduction_sweep.sh /tmp/sweep $B --python $PY --only "$SWEEP_ONLY"
    echo "sweep rc=$? $((SECONDS - s)) s"
    tar -C /tmp -czf $OUT/sweep.tar.gz sweep; grep -E "^worst|^under" /tmp/sweep/report.md; head -60 /tmp/sweep/report.md ;;
  python)
    (cd $B/python && PYTHONPATH=$B/python:$PYTHONPATH timeout $((l - 5)) $PY -m pytest -q -rs -p no:cacheprovider $R/python/tests) > $OUT/pytest_gpu.txt 2>&1
    echo "pytest (GPU required): rc=$? $((SECONDS - s)) s"; tail -8 $OUT/pytest_gpu.txt ;;
  bench)
    timeout 60 $B/bench/xp_bench_user_kernels --device cuda:0 > $OUT/bench_user_kernels.txt 2>&1
    echo "bench_user_kernels: rc=$?"; cat $OUT/bench_user_kernels.txt
    l=$(left); PYTHONPATH=$B/python:$PYTHONPATH timeout $((l - 10 < 150 ? l - 10 : 150)) $PY bench/python/linalg_fft_gpu.py > $OUT/linalg_fft_gpu.txt 2>&1
    echo "linalg_fft: rc=$? $((SECONDS - s)) s"; tail -12 $OUT/linalg_fft_gpu.txt ;;
  esac
done
echo "total $((SECONDS - t0)) s"
