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


# --------------------------------------------------------------------------- compiled models edited, numbers that are not
_ACTUATED = TWO_LINKS.replace("</mujoco>", '<actuator><motor name="m" joint="j1" gear="{gear}" ctrlrange="-1 1" '
                                           'ctrllimited="true"/></actuator></mujoco>')


@pytest.mark.parametrize("gear", ["nan", "inf", "-inf", "2 nan 0 0 0 0"])
def test_an_actuators_gear_that_is_not_finite_is_refused_naming_it(gear):
    """``gear="nan"`` (MuJoCo's compiler only warns) made the effort limit of ``j1`` NaN, which
    the loader then dropped: the joint came out unbounded without a word."""
    with pytest.raises(MJCFError, match=r"actuator 'm': gear = \[.*(nan|inf).*\] is not finite"):
        load_mjcf(_ACTUATED.format(gear=gear))


@pytest.mark.parametrize("edit, named", [
    (lambda m: m.actuator_ctrlrange.__setitem__((0, 0), np.nan), r"actuator 'm': ctrlrange = \[nan, 1.0\] is NaN"),
    (lambda m: m.jnt_range.__setitem__(0, [np.nan, 1.0]) or m.jnt_limited.__setitem__(0, 1), r"joint 'j1': range .* is NaN"),
    (lambda m: m.body_mass.__setitem__(2, np.nan), r"body 'b': mass = nan is not finite"),
    (lambda m: m.body_quat.__setitem__(1, 0.0), r"body 'a': quat = \[0.0, 0.0, 0.0, 0.0\] is a zero quaternion"),
    (lambda m: m.jnt_axis.__setitem__((1, 0), np.inf), r"joint 'j2': axis = \[inf, .*\] is not finite"),
    (lambda m: m.dof_armature.__setitem__(1, np.nan), r"joint 'j2': armature = \[nan\] is not finite"),
    (lambda m: m.actuator_gainprm.__setitem__((0, 0), np.inf), r"actuator 'm': gainprm = inf is not finite"),
    (lambda m: m.opt.gravity.__setitem__(2, np.nan), r"option gravity = \[0.0, 0.0, nan\] is not finite"),
])
def test_numbers_the_loader_reads_are_finite_or_refused_naming_them(edit, named):
    """Every number of a compiled model the loader reads, edited to NaN or infinity (a range may be
    unbounded, not NaN): one error naming the object and the MJCF attribute, not a NaN passed on
    or an error about a transform the loader formed from it."""
    model = mujoco.MjModel.from_xml_string(_ACTUATED.format(gear="2"))
    edit(model)
    before = {name: getattr(model, name).copy() for name in ("body_mass", "jnt_range", "actuator_gear")}
    with pytest.raises(MJCFError, match=named):
        load_mjcf(model)
    assert all(np.array_equal(getattr(model, name), x, equal_nan=True) for name, x in before.items())


@pytest.mark.parametrize("edit, named", [
    (lambda m: m.body_parentid.__setitem__(1, 2), r"body 'a' has parent index 2, not a body before it"),
    (lambda m: m.body_parentid.__setitem__(2, 9), r"body 'b' has parent index 9"),
    (lambda m: m.body_parentid.__setitem__(1, -1), r"body 'a' has parent index -1"),
    (lambda m: m.body_jntadr.__setitem__(2, 5), r"body 'b' has joints 5 to 5, expected from 1"),
    (lambda m: m.body_jntnum.__setitem__(1, 0), r"body 'b' has joints 1 to 1, expected from 0"),
    (lambda m: m.jnt_bodyid.__setitem__(0, 2), r"joint 'j1' of body 'a' names body 2 as its own"),
    (lambda m: m.jnt_type.__setitem__(1, 7), r"joint 'j2' has type 7"),
    (lambda m: m.jnt_type.__setitem__(1, 1), r"the bodies hold 2 joints with 5 coordinates and 4 velocities"),
    (lambda m: m.jnt_qposadr.__setitem__(1, 9), r"joint 'j2' has qposadr 9 and dofadr 1, expected 1 and 1"),
    (lambda m: m.body_dofadr.__setitem__(2, 9), r"body 'b' has dofadr 9, expected 1"),
    (lambda m: m.actuator_trnid.__setitem__((0, 0), 9), r"actuator 'm' acts on joint 9, which does not exist"),
])
def test_a_compiled_model_edited_out_of_shape_is_refused_naming_what(edit, named):
    """A compiled model whose arrays were edited after compiling (a body reparented, a joint
    moved, as in a notebook) so that its indices no longer describe one model: a KeyError or an
    IndexError from the loader's reading, or a silent wrong system (a joint of another body, a
    ball read as a slide, an actuator's effort on no joint)."""
    model = mujoco.MjModel.from_xml_string(_ACTUATED.format(gear="2"))
    edit(model)
    with pytest.raises(MJCFError, match=r"arrays do not describe one model .*" + named):
        load_mjcf(model)
