"""Hostile MJCF and interop input (issue 29): generated names that could collide, joint
equalities with non-finite coefficients, matrices mapped to and from MuJoCo with a free joint,
and maps built from things that are not a system or a peer model."""

from __future__ import annotations

import numpy as np
import pytest

from sko.errors import MJCFError
from sko.interop import InteropError, MujocoMap, PinocchioMap
from sko.io.mjcf import load_mjcf, object_names
from sko.io.urdf import parse_urdf

mujoco = pytest.importorskip("mujoco")

_GEOM = '<geom type="capsule" fromto="0 0 0 0.3 0 -0.5" size="0.05"/>'

#: an unnamed body and joint whose generated names (``body2``, ``joint1``) are taken explicitly,
#: once by a sibling and once by the parent
SIBLINGS = f"""<mujoco><worldbody>
<body name="body2"><joint name="joint1" axis="0 1 0"/>{_GEOM}</body>
<body pos="1 0 0"><joint axis="1 0 0"/>{_GEOM}</body></worldbody></mujoco>"""
NESTED = f"""<mujoco><worldbody>
<body name="body2"><joint name="joint1" axis="0 1 0"/>{_GEOM}
 <body pos="0 0 -1"><joint axis="1 0 0"/>{_GEOM}</body></body></worldbody></mujoco>"""
#: a welded unnamed body (a frame) named like a moving body, and a chain of suffixes already taken
WELDED = f"""<mujoco><worldbody>
<body name="body3"><joint name="joint0_1" axis="0 1 0"/>{_GEOM}</body>
<body name="body2_1" pos="1 0 0"><joint axis="0 0 1"/>{_GEOM}<body pos="0 0 -1">{_GEOM}</body></body>
<body pos="2 0 0"><joint axis="1 0 0"/>{_GEOM}</body></worldbody></mujoco>"""

COUPLED = f"""<mujoco><worldbody>
<body name="a"><joint name="j1" axis="0 1 0"/>{_GEOM}</body>
<body name="b" pos="1 0 0"><joint name="j2" axis="0 1 0"/>{_GEOM}</body></worldbody>
<equality><joint name="gear" joint1="j2" joint2="j1" polycoef="{{}}" {{}}/></equality></mujoco>"""


def _mass_matrix(model, qpos) -> np.ndarray:
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_forward(model, data)
    M = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, M)
    return M


@pytest.mark.parametrize("xml", [SIBLINGS, NESTED, WELDED], ids=["siblings", "nested", "welded"])
def test_unnamed_mjcf_bodies_and_joints_never_take_an_explicit_name(xml):
    model = mujoco.MjModel.from_xml_string(xml)
    system = load_mjcf(xml)
    bodies = object_names(model, "body")[1:]
    assert len(set(bodies)) == len(bodies) == model.nbody - 1
    assert set(system.bodies) | set(system.frames) >= set(bodies)  # every MuJoCo body is a body or a frame
    assert system.nv == model.nv and len(system.bodies) == sum(model.body_jntnum[1:] > 0)
    joints = object_names(model, "joint")
    assert len(set(joints)) == model.njnt and set(system.joint_names()) == set(joints)
    q = system.random_configuration(np.random.default_rng(0))
    np.testing.assert_allclose(system.mass_matrix(q), _mass_matrix(model, q), rtol=1e-10, atol=1e-14)
    to_mj = MujocoMap(system, model)  # joints matched by the same generated names
    np.testing.assert_array_equal(to_mj.q(q), q)


def test_generated_names_skip_every_taken_suffix():
    model = mujoco.MjModel.from_xml_string(WELDED)
    assert object_names(model, "body") == ["world", "body3", "body2_1", "body3_1", "body4"]
    assert object_names(model, "joint") == ["joint0_1", "joint1", "joint2"]


def test_a_body_named_like_anothers_mujoco_frame_is_refused_by_name():
    xml = f"""<mujoco><worldbody><body name="a"><joint name="j" pos="0 0 0.2" axis="0 1 0"/>{_GEOM}</body>
    <body name="a@mjcf" pos="1 0 0"><joint axis="1 0 0"/>{_GEOM}</body></worldbody></mujoco>"""
    with pytest.raises(MJCFError, match=r"frame of body 'a' and body 'a@mjcf' would both be named 'a@mjcf'"):
        load_mjcf(xml)


