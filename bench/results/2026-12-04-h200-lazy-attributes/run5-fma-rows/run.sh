# Run 5: the fused a*b+c rows of xp bench launch on the final code, torch.compile in the same run
R=$PWD; t0=$SECONDS; B=$R/build-dev
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvcc --version | tail -2; g++ --version | head -1; python3 -c "import torch, cupy; print('torch', torch.__version__, 'cupy', cupy.__version__)"; git log --oneline -1; } > $OUT/machine.txt 2>&1
cmake -S $R -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DXP_BENCH_NVCC=OFF >/dev/null && cmake --build $B -j16 --target xp_cli > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; echo BUILD FAILED; exit 1; }
echo "build $((SECONDS-t0)) s"
timeout $((585-SECONDS+t0)) $B/tools/xp/xp bench launch --runs 5 --python python3 --only xp-fma,torch-compile-fma --json $OUT/bench_fma.json --md $OUT/bench_fma.md > $OUT/bench_fma.txt 2>&1; echo "launch rc=$?"
grep -E "^\| xp" $OUT/bench_fma.txt | grep -v "n/a" | tail -14
echo "t $((SECONDS-t0)) s"
