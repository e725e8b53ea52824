"""Spatial algebra identities (RIGID.md, *Spatial algebra*)."""

import numpy as np
import sympy
from hypothesis import given
from hypothesis import strategies as st

from sko import spatial as sp
from tests.util import assert_close

seeds = st.integers(0, 2**32 - 1)


def random_transform(rng):
    return sp.plucker_from_pose(sp.quaternion_matrix(rng.normal(size=4)), rng.normal(size=3))


def random_inertia(rng):
    A = rng.normal(size=(3, 3))
    return sp.spatial_inertia(rng.uniform(0.5, 2.0), rng.normal(size=3), A @ A.T + 0.1 * np.eye(3))


@given(seeds)
def test_plucker_inverse_and_composition(seed):
    rng = np.random.default_rng(seed)
    X, Y = random_transform(rng), random_transform(rng)
    assert_close(sp.plucker_inverse(X) @ X, np.eye(6), 1e-12)
    assert_close(sp.plucker_inverse(X), np.linalg.inv(X), 1e-12)
    # ᴮX_A = rot(E) xlt(r): the parts are recovered and the product is again a Plücker transform
    E, r = sp.plucker_rotation(X), sp.plucker_translation(X)
    assert_close(sp.rot(E) @ sp.xlt(r), X, 1e-12)
    XY = X @ Y
    assert_close(sp.plucker(sp.plucker_rotation(XY), sp.plucker_translation(XY)), XY, 1e-12)


@given(seeds)
def test_force_transform_preserves_power(seed):
    rng = np.random.default_rng(seed)
    X = random_transform(rng)
    v, f = rng.normal(size=6), rng.normal(size=6)
    assert_close(sp.force_transform(X), np.linalg.inv(X).T, 1e-12)
    assert np.isclose((X @ v) @ (sp.force_transform(X) @ f), v @ f, rtol=1e-12, atol=1e-12 * np.abs(v).max() * np.abs(f).max() * 50)


@given(seeds)
def test_cross_products(seed):
    rng = np.random.default_rng(seed)
    X = random_transform(rng)
    v, m, f = rng.normal(size=(3, 6))
    # crm(v) m is the derivative of m moving with velocity v; crf = −crmᵀ; both transform covariantly
    assert_close(sp.crm(v) @ v, np.zeros(6), scale=np.abs(v).max() ** 2 * 1e-15 * 10 + 1e-300, rtol=1.0)
    assert_close(sp.crf(v), -sp.crm(v).T, 0)
    assert_close(sp.crm(X @ v), X @ sp.crm(v) @ np.linalg.inv(X), 1e-11)
    assert_close(sp.crf(X @ v), sp.force_transform(X) @ sp.crf(v) @ np.linalg.inv(sp.force_transform(X)), 1e-11)
    # scalar triple: (v × m) · f = −m · (v ×* f)
    assert np.isclose((sp.crm(v) @ m) @ f, -(m @ (sp.crf(v) @ f)))
    # the 3-D cross product matrix
    assert_close(sp.skew(v[:3]) @ m[:3], np.cross(v[:3], m[:3]), 1e-14)


@given(seeds)
def test_spatial_inertia(seed):
    rng = np.random.default_rng(seed)
    m, c = rng.uniform(0.5, 2), rng.normal(size=3)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T + 0.1 * np.eye(3)
    I6 = sp.spatial_inertia(m, c, Ic)
    assert np.linalg.eigvalsh(I6).min() > 0
    m2, c2, Ic2 = sp.inertia_parameters(I6)
    assert np.isclose(m2, m) and np.allclose(c2, c) and np.allclose(Ic2, Ic)
    # kinetic energy from the particle picture: ½ m |v_c|² + ½ ωᵀ I_c ω with v_c = v + ω × c
    v = rng.normal(size=6)
    vc = v[3:] + np.cross(v[:3], c)
    assert np.isclose(v @ I6 @ v / 2, m * vc @ vc / 2 + v[:3] @ Ic @ v[:3] / 2)
    # the inertia about another frame: energy is frame-independent
    X = random_transform(rng)
    I_B = sp.transform_inertia(X, I6)
    assert np.isclose((X @ v) @ I_B @ (X @ v), v @ I6 @ v)


