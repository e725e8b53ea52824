"""MJCF beyond the mechanism's inertias: inertia repair, joint limits, joint equality couplings
(RIGID.md, *Interoperability*; EMBEDDING.md for the couplings)."""

import warnings

import numpy as np
import pytest

from sko.errors import MJCFError
from sko.inertia import InertiaRepairWarning, nearest_physical_inertia
from sko.io import load_mjcf, load_urdf

mujoco = pytest.importorskip("mujoco")

TWO_LINKS = """<mujoco><worldbody>
 <body name="a"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  <body name="b" pos="0.3 0 0"><joint name="j2" axis="0 1 0"/><geom type="box" size="0.1 0.05 0.02"/></body>
 </body></worldbody></mujoco>"""


def test_an_unphysical_compiled_inertia_is_rejected_or_repaired_with_a_warning():
    model = mujoco.MjModel.from_xml_string(TWO_LINKS)
    model.body_inertia[2] = [1e-3, 1e-3, 3e-3]  # breaks J_3 ≤ J_1 + J_2 (MuJoCo's compiler would reject it)
    with pytest.raises(Exception, match="'b'.*triangle inequality"):
        load_mjcf(model)
    with pytest.warns(InertiaRepairWarning, match="replaced 1 body inertia .*body 'b' changed by") as caught:
        system = load_mjcf(model, inertia="repair")
    assert len(caught[0].message.repairs) == 1
    fixed = nearest_physical_inertia(np.diag([1e-3, 1e-3, 3e-3]))
    assert np.allclose(system.body("b").inertia[:3, :3], fixed, atol=1e-15)  # centred box in its principal axes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_mjcf(TWO_LINKS, inertia="repair")  # nothing to repair: silent
    with pytest.raises(MJCFError, match="inertia must be 'strict' or 'repair'"):
        load_mjcf(TWO_LINKS, inertia="fix")


# --------------------------------------------------------------------------- joint limits
LIMITED = """<mujoco><compiler angle="degree"/><worldbody>
 <body name="a"><joint name="j1" axis="0 1 0" range="-60 120" actuatorfrcrange="-3 5"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
  <body name="b" pos="0.3 0 0"><joint name="j2" axis="0 1 0" range="-30 60" ref="10"/><joint name="j3" axis="1 0 0" pos="0 0 0.01"/>
   <geom type="box" size="0.1 0.05 0.02"/>
   <body name="c" pos="0.3 0 0"><joint name="j4" type="slide" axis="1 0 0" range="-0.1 0.2"/><geom type="box" size="0.1 0.05 0.02"/>
    <body name="d" pos="0.2 0 0"><joint name="j5" type="ball" range="0 45"/><geom type="sphere" size="0.05"/>
     <body name="e" pos="0.1 0 0"><joint name="j6" axis="0 0 1" limited="false" range="-1 1" actuatorfrcrange="-4 4"/>
      <geom type="sphere" size="0.03"/></body></body></body></body>
 </body></worldbody>
 <actuator><motor joint="j2" ctrlrange="-2 2" gear="3"/><motor joint="j2" ctrlrange="0 1" gear="-1"/>
  <position joint="j4" kp="50" ctrlrange="-1 1" forcerange="-7 7"/><motor joint="j6" gear="2"/><motor joint="j3"/></actuator>
</mujoco>"""


def test_position_limits_are_mujocos_joint_ranges():
    system, model = load_mjcf(LIMITED), mujoco.MjModel.from_xml_string(LIMITED)
    for j in range(model.njnt):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        s = slice(model.jnt_qposadr[j], model.jnt_qposadr[j] + (1 if model.jnt_type[j] >= 2 else 4))
        lower, upper = system.lower_position_limit[s], system.upper_position_limit[s]
        if model.jnt_type[j] >= 2 and model.jnt_limited[j]:  # hinge and slide: the range, in qpos units
            np.testing.assert_array_equal(np.r_[lower, upper], model.jnt_range[j], err_msg=name)
        else:  # unlimited, or a ball joint's cone
            assert np.all(lower == -np.inf) and np.all(upper == np.inf), name
    assert model.jnt_range[0, 1] == pytest.approx(np.radians(120))
    assert np.array_equal(system.body_joint("b").limits.lower, [np.radians(-30), -np.inf])  # a composite joint stacks its parts
    assert np.all(system.velocity_limit == np.inf)


