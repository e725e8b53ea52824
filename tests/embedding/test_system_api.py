"""Kinematics of clustered systems: poses, Jacobians, centre of mass of member bodies, and the
independent coordinates' positions, against the spanning tree at the closed configuration."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.embedding import four_bar, mimic_gripper
from sko.graphs.errors import UnknownNodeError


@pytest.mark.parametrize("factory", [mimic_gripper, four_bar])
def test_member_kinematics_match_the_spanning_tree(factory):
    system = factory()
    spanning = system.spanning_system()
    rng = np.random.default_rng(2)
    q = system.neutral_configuration() + 0.05 * rng.normal(size=system.nq)
    v = rng.normal(size=system.nv)
    theta = system.spanning_configuration(q)
    G = system.constraint_matrices(q, v)[0]
    for body in system.body_names:
        assert np.allclose(system.frame_pose(q, body), spanning.frame_pose(theta, body), atol=1e-12)
        assert np.allclose(system.jacobian(q, body), spanning.jacobian(theta, body) @ G, atol=1e-12)
        assert np.allclose(system.body_velocities(q, v)[body], spanning.body_velocities(theta, G @ v)[body], atol=1e-12)
    assert np.allclose(system.center_of_mass(q), spanning.center_of_mass(theta), atol=1e-12)
    h = 1e-6
    dc = (system.center_of_mass(q + h * v) - system.center_of_mass(q - h * v)) / (2 * h)
    assert np.allclose(system.center_of_mass_jacobian(q) @ v, dc, atol=1e-7)


def test_independent_slices_and_dependent_joints():
    system = mimic_gripper()
    assert system.independent_slice("finger1").stop - system.independent_slice("finger1").start == 1
    with pytest.raises(UnknownNodeError, match="finger2"):
        system.independent_slice("finger2")
    theta = system.joint_positions(system.neutral_configuration())
    assert list(theta) == list(system.body_names)
