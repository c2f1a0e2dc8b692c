#!/bin/sh
# From a release build of the commit that added this folder: xp against numpy.fft (NumPy 2 in the
# source tree's .venv), twice, then KissFFT (apt-get install libkissfft-dev) on the same lengths.
set -e
build=${1:-build/release}
"$build/bench/xp_bench_cpu_fft"
"$build/bench/xp_bench_cpu_fft"
cc -O3 -march=native "$(dirname "$0")/kissfft_bench.c" -o /tmp/kissfft_bench -lkissfft-float
for n in 1048576 1000 10007; do /tmp/kissfft_bench $n; done
