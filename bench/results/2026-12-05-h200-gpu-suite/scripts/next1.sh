# Next device session, call 1 (~590 s): build, doctor (cuBLAS section), TF32 tests, every gpu test but the NumPy suite.
source .carry/exp/common.sh
left() { echo $(( ${END:-570} - (SECONDS - t0) )); }
$B/tools/xp/xp doctor > $OUT/doctor.txt 2>&1; echo "doctor exit $?"; $B/tools/xp/xp doctor --json > $OUT/doctor.json 2>&1
grep -A8 -i "linear algebra" $OUT/doctor.txt | head -12
cd $B
timeout $(left) ctest -L gpu -R "^(MatmulPrecisionGpu|CudaGemmPlan|MatmulPrecision)\." --output-on-failure > $OUT/ctest_tf32.txt 2>&1; echo "tf32 rc=$?"
grep -E "tests passed|\*\*\*Failed|Failure" -A4 $OUT/ctest_tf32.txt | cut -c1-250 | head -30
timeout $(left) ctest -L gpu -E "^gpu/ArrayNumPy" --output-on-failure -j8 > $OUT/ctest_gpu.txt 2>&1; echo "gpu rc=$?"
grep -E "tests passed|\*\*\*Failed|\(Failed\)|Timeout|Test time" $OUT/ctest_gpu.txt | head -20
echo "t $((SECONDS-t0)) s"
