# Run 1 (2026-12-04 session 12): lazy symbol binding and the kernel attribute calls in the first a + b
R=$PWD; t0=$SECONDS; T=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; } > $OUT/machine.txt 2>&1
git apply --exclude=bench/first_call.cpp bench/results/2026-12-04-h200-first-call/probes/xp_marks.patch && git apply bench/results/2026-12-04-h200-upload-before-first-call/run4-marks/first_call_mark.patch && git apply bench/results/2026-12-04-h200-lazy-attributes/run1-binding-and-attributes/no_fattr.patch || { echo PATCH FAILED; exit 1; }
cmake -S $R -B $T/a -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null &
cmake -S $R -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-z,now" "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-z,now" >/dev/null & wait
cmake --build $T/a -j8 --target xp_bench_first_call > $T/build_a.log 2>&1 & cmake --build $T/b -j8 --target xp_bench_first_call > $T/build_b.log 2>&1 & wait
for x in a b; do test -x $T/$x/bench/xp_bench_first_call || { tail -30 $T/build_$x.log; echo BUILD $x FAILED; exit 1; }; done
echo "build $((SECONDS-t0)) s"
readelf -d $T/a/libxp.so | grep -E "FLAGS|BIND" > $OUT/flags.txt; echo ---- >> $OUT/flags.txt; readelf -d $T/b/libxp.so | grep -E "FLAGS|BIND" >> $OUT/flags.txt; cat $OUT/flags.txt
A=$T/a/bench/xp_bench_first_call; B=$T/b/bench/xp_bench_first_call
XP_CACHE_DIR=$T/ca $A plain 134217728 > $OUT/warm_a.txt 2>&1; XP_CACHE_DIR=$T/cb $B plain 134217728 > $OUT/warm_b.txt 2>&1
tail -2 $OUT/warm_a.txt; ls -l $T/ca $T/cb | sed "s#$T#<tmp>#" > $OUT/cache_files.txt; cat $OUT/cache_files.txt
for i in $(seq 12); do
  echo "== run A$i"; XP_CACHE_DIR=$T/ca $A plain 134217728 2>&1
  echo "== run Aenv$i"; LD_BIND_NOW=1 XP_CACHE_DIR=$T/ca $A plain 134217728 2>&1
  echo "== run B$i"; XP_CACHE_DIR=$T/cb $B plain 134217728 2>&1
  echo "== run Bnofattr$i"; XP_EXP_NO_FATTR=1 XP_CACHE_DIR=$T/cb $B plain 134217728 2>&1
done > $OUT/marks.txt 2>&1
python3 bench/results/2026-12-04-h200-lazy-attributes/run1-binding-and-attributes/summ.py $OUT/marks.txt | tee $OUT/summary.txt
# start-up cost of the binding: time to main and through, 10 processes each, 1,024 elements
for i in $(seq 10); do
  for v in A B; do X=$A; C=$T/ca; [ $v = B ] && { X=$B; C=$T/cb; }
    s=$(date +%s%N); XP_CACHE_DIR=$C $X plain 1024 > /dev/null 2>&1; e=$(date +%s%N); echo "$v $(( (e-s)/1000 ))"; done
done > $OUT/process_us.txt
python3 -c "
import statistics as st,collections; d=collections.defaultdict(list)
for l in open('$OUT/process_us.txt'): k,v=l.split(); d[k].append(int(v))
for k,v in d.items(): print(k,'whole process at 1,024 elements: median',st.median(v),'us',min(v),max(v))" | tee -a $OUT/summary.txt
echo "t $((SECONDS-t0)) s"
for v in a b; do echo "== $v"; LD_DEBUG=statistics XP_CACHE_DIR=$T/c$v $T/$v/bench/xp_bench_first_call plain 1024 2>&1 | grep -E "total startup|relocation processing|number of relocations" | sed 's/^ *[0-9]*: *//'; done | tee $OUT/ld_statistics.txt
