"""Compiled joint types: the one registry through which a joint type, of the library or written
outside the package, gives the compiled engine its kinematics (RIGID.md, *Joint library*;
Featherstone Table 4.1).

A joint type declares a :class:`JointKernel` (with :func:`sko.engine.joint_type`, a
decorator on its :class:`~sko.bodies.joints.Joint` subclass): its ``nq``, ``nv``, how many
float constants it packs (:meth:`~sko.bodies.joints.Joint.compiled_parameters`), whether its
``S`` is constant with ``c_J = 0`` (:attr:`~sko.bodies.joints.Joint.constant_motion`), and up to
three numba functions on those constants ``p`` (float64; the joint's start at ``p[po]``) and on
its coordinates at offsets of larger vectors (no slices: the engine's hot path):

``kinematics(p, po, q, qo, v, vo, X, S, c) -> bool``
    ``X_J = rot(E) xlt(r)`` as ``(E, r)``: ``E`` into ``X[:3, :3]``, ``r`` into ``X[:3, 3]``;
    the motion subspace ``S(q)`` into ``S[:, :nv]``; ``c_J = S̊ ν`` into ``c[:6]``; for
    ``q = q[qo: qo + nq]``, ``ν = v[vo: vo + nv]``. The buffers come zeroed (write what is not
    zero). Returns False when ``q`` is outside the joint's domain.
``qdot(p, po, q, qo, v, vo, out, oo) -> bool`` (optional)
    ``q̇(q, ν)`` into ``out[oo: oo + nq]``; without it ``q̇ = ν`` (then ``nq = nv``).
``normalize(p, po, q, qo) -> bool`` (optional)
    ``q[qo: qo + nq]`` projected in place onto the configuration manifold.

The functions must be analytic in complex numbers — complex-step derivatives compile them for
complex128 too: ``np.sin``, ``np.sqrt``, arithmetic; no ``abs``, ``max``, ``math.*`` or
``.real``; and powers written as products (``x * x * x``): numba computes a complex ``x ** 3``
as ``exp(3 log x)``, whose rounding leaks into the imaginary part the complex step reads.
The engine reverses a joint (Featherstone Table 4.2) and composes it with its placement.

The library's joints are declared here too (:func:`library_joint`), with a code: the compiled
switch of :func:`sko.engine.joints.joint_kinematics_at` calls their functions inlined,
as fast as before. A joint type from outside the package gets the code :data:`ADDRESS`: its
functions are compiled on first use, for float64 and complex128, and called through their
addresses (:func:`~sko.engine.jit.native_address`), so it costs the compilation of
its own functions only and no edit of the library. Its functions run bounds-checked, on views of
exactly its own parameters and coordinates (and its own block of ``q̇``), so reading or writing
past them is an error, and its outputs are checked on every call (finite, nothing written outside
the ``(E, r)`` storage nor past ``S``'s ``nv`` columns, ``E`` a rotation, ``S`` of full column
rank); a state its kernel rejects is then answered by its Python kinematics, whose
:class:`~sko.errors.JointError` names the joint.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import from_dtype, njit, types
from numba.core.dispatcher import Dispatcher
from numba.extending import overload

from sko.engine.indexing import compiler_for
from sko.engine.jit import FAST_MATH, cached, native_address, native_caller
from sko.errors import JointError

__all__ = ["JointKernel", "library_joint", "ADDRESS", "PARAMETERS", "ADDRESSES", "KINDS", "kinematics_types",
           "qdot_types", "normalize_types", "call_kinematics", "call_qdot", "call_normalize", "complex_slot", "REGISTRY",
           "check_outputs"]

#: The code of every joint type from outside the library (called through its addresses).
ADDRESS = 100
#: The constants a joint packs at most (:meth:`~sko.bodies.joints.Joint.compiled_parameters`).
PARAMETERS = 10
#: Slots before a joint's parameters in its packed constants: the addresses of its kinematics
#: compiled for float64 and complex128 (zero for the library's joints).
ADDRESSES = 2
#: The functions a joint type may declare.
KINDS = ("kinematics", "qdot", "normalize")
#: Every joint type declared, by name (the library's first).
REGISTRY: dict[str, "JointKernel"] = {}

_F8 = types.Array(types.float64, 1, "C")


def _vector(dtype):
    return types.Array(from_dtype(np.dtype(dtype)), 1, "C")


def kinematics_types(dtype) -> tuple:
    """The numba types of a joint's ``kinematics`` for coordinates of ``dtype``."""
    a, m = _vector(dtype), types.Array(from_dtype(np.dtype(dtype)), 2, "C")
    return (_F8, types.int64, a, types.int64, a, types.int64, m, m, a)


