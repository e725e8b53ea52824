"""Complex steps pass through the configuration maps: every joint's ``integrate``,
``normalize`` and ``difference``, the quaternion helpers of :mod:`sko.spatial`, and a system's
``integrate`` and ``normalize`` keep a complex ``q`` complex and are analytic in it (no
``abs``, no ``np.linalg.norm``, no casts to float), so ``Im f(x + i h δ)/h`` is the exact
directional derivative: central differences of the real maps to 1e-7, and the exact tangent
columns (``qdot_matrix``) and projection differentials to 1e-12. Real inputs keep their float64
results bit for bit, and the checks of the inputs (non-finite entries, zero quaternions) are
made on the real part."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from sko import spatial as sp
from sko.bodies import (CompositeJoint, CustomJoint, Cylindrical, Fixed, Free, FreePositionFirst, Helical, OffsetJoint,
                        Planar, Prismatic, RackAndPinion, Revolute, Spherical, SphericalEulerZYX)
from sko.errors import JointError
from sko.examples.bodies import flexible_examples, random_system
from sko.graphs.errors import NonFiniteError
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from tests.rigid.random_systems import random_rigid_system

H = 1e-30  #: the complex step: O(H²) is far below rounding


def _custom():
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])

    def kinematics(q, v):
        return sp.rot(sp.axis_angle_matrix(axis, q[0]).T), np.concatenate([axis, np.zeros(3)]).reshape(6, 1), np.zeros(6)

    return CustomJoint(1, 1, kinematics, name="custom")


#: name → (joint factory, slices of q holding quaternions)
JOINTS = {
    "revolute": (lambda: Revolute([0.2, -0.7, 0.4]), ()),
    "prismatic": (lambda: Prismatic([1.0, 2.0, -0.5]), ()),
    "helical": (lambda: Helical([0.3, 0.1, -0.9], 0.25), ()),
    "rack-and-pinion": (lambda: RackAndPinion(0.3), ()),
    "cylindrical": (lambda: Cylindrical([-0.4, 0.8, 0.1]), ()),
    "planar": (lambda: Planar([0.2, 0.3, 0.9]), ()),
    "spherical": (lambda: Spherical(), (slice(0, 4),)),
    "euler-zyx": (lambda: SphericalEulerZYX(), ()),
    "free": (lambda: Free(), (slice(0, 4),)),
    "free-position-first": (lambda: FreePositionFirst(), (slice(3, 7),)),
    "composite": (lambda: CompositeJoint([(None, Prismatic([1.0, 0, 0])), (pose_transform([0.1, 0.2, 0.0]), Spherical())]),
                  (slice(1, 5),)),
    "offset": (lambda: OffsetJoint(Revolute([0.0, 1.0, 0.0]), [0.4]), ()),
    "custom": (_custom, ()),
    "reversed revolute": (lambda: Revolute([0.2, -0.7, 0.4]).reversed(), ()),
    "reversed planar": (lambda: Planar().reversed(), ()),
    "reversed spherical": (lambda: Spherical().reversed(), (slice(0, 4),)),
    "reversed free": (lambda: Free().reversed(), (slice(0, 4),)),
}
MOVING = sorted(JOINTS)
SEEDS = range(4)


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    """A ComplexWarning (an imaginary part dropped by a cast) fails every test of this module."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _central(f, h=1e-3):
    """Fourth-order central difference of ``f`` at 0."""
    return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


def _step(f):
    """The complex step ``Im f(i H) / H``, after checking ``f`` keeps the scalar complex."""
    z = np.asarray(f(1j * H))
    assert z.dtype == np.complex128
    return z.imag / H


def _projection_differential(joint_name, q, dq):
    """The differential of ``normalize`` at ``q`` along ``dq``: ``(I − q̂ q̂ᵀ) δ / ‖q‖`` on each
    quaternion, the identity elsewhere."""
    out = dq.copy()
    for s in JOINTS[joint_name][1]:
        n = np.linalg.norm(q[s])
        u = q[s] / n
        out[s] = (dq[s] - u * (u @ dq[s])) / n
    return out


def _state(joint, seed):
    rng = np.random.default_rng(seed)
    return joint.random(rng), rng.normal(size=joint.nv), rng.normal(size=joint.nq), rng.normal(size=joint.nv)


