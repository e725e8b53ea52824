"""One system API: RigidSystem and MultibodySystem answer the same calls (``q, v, tau``), lookups
by joint name and by body name are distinct, ``difference`` inverts ``integrate``, and the old
spellings still work for one release, with a DeprecationWarning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.bodies import Free, Planar, Spherical
from sko.errors import JointError
from sko.examples.rigid import example_systems
from sko.graphs.errors import DimensionError, UnknownNodeError
from sko.io.urdf import parse_urdf
from sko.systems import MultibodySystem, RigidSystem
from sko.examples.bodies import random_system
from tests.rigid.random_systems import random_rigid_system
from tests.rigid.test_urdf import ARM as URDF
from tests.util import assert_close

EXAMPLES = {name: factory() for name, factory in example_systems().items()}
SHARED = ["neutral_configuration", "random_configuration", "normalize", "qdot", "integrate", "difference",
          "sko_model", "bias_forces", "gravity_forces", "mass_matrix", "inverse_dynamics", "forward_dynamics",
          "kinetic_energy", "potential_energy", "energy", "joint", "body_joint", "joint_body",
          "joint_names", "q_slice", "v_slice", "nq", "nv"]


def test_rigid_system_is_a_multibody_system_with_one_api():
    system = EXAMPLES["arm7"]
    assert isinstance(system, MultibodySystem)
    for name in SHARED:
        assert getattr(type(system), name) is getattr(MultibodySystem, name), name


@pytest.mark.parametrize("system", [EXAMPLES["arm7"], random_system(3, n_bodies=5)], ids=["rigid", "mixed"])
def test_velocity_and_torque_are_optional_in_the_order_q_v_tau(system):
    q = system.random_configuration(1)
    v = np.random.default_rng(2).standard_normal(system.nv)
    zero = np.zeros(system.nv)
    assert_close(system.forward_dynamics(q), system.forward_dynamics(q, zero, zero), 0, scale=1.0)
    assert_close(system.forward_dynamics(q, v), system.forward_dynamics(q, v, zero), 0, scale=1.0)
    assert_close(system.inverse_dynamics(q), system.gravity_forces(q), 0, scale=1.0)
    assert_close(system.inverse_dynamics(q, v), system.bias_forces(q, v), 0, scale=1.0)
    dv = system.forward_dynamics(q, v=v, tau=zero)
    assert_close(system.inverse_dynamics(q, v=v, dv=dv), zero, 1e-9, scale=np.abs(system.bias_forces(q, v)).max())


def test_old_spellings_warn_and_agree():
    system = EXAMPLES["arm7"]
    q = system.random_configuration(0)
    v = np.linspace(-1, 1, system.nv)
    with pytest.warns(DeprecationWarning, match="neutral_configuration"):
        assert np.array_equal(system.neutral(), system.neutral_configuration())
    with pytest.warns(DeprecationWarning, match="bias_forces"):
        assert np.array_equal(system.bias(q, v), system.bias_forces(q, v))
    with pytest.warns(DeprecationWarning, match="qd="):
        assert np.array_equal(system.bias_forces(q, qd=v), system.bias_forces(q, v))
    with pytest.warns(DeprecationWarning, match="dv="):
        assert np.array_equal(system.inverse_dynamics(q, v, qdd=v), system.inverse_dynamics(q, v, v))
    with pytest.warns(DeprecationWarning, match="random_configuration"):
        q1, v1 = system.random_state(np.random.default_rng(4))
    rng = np.random.default_rng(4)
    assert np.array_equal(q1, system.random_configuration(rng)) and np.array_equal(v1, rng.uniform(-1, 1, system.nv))
    with pytest.warns(DeprecationWarning, match=r"body\(name\)"):
        assert system.body[system.bodies[0]] is system.body(system.bodies[0])
    with pytest.raises(TypeError, match="both"):
        system.bias_forces(q, v=v, qd=v)


def test_the_dynamics_take_their_old_keywords_themselves():
    """inverse_dynamics and forward_dynamics rename qd=, qdd= without a wrapper: the same
    warnings, pointing at the caller, and Python's errors for a keyword given twice or unknown."""
    system = EXAMPLES["arm7"]
    q = system.random_configuration(0)
    v, tau = np.linspace(-1, 1, system.nv), np.linspace(2, 0, system.nv)
    with pytest.warns(DeprecationWarning, match=r"forward_dynamics\(qd=") as caught:
        assert np.array_equal(system.forward_dynamics(q, qd=v, tau=tau), system.forward_dynamics(q, v, tau))
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning, match=r"inverse_dynamics\(qdd?=") as caught:
        assert np.array_equal(system.inverse_dynamics(q, qd=v, qdd=tau), system.inverse_dynamics(q, v, tau))
    assert {w.filename for w in caught} == {__file__} and len(caught) == 2
    with pytest.raises(TypeError, match="got both qdd= .deprecated. and dv="):
        system.inverse_dynamics(q, v, tau, qdd=tau)
    with pytest.raises(TypeError, match="unexpected keyword argument 'vel'"):
        system.forward_dynamics(q, vel=v)
    with warnings.catch_warnings():  # the unknown keyword is reported before any old one is renamed
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="unexpected keyword argument 'vel'"):
            system.forward_dynamics(q, qd=v, vel=v)


