"""Physical inertia checks by scale, repair, massless bodies and systems with no moving body."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.bodies import Prismatic, Revolute
from sko.errors import RigidSystemError, URDFError
from sko.graphs.errors import NotPositiveDefiniteError
from sko.inertia import (InertiaRepairWarning, check_physical_inertia, check_spatial_inertia, inertia_violation,
                         nearest_physical_inertia)
from sko.io.urdf import parse_urdf
from sko.spatial import spatial_inertia
from sko.systems import SystemBuilder
from tests.rigid.test_urdf import joint, robot
from tests.util import assert_close


def _rod(mass, length):
    """A thin rod along x about its centre: moments (0, m l²/12, m l²/12), on the triangle boundary."""
    return mass * length**2 / 12 * np.diag([0.0, 1.0, 1.0])


def inertial_link(name, mass, inertia, xyz="0 0 0"):
    (ixx, ixy, ixz), (_, iyy, iyz), (_, _, izz) = np.asarray(inertia, dtype=float).tolist()
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}"/><mass value="{float(mass)!r}"/>'
            f'<inertia ixx="{ixx!r}" ixy="{ixy!r}" ixz="{ixz!r}" iyy="{iyy!r}" iyz="{iyz!r}" izz="{izz!r}"/></inertial></link>')


def test_the_same_rod_in_any_units():
    """A 10 mg, 1 mm rod is the same body in SI and in grams and millimetres."""
    for mass, length in ((1e-5, 1e-3), (10.0, 1.0), (1e-5 * 1e9, 1e-3 * 1e6)):
        Ic = _rod(mass, length)
        Ic[0, 0] = -1e-9 * Ic[1, 1]  # rounding below the relative tolerance
        check_physical_inertia(mass, [length / 2, 0, 0], Ic, "rod")
        system = parse_urdf(robot(inertial_link("a", 1.0, np.eye(3)), inertial_link("rod", mass, Ic),
                                  joint("j", "revolute", "a", "rod", axis="0 0 1")))
        assert system.nv == 1 and system.mass_matrix([0.3])[0, 0] > 0
        tau = np.array([1e-3 * mass * length])
        qdd = system.forward_dynamics([0.3], [0.5], tau)
        assert_close(system.mass_matrix([0.3]) @ qdd + system.bias_forces([0.3], [0.5]), tau, rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10_000), st.floats(1e-6, 1e6), st.floats(1e-4, 1e4))
def test_inertia_checks_do_not_depend_on_units(seed, mass_unit, length_unit):
    """The same body in other units of mass and length is judged the same."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T if rng.random() < 0.5 else np.trace(A @ A.T) * np.eye(3) - A @ A.T  # often unphysical, or physical
    m, c = rng.uniform(1e-3, 10.0), rng.normal(size=3)
    here = inertia_violation(m, c, Ic)
    there = inertia_violation(m * mass_unit, c * length_unit, Ic * mass_unit * length_unit**2)
    assert there == pytest.approx(here, rel=1e-9, abs=1e-12)


def test_point_mass_with_rounding_noise_is_accepted():
    """iCub's head: all moments zero except ixz = 2.4e-35, centre of mass 11 cm off its frame."""
    Ic = np.zeros((3, 3))
    Ic[0, 2] = Ic[2, 0] = 2.40741e-35
    check_physical_inertia(1.33687, [0.0185, -0.1108, 0.0], Ic, "link 'head'")
    with pytest.raises(NotPositiveDefiniteError, match="link 'head'"):  # the same noise on a body of no size
        check_physical_inertia(1.33687, [0.0, 0.0, 0.0], Ic, "link 'head'")


@pytest.mark.parametrize("mass, inertia, match", [
    (-1.0, np.eye(3), "link 'x' has negative mass"),
    (1.0, np.diag([1.0, 1.0, 2.5]), "link 'x': rotational inertia is not physical: .*triangle inequality"),
    (1.0, np.diag([-0.1, 1.0, 1.0]), "link 'x': rotational inertia is not positive semidefinite"),
    (1.0, np.array([[1.0, 0.1, 0], [0, 1.0, 0], [0, 0, 1.0]]), "not symmetric"),
])
def test_unphysical_inertias_are_named(mass, inertia, match):
    with pytest.raises(NotPositiveDefiniteError, match=match):
        check_physical_inertia(mass, np.zeros(3), inertia, "link 'x'")


@pytest.mark.parametrize("mass", [0.0, 1.0])
def test_moments_of_negative_sum_are_said_to_be_so(mass):
    """A body whose moments sum below zero has no size to judge them by: the message said they
    broke the triangle inequality "by inf of the body's m r² = -0.4"."""
    with pytest.raises(NotPositiveDefiniteError) as caught:
        check_physical_inertia(mass, np.zeros(3), np.diag([-1.0, 0.1, 0.1]), "link 'x'")
    message = str(caught.value)
    assert "link 'x': rotational inertia is not positive semidefinite: principal moments -1, 0.1, 0.1 sum to " \
           "-0.8 < 0" in message and "inf" not in message and "m r² = -" not in message


@pytest.mark.parametrize("I6, match", [
    (spatial_inertia(-1.0, [0, 0, 1], np.eye(3)), "negative mass"),
    (np.diag([1.0, 1, 1, 0, 0, 0]), None),
    (np.diag([0.0, 0, 0, 1, 1, 2]), "lower-right block must be m·1"),
    (np.diag([1.0, 0, 0, 1e-3, 0, 0]), "massless body"),
])
def test_spatial_inertias(I6, match):
    if match is None:
        check_spatial_inertia(I6, "body 'b'")  # massless with a rotational block (a rotor) is fine
        return
    with pytest.raises(NotPositiveDefiniteError, match=match):
        check_spatial_inertia(I6, "body 'b'")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=9, max_size=9))
