"""Regressors of a system: its dynamics are linear in the bodies' inertial parameters (IDENTIFICATION.md).

For every body type the generalised inertia force ``M(k) α(k) + b(k)`` of a node and its
potential energy are linear in the body's parameters ``π_k``
(:meth:`~sko.bodies.contract.BodyType.inertial_parameters`), so inverse dynamics, without the
hinge forces (joint springs, dampers, tendons, which carry no parameter), is

    τ − T_hinge = H φ (M α + b) = Y(q, v, v̇) π,      α = φ* (H* v̇ + a)

(SKO.md §5). With ``F_j`` the node regressor of body ``j`` (``M(j) α(j) + b(j) = F_j π_j``),
the columns of ``π_j`` are ``H φ e_j F_j``: ``H(i) φ(i, j) F_j`` for every ancestor ``i`` of
``j`` and zero elsewhere — one walk from ``j`` to the root, O(N·depth) in all
(IDENTIFICATION.md, *The regressor in operator form*). A body type without a node regressor has
its columns by complex step in ``π_j``: ``Y e_c = Im τ(π + i h e_c) / h``, exact since ``τ`` is
linear in ``π``. The energy regressors (``T = y_T · π``, ``V = y_V · π``) are sums of the
bodies' own.

Optional joint columns follow the bodies' (IDENTIFICATION.md, *Drive train*): with
``friction=True`` a viscous column ``v_i`` and a Coulomb column ``sign(v_i)`` per velocity
coordinate (all viscous ones first), with ``armature=True`` an armature column ``v̇_i`` (and
``½ v_i²`` in the kinetic energy regressor). Their parameters are zero in
:func:`parameters`: the system models no such terms, so that ``Y π = τ − T_hinge`` holds.
"""

from __future__ import annotations

import numpy as np

from sko.engine import algorithms as alg
from sko.engine import regressors as compiled
from sko.bodies.contract import BodyError, BodyType
from sko.graphs.errors import NonFiniteError

__all__ = ["parameters", "parameter_names", "joint_torque_regressor", "kinetic_energy_regressor",
           "potential_energy_regressor", "body_parameter_slices", "direct", "compiled_joint_torque_regressor",
           "compiled_energy_regressor", "compiled_body_torque_regressor", "compiled_body_energy_regressors"]

#: Imaginary step of the complex-step columns (any size is exact: τ is linear in π).
STEP = 1e-20


def body_parameter_slices(system) -> dict:
    """``{body: slice of its parameters in π}`` in the system's body order."""
    out, o = {}, 0
    for k in system.bodies:
        n = len(system.body(k).inertial_parameters())
        out[k], o = slice(o, o + n), o + n
    return out


def _joint_sizes(system, friction: bool, armature: bool) -> int:
    return system.nv * (2 * bool(friction) + bool(armature))


def parameters(system, friction: bool = False, armature: bool = False) -> np.ndarray:
    """``π``: every body's parameters in body order, then zeros for the joint columns."""
    parts = [np.asarray(system.body(k).inertial_parameters(), dtype=float) for k in system.bodies]
    parts.append(np.zeros(_joint_sizes(system, friction, armature)))
    return np.concatenate(parts)


def parameter_names(system, friction: bool = False, armature: bool = False) -> list:
    """One ``(body, name)`` per entry of :func:`parameters`; ``("viscous", i)``, ``("coulomb", i)``,
    ``("armature", i)`` for the joint columns of velocity coordinate ``i``."""
    names = [(k, n) for k in system.bodies for n in system.body(k).inertial_parameter_names()]
    if friction:
        names += [("viscous", i) for i in range(system.nv)] + [("coulomb", i) for i in range(system.nv)]
    if armature:
        names += [("armature", i) for i in range(system.nv)]
    return names


def _declares(body: BodyType, method: str) -> bool:
    return getattr(type(body), method) is not getattr(BodyType, method)


def _joint_columns(system, v, dv, friction: bool, armature: bool) -> list:
    out = []
    if friction:
        out += [np.diag(v), np.diag(np.sign(v))]
    if armature:
        out.append(np.diag(dv))
    return out


def _alphas(system, states: dict, dv: np.ndarray) -> dict:
    """Node accelerations ``α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) v̇(k) + a(k)`` (gravity in ``a``)."""
    alpha = {}
    for k, b, _, vs in system._order:
        s = states[k]
        x = s.H.T @ dv[vs] + s.a
        if b.parent is not None:
            x = x + s.E @ (states[b.parent].attachments[b.attach].Gamma @ alpha[b.parent])
        alpha[k] = x
    return alpha


