#!/bin/sh
# From a release build of the commit that added this folder: xp against numpy.fft (NumPy 2 in the
# source tree's .venv), twice. (The KissFFT figures of README.md came from a one-off timing program,
# not kept: kiss_fft / kiss_fftr of Debian's libkissfft-dev, one thread, medians of 7.)
set -e
build=${1:-build/release}
"$build/bench/xp_bench_cpu_fft"
"$build/bench/xp_bench_cpu_fft"
