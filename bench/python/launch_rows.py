#!/usr/bin/env python3
"""The Python rows of `xp bench launch` and `xp bench sweep` (tools/xp/bench_launch.cpp runs this).

  launch_rows.py list
      One JSON line: every row this file knows, with its device ("gpu" or "cpu") and operation.

  launch_rows.py run --row ID --data DIR --n N [--sizes N1,N2,...] --kernel-file FILE
                     [--cache-root DIR] [--threads T] [--host-n 1024] [--host-launches 10000]
      Runs one row in this process and prints one JSON line with the same fields as the C++ rows:
      build_ms, first_ms, total_ms, steady_ms (mean of 10 launches between two events on the
      launching stream, after 3 warm-ups; the host clock for CPU rows), gbps, host_us (10000
      back-to-back calls at n = 1024, then one synchronize), bits_ok / first_mismatch / mismatch.
      With --sizes, a sweep: steady_ms, gbps and the bit check at each size ("sweep" list), and a
      line "#progress K/M" after each size.
      The sum and matmul rows (op "sum", "matmul-f32", "matmul-f16", "matmul-tf32") have one size
      (N: elements, or the matrices' size) and are checked within a bound instead: within_bound / mismatch,
      rel_error (sum) or error_of_bound and the sampled entries' values (matmul), tflops (matmul),
      compute_type; their host_us is timed at n = 1024 (sum) or on 32 x 32 matrices (matmul).

The inputs and the references come from DIR, written by the parent from the same seed and the same
CPU code as the C++ rows (tools/xp/bench_launch.hpp): a.f32, b.f32, c.f32 (float32, little endian),
add.f32 = a + b, fma_separate.f32 = a * b + c with two roundings, fma_fused.f32 = fmaf(a, b, c).
The kernel rows (CuPy RawKernel, cuda.core, PyCUDA) compile the text between the snippet markers of
the .cu file, byte for byte; Numba cannot take CUDA C++, so its row is the same loop in Python.
Every output is filled with NaN (all bits set) before the row runs and compared bit for bit after.
The sum rows read sum.f32 (n float32) and sum.json (the float64 reference and the bound); the
matmul rows OP_a.f32 and OP_b.f32 (m x m float32, small integers, converted to float16 exactly
for matmul-f16) and OP.json (the sampled entries [i, j, reference, bound]): check_within() holds
each result to the bound the parent computed (tools/xp/bench_launch.hpp says why each bound). The
TF32 rows (matmul-tf32: float32 with TF32 permitted) read the float32 rows' inputs and have a
matmul-tf32.json of their own.
A row that cannot run says why (the import error's text) in "skipped".
"""

import argparse
import importlib
import json
import math
import os
import platform
import sys
import time
import traceback

BEGIN = "// [xp-snippet vector_add begin]"
END = "// [xp-snippet vector_add end]"
BLOCK = 256
WARMUPS = 3
TIMED = 10
HOST_WARMUPS = 100

# id, label, device, operation
ROWS = [
    ("cupy-rawkernel", "CuPy RawKernel", "gpu", "add"),
    ("cupy-add", "CuPy a + b", "gpu", "add"),
    ("cupy-add-out", "CuPy add(out=)", "gpu", "add"),
    ("cuda-core", "cuda.core Program + launch", "gpu", "add"),
    ("numba", "Numba @cuda.jit (Python kernel)", "gpu", "add"),
    ("pycuda", "PyCUDA SourceModule (nvcc)", "gpu", "add"),
    ("torch-add", "PyTorch a + b", "gpu", "add"),
    ("torch-add-out", "PyTorch add(out=)", "gpu", "add"),
    ("torch-fma", "PyTorch eager a*b+c", "gpu", "fma"),
    ("torch-compile-fma", "torch.compile a*b+c", "gpu", "fma"),
    ("numpy-add", "NumPy a + b", "cpu", "add"),
    ("numpy-add-out", "NumPy add(out=)", "cpu", "add"),
    ("numpy-fma", "NumPy a*b+c", "cpu", "fma"),
    ("numexpr-add-out", "numexpr a+b (out=)", "cpu", "add"),
    ("numexpr-fma", "numexpr a*b+c (out=)", "cpu", "fma"),
    ("cupy-sum", "CuPy sum(a)", "gpu", "sum"),
    ("torch-sum", "PyTorch sum(a)", "gpu", "sum"),
    ("cupy-matmul-f32", "CuPy A @ B float32", "gpu", "matmul-f32"),
    ("torch-matmul-f32", "PyTorch A @ B float32", "gpu", "matmul-f32"),
    ("cupy-matmul-f16", "CuPy A @ B float16", "gpu", "matmul-f16"),
    ("torch-matmul-f16", "PyTorch A @ B float16", "gpu", "matmul-f16"),
    ("cupy-matmul-tf32", "CuPy A @ B float32, CUPY_TF32=1", "gpu", "matmul-tf32"),
    ("torch-matmul-tf32", "PyTorch A @ B float32, allow_tf32", "gpu", "matmul-tf32"),
    ("numpy-sum", "NumPy sum(a)", "cpu", "sum"),
    ("xp-py-add", "xp a + b", "cpu", "add"),
    ("xp-py-add-out", "xp add(out=)", "cpu", "add"),
    ("xp-py-fma", "xp a*b+c", "cpu", "fma"),
    ("xp-py-rawkernel", "xp.RawKernel", "gpu", "add"),
    ("xp-py-gpu-add", "xp c = a + b", "gpu", "add"),
    ("xp-py-gpu-add-out", "xp add(out=)", "gpu", "add"),
    ("xp-py-gpu-fma", "xp a*b+c", "gpu", "fma"),
    ("numpy-matmul-f32", "NumPy A @ B float32", "cpu", "matmul-f32"),
]
BYTES = {"add": 12, "fma": 16, "sum": 4}  # bytes moved per element; matmul rows report TFLOP/s
CHECKED = ("sum", "matmul-f32", "matmul-f16", "matmul-tf32")  # one size, checked within a bound
HOST_MATMUL_N = 32  # the matmul rows' host-cost loop: 32 x 32 matrices (1024 elements)
CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16  # cuBLAS's value (cublas_api.h)


