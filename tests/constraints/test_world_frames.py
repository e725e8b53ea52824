"""A constraint to a frame fixed on the world (``add_frame(..., parent=None)``) is the constraint
to that frame's pose as a target (CONSTRAINTS.md §1), on both paths."""

import numpy as np
import pytest

from sko.bodies import Revolute, Spherical
from sko.constraints import FrameConstraint, constraint_drift, constraint_error, constraint_jacobian
from sko.constraints.dynamics import reference_constrained_dynamics, reference_impulse_dynamics
from sko.spatial import axis_angle_matrix, plucker, pose_transform
from sko.systems import SystemBuilder

ANCHOR = np.eye(4)  # the anchor's world pose
ANCHOR[:3, :3], ANCHOR[:3, 3] = axis_angle_matrix(np.array([0.6, -0.8, 0.0]), 0.4), [0.5, 0.1, -1.5]


def _arm():
    b = SystemBuilder(gravity=[0, 0, -9.81])
    inertia = dict(mass=1.0, com=[0, 0, -0.5], inertia_com=np.diag([0.1, 0.1, 0.01]))
    b.add_body("l1", None, Revolute([0, 1, 0]), **inertia)
    b.add_body("l2", "l1", Spherical(), placement=pose_transform([0, 0, -1.0]), **inertia)
    b.add_body("l3", "l2", Revolute([1, 0, 0]), placement=pose_transform([0, 0, -1.0]), **inertia)
    b.add_frame("tip", "l3", pose_transform([0, 0.1, -1.0]))
    b.add_frame("anchor", None, plucker(ANCHOR[:3, :3].T, ANCHOR[:3, 3]))
    return b.build()


@pytest.mark.parametrize("reference", ["local", "world", "local_world_aligned"])
@pytest.mark.parametrize("directions", [(0, 2), (0, 1, 2), (1, 3, 5), (0, 1, 2, 3, 4)])
def test_a_world_frame_is_its_pose_as_a_target(reference, directions):
    system = _arm()
    rng = np.random.default_rng(1)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    gains = (10.0, 1.0)
    to_frame = [FrameConstraint("tip", "anchor", directions=directions, reference=reference, baumgarte=gains)]
    to_pose = [FrameConstraint("tip", None, None, ANCHOR, directions=directions, reference=reference, baumgarte=gains)]
    expected = system.constrained_dynamics(q, v, tau, to_pose)
    for answer in (system.constrained_dynamics(q, v, tau, to_frame),
                   reference_constrained_dynamics(system, q, v, tau, to_frame)):
        for got, want in zip(answer, expected):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    for f in (lambda c: constraint_jacobian(system, q, c), lambda c: constraint_drift(system, q, v, c),
              lambda c: constraint_error(system, q, c)):
        np.testing.assert_allclose(f(to_frame), f(to_pose), rtol=1e-12, atol=1e-12)
    expected = system.impulse_dynamics(q, v, to_pose, 0.5)
    for got, want in zip(reference_impulse_dynamics(system, q, v, to_frame, 0.5), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