def tree_torque_regressor(system, q, v, dv) -> np.ndarray:
    """The bodies' columns of ``Y`` on a tree system at one checked state (module docstring)."""
    slices = body_parameter_slices(system)
    p = max((s.stop for s in slices.values()), default=0)
    states = system.node_states(q, v)
    alpha = _alphas(system, states, dv)
    Y = np.zeros((system.nv, p), dtype=np.result_type(q, v, dv, float))
    stepped = []
    for j in system.bodies:
        body = system.body(j)
        cols = slices[j]
        if cols.start == cols.stop:
            continue
        F = body.node_regressor(states[j], alpha[j]) if _declares(body, "node_regressor") else None
        if F is None:
            stepped.append(j)
            continue
        i = j
        while True:  # H(i) φ(i, j) F_j up the path to the root
            Y[system.dof_slices[i], cols] = states[i].H @ F
            b = system.body(i)
            if b.parent is None:
                break
            F = (states[i].E @ states[b.parent].attachments[b.attach].Gamma).T @ F
            i = b.parent
    if stepped:
        _real_state(system, stepped, q, v, dv)
        pi = parameters(system)
        for j in stepped:
            for c in range(slices[j].start, slices[j].stop):
                Y[:, c] = _stepped(system, pi, c, lambda s: _inverse_dynamics(s, q, v, dv))
    return Y


def _real_state(system, bodies, *xs) -> None:
    """A complex step in ``π`` needs a real state (its imaginary part would mix with the state's)."""
    if any(np.iscomplexobj(x) for x in xs):
        raise BodyError(f"bodies {list(bodies)!r} have their regressor columns by complex step in their parameters, "
                        "which needs a real state, got a complex one")


def _stepped(system, pi: np.ndarray, c: int, evaluate):
    """``Im f(π + i h e_c) / h`` of ``f = evaluate(system with parameters)``."""
    p = pi.astype(complex)
    p[c] += 1j * STEP
    return np.imag(evaluate(system._with_parameters(p, check=False))) / STEP


def _inverse_dynamics(system, q, v, dv) -> np.ndarray:
    """``H φ (M α + b)`` on the reference path (no hinge forces: they carry no parameter)."""
    model, a, b = system._assemble(system._node_states(q, v), {})
    return alg.inverse_dynamics(model, dv, None, a, b)


def tree_energy_regressors(system, q, v) -> tuple[np.ndarray, np.ndarray]:
    """The bodies' ``(y_T, y_V)`` on a tree system at one checked state."""
    slices = body_parameter_slices(system)
    p = max((s.stop for s in slices.values()), default=0)
    states = system.node_states(q, v)
    dtype = np.result_type(q, v, float)
    yT, yV = np.zeros(p, dtype=dtype), np.zeros(p, dtype=dtype)
    pi = None
    for k in system.bodies:
        body, cols = system.body(k), slices[k]
        if cols.start == cols.stop:
            continue
        y = body.energy_regressors(states[k], system.gravity) if _declares(body, "energy_regressors") else None
        if y is not None:
            yT[cols], yV[cols] = y
            continue
        _real_state(system, [k], q, v)
        pi = parameters(system) if pi is None else pi
        for c in range(cols.start, cols.stop):
            yT[c] = _stepped(system, pi, c, lambda s: sum(0.5 * x.V @ x.M @ x.V for x in s._node_states(q, v).values()))
            yV[c] = _stepped(system, pi, c, lambda s: sum(x.potential for x in s._node_states(q, v).values()))
    return yT, yV


def joint_torque_regressor(system, q, v, dv, friction: bool, armature: bool) -> np.ndarray:
    """``Y`` (nv × p) at one state, the joint columns appended (module docstring)."""
    q, v = system.checked_vectors(q, v)
    dv = np.zeros(system.nv) if dv is None else system._stacked(dv, "dv", system.nv, "nv")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
        Y = system._body_torque_regressor(q, v, dv)
    return _finite(np.concatenate([Y, *_joint_columns(system, v, dv, friction, armature)], axis=1),
                   "joint-torque regressor")


def _diagonals(x, like: np.ndarray) -> np.ndarray:
    """``diag(x)`` of every state: ``(nv, nv)``, or ``(B, nv, nv)`` for a batch ``x`` (B × nv)."""
    x = np.asarray(x, dtype=like.dtype)
    return x[..., :, None] * np.eye(x.shape[-1], dtype=like.dtype)


