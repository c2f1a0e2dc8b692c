# One call on the GPU machine, from the repository root, .carry holding the ml_dtypes wheel:
#   OUT=<folder> bash bench/results/2026-12-07-h100-reductions-columns-2/scripts/run.sh
# As ../2026-12-07-h100-reductions-columns/scripts/run.sh without the tests (the device time left
# held only the sweep): the sweep's 592 column cases at 16 MiB, xp against CuPy and PyTorch in one
# run, every output checked against NumPy; SWEEP_ONLY (an ERE) narrows the cases.
R=$PWD; t0=$SECONDS; B=$R/build/gpu
mkdir -p $R/.carry/pylib
pip install --quiet --no-index --no-deps --target $R/.carry/pylib $R/.carry/ml_dtypes-*.whl 2>&1 | grep -v WARNING | tail -2
export PYTHONPATH=$R/.carry/pylib
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "cpus $(nproc)"
  echo "source hash of this tree: $(bash scripts/source_hash.sh)"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_PYTHON=OFF > $OUT/configure.log 2>&1 &&
  timeout 150 cmake --build $B -j16 --target xp_bench_gpu_reductions xp_cli > $OUT/build.log 2>&1 ||
  { tail -30 $OUT/configure.log $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS - t0)) s"
echo "xp --version: $($B/tools/xp/xp --version)" | tee -a $OUT/machine.txt
s=$SECONDS
timeout $((${DEADLINE_S:-270} - SECONDS + t0)) bash bench/reduction_sweep.sh /tmp/sweep $B --python python3 --only "${SWEEP_ONLY:-cols[0-9]+K\.16M }"
echo "sweep rc=$? $((SECONDS - s)) s"
tar -C /tmp -czf $OUT/sweep.tar.gz sweep; grep -E "^(xp|cupy|torch):|^worst|^under" /tmp/sweep/machine.txt /tmp/sweep/report.md
head -30 /tmp/sweep/report.md
