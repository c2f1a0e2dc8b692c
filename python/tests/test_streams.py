"""xp.cuda: the current device and stream as context managers (Device, Stream, ExternalStream),
events, and the stream= of interop following the current stream. In process on the CPU, in a child
process on the fake driver's hollow devices (what ran where, no kernel executed), and on a GPU."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import xp

FAKE_DRIVER = os.environ.get("XP_TEST_FAKE_DRIVER", "")


def test_a_cpu_device_scope_decides_where_new_arrays_go():
    before = xp.default_device()
    with xp.cuda.Device("cpu") as d:
        assert d.device == xp.Device("cpu")
        assert xp.zeros(3).device == xp.Device("cpu")
        assert xp.cuda.get_current_device() == d
    assert xp.default_device() == before


def test_scopes_restore_when_an_exception_leaves_them():
    before = xp.default_device()
    with pytest.raises(RuntimeError):
        with xp.cuda.Device("cpu"):
            raise RuntimeError("leaves the scope")
    assert xp.default_device() == before


def test_the_cpu_has_no_streams():
    with xp.cuda.Device("cpu"):
        with pytest.raises(ValueError):
            xp.cuda.get_current_stream()
    with pytest.raises(ValueError):
        xp.cuda.get_current_stream("cpu")
    with pytest.raises(TypeError):
        xp.cuda.Device(1.5)


def test_without_a_gpu_a_stream_is_a_typed_error(xp_no_gpu):
    with pytest.raises((xp.DeviceUnavailable, ValueError)):
        xp.cuda.Stream(device="cuda:0")
    with pytest.raises(xp.DeviceUnavailable):
        xp.cuda.Event(device="cuda:0")
    with pytest.raises(xp.DeviceUnavailable):
        with xp.cuda.Device(0):
            pass


FAKE = r'''
import json, numpy as np, xp
if not xp.is_cuda_available():
    print(json.dumps({"skip": xp.cuda_status()["reason"]}))
    raise SystemExit(0)
out = {}
g0, g1 = xp.Device("cuda:0"), xp.Device("cuda:1")
out["default"] = str(xp.zeros(2).device)
with xp.cuda.Device(1) as d:
    out["in_device_1"] = str(xp.zeros(2).device)
    out["id"] = d.id
    with xp.cuda.Device("cpu"):
        out["nested_cpu"] = str(xp.ones(2).device)
    out["back_to_1"] = str(xp.arange(3).device)
out["after"] = str(xp.zeros(2).device)
dflt = xp.cuda.get_current_stream()
out["default_stream_is_xp_default"] = dflt == xp.Stream.default_for(g0)
s = xp.cuda.Stream()
with s as entered:
    out["entered_is_s"] = entered == s
    out["current_in_scope"] = xp.cuda.get_current_stream() == s
    a = xp.asarray(np.arange(100, dtype=np.float32), device=g0)
    b = (a * 2).eval() if hasattr(a, "eval") else a * 2
    out["array_device"] = str(b.device)
    e0, e1 = xp.cuda.Event(), xp.cuda.Event()
    e0.record()
    e1.record()
out["restored"] = xp.cuda.get_current_stream() == dflt
e1.synchronize()
out["elapsed"] = e0.elapsed(e1) >= 0 and xp.cuda.get_elapsed_time(e0, e1) >= 0 and e1.query()
untimed = xp.cuda.Event(timing=False)
untimed.record(s)
try:
    e0.elapsed(untimed)
    out["untimed"] = None
except ValueError:
    out["untimed"] = "ValueError"
ext = xp.cuda.ExternalStream(s.ptr)
out["external_not_owned"] = not ext.owned and ext == s
with ext:
    out["external_current"] = xp.cuda.get_current_stream().ptr == s.ptr
null = xp.cuda.Stream(null=True)
out["null_is_default"] = null == dflt
try:
    with s:
        raise KeyError("x")
except KeyError:
    pass
out["restored_after_error"] = xp.cuda.get_current_stream() == dflt
# A kernel launched without a stream inside a scope runs on the scope's stream (the fake counts it).
k = xp.RawKernel(r'extern "C" __global__ void one(float* p) { p[threadIdx.x] = 1; }', "one")
x = xp.zeros(32, dtype=xp.float32, device=g0)
with s:
    k((1,), (32,), (x,))
out["kernel_ok"] = True
# Streams on the second device: a scope makes its device current.
t = xp.cuda.Stream(device=g1)
with t:
    out["stream_device_current"] = str(xp.zeros(1).device)
print(json.dumps(out))
'''


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER (the fake CUDA driver, set by ctest) not given")
def test_scopes_on_the_hollow_devices(tmp_path):
    env = dict(os.environ, XP_CUDA_DRIVER=FAKE_DRIVER, XP_FAKE_CUDA="devices=2,hollow,memory=1073741824",
               XP_CACHE_DIR=str(tmp_path / "k"))
    for k in ("XP_DEVICE", "FORCE_CPU", "CUDA_VISIBLE_DEVICES"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", FAKE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(f"CUDA not usable on the fake driver here: {r['skip']} (NVRTC is needed)")
    assert r["default"] == "cuda:0"
    assert r["in_device_1"] == "cuda:1" and r["id"] == 1
    assert r["nested_cpu"] == "cpu" and r["back_to_1"] == "cuda:1"
    assert r["after"] == "cuda:0"
    assert r["default_stream_is_xp_default"]
    assert r["entered_is_s"] and r["current_in_scope"] and r["restored"]
    assert r["array_device"] == "cuda:0"
    assert r["elapsed"]
    assert r["untimed"] == "ValueError"
    assert r["external_not_owned"] and r["external_current"]
    assert r["null_is_default"]
    assert r["restored_after_error"]
    assert r["kernel_ok"]
    assert r["stream_device_current"] == "cuda:1"


def test_work_on_a_user_stream_matches_and_events_time_it(xp_gpu):
    n = 1 << 22
    ref = (np.arange(n, dtype=np.float32) % 1000) * 3 + 1
    s = xp.cuda.Stream()
    start, stop = xp.cuda.Event(), xp.cuda.Event()
    with s:
        start.record()
        a = xp.asarray(np.arange(n, dtype=np.float32) % 1000)
        b = a * 3 + 1
        for _ in range(10):
            b = b * 1.0
        stop.record()
    stop.synchronize()
    assert start.elapsed(stop) > 0
    np.testing.assert_array_equal(xp.to_cpu(b), ref)  # read on the default stream, ordered after s


def test_interop_follows_the_current_stream(xp_gpu):
    s = xp.cuda.Stream()
    with s:
        a = xp.arange(10, dtype=xp.float32)
        cai = a.__cuda_array_interface__
        assert cai["stream"] == s.ptr
    assert a.__cuda_array_interface__["stream"] == xp.cuda.get_current_stream().ptr
