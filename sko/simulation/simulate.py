"""Time integration of a :class:`~sko.systems.multibody.MultibodySystem` (classical Runge–Kutta):
one trajectory, the one-state case of :func:`~sko.simulation.rollout.rollout`.

The state is ``(q, θ̇)``; ``q̇ = system.qdot(q, θ̇)`` and ``θ̈`` comes from the system's forward
dynamics (Algorithm 6.1). After each step ``q`` is projected back onto its manifold (unit
quaternions), which does not change the fourth order of the method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from sko.arrays import checked_horizon
from sko.graphs.errors import DimensionError, SKOError
from sko.simulation.rollout import renamed, rollout

__all__ = ["Trajectory", "simulate"]


class Trajectory(NamedTuple):
    """Times (s,), positions (s, n_q), hinge velocities (s, n) and energies (s,)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray


def simulate(system, q0, qd0, dt: float, steps: int, torque: Callable | None = None,
             progress: Callable[[int], None] | None = None) -> Trajectory:
    """Integrate ``steps`` RK4 steps of size ``dt`` from ``(q0, θ̇0)``: the one-state case of
    :func:`~sko.simulation.rollout.rollout`, which it runs (compiled where it can).

    ``torque(t, q, qd)`` returns the hinge forces ``T`` (zero if omitted, or when it returns
    None); ``progress(done)``, if given, is called with the number of steps done. Energies are
    ``system.energy`` at every stored state. A step that leaves the floating-point range, or a
    state the joints reject, raises the error naming the step; forces ``torque`` returns that are
    not finite or of the wrong shape raise the error naming the time of the call.
    """
    dt, steps = checked_horizon(dt, steps, "simulate")
    if torque is not None and not callable(torque):
        raise SKOError(f"simulate: torque must be a callable torque(t, q, qd), got {type(torque).__name__}")
    q, qd = system.checked_vectors(q0, qd0)
    out = rollout(system, np.array(q, dtype=float)[None], np.array(qd, dtype=float)[None], dt, steps,
                  tau=None if torque is None else _batched(system, torque), progress=progress)
    if out.failed[0] >= 0:
        error = out.errors[0]
        raise renamed(error, f"simulate: {error}")
    q, qd = out.q[0], out.v[0]
    return Trajectory(out.t, q, qd, np.asarray(system.energy(q, qd)))  # one batched call


def _batched(system, torque: Callable):
    """``torque(t, q, qd)`` as rollout's ``tau(t, Q, V)`` for one state, its result checked as
    the dynamics check ``tau``."""

    def tau(t, Q, V):
        out = torque(t, Q[0], V[0])
        if out is None:
            return np.zeros(V.shape)
        try:
            forces = system._stacked(out, "tau", system.dof_size, "nv")
            if forces.dtype.kind not in "biuf":  # a complex part or a symbol the rollout would drop or choke on
                raise DimensionError(f"tau must hold real numbers, got {forces.dtype}")
            return forces[None]
        except SKOError as error:  # the torque function's fault: raised to the caller, at its time
            raise renamed(error, f"simulate: torque(t, q, qd) at t = {t:.6g} s returned bad forces: {error}") from None

    return tau
