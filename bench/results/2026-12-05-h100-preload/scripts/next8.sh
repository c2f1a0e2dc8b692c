# Second call on the same warm machine: every GPU test but the NumPy suite (the tree since the last full run
# adds the preload, the clip change, the OOM message, the evaluated flag), memcheck on test_gpu_memory_percent
# with its limit, the NumPy suite's clip cases on the GPU.
source .carry/exp/common.sh
( cd $B; ctest -L gpu -E "^gpu/ArrayNumPy" -j8 --timeout 300 > $OUT/ctest_gpu.txt 2>&1; echo "gpu suite rc=$?"; grep -E "tests passed|\*\*\*Failed|Timeout|Not Run" $OUT/ctest_gpu.txt | head; grep -E "Total Test time" $OUT/ctest_gpu.txt )
source .carry/exp/san.sh memcheck 420 "test_gpu_memory_percent|*"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
mkdir -p .venv/bin && printf '#!/bin/sh\nexec python3 "$@"\n' > .venv/bin/python && chmod +x .venv/bin/python
( export XP_TEST_REQUIRE_NUMPY=1; cd $B; lim=$((585 - SECONDS + t0)); ctest -L gpu -R "^gpu/ArrayNumPy\.(ElementwiseWeakScalars|ElementwiseEager)$" --output-on-failure -j2 --timeout $lim > $OUT/ctest_clip.txt 2>&1; echo "clip rc=$?"; grep -E "tests passed|Test +#" $OUT/ctest_clip.txt )
echo "t $((SECONDS-t0)) s"
