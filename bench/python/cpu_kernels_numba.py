"""One CUDA kernel run without a GPU: xp's RawKernel on the CPU device (the kernel's CUDA C++
compiled by the host compiler) against Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1, the same
vector add written for numba.cuda), in one run, on the same inputs; the outputs are compared bit
for bit and the ratio printed.

    pip install numba   # the simulator is part of Numba; no GPU or CUDA is needed
    PYTHONPATH=build/release/python python bench/python/cpu_kernels_numba.py [log2n]

Times: medians of 5 calls each after one warm call (the simulator's are seconds long, so the size
is small: 2^12 by default). xp's call is synchronous on the CPU.
"""
import os
import statistics
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
import numba  # noqa: E402
from numba import cuda  # noqa: E402

import xp  # noqa: E402

SOURCE = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"""


@cuda.jit
def vadd(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


def median_time(f, reps=5):
    f()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return statistics.median(t), min(t), max(t)


def main():
    log2n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    n = 1 << log2n
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, n).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)
    grid, block = (n + 255) // 256, 256
    print(f"xp {xp.__version__}, numba {numba.__version__} (CUDA simulator), numpy {np.__version__}; "
          f"vector add of 2^{log2n} float32, grid {grid} x block {block}")

    k = xp.RawKernel(SOURCE, "vadd")
    xa, xb = xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")
    xc = xp.zeros(n, dtype=xp.float32, device="cpu")
    t_xp = median_time(lambda: k((grid,), (block,), (xa, xb, xc, np.int32(n))))

    c = np.zeros(n, np.float32)
    t_nb = median_time(lambda: vadd[grid, block](a, b, c, n))

    same = np.array_equal(xp.to_cpu(xc).view(np.uint32), c.view(np.uint32))
    print(f"outputs {'identical bit for bit' if same else 'DIFFER'}")
    print(f"xp RawKernel on the CPU      {t_xp[0] * 1e3:12.3f} ms [{t_xp[1] * 1e3:.3f}-{t_xp[2] * 1e3:.3f}]")
    print(f"Numba CUDA simulator         {t_nb[0] * 1e3:12.3f} ms [{t_nb[1] * 1e3:.3f}-{t_nb[2] * 1e3:.3f}]")
    print(f"speed ratio xp / simulator   {t_nb[0] / t_xp[0]:12.0f}x")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
