"""The Array API's ``fft`` extension (2024.12): every function. float32 and complex64 inputs are
transformed in single precision (as the standard says; NumPy 2 computes them in double). xp's own
mixed-radix FFT on the CPU (Bluestein's algorithm for lengths with a large prime factor), cuFFT on a
CUDA device."""

from . import _xp

_f = _xp._fft

fft = _f.fft
ifft = _f.ifft
fftn = _f.fftn
ifftn = _f.ifftn
rfft = _f.rfft
irfft = _f.irfft
rfftn = _f.rfftn
irfftn = _f.irfftn
hfft = _f.hfft
ihfft = _f.ihfft
fftfreq = _f.fftfreq
rfftfreq = _f.rfftfreq
fftshift = _f.fftshift
ifftshift = _f.ifftshift

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift",
]

from . import _signatures  # noqa: E402

_signatures.wrap(globals(), __all__)  # inspect.signature reads the standard's parameters
