# Call A: build, then the whole NumPy suite on the GPU (-j16, per-test timeout so ctest reports the unfinished ones).
source .carry/exp/common.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > .venv/bin/python && chmod +x .venv/bin/python
export XP_TEST_REQUIRE_NUMPY=1
cd $B
lim=$((575 - SECONDS + t0)); echo "numpy per-test limit $lim s"
ctest -L gpu -R "^gpu/ArrayNumPy\." --output-on-failure -j16 --timeout $lim > $OUT/ctest_numpy_gpu.txt 2>&1; echo "numpy rc=$?"
grep -E "tests passed|Test +#|Test time" $OUT/ctest_numpy_gpu.txt | cut -c1-140 | head -25; grep -A3 "Failure" $OUT/ctest_numpy_gpu.txt | cut -c1-250 | head -20
echo "t $((SECONDS-t0)) s"
