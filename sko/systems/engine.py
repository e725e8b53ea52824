"""The compiled path behind a system's dynamics methods, for one state or a batch of states.

:func:`engine` gives a system's :class:`Engine` (packed once, on first use). Its methods take
what the system's methods take — ``q``, ``θ̇``, ``θ̈`` or ``T`` as 1-D vectors or with a leading
batch axis ``(B, n)`` — check them (the same errors as the reference path, before any compiled
code runs) and return the results with the same leading axis, or ``NotImplemented`` when the
reference path must answer: inputs that are not float64/complex128 (sympy and other object
arrays, fractions), or the reference backend forced by :func:`use_backend`.

A batch is computed without a Python loop over states when every body type has a compiled
state (parallel over chunks of states in numba's threads); otherwise the bodies without one
run their Python ``at_state`` per state and only the recursions are compiled.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import numpy as np

from sko.arrays import checked_array
from sko.graphs.errors import DimensionError, NotPositiveDefiniteError
from sko.systems import compiled as cc
from sko.systems.state_layout import StateLayout

__all__ = ["Engine", "engine", "use_backend", "backend"]

_F8 = np.dtype(np.float64)
_FAST = (_F8, np.dtype(np.complex128))
_BACKEND = ["compiled"]


def backend() -> str:
    """``"compiled"`` (default) or ``"reference"``: which path the systems' methods take."""
    return _BACKEND[0]


@contextlib.contextmanager
def use_backend(name: str):
    """Force a backend inside a ``with`` block (``"reference"`` for checking and teaching)."""
    if name not in ("compiled", "reference"):
        raise ValueError(f"backend must be 'compiled' or 'reference', got {name!r}")
    old = _BACKEND[0]
    _BACKEND[0] = name
    try:
        yield
    finally:
        _BACKEND[0] = old


def engine(system) -> "Engine":
    """The :class:`Engine` of a :class:`~sko.systems.multibody.MultibodySystem` (cached on it)."""
    e = system.__dict__.get("_engine")
    if e is None:
        e = system.__dict__["_engine"] = Engine(system)
    return e