def test_joint_and_body_lookups_are_distinct():
    system = parse_urdf(URDF)
    assert system.joint_names() == {"shoulder": "upper", "elbow": "lower", "slide": "slider"}
    assert system.joint("elbow") is system.body_joint("lower") is system.body("lower").joint
    assert system.joint_body("elbow") == "lower"
    assert system.q_slice("elbow") == system.q_slice("lower") and system.v_slice("slide") == system.v_slice("slider")
    with pytest.raises(UnknownNodeError, match="'upper' is not a joint"):
        system.joint_body("upper")
    with pytest.raises(UnknownNodeError, match="'elbow' is not a body"):
        system.body("elbow")
    with pytest.raises(UnknownNodeError, match="neither a body nor a joint"):
        system.q_slice("ghost")
    with pytest.warns(DeprecationWarning, match="body_joint"):
        assert system.joint("lower") is system.body_joint("lower")
    for bad in (["elbow"], None, 3):
        with pytest.raises(UnknownNodeError):
            system.joint(bad)
        with pytest.raises(UnknownNodeError):
            system.body(bad)
        with pytest.raises(UnknownNodeError):
            system.v_slice(bad)
    with pytest.raises(DimensionError, match="q1 has length 2, expected nq = 3"):
        system.difference(np.zeros(3), np.zeros(2))


def test_a_name_of_a_body_and_of_another_bodys_joint_is_ambiguous():
    text = URDF.replace('name="elbow"', 'name="upper"')
    system = parse_urdf(text)
    with pytest.raises(UnknownNodeError, match="names both body 'upper' and the joint of body 'lower'"):
        system.q_slice("upper")
    assert system.joint("upper") is system.body_joint("lower")


def test_shared_joint_names_cannot_be_looked_up():
    system = random_rigid_system(75)
    shared = [n for n in system._shared_joint_names]
    for name in shared:
        with pytest.raises(UnknownNodeError, match="several bodies"):
            system.joint_body(name)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_difference_inverts_integrate(seed):
    """``difference(q0, integrate(q0, v)) = v`` for rotations under π, and
    ``integrate(q0, difference(q0, q1)) = q1`` (the rotation; a quaternion up to its sign)."""
    system = random_rigid_system(seed)
    if any(system.body_joint(k).user_defined for k in system.bodies):
        with pytest.raises(JointError, match="user-defined"):
            system.difference(system.neutral_configuration(), system.neutral_configuration())
        return
    rng = np.random.default_rng(seed)
    q0, q1 = system.random_configuration(rng), system.random_configuration(rng)
    v = rng.uniform(-0.5, 0.5, system.nv)  # each rotation vector shorter than π
    assert_close(system.difference(q0, system.integrate(q0, v)), v, 1e-9, scale=1.0)
    back = system.integrate(q0, system.difference(q0, q1))
    for k in system.bodies:
        s = system.q_slice(k)
        joint = system.body_joint(k)
        if isinstance(getattr(joint, "joint", joint), (Spherical, Free)) and back[s][:4] @ q1[s][:4] < 0:
            back[s.start:s.start + 4] *= -1
        assert_close(back[s], q1[s], 1e-9, scale=1.0 + np.abs(q1[s]).max())


def test_difference_of_quaternion_and_planar_joints_by_hand():
    half = np.sqrt(0.5)
    assert_close(Spherical().difference([1, 0, 0, 0], [half, 0, 0, half]), [0, 0, np.pi / 2], 1e-15, scale=1.0)
    assert_close(Spherical().difference([1, 0, 0, 0], [-half, 0, 0, -half]), [0, 0, np.pi / 2], 1e-15, scale=1.0)
    v = Free().difference([1, 0, 0, 0, 0, 0, 0], [half, 0, 0, half, 1.0, 1.0, 0.0])
    assert_close(Free().integrate([1, 0, 0, 0, 0, 0, 0], v, 1.0), [half, 0, 0, half, 1.0, 1.0, 0.0], 1e-14, scale=1.0)
    assert_close(Planar().difference([0, 0, 0], [0, 2.0, -1.0]), [0, 2.0, -1.0], 1e-15, scale=1.0)


def test_difference_on_flexible_bodies_inverts_integrate():
    system = random_system(5, n_bodies=6)
    rng = np.random.default_rng(0)
    q0 = system.random_configuration(rng)
    v = rng.uniform(-0.5, 0.5, system.nv)
    assert_close(system.difference(q0, system.integrate(q0, v, 1.0)), v, 1e-9, scale=1.0)


def test_rigid_body_lookup_gives_the_rigid_body():
    system = EXAMPLES["arm7"]
    k = system.bodies[-1]
    assert system.body(k).joint is system.body_joint(k)
    assert isinstance(system, RigidSystem) and system.body(k).inertia.shape == (6, 6)


def test_a_joint_axis_is_read_only():
    """A joint's unit axis is read only: ``S``, ``T`` and the compiled constants were made from it
    when the joint was built, so an edit in place would leave them on the old axis."""
    from sko.bodies import Cylindrical, Helical, Prismatic, Revolute

    for joint in (Revolute([0.0, 0.0, 5.0]), Helical([1.0, 2.0, 2.0], pitch=0.1), Prismatic([0.0, 3.0, 4.0]),
                  Cylindrical([2.0, 0.0, 0.0])):
        assert np.isclose(np.linalg.norm(joint.axis), 1.0)
        with pytest.raises(ValueError, match="read-only"):
            joint.axis[0] = 1.0
