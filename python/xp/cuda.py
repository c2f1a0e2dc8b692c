"""CUDA devices, streams and events as CuPy and PyTorch users write them.

``with xp.cuda.Device(1):`` makes cuda:1 the thread's current device (where arrays made without a
device go); ``with xp.cuda.Stream():`` makes a new stream the current stream of its device (and
its device current), so that array operations, transfers and kernel launches run there. Scopes
nest, belong to the thread that opened them, and restore what was current when they end, also
through an exception. Arrays remember the stream they were last used on; using one on another
stream makes that stream wait for it on the device (docs/python.md).

On a machine without a GPU, ``xp.cuda.Device("cpu")`` or ``xp.cuda.Device(xp.Device("cpu"))`` is
allowed (new arrays go to the CPU), and a stream or an event is an ``xp.DeviceUnavailable`` error.
"""

from . import _xp

__all__ = [
    "Device",
    "Stream",
    "ExternalStream",
    "Event",
    "get_current_stream",
    "get_current_device",
    "get_elapsed_time",
    "synchronize",
]

Stream = _xp.Stream
"""``Stream(device=None, *, null=False, non_blocking=True)``: a new stream of the device (the
current one by default); ``null=True`` gives xp's default stream of the device instead. xp's streams
never wait for the legacy default stream, whatever ``non_blocking`` says. A context manager."""

Event = _xp.Event
"""``Event(device=None, *, timing=True, blocking=False)``; ``record(stream=None)`` (the current
stream by default), ``synchronize()``, ``query()``, ``elapsed(end)`` in milliseconds."""


def _device_of(device):
    if device is None:
        return _xp.current_device()
    if isinstance(device, Device):
        return device.device
    if isinstance(device, bool):
        raise TypeError("xp.cuda.Device: not a device: %r" % (device,))
    if isinstance(device, int):
        return _xp.Device("cuda:%d" % device)
    if isinstance(device, str):
        return _xp.Device(device)
    if isinstance(device, _xp.Device):
        return device
    raise TypeError("xp.cuda.Device: not a device: %r (give an ordinal, a name or an xp.Device)" % (device,))


class Device:
    """A device as a context manager: ``Device(1)``, ``Device("cuda:1")``, ``Device()`` (the current
    one). ``use()`` makes it current until another ``use`` or the end of an enclosing ``with``."""

    def __init__(self, device=None):
        self.device = _device_of(device)

    @property
    def id(self):
        return self.device.index

    def use(self):
        self.device.activate()

    def synchronize(self):
        _xp.synchronize(self.device)

    def __enter__(self):
        _xp._enter_device(self.device)
        return self

    def __exit__(self, *exc):
        _xp._exit_scope()
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.device == self.device

    def __hash__(self):
        return hash(str(self.device))

    def __repr__(self):
        return "<xp.cuda.Device %s>" % (self.device,)


def ExternalStream(ptr, device_id=None):
    """Another library's stream (a ``CUstream`` as an int, or an object with ``__cuda_stream__``,
    ``.ptr`` or ``.cuda_stream``), never destroyed by xp: its owner keeps it alive while xp and the
    arrays made on it use it. Usable as a context manager like any ``xp.cuda.Stream``."""
    device = None if device_id is None else _device_of(device_id)
    return Stream.external(ptr, device)


def get_current_stream(device=None):
    """The calling thread's current stream of a CUDA device (of the current device by default)."""
    return _xp.current_stream(None if device is None else _device_of(device))


def get_current_device():
    return Device(_xp.current_device())


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded, completed events (CuPy's name)."""
    return start_event.elapsed(end_event)


def synchronize(device=None):
    """Waits for all work on the device (the current one by default)."""
    _xp.synchronize(_device_of(device))
