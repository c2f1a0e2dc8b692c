# Call 2: the reduction sweep, xp against CuPy and PyTorch in one run (bench/reduction_sweep.sh),
# its folder packed into one file (sweep.tar.gz).
source bench/results/2026-12-06-h100-reductions/scripts/common.sh
timeout ${SWEEP_LIMIT_S:-540} bash bench/reduction_sweep.sh /tmp/sweep $B --python python3 ${SWEEP_ONLY:+--only "$SWEEP_ONLY"}
echo "sweep rc=$? $((SECONDS - t0)) s"
tar -C /tmp -czf $OUT/sweep.tar.gz sweep; sed -n '1,12p' /tmp/sweep/machine.txt; tail -40 /tmp/sweep/report.md