def direct(system, name: str, q, v=None, x=None):
    """The compiled regressor request ``name`` for the common call — one state of float64
    vectors, the bodies' columns alone — by its prepared one-state call
    (:meth:`~sko.engine.dispatch.Engine.direct`) where the compiled regressors apply; None for
    the checked path (which also reports bad input)."""
    return system._engine.direct(name, q, v, x) if compiled.applies(system) else None


def compiled_body_torque_regressor(system, q, v, dv):
    """The bodies' columns of ``Y`` by the compiled kernels (:mod:`sko.engine.regressors`), one
    state or a batch, or ``NotImplemented`` for the reference path."""
    return compiled.joint_torque_regressor(system, q, v, dv, lambda q, v, dv: joint_torque_regressor(
        system, q, v, dv, False, False))


def compiled_body_energy_regressors(system, q, v):
    """The bodies' ``(y_T, y_V)`` by the compiled kernels, or ``NotImplemented``."""
    return compiled.energy_regressors(system, q, v, _checked_tree_energy_regressors)


def _checked_tree_energy_regressors(system, q, v) -> tuple:
    return tree_energy_regressors(system, *system.checked_vectors(q, v))


def compiled_joint_torque_regressor(system, q, v, dv, friction: bool, armature: bool):
    """``Y`` with its joint columns by the compiled kernels (:mod:`sko.engine.regressors`), one
    state or a batch, or ``NotImplemented`` for the reference path."""
    Y = compiled_body_torque_regressor(system, q, v, dv)
    if Y is NotImplemented or not (friction or armature):
        return Y
    zeros = np.zeros(Y.shape[:-1], dtype=Y.dtype)
    v = zeros if v is None else np.asarray(v)
    parts = [_diagonals(v, Y), _diagonals(np.sign(v), Y)] if friction else []
    if armature:
        parts.append(_diagonals(zeros if dv is None else dv, Y))
    return np.concatenate([Y, *parts], axis=-1)


def compiled_energy_regressor(system, q, v, friction: bool, armature: bool, which: int):
    """``y_T`` (``which`` 0) or ``y_V`` (1) with the joint entries by the compiled kernels, one
    state or a batch, or ``NotImplemented`` for the reference path."""
    y = compiled_body_energy_regressors(system, q, v)
    if y is NotImplemented or not (friction or armature):
        return y if y is NotImplemented else y[which]
    y = y[which]
    zeros = np.zeros((*y.shape[:-1], system.nv), dtype=y.dtype)
    parts = [zeros, zeros] if friction else []
    if armature:
        parts.append(0.5 * np.asarray(v, dtype=y.dtype) ** 2 if which == 0 and v is not None else zeros)
    return np.concatenate([y, *parts], axis=-1) if parts else y


def _finite(x: np.ndarray, what: str) -> np.ndarray:
    """``x`` unless finite inputs made it overflow: then the error, never an inf or NaN."""
    if not np.isfinite(x).all():
        raise NonFiniteError(f"the {what} overflows (NaN or infinity) at this state; the velocities, accelerations "
                             "or coordinates are too large for floating point")
    return x


def kinetic_energy_regressor(system, q, v, friction: bool, armature: bool) -> np.ndarray:
    q, v = system.checked_vectors(q, v)
    with np.errstate(over="ignore", invalid="ignore"):
        yT = system._body_energy_regressors(q, v)[0]
        extra = [np.zeros(2 * system.nv)] if friction else []
        if armature:
            extra.append(0.5 * v * v)
    return _finite(np.concatenate([yT, *extra]), "kinetic energy regressor")


def potential_energy_regressor(system, q, friction: bool, armature: bool) -> np.ndarray:
    q, v = system.checked_vectors(q, None)
    with np.errstate(over="ignore", invalid="ignore"):
        yV = system._body_energy_regressors(q, v)[1]
    return _finite(np.concatenate([yV, np.zeros(_joint_sizes(system, friction, armature))]), "potential energy regressor")


def checked_body_parameters(system, pi) -> np.ndarray:
    """``π`` of the bodies (no joint columns) as a 1-D array of the right length, or a
    :class:`BodyError`."""
    n = len(system.inertial_parameters())
    p = np.asarray(pi)
    if p.shape != (n,):
        raise BodyError(f"the system has {n} inertial parameters (joint columns excluded), got an array of shape {p.shape}")
    return p
