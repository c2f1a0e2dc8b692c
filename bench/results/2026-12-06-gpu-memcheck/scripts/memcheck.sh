# compute-sanitizer memcheck over every test of the gpu label (scripts/gpu_sanitize.py), -j12.
source bench/results/2026-12-06-gpu-memcheck/scripts/common.sh
left=$((${DEADLINE_S:-570} - SECONDS + t0))
python3 scripts/gpu_sanitize.py $B --tool memcheck -j12 --timeout 240 --budget $((left - 240 > 60 ? left - 240 : 60)) \
  --out $OUT/memcheck | tee $OUT/memcheck.txt | grep -v ': skipped'
