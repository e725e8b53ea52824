"""``sko.interop`` with MuJoCo, and the same URDF through MuJoCo's compiler and through ours."""

import re
import sys

import numpy as np
import pytest

from sko.errors import MissingDependencyError
from sko.interop import InteropError, MujocoMap
from sko.io.urdf import parse_urdf
from sko.io import load_mjcf, load_urdf
from tests.rigid.pinocchio_map import robots_dir
from tests.rigid.test_mjcf import COMPOSITE, HAND, QUADRUPED
from tests.util import assert_close

mujoco = pytest.importorskip("mujoco")
DISABLED = int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)


def _inertial(mass, xyz, ixx, iyy, izz, ixy=0.0):
    return (f'<inertial><origin xyz="{xyz}" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


#: A floating torso (a URDF ``floating`` joint from the world) with an arm: revolute, continuous,
#: prismatic and a fixed tool merged into the last link.
FLOATING_URDF = f"""<robot name="floater">
 <link name="world"/>
 <link name="torso">{_inertial(3.0, "0.05 0 0.1", 0.05, 0.06, 0.04, 0.001)}</link>
 <link name="upper">{_inertial(1.0, "0 0 0.2", 0.02, 0.02, 0.003)}</link>
 <link name="fore">{_inertial(0.7, "0 0.1 0", 0.01, 0.002, 0.01)}</link>
 <link name="slider">{_inertial(0.3, "0 0 0", 0.001, 0.001, 0.001)}</link>
 <link name="tool">{_inertial(0.2, "0 0 0.05", 0.0005, 0.0005, 0.0002)}</link>
 <joint name="root" type="floating"><parent link="world"/><child link="torso"/></joint>
 <joint name="shoulder" type="revolute"><parent link="torso"/><child link="upper"/><origin xyz="0.1 0.2 0.3" rpy="0.3 0 0.2"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
 <joint name="wrist" type="continuous"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.4"/><axis xyz="1 0 1"/></joint>
 <joint name="extend" type="prismatic"><parent link="fore"/><child link="slider"/><origin xyz="0 0.2 0"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
 <joint name="mount" type="fixed"><parent link="slider"/><child link="tool"/><origin xyz="0 0.05 0" rpy="0 1 0"/></joint>
</robot>"""


def _stripped(rel):
    """An example robot's URDF without meshes (MuJoCo would look for the files)."""
    return re.sub(r"<visual>.*?</visual>|<collision>.*?</collision>", "", (robots_dir() / rel).read_text(), flags=re.S)


def _compare(urdf_system, model, rng, states=5):
    """Our URDF-loaded system against MuJoCo's compilation of the same URDF, mapped by joint name."""
    model.opt.disableflags |= DISABLED
    data = mujoco.MjData(model)
    to_mj = MujocoMap(urdf_system, model)
    mjcf_system = load_mjcf(model)
    for _ in range(states):
        q = urdf_system.random_configuration(rng)
        v, vdot, tau = rng.normal(size=(3, urdf_system.nv))
        qpos, qvel = to_mj.q(q), to_mj.v(v, q)
        M = np.zeros((model.nv, model.nv))
        data.qpos[:], data.qvel[:], data.qfrc_applied[:] = qpos, qvel, to_mj.v(tau, q)
        mujoco.mj_forward(model, data)
        mujoco.mj_fullM(model, data, M)
        assert_close(mjcf_system.mass_matrix(qpos), M, rtol=1e-10)
        T = np.stack([to_mj.v(e, q) for e in np.eye(urdf_system.nv)], axis=1)  # qvel = T ν
        assert_close(urdf_system.mass_matrix(q), T.T @ M @ T, rtol=1e-10)
        # the MJCF route gives MuJoCo's dynamics, the URDF route the same ones in its coordinates
        assert_close(mjcf_system.forward_dynamics(qpos, qvel, data.qfrc_applied), data.qacc, rtol=1e-9)
        assert_close(to_mj.acceleration(urdf_system.forward_dynamics(q, v, tau), q, v), data.qacc, rtol=1e-9)
        data.qacc[:] = to_mj.acceleration(vdot, q, v)
        mujoco.mj_inverse(model, data)
        assert_close(urdf_system.inverse_dynamics(q, v, vdot), to_mj.v_back(data.qfrc_inverse, q), rtol=1e-10)
        assert_close(mjcf_system.inverse_dynamics(qpos, qvel, data.qacc), data.qfrc_inverse, rtol=1e-10)


@pytest.mark.parametrize("rel", ["ur_description/urdf/ur5_robot.urdf", "kinova_description/robots/kinova.urdf",
                                 "solo_description/robots/solo12.urdf"])
def test_example_robot_through_mujoco_and_through_the_urdf_loader(rel):
    if robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    text = _stripped(rel)
    _compare(load_urdf(robots_dir() / rel), mujoco.MjModel.from_xml_string(text), np.random.default_rng(2))


def test_floating_urdf_through_mujoco_and_round_trips():
    system = parse_urdf(FLOATING_URDF)
    model = mujoco.MjModel.from_xml_string(FLOATING_URDF)
    assert model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE
    rng = np.random.default_rng(7)
    _compare(system, model, rng)
    to_mj = MujocoMap(system, model)
    q = system.random_configuration(rng)
    v, a = rng.normal(size=(2, system.nv))
    np.testing.assert_allclose(to_mj.q_back(to_mj.q(q)), q, atol=1e-15)
    np.testing.assert_allclose(to_mj.v_back(to_mj.v(v, q), q), v, atol=1e-14)
    np.testing.assert_allclose(to_mj.acceleration_back(to_mj.acceleration(a, q, v), q, v), a, atol=1e-14)
    M = rng.normal(size=(system.nv, system.nv))
    np.testing.assert_allclose(to_mj.matrix_back(to_mj.matrix(M, q), q), M, atol=1e-14)
    with pytest.raises(InteropError, match="needs the configuration q"):
        to_mj.v(v)


@pytest.mark.parametrize("xml", [QUADRUPED, COMPOSITE, HAND])
def test_a_system_from_mjcf_maps_onto_its_model_as_the_identity(xml):
    system = load_mjcf(xml)
    model = mujoco.MjModel.from_xml_string(xml)
    to_mj = MujocoMap(system, model)  # several joints on one body are matched part by part
    rng = np.random.default_rng(0)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    np.testing.assert_array_equal(to_mj.q(q), q)
    np.testing.assert_array_equal(to_mj.v(v, q), v)
    np.testing.assert_array_equal(to_mj.acceleration(v, q, v), v)


def test_mismatched_models_and_missing_peers(monkeypatch):
    system = load_mjcf(QUADRUPED)
    model = mujoco.MjModel.from_xml_string(QUADRUPED)
    with pytest.raises(InteropError, match=r"joints differ: .*'root'"):
        MujocoMap(load_mjcf(QUADRUPED.replace('name="root"', 'name="base"')),
                  mujoco.MjModel.from_xml_string(QUADRUPED))
    monkeypatch.setitem(sys.modules, "mujoco", None)  # as if it were not installed
    for build in (lambda: MujocoMap(system, model), lambda: load_mjcf(QUADRUPED)):
        with pytest.raises(MissingDependencyError, match=r'sko-multibody\[crosscheck\]'):
            build()
