"""A four-bar simulated over 5 s (EMBEDDING.md §5 (b)): the loop stays closed, energy drift falls
at RK4's order, and the trajectory equals a dense KKT integration of the spanning tree."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.embedding import four_bar
from sko.simulation.simulate import simulate

DURATION = 5.0


@pytest.fixture(scope="module")
def runs():
    out = {}
    for dt in (0.025, 0.0125):
        system = four_bar()
        out[dt] = (system, simulate(system, system.neutral_configuration(), [0.0], dt, int(round(DURATION / dt))))
    return out


def _pins(system, spanning, q):
    """World positions of the two loop-joint points (coupler end, rocker end), from body poses
    of the spanning tree: no code of the closure."""
    poses = spanning.body_poses(system.spanning_configuration(q))
    coupler = poses["coupler"] @ np.array([1.5, 0, 0, 1])
    rocker = poses["rocker"] @ np.array([1.5, 0, 0, 1])
    return coupler[:3], rocker[:3]


def _planar_loop(theta, thetad):
    """``K`` and ``K̇ θ̇`` of the pin equations written by hand: coupler end
    ``0.5 e(θ1) + 1.5 e(θ1 + θ2)`` meets rocker end ``(2, 0) + 1.5 e(θ3)``, ``e(a) = (cos a, sin a)``."""
    a1, a12, a3 = theta[0], theta[0] + theta[1], theta[2]
    w1, w12, w3 = thetad[0], thetad[0] + thetad[1], thetad[2]
    perp = lambda a: np.array([-np.sin(a), np.cos(a)])  # noqa: E731
    e = lambda a: np.array([np.cos(a), np.sin(a)])  # noqa: E731
    K = np.column_stack([0.5 * perp(a1) + 1.5 * perp(a12), 1.5 * perp(a12), -1.5 * perp(a3)])
    Kdv = -0.5 * w1**2 * e(a1) - 1.5 * w12**2 * e(a12) + 1.5 * w3**2 * e(a3)
    return K, Kdv


def test_loop_stays_closed(runs):
    system, traj = runs[0.025]
    spanning = system.spanning_system()
    gap = max(np.linalg.norm(np.subtract(*_pins(system, spanning, q))) for q in traj.q[::5])
    assert gap < 1e-9


def test_energy_drift_falls_at_fourth_order(runs):
    drift = {dt: np.abs(traj.energy - traj.energy[0]).max() for dt, (_, traj) in runs.items()}
    assert drift[0.025] > 0
    assert drift[0.025] / drift[0.0125] > 10  # 2⁴ = 16 for RK4


def _dense_kkt_crank(system, traj, dt):
    """The crank angle of an RK4 integration of the spanning tree's KKT equations (hand-written
    pin constraints), from the same initial state."""
    spanning = system.spanning_system()

    def rate(theta, thetad):
        M, C = spanning.mass_matrix(theta), spanning.bias_forces(theta, thetad)
        K, Kdv = _planar_loop(theta, thetad)
        sol = np.linalg.solve(np.block([[M, K.T], [K, np.zeros((2, 2))]]), np.concatenate([-C, -Kdv]))
        return thetad, sol[:3]

    system.spanning_configuration(system.neutral_configuration())  # back on the initial branch
    theta = system.spanning_configuration(traj.q[0])
    thetad = system.constraint_matrices(traj.q[0], traj.qd[0])[0] @ traj.qd[0]
    crank = [theta[0]]
    for _ in range(len(traj.t) - 1):
        k1 = rate(theta, thetad)
        k2 = rate(theta + dt / 2 * k1[0], thetad + dt / 2 * k1[1])
        k3 = rate(theta + dt / 2 * k2[0], thetad + dt / 2 * k2[1])
        k4 = rate(theta + dt * k3[0], thetad + dt * k3[1])
        theta = theta + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        thetad = thetad + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        crank.append(theta[0])
    return np.array(crank)


def test_trajectory_equals_dense_kkt_integration(runs):
    """Both are RK4 on the same ODE in different coordinates: they agree to the discretisation
    error, which falls at fourth order."""
    gap = {dt: np.abs(_dense_kkt_crank(system, traj, dt) - traj.q[:, 0]).max() for dt, (system, traj) in runs.items()}
    assert gap[0.0125] < 0.05
    assert gap[0.025] / gap[0.0125] > 10  # 2⁴ = 16