def qdot_types(dtype) -> tuple:
    """The numba types of a joint's ``qdot``."""
    a = _vector(dtype)
    return (_F8, types.int64, a, types.int64, a, types.int64, a, types.int64)


def normalize_types(dtype) -> tuple:
    """The numba types of a joint's ``normalize``."""
    return (_F8, types.int64, _vector(dtype), types.int64)


_TYPES = {"kinematics": kinematics_types, "qdot": qdot_types, "normalize": normalize_types}
_DTYPES = (np.dtype(np.float64), np.dtype(np.complex128))


def _accepts(signature: Callable) -> Callable:
    """The call sites a kernel compiled by ``signature`` may be called from: the same types."""
    return lambda argtypes: any(argtypes == signature(d) for d in _DTYPES)


#: ``call_kinematics(address, (p, po, q, qo, v, vo, X, S, c))``: a joint type's kinematics at its
#: address; False when it rejects the state or raised. ``call_qdot``, ``call_normalize`` likewise.
call_kinematics = native_caller(types.boolean, False, _accepts(kinematics_types))
call_qdot = native_caller(types.boolean, False, _accepts(qdot_types))
call_normalize = native_caller(types.boolean, False, _accepts(normalize_types))


def complex_slot(x) -> int:
    """0 for a real ``x``, 1 for a complex one (a constant of each compiled kernel): which of a
    joint type's compiled kinematics a state of ``x``'s type calls."""
    return 1 if isinstance(x, complex) else 0


@overload(complex_slot, jit_options={"cache": True})
def _complex_slot(x):
    slot = 1 if isinstance(x, types.Complex) else 0
    return lambda x: slot


