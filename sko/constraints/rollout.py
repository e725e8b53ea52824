"""Rollouts under constraints at frames (CONSTRAINTS.md Eq. 3, 4): each stage's accelerations are
the constrained dynamics, with the constraints anchored where their frames start (a constraint to
the world without a target is held at its initial pose) and Baumgarte stabilisation keeping the
position error at the integrator's order. The largest position error along each rollout is
reported as its drift.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.arrays import checked_horizon
from sko.engine.rollout_inputs import (checked_states, controller_forces, initial_configurations, rollout_inputs,
                                       trajectories)
from sko.graphs.errors import SKOError
from sko.constraints.dynamics import constrained_dynamics
from sko.constraints.kinematics import anchored, constraint_error, resolved

__all__ = ["ConstrainedRollout", "constrained_rollout"]


class ConstrainedRollout(NamedTuple):
    """Times ``(steps + 1,)``, positions ``(B, steps + 1, nq)``, velocities ``(B, steps + 1, nv)``
    (no leading axis for one initial state), the constraint forces ``(B, steps, m)`` of each step,
    and ``drift`` ``(B,)`` (a number for one state): the largest ``‖e‖∞`` of the stacked position
    errors along each rollout (metres and radians, in the constraints' reference axes)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    forces: np.ndarray
    drift: np.ndarray


def constrained_rollout(system, q0, v0=None, dt: float = 1e-3, steps: int = 1, tau=None, constraints=(),
                        integrator: str = "rk4") -> ConstrainedRollout:
    """``steps`` steps of RK4 (or semi-implicit Euler) of the constrained dynamics from each initial
    state; ``tau`` none, ``(nv,)`` held, ``(B, steps, nv)`` (``(steps, nv)`` for one state), or a
    callable ``tau(t, q, v)`` of one state returning ``(nv,)`` (a controller), called at every
    stage. Each rollout's constraints are anchored at its own initial configuration. The inputs
    are checked as :func:`sko.rollout` checks them (real, finite, of the system's sizes)."""
    dt, steps = checked_horizon(dt, steps, "rollout")
    if integrator not in ("rk4", "euler"):
        raise SKOError(f"rollout: integrator must be 'rk4' or 'euler', got {integrator!r}")
    constraints = resolved(system, constraints)
    nv = system.nv
    if tau is not None and not callable(tau) and np.ndim(tau) == 1:  # one (nv,) held by every rollout
        tau = checked_states(tau, "tau", nv, "nv")
        tau = np.broadcast_to(tau, (steps, nv) if np.ndim(q0) == 1 else (len(np.atleast_2d(q0)), steps, nv))
    Q0, V0, T, single = rollout_inputs(system, q0, v0, tau, steps)
    B, zero = len(Q0), np.zeros(nv)
    m = sum(c.dimension for c in constraints)
    Q, V, forces = trajectories((B, steps + 1, system.nq), (B, steps + 1, nv), (B, steps, m))
    drift = np.zeros(B)
    for s, q in enumerate(initial_configurations(system, Q0)):
        v = V0[s].copy()
        held = anchored(system, q, constraints)
        Q[s, 0], V[s, 0] = q, v
        for i in range(steps):
            force = tau if callable(tau) else (lambda t, qs, vs, held_tau=zero if T is None else T[s, i]: held_tau)
            q, v, forces[s, i] = _step(system, q, v, force, i * dt, held, dt, integrator == "rk4")
            Q[s, i + 1], V[s, i + 1] = q, v
            drift[s] = max(drift[s], float(np.abs(constraint_error(system, q, held)).max(initial=0.0)))
    t = dt * np.arange(steps + 1)
    if single:
        return ConstrainedRollout(t, Q[0], V[0], forces[0], drift[0])
    return ConstrainedRollout(t, Q, V, forces, drift)


def _step(system, q, v, tau, t: float, constraints, dt: float, rk4: bool):
    """One step from time ``t`` (``tau(t, q, v)`` the forces); the forces reported are the
    constraint forces at the step's start."""
    def rate(time, qs, vs):
        return constrained_dynamics(system, qs, vs, controller_forces(tau, time, qs, vs, "rollout: tau(t, q, v)",
                                                                      "the hinge forces of one state"), constraints)

    dv, lam = rate(t, q, v)
    if not rk4:
        v = v + dt * dv
        return system.integrate(q, v, dt), v, lam
    k1 = (system.qdot(q, v), dv)
    q2, v2 = system.normalize(q + dt / 2 * k1[0]), v + dt / 2 * k1[1]
    k2 = (system.qdot(q2, v2), rate(t + dt / 2, q2, v2)[0])
    q3, v3 = system.normalize(q + dt / 2 * k2[0]), v + dt / 2 * k2[1]
    k3 = (system.qdot(q3, v3), rate(t + dt / 2, q3, v3)[0])
    q4, v4 = system.normalize(q + dt * k3[0]), v + dt * k3[1]
    k4 = (system.qdot(q4, v4), rate(t + dt, q4, v4)[0])
    q = system.normalize(q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]))
    v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return q, v, lam
