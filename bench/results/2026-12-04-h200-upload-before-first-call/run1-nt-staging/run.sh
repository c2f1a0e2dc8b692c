# Run 1: streaming-store staging (XP_EXP_NT_STAGING=1) A/B: first a + b at 2^27, uploads, bench launch
R=$PWD; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; } > $OUT/machine.txt 2>&1
git apply bench/results/2026-12-04-cpu-nt-copy/nt_staging.patch || { echo PATCH FAILED; exit 1; }
cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j16 --target xp_cli xp_bench_first_call ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
export XP_CACHE_DIR=<tmp>/xpcache
F=<build>/bench/xp_bench_first_call
$F plain 134217728 > $OUT/warm.txt 2>&1; cat $OUT/warm.txt
for i in $(seq 11); do echo "A $($F plain 134217728 2>&1)"; echo "NT $(XP_EXP_NT_STAGING=1 $F plain 134217728 2>&1)"; echo "DRV $(XP_NUM_THREADS=1 $F plain 134217728 2>&1)"; done > $OUT/ab_first_call.txt 2>&1
python3 - $OUT <<'PY'
import re,sys,statistics as st,collections
d=collections.defaultdict(list); u=collections.defaultdict(list)
for l in open(sys.argv[1]+'/ab_first_call.txt'):
    m=re.match(r'(\S+) .*?plain n=(\d+).*uploads ([\d.]+) ms, first a\+b ([\d.]+) ms',l)
    if m: d[m[1]].append(float(m[4])*1000); u[m[1]].append(float(m[3]))
for k in d: print(k, 'first a+b median %.0f us (%.0f..%.0f) n=%d; uploads median %.1f ms (%.1f..%.1f)'%(st.median(d[k]),min(d[k]),max(d[k]),len(d[k]),st.median(u[k]),min(u[k]),max(u[k])))
PY
echo "t $((SECONDS-t0)) s"
X=<build>/tools/xp/xp
$X bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch_A.json > $OUT/launch_A.txt 2>&1; echo "launch A rc=$?"; grep -i "first c\|raw-first\|first c = a" $OUT/launch_A.txt | head -8
echo "t $((SECONDS-t0)) s"
XP_EXP_NT_STAGING=1 $X bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch_NT.json > $OUT/launch_NT.txt 2>&1; echo "launch NT rc=$?"; grep -i "first c\|raw-first\|first c = a" $OUT/launch_NT.txt | head -8
echo "t $((SECONDS-t0)) s"