def test_effort_limits_are_the_largest_actuator_force_mujoco_applies():
    """Every ``ctrl`` at a corner of a box beyond ``ctrlrange``: MuJoCo clamps and sums, and the
    largest ``|qfrc_actuator|`` on each actuated joint is its effort limit (or grows with
    ``ctrl``: unbounded); an unactuated joint keeps its ``actuatorfrcrange`` (j1), as Pinocchio."""
    system, model = load_mjcf(LIMITED), mujoco.MjModel.from_xml_string(LIMITED)
    data = mujoco.MjData(model)
    largest = np.zeros(model.nv)
    for corner in np.array(np.meshgrid(*[[-1e6, 1e6]] * model.nu)).reshape(model.nu, -1).T:
        data.ctrl[:] = corner
        mujoco.mj_forward(model, data)
        largest = np.maximum(largest, np.abs(data.qfrc_actuator))
    effort = system.effort_limit
    actuated = np.isin(np.arange(model.nv), model.jnt_dofadr[model.actuator_trnid[:, 0]])
    bounded = np.isfinite(effort)
    np.testing.assert_allclose(effort[actuated & bounded], largest[actuated & bounded], rtol=1e-12)
    assert np.all(largest[actuated & ~bounded] > 1e5)
    j = {name: system.v_slice(name).start for name in ("a", "b", "c", "e")}
    assert effort[j["a"]] == 5 and effort[j["b"]] == 7 and effort[j["c"]] == 7 and effort[j["e"]] == 4
    assert effort[j["b"] + 1] == np.inf  # j3: a motor without ctrlrange
    assert np.all(effort[system.v_slice("d")] == np.inf)  # the ball joint


def test_actuators_through_a_site_leave_effort_to_actuatorfrcrange():
    xml = LIMITED.replace('<motor joint="j3"/>', '<motor joint="j3"/><motor site="tip" gear="1 0 0 0 0 0" ctrlrange="-1 1"/>')
    xml = xml.replace('<geom type="sphere" size="0.03"/>', '<geom type="sphere" size="0.03"/><site name="tip"/>')
    effort = load_mjcf(xml).effort_limit
    assert effort[0] == 5 and effort[-1] == 4 and np.sum(np.isfinite(effort)) == 2


# --------------------------------------------------------------------------- URDF and MJCF routes
@pytest.mark.parametrize("rel", ["ur_description/urdf/ur5_robot.urdf", "kinova_description/robots/kinova.urdf",
                                 "solo_description/robots/solo12.urdf"])
def test_limits_are_the_same_through_mujocos_compiler_and_the_urdf_loader(rel):
    """MuJoCo turns ``<limit lower upper>`` into ``range`` and ``effort`` into ``actuatorfrcrange``;
    both routes give the same position and effort limits, joint by joint (MuJoCo keeps no
    velocity limit)."""
    from tests.rigid.pinocchio_map import robots_dir
    from tests.rigid.test_interop import _stripped

    if robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    urdf = load_urdf(robots_dir() / rel)
    mjcf = load_mjcf(_stripped(rel))
    assert urdf.nq == mjcf.nq
    limited = 0
    for body in urdf.bodies:
        joint = urdf.body_joint(body).name
        qs, vs = urdf.q_slice(joint), urdf.v_slice(joint)
        lo, up, eff = urdf.lower_position_limit[qs], urdf.upper_position_limit[qs], urdf.effort_limit[vs]
        np.testing.assert_array_equal(mjcf.lower_position_limit[mjcf.q_slice(joint)], lo, err_msg=joint)
        np.testing.assert_array_equal(mjcf.upper_position_limit[mjcf.q_slice(joint)], up, err_msg=joint)
        np.testing.assert_array_equal(mjcf.effort_limit[mjcf.v_slice(joint)], eff, err_msg=joint)
        limited += int(np.isfinite(lo).all() or np.isfinite(eff).all())
    assert limited > 0
    assert np.all(mjcf.velocity_limit == np.inf)
