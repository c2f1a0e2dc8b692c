# Short confirming run: first a + b of a new process at 2^27 float32, XP_PRELOAD_KERNELS=16 against 0 (7 processes
# each, alternating); then xp bench launch (raw-first, xp-add) with the default preload.
BUILD_TARGETS="xp_cli xp_bench_first_call" source .carry/exp/common.sh
X=$B/bench/xp_bench_first_call; C=$(mktemp -d)/kernels
XP_CACHE_DIR=$C $X plain 134217728 > $OUT/warm.txt 2>&1; XP_CACHE_DIR=$C $X plain 1024 >> $OUT/warm.txt 2>&1; tail -2 $OUT/warm.txt
for i in $(seq 7); do for p in 16 0; do
  echo "== n=134217728 preload=$p i=$i"; XP_LOG=debug XP_PRELOAD_KERNELS=$p XP_CACHE_DIR=$C $X plain 134217728 2>&1
done; done > $OUT/first_call_ab.txt
python3 - "$OUT/first_call_ab.txt" <<'PY' | tee $OUT/first_call_summary.txt
import re,sys,statistics as st,collections
d=collections.defaultdict(list); e=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.search(r'^plain n=(\d+) .*first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms.*XP_PRELOAD_KERNELS (\d+)',l)
    if m: d[(m[1],m[4])].append(float(m[2])); e[(m[1],m[4])].append(float(m[3]))
for k in sorted(d): v=d[k]; w=e[k]; print(f"n={k[0]} preload={k[1]}: first a+b median {st.median(v)*1e3:.0f} us ({min(v)*1e3:.0f}..{max(v)*1e3:.0f}), under 1 ms {sum(x<1.0 for x in v)} of {len(v)}, then a*b {st.median(w)*1e3:.0f} us")
PY
echo "t $((SECONDS-t0)) s"
$B/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add > $OUT/launch.txt 2>&1
sed -n '/Second process/,/^Median/p' $OUT/launch.txt; grep -E "new process, warm|bare driver's" $OUT/launch.txt
echo "t $((SECONDS-t0)) s"
