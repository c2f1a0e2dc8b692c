# san.sh TOOL DEADLINE_S SPEC...: compute-sanitizer TOOL over each "program|gtest filter" until DEADLINE_S
# seconds after t0 (common.sh); everything to $OUT/TOOL.txt, one summary line per program to stdout.
tool=$1; dl=$2; shift 2; f=$OUT/$tool.txt
for spec in "$@"; do
  exe=${spec%%|*}; filt=${spec#*|}; left=$((dl - SECONDS + t0))
  if [ $left -lt 15 ]; then echo "$tool $exe: NOT RUN (no time left)" | tee -a $f; continue; fi
  echo "==== $tool $exe --gtest_filter=$filt" >> $f; s=$SECONDS
  extra=(); [ $exe = test_gpu_memory_limit ] && extra=(XP_GPU_MEMORY_LIMIT=256M); [ $exe = test_gpu_memory_percent ] && extra=(XP_GPU_MEMORY_LIMIT=12.5%)
  env XP_TEST_LABEL=gpu "${extra[@]}" timeout $left compute-sanitizer --tool $tool --error-exitcode 9 --report-api-errors no $B/tests/$exe --gtest_filter="$filt" > /tmp/san_cur.txt 2>&1; rc=$?
  cat /tmp/san_cur.txt >> $f
  echo "$tool $exe rc=$rc $((SECONDS-s)) s | $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' /tmp/san_cur.txt | tr '\n' ' ') | $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_cur.txt | tail -1)" | tee -a $f
done
