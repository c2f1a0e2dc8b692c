#!/usr/bin/env bash
# Sets this machine up for xp, builds the release preset, runs `xp doctor`, then `xp bench launch`:
# on a GPU its launch-path and array rows, without one the CPU rows (xp on the CPU against NumPy
# and numexpr), saying why the GPU rows were skipped.
#
# On Debian 12 (root, or a user with sudo): installs the Debian packages that are missing, makes
# the Python virtual environment .venv in the repository, and, where no CUDA toolkit provides
# NVRTC, installs NVRTC's wheel (nvidia-cuda-nvrtc 13.x) into .venv, where xp's wheel search finds
# it through VIRTUAL_ENV. Works from any directory; running it again only redoes what is missing.
#
# scripts/test.sh sources this file for the setup functions (xp_* below) and runs its own steps.
set -euo pipefail

XP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
XP_VENV="$XP_ROOT/.venv"
XP_DEB_PACKAGES=(cmake ninja-build g++ clang clang-format libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libopenblas0 python3-venv python3-pip python3-dev)
XP_NVRTC_WHEEL='nvidia-cuda-nvrtc>=13,<14'
# The headers kernels include (cuda_fp16.h, CUB): with pip they come in these wheels, into the same
# nvidia/cu13/include folder beside NVRTC, where xp finds them.
XP_HEADER_WHEELS=('nvidia-cuda-runtime>=13,<14' 'nvidia-cuda-crt>=13,<14' 'nvidia-cuda-cccl>=13,<14')

xp_log() { printf '\n==> %s\n' "$*"; }

# apt-get only when dpkg says a package is missing; apt-get update only then too.
xp_install_packages() {
  if ! command -v dpkg >/dev/null 2>&1; then
    xp_log "not a Debian system (no dpkg): make sure these are installed: ${XP_DEB_PACKAGES[*]}"
    return 0
  fi
  local missing=() p
  for p in "${XP_DEB_PACKAGES[@]}"; do
    dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    xp_log "Debian packages: all ${#XP_DEB_PACKAGES[@]} present"
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "missing Debian packages: ${missing[*]}; run as root or install sudo" >&2
      return 1
    fi
    sudo=(sudo)
  fi
  xp_log "installing Debian packages: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
}

# .venv in the repository (Debian's pip refuses to install into the system Python). Remade when
# it is missing or broken (its Python moved or removed).
xp_make_venv() {
  if [ -x "$XP_VENV/bin/python" ] && "$XP_VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    xp_log "Python environment: $XP_VENV ($("$XP_VENV/bin/python" --version 2>&1))"
    return 0
  fi
  xp_log "creating the Python environment $XP_VENV"
  python3 -m venv --clear "$XP_VENV"
  "$XP_VENV/bin/python" -m pip --version >/dev/null
}

# Prints the NVRTC a CUDA toolkit or the OS loader provides; fails when there is none.
xp_system_nvrtc() {
  local root
  for root in "${CUDA_PATH:-}" "${CUDA_HOME:-}" /usr/local/cuda; do
    if [ -n "$root" ] && [ -e "$root/lib64/libnvrtc.so.13" ]; then
      echo "$root/lib64/libnvrtc.so.13"
      return 0
    fi
  done
  local ldconfig
  ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
  [ -x "$ldconfig" ] || return 1
  "$ldconfig" -p 2>/dev/null | awk '$1 ~ /^libnvrtc\.so\.[0-9]+$/ { print $NF; found = 1; exit } END { exit !found }'
}

