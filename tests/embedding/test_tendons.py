"""Fixed tendons as hinge forces (issue 29, item 5): an MJCF hand-like chain against MuJoCo's
own passive forces, the spring's deadband and potential, derivatives, tendons in coupled
systems, the constructs refused by name and the builder's checks."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import Prismatic, Revolute
from sko.bodies.contract import BodyError
from sko.errors import MJCFError, RigidSystemError
from sko.graphs.errors import NonFiniteError, UnknownNodeError
from sko.spatial import pose_transform
from sko.systems import RigidSystem, SystemBuilder
from sko.systems.clustered import ClusteredRigidSystem, DependentJointError
from sko.engine import use_backend
from sko.systems.multibody import FixedTendon
from sko.systems.rigid import BodySpec
from sko.io import load_mjcf

mujoco = pytest.importorskip("mujoco")

_OPT = '<option gravity="0.3 -1 -9.81"><flag contact="disable" energy="enable"/></option>'

#: A wrist and a three-phalanx finger, a slide on the palm; one tendon across the finger and the
#: slide with a deadband (springlength a range) and damping, one plain spring from the wrist to
#: the last phalanx (a joint reference, qpos0 ≠ 0) whose default spring length is its length at
#: the joints' springref.
HAND = f"""<mujoco>{_OPT}<worldbody>
<body name="palm"><joint name="wrist" axis="1 0 0" springref="30"/><geom type="box" size=".2 .1 .05"/>
 <body name="p1" pos="0.2 0 0"><joint name="j1" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.1 0 0" size=".02"/>
  <body name="p2" pos="0.1 0 0"><joint name="j2" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.08 0 0" size=".02"/>
   <body name="p3" pos="0.08 0 0"><joint name="j3" axis="0 1 0" ref="25"/>
    <geom type="capsule" fromto="0 0 0 0.06 0 0" size=".02"/></body></body></body>
 <body name="s" pos="0 0.2 0"><joint name="js" type="slide" axis="0 0 1"/><geom type="box" size=".05 .05 .05"/></body>
</body></worldbody>
<tendon>
 <fixed name="flex" stiffness="3" damping="0.4" springlength="0.1 0.5">
  <joint joint="j1" coef="1"/><joint joint="j2" coef="-0.7"/><joint joint="j3" coef="0.4"/><joint joint="js" coef="2"/>
 </fixed>
 <fixed name="plain" stiffness="1.5" damping="0.2"><joint joint="wrist" coef="1"/><joint joint="j3" coef="-2"/></fixed>
