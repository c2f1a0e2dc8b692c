# Run 2: first a + b with device-made inputs vs uploaded; elementwise goals of xp bench launch, one run, final code
R=$PWD; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; python3 -c "import torch,cupy,numpy,sys;print('python',sys.version.split()[0],'torch',torch.__version__,'cupy',cupy.__version__,'numpy',numpy.__version__)"; } > $OUT/machine.txt 2>&1
git -C $R log --oneline -1 >> $OUT/machine.txt
cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j16 --target xp_cli xp_bench_first_call ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
F=<build>/bench/xp_bench_first_call
( export XP_CACHE_DIR=<tmp>/xpcache
$F plain 134217728 > $OUT/warm.txt 2>&1; $F device-inputs 134217728 >> $OUT/warm.txt 2>&1; cat $OUT/warm.txt
for i in $(seq 9); do echo "U $($F plain 134217728 2>&1)"; echo "D $($F device-inputs 134217728 2>&1)"; done > $OUT/first_call_inputs.txt 2>&1 )
python3 - $OUT <<'PY'
import re,sys,statistics as st,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]+'/first_call_inputs.txt'):
    m=re.match(r'(\S+) .*? n=(\d+).*first a\+b ([\d.]+) ms.*checked',l)
    if m: d[m[1]].append(float(m[3])*1000)
for k in d: print(k, 'first a+b median %.0f us (%.0f..%.0f) n=%d'%(st.median(d[k]),min(d[k]),max(d[k]),len(d[k])))
PY
echo "t $((SECONDS-t0)) s"
timeout $((585-SECONDS+t0)) <build>/tools/xp/xp bench launch --runs 5 --python python3 --only raw,raw-first,xp-add,xp-add-out,xp-fma,torch-add-out,torch-compile-fma,cupy-add-out --json $OUT/bench_elementwise.json --md $OUT/bench_elementwise.md > $OUT/bench_elementwise.txt 2>&1; echo "launch rc=$?"
grep -E "^\| (add|fused|xp c|xp first|xp add|xp d)|goal" $OUT/bench_elementwise.txt | tail -14
echo "t $((SECONDS-t0)) s"
