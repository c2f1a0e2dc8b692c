"""Helpers for testing code that uses xp, with or without a GPU.

- ``no_gpu()``: a context manager inside which xp behaves as on a machine without a GPU
  (``xp.is_cuda_available()`` is False, the default device is the CPU, and using a CUDA device
  raises ``xp.DeviceUnavailable``). It uses ``xp::set_cuda_hidden`` of the C++ core.
- ``xp_no_gpu``: the same as a pytest fixture.
- ``requires_gpu()``: call it at the top of a test that needs a GPU: it skips the test with the
  reason "no GPU", or fails it when ``XP_TEST_REQUIRE_GPU=1`` (CI machines that have one). The
  pytest fixture ``xp_gpu`` does the same and gives the device, and so does the marker
  ``@pytest.mark.xp_gpu`` for a test that needs no device object.

Register the fixtures in a conftest.py with ``pytest_plugins = ["xp.testing"]``.
"""

import contextlib
import os

from . import _xp


@contextlib.contextmanager
def no_gpu():
    """xp behaves as on a machine without a GPU inside the block (restored after it)."""
    before = _xp.cuda_hidden()
    _xp.set_cuda_hidden(True)
    try:
        yield
    finally:
        _xp.set_cuda_hidden(before)


def requires_gpu():
    """Skips the calling test ("no GPU"), or fails it under XP_TEST_REQUIRE_GPU=1, when no GPU is usable."""
    import pytest

    if _xp.is_cuda_available():
        return _xp.Device("cuda:0")
    status = _xp.cuda_status()
    why = f"no GPU (CUDA {status['reason']}: {status['detail']})"
    if os.environ.get("XP_TEST_REQUIRE_GPU") == "1":
        pytest.fail(f"XP_TEST_REQUIRE_GPU=1 but {why}", pytrace=False)
    pytest.skip("no GPU")


try:
    import pytest as _pytest
except ImportError:  # pytest is only needed for the fixtures
    _pytest = None

if _pytest is not None:

    @_pytest.fixture
    def xp_no_gpu():
        """Runs the test as on a machine without a GPU."""
        with no_gpu():
            yield

    @_pytest.fixture
    def xp_gpu():
        """The first GPU; the test is skipped ("no GPU"), or fails under XP_TEST_REQUIRE_GPU=1, without one."""
        return requires_gpu()

    def pytest_configure(config):
        config.addinivalue_line("markers", "xp_gpu: the test needs a GPU (skipped without one, failed under XP_TEST_REQUIRE_GPU=1)")

    def pytest_runtest_setup(item):
        if item.get_closest_marker("xp_gpu") is not None:
            requires_gpu()
