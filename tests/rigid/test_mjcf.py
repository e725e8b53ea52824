"""MJCF through MuJoCo's compiler against MuJoCo's own dynamics (RIGID.md, *Interoperability*).

For every model: ℳ against ``mj_fullM``, forward dynamics against ``qacc`` of ``mj_forward``
(constraints and actuation disabled, ``τ`` as ``qfrc_applied``), inverse dynamics against
``mj_inverse``, at MuJoCo states passed straight in as ``data.qpos``, ``data.qvel``.
"""

import re

import numpy as np
import pytest

from sko.bodies import CompositeJoint, FreePositionFirst, Revolute
from sko.errors import MJCFError
from sko.io import load_mjcf
from tests.util import assert_close

mujoco = pytest.importorskip("mujoco")

ARM = """<mujoco model="arm"><worldbody>
 <body name="base" pos="0 0 0.1"><joint name="yaw" axis="0 0 1"/><geom type="cylinder" size="0.08 0.05"/>
  <body name="upper" pos="0 0 0.1" euler="0 30 0"><joint name="shoulder" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
   <body name="fore" pos="0.4 0 0"><joint name="elbow" axis="0 1 0" pos="0 0 0.02"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
    <body name="tool" pos="0.3 0 0" quat="0.7 0 0.7 0"><geom type="box" size="0.02 0.03 0.05" pos="0 0 0.05"/></body>
   </body>
  </body>
 </body>
</worldbody></mujoco>"""

LEG = """<body name="{n}_hip" pos="{x} {y} 0"><joint name="{n}_abd" axis="1 0 0"/><geom type="sphere" size="0.04"/>
   <body name="{n}_thigh"><joint name="{n}_flex" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.03"/>
    <body name="{n}_shin" pos="0 0 -0.2"><joint name="{n}_knee" axis="0 1 0"/>
     <geom type="capsule" fromto="0 0 0 0.05 0 -0.2" size="0.02"/></body></body></body>"""
QUADRUPED = f"""<mujoco model="quadruped"><worldbody>
 <body name="trunk" pos="0.1 -0.2 0.5" euler="5 10 15"><freejoint name="root"/>
  <geom type="box" size="0.3 0.15 0.06" pos="0.02 0 0"/>
  {''.join(LEG.format(n=n, x=x, y=y) for n, x, y in (("fl", 0.25, 0.12), ("fr", 0.25, -0.12), ("hl", -0.25, 0.12), ("hr", -0.25, -0.12)))}
 </body>
</worldbody></mujoco>"""

BALL_CHAIN = """<mujoco model="rope"><worldbody>
 <body name="l1" pos="0 0 2"><joint name="b1" type="ball" pos="0 0 0.1"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.04"/>
  <body name="l2" pos="0 0 -0.5"><joint name="b2" type="ball"/><geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.03"/>
   <body name="l3" pos="0.1 0 -0.5"><joint name="b3" type="ball" pos="0.01 0.02 0"/><geom type="ellipsoid" size="0.05 0.08 0.1"/>
   </body></body></body>
</worldbody></mujoco>"""

FINGER = """<body name="{n}0" pos="{x} {y} 0.1" euler="0 0 {yaw}"><joint name="{n}_spread" axis="1 0 0"/><joint name="{n}_base" axis="0 1 0"/>
   <geom type="capsule" fromto="0 0 0 0 0 0.05" size="0.01"/>
   <body name="{n}1" pos="0 0 0.05"><joint name="{n}_mid" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 0.035" size="0.009"/>
    <body name="{n}2" pos="0 0 0.035"><joint name="{n}_tip" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 0.025" size="0.008"/>
    </body></body></body>"""
HAND = f"""<mujoco model="hand"><compiler angle="degree"/><worldbody>
 <body name="palm" pos="0 0 0.3"><joint name="wrist_x" axis="1 0 0"/><joint name="wrist_y" axis="0 1 0" pos="0 0 -0.02"/>
  <geom type="box" size="0.04 0.05 0.01" pos="0 0 0.05"/>
  {''.join(FINGER.format(n=n, x=x, y=y, yaw=yaw) for n, x, y, yaw in (("index", 0.03, 0.03, 0), ("middle", 0.03, 0, 0), ("ring", 0.03, -0.03, 0), ("thumb", -0.03, 0.04, 60)))}
 </body>
</worldbody></mujoco>"""

