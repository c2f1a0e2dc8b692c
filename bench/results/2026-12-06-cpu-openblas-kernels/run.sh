#!/usr/bin/env bash
# xp's float32 matmul 1024^2 on one thread (xp_bench_cpu_matmul --quick --threads 1, the median of 5)
# against NumPy's A @ B on one thread (OPENBLAS_NUM_THREADS=1, the median of 5 after a warm-up),
# interleaved in rounds, with the kernels xp chooses and with OpenBLAS's own choice (Prescott on
# this CPU, forced through OPENBLAS_CORETYPE).
cd "$(dirname "$0")/../../.."
np='import numpy as np, time
r = np.random.default_rng(0); a = r.random((1024, 1024), dtype=np.float32); b = r.random((1024, 1024), dtype=np.float32); a @ b
t = []
for _ in range(5):
    s = time.perf_counter(); a @ b; t.append(time.perf_counter() - s)
print(f"{sorted(t)[2] * 1e3:.3f}")'
for core in xp Prescott; do
  for r in 1 2 3 4; do
    if [ "$core" = xp ]; then env=(env -u OPENBLAS_CORETYPE); else env=(env OPENBLAS_CORETYPE=$core); fi
    out="$("${env[@]}" build/release/bench/xp_bench_cpu_matmul --quick --threads 1)"
    [ "$r" = 1 ] && echo "$out" | grep -E '^  (kernels|OpenBLAS 0)'
    x="$(echo "$out" | grep -E '^automatic +float32 +1024' | awk '{print $4}')"
    n="$(OPENBLAS_NUM_THREADS=1 .venv/bin/python -c "$np")"
    echo "kernels $core, round $r: xp $x ms, NumPy $n ms, xp/NumPy time $(python3 -c "print(f'{$x / $n:.2f}')")"
  done
done
echo "load average after: $(cat /proc/loadavg)"
