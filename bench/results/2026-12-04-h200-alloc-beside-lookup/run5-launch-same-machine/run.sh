# Run 5: xp bench launch raw-first,xp-add on run 4's machine, tree 0ccc886 (the library of 928558d)
T=$(mktemp -d); cmake -S . -B $T/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF -DXP_BUILD_TESTS=OFF >/dev/null && cmake --build $T/b -j16 --target xp_cli > $T/build.log 2>&1 || { tail -20 $T/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/machine.txt; lscpu | grep -E "Model name|L3" >> $OUT/machine.txt
timeout 300 $T/b/tools/xp/xp bench launch --runs 5 --python none --only raw-first,xp-add --json $OUT/launch.json > $OUT/launch.txt 2>&1
