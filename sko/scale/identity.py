"""A system's identity: :func:`model_identity`, a hash of a canonical description of what it is.

A result store records which model computed it (:mod:`sko.scale.stores`): two systems built
alike (the same body types, names, parents, joints, inertias, gravity, tendons — in any process,
on any machine) have the same identity; changing any number of them changes it. The description
is the system's pickled state (:meth:`~sko.systems.multibody.MultibodySystem.__getstate__`: what
it derives on use is left out) walked recursively: numbers by their exact ``repr``, arrays by
dtype, shape and bytes, dicts in their order, sets sorted, objects by their class and state,
functions (a user-defined joint's maps) by their module, name and code. Nothing depends on an
object's address, so the hash is stable across processes.
"""

from __future__ import annotations

import hashlib
import types
import numpy as np

__all__ = ["model_identity", "description"]


def model_identity(system) -> str:
    """The SHA-256 (hex) of :func:`description` of ``system``."""
    return hashlib.sha256(description(system).encode()).hexdigest()


def description(system) -> str:
    """A canonical text describing ``system`` (module docstring)."""
    parts: list[str] = []
    _describe(system, parts, set())
    return "".join(parts)


def _describe(x, out: list, open_: set) -> None:
    """Append the description of ``x`` to ``out``; ``open_`` holds the ids of the objects being
    described (a reference back to one of them is written by its class only)."""
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes, np.generic)):
        out.append(f"{type(x).__name__}:{x!r};")
        return
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            out.append(f"objects{x.shape}[")
            for item in x.ravel():
                _describe(item, out, open_)
            out.append("]")
        else:
            out.append(f"array:{x.dtype.str}{x.shape}:{hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()};")
        return
    if isinstance(x, slice):
        out.append(f"slice({x.start},{x.stop},{x.step});")
        return
    if isinstance(x, type):
        out.append(f"type:{x.__module__}.{x.__qualname__};")
        return
    if isinstance(x, types.ModuleType):
        out.append(f"module:{x.__name__};")
        return
    if isinstance(x, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)) or hasattr(x, "py_func"):
        _function(x, out, open_)
        return
    key = id(x)
    if key in open_:
        out.append(f"back:{type(x).__qualname__};")
        return
    open_.add(key)
    try:
        if isinstance(x, (dict, types.MappingProxyType)):
            out.append(f"{type(x).__qualname__}{{")
            for k, v in x.items():
                _describe(k, out, open_)
                out.append("=")
                _describe(v, out, open_)
            out.append("}")
        elif isinstance(x, (list, tuple)):
            out.append(f"{type(x).__qualname__}[")
            for item in x:
                _describe(item, out, open_)
            out.append("]")
        elif isinstance(x, (set, frozenset)):
            items = sorted(description_of(item, open_) for item in x)
            out.append(f"{type(x).__qualname__}{{{','.join(items)}}}")
        else:
            cls = type(x)
            out.append(f"object:{cls.__module__}.{cls.__qualname__}(")
            getstate = getattr(x, "__getstate__", None)
            state = getstate() if getstate is not None else getattr(x, "__dict__", None)
            _describe(state, out, open_)
            out.append(")")
    finally:
        open_.discard(key)


def description_of(x, open_: set) -> str:
    """The description of one item, as a string (to sort a set's items)."""
    parts: list[str] = []
    _describe(x, parts, open_)
    return "".join(parts)


def _function(f, out: list, open_: set) -> None:
    """A function by module, qualified name and code (its bytecode, constants and names; the
    values it closes over); a bound method by its function (not the object it is bound to)."""
    f = getattr(f, "py_func", f)  # a numba dispatcher: the Python function it compiles
    f = getattr(f, "__func__", f)
    out.append(f"function:{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', type(f).__qualname__)}")
    code = getattr(f, "__code__", None)
    if code is not None:
        out.append(f":{hashlib.sha256(code.co_code).hexdigest()}:{code.co_names!r}")
        _describe(tuple(c for c in code.co_consts if not isinstance(c, types.CodeType)), out, open_)
        for cell in getattr(f, "__closure__", None) or ():
            try:
                _describe(cell.cell_contents, out, open_)
            except ValueError:  # an empty cell
                out.append("empty;")
    out.append(";")
