"""The kernel toolkit (sko.engine.toolkit): every spatial-algebra function equals its numpy twin in
sko.spatial on random inputs, float64 and complex128; and a body type written outside the
package, whose state kernel is built from the toolkit, hangs from library revolute and free
joints (and a joint type of its own) with the dynamics of the library's rigid body."""

from __future__ import annotations

import numpy as np
import pytest

from sko import spatial as sp
from sko.engine import use_backend
from sko.bodies import Free, Revolute, RigidBody
from sko.engine import toolkit as tk
from sko.bodies.contract import CompiledState
from sko.engine.state_kernels import Row, Terms, record, state_kernel, views
from sko.systems import MultibodySystem
from tests.compiled.user_joints import Universal

DTYPES = [np.float64, np.complex128]


def _random(rng, shape, dtype):
    x = rng.normal(size=shape)
    return x + 1j * rng.normal(size=shape) if dtype is np.complex128 else x


def _transform(rng, dtype):
    """A random ``X = rot(E) xlt(r)`` (and its ``E``); complex: ``r`` complex (analytic in it)."""
    E = sp.quaternion_matrix(rng.normal(size=4)).T.astype(dtype)
    return sp.plucker(E, _random(rng, 3, dtype)), E


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_products_and_bias(dtype):
    rng = np.random.default_rng(0)
    for _ in range(5):
        v, x, w = _random(rng, 6, dtype), _random(rng, 6, dtype), _random(rng, 3, dtype)
        out, W = np.zeros(6, dtype), np.zeros((3, 3), dtype)
        tk.motion_cross(v, x, out)
        np.testing.assert_allclose(out, sp.motion_cross(v, x), atol=1e-13)
        tk.force_cross(v, x, out)
        np.testing.assert_allclose(out, sp.force_cross(v, x), atol=1e-13)
        tk.skew(w, W)
        np.testing.assert_allclose(W, sp.skew(w), atol=0)
        c = np.zeros(3, dtype)
        tk.cross(w, x[:3], c)
        np.testing.assert_allclose(c, np.cross(w, x[:3]), atol=1e-13)
        I = sp.spatial_inertia(rng.uniform(0.5, 2), rng.normal(size=3), np.eye(3)) + 0 * v[0]
        tk.bias_force(I, v, out)
        np.testing.assert_allclose(out, sp.force_cross(v, I @ v), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_plucker_transforms_and_inertias(dtype):
    rng = np.random.default_rng(1)
    for _ in range(5):
        X, E = _transform(rng, dtype)
        r = sp.plucker_translation(X)
        Y = np.zeros((6, 6), dtype)
        tk.plucker(E, r, Y)
        np.testing.assert_allclose(Y, X, atol=1e-13)
        tk.plucker_inverse(X, Y)
        np.testing.assert_allclose(Y, sp.plucker_inverse(X), atol=0)
        np.testing.assert_allclose(Y @ X, np.eye(6), atol=1e-12)
        m, f, out = _random(rng, 6, dtype), _random(rng, 6, dtype), np.zeros(6, dtype)
        tk.transform_motion(X, m, out)
        np.testing.assert_allclose(out, X @ m, atol=1e-12)
        tk.transform_force(X, f, out)
        np.testing.assert_allclose(out, sp.force_transform(X) @ f, atol=1e-12)
        I = sp.spatial_inertia(rng.uniform(0.5, 2), rng.normal(size=3), np.diag(rng.uniform(0.1, 1, 3))) + 0 * m[0]
        C = np.zeros((6, 6), dtype)
        tk.inertia_congruence(X, I, C)
        np.testing.assert_allclose(C, X.T @ I @ X, atol=1e-11)
        tk.transform_inertia(X, I, C)
        np.testing.assert_allclose(C, sp.transform_inertia(X, I), atol=1e-11)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rotations(dtype):
    rng = np.random.default_rng(2)
    for _ in range(5):
        axis = rng.normal(size=3)
        axis = axis / np.linalg.norm(axis)
        angle, q = _random(rng, 1, dtype)[0], _random(rng, 4, dtype)
        R = np.zeros((3, 3), dtype)
        tk.rotation_from_axis_angle(axis, angle, R)
        np.testing.assert_allclose(R, sp.axis_angle_matrix(axis, angle), atol=1e-13)
        tk.rotation_from_quaternion(q, R)
        if dtype is np.float64:
            np.testing.assert_allclose(R, sp.quaternion_matrix(q), atol=1e-13)
        else:  # analytic in q: the complex step of the real rotation
            d, h = q.imag, 1e-20
            tk.rotation_from_quaternion(q.real + 1j * h * d, R)
            step = (sp.quaternion_matrix(q.real + 1e-6 * d) - sp.quaternion_matrix(q.real - 1e-6 * d)) / 2e-6
            np.testing.assert_allclose(R.real, sp.quaternion_matrix(q.real), atol=1e-13)
            np.testing.assert_allclose(R.imag / h, step, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_library_joint_kinematics(dtype):
    rng = np.random.default_rng(3)
    for joint in (Revolute(rng.normal(size=3)), Free(), Universal()):
        code, reverse, p = tk.pack_joint(joint)
        q, v = joint.random(rng).astype(dtype), rng.normal(size=joint.nv).astype(dtype)
        if dtype is np.complex128:
            q, v = q + 1e-3j * rng.normal(size=q.size), v + 1e-3j * rng.normal(size=v.size)
        X, S, c = np.zeros((6, 6), dtype), np.zeros((6, 6), dtype), np.zeros(6, dtype)
        assert tk.joint_kinematics(code, reverse, p, q, v, X, S, c)
        ref = joint.kinematics(q, v)
        np.testing.assert_allclose(X, ref.X, atol=1e-13)
        np.testing.assert_allclose(S[:, :joint.nv], ref.S, atol=1e-13)
        np.testing.assert_allclose(c, ref.c, atol=1e-13)


# ---------------------------------------------------------------------------- a body type on the toolkit
@state_kernel(own_frame_identity=True, name="toolkit rigid body")
def toolkit_rigid(arena, row, reals, terms, constants):
    """A rigid body from the toolkit: its constants are :func:`~sko.engine.toolkit.hinge_constants`,
    then the inertia (row-major), mass and centre of mass; it writes everything."""
    c0, wo = row[Row.CONSTANTS], row[Row.SCRATCH]
    if not tk.hinge(arena, reals, c0, row[Row.Q], row[Row.V], row[Row.INBOARD], wo, Terms.POSE):
        return False
    c, q, v, inboard, out, scratch = views(arena, row, reals)
    n = c.shape[0]
    I = c[n - 40: n - 4].reshape((6, 6))
    mass, com = c[n - 4], c[n - 3:]
    X = scratch[tk.HingeWork.X: tk.HingeWork.X + 36].reshape((6, 6))
    S = scratch[tk.HingeWork.S: tk.HingeWork.S + 36].reshape((6, 6))
    velocity = scratch[tk.HingeWork.v: tk.HingeWork.v + 6]
    R = scratch[tk.HingeWork.rotation: tk.HingeWork.rotation + 9].reshape((3, 3))
    p = scratch[tk.HingeWork.position: tk.HingeWork.position + 3]
    for i in range(6):
        out.a[i] = scratch[tk.HingeWork.acc + i]
        out.V[i] = velocity[i]
        for j in range(6):
            out.E[i, j] = X[i, j]
            out.M[i, j] = I[i, j]
        for j in range(v.shape[0]):
            out.H[j, i] = S[i, j]
    tk.bias_force(I, velocity, out.b)
    own = record(out.records, 0)
    height = 0 * velocity[0]
    for i in range(3):
        own.position[i] = p[i]
        world = p[i]
        for j in range(3):
            own.rotation[i, j] = R[i, j]
            world += R[i, j] * com[j]
        height += reals[i] * world
    out.potential[0] = -mass * height
    for i in range(6):
        own.gamma[i] = 0
        own.velocity[i] = velocity[i]
        for j in range(6):
            own.Gamma[i, j] = 1.0 if i == j else 0.0
    return True


class ToolkitRigid(RigidBody):
    """The library's rigid body (its Python state), with a compiled state of its own kernel."""

    def compiled_state(self):
        constants = np.concatenate([tk.hinge_constants(self.joint, self.placement), self.inertia.ravel(),
                                    [self._mass], self._com])
        return CompiledState(toolkit_rigid, constants, tk.HINGE_SCRATCH)


def _chain(kind, rng_seed: int = 4):
    rng = np.random.default_rng(rng_seed)
    joints = [Free(), Revolute(rng.normal(size=3)), Universal(), Revolute(rng.normal(size=3)).reversed()]
    bodies, parent = [], None
    for i, joint in enumerate(joints):
        A = rng.normal(size=(3, 3))
        second = A @ A.T * 0.05 + 0.01 * np.eye(3)  # ∫ρ r rᵀ: a physical inertia
        inertia = sp.spatial_inertia(rng.uniform(0.5, 2), rng.normal(size=3) * 0.2, np.trace(second) * np.eye(3) - second)
        placement = sp.pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3))
        bodies.append(kind(f"b{i}", parent, joint, inertia, placement=placement))
        parent = f"b{i}"
    return MultibodySystem(bodies, gravity=[0.0, 0.0, -9.81])


def test_a_body_type_from_the_toolkit_hangs_from_any_joint():
    mine, library = _chain(ToolkitRigid), _chain(RigidBody)
    assert mine._engine.layout.all_compiled
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = mine.random_configuration(rng)
        v, tau = rng.normal(size=(2, mine.nv))
        with use_backend("reference"):
            reference = (library.forward_dynamics(q, v, tau), library.inverse_dynamics(q, v, tau),
                         library.mass_matrix(q), library.kinetic_energy(q, v), library.potential_energy(q))
        compiled = (mine.forward_dynamics(q, v, tau), mine.inverse_dynamics(q, v, tau), mine.mass_matrix(q),
                    mine.kinetic_energy(q, v), mine.potential_energy(q))
        for x, y in zip(compiled, reference):
            np.testing.assert_allclose(x, y, rtol=1e-11, atol=1e-11)
