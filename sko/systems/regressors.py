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

The system methods are made from the declarations of the requests ``joint_torque_regressor``
and ``energy_regressors`` (:mod:`sko.systems.catalogue`): the compiled requests
(:mod:`sko.engine.regressors`) or the reference functions here (:func:`body_torque_regressor`,
:func:`body_energy_regressors`) give the bodies' columns, the declarations' :data:`OPTIONS`
choose the joint columns, which :func:`joint_columns` and :func:`joint_energy_entries` append.
"""

from __future__ import annotations

import numpy as np

from sko.engine import algorithms as alg
from sko.bodies.contract import BodyError, BodyType
from sko.arrays import numeric_array, plain_numbers_as_floats
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.systems.declared import Option, flag

__all__ = ["OPTIONS", "parameters", "parameter_names", "body_parameter_slices", "tree_torque_regressor",
           "tree_energy_regressors", "body_torque_regressor", "body_energy_regressors", "torque_shape",
           "energy_shape", "joint_columns", "joint_energy_entries", "kinetic_row", "potential_row",
           "checked_body_parameters"]

#: Imaginary step of the complex-step columns (any size is exact: τ is linear in π).
STEP = 1e-20

#: The regressors' options (module docstring): the joint columns, each on or off.
OPTIONS = (Option("friction", False), Option("armature", False))


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
    """``π``: every body's parameters in body order, then zeros for the joint columns; float64,
    complex or sympy expressions as the bodies' parameters are."""
    friction = flag(friction, "inertial_parameters(friction=)")
    armature = flag(armature, "inertial_parameters(armature=)")
    parts = [np.asarray(system.body(k).inertial_parameters()) for k in system.bodies]
    parts = [x if x.dtype.kind in "cO" else x.astype(float) for x in parts]  # a symbolic system's stay expressions
    parts.append(np.zeros(_joint_sizes(system, friction, armature)))
    return np.concatenate(parts)


def parameter_names(system, friction: bool = False, armature: bool = False) -> list:
    """One ``(body, name)`` per entry of :func:`parameters`; ``("viscous", i)``, ``("coulomb", i)``,
    ``("armature", i)`` for the joint columns of velocity coordinate ``i``."""
    friction = flag(friction, "inertial_parameter_names(friction=)")
    armature = flag(armature, "inertial_parameter_names(armature=)")
    names = [(k, n) for k in system.bodies for n in system.body(k).inertial_parameter_names()]
    if friction:
        names += [("viscous", i) for i in range(system.nv)] + [("coulomb", i) for i in range(system.nv)]
    if armature:
        names += [("armature", i) for i in range(system.nv)]
    return names


def _declares(body: BodyType, method: str) -> bool:
    return getattr(type(body), method) is not getattr(BodyType, method)


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
    Y = np.zeros((system.nv, p), dtype=_scalar_type(states, q, v, dv))
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


def _scalar_type(states: dict, *xs) -> np.dtype:
    """The regressor's scalar type: the inputs', or ``object`` where a body's state is symbolic
    (sympy masses, lengths or gravity at a numeric state)."""
    return np.result_type(float, *xs, *(x.dtype for s in states.values() for x in (s.E, s.H, s.M, s.a, s.b)))


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
    dtype = _scalar_type(states, q, v)
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


def body_torque_regressor(system, q, v, dv) -> np.ndarray:
    """The bodies' columns of ``Y`` (nv × p) at one state on the reference path (the reference
    function of ``joint_torque_regressor``), the inputs checked as the compiled path checks them."""
    q, v = system.checked_vectors(q, v)
    dv = np.zeros(system.nv) if dv is None else system._stacked(dv, "dv", system.nv, "nv")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
        return _finite(system._body_torque_regressor(q, v, dv), "joint-torque regressor")


def body_energy_regressors(system, q, v) -> np.ndarray:
    """The bodies' ``[y_T; y_V]`` (2 × p) at one state on the reference path (the reference
    function of ``energy_regressors``)."""
    q, v = system.checked_vectors(q, v)
    with np.errstate(over="ignore", invalid="ignore"):
        return _finite(system._body_energy_regressors(q, v), "energy regressors")


def torque_shape(system) -> tuple:
    """One state's bodies' columns of ``Y``: ``(nv, p)``, ``p`` the bodies' parameters."""
    return system.nv, len(system.inertial_parameters())


