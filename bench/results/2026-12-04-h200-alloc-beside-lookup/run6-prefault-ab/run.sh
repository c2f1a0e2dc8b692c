# Run 6: first a + b with and without libxp's code pages filled first, 21 processes each, order alternated (ABBA)
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep -E "Model name|L3"; uname -r; echo "tree: 0ccc886"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/b -j16 --target xp_bench_first_call > $T/build.log 2>&1 || { tail -30 $T/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
B=$T/b/bench/xp_bench_first_call
XP_CACHE_DIR=$T/c $B plain 134217728 > $OUT/warm.txt 2>&1
for i in $(seq 21); do
  if [ $((i % 2)) = 1 ]; then o="none xp"; else o="xp none"; fi
  for pf in $o; do echo "== plain $pf $i $(XP_CACHE_DIR=$T/c $B plain 134217728 $pf 2>&1)"; done
done > $OUT/prefault.txt
python3 - $OUT/prefault.txt <<'PY' | tee $OUT/prefault_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(list); pos = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"== ([\w-]+) (\w+) (\d+) .*first a\+b ([0-9.]+) ms.*a \+ b checked\); first a\+b: (\d+) minor", l)
    if not m: continue
    v = float(m.group(4)) * 1000; d[m.group(2)].append(v)
    first = (int(m.group(3)) % 2 == 1) == (m.group(2) == "none")
    pos[(m.group(2), "ran first" if first else "ran second")].append(v)
for k, v in d.items(): print(f"{k:5s} n={len(v)} first a+b median {st.median(v):.0f} us ({min(v):.0f}..{max(v):.0f}), under 1 ms in {sum(x < 1000 for x in v)}")
for k, v in sorted(pos.items()): print(f"  {k[0]:5s} {k[1]}: median {st.median(v):.0f} us (n={len(v)})")
PY
echo "t $((SECONDS-t0)) s"
