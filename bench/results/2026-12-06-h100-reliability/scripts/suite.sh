# Call 1: every test of the gpu label but the NumPy suite on the GPU.
source bench/results/2026-12-06-h100-reliability/scripts/common.sh
s=$SECONDS
ctest --test-dir $B -L gpu -E '^gpu/ArrayNumPy' -j8 --timeout 400 > $OUT/ctest_gpu.txt 2>&1
echo "ctest gpu rc=$? $((SECONDS - s)) s"; grep -E "tests passed|\(Failed\)|\(Timeout\)|Skipped" $OUT/ctest_gpu.txt | tail -15
