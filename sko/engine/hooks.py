"""Compiled hooks of a body type: its hinge force and its ``q̇`` map, beside its compiled state
(BODIES.md, *The contract for a new body type*).

A body type's :class:`~sko.bodies.contract.CompiledState` may name, besides its state kernel,
registered numba kernels for the optional parts of the contract that would otherwise run in
Python at every state. Each reads the body's own coordinates and the same packed ``constants``
as its state kernel, and returns True (False: the state is outside its domain):

* ``hinge_force(q, v, constants, out) -> bool`` writes the body's hinge force (``n_k``
  entries, :meth:`~sko.bodies.contract.BodyType.hinge_force`: a joint spring ``κ q``, a damper
  ``c θ̇``) into ``out``. The compiled requests add it where the reference path does:
  ``T = ℳ θ̈ + 𝒞 + hinge`` and ``θ̈ = ℳ⁻¹(T − 𝒞 − hinge)`` (SKO.md §11), so one state, batches
  and compiled rollouts take it with no Python per state;
* ``qdot(q, v, constants, out) -> bool`` writes ``q̇`` (``q_size`` entries) from ``θ̇``
  (:meth:`~sko.bodies.contract.BodyType.qdot`), and ``normalize(q, constants) -> bool``
  projects ``q`` onto the configuration manifold in place
  (:meth:`~sko.bodies.contract.BodyType.normalize`): the compiled rollout's coordinate table
  calls them (:mod:`sko.engine.rollout`).

``q``, ``v`` and ``out`` are 1-D arrays of the state's scalar type (float64, or complex128 for
complex-step derivatives: keep the arithmetic analytic), ``constants`` float64. The Python
methods stay the definition (the reference path and the checks call them); a hook without the
Python method it mirrors is an error. A hook is compiled for a scalar type on first use, apart
from the engine, with its indexing bounds-checked, and must return a boolean (checked when it
is compiled); a hook that returns False, raises (an index past its arrays too) or writes a
value that is not finite is reported naming its body, with the kernel's own message.

>>> @hinge_force_kernel
... def spring(q, v, constants, out):
...     out[0] = constants[1] * q[0]
...     return True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import from_dtype, njit, types
from numba.core.dispatcher import Dispatcher

from sko.engine.borrow import borrowed
from sko.engine.jit import FAST_MATH, cached, call_state, kernel, native_address
from sko.bodies.contract import BodyError, BodyType
from sko.engine.state_kernels import Row
from sko.graphs.errors import NonFiniteError

__all__ = ["HookKernel", "hinge_force_kernel", "qdot_kernel", "normalize_kernel", "CompiledHooks", "compiled_hooks",
           "hook_address", "hinge_force_at", "qdot_at", "normalize_at", "add_hinge_forces", "hinge_failure"]

#: each hook by the method it mirrors, and its signature (module docstring)
_KINDS = {"hinge_force": "hinge_force(q, v, constants, out)", "qdot": "qdot(q, v, constants, out)",
          "normalize": "normalize(q, constants)"}


def _arguments(kind: str, dtype) -> tuple:
    """The numba types of a hook's arguments for states of ``dtype``."""
    x, c = types.Array(from_dtype(np.dtype(dtype)), 1, "C"), types.Array(types.float64, 1, "C")
    return (x, c) if kind == "normalize" else (x, x, c, x)


class HookKernel:
    """A body type's compiled hinge force, ``q̇`` map or normalisation (module docstring),
    registered by :func:`hinge_force_kernel`, :func:`qdot_kernel` or :func:`normalize_kernel`.

    Parameters
    ----------
    function : a numba ``njit`` function or a plain Python function
        The hook; only its Python code is used, compiled here per scalar type.
    kind : ``"hinge_force"``, ``"qdot"`` or ``"normalize"``
    name : str
        For messages (default: the function's name).
    """

    def __init__(self, function: Callable, kind: str, name: str | None = None):
        if kind not in _KINDS:
            raise BodyError(f"a hook kernel is one of {', '.join(_KINDS)}, got {kind!r}")
        py_func = function.py_func if isinstance(function, Dispatcher) else function
        if not callable(py_func):
            raise BodyError(f"a {kind} kernel must be a function, got {function!r}")
        self.kind = kind
        self.name = name or getattr(py_func, "__qualname__", repr(py_func))
        # with numba's Python wrapper: a failure is re-run from Python to give the kernel's own
        # message; bounds checked: a write past ``out`` is an error, not memory of another buffer
        self.dispatcher = njit(fastmath=FAST_MATH, error_model="numpy", boundscheck=True)(py_func)
        try:
            cached(self.dispatcher)
        except RuntimeError:  # no file to cache beside (code typed at a prompt): compiled per process
            pass
        self._addresses: dict = {}

    def compiled(self, dtype) -> tuple:
        """The argument types for ``dtype``, compiled (or loaded from the cache) and checked: a
        :class:`BodyError` naming the hook for code numba cannot compile for them (a wrong number
        of parameters, ``math.sqrt`` of a complex state) or a return that is not a boolean."""
        argtypes = _arguments(self.kind, dtype)
        try:
            self.dispatcher.compile(argtypes)
        except Exception as error:  # numba's typing errors: name the hook, keep numba's first lines
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise BodyError(f"{self.kind} kernel {self.name!r} does not compile for {np.dtype(dtype)} states as "
                            f"{_KINDS[self.kind]} -> bool: {first}") from None
        returned = types.unliteral(self.dispatcher.overloads[argtypes].signature.return_type)
        if returned != types.boolean:
            raise BodyError(f"{self.kind} kernel {self.name!r} must return a boolean (True, or False for a state "
                            f"outside its domain), but returns {returned}")
        return argtypes

    def address(self, dtype) -> int:
        """The address of the hook compiled for ``dtype`` (checked: :meth:`compiled`)."""
        dtype = np.dtype(dtype)
        address = self._addresses.get(dtype)
        if address is None:
            address = self._addresses[dtype] = native_address(self.dispatcher, self.compiled(dtype))
        return address

    def __repr__(self) -> str:
        return f"HookKernel({self.kind}: {self.name})"


