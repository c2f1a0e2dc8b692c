# On the machine that ran bench/results/2026-12-07-gpu-suite/scripts/run.sh (its build in build/gpu
# reused), from the repository root:
#   OUT=<folder> DEADLINE_S=560 bash bench/results/2026-12-07-h100-reductions-argrun/scripts/call3.sh
# The sweep's cases of SWEEP_ONLY (xp, CuPy and PyTorch in one run, every output checked against
# NumPy), then compute-sanitizer memcheck over every test of the gpu label, as
# bench/results/2026-12-07-gpu-memcheck/scripts/memcheck.sh runs it.
source bench/results/2026-12-06-gpu-memcheck/scripts/common.sh
s=$SECONDS
PYTHONPATH=$R/.carry/pylib timeout 150 bash bench/reduction_sweep.sh /tmp/sweep $B --python python3 --only "$SWEEP_ONLY"
echo "sweep rc=$? $((SECONDS - s)) s"
tar -C /tmp -czf $OUT/sweep.tar.gz sweep; grep -E "^(xp|cupy|torch):|^worst|^under" /tmp/sweep/machine.txt /tmp/sweep/report.md
head -24 /tmp/sweep/report.md
left=$((${DEADLINE_S:-560} - SECONDS + t0))
python3 scripts/gpu_sanitize.py $B --tool memcheck -j12 --timeout 240 --budget $((left - 250 > 60 ? left - 250 : 60)) \
  --application-only 'ReshapeEmptyArrays' --out $OUT/memcheck | tee $OUT/memcheck.txt | grep -v ': skipped'
