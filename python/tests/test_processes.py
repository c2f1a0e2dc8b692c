"""xp in child processes: a fork() child of a parent that initialized CUDA gets a clear error, and
multiprocessing with spawn works. Laziness is invisible: XP_LAZY=0 gives the same bits."""

import json
import multiprocessing
import os
import subprocess
import sys

import pytest

import xp

FAKE_DRIVER = os.environ.get("XP_TEST_FAKE_DRIVER", "")

FORK = """
import json, os, xp
if not xp.is_cuda_available():
    print(json.dumps({'skip': xp.cuda_status()['reason']}))
    raise SystemExit(0)
xp.synchronize('cuda:0')                    # the parent initializes CUDA (retains the context)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    out = {'reason': xp.cuda_status()['reason'], 'cpu': float(xp.sum(xp.arange(4)))}
    try:
        xp.zeros(2, device='cuda:0')
        out['error'] = None
    except xp.DeviceUnavailable as e:
        out['error'] = str(e)
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 65536).decode())
"""


@pytest.mark.skipif(not FAKE_DRIVER, reason="XP_TEST_FAKE_DRIVER (the fake CUDA driver, set by ctest) not given")
def test_fork_after_cuda_init_is_a_clear_error():
    env = dict(os.environ, XP_CUDA_DRIVER=FAKE_DRIVER, XP_FAKE_CUDA="devices=1,hollow")
    for k in ("XP_DEVICE", "FORCE_CPU", "CUDA_VISIBLE_DEVICES"):
        env.pop(k, None)
    out = subprocess.run([sys.executable, "-c", FORK], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if "skip" in r:
        pytest.skip(f"CUDA not usable on the fake driver here: {r['skip']} (NVRTC is needed)")
    assert r["reason"] == "forked_after_init"
    assert r["cpu"] == 6.0  # the CPU still works in the child
    assert r["error"] is not None and "fork" in r["error"]


def _child_sum(n):
    import xp

    return float(xp.sum(xp.arange(n, dtype=xp.float64)))


def test_multiprocessing_spawn():
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        assert pool.map(_child_sum, [10, 100]) == [45.0, 4950.0]


def test_lazy_off_gives_the_same_bits():
    code = (
        "import xp, json; a = xp.linspace(-3, 3, 101, dtype=xp.float32);"
        " r = xp.exp(a) * 1.5 - a / 3 + xp.sin(a * a);"
        " print(json.dumps([float(v) for v in xp.to_cpu(r).view('uint32').tolist()]))"
    )
    bits = []
    for lazy in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, XP_LAZY=lazy), capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        bits.append(out.stdout)
    assert bits[0] == bits[1]
