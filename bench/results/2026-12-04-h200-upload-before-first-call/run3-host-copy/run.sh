# Run 3: what of the inputs' upload slows the first a + b: plain / driver's own copy / host memcpy only / device-made inputs; then raw-first,xp-add
R=$PWD; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; } > $OUT/machine.txt 2>&1
cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j16 --target xp_cli xp_bench_first_call ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
F=<build>/bench/xp_bench_first_call
( export XP_CACHE_DIR=<tmp>/xpcache
$F plain 134217728 > $OUT/warm.txt 2>&1; cat $OUT/warm.txt
for i in $(seq 9); do echo "U $($F plain 134217728 2>&1)"; echo "U1 $(XP_NUM_THREADS=1 $F plain 134217728 2>&1)"; echo "H $($F host-copy 134217728 2>&1)"; echo "D $($F device-inputs 134217728 2>&1)"; done > $OUT/first_call_inputs.txt 2>&1 )
python3 - $OUT <<'PY'
import re,sys,statistics as st,collections
d=collections.defaultdict(list); u=collections.defaultdict(list)
for l in open(sys.argv[1]+'/first_call_inputs.txt'):
    m=re.match(r'(\S+) .*? n=(\d+).*uploads ([\d.]+) ms, first a\+b ([\d.]+) ms.*checked',l)
    if m: d[m[1]].append(float(m[4])*1000); u[m[1]].append(float(m[3]))
for k in d: print(k, 'first a+b median %.0f us (%.0f..%.0f) n=%d; uploads median %.1f ms'%(st.median(d[k]),min(d[k]),max(d[k]),len(d[k]),st.median(u[k])))
PY
echo "t $((SECONDS-t0)) s"
timeout $((560-SECONDS+t0)) <build>/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver" $OUT/launch.txt | tail -3
echo "t $((SECONDS-t0)) s"