# NVRTC 13 from its wheel into .venv; a no-op (no network) when a matching one is installed.
# The references tests compare against: NumPy 2 (Debian's NumPy 1.24 has the old promotion
# rules) and ml_dtypes 0.7 for bfloat16 (earlier versions promote bfloat16 differently). The Python
# package's build (nanobind, scikit-build-core: with nanobind in .venv the release preset builds
# the extension too) and its tests (pytest; hypothesis, ndindex and pytest-json-report for the
# Array API conformance suite).
XP_TEST_PY_PACKAGES=('numpy>=2,<3' 'ml_dtypes>=0.7' 'numexpr>=2.10' 'nanobind>=2,<4' 'scikit-build-core>=0.10'
  'pytest' 'hypothesis>=6.151' 'ndindex>=1.8' 'pytest-json-report')
xp_install_test_packages() {
  xp_log "test references: ${XP_TEST_PY_PACKAGES[*]} into $XP_VENV"
  "$XP_VENV/bin/python" -m pip install --disable-pip-version-check --quiet "${XP_TEST_PY_PACKAGES[@]}"
}

xp_install_nvrtc_wheel() {
  xp_log "NVRTC wheel: $XP_NVRTC_WHEEL into $XP_VENV"
  "$XP_VENV/bin/python" -m pip install --disable-pip-version-check --quiet "$XP_NVRTC_WHEEL" "${XP_HEADER_WHEELS[@]}"
  "$XP_VENV/bin/python" -m pip show nvidia-cuda-nvrtc 2>/dev/null | grep -E '^(Name|Version|Location):' | sed 's/^/    /'
}

xp_main() {
  cd "$XP_ROOT"
  xp_install_packages
  xp_make_venv
  xp_install_test_packages  # NumPy 2 and numexpr: the baselines of the benchmark's CPU rows
  local nvrtc
  if nvrtc="$(xp_system_nvrtc)"; then
    xp_log "NVRTC from the system: $nvrtc (no wheel needed)"
  else
    xp_install_nvrtc_wheel
  fi

  xp_log "configure and build (preset release, build/release)"
  cmake --preset release
  cmake --build --preset release

  export VIRTUAL_ENV="$XP_VENV"
  xp_log "build/release/tools/xp/xp doctor"
  local rc=0
  build/release/tools/xp/xp doctor || rc=$?
  # xp doctor exits 1 when something the user asked for (XP_DEVICE, XP_NVRTC...) is not there, and
  # 2 for a malformed variable; a machine without a GPU is not an error.
  echo "main.sh: built build/release; xp doctor exited $rc$([ "$rc" -eq 0 ] || echo ' (see its report above)')"
  [ "$rc" -le 1 ] || return "$rc"

  # The Python package: built and installed into .venv by pip (scikit-build-core drives CMake; its
  # build folder build/python-<tag> is kept, so a second run rebuilds only what changed).
  xp_log "pip install . into $XP_VENV (the Python package xp)"
  "$XP_VENV/bin/python" -m pip install --disable-pip-version-check --quiet --no-build-isolation .
  xp_log "the Python package at work"
  "$XP_VENV/bin/python" - <<'PY'
import xp
a = xp.asarray([1.0, 2.0, 3.0], dtype=xp.float32)
print(f"xp {xp.__version__} from {xp.__file__}")
print(f"default device {xp.default_device()}; CUDA {xp.cuda_status()['reason']}")
print(f"xp.sum(a * 2 + 1) = {float(xp.sum(a * 2 + 1))} on {a.device}")
d = xp.doctor()
print(f"xp.doctor(): verdict {d['verdict']['device']}, {len(d['problems'])} problem(s), exit code {d['exit_code']}")
PY

  # The Python rows run with .venv's Python (NumPy, numexpr); give another with --python to get the
  # GPU libraries' rows (CuPy, PyTorch...) where they are installed.
  xp_log "build/release/tools/xp/xp bench launch --python .venv/bin/python"
  local bench_rc=0
  build/release/tools/xp/xp bench launch --python "$XP_VENV/bin/python" || bench_rc=$?
  echo "main.sh: xp bench launch exited $bench_rc"
  [ "$bench_rc" -eq 0 ] || return "$bench_rc"
  return "$rc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  xp_main "$@"
fi