# ---------------------------------------------------------------------------- joints
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", MOVING)
def test_complex_steps_of_integrate_agree_with_central_differences(name, seed):
    joint = JOINTS[name][0]()
    q, v, dq, dv = _state(joint, seed)
    dt = 0.1 + 0.2 * seed
    for f in (lambda t: joint.integrate(q + t * dq, v, dt), lambda t: joint.integrate(q, v + t * dv, dt)):
        exact, approx = _step(f), _central(f)
        assert np.abs(exact - approx).max() <= 1e-7 * max(1.0, np.abs(approx).max()), name


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", MOVING)
def test_the_step_along_the_velocity_at_zero_is_the_qdot_matrix(name, seed):
    """``d/dε integrate(q, ε e_ι, 1)`` at ``ε = 0`` is column ``ι`` of ``qdot_matrix(q)``, to rounding
    (the small-angle branches are taken on the real part, so ``v = i H e_ι`` is exact)."""
    joint = JOINTS[name][0]()
    q = _state(joint, seed)[0]
    columns = np.column_stack([_step(lambda t, e=e: joint.integrate(q, t * e, 1.0)) for e in np.eye(joint.nv)])
    np.testing.assert_allclose(columns, joint.qdot_matrix(q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", MOVING)
def test_normalize_keeps_the_imaginary_part_and_its_step_is_the_projection_differential(name, seed):
    joint = JOINTS[name][0]()
    q, _, dq, _ = _state(joint, seed)
    q = q * (0.5 + seed)  # quaternions off the unit sphere
    got = joint.normalize(q + 1j * H * dq)
    assert got.dtype == np.complex128 and np.any(got.imag != 0)
    np.testing.assert_allclose(got.real, joint.normalize(q), rtol=0, atol=1e-15)  # complex arithmetic: to rounding
    np.testing.assert_allclose(got.imag / H, _projection_differential(name, q, dq), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", [n for n in MOVING if n != "custom"])  # a user q̇ map has no difference
def test_complex_steps_of_difference_agree_with_central_differences(name, seed):
    joint = JOINTS[name][0]()
    q, v, dq, _ = _state(joint, seed)
    q1 = joint.integrate(q, v, 0.5)
    f = lambda t: joint.difference(q + t * dq, q1)  # noqa: E731
    exact, approx = _step(f), _central(f)
    assert np.abs(exact - approx).max() <= 1e-7 * max(1.0, np.abs(approx).max())


@pytest.mark.parametrize("name", MOVING + ["fixed"])
def test_real_inputs_keep_float64_and_equal_the_real_part_of_the_complex_path(name):
    joint = Fixed() if name == "fixed" else JOINTS[name][0]()
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, v = joint.random(rng) * rng.uniform(0.7, 1.3), rng.normal(size=joint.nv)
        for f in (lambda x: joint.normalize(x), lambda x: joint.integrate(x, v, 0.3)):
            real, cplx = f(q), f(q + 0j)
            assert real.dtype == np.float64 and cplx.dtype == np.complex128
            np.testing.assert_allclose(cplx.real, real, rtol=0, atol=1e-15)
            assert not cplx.imag.any()


@pytest.mark.parametrize("name", ["spherical", "free", "reversed free", "free-position-first", "composite"])
def test_quaternion_checks_are_made_on_the_real_part(name):
    joint, (s,) = JOINTS[name][0](), JOINTS[name][1]
    q = joint.neutral().astype(complex)
    q[s] = 1j * np.array([1.0, 2.0, 3.0, 4.0])  # no real quaternion: no configuration
    with pytest.raises(JointError, match="zero norm"):
        joint.normalize(q)
    with pytest.raises(JointError, match="zero norm"):
        joint.integrate(q, np.zeros(joint.nv), 0.1)
    q = joint.neutral().astype(complex)
    q[s] = 0
    with pytest.raises(JointError, match="zero norm"):
        joint.normalize(q)
    for bad in (np.nan, np.inf * 1j):
        q = joint.neutral().astype(complex)
        q[0] = bad
        with pytest.raises(JointError, match="NaN or infinity"):
            joint.normalize(q)
        with pytest.raises(JointError, match="NaN or infinity"):
            joint.integrate(q, np.zeros(joint.nv), 0.1)


# ---------------------------------------------------------------------------- quaternions
def _old_quaternion_exp(omega):
    """The float implementation before complex steps were kept (for the bit-for-bit check)."""
    omega = np.asarray(omega, dtype=float)
    angle = np.linalg.norm(omega)
    half = angle / 2
    k = 0.5 - angle**2 / 48 if angle < 1e-6 else np.sin(half) / angle
    return np.concatenate([[np.cos(half)], k * omega])


def _old_quaternion_normalize(q):
    q = np.asarray(q, dtype=float)
    top = np.abs(q).max(initial=0.0)
    q = q / top if np.isfinite(top) and top > 0 else q
    return q / np.linalg.norm(q)


def _old_quaternion_log(q):
    q = _old_quaternion_normalize(q)
    if q[0] < 0:
        q = -q
    s = np.linalg.norm(q[1:])
    angle = 2 * np.arctan2(s, q[0])
    k = 2 + s**2 / 3 if s < 1e-6 else angle / s
    return k * q[1:]


def test_quaternion_helpers_on_real_input_are_unchanged_bit_for_bit():
    rng = np.random.default_rng(11)
    for scale in (1.0, 1e-7, 1e-9, 3.0, 1e-200, 1e200):
        for _ in range(20):
            w, q = rng.normal(size=3) * scale, rng.normal(size=4) * scale
            for new, old, x in ((sp.quaternion_exp, _old_quaternion_exp, w),
                                (sp.quaternion_normalize, _old_quaternion_normalize, q),
                                (sp.quaternion_log, _old_quaternion_log, q)):
                with np.errstate(all="ignore"):  # ‖ω‖² of a huge rotation vector overflows, as it did
                    got, want = new(x), old(x)
                assert got.dtype == np.float64
                np.testing.assert_array_equal(got, want)
    assert sp.quaternion_exp([0, 0, 0]).dtype == np.float64  # integers become floats, as before


@pytest.mark.parametrize("omega", [[0.3, -1.2, 0.8], [2e-7, -1e-7, 3e-7], [0.0, 0.0, 0.0], [3.0, 0.5, -0.2]])
def test_quaternion_exp_is_analytic(omega):
    omega, d = np.array(omega), np.array([0.4, 0.9, -0.7])
    f = lambda t: sp.quaternion_exp(omega + t * d)  # noqa: E731
    np.testing.assert_allclose(_step(f), _central(f, 1e-4), rtol=0, atol=1e-9)
    np.testing.assert_allclose(sp.quaternion_exp(omega + 0j).real, sp.quaternion_exp(omega), rtol=0, atol=1e-16)


def test_quaternion_exp_at_zero_steps_to_half_the_direction_exactly():
    d = np.array([0.4, 0.9, -0.7])
    np.testing.assert_allclose(_step(lambda t: sp.quaternion_exp(t * d)), np.concatenate([[0.0], d / 2]), rtol=1e-15, atol=0)


@pytest.mark.parametrize("scale", [1.0, 1e-150, 1e150])
def test_quaternion_normalize_steps_by_the_projection_differential(scale):
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, d = rng.normal(size=4), rng.normal(size=4)
        u = q / np.linalg.norm(q)
        got = sp.quaternion_normalize(scale * (q + 1j * H * d))
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got.real, u, rtol=0, atol=1e-15)
        np.testing.assert_allclose(got.imag / H, (d - u * (u @ d)) / np.linalg.norm(q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("q", [[0.9, 0.2, -0.3, 0.1], [0.05, 0.6, -0.7, 0.4], [-0.8, 0.1, 0.3, 0.2],
                               [1.0, 0.0, 0.0, 0.0], [1.0, 1e-8, 0.0, -2e-8]])
def test_quaternion_log_is_analytic_on_both_of_its_branches(q):
    q, d = np.array(q), np.array([0.3, -0.8, 0.5, 0.6])
    f = lambda t: sp.quaternion_log(q + t * d)  # noqa: E731
    np.testing.assert_allclose(_step(f), _central(f, 1e-5), rtol=0, atol=1e-8)
    np.testing.assert_allclose(sp.quaternion_log(q + 0j).real, sp.quaternion_log(q), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------- systems
def free_ball_revolute():
    """A floating base, a ball-jointed arm on it and a revolute forearm (and a planar hand)."""
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    for name, parent, joint, xyz in (("base", None, Free(), [0.0, 0.0, 0.0]), ("arm", "base", Spherical(), [0.3, 0, 0.1]),
                                     ("forearm", "arm", Revolute([0.0, 1.0, 0.0]), [0.0, 0.0, -0.4]),
                                     ("hand", "forearm", Planar([1.0, 0.0, 0.0]), [0.0, 0.0, -0.3])):
        b.add_body(name, parent, joint, pose_transform(xyz), mass=1.0, com=[0.0, 0.0, -0.1],
                   inertia_com=np.diag([0.02, 0.03, 0.04]))
    return b.build()


def revolute_chain():
    """Joints with ``q̇ = ν`` only (the system's shortcut: nothing to project)."""
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    for k, joint in enumerate((Revolute([0.0, 1.0, 0.0]), Prismatic([1.0, 0.0, 0.0]), Helical([0.0, 0.0, 1.0], 0.1))):
        b.add_body(f"l{k}", f"l{k - 1}" if k else None, joint, pose_transform([0.3, 0.0, 0.0]), mass=1.0,
                   com=[0.1, 0.0, 0.0], inertia_com=np.diag([0.02, 0.03, 0.04]))
    return b.build()


SYSTEMS = {"free+ball+revolute": free_ball_revolute, "revolute chain": revolute_chain,
           **{f"random rigid {s}": (lambda s=s: random_rigid_system(s)) for s in range(4)},
           **{f"mixed {s}": (lambda s=s: random_system(s)) for s in range(3)}, **flexible_examples()}


def _system_state(system, seed):
    rng = np.random.default_rng(seed)
    return system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.q_size)


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_system_integrate_and_normalize_keep_complex_steps(name):
    system = SYSTEMS[name]()
    q, v, dq = _system_state(system, 1)
    qc = q * 1.2 + 1j * H * dq
    normalized, integrated = system.normalize(qc), system.integrate(qc, v, 0.3)
    assert normalized.dtype == integrated.dtype == np.complex128
    np.testing.assert_allclose(normalized.real, system.normalize(q * 1.2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(integrated.real, system.integrate(q * 1.2, v, 0.3), rtol=0, atol=1e-14)
    body_by_body = np.concatenate([system.body(k).normalize(qc[system.q_slices[k]]) for k in system.bodies])
    np.testing.assert_array_equal(normalized, body_by_body)  # the indexed path equals the bodies'
    for f in (lambda t: system.integrate(q + t * dq, v, 0.3), lambda t: system.integrate(q, v + t * dq[:system.nv], 0.3),
              lambda t: system.normalize(q * 1.2 + t * dq)):
        exact, approx = _step(f), _central(f)
        assert np.abs(exact - approx).max() <= 1e-7 * max(1.0, np.abs(approx).max())


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_system_steps_along_the_velocity_are_the_qdot_matrix(name):
    system = SYSTEMS[name]()
    q = _system_state(system, 2)[0]
    columns = np.column_stack([_step(lambda t, e=e: system.integrate(q, t * e)) for e in np.eye(system.nv)])
    np.testing.assert_allclose(columns, system.qdot_matrix(q), rtol=0, atol=1e-12)


def test_system_normalize_steps_by_the_projection_differential():
    system = free_ball_revolute()
    q, _, dq = _system_state(system, 4)
    q = q * 1.7
    got = system.normalize(q + 1j * H * dq).imag / H
    want = dq.copy()
    for k, name in (("base", "free"), ("arm", "spherical"), ("forearm", "revolute"), ("hand", "planar")):
        s = system.q_slices[k]
        want[s] = _projection_differential(name, q[s], dq[s])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_system_real_inputs_stay_float64():
    system = free_ball_revolute()
    q, v, _ = _system_state(system, 6)
    for out in (system.normalize(q), system.integrate(q, v, 0.2), system.normalize(system.neutral_configuration().astype(int))):
        assert out.dtype == np.float64
    for base, joint in (("base", Free()), ("arm", Spherical())):
        s = system.q_slices[base]
        np.testing.assert_array_equal(system.normalize(q * 1.3)[s], joint.normalize(q[s] * 1.3))
        np.testing.assert_allclose(system.normalize(q * 1.3)[s][:4], q[s][:4] / np.linalg.norm(q[s][:4]),
                                   rtol=0, atol=2e-16)


def test_system_checks_of_complex_input_are_kept():
    system = free_ball_revolute()
    q = system.random_configuration(np.random.default_rng(0)).astype(complex)
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(NonFiniteError):
        system.normalize(bad)
    with pytest.raises(NonFiniteError):
        system.integrate(bad, np.zeros(system.nv))
    bad = q.copy()
    bad[:4] = 1j  # the base's quaternion has no real part
    with pytest.raises(JointError, match="zero norm"):
        system.normalize(bad)
    with pytest.raises(JointError, match="zero norm"):
        system.integrate(bad, np.zeros(system.nv))