class Skip(Exception):
    """The row cannot run here (a module does not import, no GPU...)."""


def need(module):
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or anything a broken install raises while importing
        raise Skip(f"{module} does not import: {type(e).__name__}: {e}".strip())


def dist_version(name):
    try:
        from importlib import metadata
        return metadata.version(name)
    except Exception:
        return None


def read_snippet(path):
    with open(path, "rb") as f:
        text = f.read().decode()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0 or e < b:
        raise RuntimeError(f"{path} has no '{BEGIN}' ... '{END}' region")
    return text[b + len(BEGIN):e]


# ---- Rows -------------------------------------------------------------------------------------------
# Each row: setup(data) loads the inputs (not timed); prepare(n) makes what a call at size n needs
# (views, launch arguments; not timed); fill_nan(n); build() -> ms or None; call(n); sync();
# start()/stop() -> ms between them on the launching stream; result(n) -> a host float32 array.

class Row:
    note = ""
    build_note = ""
    build_in_first_call = False
    compute_type = None

    def __init__(self, op):
        self.op = op
        self.versions = {}

    def build(self):
        return None

    def prepare(self, n):
        pass


class HostTimer:
    def start(self):
        self.t0 = time.perf_counter()

    def stop(self):
        return (time.perf_counter() - self.t0) * 1e3


