# Next device session: the kernel preload (XP_PRELOAD_KERNELS) against none, first a + b of a new process.
# A build of HEAD; 2^27 and 1,024 elements; processes alternate 16 / 0; then xp bench launch both ways.
source .carry/exp/common.sh
X=$B/bench/xp_bench_first_call; C=$(mktemp -d)/kernels
XP_CACHE_DIR=$C $X plain 134217728 > $OUT/warm.txt 2>&1; XP_CACHE_DIR=$C $X plain 1024 >> $OUT/warm.txt 2>&1; tail -2 $OUT/warm.txt
for n in 134217728 1024; do for i in $(seq 11); do for p in 16 0; do
  echo "== n=$n preload=$p i=$i"; XP_LOG=debug XP_PRELOAD_KERNELS=$p XP_CACHE_DIR=$C $X plain $n 2>&1
done; done; done > $OUT/first_call_ab.txt
python3 - "$OUT/first_call_ab.txt" <<'PY' | tee $OUT/first_call_summary.txt
import re,sys,statistics as st,collections
d=collections.defaultdict(list); e=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.search(r'^plain n=(\d+) .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms.*XP_PRELOAD_KERNELS (\d+)',l)
    if m: d[(m[1],m[4])].append(float(m[2])); e[(m[1],m[4])].append(float(m[3]))
for k in sorted(d): v=d[k]; w=e[k]; print(f"n={k[0]} preload={k[1]}: first a+b median {st.median(v)*1e3:.0f} us ({min(v)*1e3:.0f}..{max(v)*1e3:.0f}), then a*b {st.median(w)*1e3:.0f} us, {len(v)} processes")
PY
grep -m3 "preloaded" $OUT/first_call_ab.txt
for p in 16 0; do echo "== XP_PRELOAD_KERNELS=$p"; XP_PRELOAD_KERNELS=$p $B/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add 2>&1 | tail -8; done | tee $OUT/launch.txt
cat $C/.recent > $OUT/recent.txt; XP_CACHE_DIR=$C $B/tools/xp/xp cache info > $OUT/cache_info.txt 2>&1
XP_CACHE_DIR=$C compute-sanitizer --tool memcheck --report-api-errors no $X plain 1024 > $OUT/memcheck_first_call.txt 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/memcheck_first_call.txt
( cd $B && ctest -R "KernelPreload|HollowGpu|CudaCodegenGpu|GeneratedKernels" -j8 > $OUT/ctest_preload.txt 2>&1; echo "ctest rc=$?"; grep -E "tests passed" $OUT/ctest_preload.txt )
echo "t $((SECONDS-t0)) s"
