"""Derivatives of the constrained dynamics ``(v̇, λ)`` with respect to ``q``, ``v`` and ``τ``, exact
by complex step (DERIVATIVES.md §1, §7, Eq. 21; CONSTRAINTS.md §7).

Column ``ι`` of ``∂f/∂q`` is ``Im f(q + i h q̇(q, e_ι)) / h``, the tangent direction of
``integrate(q, ε e_ι)``, so that the columns compare with Pinocchio's
``computeConstraintDynamicsDerivatives``; those of ``v`` and ``τ`` step along ``e_ι``. Every step
goes through the whole computation — the Jacobians, the drift from the node accelerations, the
compliance recursion, the dense solve, the position error of a Baumgarte ``kp`` (its SE(3)
logarithm is complex-step safe) — so nothing is differentiated by hand. Rigid systems (their drift
is complex-safe).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.constraints.dynamics import _constrained, _numbers
from sko.constraints.kinematics import COMPLEX_STEP, batched, resolved
from sko.constraints.values import ConstraintError

__all__ = ["ConstrainedDynamicsDerivatives", "constrained_dynamics_derivatives"]


class ConstrainedDynamicsDerivatives(NamedTuple):
    """``∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ`` (``nv × nv``) and ``∂λ/∂q, ∂λ/∂v, ∂λ/∂τ`` (``m × nv``), each with
    a leading batch axis for a batch of states."""

    ddv_dq: np.ndarray
    ddv_dv: np.ndarray
    ddv_dtau: np.ndarray
    dlam_dq: np.ndarray
    dlam_dv: np.ndarray
    dlam_dtau: np.ndarray


def constrained_dynamics_derivatives(system, q, v, tau, constraints) -> ConstrainedDynamicsDerivatives:
    """The derivatives of :func:`~sko.constraints.dynamics.constrained_dynamics` (module docstring)."""
    constraints = resolved(system, constraints)
    _numbers("constrained_dynamics_derivatives", q, v, tau)
    if not hasattr(system, "_frame_on_node"):
        raise ConstraintError(f"constrained dynamics derivatives need a rigid system (a {type(system).__name__} "
                              "computes its drift by a complex step already)")
    n, m = system.nv, sum(c.dimension for c in constraints)
    return ConstrainedDynamicsDerivatives(*batched(system, lambda qs, vs, ts: _one(system, qs, vs, ts, constraints), q,
                                                   v, tau, empty=3 * ((n, n),) + 3 * ((m, n),)))


def _one(system, q, v, tau, constraints) -> ConstrainedDynamicsDerivatives:
    h, n = COMPLEX_STEP, system.nv
    Q = np.asarray(system.qdot_matrix(q), dtype=float)
    columns = {"q": [], "v": [], "tau": []}
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        for name, args in (("q", (q + 1j * h * Q[:, i], v + 0j, tau + 0j)), ("v", (q + 0j, v + 1j * h * e, tau + 0j)),
                           ("tau", (q + 0j, v + 0j, tau + 1j * h * e))):
            dv, lam = _constrained(system, *args, constraints)
            columns[name].append((dv.imag / h, lam.imag / h))
    out = []
    for part in (0, 1):
        for name in ("q", "v", "tau"):
            out.append(np.column_stack([c[part] for c in columns[name]]) if n else np.zeros((0, 0)))
    return ConstrainedDynamicsDerivatives(*out)