# -- CuPy --
class CupyRow(Row):
    def __init__(self, op, kind, snippet):
        super().__init__(op)
        self.cp = need("cupy")
        self.versions["cupy"] = self.cp.__version__
        self.kind, self.snippet = kind, snippet

    def setup(self, d):
        cp = self.cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise Skip("CuPy sees no GPU")
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.stream.use()
        self.a, self.b = cp.asarray(d["a"]), cp.asarray(d["b"])
        self.c = cp.empty_like(self.a)
        self.e0, self.e1 = cp.cuda.Event(), cp.cuda.Event()
        self.views = {}
        self.last = None
        if self.kind == "rawkernel":
            self.build_note = "RawKernel(...).compile(): NVRTC + module load"

    def build(self):
        if self.kind != "rawkernel":
            return None
        t0 = time.perf_counter()
        self.kernel = self.cp.RawKernel(self.snippet, "vector_add")
        self.kernel.compile()
        return (time.perf_counter() - t0) * 1e3

    def prepare(self, n):
        import numpy as np
        self.views[n] = (self.a[:n], self.b[:n], self.c[:n], ((n + BLOCK - 1) // BLOCK,), np.int32(n))

    def fill_nan(self, n):
        self.c[:n].view(self.cp.uint32).fill(0xFFFFFFFF)
        self.last = None

    def call(self, n):
        a, b, c, grid, nn = self.views[n]
        if self.kind == "rawkernel":
            self.kernel(grid, (BLOCK,), (a, b, c, nn))
        elif self.kind == "add-out":
            self.cp.add(a, b, out=c)
        else:
            self.last = a + b

    def sync(self):
        self.stream.synchronize()

    def start(self):
        self.e0.record(self.stream)

    def stop(self):
        self.e1.record(self.stream)
        self.e1.synchronize()
        return self.cp.cuda.get_elapsed_time(self.e0, self.e1)

    def result(self, n):
        src = self.last if self.kind == "add" else self.c[:n]
        return self.cp.asnumpy(src)


# -- cuda.core --
class CudaCoreRow(Row):
    build_note = "Program.compile('cubin') + get_kernel"

    def __init__(self, op, snippet):
        super().__init__(op)
        self.core = need("cuda.core")
        self.drv = need("cuda.bindings.driver")
        self.versions["cuda.core"] = getattr(self.core, "__version__", dist_version("cuda-core"))
        self.versions["cuda.bindings"] = dist_version("cuda-bindings")
        self.snippet = snippet

    def check(self, r, what):
        err = r[0] if isinstance(r, tuple) else r
        if int(err) != 0:
            raise RuntimeError(f"{what} failed: {err}")
        return r

    def setup(self, d):
        core = self.core
        self.dev = core.Device(0)
        self.dev.set_current()
        self.stream = self.dev.create_stream()
        self.nbytes = d["a"].nbytes
        self.bufs = [self.dev.allocate(self.nbytes, stream=self.stream) for _ in range(3)]
        self.stream.sync()
        for buf, host in zip(self.bufs[:2], (d["a"], d["b"])):
            self.check(self.drv.cuMemcpyHtoD(int(buf.handle), host.ctypes.data, host.nbytes), "cuMemcpyHtoD")
        try:
            self.opts = core.EventOptions(timing_enabled=True)  # cuda.core 0.3 and later
        except TypeError:
            self.opts = core.EventOptions(enable_timing=True)
        self.cfg = {}

    def build(self):
        core = self.core
        t0 = time.perf_counter()
        prog = core.Program(self.snippet, "c++", core.ProgramOptions(arch=f"sm_{self.dev.arch}"))
        self.kernel = prog.compile("cubin").get_kernel("vector_add")
        return (time.perf_counter() - t0) * 1e3

    def prepare(self, n):
        import numpy as np
        self.cfg[n] = (self.core.LaunchConfig(grid=(n + BLOCK - 1) // BLOCK, block=BLOCK), np.int32(n))

    def fill_nan(self, n):
        self.check(self.drv.cuMemsetD8Async(int(self.bufs[2].handle), 0xFF, 4 * n, self.stream.handle), "cuMemsetD8Async")
        self.stream.sync()

    def call(self, n):
        cfg, nn = self.cfg[n]
        self.core.launch(self.stream, cfg, self.kernel, self.bufs[0], self.bufs[1], self.bufs[2], nn)

    def sync(self):
        self.stream.sync()

    def start(self):
        self.e0 = self.stream.record(options=self.opts)

    def stop(self):
        e1 = self.stream.record(options=self.opts)
        e1.sync()
        return e1 - self.e0

    def result(self, n):
        import numpy as np
        out = np.empty(n, np.float32)
        self.stream.sync()
        self.check(self.drv.cuMemcpyDtoH(out.ctypes.data, int(self.bufs[2].handle), 4 * n), "cuMemcpyDtoH")
        return out


# -- Numba --
class NumbaRow(Row):
    build_note = "cuda.jit with an explicit signature: compiled eagerly"

    def __init__(self, op):
        super().__init__(op)
        import numpy as np
        if not hasattr(np, "row_stack"):
            # numba-cuda 0.30 still calls np.row_stack, which NumPy 2 removed (np.vstack is the same).
            np.row_stack = np.vstack
            self.note = "np.row_stack = np.vstack set before importing numba-cuda (NumPy 2 removed it)"
        need("numba")
        self.cuda = need("numba.cuda")
        import warnings
        warnings.filterwarnings("ignore", message=".*under-utilization.*")  # the n = 1024 host-cost loop
        self.versions["numba"] = dist_version("numba")
        self.versions["numba-cuda"] = dist_version("numba-cuda")

    def setup(self, d):
        import numpy as np
        cuda = self.cuda
        if not cuda.is_available():
            raise Skip("numba.cuda.is_available() is False")
        self.stream = cuda.stream()
        self.a, self.b = cuda.to_device(d["a"], stream=self.stream), cuda.to_device(d["b"], stream=self.stream)
        self.c = cuda.device_array_like(d["a"], stream=self.stream)
        self.nan = np.full(d["a"].shape, 0xFFFFFFFF, np.uint32).view(np.float32)
        self.stream.synchronize()
        self.e0, self.e1 = cuda.event(timing=True), cuda.event(timing=True)
        self.args = {}

    def build(self):
        cuda = self.cuda

        def vector_add(a, b, c, n):
            i = cuda.grid(1)
            if i < n:
                c[i] = a[i] + b[i]

        t0 = time.perf_counter()
        self.kernel = cuda.jit("void(float32[::1], float32[::1], float32[::1], int32)")(vector_add)
        return (time.perf_counter() - t0) * 1e3

    def prepare(self, n):
        import numpy as np
        self.args[n] = (self.kernel[(n + BLOCK - 1) // BLOCK, BLOCK, self.stream], np.int32(n))

    def fill_nan(self, n):
        self.c.copy_to_device(self.nan, stream=self.stream)
        self.stream.synchronize()

    def call(self, n):
        k, nn = self.args[n]
        k(self.a, self.b, self.c, nn)

    def sync(self):
        self.stream.synchronize()

    def start(self):
        self.e0.record(self.stream)

    def stop(self):
        self.e1.record(self.stream)
        self.e1.synchronize()
        return self.cuda.event_elapsed_time(self.e0, self.e1)

    def result(self, n):
        out = self.c.copy_to_host(stream=self.stream)
        self.stream.synchronize()  # copy_to_host with a stream is asynchronous
        return out[:n]


# -- PyCUDA --
class PycudaRow(Row):
    build_note = "SourceModule (nvcc) + get_function"

    def __init__(self, op, snippet, cache_root):
        super().__init__(op)
        pycuda = need("pycuda")
        self.drv = need("pycuda.driver")
        need("pycuda.autoprimaryctx")  # the primary context, shared with the other libraries
        self.compiler = need("pycuda.compiler")
        self.versions["pycuda"] = getattr(pycuda, "VERSION_TEXT", dist_version("pycuda"))
        self.snippet = snippet
        self.cache_dir = os.path.join(cache_root, "pycuda") if cache_root else None

    def setup(self, d):
        drv = self.drv
        self.stream = drv.Stream()
        self.nbytes = d["a"].nbytes
        self.a, self.b, self.c = drv.mem_alloc(self.nbytes), drv.mem_alloc(self.nbytes), drv.mem_alloc(self.nbytes)
        drv.memcpy_htod(self.a, d["a"])
        drv.memcpy_htod(self.b, d["b"])
        self.e0, self.e1 = drv.Event(), drv.Event()
        self.grid = {}

    def build(self):
        t0 = time.perf_counter()
        kw = {"no_extern_c": True}
        if self.cache_dir:
            os.makedirs(self.cache_dir, exist_ok=True)
            kw["cache_dir"] = self.cache_dir
        mod = self.compiler.SourceModule(self.snippet, **kw)
        self.kernel = mod.get_function("vector_add")
        self.kernel.prepare("PPPi")
        return (time.perf_counter() - t0) * 1e3

    def prepare(self, n):
        self.grid[n] = ((n + BLOCK - 1) // BLOCK, 1)

    def fill_nan(self, n):
        self.drv.memset_d8(self.c, 0xFF, 4 * n)
        self.drv.Context.synchronize()

    def call(self, n):
        self.kernel.prepared_async_call(self.grid[n], (BLOCK, 1, 1), self.stream, self.a, self.b, self.c, n)

    def sync(self):
        self.stream.synchronize()

    def start(self):
        self.e0.record(self.stream)

    def stop(self):
        self.e1.record(self.stream)
        self.e1.synchronize()
        return self.e1.time_since(self.e0)

    def result(self, n):
        import numpy as np
        out = np.empty(self.nbytes // 4, np.float32)
        self.stream.synchronize()
        self.drv.memcpy_dtoh(out, self.c)
        return out[:n]


# -- PyTorch --
class TorchRow(Row):
    def __init__(self, op, kind):
        super().__init__(op)
        self.torch = need("torch")
        self.versions["torch"] = self.torch.__version__
        self.versions["torch.cuda"] = self.torch.version.cuda
        self.kind = kind
        if kind == "compile":
            self.versions["triton"] = dist_version("triton")
            self.build_note = "torch.compile(dynamic=False): compiled inside the first call"

    def setup(self, d):
        torch = self.torch
        if not torch.cuda.is_available():
            raise Skip("torch.cuda.is_available() is False")
        dev = torch.device("cuda", 0)
        self.a, self.b = torch.from_numpy(d["a"]).to(dev), torch.from_numpy(d["b"]).to(dev)
        if self.op == "fma":
            self.cc = torch.from_numpy(d["c"]).to(dev)
        self.c = torch.empty_like(self.a)
        torch.cuda.synchronize()
        self.e0 = torch.cuda.Event(enable_timing=True)
        self.e1 = torch.cuda.Event(enable_timing=True)
        self.views = {}
        self.last = None
        if self.kind == "compile":
            # One compiled kernel per size (dynamic=False): a sweep's 19 sizes pass the default
            # recompile limit (8), past which Dynamo would run the rest eagerly without a word.
            cfg = torch._dynamo.config
            for name in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                         "accumulated_cache_size_limit"):
                if hasattr(cfg, name):
                    setattr(cfg, name, 1024)
            self.fn = torch.compile(lambda x, y, z: x * y + z, dynamic=False)

    def prepare(self, n):
        self.views[n] = (self.a[:n], self.b[:n], self.cc[:n] if self.op == "fma" else None, self.c[:n])

    def fill_nan(self, n):
        self.c[:n].view(self.torch.int32).fill_(-1)
        self.last = None

    def call(self, n):
        a, b, c3, out = self.views[n]
        if self.kind == "add-out":
            self.torch.add(a, b, out=out)
        elif self.kind == "add":
            self.last = a + b
        elif self.kind == "fma":
            self.last = a * b + c3
        else:
            self.last = self.fn(a, b, c3)

    def sync(self):
        self.torch.cuda.synchronize()

    def start(self):
        self.e0.record()

    def stop(self):
        self.e1.record()
        self.e1.synchronize()
        return self.e0.elapsed_time(self.e1)

    def result(self, n):
        src = self.c[:n] if self.kind == "add-out" else self.last
        return src.cpu().numpy()


# -- NumPy and numexpr (CPU rows) --
class NumpyRow(HostTimer, Row):
    def __init__(self, op, kind, threads):
        super().__init__(op)
        self.np = need("numpy")
        self.kind = kind
        if kind.startswith("numexpr"):
            self.ne = need("numexpr")
            self.versions["numexpr"] = self.ne.__version__
            self.ne.set_num_threads(max(1, threads))
            self.note = f"numexpr threads: {self.ne.get_num_threads()}"
        else:
            self.note = "NumPy's elementwise loops run on one thread"

    def setup(self, d):
        np = self.np
        self.a, self.b, self.cc = d["a"], d["b"], d.get("c")
        self.c = np.empty_like(self.a)
        self.views = {}
        self.last = None

    def prepare(self, n):
        self.views[n] = (self.a[:n], self.b[:n], None if self.cc is None else self.cc[:n], self.c[:n])

    def fill_nan(self, n):
        self.c[:n].view(self.np.uint32).fill(0xFFFFFFFF)
        self.last = None

    def call(self, n):
        a, b, c3, out = self.views[n]
        k = self.kind
        if k == "add":
            self.last = a + b
        elif k == "add-out":
            self.np.add(a, b, out=out)
        elif k == "fma":
            self.last = a * b + c3
        elif k == "numexpr-add-out":
            self.ne.evaluate("a + b", local_dict={"a": a, "b": b}, out=out)
        else:
            self.ne.evaluate("a * b + c", local_dict={"a": a, "b": b, "c": c3}, out=out)

    def sync(self):
        pass

    def result(self, n):
        return self.last if self.kind in ("add", "fma") else self.c[:n]


# -- xp's Python package on the CPU: the same arrays as NumPy's rows, shared without a copy --
class XpPyRow(HostTimer, Row):
    def __init__(self, op, kind, threads):
        super().__init__(op)
        self.xp = need("xp")
        self.np = need("numpy")
        self.versions["xp"] = self.xp.__version__
        self.kind = kind
        if threads:
            self.xp.set_num_threads(max(1, threads))
        self.note = "each call evaluates its result (xp is lazy: a result nobody reads would cost nothing)"

    def setup(self, d):
        xp, np = self.xp, self.np
        self.na, self.nb, self.nc = d["a"], d["b"], d.get("c")
        self.nout = np.empty_like(self.na)
        self.views = {}
        self.last = None

    def prepare(self, n):
        xp = self.xp
        cpu = "cpu"
        self.views[n] = (xp.asarray(self.na[:n], device=cpu), xp.asarray(self.nb[:n], device=cpu),
                         None if self.nc is None else xp.asarray(self.nc[:n], device=cpu),
                         xp.asarray(self.nout[:n], device=cpu))

    def fill_nan(self, n):
        self.nout[:n].view(self.np.uint32).fill(0xFFFFFFFF)
        self.last = None

    def call(self, n):
        a, b, c3, out = self.views[n]
        if self.kind == "add":
            self.last = (a + b).eval()
        elif self.kind == "add-out":
            self.xp.add(a, b, out=out).eval()
        else:
            self.last = (a * b + c3).eval()

    def sync(self):
        pass

    def result(self, n):
        return self.nout[:n] if self.kind == "add-out" else self.xp.to_cpu(self.last)


# -- xp's Python package on cuda:0: the inputs uploaded once, work on xp's stream of the device --
class XpPyGpuRow(Row):
    def __init__(self, op, kind, snippet):
        super().__init__(op)
        self.xp = need("xp")
        self.np = need("numpy")
        self.versions["xp"] = self.xp.__version__
        self.kind, self.snippet = kind, snippet
        if kind == "rawkernel":
            self.build_note = "RawKernel(...).compile(device): NVRTC (or xp's disk cache) + module load"
        else:
            self.note = "each call evaluates its result (xp is lazy: a result nobody reads would cost nothing)"

    def setup(self, d):
        xp, np = self.xp, self.np
        if not xp.is_cuda_available():
            raise Skip(f"xp sees no GPU: {xp.cuda_status()['reason']}")
        self.dev = "cuda:0"
        self.a, self.b = xp.asarray(d["a"], device=self.dev), xp.asarray(d["b"], device=self.dev)
        self.cc = xp.asarray(d["c"], device=self.dev) if "c" in d else None
        self.c = xp.empty(d["a"].shape, dtype=xp.float32, device=self.dev)
        # All bits set, as float32: a NaN the copy into the output keeps bit for bit.
        self.nan = xp.asarray(np.full(d["a"].shape, 0xFFFFFFFF, np.uint32).view(np.float32), device=self.dev)
        self.stream = xp.Stream.default_for(self.dev)
        self.e0, self.e1 = xp.Event(self.dev), xp.Event(self.dev)
        self.stream.synchronize()
        self.views = {}
        self.last = None

    def build(self):
        if self.kind != "rawkernel":
            return None
        t0 = time.perf_counter()
        self.kernel = self.xp.RawKernel(self.snippet, "vector_add")
        self.kernel.compile(self.dev)
        return (time.perf_counter() - t0) * 1e3

    def prepare(self, n):
        self.views[n] = (self.a[:n], self.b[:n], None if self.cc is None else self.cc[:n], self.c[:n],
                         (n + BLOCK - 1) // BLOCK, self.np.int32(n))

    def fill_nan(self, n):
        self.c[:n] = self.nan[:n]
        self.stream.synchronize()
        self.last = None

    def call(self, n):
        a, b, c3, out, grid, nn = self.views[n]
        if self.kind == "rawkernel":
            self.kernel(grid, BLOCK, (a, b, out, nn), stream=self.stream)
        elif self.kind == "add":
            self.last = (a + b).eval()
        elif self.kind == "add-out":
            self.xp.add(a, b, out=out).eval()
        else:
            self.last = (a * b + c3).eval()

    def sync(self):
        self.stream.synchronize()

    def start(self):
        self.e0.record(self.stream)

    def stop(self):
        self.e1.record(self.stream)
        self.e1.synchronize()
        return self.xp.Event.elapsed_ms(self.e0, self.e1)

    def result(self, n):
        src = self.last if self.kind in ("add", "fma") else self.c[:n]
        return self.xp.to_cpu(src)


# -- sum and matmul (checked within a bound) --
# Each row: setup(d) uploads the inputs and makes the small ones of the host-cost loop (not timed);
# call() runs the full-size operation, keeping its result; call_small() the small one; values(i, j)
# -> the result's value (sum) or its entries at the sampled (i, j) (matmul), read back as float64.

def is_matmul(op):
    return op in ("matmul-f32", "matmul-f16", "matmul-tf32")


def cupy_compute_type(cp, dtype):
    """The cuBLAS compute type CuPy's matmul uses for dtype, from CuPy's own setting: for float16 and
    float32 outputs cupy/_core/_routines_linalg.pyx (tensordot_core_v11) maps COMPUTE_TYPE_PEDANTIC to
    CUBLAS_COMPUTE_32F_PEDANTIC, COMPUTE_TYPE_TF32 (CUPY_TF32=1) to CUBLAS_COMPUTE_32F_FAST_TF32 for
    float32, and every other setting to CUBLAS_COMPUTE_32F."""
    try:
        from cupy._core import _routines_linalg as rl
        setting = rl.compute_type_to_str(rl.get_compute_type(dtype))
    except Exception as e:
        return "unknown", f"CuPy's compute type could not be read: {type(e).__name__}: {e}"
    if setting == "COMPUTE_TYPE_PEDANTIC":
        cublas = "CUBLAS_COMPUTE_32F_PEDANTIC"
    elif setting == "COMPUTE_TYPE_TF32" and cp.dtype(dtype) == cp.float32:
        cublas = "CUBLAS_COMPUTE_32F_FAST_TF32"
    else:
        cublas = "CUBLAS_COMPUTE_32F"
    return cublas, f"CuPy's compute type {setting} -> {cublas}"


class CupyCheckedRow(Row):
    def __init__(self, op):
        super().__init__(op)
        if op == "matmul-tf32":
            os.environ["CUPY_TF32"] = "1"  # CuPy reads it at its first matmul: float32 in TF32 when set
        elif is_matmul(op):
            os.environ.pop("CUPY_TF32", None)
        self.cp = need("cupy")
        self.versions["cupy"] = self.cp.__version__
        if op == "sum":
            self.build_note = "the reduction kernel is compiled, or found in CuPy's cache, inside the first call"
            self.build_in_first_call = True

    def setup(self, d):
        cp = self.cp
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise Skip("CuPy sees no GPU")
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.stream.use()
        self.e0, self.e1 = cp.cuda.Event(), cp.cuda.Event()
        if self.op == "sum":
            self.a = cp.asarray(d["a"])
            self.small = self.a[:d["host_n"]]
        else:
            dtype = cp.float16 if self.op == "matmul-f16" else cp.float32
            self.A, self.B = cp.asarray(d["A"]).astype(dtype), cp.asarray(d["B"]).astype(dtype)
            h = HOST_MATMUL_N
            self.As, self.Bs = self.A[:h, :h].copy(), self.B[:h, :h].copy()
            self.compute_type, note = cupy_compute_type(cp, dtype)
            if self.op == "matmul-tf32" and self.compute_type != "CUBLAS_COMPUTE_32F_FAST_TF32":
                raise RuntimeError(f"CuPy did not take CUPY_TF32=1: {note}")
            if self.op == "matmul-f16":
                note += "; " + self.disallow_reduced_precision()
            self.note = note
        self.last = None
        self.stream.synchronize()

    def disallow_reduced_precision(self):
        """Split-k partial sums kept in float32, as xp's and PyTorch's (cuBLAS may otherwise reduce
        them in the float16 output type): the math mode of CuPy's cuBLAS handle."""
        try:
            from cupy_backends.cuda.libs import cublas
            handle = self.cp.cuda.device.get_cublas_handle()
            cublas.setMathMode(handle, CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
            return f"cuBLAS handle math mode {cublas.getMathMode(handle)} (reduced-precision reductions disallowed)"
        except Exception as e:
            return f"the cuBLAS math mode could not be set: {type(e).__name__}: {e}"

    def call(self):
        self.last = self.cp.sum(self.a) if self.op == "sum" else self.A @ self.B

    def call_small(self):
        return self.cp.sum(self.small) if self.op == "sum" else self.As @ self.Bs

    def sync(self):
        self.stream.synchronize()

    def start(self):
        self.e0.record(self.stream)

    def stop(self):
        self.e1.record(self.stream)
        self.e1.synchronize()
        return self.cp.cuda.get_elapsed_time(self.e0, self.e1)

    def values(self, i, j):
        cp = self.cp
        if self.op == "sum":
            return [float(self.last)]
        return cp.asnumpy(self.last[cp.asarray(i), cp.asarray(j)].astype(cp.float64))


class TorchCheckedRow(Row):
    def __init__(self, op):
        super().__init__(op)
        torch = self.torch = need("torch")
        self.versions["torch"] = torch.__version__
        self.versions["torch.cuda"] = torch.version.cuda
        if is_matmul(op):
            import warnings
            m = torch.backends.cuda.matmul
            want_tf32 = op == "matmul-tf32"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # newer PyTorch suggests fp32_precision instead
                m.allow_tf32 = want_tf32
                m.allow_fp16_reduced_precision_reduction = False
                if hasattr(m, "allow_fp16_accumulation"):
                    m.allow_fp16_accumulation = False
                tf32, reduced = m.allow_tf32, m.allow_fp16_reduced_precision_reduction
            if tf32 != want_tf32 or (reduced is True or (isinstance(reduced, tuple) and reduced[0])):
                raise RuntimeError(f"PyTorch kept allow_tf32 = {tf32}, "
                                   f"allow_fp16_reduced_precision_reduction = {reduced}")
            self.compute_type = ("CUBLAS_COMPUTE_32F_FAST_TF32" if want_tf32 else
                                 "CUBLAS_COMPUTE_32F" + (", float32 split-k" if op == "matmul-f16" else " (no TF32)"))
            self.note = (f"allow_tf32 = {tf32}, float32 matmul precision '{torch.get_float32_matmul_precision()}', "
                         f"allow_fp16_reduced_precision_reduction = {reduced}")

    def setup(self, d):
        torch = self.torch
        if not torch.cuda.is_available():
            raise Skip("torch.cuda.is_available() is False")
        dev = torch.device("cuda", 0)
        if self.op == "sum":
            self.a = torch.from_numpy(d["a"]).to(dev)
            self.small = self.a[:d["host_n"]]
        else:
            dtype = torch.float16 if self.op == "matmul-f16" else torch.float32
            self.A = torch.from_numpy(d["A"]).to(dev).to(dtype)
            self.B = torch.from_numpy(d["B"]).to(dev).to(dtype)
            h = HOST_MATMUL_N
            self.As, self.Bs = self.A[:h, :h].contiguous(), self.B[:h, :h].contiguous()
        self.e0 = torch.cuda.Event(enable_timing=True)
        self.e1 = torch.cuda.Event(enable_timing=True)
        self.last = None
        torch.cuda.synchronize()

    def call(self):
        self.last = self.torch.sum(self.a) if self.op == "sum" else self.A @ self.B

    def call_small(self):
        return self.torch.sum(self.small) if self.op == "sum" else self.As @ self.Bs

    def sync(self):
        self.torch.cuda.synchronize()

    def start(self):
        self.e0.record()

    def stop(self):
        self.e1.record()
        self.e1.synchronize()
        return self.e0.elapsed_time(self.e1)

    def values(self, i, j):
        torch = self.torch
        if self.op == "sum":
            return [self.last.item()]
        dev = self.last.device
        return self.last[torch.as_tensor(i, device=dev), torch.as_tensor(j, device=dev)].double().cpu().numpy()


class NumpyCheckedRow(HostTimer, Row):
    def __init__(self, op):
        super().__init__(op)
        self.np = need("numpy")
        if is_matmul(op):
            self.compute_type = "float32 (NumPy's BLAS sgemm)"

    def setup(self, d):
        np = self.np
        if self.op == "sum":
            self.a = d["a"]
            self.small = self.a[:d["host_n"]]
        else:
            self.A, self.B = d["A"], d["B"]
            h = HOST_MATMUL_N
            self.As, self.Bs = np.ascontiguousarray(self.A[:h, :h]), np.ascontiguousarray(self.B[:h, :h])
        self.last = None

    def call(self):
        self.last = self.np.sum(self.a) if self.op == "sum" else self.A @ self.B

    def call_small(self):
        return self.np.sum(self.small) if self.op == "sum" else self.As @ self.Bs

    def sync(self):
        pass

    def values(self, i, j):
        if self.op == "sum":
            return [float(self.last)]
        return self.last[i, j].astype(self.np.float64)


def make_row(row_id, op, args, snippet):
    if row_id == "cupy-rawkernel":
        return CupyRow(op, "rawkernel", snippet)
    if row_id == "cupy-add":
        return CupyRow(op, "add", snippet)
    if row_id == "cupy-add-out":
        return CupyRow(op, "add-out", snippet)
    if row_id == "cuda-core":
        return CudaCoreRow(op, snippet)
    if row_id == "numba":
        return NumbaRow(op)
    if row_id == "pycuda":
        return PycudaRow(op, snippet, args.cache_root)
    if op in CHECKED:
        if row_id.startswith("cupy-"):
            return CupyCheckedRow(op)
        if row_id.startswith("torch-"):
            return TorchCheckedRow(op)
        if row_id.startswith("numpy-"):
            return NumpyCheckedRow(op)
    if row_id.startswith("torch-"):
        return TorchRow(op, {"torch-add": "add", "torch-add-out": "add-out", "torch-fma": "fma",
                             "torch-compile-fma": "compile"}[row_id])
    if row_id in ("xp-py-rawkernel", "xp-py-gpu-add", "xp-py-gpu-add-out", "xp-py-gpu-fma"):
        return XpPyGpuRow(op, {"xp-py-rawkernel": "rawkernel", "xp-py-gpu-add": "add", "xp-py-gpu-add-out": "add-out",
                               "xp-py-gpu-fma": "fma"}[row_id], snippet)
    if row_id.startswith("xp-py-"):
        return XpPyRow(op, {"xp-py-add": "add", "xp-py-add-out": "add-out", "xp-py-fma": "fma"}[row_id], args.threads)
    if row_id.startswith("numpy-") or row_id.startswith("numexpr-"):
        kind = {"numpy-add": "add", "numpy-add-out": "add-out", "numpy-fma": "fma",
                "numexpr-add-out": "numexpr-add-out", "numexpr-fma": "numexpr-fma"}[row_id]
        return NumpyRow(op, kind, args.threads)
    raise ValueError(f"unknown row {row_id}")


# ---- Measurement -----------------------------------------------------------------------------------

def load_data(np, folder, n, op):
    """The inputs and references the operation needs (at 2^27 each file is 512 MiB)."""
    d = {}
    keys = ("a", "b", "add") if op == "add" else ("a", "b", "c", "fma_separate", "fma_fused")
    for key in keys:
        name = key + ".f32"
        arr = np.fromfile(os.path.join(folder, name), dtype="<f4", count=n)
        if arr.size != n:
            raise RuntimeError(f"{name} in {folder} holds {arr.size} elements, fewer than {n}")
        d[key] = arr
    return d


def read_floats(np, folder, name, count):
    arr = np.fromfile(os.path.join(folder, name), dtype="<f4", count=count)
    if arr.size != count:
        raise RuntimeError(f"{name} in {folder} holds {arr.size} elements, fewer than {count}")
    return arr


def load_checked(np, folder, n, op, host_n):
    """The input of a sum or matmul row, its float64 references and bounds, as the parent wrote them.
    n: the sum's elements, or the matrices' size."""
    d = {"host_n": min(host_n, n), "i": None, "j": None}
    if op == "sum":
        with open(os.path.join(folder, "sum.json")) as f:
            ref = json.load(f)
        if ref["n"] != n:
            raise RuntimeError(f"sum.json in {folder} is for n = {ref['n']}, not {n}")
        d["a"] = read_floats(np, folder, "sum.f32", n)
        d["ref"], d["bound"], d["abs_sum"] = [ref["sum"]], [ref["bound"]], ref["abs_sum"]
        return d
    with open(os.path.join(folder, op + ".json")) as f:
        ref = json.load(f)
    if ref["m"] != n:
        raise RuntimeError(f"{op}.json in {folder} is for {ref['m']} x {ref['m']} matrices, not {n} x {n}")
    data_op = "matmul-f32" if op == "matmul-tf32" else op  # the TF32 rows compute on the float32 rows' inputs
    for key in ("A", "B"):
        x = read_floats(np, folder, f"{data_op}_{key.lower()}.f32", n * n).reshape(n, n)
        if op == "matmul-f16" and not np.array_equal(x.astype(np.float16).astype(np.float32), x):
            raise RuntimeError(f"{op}_{key.lower()}.f32 holds values that float16 does not hold exactly")
        d[key] = x
    samples = np.asarray(ref["samples"], dtype=np.float64).reshape(-1, 4)
    d["i"], d["j"] = samples[:, 0].astype(np.int64), samples[:, 1].astype(np.int64)
    d["ref"], d["bound"] = samples[:, 2], samples[:, 3]
    return d


def check_within(got, ref, bound):
    """Each got[k] within bound[k] of ref[k] (a NaN or an infinity never is): (ok, the first k out of
    bound or None, the largest |got - ref| / bound)."""
    import numpy as np
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    ref = np.asarray(ref, dtype=np.float64).reshape(-1)
    bound = np.asarray(bound, dtype=np.float64).reshape(-1)
    if got.size != ref.size:
        return False, 0, math.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(got - ref)
        bad = ~(np.isfinite(got) & (err <= bound))
        ratio = np.where(err == 0, 0.0, err / bound)
    ratio[~np.isfinite(ratio)] = math.inf
    first = np.flatnonzero(bad)
    return first.size == 0, (int(first[0]) if first.size else None), (float(ratio.max()) if ratio.size else 0.0)


def finite_or_none(x):
    x = float(x)
    return x if math.isfinite(x) else None


def run_checked(args, row, d, sample):
    """A sum or matmul row: the first call, the timed calls and the host-cost loop, each result
    checked within its bound after the first call and after the timed calls."""
    import numpy as np
    op, n = row.op, args.n

    def check(stage):
        got = np.asarray(row.values(d["i"], d["j"]), dtype=np.float64).reshape(-1)
        ok, k, worst = check_within(got, d["ref"], d["bound"])
        if op == "sum":
            sample["result"] = finite_or_none(got[0])
            rel = abs(got[0] - d["ref"][0]) / d["abs_sum"]
            sample["rel_error"] = max(sample.get("rel_error") or 0.0, rel) if math.isfinite(rel) else None
        else:
            sample["values"] = [finite_or_none(v) for v in got]
            sample["error_of_bound"] = max(sample.get("error_of_bound") or 0.0, worst) if math.isfinite(worst) else None
        if ok:
            if sample["within_bound"] is None:
                sample["within_bound"] = True
        elif sample["within_bound"] is not False:
            sample["within_bound"] = False
            g, r, b = got[k] if k < got.size else math.nan, d["ref"][k], d["bound"][k]
            what = (f"the sum is {g:.9g}, the float64 reference {r:.17g}" if op == "sum" else
                    f"C[{int(d['i'][k])}][{int(d['j'][k])}] is {g:.9g}, the float64 reference {r:.17g}")
            sample["mismatch"] = f"after the {stage}, {what}: |error| {abs(g - r):.9g} > bound {b:.9g}"

    t0 = time.perf_counter()
    row.call()
    row.sync()
    sample["first_ms"] = sample["total_ms"] = (time.perf_counter() - t0) * 1e3
    check("first call")
    for _ in range(WARMUPS):
        row.call()
    row.start()
    for _ in range(TIMED):
        row.call()
    steady = row.stop() / TIMED
    sample["steady_ms"] = steady
    if op == "sum":
        sample["gbps"] = 4 * n / (steady * 1e-3) / 1e9
    else:
        sample["tflops"] = 2 * float(n) ** 3 / (steady * 1e-3) / 1e12
    check("timed calls")
    for _ in range(HOST_WARMUPS):
        row.call_small()
    row.sync()
    t0 = time.perf_counter()
    for _ in range(args.host_launches):
        row.call_small()
    t1 = time.perf_counter()
    row.sync()
    sample["host_us"] = (t1 - t0) * 1e6 / args.host_launches
    sample["host_n"] = d["host_n"] if op == "sum" else min(HOST_MATMUL_N, n)
    sample["compute_type"] = row.compute_type
    sample["build_in_first_call"] = row.build_in_first_call
    sample["ok"] = True
    return sample


def compare(np, got, d, op, n, stage):
    """(bits_ok, first_mismatch, mismatch text, rounding)"""
    got = np.ascontiguousarray(np.asarray(got, dtype=np.float32)).reshape(-1)
    if got.size != n:
        return False, 0, f"after the {stage}, the output has {got.size} elements, not {n}", None
    g = got.view(np.uint32)
    ref = d["add"] if op == "add" else d["fma_separate"]
    r = ref[:n].view(np.uint32)
    diff = np.flatnonzero(g != r)
    if diff.size == 0:
        return True, None, None, "separate" if op == "fma" else None
    if op == "fma":
        fused = d["fma_fused"][:n].view(np.uint32)
        if not np.any(g != fused):
            return True, None, None, "fma"
    i = int(diff[0])
    text = f"after the {stage}, index {i} holds 0x{int(g[i]):08x}, the reference 0x{int(r[i]):08x}"
    if op == "fma":
        text += " (and the FMA reference differs too)"
    return False, i, text, None


def run(args):
    sample = {"row": args.row, "ok": False, "error": None, "skipped": None, "n": args.n}
    for k in ("build_ms", "first_ms", "total_ms", "steady_ms", "gbps", "host_us", "bits_ok", "first_mismatch",
              "mismatch", "rounding"):
        sample[k] = None
    known = {r[0]: r for r in ROWS}
    try:
        if args.row not in known:
            raise ValueError(f"unknown row {args.row}; rows: {', '.join(known)}")
        _, label, device, op = known[args.row]
        sample.update(label=label, device=device, op=op)
        sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else []
        n_max = max([args.n] + sizes)
        host_n = min(args.host_n, n_max)
        snippet = read_snippet(args.kernel_file) if args.kernel_file else ""
        if op in CHECKED and sizes:
            raise ValueError(f"{args.row} runs at one size: no --sizes")
        t0 = time.perf_counter()
        np = need("numpy")
        row = make_row(args.row, op, args, snippet)
        sample["import_ms"] = (time.perf_counter() - t0) * 1e3
        sample["versions"] = dict(row.versions, numpy=np.__version__, python=platform.python_version())
        if op in CHECKED:
            sample["within_bound"] = None
            d = load_checked(np, args.data, args.n, op, args.host_n)
            row.setup(d)
            sample["note"] = row.note
            sample["build_note"] = row.build_note
            return run_checked(args, row, d, sample)
        d = load_data(np, args.data, n_max, op)
        row.setup(d)
        sample["note"] = row.note
        sample["build_note"] = row.build_note
        bpe = BYTES[op]
        timer = row

        def check(n, stage):
            ok, i, text, rounding = compare(np, row.result(n), d, op, n, stage)
            return ok, i, text, rounding

        if sizes:
            build = row.build()
            sample["build_ms"] = build
            points = []
            for k, n in enumerate(sizes):
                row.prepare(n)
                row.fill_nan(n)
                for _ in range(WARMUPS):
                    row.call(n)
                timer.start()
                for _ in range(TIMED):
                    row.call(n)
                ms = timer.stop() / TIMED
                ok, i, text, rounding = check(n, "timed launches")
                points.append({"n": n, "steady_ms": ms, "gbps": bpe * n / (ms * 1e-3) / 1e9, "bits_ok": ok,
                               "first_mismatch": i, "mismatch": text, "rounding": rounding})
                print(f"#progress {k + 1}/{len(sizes)}", flush=True)
            sample["sweep"] = points
            sample["bits_ok"] = all(p["bits_ok"] for p in points)
            bad = [p for p in points if not p["bits_ok"]]
            if bad:
                sample["first_mismatch"], sample["mismatch"] = bad[0]["first_mismatch"], f"n = {bad[0]['n']}: {bad[0]['mismatch']}"
            roundings = {p["rounding"] for p in points if p["rounding"]}
            sample["rounding"] = "/".join(sorted(roundings)) or None
            sample["ok"] = True
            return sample

        n = args.n
        row.fill_nan(n)
        row.sync()
        build = row.build()
        row.prepare(n)  # views and launch arguments, not timed
        row.prepare(host_n)
        t0 = time.perf_counter()
        row.call(n)
        row.sync()
        first = (time.perf_counter() - t0) * 1e3
        sample["build_ms"] = build
        sample["first_ms"] = first
        sample["total_ms"] = (build or 0.0) + first
        ok, i, text, rounding = check(n, "first call")
        sample.update(bits_ok=ok, first_mismatch=i, mismatch=text, rounding=rounding)

        row.fill_nan(n)
        for _ in range(WARMUPS):
            row.call(n)
        timer.start()
        for _ in range(TIMED):
            row.call(n)
        steady = timer.stop() / TIMED
        sample["steady_ms"] = steady
        sample["gbps"] = bpe * n / (steady * 1e-3) / 1e9
        ok, i, text, rounding2 = check(n, "timed launches")
        if sample["bits_ok"] and not ok:
            sample.update(bits_ok=False, first_mismatch=i, mismatch=text)
        if rounding2 and rounding2 != rounding:
            sample["rounding"] = f"{rounding}/{rounding2}"

        for _ in range(HOST_WARMUPS):
            row.call(host_n)
        row.sync()
        t0 = time.perf_counter()
        for _ in range(args.host_launches):
            row.call(host_n)
        t1 = time.perf_counter()
        row.sync()
        sample["host_us"] = (t1 - t0) * 1e6 / args.host_launches
        sample["host_n"] = host_n
        sample["ok"] = True
    except Skip as e:
        sample["skipped"] = str(e)
        sample["error"] = str(e)
    except Exception as e:
        sample["error"] = f"{type(e).__name__}: {e}"
        sample["traceback"] = traceback.format_exc()[-2000:]
    return sample


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("--row", required=True)
    r.add_argument("--data", required=True)
    r.add_argument("--n", type=int, required=True)
    r.add_argument("--sizes", default="")
    r.add_argument("--kernel-file", default="")
    r.add_argument("--cache-root", default="")
    r.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    r.add_argument("--host-n", type=int, default=1024)
    r.add_argument("--host-launches", type=int, default=10000)
    args = p.parse_args()
    if args.cmd == "list":
        print(json.dumps({"rows": [{"id": i, "label": l, "device": dv, "op": op, "bytes_per_element": BYTES.get(op)}
                                   for i, l, dv, op in ROWS],
                          "python": platform.python_version(), "executable": sys.executable}))
        return 0
    sample = run(args)
    print(json.dumps(sample, allow_nan=False, default=str))
    sys.stdout.flush()
    return 0 if sample["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