def energy_shape(system) -> tuple:
    """One state's ``[y_T; y_V]`` of the bodies: ``(2, p)``."""
    return 2, len(system.inertial_parameters())


def _diagonals(x, like: np.ndarray) -> np.ndarray:
    """``diag(x)`` of every state: ``(nv, nv)``, or ``(B, nv, nv)`` for a batch ``x`` (B × nv)."""
    x = np.asarray(x, dtype=like.dtype)
    return x[..., :, None] * np.eye(x.shape[-1], dtype=like.dtype)


def _velocities(x, like: np.ndarray, nv: int) -> np.ndarray:
    """``x`` (one state's ``nv`` entries or a batch of them, already checked), zero when None,
    in the scalar type of the result ``like`` (whose leading axes are the batch's)."""
    return np.zeros((*like.shape[:-2], nv), dtype=like.dtype) if x is None else np.asarray(x, dtype=like.dtype)


def _sign(v: np.ndarray) -> np.ndarray:
    """``sign v``; of expressions (symbolic states) ``sympy.sign``, which stays unevaluated for a
    symbol of unknown sign."""
    if v.dtype != object:
        return np.sign(v)
    from sko.optional import require
    sign = require("sympy", "symbolic").sign
    return np.array([sign(x) for x in v.ravel()], dtype=object).reshape(v.shape)


def joint_columns(system, Y, q, v, dv, friction: bool, armature: bool) -> np.ndarray:
    """``Y`` (the bodies' columns, one state or a batch) with the joint columns the options ask
    for appended (module docstring): ``diag(v)``, ``diag(sign v)``, then ``diag(v̇)``."""
    if not (friction or armature):
        return Y
    parts = []
    if friction:
        v = _velocities(v, Y, system.nv)
        parts += [_diagonals(v, Y), _diagonals(_sign(v), Y)]
    if armature:
        parts.append(_diagonals(_velocities(dv, Y, system.nv), Y))
    return np.concatenate([Y, *parts], axis=-1)


def joint_energy_entries(system, y, q, v, x, friction: bool, armature: bool) -> np.ndarray:
    """``[y_T; y_V]`` (the bodies', one state or a batch) with the joint entries the options ask
    for appended: zeros for the friction columns, ``[½ v²; 0]`` for the armature's."""
    if not (friction or armature):
        return y
    zeros = np.zeros((*y.shape[:-1], system.nv), dtype=y.dtype)
    parts = [zeros, zeros] if friction else []
    if armature:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
            v = _velocities(v, y, system.nv)
            parts.append(np.stack([0.5 * v * v, zeros[..., 0, :]], axis=-2))
    return _finite(np.concatenate([y, *parts], axis=-1), "energy regressors")


def kinetic_row(system, y) -> np.ndarray:
    """``y_T`` of ``energy_regressors``' result ``[y_T; y_V]`` (one state or a batch)."""
    return y[..., 0, :]


def potential_row(system, y) -> np.ndarray:
    """``y_V`` of ``energy_regressors``' result ``[y_T; y_V]`` (one state or a batch)."""
    return y[..., 1, :]


def _finite(x: np.ndarray, what: str) -> np.ndarray:
    """``x`` unless finite inputs made it overflow: then the error, never an inf or NaN; an
    object array (symbolic states) is expressions, returned as they are."""
    if x.dtype != object and not np.isfinite(x).all():
        raise NonFiniteError(f"the {what} overflows (NaN or infinity) at this state; the velocities, accelerations "
                             "or coordinates are too large for floating point")
    return x


def checked_body_parameters(system, pi) -> np.ndarray:
    """``π`` of the bodies (no joint columns) as a 1-D array of the right length, or a
    :class:`BodyError`."""
    n = len(system.inertial_parameters())
    try:
        p = plain_numbers_as_floats(numeric_array(pi, "inertial parameters"), "inertial parameters")
    except DimensionError as error:
        raise BodyError(str(error)) from None
    if p.shape != (n,):
        raise BodyError(f"the system has {n} inertial parameters (joint columns excluded), got an array of shape {p.shape}")
    if p.dtype.kind not in "biuf":  # a complex part would be dropped by the bodies' float parameters
        raise BodyError(f"inertial parameters must be real numbers, got {p.dtype}")
    return p
