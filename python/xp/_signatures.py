"""The signatures inspect.signature reports for the extension's functions.

The package exposes each function of the extension through ``xp._xp._Function`` (signed.cpp): a
call goes straight on to nanobind's function, and ``__signature__`` is made here, on first use, from
the text nanobind keeps (``__nb_signature__``: ``def sum(x: ..., *, axis: ... = \\0, ...) -> ...``,
each default a reference into a tuple of the values). ``ast`` and ``inspect`` are imported only
when a signature is asked for.
"""

import re

from . import _xp

_DEFAULT = re.compile(r"\\(\d+)")


def signature_of(fn):
    """The inspect.Signature of one nanobind function (ValueError where its text is not Python)."""
    import ast  # here, not at import: `import xp` stays cheap
    import inspect

    _P = inspect.Parameter
    overloads = fn.__nb_signature__
    if len(overloads) != 1:
        raise ValueError(f"no signature for {fn.__name__}: {len(overloads)} overloads")
    text, _doc, defaults = overloads[0]
    try:
        node = ast.parse(_DEFAULT.sub(r"__xp_default_\1", text) + ": pass").body[0]
    except SyntaxError as e:
        raise ValueError(f"no signature for {fn.__name__}: {text!r} is not Python") from e

    def value(n):
        if isinstance(n, ast.Name) and n.id.startswith("__xp_default_"):
            return defaults[int(n.id[len("__xp_default_"):])]
        return ast.literal_eval(n)

    def note(n):
        return _P.empty if n is None else ast.unparse(n)

    a = node.args
    params = []
    positional = a.posonlyargs + a.args
    first_default = len(positional) - len(a.defaults)
    for i, arg in enumerate(positional):
        kind = _P.POSITIONAL_ONLY if i < len(a.posonlyargs) else _P.POSITIONAL_OR_KEYWORD
        default = value(a.defaults[i - first_default]) if i >= first_default else _P.empty
        params.append(_P(arg.arg, kind, default=default, annotation=note(arg.annotation)))
    if a.vararg is not None:
        params.append(_P(a.vararg.arg, _P.VAR_POSITIONAL, annotation=note(a.vararg.annotation)))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(_P(arg.arg, _P.KEYWORD_ONLY, default=_P.empty if d is None else value(d),
                         annotation=note(arg.annotation)))
    if a.kwarg is not None:
        params.append(_P(a.kwarg.arg, _P.VAR_KEYWORD, annotation=note(a.kwarg.annotation)))
    return inspect.Signature(params, return_annotation=note(node.returns))


_xp._set_signature_maker(signature_of)
_NB_FUNC = type(_xp.add)
_WRAPPERS = {}  # one per function, so that a name in two namespaces is one object (xp.linalg.matmul)


def wrap(namespace, names=None):
    """Replaces each nanobind function among ``namespace``'s values (or those of ``names``) by an
    ``xp._xp._Function`` over it."""
    for name in names if names is not None else list(namespace):
        f = namespace.get(name)
        if type(f) is _NB_FUNC:
            w = _WRAPPERS.get(f)
            if w is None:
                w = _WRAPPERS[f] = _xp._signed(f)
            namespace[name] = w
