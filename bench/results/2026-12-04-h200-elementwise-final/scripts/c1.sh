BUILD_TARGETS="xp_cli"
source .carry/exp/common.sh
X=$B/tools/xp/xp
# 1. the two rows not measured on the final code, with CuPy's add(out=) for reference; SIGINT at the limit keeps what finished
timeout -s INT $((520-SECONDS+t0)) $X bench launch --runs 5 --python python3 --only xp-add-out,torch-add-out,cupy-add-out,xp-fma,torch-compile-fma --json $OUT/launch_elementwise.json --md $OUT/launch_elementwise.md > $OUT/launch_elementwise.txt 2>&1; echo "launch rc=$?"
grep -B2 -A14 "| figure" $OUT/launch_elementwise.txt | head -60
echo "t $((SECONDS-t0)) s"
# 2. the signal handling with GPU rows: a run cut on purpose
{ echo "== timeout -s TERM 6 xp bench launch --runs 3 --python none --only raw,xp-add"; timeout -s TERM 6 $X bench launch --runs 3 --python none --only raw,xp-add --json $OUT/cut_launch.json; echo "rc=$?";
  echo "== timeout -s INT 6 xp bench sweep --python none --only raw,xp-add --min-log2 10 --max-log2 26"; timeout -s INT 6 $X bench sweep --python none --only raw,xp-add --min-log2 10 --max-log2 26 --json $OUT/cut_sweep.json; echo "rc=$?"; } > $OUT/signals.txt 2>&1
tail -40 $OUT/signals.txt
echo "t $((SECONDS-t0)) s"