def _decorator(kind: str):
    def register(function: Callable | None = None, *, name: str | None = None):
        if function is None:
            return lambda f: HookKernel(f, kind, name)
        return HookKernel(function, kind, name)

    register.__name__ = f"{kind}_kernel"
    register.__doc__ = (f"Register ``function`` as a compiled ``{_KINDS[kind]} -> bool`` (module docstring); a "
                        f"decorator, with or without ``name=``.")
    return register


hinge_force_kernel = _decorator("hinge_force")
qdot_kernel = _decorator("qdot")
normalize_kernel = _decorator("normalize")


class CompiledHooks:
    """The checked hooks of one body: ``hinge_force``, ``qdot``, ``normalize`` (each a
    :class:`HookKernel` or None) and its ``constants`` (float64)."""

    def __init__(self, hinge_force, qdot, normalize, constants: np.ndarray):
        self.hinge_force, self.qdot, self.normalize = hinge_force, qdot, normalize
        self.constants = constants

    @property
    def coordinates(self) -> bool:
        """Whether the body's ``q̇`` map and normalisation run compiled (those its type defines)."""
        return self.qdot is not None or self.normalize is not None


def compiled_hooks(body, state) -> CompiledHooks | None:
    """The hooks a body's checked :class:`~sko.bodies.contract.CompiledState` names, checked:
    each a :class:`HookKernel` of its kind mirroring a method the body's type defines (the
    reference path needs it), and every method of the coordinates its type defines (``qdot``,
    ``normalize``) with a hook if any has one; None without hooks. A :class:`BodyError` naming
    the body otherwise."""
    if state is None:
        return None
    hooks = {kind: getattr(state, kind, None) for kind in _KINDS}
    if all(h is None for h in hooks.values()):
        return None
    what = f"body {body.name!r} ({type(body).__name__})"
    for kind, hook in hooks.items():
        if hook is None:
            continue
        if not isinstance(hook, HookKernel) or hook.kind != kind:
            raise BodyError(f"{what}: the {kind} of its compiled state must be a {kind} kernel "
                            f"(sko.engine.hooks.{kind}_kernel), got {hook!r}")
        if getattr(type(body), kind) is getattr(BodyType, kind):
            raise BodyError(f"{what}: its compiled state has a {kind} kernel but its type defines no {kind}() "
                            f"(the reference path and the checks need the Python method too)")
    if hooks["qdot"] is not None or hooks["normalize"] is not None:
        for kind in ("qdot", "normalize"):
            if hooks[kind] is None and getattr(type(body), kind) is not getattr(BodyType, kind):
                raise BodyError(f"{what}: its compiled state has a compiled q̇ map or normalisation but no {kind} "
                                f"kernel, though its type defines {kind}()")
        if type(body).qdot is BodyType.qdot and body.q_size != body.dof_size:
            raise BodyError(f"{what}: q_size {body.q_size} ≠ dof_size {body.dof_size} needs a qdot kernel")
    return CompiledHooks(hooks["hinge_force"], hooks["qdot"], hooks["normalize"],
                         np.array(state.constants, dtype=np.float64, order="C"))  # own, writeable: the compiled types


def hook_address(body, hook: HookKernel, dtype) -> int:
    """:meth:`HookKernel.address`, its errors naming ``body``."""
    try:
        return hook.address(dtype)
    except BodyError as error:
        raise BodyError(f"body {body.name!r} ({type(body).__name__}): {error}") from None


# ----------------------------------------------------------------------------- from Python
def _run(hook: HookKernel, what: str, arguments: tuple) -> None:
    """Run ``hook`` on ``arguments`` from Python (its compiled code): a :class:`BodyError`
    naming ``what`` when it raises (its own message kept) or returns False."""
    try:
        hook.compiled(arguments[0].dtype)
    except BodyError as error:
        raise BodyError(f"{what}: {error}") from None
    try:
        ok = hook.dispatcher(*arguments)
    except Exception as error:
        raise BodyError(f"the compiled {hook.kind} of {what} ({hook.name}) raised {type(error).__name__}: "
                        f"{error}") from None
    if not ok:
        raise BodyError(f"the compiled {hook.kind} of {what} ({hook.name}) returned False (a state outside its "
                        f"domain) at q = {arguments[0]}")