</tendon></mujoco>"""


def _mujoco_state(model, qpos, qvel):
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(model, data)
    return data


def test_hand_tendons_are_mujocos_passive_forces():
    model, system = mujoco.MjModel.from_xml_string(HAND), load_mjcf(HAND)
    assert [t.name for t in system.tendons] == ["flex", "plain"]
    assert system.tendons[1].spring_length == pytest.approx((np.radians(30),) * 2)  # at springref, in radians
    rng = np.random.default_rng(29)
    for _ in range(8):
        data = _mujoco_state(model, rng.uniform(-1.5, 1.5, model.nq), rng.uniform(-2, 2, model.nv))
        assert (np.abs(data.qfrc_passive) > 1e-3).any()
        np.testing.assert_allclose(system.hinge_forces(data.qpos, data.qvel), -data.qfrc_passive, atol=1e-13)
        np.testing.assert_allclose(system.bias_forces(data.qpos, data.qvel), data.qfrc_bias - data.qfrc_passive,
                                   atol=1e-12)
        np.testing.assert_allclose(system.forward_dynamics(data.qpos, data.qvel), data.qacc, rtol=1e-7, atol=1e-7)
        # MuJoCo's potential counts the tendon springs as ours does (gravity about the world origin)
        assert system.potential_energy(data.qpos) == pytest.approx(data.energy[0], abs=1e-12)


def test_compiled_batches_and_the_reference_path_agree():
    system = load_mjcf(HAND)
    rng = np.random.default_rng(1)
    Q, V, A = (rng.uniform(-1.5, 1.5, (5, system.nv)) for _ in range(3))
    tau = system.inverse_dynamics(Q, V, A)
    with use_backend("reference"):
        reference = np.array([system.inverse_dynamics(q, v, a) for q, v, a in zip(Q, V, A)])
        np.testing.assert_allclose(system.potential_energy(Q), [system.potential_energy(q) for q in Q], atol=1e-13)
    np.testing.assert_allclose(tau, reference, atol=1e-12)
    np.testing.assert_allclose(system.forward_dynamics(Q, V, tau), A, atol=1e-9)
    np.testing.assert_allclose(system.energy(Q, V), [system.energy(q, v) for q, v in zip(Q, V)], atol=1e-13)


def test_derivatives_include_the_tendons():
    system = load_mjcf(HAND)
    rng = np.random.default_rng(2)
    q, v, a = (rng.uniform(-1.5, 1.5, system.nv) for _ in range(3))
    d = system.inverse_dynamics_derivatives(q, v, a)
    h, eye = 1e-6, np.eye(system.nv)
    dq = np.column_stack([(system.inverse_dynamics(q + h * e, v, a) - system.inverse_dynamics(q - h * e, v, a)) / (2 * h)
                          for e in eye])
    dv = np.column_stack([(system.inverse_dynamics(q, v + h * e, a) - system.inverse_dynamics(q, v - h * e, a)) / (2 * h)
                          for e in eye])
    np.testing.assert_allclose(d[0], dq, atol=1e-7)
    np.testing.assert_allclose(d[1], dv, atol=1e-7)


def _pendulum(**tendon) -> RigidSystem:
    """Two hinges and a slide, no gravity, one tendon ``L = q1 − 0.5 q2 + 2 q3``."""
    b = SystemBuilder(gravity=[0, 0, 0])
    inertia = dict(mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
    b.add_body("upper", None, Revolute([0, 1, 0], name="j1"), **inertia)
    b.add_body("lower", "upper", Revolute([0, 1, 0], name="j2"), placement=pose_transform([0, 0, -1.0]), **inertia)
    b.add_body("slider", None, Prismatic([1, 0, 0], name="js"), **inertia)
    coefficients = {"j1": 1.0, "lower": -0.5, "js": 2.0}  # a joint or its body
    b.add_tendon("t", coefficients, **tendon)
    assert coefficients == {"j1": 1.0, "lower": -0.5, "js": 2.0}
    return b.build()


def test_deadband_spring():
    system = _pendulum(stiffness=4.0, spring_length=(0.2, 0.6))
    c = np.array([1.0, -0.5, 2.0])
    for L, stretch in ((0.2, 0.0), (0.4, 0.0), (0.6, 0.0), (0.9, 0.3), (-0.1, -0.3)):
        q = np.array([L, 0.0, 0.0])
        np.testing.assert_allclose(system.hinge_forces(q), 4.0 * stretch * c, atol=1e-15)
        np.testing.assert_allclose(system.bias_forces(q), 4.0 * stretch * c, atol=1e-14)
        assert system.potential_energy(q) == pytest.approx(0.5 * 4.0 * stretch**2, abs=1e-15)


def test_spring_and_damper_forces_and_potential():
    system = _pendulum(stiffness=2.0, damping=0.3, spring_length=0.25)
    c = np.array([1.0, -0.5, 2.0])
    q, v = np.array([0.3, -0.4, 0.1]), np.array([0.2, 0.6, -0.1])
    L, Ld = c @ q, c @ v
    np.testing.assert_allclose(system.hinge_forces(q, v), c * (2.0 * (L - 0.25) + 0.3 * Ld), atol=1e-15)
    # the potential is the spring's: its gradient is the configuration part of the hinge forces
    h = 1e-6
    grad = [(system.potential_energy(q + h * e) - system.potential_energy(q - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, system.gravity_forces(q), atol=1e-8)


def _coupled_hand(tendon_joints: str) -> str:
    """The hand with the middle phalanx coupled to the first (a mimic) and one tendon."""
    return HAND.replace('<tendon>', '<equality><joint name="mimic" joint1="j2" joint2="j1" polycoef="0 0.8 0 0 0"/>'
                        '</equality><tendon>').split("<tendon>")[0] + (
        f'<tendon><fixed name="t" stiffness="2" damping="0.3">{tendon_joints}</fixed></tendon></mujoco>')


def test_tendon_on_independent_joints_of_a_coupled_system():
    xml = _coupled_hand('<joint joint="j1" coef="1"/><joint joint="js" coef="-1.5"/><joint joint="j3" coef="0.5"/>')
    system = load_mjcf(xml)
    assert isinstance(system, ClusteredRigidSystem) and system.tendons[0].name == "t"
    spanning = system.spanning_system()
    assert spanning.tendons == system.tendons
    rng = np.random.default_rng(3)
    q, v = rng.uniform(-1, 1, system.nq), rng.uniform(-1, 1, system.nv)
    G = system.constraint_matrices(q)[0]  # a linear coupling: Ġ = 0, so 𝒞 = Gᵀ 𝒞_sp(θ, G v)
    np.testing.assert_allclose(system.bias_forces(q, v),
                               G.T @ spanning.bias_forces(system.spanning_configuration(q), G @ v), atol=1e-12)
    np.testing.assert_allclose(system.hinge_forces(q, v), G.T @ spanning.hinge_forces(system.spanning_configuration(q),
                                                                                       G @ v), atol=1e-14)


def test_tendon_on_a_dependent_joint_is_refused_by_name():
    xml = _coupled_hand('<joint joint="j1" coef="1"/><joint joint="j2" coef="-1"/>')
    with pytest.raises(MJCFError, match="tendon 't' acts on joint 'j2', which equality 'mimic' makes dependent"):
        load_mjcf(xml)
    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 1, 0], name="ja"), mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
    b.add_body("b", "a", Revolute([0, 1, 0], name="jb"), mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
    b.add_coupling("gear", "ja", "jb", ratio=2.0)
    b.add_tendon("t", {"ja": 1.0, "jb": 1.0}, stiffness=1.0)
    with pytest.raises(DependentJointError, match="tendon 't' acts on 'jb'.*dependent"):
        b.build()


_FINGER = """<mujoco><worldbody><body name="a"><joint name="ja" axis="0 1 0"/><geom size=".1"/>
 <body name="b" pos="0 0 -0.3"><joint name="jb" axis="0 1 0"/>{extra}<geom size=".1"/></body></body>
 <body name="f" pos="1 0 0">{free}<geom size=".1"/></body></worldbody>
