#!/usr/bin/env bash
# xp's CPU arrays against NumPy and numexpr in one run, with one thread count for all: runs
# xp_bench_cpu_arrays (bench/cpu_arrays.cpp), which writes its inputs and results to a scratch
# folder, then bench/python/cpu_arrays.py on the same inputs (timing NumPy and numexpr, comparing
# xp's results with NumPy's), then xp_bench_cpu_matmul when it is built, and merges everything into
# one Markdown table and one JSON file with the machine's facts.
#
#   bench/run_cpu_arrays.sh RESULTS_DIR [--threads N] [--bin XP_BENCH_CPU_ARRAYS] [--python PYTHON]
#                           [--min-ms MS] [--quick]
#
# Defaults: N = the cores this process may use; the program from build/release/bench; the Python of
# .venv (else python3), which needs NumPy 2 and numexpr. --quick: n = 2^20 and one matmul size, a
# smoke test. Writes RESULTS_DIR/cpu_arrays.{md,json}, xp.txt, python.txt (each side's console
# output) and cpu_matmul.txt. Exit status 1 when a result differs from NumPy's.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '8,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 1 && $1 != -* ]] || usage
results="$1"
shift
threads=""
bin="$root/build/release/bench/xp_bench_cpu_arrays"
python=""
min_ms=50
quick=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --min-ms) min_ms="$2"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) usage ;;
  esac
done
if [[ -z $python ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
[[ -n $threads ]] || threads="$(nproc)"
if [[ ! -x $bin ]]; then
  echo "no xp_bench_cpu_arrays at $bin (build the bench targets, or pass --bin)" >&2
  exit 1
fi
"$python" -c 'import numpy, numexpr' || {
  echo "$python lacks NumPy or numexpr (pip install numpy numexpr)" >&2
  exit 1
}

mkdir -p "$results"
data="$(mktemp -d "${TMPDIR:-/tmp}/xp-cpu-arrays.XXXXXX")"
trap 'rm -rf "$data"' EXIT

# One thread count everywhere: xp (and the OpenBLAS it loads), numexpr, NumPy's BLAS.
export XP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"
export NUMEXPR_MAX_THREADS="$threads" NUMEXPR_NUM_THREADS="$threads"

echo "== xp ($threads threads)"
"$bin" --threads "$threads" --data "$data" --json "$data/xp.json" --min-ms "$min_ms" "${quick[@]}" |
  tee "$results/xp.txt"

echo "== NumPy, numexpr ($threads threads)"
set +e
"$python" "$root/bench/python/cpu_arrays.py" run --data "$data" --threads "$threads" --json "$data/py.json" \
  --min-ms "$min_ms" | tee "$results/python.txt"
status=${PIPESTATUS[0]}  # 1: a result differs from NumPy's (still merged)
set -e
[[ -s "$data/py.json" ]] || exit "$status"

matmul_args=()
matmul_bin="$(dirname "$bin")/xp_bench_cpu_matmul"
if [[ -x $matmul_bin ]]; then
  echo "== xp_bench_cpu_matmul ($threads threads)"
  matmul_quick=()
  [[ ${#quick[@]} -eq 0 ]] || matmul_quick=(--quick)
  "$matmul_bin" --threads "$threads" "${matmul_quick[@]}" | tee "$results/cpu_matmul.txt"
  matmul_args=(--cpu-matmul "$results/cpu_matmul.txt")
else
  matmul_args=(--cpu-matmul "$results/cpu_matmul.txt.absent")
  echo "== xp_bench_cpu_matmul not built: the matmul rows' baseline is xp_bench_cpu_arrays' own direct OpenBLAS call"
fi

echo "== merged"
"$python" "$root/bench/python/cpu_arrays.py" merge --xp "$data/xp.json" --py "$data/py.json" \
  --md "$results/cpu_arrays.md" --json "$results/cpu_arrays.json" "${matmul_args[@]}" >/dev/null
cat "$results/cpu_arrays.md"
exit "$status"
