"""Dynamics under constraints at frames, in O(N + m³) (CONSTRAINTS.md §3–§6, Eq. 4–6).

Gauss's principle: ``v̇`` minimises ``‖v̇ − v̇_free‖_ℳ`` subject to ``J v̇ + γ = a_ref`` with
``a_ref = −kp e − kd J v`` (Baumgarte). Its answer ``v̇ = v̇_free + ℳ⁻¹ Jᵀ λ`` with

    Ω λ = a_ref − γ − J v̇_free,        Ω = J ℳ⁻¹ Jᵀ

is computed without ``ℳ``: ``v̇_free`` by the articulated body recursion (the system's
``forward_dynamics``), ``Ω`` by the operational space compliance recursion among the nodes
carrying the constraint frames (:func:`sko.algorithms.operational_space_compliance`, SKO.md §12,
Eq. 59, 60) mapped to the constraint rows (``J = G 𝒱``: the rows are fixed combinations ``G`` of
the node velocities, :func:`~sko.constraints.kinematics.side_maps`), a dense ``m × m`` solve,
and ``ℳ⁻¹ Jᵀ λ`` by one more articulated-body pass on the same Riccati result. ``λ`` is the
force the constraints apply, ``ℳ v̇ + 𝒞 = τ + Jᵀ λ`` (Pinocchio's sign), stacked per constraint.

A row that no joint can move (``Ω_ii`` at most :data:`~sko.engine.constrained.IDLE_ROW` times
the bound ``(|G| |Ω_nodes| |G|ᵀ)_ii`` on its rounding: its ``J`` row is noise) takes no force:
it holds when its right-hand side is within the tolerance below, else the constraints are
inconsistent. Redundant or singular constraints (``Ω`` singular to working precision) take the
least-squares answer by proximal iterations (Carpentier, Budhiraja & Mansard, RSS 2021):
``(Ω + μ I) λ_{k+1} = r + μ λ_k`` from ``λ_0 = 0`` converge to the minimum-norm ``λ`` of
``Ω λ = r``; they stop when ``‖Ω λ − r‖ ≤ PROXIMAL_TOLERANCE · scale``. On nearly redundant
constraints (small eigenvalues of ``Ω``, where they converge slowly) a real state takes the
least-squares answer of the eigendecomposition of ``Ω`` instead, dropping the eigenvalues below
rounding. If the residual stays above the tolerance, the constraints are inconsistent (or, for a
complex step, the iterations did not converge): :class:`InconsistentConstraintsError` says which
and reports the residual.

Impulses: ``v⁺ = v⁻ + ℳ⁻¹ Jᵀ Λ`` with ``Ω Λ = −(1 + e) J v⁻``, so that ``J v⁺ = −e J v⁻``.

The resolution compares numbers (idle rows, conditioning, the iterations' stop), so the requests
refuse symbolic states and systems (:class:`ConstraintError`); :func:`constraint_compliance`
gives ``Ω`` of expressions.

This is the reference path (:func:`reference_constrained_dynamics`,
:func:`reference_impulse_dynamics`). :func:`constrained_dynamics` and :func:`impulse_dynamics`
take the compiled path first (:mod:`sko.constraints.compiled`: ``Ω`` by the unit-force gather,
CONSTRAINTS.md Eq. 7), which hands back to this one every state it does not answer: those whose
``Ω`` calls for the proximal iterations, and those whose inputs the checks refuse.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from sko.engine import algorithms as alg
from sko.engine.constrained import IDLE_ROW
from sko.graphs.errors import NonFiniteError, RankDeficientError
from sko.constraints import compiled
from sko.constraints.kinematics import (batched, body_states, constraint_error_rows, constraint_rows, drift, resolved,
                                        side_maps, stacked_rows)
from sko.constraints.values import ConstraintError, InconsistentConstraintsError

__all__ = ["PROXIMAL_TOLERANCE", "PROXIMAL_MU", "constraint_compliance", "constrained_dynamics", "impulse_dynamics",
           "reference_constrained_dynamics", "reference_impulse_dynamics", "constrained_operational_space_inertia"]

#: the residual ``‖Ω λ − r‖`` at which the proximal iterations stop, relative to the scale of ``r``
PROXIMAL_TOLERANCE = 1e-10
#: the proximal weight ``μ``, relative to the largest diagonal entry of ``Ω``
PROXIMAL_MU = 1e-8
_WELL_CONDITIONED = 1e8  # below this condition number Ω is solved directly
_MAX_ITERATIONS = 200


def _node_map(system, frame, states: dict) -> tuple:
    """``(k, B)``: the node carrying a frame and ``B`` (6 × m_k) with the frame's own velocity
    ``B 𝒱(k)``; ``k`` None for a frame on the world."""
    if hasattr(system, "_frame_on_node"):
        return system._frame_on_node(frame)
    k, name = system._attachment_frame(frame)
    return k, np.asarray(states[k].attachments[name].Gamma)


class _Operators:
    """One state's ``J``, the node-row map ``G`` with ``J = G 𝒱``, the SKO model and its Riccati result."""

    def __init__(self, system, q, constraints):
        self.system, self.q, self.constraints = system, q, constraints
        self.model, self.a0, _ = system.sko_model(q)  # a at rest: gravity only
        self.ab = alg.articulated_inertias(self.model)
        self.states = states = body_states(system, q)
        rows, nodes, pieces = 0, {}, []
        for c in constraints:
            maps = side_maps(system, q, c, states)
            for G, frame in zip(maps, (c.frame, c.other)):
                if G is None:
                    continue
                k, B = _node_map(system, frame, states)
                if k is None:
                    continue
                nodes.setdefault(k, len(nodes))
                pieces.append((rows, k, G @ B))
            rows += c.dimension
        self.nodes = tuple(nodes)
        offsets = np.cumsum([0] + [self.model.node_dim(k) for k in self.nodes])
        dtype = np.result_type(self.model.dtype, *(P for _, _, P in pieces))
        self.G = np.zeros((rows, offsets[-1]), dtype=dtype)
        for r, k, P in pieces:
            o = offsets[nodes[k]]
            self.G[r: r + P.shape[0], o: o + P.shape[1]] += P
        self.J = stacked_rows([constraint_rows(system, q, c, states) for c in constraints], q, system.nv)

    def compliance(self) -> np.ndarray:
        """``Ω = G Ω_nodes Gᵀ`` (the recursion; O(N) plus the nodes' paths)."""
        m = len(self.G)
        if not self.nodes:
            self.nodes_compliance = np.zeros((0, 0))
            return np.zeros((m, m), dtype=self.G.dtype)
        self.nodes_compliance = alg.operational_space_compliance(self.model, self.nodes, articulated=self.ab)
        return self.G @ self.nodes_compliance @ self.G.T

    def compliance_and_bound(self) -> tuple[np.ndarray, np.ndarray]:
        """``(Ω, Ω̄)``: :meth:`compliance` and the rounding bound of its diagonal,
        ``(|G| |Ω_nodes| |G|ᵀ)_ii`` (module docstring)."""
        Omega, G = self.compliance(), np.abs(self.G)
        return Omega, np.einsum("ij,jk,ik->i", G, np.abs(self.nodes_compliance), G)

    def minv_jt(self, lam) -> np.ndarray:
        """``ℳ⁻¹ Jᵀ λ`` by the articulated body passes on the Riccati result."""
        return alg.forward_dynamics(self.model, self.J.T @ lam, articulated=self.ab)


