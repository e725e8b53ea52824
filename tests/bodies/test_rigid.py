"""The rigid body type against the rigid-system layer, and ``r = 0`` flexible bodies against
rigid bodies (BODIES.md: "With r_k = 0 the flexible body is exactly the rigid body")."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import FlexibleBody, RigidBody
from sko.systems import MultibodySystem
from sko.independent import particles_from_inertia
from sko.bodies import Free, Prismatic, Revolute, Spherical
from sko.systems import BodySpec, RigidSystem
from sko.spatial import inertia_parameters, pose_transform, spatial_inertia
from tests.util import assert_close


def _specs(seed: int, n: int = 7):
    rng = np.random.default_rng(seed)
    specs = []
    for g in range(n):
        parent = None if g == 0 else f"b{int(rng.integers(0, g))}"
        joint = Free() if g == 0 else [Revolute(rng.standard_normal(3)), Prismatic(rng.standard_normal(3)), Spherical()][g % 3]
        A = rng.standard_normal((3, 3))
        S = 0.05 * A @ A.T + 0.02 * np.eye(3)
        inertia = spatial_inertia(rng.uniform(0.5, 2), 0.3 * rng.standard_normal(3), np.trace(S) * np.eye(3) - S)
        specs.append(BodySpec(f"b{g}", parent, joint, pose_transform(rng.standard_normal(3), rng.standard_normal(3)), inertia))
    return specs


@pytest.mark.parametrize("seed", range(4))
def test_rigid_body_type_reproduces_the_rigid_system(seed):
    specs = _specs(seed)
    rigid = RigidSystem(specs, {}, np.array([0, 0, 0, 0, 0, -9.81]))
    system = MultibodySystem([RigidBody(s.name, s.parent, s.joint, s.inertia, s.placement) for s in specs])
    rng = np.random.default_rng(seed)
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    qdd, tau = rng.standard_normal(system.dof_size), rng.standard_normal(system.dof_size)
    m1, a1, b1 = rigid.sko_model(q, qd)
    m2, a2, b2 = system.sko_model(q, qd)
    for k in m1.bodies:
        assert_close(m2.phi.get(k, np.zeros(0)), m1.phi.get(k, np.zeros(0)), 1e-13)
        assert_close(m2.H[k], m1.H[k], 1e-13)
        assert_close(m2.M[k], m1.M[k], 1e-13)
    assert_close(a2, a1, 1e-12)
    assert_close(b2, b1, 1e-12)
    assert_close(system.mass_matrix(q), rigid.mass_matrix(q), 1e-12)
    assert_close(system.inverse_dynamics(q, qd, qdd), rigid.inverse_dynamics(q, qd, qdd), 1e-12)
    assert_close(system.forward_dynamics(q, qd, tau), rigid.forward_dynamics(q, qd, tau), 1e-10)
    assert system.energy(q, qd) == pytest.approx(rigid.energy(q, qd), rel=1e-12)
    assert_close(system.qdot(q, qd), rigid.qdot(q, qd), 1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_flexible_body_without_modes_is_the_rigid_body(seed):
    specs = _specs(seed, n=5)
    rigid = MultibodySystem([RigidBody(s.name, s.parent, s.joint, s.inertia, s.placement) for s in specs])
    flexible = []
    for s in specs:
        masses, positions = particles_from_inertia(*inertia_parameters(s.inertia))
        flexible.append(FlexibleBody(s.name, s.parent, s.joint, masses, positions, None, placement=s.placement))
    flexible = MultibodySystem(flexible)
    rng = np.random.default_rng(seed)
    q, qd = rigid.random_configuration(rng), rng.uniform(-1.0, 1.0, rigid.nv)
    m1, a1, b1 = rigid.sko_model(q, qd)
    m2, a2, b2 = flexible.sko_model(q, qd)
    assert {k: w.shape for k, w in m2.phi.items()} == {k: w.shape for k, w in m1.phi.items()}
    for k in m1.bodies:
        assert_close(m2.M[k], m1.M[k], 1e-12)
        assert_close(m2.H[k], m1.H[k], 1e-14)
    assert_close(a2, a1, 1e-12)
    assert_close(b2, b1, 1e-12)
    assert_close(flexible.mass_matrix(q), rigid.mass_matrix(q), 1e-12)
    assert_close(flexible.bias_forces(q, qd), rigid.bias_forces(q, qd), 1e-12)
