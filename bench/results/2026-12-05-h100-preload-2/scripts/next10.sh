# Confirming run: first a + b of a new process with XP_PRELOAD_KERNELS=16 (default) against 0, 2^27 and 1,024
# float32, processes alternating; then xp bench launch (raw-first, xp-add) both ways, full output.
BUILD_TARGETS="xp_cli xp_bench_first_call" source .carry/exp/common.sh
X=$B/bench/xp_bench_first_call; C=$(mktemp -d)/kernels
XP_CACHE_DIR=$C $X plain 134217728 > $OUT/warm.txt 2>&1; XP_CACHE_DIR=$C $X plain 1024 >> $OUT/warm.txt 2>&1; tail -2 $OUT/warm.txt
for n in 134217728 1024; do for i in $(seq 9); do for p in 16 0; do
  echo "== n=$n preload=$p i=$i"; XP_LOG=debug XP_PRELOAD_KERNELS=$p XP_CACHE_DIR=$C $X plain $n 2>&1
done; done; done > $OUT/first_call_ab.txt
python3 - "$OUT/first_call_ab.txt" <<'PY' | tee $OUT/first_call_summary.txt
import re,sys,statistics as st,collections
d=collections.defaultdict(list); e=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.search(r'^plain n=(\d+) .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms.*XP_PRELOAD_KERNELS (\d+)',l)
    if m: d[(m[1],m[4])].append(float(m[2])); e[(m[1],m[4])].append(float(m[3]))
for k in sorted(d): v=d[k]; w=e[k]; print(f"n={k[0]} preload={k[1]}: first a+b median {st.median(v)*1e3:.0f} us ({min(v)*1e3:.0f}..{max(v)*1e3:.0f}), under 1 ms {sum(x<1.0 for x in v)} of {len(v)}, then a*b {st.median(w)*1e3:.0f} us")
PY
echo "t $((SECONDS-t0)) s"
for p in 16 0; do echo "== XP_PRELOAD_KERNELS=$p"; XP_PRELOAD_KERNELS=$p $B/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add 2>&1; done > $OUT/launch.txt
grep -iE "first|ratio" $OUT/launch.txt | tail -20
XP_CACHE_DIR=$C $B/tools/xp/xp cache info > $OUT/cache_info.txt 2>&1
echo "t $((SECONDS-t0)) s"
