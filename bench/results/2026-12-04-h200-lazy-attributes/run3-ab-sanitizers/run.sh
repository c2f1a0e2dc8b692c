# Run 3: the same A/B on a fresh machine, the fixed test under memcheck and racecheck
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; git log --oneline -2; } > $OUT/machine.txt 2>&1
git worktree add -q $T/basesrc 205cad1 || { echo WORKTREE FAILED; exit 1; }
(cmake -S $R -B $T/new -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build $T/new -j12 --target test_kernels_gpu xp_bench_first_call xp_cli > $T/build_new.log 2>&1 || { tail -30 $T/build_new.log; echo BUILD NEW FAILED; }) &
(cmake -S $T/basesrc -B $T/base -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/base -j4 --target xp_bench_first_call > $T/build_base.log 2>&1 || { tail -30 $T/build_base.log; echo BUILD BASE FAILED; }) &
wait; echo "build $((SECONDS-t0)) s"
test -x $T/new/bench/xp_bench_first_call -a -x $T/base/bench/xp_bench_first_call || exit 1
readelf -d $T/new/libxp.so | grep -E "FLAGS" > $OUT/flags.txt
export XP_TEST_REQUIRE_GPU=1 XP_TEST_REQUIRE_NVRTC=1
$T/new/tests/test_kernels_gpu --gtest_filter='GpuKernels.TheFunctionsOwnLimits*:GpuKernels.BadLaunches*:GpuKernels.DynamicShared*' > $OUT/test_kernels_limits.txt 2>&1; tail -3 $OUT/test_kernels_limits.txt
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 $T/new/tests/test_kernels_gpu --gtest_filter='GpuKernels.*' > $OUT/memcheck_kernels.txt 2>&1; echo "memcheck rc=$?" | tee -a $OUT/memcheck_kernels.txt; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck_kernels.txt | head -4
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 3 $T/new/tests/test_kernels_gpu --gtest_filter='GpuKernels.TheFunctionsOwnLimits*:GpuKernels.DynamicShared*' > $OUT/racecheck_kernels.txt 2>&1; echo "racecheck rc=$?" | tee -a $OUT/racecheck_kernels.txt; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $OUT/racecheck_kernels.txt | head -3
echo "t $((SECONDS-t0)) s"
A=$T/base/bench/xp_bench_first_call; B=$T/new/bench/xp_bench_first_call
XP_CACHE_DIR=$T/ca $A plain 134217728 > $OUT/warm_base.txt 2>&1; XP_CACHE_DIR=$T/cb $B plain 134217728 > $OUT/warm_new.txt 2>&1
for i in $(seq 15); do
  if [ $((i % 2)) = 1 ]; then echo "== base $i $(XP_CACHE_DIR=$T/ca $A plain 134217728 2>&1)"; echo "== new $i $(XP_CACHE_DIR=$T/cb $B plain 134217728 2>&1)";
  else echo "== new $i $(XP_CACHE_DIR=$T/cb $B plain 134217728 2>&1)"; echo "== base $i $(XP_CACHE_DIR=$T/ca $A plain 134217728 2>&1)"; fi
done > $OUT/ab_first_call.txt
python3 - $OUT/ab_first_call.txt <<'PY' | tee $OUT/ab_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"== (\w+) \d+ .*first a\+b ([0-9.]+) ms.*a \+ b checked", l)
    if m: d[m.group(1)].append(float(m.group(2)))
for k, v in d.items(): print(f"{k}: n={len(v)} first a+b median {st.median(v)*1000:.0f} us ({min(v)*1000:.0f}..{max(v)*1000:.0f}), under 1 ms in {sum(x < 1 for x in v)} of {len(v)}")
PY
echo "t $((SECONDS-t0)) s"
timeout $((570-SECONDS+t0)) $T/new/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver|raw-first|xp-add" $OUT/launch.txt | tail -6
echo "t $((SECONDS-t0)) s"