# several joints on one body (slide, hinges and a ball about different anchors), armature, qpos0
COMPOSITE = """<mujoco model="composite"><option gravity="0.5 -1 -9"/><worldbody>
 <body name="carriage" pos="0.1 0 0.3" quat="0.9 0.1 0.2 0.3">
  <joint name="rail" type="slide" axis="1 0.2 0" ref="0.25" armature="0.3"/>
  <joint name="swing" axis="0 0 1" pos="0.05 0 0" ref="-0.7" armature="0.02"/>
  <joint name="tilt" axis="0 1 1" pos="0 0.04 0.01"/>
  <geom type="box" size="0.1 0.05 0.04"/>
  <body name="pendulum" pos="0 0 -0.1"><joint name="twist" axis="0 0 1" ref="1.2" armature="0.05"/>
   <joint name="pivot" type="ball" pos="0 0 0.02" armature="0.01"/><joint name="stretch" type="slide" axis="0 0 1"/>
   <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.02"/></body>
 </body>
</worldbody></mujoco>"""

MODELS = {"arm": ARM, "quadruped": QUADRUPED, "ball_chain": BALL_CHAIN, "hand": HAND, "composite": COMPOSITE}
DISABLED = int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)


def _mujoco_states(model, rng, n=6):
    """MuJoCo's own states: ``qpos0`` moved by a random velocity (``mj_integratePos``), random ``qvel``."""
    for _ in range(n):
        qpos = model.qpos0.copy()
        mujoco.mj_integratePos(model, qpos, rng.normal(size=model.nv), 1.0)
        yield qpos, rng.normal(size=model.nv)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_agrees_with_mujoco(name):
    system = load_mjcf(MODELS[name])
    model = mujoco.MjModel.from_xml_string(MODELS[name])
    model.opt.disableflags |= DISABLED
    data = mujoco.MjData(model)
    assert (system.nq, system.nv) == (model.nq, model.nv)
    rng = np.random.default_rng(len(name))
    for qpos, qvel in _mujoco_states(model, rng):
        data.qpos[:], data.qvel[:] = qpos, qvel
        data.qfrc_applied[:] = tau = rng.normal(size=model.nv)
        mujoco.mj_forward(model, data)
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M)
        assert_close(system.mass_matrix(data.qpos), M, rtol=1e-10)
        assert_close(system.forward_dynamics(data.qpos, data.qvel, tau), data.qacc, rtol=1e-9)
        data.qacc[:] = rng.normal(size=model.nv)
        mujoco.mj_inverse(model, data)
        assert_close(system.inverse_dynamics(data.qpos, data.qvel, data.qacc), data.qfrc_inverse, rtol=1e-10)


def test_what_the_compiled_model_becomes():
    system = load_mjcf(COMPOSITE)
    carriage = system.body_joint("carriage")
    assert isinstance(carriage, CompositeJoint) and carriage.name == "rail+swing+tilt"
    assert [type(j).__name__ for _, j in carriage.parts] == ["OffsetJoint", "OffsetJoint", "Revolute"]
    model = mujoco.MjModel.from_xml_string(COMPOSITE)
    np.testing.assert_allclose(system.neutral_configuration(), model.qpos0)  # hinge and slide read from qpos0
    np.testing.assert_allclose(system.gravity[-3:], [0.5, -1, -9])
    armature = system.mass_matrix(model.qpos0) - load_mjcf(re.sub(r' armature="[0-9.]+"', "", COMPOSITE)).mass_matrix(model.qpos0)
    np.testing.assert_allclose(armature, np.diag(model.dof_armature), atol=1e-12)
    quadruped = load_mjcf(QUADRUPED)
    assert isinstance(quadruped.body_joint("trunk"), FreePositionFirst)
    assert isinstance(load_mjcf(ARM).body_joint("fore"), Revolute)


