# Run 1: new output blocks allocated beside a first kernel's lookup (working tree) against 928558d
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
BASE=${BASE:?a checkout of 928558d}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; echo "new: working tree of c1549e9; base: 928558d (a checkout of it in $BASE)"; } > $OUT/machine.txt 2>&1
(cmake -S $R -B $T/new -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build $T/new -j12 > $T/build_new.log 2>&1 || { tail -30 $T/build_new.log; echo BUILD NEW FAILED; }) &
(cmake -S $BASE -B $T/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/base -j4 --target xp_bench_first_call > $T/build_base.log 2>&1 || { tail -30 $T/build_base.log; echo BUILD BASE FAILED; }) &
wait; echo "build $((SECONDS-t0)) s"
test -x $T/new/bench/xp_bench_first_call -a -x $T/base/bench/xp_bench_first_call || exit 1
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
(cd $T/new && timeout 220 ctest -L gpu --output-on-failure > $OUT/ctest_gpu.txt 2>&1; echo "rc=$?" >> $OUT/ctest_gpu.txt); grep -E "tests passed|rc=|Failed|\*\*\*" $OUT/ctest_gpu.txt | head -12
(cd $T/new && XP_GPU_MEMORY_LIMIT=256M timeout 60 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 tests/test_gpu_first_block > $OUT/memcheck_first_block.txt 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck_first_block.txt); grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck_first_block.txt | head -4
echo "t $((SECONDS-t0)) s"
A=$T/base/bench/xp_bench_first_call; B=$T/new/bench/xp_bench_first_call
XP_CACHE_DIR=$T/ca $A plain 134217728 > $OUT/warm_base.txt 2>&1; XP_CACHE_DIR=$T/cb $B plain 134217728 > $OUT/warm_new.txt 2>&1
for m in plain device-inputs; do
XP_CACHE_DIR=$T/ca $A $m 134217728 >/dev/null 2>&1; XP_CACHE_DIR=$T/cb $B $m 134217728 > /dev/null 2>&1
for i in $(seq 13); do
  if [ $((i % 2)) = 1 ]; then echo "== base $m $i $(XP_CACHE_DIR=$T/ca $A $m 134217728 2>&1)"; echo "== new $m $i $(XP_CACHE_DIR=$T/cb $B $m 134217728 2>&1)";
  else echo "== new $m $i $(XP_CACHE_DIR=$T/cb $B $m 134217728 2>&1)"; echo "== base $m $i $(XP_CACHE_DIR=$T/ca $A $m 134217728 2>&1)"; fi
done; done > $OUT/ab_first_call.txt
python3 - $OUT/ab_first_call.txt <<'PY' | tee $OUT/ab_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"== (\w+) ([\w-]+) \d+ .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms.*a \+ b checked", l)
    if m: d[(m.group(2), m.group(1))].append((float(m.group(3)), float(m.group(4))))
for k in sorted(d):
    v = [x for x, _ in d[k]]; w = [y for _, y in d[k]]
    print(f"{k[0]:14s} {k[1]:5s}: n={len(v)} first a+b median {st.median(v)*1000:.0f} us ({min(v)*1000:.0f}..{max(v)*1000:.0f}), under 1 ms in {sum(x < 1 for x in v)}; then a*b {st.median(w)*1000:.0f} us")
PY
echo "t $((SECONDS-t0)) s"
timeout $((580-SECONDS+t0)) $T/new/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver|raw driver API c|xp c = a" $OUT/launch.txt | tail -6
echo "t $((SECONDS-t0)) s"