def test_featherstone_coordinate_transforms():
    t = 0.3
    c, s = np.cos(t), np.sin(t)
    assert_close(sp.rx(t), [[1, 0, 0], [0, c, s], [0, -s, c]], 1e-15)
    assert_close(sp.ry(t), [[c, 0, -s], [0, 1, 0], [s, 0, c]], 1e-15)
    assert_close(sp.rz(t), [[c, s, 0], [-s, c, 0], [0, 0, 1]], 1e-15)
    assert_close(sp.axis_angle_matrix([0, 0, 1], t), sp.rotation_z(t), 1e-15)
    u = np.array([1.0, 2.0, 2.0]) / 3
    R = sp.axis_angle_matrix(u, t)
    assert_close(R @ u, u, 1e-15)
    assert_close(R.T @ R, np.eye(3), 1e-15)


@given(seeds)
def test_rpy_and_quaternions(seed):
    rng = np.random.default_rng(seed)
    roll, pitch, yaw = rng.uniform(-3, 3), rng.uniform(-1.5, 1.5), rng.uniform(-3, 3)
    R = sp.rpy_matrix(roll, pitch, yaw)
    assert_close(R, sp.rotation_z(yaw) @ sp.rotation_y(pitch) @ sp.rotation_x(roll), 1e-15)
    assert_close(sp.rpy_matrix(*sp.matrix_rpy(R)), R, 1e-12)
    q = sp.matrix_quaternion(R)
    assert np.isclose(np.linalg.norm(q), 1) and q[0] >= 0
    assert_close(sp.quaternion_matrix(q), R, 1e-12)
    assert_close(sp.quaternion_matrix(2.5 * q), R, 1e-12)  # non-unit: the rotation of q/‖q‖
    p = sp.matrix_quaternion(sp.rpy_matrix(*rng.normal(size=3)))
    assert_close(sp.quaternion_matrix(sp.quaternion_multiply(p, q)), sp.quaternion_matrix(p) @ R, 1e-12)
    w = rng.normal(size=3)
    assert_close(sp.quaternion_matrix(sp.quaternion_exp(w)), sp.axis_angle_matrix(w / np.linalg.norm(w), np.linalg.norm(w)), 1e-12)


@given(seeds)
def test_quaternion_rate_is_the_body_angular_velocity(seed):
    """Eq. 4.13: q̇ = ½ q ⊗ (0, ω) with Ṙ = R ω× (ω in the rotated frame)."""
    rng = np.random.default_rng(seed)
    q = sp.quaternion_normalize(rng.normal(size=4))
    w = rng.normal(size=3)
    qd = sp.quaternion_rate(q, w)
    h = 1e-6
    Rdot = (sp.quaternion_matrix(q + h * qd) - sp.quaternion_matrix(q - h * qd)) / (2 * h)
    assert_close(Rdot, sp.quaternion_matrix(q) @ sp.skew(w), 1e-8)
    assert abs(q @ qd) < 1e-14  # the unit sphere is invariant


def test_generic_scalars_flow_through():
    t = sympy.Symbol("t")
    X = sp.rot(sp.rz(t)) @ sp.xlt(np.array([t, 0, 0], dtype=object))
    assert X.dtype == object
    assert sympy.simplify(X[3, 2] - t * sympy.sin(t)) == 0 and sympy.simplify(X[5, 1] + t) == 0
    Xi = sp.plucker_inverse(X)
    residual = np.vectorize(sympy.simplify)(Xi @ X - np.eye(6, dtype=int))
    assert all(e == 0 for e in residual.flat)
    # complex step: d/dt of rz(t) through the imaginary part
    h = 1e-30
    dE = sp.rz(0.3 + 1j * h).imag / h
    assert_close(dE, -sp.skew([0, 0, 1]) @ sp.rz(0.3), 1e-14)


def test_pose_transform_is_urdf_origin():
    X = sp.pose_transform([1.0, 2.0, 3.0], [0.1, 0.2, 0.3])
    assert_close(sp.plucker_translation(X), [1, 2, 3], 1e-15)
    assert_close(sp.plucker_rotation(X).T, sp.rpy_matrix(0.1, 0.2, 0.3), 1e-15)