def test_frames_keep_mujocos_body_poses():
    system = load_mjcf(ARM)
    model = mujoco.MjModel.from_xml_string(ARM)
    data = mujoco.MjData(model)
    data.qpos[:] = np.random.default_rng(1).normal(size=model.nq)
    mujoco.mj_kinematics(model, data)
    for i in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i)
        frame = f"{name}@mjcf" if f"{name}@mjcf" in system.frames else name
        T = system.frame_pose(data.qpos, frame)
        np.testing.assert_allclose(T[:3, 3], data.xpos[i], atol=1e-12)
        np.testing.assert_allclose(T[:3, :3], data.xmat[i].reshape(3, 3), atol=1e-12)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_body_jacobians_agree_with_mujoco(name):
    """``J`` of every body frame, for a batch of MuJoCo states (armature bodies carry more than
    their velocity on their node: ``Γ`` picks the first six entries), against ``mj_jacBody``:
    our ``[ω; v]`` in frame coordinates turned by the frame's world rotation."""
    system = load_mjcf(MODELS[name])
    model = mujoco.MjModel.from_xml_string(MODELS[name])
    data = mujoco.MjData(model)
    Q = np.array([qpos for qpos, _ in _mujoco_states(model, np.random.default_rng(len(name)), 4)])
    jacp, jacr = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    for i in range(1, model.nbody):
        body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i)
        frame = f"{body}@mjcf" if f"{body}@mjcf" in system.frames else body
        J = system.jacobian(Q, frame)
        assert J.shape == (len(Q), 6, model.nv)
        for s, qpos in enumerate(Q):
            data.qpos[:] = qpos
            mujoco.mj_kinematics(model, data)
            mujoco.mj_comPos(model, data)
            mujoco.mj_jacBody(model, data, jacp, jacr, i)
            R = system.frame_pose(qpos, frame)[:3, :3]
            np.testing.assert_allclose(R @ J[s, :3], jacr, atol=1e-12, err_msg=body)
            np.testing.assert_allclose(R @ J[s, 3:], jacp, atol=1e-12, err_msg=body)
            np.testing.assert_allclose(system.jacobian(qpos, frame), J[s], atol=1e-14, err_msg=body)


def test_free_joint_conventions():
    """``qvel`` of a free joint: linear in the world frame, angular in the body frame; ``integrate``
    and ``qdot`` follow MuJoCo's ``mj_integratePos``."""
    system = load_mjcf(QUADRUPED)
    model = mujoco.MjModel.from_xml_string(QUADRUPED)
    rng = np.random.default_rng(5)
    qpos, qvel = next(_mujoco_states(model, rng))
    expected = qpos.copy()
    mujoco.mj_integratePos(model, expected, qvel, 0.3)
    np.testing.assert_allclose(system.integrate(qpos, qvel, 0.3), expected, atol=1e-12)
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    v = system.body_velocities(qpos, qvel)["trunk"]
    np.testing.assert_allclose(data.xmat[1].reshape(3, 3) @ v[3:], qvel[:3], atol=1e-12)  # ṗ in world
    np.testing.assert_allclose(v[:3], qvel[3:6], atol=1e-12)  # ω in body


