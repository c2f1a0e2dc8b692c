# Run 6: xp bench launch raw-first,xp-add on one more fresh machine, final code
R=$PWD; t0=$SECONDS; B=$R/build-dev
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; nproc; lscpu | grep -E "Model name|L3|L2"; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $B -j16 --target xp_cli > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"; rm -f $OUT/build.log
timeout $((225-SECONDS+t0)) $B/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1; echo "launch rc=$?"
grep -E "first c = a|bare driver|raw driver API c|xp c = a" $OUT/launch.txt | tail -6
echo "t $((SECONDS-t0)) s"
