# Run 3: the final code (3c38db3, the library of 928558d): the first-call goal row and 13 first calls per input mode
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; echo "tree: 3c38db3"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/b -j16 --target xp_cli xp_bench_first_call > $T/build.log 2>&1 || { tail -30 $T/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
timeout 300 $T/b/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver|raw driver API c|xp c = a" $OUT/launch.txt | tail -6
echo "t $((SECONDS-t0)) s"
B=$T/b/bench/xp_bench_first_call
for m in plain device-inputs; do XP_CACHE_DIR=$T/c $B $m 134217728 > /dev/null 2>&1; for i in $(seq 13); do echo "== $m $i $(XP_CACHE_DIR=$T/c $B $m 134217728 2>&1)"; done; done > $OUT/first_call.txt
python3 - $OUT/first_call.txt <<'PY' | tee $OUT/first_call_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"== ([\w-]+) \d+ .*first a\+b ([0-9.]+) ms.*a \+ b checked", l)
    if m: d[m.group(1)].append(float(m.group(2)))
for k, v in d.items(): print(f"{k}: n={len(v)} first a+b median {st.median(v)*1000:.0f} us ({min(v)*1000:.0f}..{max(v)*1000:.0f}), under 1 ms in {sum(x < 1 for x in v)} of {len(v)}")
PY
echo "t $((SECONDS-t0)) s"
