# Run 2: where the time goes when the block is allocated beside the lookup (clock marks, marks.patch)
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
git apply $(dirname "$0")/marks.patch || { echo PATCH FAILED; exit 1; }
cp $(dirname "$0")/marks.patch $OUT/
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/b -j16 --target xp_bench_first_call > $T/build.log 2>&1 || { tail -30 $T/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
B=$T/b/bench/xp_bench_first_call
XP_CACHE_DIR=$T/c $B plain 134217728 > /dev/null 2>&1; XP_CACHE_DIR=$T/c $B device-inputs 134217728 > /dev/null 2>&1
for m in plain device-inputs; do for i in $(seq 9); do
  for v in serial side spin; do
    case $v in serial) E="XP_EXP_NO_SIDE=1";; side) E="XP_EXP_X=1";; spin) E="XP_EXP_SPIN=1";; esac
    echo "== $v $m $i $(env $E XP_EXP_MARKS=1 XP_CACHE_DIR=$T/c $B $m 134217728 2>&1 | tr '\n' ' ')"
  done
done; done > $OUT/marks.txt
python3 - $OUT/marks.txt <<'PY' | tee $OUT/marks_summary.txt
import sys, re, statistics as st, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(sys.argv[1]):
    m = re.match(r"== (\w+) ([\w-]+) \d+ (.*)", l)
    if not m: continue
    k = (m.group(2), m.group(1)); rest = m.group(3)
    ms = re.findall(r"MARKS pre ([0-9.]+) wake ([0-9.-]+) alloc ([0-9.]+) here ([0-9.]+) \(from t1\) joined ([0-9.-]+) \(after both\) total ([0-9.]+)", rest)
    f = re.search(r"first a\+b ([0-9.]+) ms, then first a\*b ([0-9.]+) ms", rest)
    if not ms or not f: continue
    for j, mk in enumerate(ms[:2]):
        for name, val in zip(["pre", "wake", "alloc", "here", "joined", "total"], mk): d[k][f"{j}.{name}"].append(float(val))
    d[k]["first"].append(float(f.group(1)) * 1000); d[k]["second"].append(float(f.group(2)) * 1000)
for k in sorted(d):
    print(k[0], k[1], "n=%d" % len(d[k]["first"]), " ".join(f"{n}={st.median(v):.1f}" for n, v in d[k].items()))
PY
echo "t $((SECONDS-t0)) s"
