"""External forces through the body-type contract, against the independent particle model's
frame kinematics: a force ``[n; f]`` (world, about the world origin) on body ``k`` contributes
the generalised force ``Q_j = n·ω_j + f·(ṗ_j − ω_j × p)``, with ``(ω_j, ṗ_j)`` the world angular
velocity and origin velocity of ``F_k`` for the unit hinge velocity ``θ̇ = e_j``."""

from __future__ import annotations

import numpy as np
import pytest

from sko import DimensionError, NonFiniteError, RankDeficientError, UnknownNodeError
from sko.bodies import RigidBody
from sko.systems import MultibodySystem
from sko.examples.bodies import random_system
from sko.bodies import CustomJoint, Revolute
from sko.spatial import rot, rz, spatial_inertia
from tests.util import assert_close

from .helpers import random_state
from .particle_model import particle_tree


def _generalised_force(system, q, body, wrench) -> np.ndarray:
    """``Q`` by complex-step frame velocities of the particle model (no shared code)."""
    particles, h = particle_tree(system), 1e-30
    T = particles.frames(q)[body]
    R, p = T[:3, :3], T[:3, 3]
    G = particles.qdot_map(q)
    Q = np.zeros(system.dof_size)
    for j in range(system.dof_size):
        dT = particles.frames(q + 1j * h * G[:, j])[body].imag / h
        W = dT[:3, :3] @ R.T  # ω×
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        Q[j] = wrench[:3] @ omega + wrench[3:] @ (dT[:3, 3] - np.cross(omega, p))
    return Q


@pytest.mark.parametrize("seed", range(4))
def test_external_forces_on_mixed_trees_are_their_virtual_power(seed):
    system = random_system(seed, n_bodies=6, shape="random")
    rng = np.random.default_rng(seed)
    q, qd = random_state(system, rng)
    qdd, tau = rng.standard_normal((2, system.dof_size))
    bodies = [system.bodies[i] for i in rng.choice(len(system.bodies), 2, replace=False)]
    forces = {k: rng.standard_normal(6) for k in bodies}
    Q = sum(_generalised_force(system, q, k, f) for k, f in forces.items())
    scale = np.abs(Q).max() + np.abs(system.inverse_dynamics(q, qd, qdd)).max()
    assert_close(system.inverse_dynamics(q, qd, qdd, external_forces=forces), system.inverse_dynamics(q, qd, qdd) - Q,
                 1e-10, scale=scale)
    assert_close(system.bias_forces(q, qd, forces), system.bias_forces(q, qd) - Q, 1e-10, scale=scale)
    assert_close(system.forward_dynamics(q, qd, tau, forces), system.forward_dynamics(q, qd, tau + Q), 1e-10)
    assert (forces[bodies[0]] == forces[bodies[0]]).all()  # not mutated (finite, same object)


def test_bad_external_forces_and_states_are_named():
    system = random_system(0, n_bodies=3)
    rng = np.random.default_rng(0)
    q, qd = system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)
    k = system.bodies[1]
    with pytest.raises(UnknownNodeError, match="ghost"):
        system.sko_model(q, qd, {"ghost": np.zeros(6)})
    with pytest.raises(DimensionError, match=rf"external force of body {k!r} must have shape \(6,\)"):
        system.sko_model(q, qd, {k: np.zeros(3)})
    with pytest.raises(NonFiniteError, match=f"external force of body {k!r}"):
        system.sko_model(q, qd, {k: np.full(6, np.nan)})
    with pytest.raises(DimensionError, match="mapping"):
        system.sko_model(q, qd, [np.zeros(6)])
    with pytest.raises(NonFiniteError, match="v "):
        system.sko_model(q, np.full(system.dof_size, np.inf))
    with pytest.raises(NonFiniteError, match="q"):
        system.mass_matrix(np.full(system.q_size, np.nan))


def test_user_joints_are_checked_at_every_state():
    """Built-in joints make the rigid body valid by construction; a user-defined joint does not,
    and its motion subspace is checked at each state (here it loses rank at q = 0)."""
    inertia = spatial_inertia(1.0, [0.1, 0.0, 0.0], np.eye(3))

    def kinematics(q, v):
        S = np.array([[0, 0, 1, 0, 0, 0], [np.sin(q[0]), 0, 0, 0, 0, 0]], dtype=float).T
        return rot(rz(q[0])), S, np.zeros(6)

    custom = RigidBody("c", None, CustomJoint(1, 2, kinematics, qdot=lambda q, v: v[:1]), inertia)
    assert RigidBody("r", None, Revolute(), inertia).valid_by_construction and not custom.valid_by_construction
    system = MultibodySystem([custom])
    system.mass_matrix([0.5])
    with pytest.raises(RankDeficientError, match="'c'"):
        system.mass_matrix([0.0])
