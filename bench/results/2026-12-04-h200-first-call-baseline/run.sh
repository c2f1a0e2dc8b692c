# session 10 call 1: builds (A: as committed, Z: libxp linked with -z now), the raw-first bench row, first-call A/Z/A+LD_BIND_NOW
R=$PWD; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3"; } > $OUT/machine.txt 2>&1
(cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j8 --target xp_cli xp_bench_first_call ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD A FAILED; }) &
(cmake -S $R -B <build-z> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,now >/dev/null && cmake --build <build-z> -j8 --target xp_bench_first_call ><tmp>/buildz.log 2>&1 || { tail -30 <tmp>/buildz.log; echo BUILD Z FAILED; }) &
wait
echo "builds $((SECONDS-t0)) s"
readelf -d <build-z>/libxp.so.0.1.0 | grep -i -E "flags" > $OUT/zflags.txt; readelf -d <build>/libxp.so.0.1.0 | grep -i flags >> $OUT/zflags.txt
<build>/tools/xp/xp bench launch --runs 5 --python none --only raw,raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"; grep -i "first c\|raw-first\|raw driver API c" $OUT/launch.txt | head -8
echo "t $((SECONDS-t0)) s"
A=<build>/bench/xp_bench_first_call; Z=<build-z>/bench/xp_bench_first_call
$A plain 134217728 >/dev/null 2>&1; $Z plain 134217728 >/dev/null 2>&1
for i in $(seq 9); do echo "A $($A plain 134217728 2>&1)"; echo "Z $($Z plain 134217728 2>&1)"; echo "A+bindnow $(LD_BIND_NOW=1 $A plain 134217728 2>&1)"; done > $OUT/az_first_call.txt 2>&1
for i in $(seq 7); do echo "A $($A plain 1024 2>&1)"; echo "Z $($Z plain 1024 2>&1)"; echo "A+bindnow $(LD_BIND_NOW=1 $A plain 1024 2>&1)"; done >> $OUT/az_first_call.txt 2>&1
for i in 1 2 3; do echo "A: $(LD_DEBUG=statistics $A plain 1024 2>&1 | grep -E 'total startup|relocation processing' | tr -s ' \t' ' ' | tr '\n' ';')"; echo "Z: $(LD_DEBUG=statistics $Z plain 1024 2>&1 | grep -E 'total startup|relocation processing' | tr -s ' \t' ' ' | tr '\n' ';')"; done > $OUT/ld_statistics.txt 2>&1
echo "t $((SECONDS-t0)) s"
python3 - $OUT <<'PY'
import re,sys,statistics as st,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]+'/az_first_call.txt'):
    m=re.match(r'(\S+) .*?plain n=(\d+).*first a\+b ([\d.]+) ms',l)
    if m: d[(m[1],m[2])].append(float(m[3])*1000)
for k,v in sorted(d.items()): print(k, 'median %.0f us  min %.0f max %.0f  n=%d'%(st.median(v),min(v),max(v),len(v)))
PY