def _count(value, what: str, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low \
            or (high is not None and value > high):
        bound = f"{low} ≤ {what}" + ("" if high is None else f" ≤ {high}")
        raise JointError(f"joint type {name!r}: {what} must be an integer with {bound}, got {value!r}")
    return int(value)


class JointKernel:
    """A joint type's compiled kinematics, declared once (module docstring).

    Parameters
    ----------
    kinematics, qdot, normalize : numba ``njit`` functions or plain Python functions
        The functions of the module docstring (only their Python code is used); ``qdot`` is
        required when ``nq ≠ nv``.
    nq, nv : int
        The joint's numbers of position and velocity variables (``0 ≤ nv ≤ 6``).
    parameters : int
        How many float constants its functions read at ``p[po:]`` (at most :data:`PARAMETERS`).
    constant_motion : bool
        True when ``S`` is constant and ``c_J = 0``: derivatives then take the compiled
        analytic path; otherwise the complex step.
    name : str
        For messages and :data:`REGISTRY` (default: the kinematics function's name).
    code : int
        :data:`ADDRESS` for every joint type outside the library (:func:`library_joint` gives the
        others).
    """

    def __init__(self, kinematics: Callable, *, nq: int, nv: int, parameters: int = 0, qdot: Callable | None = None,
                 normalize: Callable | None = None, constant_motion: bool = False, name: str | None = None,
                 code: int = ADDRESS):
        functions = {"kinematics": kinematics, "qdot": qdot, "normalize": normalize}
        functions = {k: (f.py_func if isinstance(f, Dispatcher) else f) for k, f in functions.items() if f is not None}
        self.name = str(name or getattr(functions.get("kinematics"), "__qualname__", "joint"))
        for kind, f in functions.items():
            if not callable(f):
                raise JointError(f"joint type {self.name!r}: {kind} must be a function, got {f!r}")
        self.nq = _count(nq, "nq", self.name, 0)
        self.nv = _count(nv, "nv", self.name, 0, 6)
        self.parameters = _count(parameters, "parameters", self.name, 0, PARAMETERS)
        if self.nq != self.nv and "qdot" not in functions:
            raise JointError(f"joint type {self.name!r}: nq = {self.nq} differs from nv = {self.nv}, so it must "
                             f"declare a qdot function")
        self.code = int(code)
        self.constant_motion = bool(constant_motion)
        self.functions = functions
        self.has_qdot, self.has_normalize = "qdot" in functions, "normalize" in functions
        self._dispatchers: dict = {}
        self._addresses: dict = {}

    @property
    def library(self) -> bool:
        """True for the library's joint types (compiled into the engine's switch)."""
        return self.code != ADDRESS

    def dispatcher(self, kind: str):
        """``kind``'s function compiled (numba dispatcher, callable from Python too)."""
        d = self._dispatchers.get(kind)
        if d is None:
            # bounds-checked: an index past a buffer is an error naming the joint, never a write past it
            d = self._dispatchers[kind] = njit(fastmath=FAST_MATH, error_model="numpy", boundscheck=not self.library,
                                               pipeline_class=compiler_for(self.functions[kind]))(self.functions[kind])
            try:
                cached(d)
            except RuntimeError:  # no file to cache beside (code typed at a prompt): compiled per process
                pass
        return d

    def address(self, kind: str, dtype) -> int:
        """The address of ``kind``'s function compiled for coordinates of ``dtype`` (compiled,
        or loaded from the cache, on first use); :class:`~sko.errors.JointError` naming the joint
        type when it does not compile (a function that is not analytic fails for complex128)."""
        key = (kind, np.dtype(dtype))
        address = self._addresses.get(key)
        if address is None:
            try:
                address = native_address(self.dispatcher(kind), _TYPES[kind](dtype))
            except Exception as exc:  # numba's typing and lowering errors
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise JointError(f"joint type {self.name!r}: its {kind} function does not compile for "
                                 f"{np.dtype(dtype)} coordinates (numba: {first})") from None
            returns = self.dispatcher(kind).overloads[_TYPES[kind](dtype)].signature.return_type
            if types.unliteral(returns) != types.boolean:  # a forgotten `return True`: the caller reads a boolean
                raise JointError(f"joint type {self.name!r}: its {kind} function must return True or False on "
                                 f"every path, but returns {returns}")
            if not 0 < address < 2**53:  # stored exactly in a float64 constant
                raise JointError(f"joint type {self.name!r}: address of its {kind} function out of range")
            self._addresses[key] = address
        return address

    def addresses(self) -> np.ndarray:
        """The :data:`ADDRESSES` slots of the packed constants: the kinematics' addresses for
        float64 and complex128 (zeros for a library joint type)."""
        if self.library:
            return np.zeros(ADDRESSES)
        return np.array([float(self.address("kinematics", d)) for d in _DTYPES])

    # ------------------------------------------------------------------ Python calls
    def run_kinematics(self, joint, p: np.ndarray, q: np.ndarray, v: np.ndarray):
        """``(E, r, S, c)`` of ``joint`` at ``(q, ν)`` by the compiled function, called from
        Python, checked: finite, ``S`` of full column rank (:class:`~sko.errors.JointError`
        naming the joint otherwise)."""
        dtype = _dtype(joint, q, v)
        X, S, c = np.zeros((6, 6), dtype), np.zeros((6, 6), dtype), np.zeros(6, dtype)
        ok = self._call(joint, "kinematics", p, 0, q.astype(dtype), 0, v.astype(dtype), 0, X, S, c)
        if ok is not True:
            raise JointError(f"{joint}: its kinematics reject q = {q}" if ok is False else
                             f"{joint}: its kinematics function must return True or False, got {ok!r}")
        outside = X.copy()
        outside[:3, :4] = 0
        if outside.any():
            raise JointError(f"{joint}: its kinematics write X_J outside its (E, r) storage (E into X[:3, :3], "
                             f"r into X[:3, 3]; the rest of X stays zero: the engine forms rot(E) xlt(r)):\n{X}")
        if S[:, self.nv:].any():
            raise JointError(f"{joint}: its kinematics write S past its nv = {self.nv} columns:\n{S}")
        S = S[:, :self.nv]
        check_outputs(joint, X[:3, :4], S, c)
        return X[:3, :3], X[:3, 3], S, c

    def run_qdot(self, joint, p: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``q̇`` of ``joint`` by its compiled ``qdot``, called from Python, checked."""
        dtype = _dtype(joint, q, v)
        out = np.zeros(self.nq, dtype)
        ok = self._call(joint, "qdot", p, 0, q.astype(dtype), 0, v.astype(dtype), 0, out, 0)
        if ok is not True or not _finite(out):
            raise JointError(f"{joint}: its qdot function rejects q = {q}, ν = {v}" if ok is not True
                             else f"{joint}: its qdot function gives non-finite q̇ = {out}")
        return out

    def run_normalize(self, joint, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``q`` projected by ``joint``'s compiled ``normalize``, called from Python, checked."""
        out = np.array(q, dtype=_dtype(joint, q, q))
        ok = self._call(joint, "normalize", p, 0, out, 0)
        if ok is not True or not _finite(out):
            raise JointError(f"{joint}: its normalize function rejects q = {q}" if ok is not True
                             else f"{joint}: its normalize function gives non-finite q = {out}")
        return out

    def _call(self, joint, kind: str, *arguments):
        try:
            self.address(kind, arguments[2].dtype)
            return self.dispatcher(kind)(*arguments)
        except JointError:
            raise
        except Exception as exc:  # the function's own error (numba re-raises it), or a typing error
            raise JointError(f"{joint}: its {kind} function failed: {type(exc).__name__}: {exc}") from None

    def __repr__(self) -> str:
        return f"JointKernel({self.name}, nq={self.nq}, nv={self.nv})"


def library_joint(code: int, name: str, kinematics: Callable, *, nq: int, nv: int, parameters: int,
                  qdot: Callable | None = None, normalize: Callable | None = None,
                  constant_motion: bool = False) -> JointKernel:
    """Declare a joint type of the library (compiled into the engine's switch under ``code``)."""
    kernel = JointKernel(kinematics, nq=nq, nv=nv, parameters=parameters, qdot=qdot, normalize=normalize,
                         constant_motion=constant_motion, name=name, code=code)
    REGISTRY[name] = kernel
    return kernel


def _dtype(joint, q: np.ndarray, v: np.ndarray) -> np.dtype:
    if q.dtype == object or v.dtype == object:
        raise JointError(f"{joint}: its kinematics are compiled numba functions, which take float or complex "
                         "coordinates, not symbols")
    return np.dtype(np.complex128 if np.iscomplexobj(q) or np.iscomplexobj(v) else np.float64)


def _finite(x: np.ndarray) -> bool:
    return bool(np.isfinite(x).all())


def check_outputs(joint, Er: np.ndarray, S: np.ndarray, c: np.ndarray) -> None:
    """:class:`~sko.errors.JointError` naming ``joint`` unless ``(E, r)``, ``S`` and ``c`` are
    finite, ``E`` is a rotation (``E Eᵀ = I`` within ``1e-9``, ``det E > 0``; for complex
    coordinates in complex arithmetic, which an analytic rotation keeps) and
    ``S`` has full column rank (its real part; singular values above ``1e-9`` of the largest, or
    of 1)."""
    for what, x in (("X_J", Er), ("S", S), ("c_J", c)):
        if not _finite(x):
            raise JointError(f"{joint}: its kinematics give non-finite {what}:\n{x}")
    E = Er[:, :3]
    error = np.abs(E @ E.T - np.eye(3)).max()
    if not error <= 1e-9:
        raise JointError(f"{joint}: its kinematics give an E = X_J[:3, :3] that is not a rotation: E Eᵀ differs "
                         f"from I by {error:.3g}:\n{E}")
    if not np.real(np.linalg.det(E)) > 0:
        raise JointError(f"{joint}: its kinematics give an E = X_J[:3, :3] that is a reflection (det E = "
                         f"{np.real(np.linalg.det(E)):.6g}), not a rotation:\n{E}")
    if S.shape[1]:
        sigma = np.linalg.svd(np.real(S), compute_uv=False)
        if sigma[-1] <= 1e-9 * max(sigma[0], 1.0):
            raise JointError(f"{joint}: its motion subspace S (6 × {S.shape[1]}) is rank-deficient "
                             f"(singular values {sigma})")