@pytest.mark.parametrize("coef", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("where", ["c0", "c1"])
@pytest.mark.parametrize("active", ["", 'active="false"'])
def test_joint_equality_with_non_finite_polycoef_is_refused_naming_it(coef, where, active):
    polycoef = f"{coef} 1 0 0 0" if where == "c0" else f"0 {coef} 0 0 0"
    with pytest.raises(MJCFError, match=r"equality 'gear' of type joint \(joints \['j2', 'j1'\]\) has a non-finite "
                                        r"polycoef \[.*(nan|inf)"):
        load_mjcf(COUPLED.format(polycoef, active))


def test_joint_equality_whose_offset_overflows_is_refused_naming_it():
    xml = COUPLED.format("1e308 1e308 0 0 0", "").replace('name="j1"', 'name="j1" ref="-200"')
    with pytest.raises(MJCFError, match=r"equality 'gear' of type joint \(joints \['j2', 'j1'\]\).* overflows"):
        load_mjcf(xml)


#: a floating torso and an arm, loaded by our URDF reader (``[ω; v]`` in the body frame) and by
#: MuJoCo (``ṗ`` in the world frame)
FLOATING = """<robot name="floater"><link name="world"/>
 <link name="torso"><inertial><origin xyz="0.05 0 0.1" rpy="0.1 0.2 0.3"/><mass value="3"/>
  <inertia ixx="0.05" ixy="0.001" ixz="0" iyy="0.06" iyz="0" izz="0.04"/></inertial></link>
 <link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="1"/>
  <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.003"/></inertial></link>
 <joint name="root" type="floating"><parent link="world"/><child link="torso"/></joint>
 <joint name="shoulder" type="continuous"><parent link="torso"/><child link="arm"/><origin xyz="0.1 0.2 0.3" rpy="0.3 0 0.2"/>
  <axis xyz="0 1 0"/></joint></robot>"""


def test_matrix_back_of_mujocos_mass_matrix_is_ours_on_a_floating_base():
    system, model = parse_urdf(FLOATING), mujoco.MjModel.from_xml_string(FLOATING)
    to_mj, rng = MujocoMap(system, model), np.random.default_rng(29)
    for _ in range(3):
        q = system.random_configuration(rng)
        M, M_mj = system.mass_matrix(q), _mass_matrix(model, to_mj.q(q))
        np.testing.assert_allclose(to_mj.matrix_back(M_mj, q), M, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(to_mj.matrix(M, q), M_mj, rtol=1e-12, atol=1e-13)
        # ℳ⁻¹ maps by the same congruence (T is orthogonal), and ν̇ = ℳ⁻¹ τ agrees mapped either way
        M_inv = np.linalg.inv(M)
        np.testing.assert_allclose(to_mj.matrix_back(np.linalg.inv(M_mj), q), M_inv, rtol=1e-10, atol=1e-12)
        tau = rng.normal(size=system.nv)
        np.testing.assert_allclose(to_mj.v_back(to_mj.matrix(M_inv, q) @ to_mj.v(tau, q), q),
                                   np.linalg.solve(M, tau), rtol=1e-10, atol=1e-12)
        A = rng.normal(size=(system.nv, system.nv))
        np.testing.assert_allclose(to_mj.matrix_back(to_mj.matrix(A, q), q), A, atol=1e-14)


def test_matrix_maps_need_q_with_a_free_joint_and_leave_inputs_alone():
    system, model = parse_urdf(FLOATING), mujoco.MjModel.from_xml_string(FLOATING)
    to_mj = MujocoMap(system, model)
    q = system.random_configuration(np.random.default_rng(1))
    M = np.arange(system.nv ** 2).reshape(system.nv, system.nv)  # integers: the rotated result is float
    kept = M.copy()
    for convert in (to_mj.matrix, to_mj.matrix_back):
        with pytest.raises(InteropError, match="free joint: converting its matrices needs the configuration q"):
            convert(M)
    zero = np.array(q)
    zero[system.q_slices["torso"]][:4] = 0.0  # our free joint's quaternion comes first
    for convert in (to_mj.matrix, to_mj.matrix_back, to_mj.v, to_mj.v_back):
        with pytest.raises(InteropError, match=r"quaternion \[0. 0. 0. 0.\], of \(near\) zero norm"):
            convert(M if convert in (to_mj.matrix, to_mj.matrix_back) else M[0] * 1.0, zero)
    assert to_mj.matrix(M, q).dtype == np.float64
    np.testing.assert_allclose(to_mj.matrix_back(to_mj.matrix(M, q), q), M, atol=1e-12)
    np.testing.assert_array_equal(M, kept)


def test_matrix_maps_of_a_fixed_base_are_the_permutation():
    system = load_mjcf(NESTED)
    to_mj = MujocoMap(system, mujoco.MjModel.from_xml_string(NESTED))
    M = np.random.default_rng(2).normal(size=(system.nv, system.nv))
    np.testing.assert_array_equal(to_mj.matrix(M), M)
    np.testing.assert_array_equal(to_mj.matrix_back(M), M)


def _pinocchio_model():
    pin = pytest.importorskip("pinocchio")
    return pin.buildModelFromXML(FLOATING.replace('type="floating"', 'type="fixed"'))


@pytest.mark.parametrize("cls", [MujocoMap, PinocchioMap])
@pytest.mark.parametrize("bad", [None, "robot.urdf", 3.0, {"a": 1}])
def test_maps_refuse_what_is_not_a_system_or_a_peer_model(cls, bad):
    system = parse_urdf(FLOATING)
    model = mujoco.MjModel.from_xml_string(FLOATING) if cls is MujocoMap else _pinocchio_model()
    peer = "mujoco.MjModel" if cls is MujocoMap else "pinocchio.Model"
    with pytest.raises(InteropError, match=rf"{cls.__name__} needs a system .* got {type(bad).__name__}"):
        cls(bad, model)
    with pytest.raises(InteropError, match=rf"{cls.__name__} needs a {peer} .* got {type(bad).__name__}"):
        cls(system, bad)
    with pytest.raises(InteropError, match=rf"{cls.__name__} needs a {peer} .* got RigidSystem"):
        cls(system, system)  # the arguments' order mistaken


ACTUATED = f"""<mujoco><worldbody>
<body name="a"><joint name="j" axis="0 0 1"/>{_GEOM}
 <body name="b" pos="0.3 0 -0.5"><joint name="k" axis="0 1 0"/>{_GEOM}<site name="tip"/></body></body></worldbody>
<actuator><motor joint="j" armature="0.5" gear="3"/><motor joint="k" armature="0.25" gear="-2"/>
<motor joint="k" armature="0.1"/>{{}}</actuator></mujoco>"""


def test_actuator_armature_reaches_the_mass_matrix():
    """MuJoCo adds armature · gear² of a joint's actuators to its dof: left out, ℳ was silently off."""
    xml = ACTUATED.format("")
    model = mujoco.MjModel.from_xml_string(xml)
    system = load_mjcf(xml)
    q = np.array([0.3, -0.4])
    M = _mass_matrix(model, q)
    np.testing.assert_allclose(system.mass_matrix(q), M, rtol=0, atol=1e-12 * np.abs(M).max())
    bare = load_mjcf(ACTUATED.format("").replace('armature="0.5"', ""))
    assert M[0, 0] - bare.mass_matrix(q)[0, 0] == pytest.approx(0.5 * 3**2)


def test_actuator_armature_on_a_ball_joint_is_refused_by_name():
    xml = ('<mujoco><worldbody><body name="a"><joint name="ball" type="ball"/><geom size="0.1"/></body></worldbody>'
           '<actuator><motor name="spin" joint="ball" gear="1 0 0 0 0 0" armature="0.3"/></actuator></mujoco>')
    with pytest.raises(MJCFError, match="actuator 'spin' adds armature 0.3 to the ball or free joint 'ball'"):
        load_mjcf(xml)


def test_a_mujoco_map_refuses_a_model_edited_out_of_shape():
    """MujocoMap read an edited model's joint addresses as they were: a joint moved to another
    qpos address mapped our coordinates into the wrong slots of qpos without a word."""
    model = mujoco.MjModel.from_xml_string(NESTED)
    system = load_mjcf(model)
    model.jnt_qposadr[1] = 0
    with pytest.raises(InteropError, match=r"arrays do not describe one model .*joint 'joint1_1' has qposadr 0"):
        MujocoMap(system, model)
