#!/usr/bin/env bash
# The reduction sweep on a GPU, in one run: xp, then CuPy, then PyTorch (always in that order, each
# in a process of its own) run the same case list, then bench/python/sweep_ratio.py joins them.
#
#   bench/reduction_sweep.sh OUTDIR [BUILD] [--python PYTHON] [--only ERE] [--quick] [--cpu]
#
# BUILD: a release build folder (default build/release) with bench/xp_bench_gpu_reductions and
# tools/xp/xp (XP_BENCH_NVCC may be off). PYTHON: default .venv/bin/python, else python3; it needs
# NumPy, and CuPy and PyTorch for their columns (a library it cannot import is left out, and said so).
# --only ERE keeps the cases whose line matches the extended regular expression (grep -E); --quick
# takes the list of --sweep-cases --quick (sizes / 1024: a smoke test). --cpu: a test of this script
# without a GPU: xp on its CPU backend, and NumPy on the host in the CuPy column (PyTorch not run).
# Writes OUTDIR/cases.txt, xp.txt, cupy.txt, torch.txt (each side's output, stderr in *.err),
# machine.txt (date, GPU, driver, versions, the source's commit, each step's seconds and exit
# status), nvidia-smi.txt (nvidia-smi -q) and report.md (sweep_ratio.py's table and summary).
# Exit status: sweep_ratio.py's (1 when a check failed or a case is missing), 2 for bad arguments or
# a missing program.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '5,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 1 && $1 != -* ]] || usage
out="$1"
shift
build="$root/build/release"
python=""
only=""
quick=()
cpu=0
if [[ $# -gt 0 && $1 != -* ]]; then
  build="$1"
  shift
fi
while [[ $# -gt 0 ]]; do
  case "$1" in
    --python) [[ $# -ge 2 ]] || usage; python="$2"; shift 2 ;;
    --only) [[ $# -ge 2 ]] || usage; only="$2"; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    --cpu) cpu=1; shift ;;
    *) usage ;;
  esac
done
if [[ -z $python ]]; then
  if [[ -x "$root/.venv/bin/python" ]]; then python="$root/.venv/bin/python"; else python=python3; fi
fi
bin="$build/bench/xp_bench_gpu_reductions"
cli="$build/tools/xp/xp"
for program in "$bin" "$cli"; do
  if [[ ! -x $program ]]; then
    echo "no $program (build the release preset's xp_bench_gpu_reductions and xp_cli, or pass BUILD)" >&2
    exit 2
  fi
done
"$python" -c 'import numpy' 2>/dev/null || { echo "$python has no NumPy" >&2; exit 2; }
mkdir -p "$out" || exit 2

# The machine and the versions.
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n) $(uname -r)"
  echo "source: $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with changes)')"
  echo "build: $build"
  echo "xp: $("$cli" --version 2>&1 | head -1)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 |
    sed 's/^/gpu: /'
  "$python" - <<'EOF' 2>&1
import importlib, platform
print("python:", platform.python_version())
for name in ("numpy", "cupy", "torch"):
    try:
        module = importlib.import_module(name)
        extra = ""
        if name == "torch":
            extra = f" (CUDA {module.version.cuda})"
        elif name == "cupy":
            extra = f" (CUDA runtime {module.cuda.runtime.runtimeGetVersion()})"
        print(f"{name}: {module.__version__}{extra}")
    except Exception as e:  # noqa: BLE001 - any failure to import means the column is left out
        print(f"{name}: not available ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
EOF
} >"$out/machine.txt"
nvidia-smi -q >"$out/nvidia-smi.txt" 2>&1
cat "$out/machine.txt"

# The one case list that every library runs.
"$bin" --sweep-cases "${quick[@]}" >"$out/cases.txt" || { echo "xp_bench_gpu_reductions --sweep-cases failed" >&2; exit 2; }
if [[ -n $only ]]; then
  grep -E -- "$only" "$out/cases.txt" | grep -v '^#' >"$out/cases.only" || true
  { echo "# only the cases that match '$only'"; cat "$out/cases.only"; } >"$out/cases.txt"
  rm -f "$out/cases.only"
fi
echo "cases: $(grep -vc '^#' "$out/cases.txt")" | tee -a "$out/machine.txt"

# step NAME COMMAND...: runs it with its output in OUTDIR/NAME.txt, and notes its seconds and status.
step() {
  local name="$1"
  shift
  local start=$SECONDS
  echo "== $name"
  "$@" >"$out/$name.txt" 2>"$out/$name.err"
  local status=$?
  echo "$name: exit $status in $((SECONDS - start)) s" | tee -a "$out/machine.txt"
  grep -E '^# .* cases in ' "$out/$name.txt" || tail -3 "$out/$name.err"
}

ratio_args=(--xp "$out/xp.txt" --cases "$out/cases.txt")
if [[ $cpu == 1 ]]; then
  echo "cpu: a test run: xp on the CPU, NumPy on the host in the CuPy column" | tee -a "$out/machine.txt"
  step xp env XP_DEVICE=cpu "$bin" --sweep --cpu --cases "$out/cases.txt"
  step cupy "$python" "$root/bench/python/gpu_reductions.py" --sweep "$out/cases.txt" --numpy
  ratio_args+=(--cupy "$out/cupy.txt")
else
  step xp "$bin" --sweep --cases "$out/cases.txt"
fi
if [[ $cpu == 1 ]]; then
  :
elif "$python" -c 'import cupy' 2>/dev/null; then
  step cupy "$python" "$root/bench/python/gpu_reductions.py" --sweep "$out/cases.txt"
  ratio_args+=(--cupy "$out/cupy.txt")
else
  echo "cupy: not run ($python cannot import cupy)" | tee -a "$out/machine.txt"
fi
if [[ $cpu == 1 ]]; then
  :
elif "$python" -c 'import torch' 2>/dev/null; then
  step torch "$python" "$root/bench/python/gpu_reductions.py" --sweep "$out/cases.txt" --torch
  ratio_args+=(--torch "$out/torch.txt")
else
  echo "torch: not run ($python cannot import torch)" | tee -a "$out/machine.txt"
fi

"$python" "$root/bench/python/sweep_ratio.py" "${ratio_args[@]}" >"$out/report.md"
status=$?
sed -n '/^worst ratio/,$p' "$out/report.md" | head -40
echo "report: $out/report.md (exit $status)"
exit "$status"
