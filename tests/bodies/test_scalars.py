"""Generic scalars: complex steps and sympy expressions flow through the body types and the
generic recursions. Complex-step derivatives of ℳ, 𝒞 and θ̈ along a direction in (q, θ̇)
match central differences; symbolic rigid and rotor models evaluate to the numeric ones."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.bodies import random_system
from tests.util import assert_close

from .helpers import random_state


@pytest.mark.parametrize("seed", range(3))
def test_complex_step_derivatives(seed):
    system = random_system(seed, n_bodies=7, shape="random")
    rng = np.random.default_rng(seed)
    q, qd = random_state(system, rng)
    dq, dv, tau = rng.standard_normal(system.q_size), rng.standard_normal(system.dof_size), rng.standard_normal(system.dof_size)
    h, e = 1e-30, 1e-6
    for f in (lambda x, v: system.mass_matrix(x), system.bias_forces, lambda x, v: system.forward_dynamics(x, v, tau),
              system.energy, system.kinetic_energy, lambda x, v: system.potential_energy(x)):
        step = f(q + 1j * h * dq, qd + 1j * h * dv)
        assert np.iscomplexobj(step)
        central = (f(q + e * dq, qd + e * dv) - f(q - e * dq, qd - e * dv)) / (2 * e)
        assert_close(step.imag / h, central, 1e-7)
        assert_close(step.real, f(q, qd), 1e-13)


def test_symbolic_rigid_and_rotor_links():
    """sympy expressions flow through rigid and geared-rotor body types and the recursions:
    the symbolic ℳ and energy, evaluated, equal the numeric ones."""
    import sympy

    from sko.bodies import GearedRotorLink, RigidBody
    from sko.systems import MultibodySystem
    from sko.bodies import Revolute
    from sko.spatial import pose_transform, spatial_inertia

    link = spatial_inertia(1.0, [0.0, 0.0, -0.5], 0.01 * np.eye(3))
    system = MultibodySystem([
        RigidBody("a", None, Revolute([0, 1, 0]), link + spatial_inertia(0.2, [0.0, 0.0, -1.0], np.zeros((3, 3)))),
        GearedRotorLink("b", "a", Revolute([0, 1, 0]), link, [0, 1, 0], 10.0, 1e-3, 8e-4, rotor_mass=0.2,
                        rotor_centre=[0.0, 0.0, -1.0], placement=pose_transform([0.0, 0.0, -1.0])),
    ])
    q_sym, qd_sym = sympy.symbols("q1 q2"), sympy.symbols("u1 u2")
    M = sympy.Matrix(system.mass_matrix(np.array(q_sym, dtype=object)))
    E = system.energy(np.array(q_sym, dtype=object), np.array(qd_sym, dtype=object))
    q, qd = np.array([0.3, -1.2]), np.array([0.7, 2.0])
    values = dict(zip(q_sym + qd_sym, [*q, *qd]))
    assert_close(np.array(M.subs(values), dtype=float), system.mass_matrix(q), 1e-13)
    assert float(E.subs(values)) == pytest.approx(system.energy(q, qd), rel=1e-13)
    assert M[1, 1].free_symbols == set()  # the elbow's own inertia does not depend on q (rotor: 10² J_a added)


def test_rigid_system_energy_keeps_complex_steps():
    """The rigid layer delegates to its MultibodySystem, so a complex step survives there too."""
    from sko.examples.rigid import planar_chain

    chain = planar_chain(3)
    rng = np.random.default_rng(0)
    q, qd, dq = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3)
    h, e = 1e-30, 1e-6
    for f in (chain.energy, chain.kinetic_energy, lambda x, v: chain.potential_energy(x)):
        step = f(q + 1j * h * dq, qd + 1j * h * dq)
        assert np.iscomplexobj(step)
        central = (f(q + e * dq, qd + e * dq) - f(q - e * dq, qd - e * dq)) / (2 * e)
        assert abs(step.imag / h - central) <= 1e-7 * max(1.0, abs(central))
    assert chain.kinetic_energy(q, qd) == pytest.approx(qd @ chain.mass_matrix(q) @ qd / 2, rel=1e-13)
