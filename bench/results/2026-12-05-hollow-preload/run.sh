#!/usr/bin/env bash
# The first a + b of a new process on the fake driver's hollow device (kernels compiled by NVRTC,
# loaded through the fake, never run): host work only. XP_PRELOAD_KERNELS=16 and 0 take turns, 9
# processes each, at 1,024 and 2^24 float32, with one warm disk cache (two processes fill it first).
# Usage: bench/results/2026-12-05-hollow-preload/run.sh BUILD_DIR OUT_DIR
set -euo pipefail
B=$1; OUT=$2; mkdir -p "$OUT"
C=$(mktemp -d)/kernels
export XP_CUDA_DRIVER=$B/tests/libxp_fake_cuda.so XP_FAKE_CUDA=devices=1,hollow,memory=4294967296 XP_CACHE_DIR=$C
X=$B/bench/xp_bench_first_call
# Each exits 1 here: no kernel runs on the hollow device, so a + b is not 3 (the times still hold).
$X plain 1024 > /dev/null 2>&1 || true; $X plain 16777216 > /dev/null 2>&1 || true
sed 's/^/  /' "$C/.recent" > "$OUT/recent.txt"
for n in 1024 16777216; do for i in $(seq 9); do for p in 16 0; do
  echo "== n=$n XP_PRELOAD_KERNELS=$p i=$i"; XP_LOG=debug XP_PRELOAD_KERNELS=$p $X plain $n 2>&1 || true
done; done; done | sed "s#$C#<cache>#g" > "$OUT/first_call.txt"
python3 - "$OUT/first_call.txt" <<'PY' | tee "$OUT/summary.txt"
import re, sys, statistics as st, collections
rows = collections.defaultdict(list); preloaded = collections.Counter(); key = None
for line in open(sys.argv[1]):
    m = re.match(r'== n=(\d+) XP_PRELOAD_KERNELS=(\d+)', line)
    if m: key = (int(m[1]), int(m[2])); continue
    if re.search(r'preloaded 2 modules', line): preloaded[key] += 1
    m = re.search(r'first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms', line)
    if m: rows[key].append((float(m[1]) * 1e3, float(m[2]) * 1e3))
for k in sorted(rows):
    a = [x[0] for x in rows[k]]; b = [x[1] for x in rows[k]]
    print(f"n={k[0]:>8} XP_PRELOAD_KERNELS={k[1]:>2}: first a+b median {st.median(a):.0f} us ({min(a):.0f}..{max(a):.0f}), "
          f"then first a*b median {st.median(b):.0f} us; both kernels loaded by the preload in {preloaded[k]} of {len(a)}")
PY