def _idle(Omega, bound) -> np.ndarray:
    """The rows no joint can move: ``Ω_ii ≤ IDLE_ROW · Ω̄_ii`` (module docstring)."""
    return ~(Omega.diagonal().real > IDLE_ROW * bound)


def _numbers(request: str, *arrays) -> None:
    """:class:`ConstraintError` naming ``request`` when any of ``arrays`` (a state, ``Ω``, ``r``)
    holds expressions: the resolution of ``Ω λ = r`` compares numbers (CONSTRAINTS.md §5)."""
    if any(np.asarray(x).dtype == object for x in arrays if x is not None):
        raise ConstraintError(f"{request} takes numbers: this state or system is symbolic (sympy), and the solve of "
                              "Ω λ = r decides numerically which rows no joint moves, how well Ω is conditioned and "
                              "when the proximal iterations stop (CONSTRAINTS.md §5); constraint_compliance gives the "
                              "symbolic Ω")


def _solve(compliance: tuple, r, scale: float, what: str) -> np.ndarray:
    """The minimum-norm ``λ`` of ``Ω λ = r``, ``compliance = (Ω, Ω̄)``: no force on an idle row,
    directly when the rest of ``Ω`` is well conditioned, else by proximal iterations (module
    docstring); :class:`InconsistentConstraintsError` when no ``λ`` brings the residual under
    the tolerance."""
    Omega, bound = compliance
    m = len(r)
    if m == 0:
        return np.zeros(0, dtype=r.dtype)
    tol = PROXIMAL_TOLERANCE * max(scale, 1.0)
    idle = _idle(Omega, bound)
    if idle.any():
        lam = np.zeros(m, dtype=np.result_type(Omega, r))
        residual = float(np.linalg.norm(r[idle].real))
        if residual > tol:
            raise InconsistentConstraintsError(
                f"the constraints cannot all hold at this state: rows {np.flatnonzero(idle).tolist()} are directions "
                f"no joint can move, yet ask for a {what} residual ‖J v̇ + γ − a_ref‖ = {residual:.3e} "
                f"(tolerance {tol:.1e})", residual)
        keep = ~idle
        lam[keep] = _solve((Omega[np.ix_(keep, keep)], bound[keep]), r[keep], scale, what)
        return lam
    w = np.linalg.eigvalsh(Omega.real)
    if w[0] > w[-1] / _WELL_CONDITIONED:
        return np.linalg.solve(Omega, r)
    lam = np.zeros(m, dtype=np.result_type(Omega, r))
    largest = float(np.max(np.abs(np.diag(Omega.real))))
    residual = float(np.linalg.norm(r.real))  # at λ = 0
    mu = PROXIMAL_MU * largest
    A = Omega + mu * np.eye(m)
    stalled = not largest > 0  # Ω = 0: nothing to iterate
    for _ in range(_MAX_ITERATIONS if largest > 0 else 0):  # Ω = 0: no row moves, λ = 0
        lam = np.linalg.solve(A, r + mu * lam)
        last, residual = residual, float(np.linalg.norm((Omega @ lam - r).real))
        stalled = abs(last - residual) <= 1e-3 * tol
        if residual <= tol or stalled:
            break
    if residual > tol and lam.dtype.kind != "c":  # the least-squares answer at once (module docstring)
        w, V = np.linalg.eigh(Omega)
        kept = w > w[-1] * m * np.finfo(float).eps
        least = V[:, kept] @ ((V[:, kept].T @ r) / w[kept])
        least_residual = float(np.linalg.norm(Omega @ least - r))
        if least_residual < residual:
            lam, residual, stalled = least, least_residual, True
    if residual > tol and not stalled:
        raise InconsistentConstraintsError(
            f"the proximal iterations for the {what} did not converge in {_MAX_ITERATIONS} iterations: the residual "
            f"‖J v̇ + γ − a_ref‖ = {residual:.3e} is still above the tolerance {tol:.1e} (the constraints are "
            "redundant or nearly so)", residual)
    if residual > tol:
        raise InconsistentConstraintsError(
            f"the constraints cannot all hold at this state: the least-squares {what} leave a residual "
            f"‖J v̇ + γ − a_ref‖ = {residual:.3e} (tolerance {tol:.1e}); two constraints ask for incompatible motions "
            "(e.g. one chain welded to two different world poses)", residual)
    return lam


