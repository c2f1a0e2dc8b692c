"""import xp never fails, is cheap, and opens no CUDA library; the optional-GPU API on machines with
and without a driver (the repository's fake driver stands in for one)."""

import json
import os
import subprocess
import sys

import pytest

FAKE_DRIVER = os.environ.get("XP_TEST_FAKE_DRIVER", "")


def run(code, **env):
    """Runs `code` in a fresh Python (detection is once per process) and returns its JSON output."""
    e = dict(os.environ)
    for k in ("XP_DEVICE", "FORCE_CPU", "XP_CUDA_DRIVER", "XP_FAKE_CUDA", "CUDA_VISIBLE_DEVICES"):
        e.pop(k, None)
    e.update(env)
    out = subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


CUDA_MAPS = """
import json
def cuda_maps():
    with open('/proc/self/maps') as f:
        return sorted({l.split()[-1] for l in f if 'libcuda' in l or 'libnvrtc' in l or 'libcublas' in l})
before = cuda_maps()
import xp
after_import = cuda_maps()
"""


def test_import_opens_no_cuda_library():
    r = run(CUDA_MAPS + "print(json.dumps({'before': before, 'after': after_import}))")
    assert r["after"] == r["before"] == []


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER (the fake CUDA driver, set by ctest) not given")
def test_import_with_a_driver_creates_no_context():
    # With the fake driver: import opens nothing; detection then opens the driver but makes no context.
    code = CUDA_MAPS + """
import ctypes
status = xp.cuda_status()
drv = ctypes.CDLL(__import__('os').environ['XP_CUDA_DRIVER'])
drv.xp_fake_cuda_primary_ctx_refcount.restype = ctypes.c_int
print(json.dumps({'after': after_import, 'status': status, 'refcount': drv.xp_fake_cuda_primary_ctx_refcount(0)}))
"""
    r = run(code, XP_CUDA_DRIVER=FAKE_DRIVER, XP_FAKE_CUDA="devices=2")
    assert r["after"] == []
    assert r["refcount"] == 0
    assert r["status"]["reason"] in ("available", "no_usable_nvrtc")


@pytest.mark.parametrize(
    "env, reason",
    [
        ({"FORCE_CPU": "1"}, "disabled_by_user"),
        ({"XP_DEVICE": "cpu"}, "disabled_by_user"),
        ({"XP_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}, "driver_not_found"),
    ],
)
def test_status_without_a_gpu(env, reason):
    r = run(
        "import json, xp; a = xp.asarray([1.0, 2.0]) * 2;"
        " print(json.dumps({'s': xp.cuda_status(), 'n': xp.cuda_device_count(), 'avail': xp.is_cuda_available(),"
        " 'dev': str(a.device), 'v': xp.to_cpu(a).tolist()}))",
        **env,
    )
    assert r["s"]["reason"] == reason
    assert r["s"]["available"] is False and r["avail"] is False and r["n"] == 0
    assert r["dev"] == "cpu" and r["v"] == [2.0, 4.0]
    assert set(r["s"]) >= {"available", "reason", "detail", "fix"}


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER not given")
@pytest.mark.parametrize(
    "spec, reason",
    [("devices=0", "no_device"), ("init=100", "init_failed"), ("stub", "init_failed")],
)
def test_status_with_a_broken_driver(spec, reason):
    r = run(
        "import json, xp; print(json.dumps({'s': xp.cuda_status(), 'sum': float(xp.sum(xp.ones(4)))}))",
        XP_CUDA_DRIVER=FAKE_DRIVER,
        XP_FAKE_CUDA=spec,
    )
    assert r["s"]["available"] is False
    assert r["s"]["reason"] in (reason, "driver_unusable")
    assert r["sum"] == 4.0


def test_import_time_beside_numpy():
    code = (
        "import time, json; t0 = time.perf_counter(); import xp; t1 = time.perf_counter();"
        " import numpy; t2 = time.perf_counter();"
        " print(json.dumps({'xp_ms': (t1 - t0) * 1e3, 'numpy_ms': (t2 - t1) * 1e3}))"
    )
    r = run(code)
    print(f"import xp {r['xp_ms']:.1f} ms, import numpy {r['numpy_ms']:.1f} ms")
    assert "numpy" not in run("import json, sys, xp; print(json.dumps(list(sys.modules)))")


def test_doctor_matches_the_cli_schema():
    import xp

    d = xp.doctor()
    assert d["schema"] == "xp.doctor/1"
    assert d["xp_version"] == xp.__version__
    assert {"verdict", "cuda", "libraries", "gpus", "environment", "kernels", "cpu", "exit_code"} <= set(d)


@pytest.mark.skipif(not os.environ.get("XP_TEST_CLI"), reason="XP_TEST_CLI (the xp program, set by ctest) not given")
def test_doctor_is_the_clis_document(tmp_path):
    # The same library function writes both: the documents agree but for the CUDA libraries each
    # process has loaded. Both look at a kernel cache of their own, which nothing else writes (the
    # shared one's entry count changed between the two when other processes stored kernels).
    cache = str(tmp_path / "kernels")
    r = run("import json, xp; print(json.dumps(xp.doctor()))", XP_CACHE_DIR=cache)
    env = {k: v for k, v in os.environ.items() if k not in ("XP_DEVICE", "FORCE_CPU")}
    env["XP_CACHE_DIR"] = cache
    cli = subprocess.run([os.environ["XP_TEST_CLI"], "doctor", "--json"], capture_output=True, text=True, timeout=120,
                         env=env)
    c = json.loads(cli.stdout)
    for d in (r, c):
        d.pop("loaded_cuda")
    assert r == c


def test_python_m_xp_doctor():
    out = subprocess.run([sys.executable, "-m", "xp", "doctor", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(out.stdout)["schema"] == "xp.doctor/1"
    text = subprocess.run([sys.executable, "-m", "xp", "doctor"], capture_output=True, text=True, timeout=120)
    assert "xp " in text.stdout


def test_no_gpu_context_manager(xp_no_gpu):
    import xp

    assert not xp.is_cuda_available()
    assert xp.cuda_status()["reason"] == "no_device"
    assert xp.devices() == [xp.Device("cpu")]
    assert xp.default_device() == xp.Device("cpu")
    with pytest.raises(xp.DeviceUnavailable):
        xp.zeros(3, device="cuda:0")


def test_no_gpu_is_restored():
    import xp
    import xp.testing

    before = xp.cuda_status()
    with xp.testing.no_gpu():
        assert not xp.is_cuda_available()
    assert xp.cuda_status() == before


def test_requires_gpu_fails_under_xp_test_require_gpu(tmp_path):
    import xp

    if xp.is_cuda_available():
        pytest.skip("this machine has a GPU")
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\ndef test_gpu(xp_gpu):\n    pass\n\n@pytest.mark.xp_gpu\ndef test_marked():\n    pass\n"
    )
    (tmp_path / "conftest.py").write_text("pytest_plugins = ['xp.testing']\n")
    # Under XP_TEST_REQUIRE_GPU=1 the fixture fails the test (pytest reports a failing fixture as
    # an error); otherwise it is skipped with the reason "no GPU".
    for require, expect in (("1", "errors"), ("0", "skipped")):
        env = dict(os.environ, XP_TEST_REQUIRE_GPU=require)
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
            env=env, capture_output=True, text=True, timeout=120,
        )
        assert f"2 {expect}" in out.stdout, out.stdout
        assert (out.returncode != 0) == (expect == "errors")
        if expect == "skipped":
            assert "no GPU" in out.stdout