def test_from_a_file_and_from_a_compiled_model(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    model = mujoco.MjModel.from_xml_path(str(path))
    q = np.array([0.1, -0.4, 0.9])
    for system in (load_mjcf(path), load_mjcf(str(path)), load_mjcf(model)):
        assert_close(system.mass_matrix(q), load_mjcf(ARM).mass_matrix(q), rtol=1e-14)


@pytest.mark.parametrize("xml, match", [
    ("<mujoco><worldbody><body><joint type='hinge'/></body>", "MuJoCo rejects the MJCF string: .*"),
    ("<mujoco><worldbody><body><joint type='screw'/><geom size='1'/></body></worldbody></mujoco>",
     "MuJoCo rejects the MJCF string: .*screw"),
    ("""<mujoco><worldbody><body name="a"><joint name="j1"/><geom size="0.1"/><body name="b"><joint name="j2"/>
        <geom size="0.1"/></body></body></worldbody><equality><joint name="couple" joint1="j1" joint2="j2" polycoef="0 1 0.5 0 0"/>
        </equality></mujoco>""", "equality 'couple' of type joint has a nonlinear polynomial"),
    ("""<mujoco><worldbody><body name="a"><joint name="j1"/><geom size="0.1"/><site name="s1"/><body name="b" pos="1 0 0">
        <joint name="j2"/><geom size="0.1"/><site name="s2"/></body></body></worldbody>
        <tendon><spatial name="cable"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>""", "tendon 'cable'"),
    ("""<mujoco><worldbody><body name="a"><joint name="j1"/><geom size="0.1"/><body name="b"><freejoint name="loose"/>
        <geom size="0.1"/></body></body></worldbody></mujoco>""", "MuJoCo rejects the MJCF string: .*free joint"),
])
def test_rejections(xml, match):
    try:
        mujoco.MjModel.from_xml_string(xml)
    except ValueError:
        pass
    else:
        match = "cannot represent: " + match if "rejects" not in match else match
    with pytest.raises(MJCFError, match=match):
        load_mjcf(xml)


def test_missing_file(tmp_path):
    with pytest.raises(MJCFError, match=r"MuJoCo rejects the MJCF file '.*none\.xml'"):
        load_mjcf(tmp_path / "none.xml")


def test_mesh_derived_inertia_and_disabled_gravity(tmp_path):
    """Inertias are MuJoCo's compiled ones (here from a mesh file); gravity follows ``opt``."""
    (tmp_path / "wedge.obj").write_text("v 0 0 0\nv 0.3 0 0\nv 0 0.2 0\nv 0 0 0.1\nv 0.3 0 0.1\nv 0 0.2 0.1\n"
                                        "f 1 3 2\nf 4 5 6\nf 1 2 5\nf 1 5 4\nf 1 4 6\nf 1 6 3\nf 2 3 6\nf 2 6 5\n")
    xml = f"""<mujoco><compiler meshdir="{tmp_path}"/><option><flag gravity="disable"/></option>
      <asset><mesh name="wedge" file="wedge.obj"/></asset>
      <worldbody><body name="block" pos="0 0 1"><freejoint/><geom type="mesh" mesh="wedge" density="800"/>
       <body name="lid" pos="0.1 0 0.1"><joint name="hinge" axis="0 1 0"/><geom type="mesh" mesh="wedge" density="300"/>
      </body></body></worldbody></mujoco>"""
    path = tmp_path / "wedge.xml"
    path.write_text(xml)
    system, model = load_mjcf(path), mujoco.MjModel.from_xml_path(str(path))
    assert system.total_mass == pytest.approx(model.body_mass.sum(), rel=1e-14) and model.body_mass[1] > 0
    np.testing.assert_array_equal(system.gravity, np.zeros(3))
    model.opt.disableflags |= DISABLED
    data = mujoco.MjData(model)
    rng = np.random.default_rng(9)
    for qpos, qvel in _mujoco_states(model, rng, 3):
        data.qpos[:], data.qvel[:] = qpos, qvel
        mujoco.mj_forward(model, data)
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, M)
        assert_close(system.mass_matrix(qpos), M, rtol=1e-10)
        assert_close(system.forward_dynamics(qpos, qvel, np.zeros(model.nv)), data.qacc, rtol=1e-9)


def test_a_scene_with_nothing_moving():
    system = load_mjcf('<mujoco><worldbody><body name="table" pos="0 0 1">'
                                   '<geom type="box" size="1 1 0.1"/></body></worldbody></mujoco>')
    assert (system.nq, system.nv) == (0, 0) and system.mass_matrix([]).shape == (0, 0)
    np.testing.assert_allclose(system.frame_pose([], "table")[:3, 3], [0, 0, 1])


@pytest.mark.parametrize("encode", [str, lambda t: t.encode(), lambda t: t[1:].encode("utf-16"),  # its own mark
                                    lambda t: t.encode("utf-16-be")], ids=["str", "utf-8", "utf-16", "utf-16-be"])
def test_text_with_a_byte_order_mark_is_read_as_text(encode):
    assert load_mjcf(encode("\ufeff" + ARM)).bodies == load_mjcf(ARM).bodies