def constraint_compliance(system, q, constraints) -> np.ndarray:
    """``Ω = J ℳ⁻¹ Jᵀ`` (``m × m``) by the compliance recursion, or ``(B, m, m)``."""
    constraints = resolved(system, constraints)
    m = sum(c.dimension for c in constraints)
    return batched(system, lambda qs: _Operators(system, qs, constraints).compliance(), q, empty=(m, m))


def constrained_dynamics(system, q, v, tau, constraints) -> tuple[np.ndarray, np.ndarray]:
    """``(v̇, λ)`` under the constraints (module docstring); batched over states as every request.

    Compiled (:mod:`sko.constraints.compiled`) for float64 states of systems with a compiled
    engine: the well-posed states there, in parallel over a batch; a state whose ``Ω``
    is singular or too ill-conditioned for the direct solve (and any state the kernels do not
    answer) here, by the proximal iterations.

    Raises
    ------
    InconsistentConstraintsError
        No acceleration satisfies every constraint (the residual is in the message).
    """
    answer = compiled.one_state(system, q, v, tau, constraints)
    if answer is not None:
        return answer
    fast = compiled.constrained_dynamics(system, q, v, tau, constraints, _WELL_CONDITIONED,
                                         lambda qs, vs, ts: reference_constrained_dynamics(system, qs, vs, ts,
                                                                                           constraints))
    if fast is not NotImplemented:
        return fast
    return reference_constrained_dynamics(system, q, v, tau, constraints)


