"""What users of Pinocchio and MuJoCo expect: joint limits from URDF, the centre of mass and its
Jacobian, named frames as objects."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.bodies import JointLimits, Revolute
from sko.errors import JointError, URDFError
from sko.examples.rigid import example_systems
from sko.graphs.errors import UnknownNodeError
from sko.io.urdf import parse_urdf
from sko.systems.frames import Frame
from sko.io import load_urdf
from tests.rigid.random_systems import random_rigid_system
from tests.rigid.test_urdf import joint, link, robot
from tests.util import assert_close

LIMITED = robot(
    link("base"),
    link("a"), joint("hinge", "revolute", "base", "a", extra='<limit lower="-1.5" upper="2" velocity="3" effort="40"/>'),
    link("b"), joint("spin", "continuous", "a", "b", extra='<limit lower="-9" upper="9" velocity="5" effort="7"/>'),
    link("c"), joint("slide", "prismatic", "b", "c", extra='<limit upper="0.4" effort="100" velocity="0.2"/>'),
    link("d"), joint("free_spin", "continuous", "c", "d"),
)


def test_urdf_limits_are_kept_per_joint_and_stacked():
    system = parse_urdf(LIMITED)
    hinge = system.joint("hinge").limits
    assert (hinge.lower, hinge.upper, hinge.velocity, hinge.effort) == ([-1.5], [2.0], [3.0], [40.0])
    spin = system.joint("spin").limits  # continuous: position limits ignored (URDF specification)
    assert np.isinf(spin.lower).all() and np.isinf(spin.upper).all() and spin.velocity == [5.0]
    assert system.joint("slide").limits.lower == [0.0]  # lower defaults to 0
    assert np.array_equal(system.lower_position_limit, [-1.5, -np.inf, 0.0, -np.inf])
    assert np.array_equal(system.upper_position_limit, [2.0, np.inf, 0.4, np.inf])
    assert np.array_equal(system.velocity_limit, [3.0, 5.0, 0.2, np.inf])
    assert np.array_equal(system.effort_limit, [40.0, 7.0, 100.0, np.inf])


@pytest.mark.parametrize("attrs, match", [('lower="1" upper="0"', "exceeds"), ('velocity="-1"', "velocity limit"),
                                          ('effort="nan"', "finite")])
def test_bad_urdf_limits_name_the_joint(attrs, match):
    text = robot(link("base"), link("a"), joint("hinge", "revolute", "base", "a", extra=f"<limit {attrs}/>"))
    with pytest.raises(URDFError, match=f"joint 'hinge'.*{match}"):
        parse_urdf(text)


def test_limits_by_hand():
    j = Revolute([0, 0, 1], name="j").with_limits(-1, 1, velocity=2)
    assert all(np.array_equal(x, y) for x, y in zip(j.limits, JointLimits([-1.0], [1.0], [2.0], [np.inf])))
    assert Revolute([0, 0, 1]).limits.effort == [np.inf]
    with pytest.raises(JointError, match="'j'.*fit"):
        Revolute([0, 0, 1], name="j").with_limits([0, 0, 0], 1)
    assert j.reversed().limits.upper == [1.0]


def _com_by_sum(system, q):
    poses, total, moment = system.body_poses(q), 0.0, np.zeros(3)
    for k in system.bodies:
        I6 = system.body(k).inertia
        m = I6[5, 5]
        c = np.array([I6[2, 4], I6[0, 5], I6[1, 3]]) / m  # I6[:3, 3:] = m c×
        total, moment = total + m, moment + m * (poses[k][:3, :3] @ c + poses[k][:3, 3])
    return moment / total


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_center_of_mass_and_its_jacobian(seed):
    system = random_rigid_system(seed)
    rng = np.random.default_rng(seed)
    q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
    c = system.center_of_mass(q)
    assert_close(c, _com_by_sum(system, q), 1e-12, scale=1.0 + np.abs(c).max())
    h = 1e-6  # central difference along the exact flow of v
    rate = (system.center_of_mass(system.integrate(q, v, h)) - system.center_of_mass(system.integrate(q, v, -h))) / (2 * h)
    Jc = system.center_of_mass_jacobian(q)
    assert Jc.shape == (3, system.nv)
    assert_close(Jc @ v, rate, 1e-6, scale=1.0 + np.abs(rate).max())


def test_frames_are_objects_consistent_with_the_frame_methods():
    system = example_systems()["humanoid"]()
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.standard_normal(system.nv)
    sole = system.frame("left_sole")
    assert isinstance(sole, Frame) and sole.name == "left_sole" and sole.body == "left_foot"
    assert sole.placement.shape == (6, 6)
    body, X = sole  # unpacks as the former (body, placement) pair
    assert body == "left_foot" and X is sole.placement
    assert_close(sole.pose(q), system.frame_pose(q, "left_sole"), 0, scale=1.0)
    assert_close(sole.jacobian(q), system.jacobian(q, "left_sole"), 0, scale=1.0)
    assert_close(sole.velocity(q, v), sole.jacobian(q) @ v, 1e-12, scale=1.0 + np.abs(v).max())
    assert system.frames["left_sole"] is sole and system.frame("pelvis").body == "pelvis"
    with pytest.raises(UnknownNodeError, match="ghost"):
        system.frame("ghost")


def test_a_world_frame_does_not_move():
    system = parse_urdf(LIMITED)
    base = system.frame("base")
    assert base.body is None
    assert not base.velocity(np.zeros(4), np.ones(4)).any() and not base.jacobian(np.zeros(4)).any()


def test_center_of_mass_against_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from tests.rigid.pinocchio_map import CoordinateMap, robots_dir

    robots = robots_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    for rel, floating in (("solo_description/robots/solo12.urdf", True), ("ur_description/urdf/ur5_robot.urdf", False)):
        path = str(robots / rel)
        system = load_urdf(path, floating_base=floating)
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
        data, cmap = model.createData(), CoordinateMap(system, model)
        if not floating:  # URDF joint names look joints up; link names look bodies up
            assert system.joint("shoulder_pan_joint") is system.body_joint(system.joint_body("shoulder_pan_joint"))
            assert system.v_slice("shoulder_pan_joint") == system.v_slice(system.joint_body("shoulder_pan_joint"))
        rng = np.random.default_rng(zlib.crc32(rel.encode()))
        for _ in range(5):
            q = system.random_configuration(rng)
            if model.inertias[0].mass > 0:  # a fixed base link's mass: Pinocchio counts it, we merge it into the world
                break
            assert_close(system.center_of_mass(q), pin.centerOfMass(model, data, cmap.q(q)), 1e-10, scale=1.0)
            J_pin = pin.jacobianCenterOfMass(model, data, cmap.q(q))
            assert_close(system.center_of_mass_jacobian(q)[:, cmap.v_perm], J_pin, 1e-10, scale=1.0)
            q1 = system.random_configuration(rng)  # revolute joints and a free flyer: the same logarithms
            assert_close(cmap.v(system.difference(q, q1)), pin.difference(model, cmap.q(q), cmap.q(q1)), 1e-10, scale=1.0)
        lower = system.lower_position_limit
        for i in range(1, model.njoints):
            jm = model.joints[i]
            if jm.nq == jm.nv == 1:
                s = system.q_slice(model.names[i])
                assert lower[s][0] == pytest.approx(model.lowerPositionLimit[jm.idx_q])
                assert system.effort_limit[system.v_slice(model.names[i])][0] == pytest.approx(model.effortLimit[jm.idx_v])