def test_repair_is_the_nearest_physical_inertia(entries):
    A = np.reshape(entries, (3, 3))
    Ic = A + A.T
    fixed = nearest_physical_inertia(Ic)
    assert inertia_violation(1.0, np.zeros(3), fixed) <= 1e-9 + 1e-9 * np.abs(Ic).max()
    if inertia_violation(1.0, np.zeros(3), Ic) == 0:
        np.testing.assert_allclose(fixed, Ic, atol=1e-12)
    # no physical inertia is nearer: the projection onto a convex set leaves a residual that has a
    # non-positive inner product with every direction into the set
    rng = np.random.default_rng(abs(hash(tuple(entries))) % 2**32)
    for _ in range(20):
        S = rng.normal(size=(3, 3))
        S = S @ S.T
        other = np.trace(S) * np.eye(3) - S  # physical
        assert np.sum((Ic - fixed) * (other - fixed)) <= 1e-8 * (1 + np.abs(Ic).max() * np.abs(other).max())


def test_urdf_repair_warns_with_every_link_and_change():
    bad = np.diag([1.0, 1.0, 3.0])
    text = robot(inertial_link("a", 1.0, np.eye(3)), inertial_link("b", 2.0, bad), inertial_link("c", 1.0, bad * 0.1),
                 joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "b", "c"))
    with pytest.raises(URDFError, match="link 'b': rotational inertia is not physical.*inertia='repair'"):
        parse_urdf(text)
    with pytest.warns(InertiaRepairWarning, match=r"replaced 2 link inertias.*link 'b' changed by 0\.577.*link 'c'"):
        system = parse_urdf(text, inertia="repair")
    repaired = robot(inertial_link("a", 1.0, np.eye(3)), inertial_link("b", 2.0, nearest_physical_inertia(bad)),
                     inertial_link("c", 1.0, nearest_physical_inertia(bad * 0.1)),
                     joint("j1", "revolute", "a", "b"), joint("j2", "revolute", "b", "c"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strict = parse_urdf(repaired)  # the repaired inertia passes the strict check, silently
        parse_urdf(repaired, inertia="repair")  # nothing to repair: no warning
    np.testing.assert_allclose(system.mass_matrix([0.1, 0.2]), strict.mass_matrix([0.1, 0.2]), rtol=1e-14)
    with pytest.raises(URDFError, match="negative mass"):
        parse_urdf(robot(inertial_link("a", 1.0, np.eye(3)), inertial_link("b", -1.0, np.eye(3)),
                         joint("j", "revolute", "a", "b")), inertia="repair")
    with pytest.raises(URDFError, match="inertia must be one of"):
        parse_urdf(text, inertia="fix")


def _massless_hip(tip_mass=1.0):
    """A spherical hip made of three revolutes with two massless links between them (human.urdf)."""
    b = SystemBuilder()
    b.add_body("pelvis", None, Prismatic([1, 0, 0]), mass=5.0, inertia_com=0.1 * np.eye(3))
    b.add_body("hip_z", "pelvis", Revolute([0, 0, 1]))
    b.add_body("hip_x", "hip_z", Revolute([1, 0, 0]))
    b.add_body("leg", "hip_x", Revolute([0, 1, 0]), mass=tip_mass, com=[0.0, 0.0, -0.4],
               inertia_com=0.02 * np.eye(3) if tip_mass else None)
    return b.build()


def test_massless_links_between_joints():
    system = _massless_hip()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, tau = system.random_configuration(rng), rng.normal(size=4), rng.normal(size=4)
        M = system.mass_matrix(q)
        assert np.linalg.eigvalsh(M).min() > 0
        qdd = system.forward_dynamics(q, qd, tau)
        np.testing.assert_allclose(M @ qdd + system.bias_forces(q, qd), tau, atol=1e-10)
        np.testing.assert_allclose(alg.mass_matrix_inverse(system.sko_model(q)[0]) @ M, np.eye(4), atol=1e-10)


def test_singular_mass_matrix_is_named_by_the_recursion_needing_its_inverse():
    system = _massless_hip(tip_mass=0.0)  # nothing moves with the hip: ℳ is singular
    q = system.neutral_configuration()
    assert np.linalg.matrix_rank(system.mass_matrix(q)) < 4  # ℳ itself is fine to form
    with pytest.raises(NotPositiveDefiniteError, match="'leg'"):
        system.forward_dynamics(q, np.zeros(4), np.zeros(4))


def test_a_system_with_no_moving_body():
    system = parse_urdf(robot(inertial_link("base", 1.0, np.eye(3)), inertial_link("rotor", 0.1, 0.01 * np.eye(3)),
                              joint("j", "fixed", "base", "rotor", xyz="0 0 0.1")))
    z = np.zeros(0)
    assert (system.nq, system.nv, system.bodies) == (0, 0, ())
    assert system.mass_matrix(z).shape == (0, 0)
    for result in (system.inverse_dynamics(z, z, z), system.forward_dynamics(z, z, z), system.bias_forces(z, z),
                   system.gravity_forces(z), system.neutral_configuration(), system.random_configuration(0),
                   system.qdot(z, z), system.normalize(z), system.integrate(z, z, 0.1)):
        assert result.shape == (0,)
    assert system.energy(z, z) == 0 and system.body_poses(z) == {}
    assert system.jacobian(z, "rotor").shape == (6, 0)
    np.testing.assert_allclose(system.frame_pose(z, "rotor")[:3, 3], [0, 0, 0.1])
    with pytest.raises(RigidSystemError):
        SystemBuilder().add_body("x", None, Revolute(), mass=-1.0)