def reference_constrained_dynamics(system, q, v, tau, constraints) -> tuple[np.ndarray, np.ndarray]:
    """:func:`constrained_dynamics` on the reference path (the recursions of
    :mod:`sko.algorithms` on the system's SKO model)."""
    constraints = resolved(system, constraints)
    _numbers("constrained_dynamics", q, v, tau)
    return batched(system, lambda qs, vs, ts: _constrained(system, qs, vs, ts, constraints), q, v, tau,
                   empty=_result_shapes(system, constraints))


def _result_shapes(system, constraints) -> tuple:
    """The shapes of one state's ``(v̇, λ)``."""
    return (system.nv,), (sum(c.dimension for c in constraints),)


def _constrained(system, q, v, tau, constraints):
    ops = _Operators(system, q, constraints)
    dv_free = system.forward_dynamics(q, v, tau)
    gamma = drift(system, q, v, constraints, (ops.a0, ops.states))
    e = stacked_rows([constraint_error_rows(system, q, c, ops.states) if c.baumgarte[0] else np.zeros(c.dimension)
                      for c in constraints], q)
    kp = stacked_rows([np.full(c.dimension, c.baumgarte[0]) for c in constraints], q)
    kd = stacked_rows([np.full(c.dimension, c.baumgarte[1]) for c in constraints], q)
    Jv = ops.J @ v
    with np.errstate(over="ignore", invalid="ignore"):
        a_ref = -kp * e - kd * Jv
    if a_ref.dtype != object:  # symbolic entries: nothing overflows
        _finite_gains(constraints, a_ref, "its Baumgarte acceleration a_ref = −kp e − kd J v")
    r = a_ref - gamma - ops.J @ dv_free
    compliance = ops.compliance_and_bound()
    _numbers("constrained_dynamics", r, compliance[0])  # a system of symbolic parameters at a numeric state
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is named below
        scale = float(max(np.linalg.norm(a_ref), np.linalg.norm(gamma), np.linalg.norm(ops.J @ dv_free)))
        lam = _solve(compliance, r, scale, "constraint forces")
    if lam.dtype != object and not np.isfinite(lam).all():
        stiff, damped = (max(constraints, key=lambda c: c.baumgarte[i]) for i in (0, 1))
        raise NonFiniteError(f"the constraint forces λ overflow (NaN or infinity) at this state; the largest Baumgarte "
                             f"gains, kp = {stiff.baumgarte[0]:.3g} of {stiff!r} and kd = {damped.baumgarte[1]:.3g} of "
                             f"{damped!r}, or the velocities are too large for floating point")
    return dv_free + ops.minv_jt(lam), lam