class Engine:
    """Compiled dynamics of one system (module docstring)."""

    def __init__(self, system):
        self.system = system
        self.nq, self.nv = system.q_size, system.dof_size
        self._direct = False
        self.coordinates_are_velocities = False
        self.layout = None  # the reference path answers: no body, or symbolic parameters
        if not system.bodies:
            return
        try:
            self.layout = L = StateLayout(system)
        except (TypeError, ValueError):  # sympy gravity or inertias
            return
        self._static = (L.ints, L.reals, L.order, L.flat.layout, L.riccati_offsets)
        self.coordinates_are_velocities = _coordinates_are_velocities(system, L)
        self._direct = L.all_compiled and not L._hinge_forces
        self._qshape, self._vshape = (self.nq,), (self.nv,)
        self._zeros, self._empty = np.zeros(self.nv), np.zeros(0)

    # ------------------------------------------------------------------ input checks
    def _vector(self, x, name: str, size: int, symbol: str):
        """``x`` as a float64/complex128 array of shape ``(size,)`` or ``(B, size)``, or None when
        the reference path must take it (other scalar types); the reference path's errors."""
        if not (type(x) is np.ndarray and x.dtype in _FAST and x.ndim in (1, 2) and x.shape[-1] == size
                and np.isfinite(x).all()):
            x = checked_array(x, (1, 2), name)
            if x.shape[-1] != size:
                raise DimensionError(f"{name} has length {x.shape[-1]}, expected {symbol} = {size}")
            if x.dtype not in _FAST:
                if x.dtype.kind in "biuf":
                    x = x.astype(np.float64)
                else:
                    return None
        return x

    def _inputs(self, q, qd, x=None, xname: str = ""):
        """Checked ``(Q, QD, X, batched)`` with a leading batch axis, one scalar type; None for
        the reference path."""
        if _BACKEND[0] != "compiled" or self.layout is None:
            return None
        Q = self._vector(q, "q", self.nq, "nq")
        if Q is None:
            return None
        batched = Q.ndim == 2
        QD = None if qd is None else self._vector(qd, "v", self.nv, "nv")
        X = None if x is None else self._vector(x, xname, self.nv, "nv")
        if (qd is not None and QD is None) or (x is not None and X is None):
            return None
        B = Q.shape[0] if batched else 1
        dtype = np.result_type(*(v for v in (Q, QD, X) if v is not None))
        out = []
        for v, n, name in ((Q, self.nq, "q"), (QD, self.nv, "v"), (X, self.nv, xname)):
            if v is None:
                v = np.zeros((B, n) if name != xname else (B, 0), dtype=dtype)
            elif (v.ndim == 2) != batched or (batched and v.shape[0] != B):
                raise DimensionError(f"{name} has shape {v.shape} but q has shape {Q.shape}: give every argument "
                                     f"the same leading batch axis, or none")
            elif v.ndim == 1:
                v = v[None]
            out.append(np.ascontiguousarray(v, dtype=dtype))
        return (*out, batched)

    # ------------------------------------------------------------------ requests
    def _one(self, op: int, q, v, x, xsize: int):
        """The common call answered with no Python-side checks beyond types and shapes: 1-D
        float64 arrays, no external forces, every body compiled. None when it does not apply
        (or an input is not finite: the full checks then report it)."""
        if not (self._direct and type(q) is np.ndarray and q.dtype == _F8 and q.shape == self._qshape
                and (v is None or (type(v) is np.ndarray and v.dtype == _F8 and v.shape == self._vshape))
                and (x is None or (type(x) is np.ndarray and x.dtype == _F8 and x.shape == (xsize,)))
                and _BACKEND[0] == "compiled"):
            return None
        out, status = cc.evaluate_one(op, *self._static, q, self._zeros if v is None else v,
                                      self._empty if x is None else x, np.empty(self.layout.size), True)
        if status == -2:
            return None
        self._check(status, q)
        return out

    def _request(self, op: int, Q, QD, X, forces: Mapping | None):
        L = self.layout
        static = self._static
        forces = self.system.external_forces(forces)
        if L.all_compiled and not forces and Q.shape[0] == 1:
            a = np.empty(L.size, dtype=Q.dtype)
            out, status = cc.evaluate_one(op, *static, Q[0], QD[0], X[0], a, True)
            self._check(status, Q[0])
            return out[None]
        if L.all_compiled and not forces:
            out, status = cc.evaluate_batch(op, *static, Q, QD, X, np.empty((1, L.size), dtype=Q.dtype), True)
        else:
            A = L.fill(Q, QD)
            self._apply_forces(A, forces)
            if Q.shape[0] == 1:
                out, status = cc.evaluate_one(op, *static, Q[0], QD[0], X[0], A[0], False)
                out, status = out[None], np.array([status])
            else:
                out, status = cc.evaluate_batch(op, *static, Q, QD, X, A, False)
        bad = np.flatnonzero(status >= 0)
        if bad.size:
            self._check(int(status[bad[0]]), Q[bad[0]])
        return out

    def _check(self, status: int, q: np.ndarray) -> None:
        if status < 0:
            return
        N = len(self.layout.bodies)
        if status < N:
            self.layout._raise_joint(status, q)
        raise NotPositiveDefiniteError(f"hinge inertia D = H P H* of body {self.layout.bodies[status - N]!r} is not "
                                       f"positive definite")

    def _apply_forces(self, A: np.ndarray, forces: dict) -> None:
        """``b(k) −= Γ_kᵀ ᵏX_0^* f^x_k`` for every state (MultibodySystem's module docstring)."""
        L = self.layout
        for k, f in forces.items():
            i = L.bodies.index(k)
            m = int(L.node_dims[i])
            r = L.attachment_offsets[(i, None)]
            g = r + 6 * m
            Gamma = A[:, r: g].reshape(-1, 6, m)
            R = A[:, g + 6: g + 15].reshape(-1, 3, 3)
            p = A[:, g + 15: g + 18]
            n = f[:3] - np.cross(p, f[3:])
            local = np.concatenate([np.einsum("si,sij->sj", n, R), np.einsum("i,sij->sj", f[3:], R)], axis=1)
            o = L.b_offsets[i]
            A[:, o: o + m] -= np.einsum("si,sij->sj", local, Gamma)

    def _hinge_forces(self, Q, QD) -> np.ndarray | None:
        if not self.layout._hinge_forces:
            return None
        return np.stack([self.system._hinge_forces(q, qd) for q, qd in zip(Q, QD)])

    @staticmethod
    def _shape(out, batched: bool):
        return out if batched else out[0]

    @staticmethod
    def _reference(method, *args, **kwargs):
        """``NotImplemented`` for one state (the caller's reference code answers), the method
        state by state for a batch (object arrays, or the reference backend forced)."""
        batched = [np.ndim(x) == 2 for x in args if x is not None]
        if not any(batched):
            return NotImplemented
        B = len(args[0])
        rows = [[None if x is None else x[s] for x in args] for s in range(B)]
        return np.array([method(*row, **kwargs) for row in rows])

    # ------------------------------------------------------------------ dynamics
    def inverse_dynamics(self, q, qd, qdd, external_forces=None):
        """``T = ℳ θ̈ + 𝒞`` (``qdd`` None: the bias forces ``𝒞``)."""
        if not external_forces and (out := self._one(cc.INVERSE_DYNAMICS, q, qd, qdd, self.nv)) is not None:
            return out[0]
        inputs = self._inputs(q, qd, qdd, "qdd")
        if inputs is None:
            return self._reference(self.system.inverse_dynamics, q, qd, qdd, external_forces)
        Q, QD, X, batched = inputs
        out = self._request(cc.INVERSE_DYNAMICS, Q, QD, X, external_forces)[:, 0]
        hinge = self._hinge_forces(Q, QD)
        if hinge is not None:
            out = out + hinge
        return self._shape(out, batched)

    def forward_dynamics(self, q, qd, tau=None, external_forces=None):
        """``θ̈ = ℳ^{-1}(T − 𝒞)``."""
        if tau is not None and not external_forces and (out := self._one(cc.FORWARD_DYNAMICS, q, qd, tau, self.nv)) is not None:
            return out[0]
        inputs = self._inputs(q, qd, tau, "tau")
        if inputs is None:
            return self._reference(self.system.forward_dynamics, q, qd, tau, external_forces)
        Q, QD, X, batched = inputs
        hinge = self._hinge_forces(Q, QD)
        if X.shape[1] == 0:
            X = np.zeros((Q.shape[0], self.nv), dtype=Q.dtype)
        if hinge is not None:
            X = X - hinge
        return self._shape(self._request(cc.FORWARD_DYNAMICS, Q, QD, X, external_forces)[:, 0], batched)

    def mass_matrix(self, q):
        """``ℳ(q)``."""
        if (out := self._one(cc.MASS_MATRIX, q, None, None, 0)) is not None:
            return out
        inputs = self._inputs(q, None)
        if inputs is None:
            return self._reference(self.system.mass_matrix, q)
        Q, QD, X, batched = inputs
        return self._shape(self._request(cc.MASS_MATRIX, Q, QD, X, None), batched)

    def mass_matrix_inverse(self, q):
        """``ℳ^{-1}(q)`` by the articulated-body passes (no dense inversion)."""
        inputs = self._inputs(q, None)
        if inputs is None:
            return self._reference(self.system.mass_matrix_inverse, q)
        Q, QD, X, batched = inputs
        return self._shape(self._request(cc.MASS_MATRIX_INVERSE, Q, QD, X, None), batched)

    def jacobian(self, method, q, frame, body, X):
        """``J = ℬ* φ* H*`` of a frame ``ᶠX_k`` (``X``) fixed on ``body``, from the weights and
        ``H`` of the arena (``method`` answers for the reference path)."""
        got = self.arena(q)
        if got is None:
            return self._reference(method, q, frame=frame)
        A, batched = got
        L, tree = self.layout, self.system.tree
        J = np.zeros((A.shape[0], 6, self.nv), dtype=A.dtype)
        if body is not None:
            T = np.broadcast_to(X, (A.shape[0], 6, 6))
            for j in [body, *tree.ancestors(body)]:
                i = L.bodies.index(j)
                m, n, h = int(L.node_dims[i]), int(L.dof_dims[i]), L.H_offsets[i]
                vo = int(L.dof_offsets[i])
                J[:, :, vo: vo + n] = T @ A[:, h: h + n * m].reshape(-1, n, m).transpose(0, 2, 1)
                p = L.parent[i]
                if p >= 0:
                    w, mp = L.weight_offsets[i], int(L.node_dims[p])
                    T = T @ A[:, w: w + mp * m].reshape(-1, mp, m).transpose(0, 2, 1)
        return J if batched else J[0]

    def sko_model(self, q, v=None, external_forces=None):
        """``(SKOModel, a, b)`` at one state, built by the compiled state kernels (the
        :class:`~sko.model.SKOModel` keeps copies of the blocks)."""
        inputs = self._inputs(q, v)
        if inputs is None or inputs[-1]:  # the reference path, or a batch (one model per state)
            return NotImplemented
        Q, QD, _, _ = inputs
        A = self.layout.fill(Q, QD)
        self._apply_forces(A, self.system.external_forces(external_forces))
        model, a, b = self.layout.model(A[0])
        return model, a.copy(), b.copy()

    # ------------------------------------------------------------------ energies
    def arena(self, q, qd=None):
        """``(A, batched)``: the filled arenas of the states, or None for the reference path."""
        inputs = self._inputs(q, qd)
        if inputs is None:
            return None
        Q, QD, _, batched = inputs
        return self.layout.fill(Q, QD), batched

    def energies(self, method, q, qd=None, kinetic: bool = True, potential: bool = True):
        """Kinetic and/or potential energies; ``method`` is the system's method answering for
        the reference path."""
        got = self.arena(q, qd)
        if got is None:
            return self._reference(method, q) if qd is None else self._reference(method, q, qd)
        A, batched = got
        out = np.zeros(A.shape[0], dtype=A.dtype)
        if kinetic:
            out += self.layout.kinetic_energies(A)
        if potential:
            out += self.layout.potential_energies(A)
        out = out if A.dtype.kind == "c" else out.real
        return out if batched else out[0]


def _coordinates_are_velocities(system, layout) -> bool:
    """True when every body is a library type whose joint has ``q̇ = v`` and no manifold to
    project on (no quaternion, no successor-frame velocities): ``qdot`` and ``normalize`` are then
    the identity for the whole system."""
    from sko.bodies.compiled_joints import CYLINDRICAL, EULER_ZYX, FIXED, HELICAL, PRISMATIC, RACK_AND_PINION
    from sko.bodies.flexible import FlexibleBody
    from sko.bodies.hinge import JointCoordinates

    plain = (FIXED, HELICAL, PRISMATIC, RACK_AND_PINION, CYLINDRICAL, EULER_ZYX)
    own = (JointCoordinates.qdot, FlexibleBody.qdot, JointCoordinates.normalize, FlexibleBody.normalize)
    for k, c in zip(layout.bodies, layout.compiled):
        body = system.body(k)
        if c is None or c.joint not in plain or type(body).qdot not in own or type(body).normalize not in own:
            return False
    return True
