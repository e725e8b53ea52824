"""Energy conservation without damping or input (BODIES.md): the drift of RK4 shrinks with the
step size at the method's order."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.bodies import flexible_spacecraft, geared_rotor_chain, random_system
from sko.simulation.simulate import simulate

from .helpers import random_state


def _drifts(system, horizon: float, dt: float, seed: int = 0):
    q, qd = random_state(system, np.random.default_rng(seed), deformation=0.1)
    out = []
    for h in (dt, dt / 2):
        traj = simulate(system, q, qd, h, int(round(horizon / h)))
        out.append(np.abs(traj.energy - traj.energy[0]).max() / max(1.0, np.abs(traj.energy).max()))
    return out


@pytest.mark.parametrize("system", [random_system(5, n_bodies=5, shape="random", damping=False), flexible_spacecraft(),
                                    geared_rotor_chain()], ids=["random-mixed", "flexible-spacecraft", "geared-rotor-chain"])
def test_energy_drift_shrinks_at_fourth_order(system):
    coarse, fine = _drifts(system, 0.1, 1e-2)
    assert coarse < 1e-6
    assert fine < coarse / 8  # RK4: ideally 16; 8 leaves room for rounding


def test_damping_dissipates_energy():
    system = random_system(3, n_bodies=5, shape="random", damping=True)
    q, qd = random_state(system, np.random.default_rng(0), deformation=0.1)
    traj = simulate(system, q, qd, 2e-3, 40)
    assert np.all(np.diff(traj.energy) < 1e-9)
    assert traj.energy[-1] < traj.energy[0] - 1e-6