def _finite(out: np.ndarray, hook: HookKernel, what: str, q) -> np.ndarray:
    if not np.isfinite(out).all():
        raise NonFiniteError(f"the compiled {hook.kind} of {what} ({hook.name}) wrote a value that is not finite "
                             f"(NaN or infinity) at q = {q}: {out}")
    return out


def _state(x, dtype) -> np.ndarray:
    return np.array(x, dtype=dtype, copy=True, order="C")  # the hook's own copy: the caller's arrays stay as they are


def _dtype(*xs) -> np.dtype:
    return np.dtype(np.complex128 if any(np.iscomplexobj(x) for x in xs) else np.float64)


def hinge_force_at(body, hooks: CompiledHooks, q, v) -> np.ndarray:
    """The body's compiled hinge force at its own ``q``, ``v`` (float64 or complex128), run from
    Python; errors name the body (module docstring)."""
    dtype, what = _dtype(q, v), f"body {body.name!r} ({type(body).__name__})"
    q, v = _state(q, dtype), _state(v, dtype)
    out = np.zeros(body.dof_size, dtype=dtype)
    _run(hooks.hinge_force, what, (q, v, hooks.constants, out))
    return _finite(out, hooks.hinge_force, what, q)


def qdot_at(body, hooks: CompiledHooks, q, v) -> np.ndarray:
    """The body's compiled ``q̇`` at its own ``q``, ``v``, run from Python (``θ̇`` copied when its
    type keeps ``q̇ = θ̇``)."""
    dtype, what = _dtype(q, v), f"body {body.name!r} ({type(body).__name__})"
    q, v = _state(q, dtype), _state(v, dtype)
    if hooks.qdot is None:
        return v
    out = np.zeros(body.q_size, dtype=dtype)
    _run(hooks.qdot, what, (q, v, hooks.constants, out))
    return _finite(out, hooks.qdot, what, q)


def normalize_at(body, hooks: CompiledHooks, q) -> np.ndarray:
    """The body's compiled normalisation of its own ``q``, run from Python (a copy)."""
    dtype, what = _dtype(q), f"body {body.name!r} ({type(body).__name__})"
    q = _state(q, dtype)
    if hooks.normalize is None:
        return q
    given = q.copy()
    _run(hooks.normalize, what, (q, hooks.constants))
    return _finite(q, hooks.normalize, what, given)


def hinge_failure(system, name, hooks: CompiledHooks, q: np.ndarray, v: np.ndarray):
    """Raise the error of a state where the compiled hinge force of body ``name`` failed (``q``,
    ``v``: the system's): the body's own from its Python ``hinge_force`` if it raises there or
    overflows, else the compiled hook's, run from Python, with the kernel's message."""
    body = system.body(name)
    qs, vs = q[system.q_slices[name]], v[system.dof_slices[name]]
    with np.errstate(over="ignore", invalid="ignore"):
        reference = body.hinge_force(qs.copy(), vs.copy())
    if reference is not None and not np.isfinite(np.asarray(reference, dtype=complex)).all():
        raise NonFiniteError(f"the hinge force of body {name!r} ({type(body).__name__}) overflows (NaN or infinity) "
                             f"at q = {qs}")
    hinge_force_at(body, hooks, qs, vs)
    raise BodyError(f"the compiled hinge_force of body {name!r} ({type(body).__name__}) failed at a state where it "
                    f"succeeds when run alone: q = {qs}")


# ----------------------------------------------------------------------------- the engine's side
@kernel
def add_hinge_forces(rows, reals, arena, v0, f, sign):
    """``f += sign · hinge`` (``f``: ``nv`` entries; ``v0``: where ``θ̇`` starts in the arena)
    for every body of the state table with a compiled hinge force (column ``Row.HINGE``), each
    written into the arena's scratch first. Returns −1, or the first row whose hook returned
    False, raised, or wrote a value that is not finite."""
    rows, reals, arena, f = borrowed(rows), borrowed(reals), borrowed(arena), borrowed(f)
    for k in range(rows.shape[0]):
        row = rows[k]
        if row[Row.HINGE] == 0:
            continue
        n, o, c = row[Row.NV], row[Row.SCRATCH], row[Row.CONSTANTS]
        out = arena[o: o + n]
        for i in range(n):
            out[i] = 0
        if not call_state(row[Row.HINGE], (arena[row[Row.Q]: row[Row.Q] + row[Row.NQ]],
                                           arena[row[Row.V]: row[Row.V] + n],
                                           reals[c: c + row[Row.CONSTANTS_SIZE]], out)):
            return k
        j = row[Row.V] - v0
        for i in range(n):
            if not np.isfinite(out[i]):
                return k
            f[j + i] += sign * out[i]
    return -1
