"""xp.RawKernel, xp.RawModule, xp.Stream and xp.Event on the fake driver's hollow device: NVRTC really
compiles, the fake loads and launches without running anything (what is checked is the host side:
argument packing and sizes, compile errors, streams)."""

import json
import os
import subprocess
import sys

import pytest

FAKE_DRIVER = os.environ.get("XP_TEST_FAKE_DRIVER", "")

CODE = r'''
import json, xp, numpy as np
out = {}
if not xp.is_cuda_available():
    print(json.dumps({"skip": xp.cuda_status()["reason"]}))
    raise SystemExit(0)
src = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }'
k = xp.RawKernel(src, "scale")
x = xp.zeros(256, dtype=xp.float32, device="cuda:0")
k((1,), (256,), (x, np.float32(2.0), np.int32(256)))
s = xp.Stream("cuda:0")
k(1, 256, (x, np.float32(2.0), np.int32(256)), stream=s)
e0, e1 = xp.Event("cuda:0"), xp.Event("cuda:0")
e0.record(s); e1.record(s); s.synchronize()
out["stream_protocol"] = s.__cuda_stream__()[1] == s.ptr
try:
    k((1,), (256,), (x, 2.0, np.int32(256)))
    out["python_float"] = None
except TypeError as err:
    out["python_float"] = str(err)
try:
    k((1,), (256,), (x, np.complex128(1 + 2j), np.int32(256)))
    out["too_big"] = None
except TypeError as err:
    out["too_big"] = str(err)
try:
    k((1,), (256,), (x, np.array(2.0, np.float32), np.int32(256)))
    out["numpy_0d"] = None
except xp.DeviceMismatch as err:
    out["numpy_0d"] = type(err).__name__
try:
    k((1,), (256,), (x, np.float64(2.0), np.int32(256)))
    out["size_check"] = None
except xp.Error as err:
    out["size_check"] = type(err).__name__
try:
    xp.RawKernel('extern "C" __global__ void broken() { undeclared(); }', "broken").compile("cuda:0")
    out["compile_error"] = None
except xp.CompileError as err:
    out["compile_error"] = err.log
# More arguments than the launch keeps on its stack (8): the same checks.
many = xp.RawKernel('extern "C" __global__ void many(float* x, int a0, int a1, int a2, int a3, int a4, int a5, '
                    'int a6, int a7, int a8) { x[0] = a0 + a8; }', "many")
many(1, 1, (x,) + tuple(np.int32(i) for i in range(9)))
out["ten_args"] = True
try:
    many(1, 1, (x,) + tuple(np.int32(i) for i in range(8)) + (3,))
    out["ten_args_error"] = None
except TypeError as err:
    out["ten_args_error"] = str(err)
m = xp.RawModule(code="template <class T> __global__ void fill(T* p, T v) { p[0] = v; }", name_expressions=("fill<float>",))
m.get_function("fill<float>")(1, 1, (x, np.float32(1)))
out["module"] = True
print(json.dumps(out))
'''


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER (the fake CUDA driver, set by ctest) not given")
def test_raw_kernels_on_the_hollow_device(tmp_path):
    env = dict(os.environ, XP_CUDA_DRIVER=FAKE_DRIVER, XP_FAKE_CUDA="devices=1,hollow", XP_CACHE_DIR=str(tmp_path / "k"))
    for k in ("XP_DEVICE", "FORCE_CPU", "CUDA_VISIBLE_DEVICES"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(f"CUDA not usable on the fake driver here: {r['skip']} (NVRTC is needed)")
    assert r["stream_protocol"]
    assert "NumPy scalar" in r["python_float"]
    assert r["too_big"] and "more than 8 bytes" in r["too_big"]  # a NumPy scalar is its bytes, at most 8
    assert r["numpy_0d"] == "DeviceMismatch"  # a NumPy array is an array (on the CPU), never its bytes
    assert r["compile_error"] and "undeclared" in r["compile_error"]
    assert r["module"]
    assert r["ten_args"]
    assert r["ten_args_error"] and "kernel argument 9 is a <class 'int'>" in r["ten_args_error"]
    # The fake reports no parameter sizes unless the driver does; when it does, float64 is refused.
    assert r["size_check"] in (None, "ValueError")


OOM = r'''
import json, xp
if not xp.is_cuda_available():
    print(json.dumps({"skip": xp.cuda_status()["reason"]}))
    raise SystemExit(0)
try:
    xp.empty(4_000_000, dtype=xp.float32, device="cuda:0")
    print(json.dumps({"raised": None}))
except MemoryError as e:
    print(json.dumps({"raised": type(e).__name__, "xp_error": isinstance(e, xp.Error), "requested": e.requested,
                      "limit": e.limit, "device": e.device}))
'''


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER not given")
def test_out_of_memory_is_a_memory_error_with_byte_counts():
    env = dict(os.environ, XP_CUDA_DRIVER=FAKE_DRIVER, XP_FAKE_CUDA="devices=1,hollow,memory=1073741824",
               XP_GPU_MEMORY_LIMIT="1048576")
    for k in ("XP_DEVICE", "FORCE_CPU", "CUDA_VISIBLE_DEVICES"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", OOM], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(f"CUDA not usable on the fake driver here: {r['skip']}")
    assert r["raised"] == "OutOfMemoryError" and r["xp_error"]
    assert r["requested"] == 16_000_000 and r["limit"] == 1048576 and r["device"] == "cuda:0"


def test_raw_kernel_runs_on_the_cpu(tmp_path):
    """The same CUDA C++ source on CPU arrays: compiled by the host C++ compiler, run on xp's threads."""
    code = r'''
import json, os, xp, numpy as np
if not xp.doctor_json() or not json.loads(xp.doctor_json())["kernels"]["host_compiler"]["available"]:
    print(json.dumps({"skip": "no host C++ compiler"}))
    raise SystemExit(0)
src = 'extern "C" __global__ void scale(float* x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }'
k = xp.RawKernel(src, "scale")
x = xp.asarray(np.arange(300, dtype=np.float32), device="cpu")
k((2,), (256,), (x, np.float32(2.0), np.int32(300)))
out = {"values": np.asarray(x).tolist()}
try:
    k((1,), (2048,), (x, np.float32(2.0), np.int32(300)))
    out["too_many_threads"] = None
except xp.Error as err:
    out["too_many_threads"] = type(err).__name__
try:
    xp.RawKernel('extern "C" __global__ void broken() { undeclared(); }', "broken").compile("cpu")
    out["compile_error"] = None
except xp.CompileError as err:
    out["compile_error"] = err.log
print(json.dumps(out))
'''
    env = dict(os.environ, XP_CACHE_DIR=str(tmp_path / "k"), XP_DEVICE="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(r["skip"])
    assert r["values"] == [2.0 * i for i in range(300)]
    assert r["too_many_threads"] == "ValueError"
    assert "undeclared" in r["compile_error"]
