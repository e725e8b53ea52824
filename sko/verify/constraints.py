"""Identities of the dynamics under constraints at frames (CONSTRAINTS.md §3–§6), on a
constrained version of each system model: its last body that offers a frame (a bead on a curve
offers none) held in the directions its joints can move it independently (chosen by a pivoted QR of the frame's rows, at most three, in
local-world-aligned axes) with Baumgarte damping.

Each side comes from a different path: the recursions (articulated-body forward dynamics, the
compliance recursion, the articulated-body passes for ``ℳ⁻¹ Jᵀ λ``) against dense ``ℳ`` solves.
The checks apply to the systems with such a body.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from sko.constraints import FrameConstraint, constraint_compliance
from sko.constraints.kinematics import resolved
from sko.constraints.values import ConstraintError
from sko.graphs.errors import UnknownNodeError

from .physics import PHYSICS_TOLERANCE
from .registry import Case, compare, register

__all__: list[str] = []  # importing the module registers the checks

_KD = 2.0  # the Baumgarte damping of the constrained version


def _held_body(system):
    """The last body of ``system`` whose frame a constraint can hold, or None."""
    for k in reversed(system.bodies):
        try:
            resolved(system, [FrameConstraint(k)])
        except (UnknownNodeError, ConstraintError):
            continue
        return k
    return None


def _has_held_body(system) -> bool:
    return _held_body(system) is not None


def _constrained(case: Case):
    """``(system, q, v, tau, constraints)`` of the case's constrained version (module docstring)."""
    def compute():
        system = case.system
        q, v = np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)
        tau = case.rng("constraints_tau").standard_normal(system.nv)
        frame = _held_body(system)
        J6 = system.constraint_jacobian(q, [FrameConstraint(frame, directions=range(6), reference="local_world_aligned")])
        _, R, order = scipy.linalg.qr(J6.T, pivoting=True, mode="economic")
        diag = np.abs(np.diag(R))
        keep = [int(d) for d, r in zip(order, diag) if r > 1e-6 * max(diag.max(initial=0.0), 1e-300)][:3]
        constraints = [FrameConstraint(frame, directions=sorted(keep), reference="local_world_aligned",
                                       baumgarte=(0.0, _KD))]
        return system, q, v, tau, constraints

    return case.cached("constraints_state", compute)


def _scale(*arrays) -> float:
    return max(1.0, *(float(np.abs(x).max(initial=0.0)) for x in arrays))


@register("constrained_dynamics_kkt", "CONSTRAINTS.md Eq. 4: v̇, λ of the dense KKT system", system=True,
          symbolic=False, tolerance=PHYSICS_TOLERANCE, when=_has_held_body)
def constrained_dynamics_kkt(case: Case):
    """``(v̇, λ)`` by the recursions equal the solution of ``[ℳ −Jᵀ; J 0] [v̇; λ] = [τ − 𝒞; a_ref − γ]``."""
    system, q, v, tau, constraints = _constrained(case)
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    M, C = system.mass_matrix(q), system.bias_forces(q, v)
    J, gamma = system.constraint_jacobian(q, constraints), system.constraint_drift(q, v, constraints)
    m = len(J)
    K = np.block([[M, -J.T], [J, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([tau - C, -_KD * (J @ v) - gamma]))
    kappa = float(np.linalg.cond(K))
    return [compare(dv, x[: system.nv], scale=_scale(x[: system.nv]), label="v̇", condition=kappa),
            compare(lam, x[system.nv:], scale=_scale(x[system.nv:], tau, C), label="λ", condition=kappa)]


@register("constraint_stabilisation", "CONSTRAINTS.md Eq. 3: J v̇ + γ = −kp e − kd J v", system=True, symbolic=False,
          tolerance=PHYSICS_TOLERANCE, when=_has_held_body)
def constraint_stabilisation(case: Case):
    """The constrained accelerations meet the Baumgarte-stabilised constraint."""
    system, q, v, tau, constraints = _constrained(case)
    dv, _ = system.constrained_dynamics(q, v, tau, constraints)
    J, gamma = system.constraint_jacobian(q, constraints), system.constraint_drift(q, v, constraints)
    return compare(J @ dv + gamma, -_KD * (J @ v), scale=_scale(J @ dv, gamma, J @ v), label="J v̇ + γ")


@register("constraint_compliance", "CONSTRAINTS.md §4; SKO.md Eq. 59, 60: Ω = J ℳ⁻¹ Jᵀ", system=True, symbolic=False,
          tolerance=PHYSICS_TOLERANCE, when=_has_held_body)
def constraint_compliance_check(case: Case):
    """The compliance recursion mapped to the constraint rows equals ``J ℳ⁻¹ Jᵀ`` (``ℳ`` solved densely)."""
    system, q, _, _, constraints = _constrained(case)
    M, J = system.mass_matrix(q), system.constraint_jacobian(q, constraints)
    Omega = constraint_compliance(system, q, constraints)
    return compare(Omega, J @ np.linalg.solve(M, J.T), scale=_scale(Omega), label="Ω", condition=float(np.linalg.cond(M)))


@register("impulse_energy", "CONSTRAINTS.md Eq. 6: J v⁺ = −e J v⁻, T(v⁺) ≤ T(v⁻)", system=True, symbolic=False,
          tolerance=PHYSICS_TOLERANCE, when=_has_held_body)
def impulse_energy(case: Case):
    """An impact with restitution 1/2 meets ``J v⁺ = −e J v⁻`` and loses kinetic energy."""
    system, q, v, _, constraints = _constrained(case)
    e = 0.5
    v_plus, _ = system.impulse_dynamics(q, v, constraints, restitution=e)
    J = system.constraint_jacobian(q, constraints)
    T_minus, T_plus = float(system.kinetic_energy(q, v)), float(system.kinetic_energy(q, v_plus))
    return [compare(J @ v_plus, -e * (J @ v), scale=_scale(J @ v), label="J v⁺"),
            compare(max(T_plus - T_minus, 0.0), 0.0, scale=max(T_minus, 1e-300), label="energy gained")]