<tendon><fixed name="tt" {attributes}><joint joint="ja" coef="1"/><joint joint="{joint}" coef="-1"/></fixed></tendon>
{actuator}</mujoco>"""


def _finger(attributes='stiffness="1"', joint="jb", extra="", free="", actuator="", option=""):
    xml = _FINGER.format(attributes=attributes, joint=joint, extra=extra, free=free, actuator=actuator)
    return xml.replace("<mujoco>", f"<mujoco>{option}")


@pytest.mark.parametrize("xml, match", [
    (_finger('stiffness="1" limited="true" range="-1 1"'), r"tendon 'tt' has length limits \(range \[-1.0, 1.0\]\)"),
    (_finger('stiffness="1" frictionloss="0.2"'), r"tendon 'tt' has friction loss \(frictionloss 0.2\)"),
    (_finger('stiffness="1"', joint="jf", free='<joint name="jf" type="ball"/>'),  # refused by MuJoCo's compiler
     "joint 'jf' in tendon 0, wrap 1 must be slide or hinge"),
    (_finger('stiffness="1"', extra='<joint name="jb2" axis="1 0 0"/>'),
     "tendon 'tt' acts on joint 'jb', which shares body 'b' with other joints"),
    (_finger('stiffness="1" armature="0.1"'), "tendon 'tt' has armature 0.1"),
])
def test_unsupported_tendons_are_named(xml, match):
    with pytest.raises(MJCFError, match=match):
        load_mjcf(xml)


def test_limits_and_friction_disabled_by_flags_are_accepted():
    option = '<option><flag limit="disable" frictionloss="disable"/></option>'
    system = load_mjcf(_finger('stiffness="1" limited="true" range="-1 1" frictionloss="0.2"', option=option))
    assert [t.name for t in system.tendons] == ["tt"]


def test_disabled_spring_and_damper_leave_no_tendon():
    option = '<option><flag spring="disable" damper="disable"/></option>'
    system = load_mjcf(_finger('stiffness="1" damping="2"', option=option))
    assert system.tendons == ()


def test_a_tendon_used_only_by_an_actuator_loads_with_a_warning():
    xml = _finger('', actuator='<actuator><motor name="pull" tendon="tt"/></actuator>')
    with pytest.warns(UserWarning, match=r"actuators act through tendons \['tt'\]: actuation is not modelled"):
        system = load_mjcf(xml)
    assert system.tendons == ()
    np.testing.assert_allclose(system.hinge_forces([0.3, -0.2]), 0.0)


def test_builder_errors_name_the_tendon():
    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 1, 0], name="ja"), mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
    b.add_frame("tool", "a")
    b.add_tendon("ok", {"ja": 1.0}, stiffness=1.0)
    cases = [
        (("t", {"nope": 1.0}), {}, "tendon 't': unknown joint 'nope'"),
        (("t", {"tool": 1.0}), {}, "tendon 't': 'tool' is attached by a fixed joint"),
        (("t", {"ja": float("nan")}), {}, "tendon 't': coefficient of joint 'ja' is non-finite"),
        (("t", {"ja": "1"}), {}, "tendon 't': coefficient of joint 'ja' must be a real number"),
        (("t", {"ja": 1.0}), {"stiffness": -1.0}, "tendon 't': stiffness must be non-negative"),
        (("t", {"ja": 1.0}), {"damping": float("inf")}, "tendon 't': damping is non-finite"),
        (("t", {"ja": 1.0}), {"spring_length": (0.5, 0.1)}, r"tendon 't': spring_length \(lo, hi\) = \(0.5, 0.1\)"),
        (("t", {"ja": 1.0}), {"spring_length": (0, 1, 2)}, "tendon 't': spring_length must be a length or a pair"),
        (("t", {}), {}, "tendon 't': coefficients must be a non-empty mapping"),
        (("ok", {"ja": 1.0}), {}, "tendon name 'ok' is already used"),
        ((["t"], {"ja": 1.0}), {}, r"tendon name \['t'\] is not hashable"),
    ]
    for args, kwargs, match in cases:
        with pytest.raises(RigidSystemError, match=match):
            b.add_tendon(*args, **kwargs)
    assert [t.name for t in b.build().tendons] == ["ok"]


def test_system_checks_tendons_given_directly():
    good = _pendulum(stiffness=1.0)
    specs = [good.body(k) for k in good.bodies]
    bodies = [BodySpec(s.name, s.parent, s.joint, s.placement, s.inertia) for s in specs]
    with pytest.raises(UnknownNodeError, match="tendon 'x' acts on 'nope'"):
        RigidSystem(bodies, {}, np.zeros(6), [FixedTendon("x", {"nope": 1.0}, 1.0)])
    with pytest.raises(BodyError, match="tendon 'x': stiffness must be non-negative"):
        RigidSystem(bodies, {}, np.zeros(6), [FixedTendon("x", {"j1": 1.0}, -1.0)])
    with pytest.raises(BodyError, match="duplicate tendon names"):
        RigidSystem(bodies, {}, np.zeros(6), [FixedTendon("x", {"j1": 1.0}), FixedTendon("x", {"j2": 1.0})])


def test_overflowing_tendon_force_is_named():
    system = _pendulum(stiffness=1e300)
    with pytest.raises(NonFiniteError, match="tendon 't': its force overflows"):
        system.hinge_forces([1e10, 0.0, 0.0])
