# A second call on the GPU machine, after bench/results/2026-12-07-gpu-suite/scripts/run.sh on the
# same warm machine (its build in build/gpu is reused; without it, a release build is made first):
#   OUT=<folder> DEADLINE_S=560 bash bench/results/2026-12-07-gpu-memcheck/scripts/memcheck.sh
# compute-sanitizer memcheck over every test of the gpu label (scripts/gpu_sanitize.py, -j12), the
# gtest death tests (ReshapeEmptyArrays, whose re-executed children did not finish under the
# sanitizer on 2026-12-06) checked in their own process only.
source bench/results/2026-12-06-gpu-memcheck/scripts/common.sh
left=$((${DEADLINE_S:-560} - SECONDS + t0))
python3 scripts/gpu_sanitize.py $B --tool memcheck -j12 --timeout 240 --budget $((left - 250 > 60 ? left - 250 : 60)) \
  --application-only 'ReshapeEmptyArrays' --out $OUT/memcheck | tee $OUT/memcheck.txt | grep -v ': skipped'
