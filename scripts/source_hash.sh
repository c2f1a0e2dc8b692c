#!/usr/bin/env bash
# Prints the hash of xp's source files in a checkout (default: this one), the same that a build of
# it records and prints (`xp --version`, `xp doctor --json`, every `xp bench` output): compare the
# two to know which tree a result came from. The method is cmake/source_hash.cmake's.
set -euo pipefail
root="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$root"
{
  for top in CMakeLists.txt CMakePresets.json pyproject.toml; do
    if [ -f "$top" ]; then printf '%s\n' "$top"; fi
  done
  for dir in cmake include src tools bench python; do
    if [ -d "$dir" ]; then
      find "$dir" \( -type f -o -type l \) ! -path 'bench/results/*' ! -path 'python/tests/*' ! -path '*/__pycache__/*' -print
    fi
  done
} | LC_ALL=C sort | while IFS= read -r f; do
  printf '%s\n%s\n' "$f" "$(sha256sum <"$f" | cut -c1-64)"
done | sha256sum | cut -c1-64
