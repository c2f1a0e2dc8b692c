# Call B: build, memcheck + racecheck on the GPU tests added since the last sanitizer run, the eight MixedDtypes parts, the TF32 rows.
source .carry/exp/common.sh
specs=("test_matmul_precision|MatmulPrecisionGpu.*" "test_cuda_reduce|CudaReduceGpu.CumulativeSum*" "test_array_gpu|ArrayGpu.Signed*:ArrayGpu.ASizeOne*" "test_interop_gpu|InteropGpu.*" "test_gpu_memory_percent|*")
source .carry/exp/san.sh memcheck 190 "${specs[@]}"
source .carry/exp/san.sh racecheck 245 "test_cuda_reduce|CudaReduceGpu.CumulativeSum*" "test_array_gpu|ArrayGpu.Signed*"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > .venv/bin/python && chmod +x .venv/bin/python
( export XP_TEST_REQUIRE_NUMPY=1; cd $B; lim=$((370 - SECONDS + t0)); ctest -L gpu -R "^gpu/ArrayNumPy\.ElementwiseMixedDtypes" --output-on-failure -j8 --timeout $lim > $OUT/ctest_numpy_mixed.txt 2>&1; echo "mixed rc=$?"; grep -E "tests passed|Test +#" $OUT/ctest_numpy_mixed.txt | cut -c1-140; grep -A3 Failure $OUT/ctest_numpy_mixed.txt | head -20 )
timeout $((425 - SECONDS + t0)) $B/tools/xp/xp bench launch --runs 5 --python python3 --only xp-matmul-tf32,cupy-matmul-tf32,torch-matmul-tf32,xp-matmul-f32,cupy-matmul-f32 --json $OUT/tf32.json > $OUT/tf32.txt 2>&1; echo "bench rc=$?"; grep -A12 "| figure" $OUT/tf32.txt | head -20
echo "t $((SECONDS-t0)) s"
