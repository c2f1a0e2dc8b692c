"""Every function of the package has a signature inspect.signature reads (nanobind's functions
alone show none on Python 3.11 and ``(*args, **kwargs)`` from 3.12), with the standard's names, and
the object that carries it calls through unchanged."""

import gc
import inspect

import numpy as np
import pytest

import xp

P = inspect.Parameter


def exported():
    for mod in (xp, xp.linalg, xp.fft):
        for name in dir(mod):
            f = getattr(mod, name)
            if callable(f) and not isinstance(f, type) and not name.startswith("_"):
                yield f"{mod.__name__}.{name}", f


def test_every_function_has_a_signature():
    names = []
    for name, f in exported():
        sig = inspect.signature(f)
        assert list(sig.parameters) != ["args", "kwargs"], name
        names.append(name)
    assert len(names) > 250


def test_the_signatures_are_the_standards():
    def kinds(f):
        return [(n, p.kind, p.default) for n, p in inspect.signature(f).parameters.items()]

    assert kinds(xp.sum) == [("x", P.POSITIONAL_OR_KEYWORD, P.empty), ("axis", P.KEYWORD_ONLY, None),
                             ("dtype", P.KEYWORD_ONLY, None), ("keepdims", P.KEYWORD_ONLY, False)]
    assert kinds(xp.arange)[:3] == [("start", P.POSITIONAL_OR_KEYWORD, P.empty),
                                    ("stop", P.POSITIONAL_OR_KEYWORD, None), ("step", P.POSITIONAL_OR_KEYWORD, 1)]
    assert kinds(xp.meshgrid) == [("arrays", P.VAR_POSITIONAL, P.empty), ("indexing", P.KEYWORD_ONLY, "xy")]
    assert kinds(xp.fft.fft)[1:] == [("n", P.KEYWORD_ONLY, None), ("axis", P.KEYWORD_ONLY, -1),
                                     ("norm", P.KEYWORD_ONLY, "backward")]
    assert kinds(xp.expand_dims) == [("x", P.POSITIONAL_OR_KEYWORD, P.empty), ("axis", P.POSITIONAL_OR_KEYWORD, 0)]
    assert kinds(xp.Array.__dlpack__)[1:] == [("stream", P.KEYWORD_ONLY, None), ("max_version", P.KEYWORD_ONLY, None),
                                             ("dl_device", P.KEYWORD_ONLY, None), ("copy", P.KEYWORD_ONLY, None)]
    assert list(inspect.signature(xp.ones(2).to_device).parameters) == ["device", "stream"]


def test_the_function_object_calls_through():
    a, b = xp.asarray(np.array([1.0, 2.0])), xp.asarray(np.array([3.0, 4.0]))
    out = xp.empty((2,), device=a.device)
    assert xp.add(a, b, out=out) is out
    assert out.tolist() == [4.0, 6.0]
    assert xp.sum(a, axis=0, keepdims=True).tolist() == [3.0]
    assert xp.expand_dims(a, 0).shape == (1, 2) and xp.expand_dims(a, axis=1).shape == (2, 1)
    with pytest.raises(TypeError):
        xp.sum(a, 0)  # axis is keyword-only
    with pytest.raises(TypeError):
        xp.add(a)
    with pytest.raises(IndexError):  # xp's errors come through unchanged
        xp.take(a, xp.asarray(np.array([5])))


def test_the_function_object_is_the_extensions_function_otherwise():
    f = xp.sum
    assert type(f) is xp._xp._Function
    assert f.__wrapped__ is xp._xp.sum
    assert f.__name__ == "sum" and f.__module__ == xp._xp.sum.__module__
    assert f.__doc__ == xp._xp.sum.__doc__ and f.__doc__.startswith("sum(")
    assert f.__nb_signature__ == xp._xp.sum.__nb_signature__
    assert repr(f) == "<xp function sum>"
    assert xp.linalg.matmul is xp.matmul and xp.absolute is getattr(xp._numpy_names, "absolute")
    with pytest.raises(AttributeError):
        f.no_such_attribute  # noqa: B018


def test_function_objects_release_what_they_hold():
    import sys

    def g(x):
        return x + 1

    before = sys.getrefcount(g)
    w = xp._xp._signed(g)
    assert sys.getrefcount(g) == before + 1
    assert w(2) == 3 and w(x=4) == 5
    del w
    gc.collect()
    assert sys.getrefcount(g) == before
    with pytest.raises(TypeError, match="expected a callable"):
        xp._xp._signed(3)
