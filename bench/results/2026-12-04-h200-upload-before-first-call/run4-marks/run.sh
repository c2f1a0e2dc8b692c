# Run 4: clock marks inside xp's first a + b (uploaded vs device-made inputs), 15 processes each; then raw-first,xp-add
R=$PWD; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; } > $OUT/machine.txt 2>&1
git apply --exclude=bench/first_call.cpp bench/results/2026-12-04-h200-first-call/probes/xp_marks.patch && git apply bench/results/2026-12-04-h200-upload-before-first-call/run4-marks/first_call_mark.patch || { echo PATCH FAILED; exit 1; }
cmake -S $R -B <build> -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build <build> -j16 --target xp_cli xp_bench_first_call ><tmp>/build.log 2>&1 || { tail -30 <tmp>/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
F=<build>/bench/xp_bench_first_call
( export XP_CACHE_DIR=<tmp>/xpcache
$F plain 134217728 > $OUT/warm.txt 2>&1; tail -1 $OUT/warm.txt
for i in $(seq 15); do echo "== run U$i"; $F plain 134217728 2>&1; echo "== run D$i"; $F device-inputs 134217728 2>&1; done > $OUT/marks.txt 2>&1 )
python3 bench/results/2026-12-04-h200-first-call/probes/marks.py $OUT/marks.txt > $OUT/marks_summary.txt; grep -o "first a+b [0-9.]* ms" $OUT/marks.txt | head -0
paste <(grep "^== run" $OUT/marks.txt) $OUT/marks_summary.txt | head -40
echo "t $((SECONDS-t0)) s"
git checkout -q -- src bench/first_call.cpp && rm -f src/runtime/xpmark.hpp; git status --short | head -3
cmake --build <build> -j16 --target xp_cli xp_bench_first_call ><tmp>/build2.log 2>&1 || { tail -30 <tmp>/build2.log; echo REBUILD FAILED; exit 1; }
echo "rebuilt $((SECONDS-t0)) s"
timeout $((560-SECONDS+t0)) <build>/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver" $OUT/launch.txt | tail -3
echo "t $((SECONDS-t0)) s"
