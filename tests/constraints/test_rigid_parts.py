"""Two frames that move with one rigid part of a body are refused as a constraint pair
(CONSTRAINTS.md §1): the attachments of a flexible body without modes, a node of one whose pose
does not depend on the modes, a cluster's ``None`` frame and its first member."""

import numpy as np
import pytest

from sko.bodies import Revolute
from sko.bodies.flexible import FlexibleBody
from sko.bodies.rigid import RigidBody
from sko.constraints import ConstraintError, FrameConstraint
from sko.constraints.dynamics import reference_constrained_dynamics
from sko.examples.embedding import four_bar
from sko.spatial import spatial_inertia
from sko.systems.multibody import MultibodySystem

SIX = (0, 1, 2, 3, 4, 5)


def _flexible_arm(r: int) -> MultibodySystem:
    """A flexible link with ``r`` modes and three nodes (``still``: no modal motion), and a rigid
    link below it."""
    rng = np.random.default_rng(3)
    n = 5
    nodes = {"a": ([0.5, 0.0, 0.1], 0.2 * rng.normal(size=(3, r)), 0.2 * rng.normal(size=(3, r))),
             "b": ([1.0, 0.1, 0.0], 0.2 * rng.normal(size=(3, r)), 0.2 * rng.normal(size=(3, r))),
             "still": ([0.2, 0.0, 0.0], np.zeros((3, r)), np.zeros((3, r)))}
    K = 10.0 * np.eye(r)
    link = FlexibleBody("link", None, Revolute([0, 1, 0]), rng.uniform(0.2, 0.5, n), rng.normal(size=(n, 3)),
                        0.2 * rng.normal(size=(n, 3, r)), K, nodes=nodes)
    hand = RigidBody("hand", "link", Revolute([1, 0, 0]), spatial_inertia(1.0, np.array([0.1, 0, 0]), 0.01 * np.eye(3)),
                     attach="b")
    return MultibodySystem([link, hand])


def _state(system):
    rng = np.random.default_rng(0)
    return system.random_configuration(rng), *rng.normal(size=(2, system.nv))


@pytest.mark.parametrize("pair", [(("link", "a"), ("link", "b")), ("link", ("link", "a")), (("link", "still"), "link")])
def test_attachments_of_a_flexible_body_without_modes_are_one_rigid_body(pair):
    system = _flexible_arm(0)
    q, v, tau = _state(system)
    c = [FrameConstraint(*pair, directions=SIX)]
    for solve in (system.constrained_dynamics, lambda *a: reference_constrained_dynamics(system, *a)):
        with pytest.raises(ConstraintError, match="same rigid body"):
            solve(q, v, tau, c)


def test_a_node_without_modal_motion_moves_with_the_body_frame():
    system = _flexible_arm(2)
    q, v, tau = _state(system)
    with pytest.raises(ConstraintError, match="same rigid body"):
        system.constrained_dynamics(q, v, tau, [FrameConstraint(("link", "still"), "link", directions=SIX)])
    dv, lam = system.constrained_dynamics(q, v, tau, [FrameConstraint(("link", "a"), ("link", "b"), directions=(0, 1))])
    assert np.isfinite(dv).all() and np.abs(lam).max() < 1e6


def test_a_cluster_frame_none_is_its_first_member():
    cluster = four_bar().body("crank")
    system = MultibodySystem([cluster])
    q = system.neutral_configuration()
    with pytest.raises(ConstraintError, match="same rigid body"):
        system.constraint_jacobian(q, [FrameConstraint("crank", ("crank", "crank"))])
    assert system.constraint_jacobian(q, [FrameConstraint("crank", ("crank", "rocker"))]).shape == (5, 1)


def test_a_body_without_degrees_of_freedom_moves_with_its_parent_frame():
    from sko.bodies import Fixed
    from sko.constraints.kinematics import resolved

    inertia = spatial_inertia(1.0, np.array([0.1, 0, 0]), 0.01 * np.eye(3))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia), RigidBody("b", "a", Fixed(), inertia),
                              RigidBody("c", "b", Revolute([1, 0, 0]), inertia),
                              RigidBody("base", None, Fixed(), inertia)])
    for pair in (("a", "b"), ("b", "a")):
        with pytest.raises(ConstraintError, match="same rigid body"):
            resolved(system, [FrameConstraint(*pair)])
    with pytest.raises(ConstraintError, match="fixed on the world"):
        resolved(system, [FrameConstraint("base")])
    assert len(resolved(system, [FrameConstraint("c", "b"), FrameConstraint("a", "base")])) == 2
