"""Energy conservation: a conservative system (no torque, no damping) simulated with RK4 keeps
its energy, and the drift shrinks at the integrator's order (≈ 2⁴ per halving of the step)."""

import numpy as np
import pytest

from sko.bodies import Free, Revolute, Spherical
from sko.systems import SystemBuilder
from sko.examples.rigid import box_inertia, planar_chain, rod_inertia
from sko.spatial import pose_transform


def floating_tree():
    """A free-floating box carrying a two-link arm and a ball-jointed pendulum, under gravity."""
    b = SystemBuilder()
    b.add_body("hub", None, Free(), mass=3.0, com=[0, 0, 0], inertia_com=box_inertia(3.0, [0.4, 0.3, 0.2]))
    b.add_body("arm", "hub", Revolute([0, 1, 0]), pose_transform([0.2, 0, 0]), mass=1.0, com=[0.25, 0, 0],
               inertia_com=rod_inertia(1.0, 0.5, axis=0))
    b.add_body("forearm", "arm", Revolute([0, 0, 1]), pose_transform([0.5, 0, 0]), mass=0.5, com=[0.2, 0, 0],
               inertia_com=rod_inertia(0.5, 0.4, axis=0))
    b.add_body("bob", "hub", Spherical(), pose_transform([-0.2, 0, 0]), mass=0.8, com=[0, 0, -0.3],
               inertia_com=rod_inertia(0.8, 0.6))
    return b.build()


def rk4_drift(system, q, qd, dt: float, duration: float) -> float:
    """Largest |E(t) − E(0)| of an unforced RK4 simulation; quaternions renormalised each step."""
    zero = np.zeros(system.nv)

    def rate(q, qd):
        return system.qdot(q, qd), system.forward_dynamics(q, qd, zero)

    E0 = system.energy(q, qd)
    drift = 0.0
    for _ in range(int(round(duration / dt))):
        k1 = rate(q, qd)
        k2 = rate(q + dt / 2 * k1[0], qd + dt / 2 * k1[1])
        k3 = rate(q + dt / 2 * k2[0], qd + dt / 2 * k2[1])
        k4 = rate(q + dt * k3[0], qd + dt * k3[1])
        q = system.normalize(q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]))
        qd = qd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        drift = max(drift, abs(system.energy(q, qd) - E0))
    return drift


@pytest.mark.parametrize("make, dt", [(lambda: planar_chain(3), 0.01), (floating_tree, 0.02)], ids=["pendulum3", "floating_tree"])
def test_energy_drift_shrinks_at_fourth_order(make, dt):
    system = make()
    rng = np.random.default_rng(0)
    q, qd = system.random_configuration(rng), rng.normal(size=system.nv)
    scale = abs(system.kinetic_energy(q, qd)) + abs(system.potential_energy(q)) + 1.0
    coarse = rk4_drift(system, q, qd, dt, 0.6)
    fine = rk4_drift(system, q, qd, dt / 2, 0.6)
    assert fine < 1e-5 * scale
    assert coarse / fine > 2**3.3, f"drift {coarse:.3e} -> {fine:.3e}: ratio {coarse / fine:.1f}, expected about 16"

