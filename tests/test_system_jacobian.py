"""``MultibodySystem.jacobian``: the spatial velocity map of every attachment frame a body offers
(own frames, a flexible body's modal nodes, a carriage sliding on an arm), on both backends, one
state and batches: ``J v`` is the frame velocity of the node states, and the frame's pose moves
at ``J v`` (central differences along ``integrate(q, ±h v)``)."""

from __future__ import annotations

import numpy as np
import pytest

from sko.engine import use_backend
from sko.examples.bodies import flexible_examples
from sko.graphs.errors import UnknownNodeError
from tests.bodies.test_paper import _load
from tests.util import assert_close

beads, carriages = _load("tutorial_body_type"), _load("tutorial_body_with_children")
SYSTEMS = {"beads on a beam": beads.build, "carriage arms": carriages.build,
           "flexible geared arm": flexible_examples()["flexible-geared-arm"]}


def _frames(system) -> list:
    return [k if name is None else (k, name) for k in system.bodies for name in system.body(k).attachment_names]


def _attachment(states, frame):
    k, name = (frame, None) if not isinstance(frame, tuple) else frame
    return states[k].attachments[name]


def _state(system, seed: int = 0):
    rng = np.random.default_rng(seed)
    return system.random_configuration(rng), rng.uniform(-1.0, 1.0, system.nv)


@pytest.mark.parametrize("name", SYSTEMS)
def test_jacobian_maps_velocities_to_the_frame_velocity_on_both_backends(name):
    system = SYSTEMS[name]()
    q, v = _state(system)
    states = system.node_states(q, v)
    frames = _frames(system)
    assert any(isinstance(f, tuple) for f in frames)  # a frame other than a body's own
    for frame in frames:
        J = system.jacobian(q, frame)
        assert J.shape == (6, system.nv)
        assert_close(J @ v, _attachment(states, frame).velocity, 1e-12)
        with use_backend("reference"):
            assert_close(J, system.jacobian(q, frame), 1e-12)


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_frame_pose_moves_at_jacobian_times_velocity(name):
    system = SYSTEMS[name]()
    q, v = _state(system, 1)
    h = 1e-5
    ahead, behind = system.node_states(system.integrate(q, v, h)), system.node_states(system.integrate(q, v, -h))
    here = system.node_states(q)
    for frame in _frames(system):
        R = np.asarray(_attachment(here, frame).rotation)
        a, b = _attachment(ahead, frame), _attachment(behind, frame)
        W = R.T @ (np.asarray(a.rotation) - np.asarray(b.rotation)) / (2 * h)  # ω× in frame coordinates
        twist = np.concatenate([[W[2, 1], W[0, 2], W[1, 0]], R.T @ (np.asarray(a.position) - np.asarray(b.position)) / (2 * h)])
        assert_close(system.jacobian(q, frame) @ v, twist, 1e-7)


@pytest.mark.parametrize("name", SYSTEMS)
def test_batched_jacobians_equal_per_state(name):
    system = SYSTEMS[name]()
    rng = np.random.default_rng(2)
    Q = np.array([system.random_configuration(rng) for _ in range(5)])
    for frame in _frames(system):
        J = system.jacobian(Q, frame)
        assert J.shape == (5, 6, system.nv)
        for s in range(5):
            assert_close(J[s], system.jacobian(Q[s], frame), 1e-13)


def test_complex_states_carry_through():
    system = carriages.build()
    q, v = _state(system, 3)
    w = np.random.default_rng(4).standard_normal(system.nq)
    J = system.jacobian(q + 1e-20j * w, ("arm", "carriage"))
    derivative = J.imag / 1e-20  # d J / d q along w, the complex step
    h = 1e-6
    central = (system.jacobian(q + h * w, ("arm", "carriage")) - system.jacobian(q - h * w, ("arm", "carriage"))) / (2 * h)
    assert np.abs(derivative).max() > 1e-3
    assert_close(derivative, central, 1e-7)


def test_unknown_frames_are_named():
    system = beads.build()
    with pytest.raises(UnknownNodeError, match="offers no attachment frame None"):
        system.jacobian(system.neutral_configuration(), "bead-on-beam")  # a bead offers no frame
    with pytest.raises(UnknownNodeError, match="'beam'.*offers no attachment frame 'root'"):
        system.jacobian(system.neutral_configuration(), ("beam", "root"))
    with pytest.raises(UnknownNodeError, match="neither a body nor a pair"):
        system.jacobian(system.neutral_configuration(), ["beam"])


def test_a_body_without_coordinates_has_a_jacobian_on_both_paths():
    """A MultibodySystem keeps a body on a fixed joint as a node of its own (n = 0): its
    Jacobian and its children's equal the reference path's, one state and a batch."""
    from sko.bodies import Fixed, Revolute, RigidBody
    from sko.spatial import spatial_inertia
    from sko.systems import MultibodySystem

    inertia = spatial_inertia(1.0, [0.1, 0.0, 0.0], 0.1 * np.eye(3))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 0, 1]), inertia),
                              RigidBody("b", "a", Fixed(), inertia), RigidBody("c", "b", Revolute([0, 1, 0]), inertia)])
    Q = np.array([[0.3, 0.2], [-1.1, 0.7]])
    for k in ("a", "b", "c"):
        J = system.jacobian(Q, k)
        with use_backend("reference"):
            want = system.jacobian(Q, k)
        np.testing.assert_allclose(J, want, rtol=0, atol=1e-14)
        np.testing.assert_allclose(system.jacobian(Q[1], k), want[1], rtol=0, atol=1e-14)
