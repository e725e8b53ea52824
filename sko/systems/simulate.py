"""Time integration of a :class:`~sko.systems.multibody.MultibodySystem` (classical Runge–Kutta).

The state is ``(q, θ̇)``; ``q̇ = system.qdot(q, θ̇)`` and ``θ̈`` comes from the system's forward
dynamics (Algorithm 6.1). After each step ``q`` is projected back onto its manifold (unit
quaternions), which does not change the fourth order of the method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from sko.arrays import checked_count, checked_scalar
from sko.graphs.errors import NonFiniteError, SKOError

__all__ = ["Trajectory", "simulate"]


class Trajectory(NamedTuple):
    """Times (s,), positions (s, n_q), hinge velocities (s, n) and energies (s,)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray


def simulate(system, q0, qd0, dt: float, steps: int, torque: Callable | None = None,
             progress: Callable[[int], None] | None = None) -> Trajectory:
    """Integrate ``steps`` RK4 steps of size ``dt`` from ``(q0, θ̇0)``.

    ``torque(t, q, qd)`` returns the hinge forces ``T`` (zero if omitted); ``progress(done)``,
    if given, is called after each step. Energies are ``system.energy`` at every stored state.
    """
    def tau(t, q, qd):
        return None if torque is None else torque(t, q, qd)

    def rate(t, q, qd):
        return system.qdot(q, qd), system.forward_dynamics(q, qd, tau(t, q, qd))

    dt = checked_scalar(dt, "simulate: time step dt", positive=True)
    steps = checked_count(steps, "simulate: number of steps")
    if torque is not None and not callable(torque):
        raise SKOError(f"simulate: torque must be a callable torque(t, q, qd), got {type(torque).__name__}")
    q, qd = system.checked_vectors(q0, qd0)
    q, qd = system.normalize(np.array(q, dtype=float)), np.array(qd, dtype=float)
    ts, qs, qds = [0.0], [q], [qd]
    for i in range(steps):
        t = i * dt
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # a diverging step is reported below
                k1q, k1v = rate(t, q, qd)
                k2q, k2v = rate(t + dt / 2, q + dt / 2 * k1q, qd + dt / 2 * k1v)
                k3q, k3v = rate(t + dt / 2, q + dt / 2 * k2q, qd + dt / 2 * k2v)
                k4q, k4v = rate(t + dt, q + dt * k3q, qd + dt * k3v)
                q = system.normalize(q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q))
                qd = qd + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
            if not (np.isfinite(q).all() and np.isfinite(qd).all()):
                raise NonFiniteError("the state overflows (NaN or infinity)")
        except NonFiniteError as exc:  # say where: the user gave neither the state nor its overflow
            raise NonFiniteError(f"simulate: step {i + 1} (t = {t:.6g} s) leaves the floating-point range, so the "
                                 f"motion diverges or dt = {dt:.3g} is too large for it: {exc}") from None
        ts.append(t + dt)
        qs.append(q)
        qds.append(qd)
        if progress is not None:
            progress(i + 1)
    energy = np.asarray(system.energy(np.array(qs), np.array(qds)))  # one batched call
    return Trajectory(np.array(ts), np.array(qs), np.array(qds), energy)
