"""A system's identity: :func:`model_identity`, a hash of a canonical description of what it is.

A result store records which model computed it (:mod:`sko.scale.stores`): two systems built
alike (the same body types, names, parents, joints, inertias, gravity, tendons — in any process,
on any machine) have the same identity; changing any number of them changes it. The description
is the system's pickled state (:meth:`~sko.systems.multibody.MultibodySystem.__getstate__`: what
it derives on use is left out) walked recursively: numbers by their exact ``repr``, arrays by
dtype, shape and bytes, dicts in their order, sets sorted, objects by their class and state (or
what they pickle as, for one without state of its own such as ``functools.partial``), functions
(a user-defined joint's maps) by what they compute with: module, name, code (nested functions'
too), defaults, the values they close over, the object a method is bound to, and (a user's
function) the globals it reads that are numbers, arrays, containers or functions of its own
module. A user's class (a joint or body type; not one of this package or of an installed
library, whose versions stand for them) counts its methods, as functions. Nothing
depends on an object's address, so the hash is stable across processes.
"""

from __future__ import annotations

import hashlib
import os
import site
import sys
import sysconfig
import types
from functools import lru_cache

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
        _class(x, out, open_)
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
            out.append("object:")
            _class(cls, out, open_)
            out.append("(")
            getstate = getattr(x, "__getstate__", None)
            state = getstate() if getstate is not None else getattr(x, "__dict__", None)
            if not state:  # no state of its own: what it pickles as (functools.partial's function and arguments)
                state = _pickled_as(x, state)
            _describe(state, out, open_)
            out.append(")")
    finally:
        open_.discard(key)


def _pickled_as(x, state):
    """The arguments and state ``x`` pickles as, where its class says (``__reduce__``), else ``state``."""
    cls = type(x)
    if cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__:
        return state
    try:
        return x.__reduce_ex__(4)[1:3]
    except Exception:  # noqa: BLE001 - an object that does not pickle: its class and no state
        return state


def description_of(x, open_: set) -> str:
    """The description of one item, as a string (to sort a set's items)."""
    parts: list[str] = []
    _describe(x, parts, open_)
    return "".join(parts)


#: the packages whose code the package version stands for, wherever they are installed
_LIBRARIES = ("sko", "graphs", "algorithms")


@lru_cache(maxsize=None)
def _library(module: str) -> bool:
    """Whether ``module`` is library code, not a user's: this package's, or a module of an installed
    distribution or of Python itself (its file under the interpreter's or an environment's
    folders). A library's classes count by name and its functions without the globals they
    read: their versions stand for them (a sympy expression's class is not described method by
    method)."""
    top = module.partition(".")[0]
    if top in _LIBRARIES or top in sys.builtin_module_names:
        return True
    path = getattr(sys.modules.get(top), "__file__", None)
    if not path:
        return top != "__main__"
    path = os.path.realpath(path)
    roots = {os.path.realpath(p) for p in (sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"],
                                           sysconfig.get_paths()["platlib"], *site.getsitepackages())}
    return any(path.startswith(root + os.sep) for root in roots) or "site-packages" in path


def _class(cls: type, out: list, open_: set) -> None:
    """A class by module and name; a user's (not :func:`_library`) also by its methods (and those
    of its bases that are a user's), as functions."""
    out.append(f"type:{cls.__module__}.{cls.__qualname__}")
    own = [c for c in cls.__mro__ if not _library(c.__module__)]
    if own and id(cls) not in open_:
        open_.add(id(cls))
        try:
            for c in own:
                methods = {k: v for k, v in vars(c).items()
                           if isinstance(v, (types.FunctionType, classmethod, staticmethod, property))}
                _describe({k: getattr(v, "__func__", None) or getattr(v, "fget", v) for k, v in sorted(methods.items())},
                          out, open_)  # a method's function, a property's getter
        finally:
            open_.discard(id(cls))
    out.append(";")


def _function(f, out: list, open_: set) -> None:
    """A function by module, qualified name and what it computes with (module docstring); a bound
    method by its function and the object it is bound to."""
    f = getattr(f, "py_func", f)  # a numba dispatcher: the Python function it compiles
    bound = getattr(f, "__self__", None)
    if isinstance(f, types.MethodType) or (bound is not None and not isinstance(bound, types.ModuleType)):
        out.append("bound:")
        _describe(bound, out, open_)
    f = getattr(f, "__func__", f)
    out.append(f"function:{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', type(f).__qualname__)}")
    code = getattr(f, "__code__", None)
    if code is not None and id(f) not in open_:  # a recursive function refers back to itself
        open_.add(id(f))
        try:
            _code(code, out, open_)
            _describe((getattr(f, "__defaults__", None), getattr(f, "__kwdefaults__", None)), out, open_)
            for cell in getattr(f, "__closure__", None) or ():
                try:
                    _describe(cell.cell_contents, out, open_)
                except ValueError:  # an empty cell
                    out.append("empty;")
            if not _library(getattr(f, "__module__", None) or ""):
                _globals(f, code, out, open_)
        finally:
            open_.discard(id(f))
    out.append(";")


def _code(code: types.CodeType, out: list, open_: set) -> None:
    """A code object by its bytecode, names and constants, nested code objects included."""
    out.append(f"code:{hashlib.sha256(code.co_code).hexdigest()}:{code.co_names!r}")
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code(c, out, open_)
        else:
            _describe(c, out, open_)


def _global_names(code: types.CodeType) -> set:
    """The names ``code`` and the code nested in it read (globals among them)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


_DATA = (type(None), bool, int, float, complex, str, bytes, np.generic, np.ndarray, tuple, list, dict, set, frozenset)


def _globals(f, code: types.CodeType, out: list, open_: set) -> None:
    """The globals ``f`` reads that are data (numbers, arrays, containers) or functions of its
    own module, by name and value (a module, a class or an object counts by its name only)."""
    scope = getattr(f, "__globals__", {})
    module = getattr(f, "__module__", None)
    for name in sorted(_global_names(code)):
        if name not in scope:
            continue
        value = scope[name]
        if isinstance(value, _DATA) or (isinstance(value, types.FunctionType) and value.__module__ == module):
            out.append(f"global:{name}=")
            _describe(value, out, open_)
