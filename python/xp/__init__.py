"""xp: arrays and kernels on the CPU and on NVIDIA GPUs, with the GPU optional.

``import xp`` never fails for want of a GPU and opens no CUDA library: detection runs at the first
call that needs it (``xp.is_cuda_available()``, an array's creation...). Arrays live on the default
device, ``cuda:0`` when CUDA is usable and the CPU otherwise (``XP_DEVICE``, ``FORCE_CPU=1``).

The module is an Array API 2024.12 namespace: ``x.__array_namespace__()`` returns it.
"""

from . import _xp
from ._xp import *  # noqa: F401,F403  (the functions, dtypes, Array, Device, errors)
from ._xp import Array, Device, DType, __version__  # noqa: F401
from ._xp import bool, float16, bfloat16, float32, float64, complex64, complex128  # noqa: A004  (Array API names)
from ._xp import int8, int16, int32, int64, uint8, uint16, uint32, uint64
from ._xp import ElementwiseKernel, ReductionKernel  # noqa: F401  (CuPy's user-defined kernels)
from ._namespace import (  # noqa: F401
    __array_api_version__,
    __array_namespace_info__,
    can_cast,
    clip,
    e,
    finfo,
    iinfo,
    inf,
    isdtype,
    nan,
    newaxis,
    pi,
    result_type,
)
from ._interop import asnumpy, to_cpu  # noqa: F401


def _file_error_str(self):
    # The message (it names the file and the reason); OSError's own __str__ would print
    # "[Errno None] None: <file>" once `filename` is set.
    return str(self.args[0]) if self.args else ""


_xp.FileError.__str__ = _file_error_str

from . import _methods  # noqa: F401  (NumPy's and CuPy's array methods: a.sum(), a.reshape(3, 2), a.get(), ...)
from ._sets import unique_all, unique_counts, unique_inverse  # noqa: F401
from . import random  # noqa: F401  (xp.random.default_rng)
from . import fft, linalg  # noqa: F401  (the Array API's two extensions)
from . import cuda  # noqa: F401  (xp.cuda.Device, Stream, ExternalStream, Event: current device and stream)
from ._numpy_names import *  # noqa: F401,F403  (NumPy's names beyond the standard: concatenate, hstack, split...)


from . import _signatures  # noqa: E402

# Each function of the extension through xp._xp._Function: inspect.signature reads its parameters.
_signatures.wrap(globals())


def doctor():
    """The report of ``xp doctor --json`` as a dict (the same document, schema xp.doctor/1)."""
    import json

    return json.loads(_xp.doctor_json())


def __getattr__(name):
    if name == "testing":
        import importlib

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'xp' has no attribute {name!r}")
