#!/usr/bin/env bash
# PyCUDA for the PyCUDA row of `xp bench launch`, on a machine where it cannot be installed from the
# network: fetch its source package and pure dependencies somewhere with network access, carry the
# folder over, and build it there with the local nvcc into a folder of its own (nothing is installed
# into the system Python). Then: PYTHONPATH=TARGET xp bench launch
#
#   bench/python/build_pycuda.sh download DIR [PYTHON_VERSION]   # e.g. 3.12; needs PyPI
#   bench/python/build_pycuda.sh build DIR TARGET                # offline; needs nvcc and Python.h
set -euo pipefail

case "${1:-}" in
  download)
    dir="$2"
    pyver="${3:-$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')}"
    mkdir -p "$dir"
    url="$(python3 - <<'PY'
import json, urllib.request
d = json.load(urllib.request.urlopen("https://pypi.org/pypi/pycuda/json"))
print([u["url"] for u in d["urls"] if u["packagetype"] == "sdist"][0])
PY
)"
    (cd "$dir" && curl -fsSLO "$url")
    python3 -m pip download --quiet --dest "$dir" --only-binary=:all: --python-version "$pyver" \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
      pip pytools platformdirs typing-extensions mako markupsafe siphash24 setuptools wheel 'numpy>=2' packaging
    ls "$dir"
    ;;
  build)
    dir="$2"
    target="$3"
    command -v nvcc >/dev/null || export PATH="$PATH:/usr/local/cuda/bin"
    command -v nvcc >/dev/null || { echo "build_pycuda.sh: no nvcc on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
    CUDA_ROOT="$(dirname "$(dirname "$(command -v nvcc)")")"
    export CUDA_ROOT
    pip=(python3 -m pip)
    "${pip[@]}" --version >/dev/null 2>&1 || pip=(python3 "$(ls "$dir"/pip-*.whl | head -1)/pip")
    # The dependencies without NumPy (the system's stays in use), then PyCUDA itself, built in an
    # isolated environment from the carried setuptools, wheel and NumPy.
    "${pip[@]}" install --quiet --no-index --find-links "$dir" --target "$target" \
      pytools platformdirs mako markupsafe siphash24 typing-extensions
    "${pip[@]}" install --quiet --no-index --find-links "$dir" --no-deps --target "$target" "$(ls "$dir"/pycuda-*.tar.gz | head -1)"
    PYTHONPATH="$target" python3 -c 'import pycuda; print("PyCUDA", pycuda.VERSION_TEXT, "in '"$target"'")'
    ;;
  *)
    sed -n '2,10p' "$0" >&2
    exit 2
    ;;
esac