def _finite_gains(constraints, rows: np.ndarray, what: str) -> None:
    """:class:`~sko.graphs.errors.NonFiniteError` naming the first constraint whose ``rows``
    overflow, and its Baumgarte gains."""
    start = 0
    for c in constraints:
        if not np.isfinite(rows[start: start + c.dimension]).all():
            kp, kd = c.baumgarte
            raise NonFiniteError(f"constraint {c!r}: {what} overflows (NaN or infinity) at this state; the Baumgarte "
                                 f"gains kp = {kp:.3g}, kd = {kd:.3g} or the velocities are too large for floating point")
        start += c.dimension


def impulse_dynamics(system, q, v_minus, constraints, restitution=0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(v⁺, Λ)`` of an impact: ``J v⁺ = −e J v⁻`` (``e`` the restitution, ``0 ≤ e ≤ 1``), the
    impulses ``Λ`` stacked per constraint; kinetic energy never increases. Compiled as
    :func:`constrained_dynamics`."""
    if isinstance(restitution, bool) or not isinstance(restitution, Real) or not 0.0 <= restitution <= 1.0:
        raise ConstraintError(f"restitution must be a real number in [0, 1], got {restitution!r}")
    answer = compiled.one_state(system, q, v_minus, float(restitution), constraints, impulse=True)
    if answer is not None:
        return answer
    fast = compiled.impulse_dynamics(system, q, v_minus, constraints, float(restitution), _WELL_CONDITIONED,
                                     lambda qs, vs, _: reference_impulse_dynamics(system, qs, vs, constraints,
                                                                                  restitution))
    if fast is not NotImplemented:
        return fast
    return reference_impulse_dynamics(system, q, v_minus, constraints, restitution)


def reference_impulse_dynamics(system, q, v_minus, constraints, restitution=0.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`impulse_dynamics` on the reference path."""
    constraints = resolved(system, constraints)
    _numbers("impulse_dynamics", q, v_minus)
    return batched(system, lambda qs, vs: _impulse(system, qs, vs, constraints, float(restitution)), q, v_minus,
                   names=("v",), empty=_result_shapes(system, constraints))


def _impulse(system, q, v, constraints, e: float):
    ops = _Operators(system, q, constraints)
    Jv = ops.J @ v
    compliance = ops.compliance_and_bound()
    _numbers("impulse_dynamics", Jv, compliance[0])
    impulses = _solve(compliance, -(1.0 + e) * Jv, float(np.linalg.norm(Jv)), "impulses")
    return v + ops.minv_jt(impulses), impulses


def constrained_operational_space_inertia(system, q, constraints) -> np.ndarray:
    """``Λ = Ω⁻¹`` (``m × m``), or ``(B, m, m)``; :class:`~sko.graphs.errors.RankDeficientError`
    when ``Ω`` is singular to working precision (redundant constraints)."""
    constraints = resolved(system, constraints)
    _numbers("constrained_operational_space_inertia", q)

    def one(qs):
        Omega, bound = _Operators(system, qs, constraints).compliance_and_bound()
        _numbers("constrained_operational_space_inertia", Omega)
        w = np.linalg.eigvalsh(Omega.real)
        if not len(w) or w[0] <= w[-1] * len(w) * np.finfo(float).eps or _idle(Omega, bound).any():
            raise RankDeficientError(f"the constraint compliance Ω = J ℳ⁻¹ Jᵀ of {list(constraints)!r} is singular "
                                     f"(eigenvalues {w[0] if len(w) else 0:.2e} … {w[-1] if len(w) else 0:.2e}): the "
                                     "constraints are redundant and have no operational space inertia")
        return np.linalg.inv(Omega)

    m = sum(c.dimension for c in constraints)
    return batched(system, one, q, empty=(m, m))
