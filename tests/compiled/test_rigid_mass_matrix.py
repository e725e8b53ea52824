"""The mass matrix of rigid trees on ten inertial parameters (sko.engine.mass_matrix) equals the
generic block kernels on the same filled arena, the reference path and Pinocchio's ``crba``; it
takes exactly the systems of library rigid bodies, and a batch equals its states one by one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from sko.engine import use_backend
from sko.engine import crba
from sko import spatial as sp
from sko.bodies import Cylindrical, Fixed, Free, Planar, Prismatic, Revolute, RigidBody, Spherical
from sko.engine import mass_matrix as MM
from sko.examples.bodies import random_system
from sko.systems import MultibodySystem
from sko.engine.joints import HELICAL, PRISMATIC, JointConstants
from sko.engine.layout import Flat
from sko.engine.requests import REQUESTS
from sko.engine.state_kernels import Row
from sko.spatial import plucker, plucker_inverse, rpy_matrix, skew
from tests.compiled.rigid_forests import configurations, example_robots, inertia, rigid_forest
from tests.rigid.random_systems import random_rigid_system


def _kernels(system, q, blank=0.0):
    """``(ℳ by the rigid kernel, ℳ by the generic kernels)`` on one arena filled at ``q``; the
    weights of the bodies on an axis are NaN in the rigid kernel's arena: it takes their poses
    from ``q`` and does not read them. The rigid kernel's ``out`` holds ``blank`` on entry."""
    L = system._engine.layout
    A = L.fill(q[None], np.zeros((1, system.nv)))[0]
    layout, nv = np.array(L.request_layout), system.nv
    rows, reals = L.table(np.float64), L.reals
    M_rigid, M_generic = np.full((nv, nv), blank), np.zeros((nv, nv))
    R, tmp = np.zeros(A.size), np.zeros(36)
    crba.composite_inertias(layout, A, R, tmp)
    crba.mass_matrix(layout, A, R, M_generic, np.zeros(6 * max(nv, 1)), np.zeros(6 * max(nv, 1)))
    for j in range(rows.shape[0]):
        c0 = rows[j, Row.CONSTANTS]
        axis = int(reals[c0 + JointConstants.code]) in (HELICAL, PRISMATIC) and reals[c0 + JointConstants.reverse] == 0
        if axis and layout[j, Flat.PARENT] >= 0:
            A[layout[j, Flat.W]: layout[j, Flat.W] + 36] = np.nan
    MM.rigid_mass_matrix(layout, A, np.full(MM.NODE * len(L.bodies), np.nan), np.full(6 * max(nv, 1), np.nan),
                         M_rigid, rows, reals)
    return M_rigid, M_generic


def _close(a, b, rtol=1e-13):
    assert np.abs(a - b).max(initial=0.0) <= rtol * max(np.abs(b).max(initial=0.0), 1.0)


@njit
def _steps(a, q, e, b, x, m, g, i, out):
    """The four steps of :mod:`sko.engine.mass_matrix` on numbers, in a row of ``out``: the child's
    pose ``(R, p)``, its column ``s`` in the root's frame, its ten parameters there and ``ℛ s``."""
    R, p = MM.child_pose((a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]), (q[0], q[1], q[2]),
                         (e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8]),
                         (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]))
    s = MM.root_column(R, p, (x[0], x[1], x[2], x[3], x[4], x[5]))
    c = MM.root_inertia(R, p, m, (g[0], g[1], g[2]), (i[0], i[1], i[2], i[3], i[4], i[5]))
    F = MM.composite_force(c, s)
    numbers = R + p + s + c + F
    for k in range(len(numbers)):
        out[k] = numbers[k]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_ten_parameter_steps_equal_the_dense_transforms(seed):
    """Each step on numbers against the 6 × 6 Plücker transforms of ``sko.spatial``: a parent at pose
    ``(A, q)`` and a child at ``ᵏX_℘ = rot(E) xlt(r)`` (weight ``φ = (ᵏX_℘)*``) give the child the
    pose whose ``ᵏX_0 = ᵏX_℘ ℘X_0``; a hinge column ``x`` in the root's frame is ``(ᵏX_0)^{-1} x``;
    the body's inertia there, rebuilt from the ten numbers, is ``(ᵏX_0)ᵀ I ᵏX_0``; and the force
    is that inertia times the column."""
    rng = np.random.default_rng(seed)
    A, E = rpy_matrix(*rng.uniform(-np.pi, np.pi, 3)), rpy_matrix(*rng.uniform(-np.pi, np.pi, 3))
    q, r, x = rng.normal(size=3) * 2, rng.normal(size=3), rng.normal(size=6)
    I = inertia(rng)
    m, h, inertia_bar = I[5, 5], np.array([I[2, 4], I[0, 5], I[1, 3]]), I[:3, :3]
    phi = plucker(E, r).T
    out = np.zeros(9 + 3 + 6 + 10 + 6)
    _steps(A.ravel(), q, phi[:3, :3].ravel(), phi[:3, 3:].ravel(), x, m, h,
           inertia_bar[np.triu_indices(3)], out)
    R, p, s, c, F = np.split(out, [9, 12, 18, 28])
    X = plucker(E, r) @ plucker(A.T, q)  # ᵏX_0
    np.testing.assert_allclose(plucker(R.reshape(3, 3).T, p), X, atol=1e-12)
    np.testing.assert_allclose(s, plucker_inverse(X) @ x, atol=1e-12)
    upper = np.zeros((3, 3))
    upper[np.triu_indices(3)] = c[4:]
    H = skew(c[1:4])
    rebuilt = np.block([[upper + np.triu(upper, 1).T, H], [H.T, c[0] * np.eye(3)]])
    np.testing.assert_allclose(rebuilt, X.T @ I @ X, atol=1e-11)
    np.testing.assert_allclose(F, rebuilt @ s, atol=1e-11)


@njit
def _both_columns(a, q, x, E, r, out):
    """:func:`MM.axis_root_column` and :func:`MM.root_column` of ``x`` at the pose ``(a, q)``, then
    :func:`MM.composed_pose` and :func:`MM.child_pose` of a child at ``rot(E) xlt(r)``, in ``out``."""
    R, p = (a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]), (q[0], q[1], q[2])
    column = (x[0], x[1], x[2], x[3], x[4], x[5])
    rows = ((E[0], E[1], E[2]), (E[3], E[4], E[5]), (E[6], E[7], E[8]))
    e = (E[0], E[3], E[6], E[1], E[4], E[7], E[2], E[5], E[8])
    b = (E[2] * r[1] - E[1] * r[2], E[5] * r[1] - E[4] * r[2], E[8] * r[1] - E[7] * r[2],
         E[0] * r[2] - E[2] * r[0], E[3] * r[2] - E[5] * r[0], E[6] * r[2] - E[8] * r[0],
         E[1] * r[0] - E[0] * r[1], E[4] * r[0] - E[3] * r[1], E[7] * r[0] - E[6] * r[1])  # Bᵀ = (−E r×)ᵀ
    Rc, pc = MM.composed_pose(R, p, rows, (r[0], r[1], r[2]))
    Rw, pw = MM.child_pose(R, p, e, b)
    numbers = MM.axis_root_column(R, p, column) + MM.root_column(R, p, column) + Rc + pc + Rw + pw
    for k in range(len(numbers)):
        out[k] = numbers[k]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["revolute", "prismatic", "helical"]), st.integers(-1, 2),
       st.sampled_from([-1.0, 1.0]))
def test_the_shortcuts_of_a_body_on_an_axis_equal_the_general_steps(seed, kind, k, sign):
    """A column with a zero half, about a coordinate axis ``±e_k`` or any unit axis (``k = −1``),
    in the root's frame by :func:`MM.axis_root_column` equals :func:`MM.root_column`'s, and the
    pose composed from ``(E, r)`` the pose from the weight, to rounding."""
    rng = np.random.default_rng(seed)
    a, E = rpy_matrix(*rng.uniform(-np.pi, np.pi, 3)), rpy_matrix(*rng.uniform(-np.pi, np.pi, 3))
    q, r = rng.normal(size=3) * 2, rng.normal(size=3)
    axis = np.eye(3)[k] * sign if k >= 0 else rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    x = {"revolute": np.r_[axis, 0.0, 0.0, 0.0], "prismatic": np.r_[0.0, 0.0, 0.0, axis],
         "helical": np.r_[axis, 0.3 * axis]}[kind]
    out = np.zeros(36)
    _both_columns(a.ravel(), q, x, E.ravel(), r, out)
    shortcut, general, composed, weighted = out[:6], out[6:12], out[12:24], out[24:]
    np.testing.assert_allclose(shortcut, general, rtol=0, atol=4e-15 * np.abs(general).max())
    np.testing.assert_allclose(composed, weighted, rtol=0, atol=4e-15 * np.abs(weighted).max())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_rigid_kernel_equals_generic_and_reference(seed, library_forest):
    system = rigid_forest(seed) if library_forest else random_rigid_system(seed)
    taken = MM.applies(system._engine.layout)
    for q in configurations(system, seed, 3):
        M = system.mass_matrix(q)
        with use_backend("reference"):
            _close(M, system.mass_matrix(q), 1e-12)
        np.testing.assert_array_equal(M, M.T)
        if taken:
            M_rigid, M_generic = _kernels(system, q)
            _close(M_rigid, M)  # the request fills the arena for ℳ alone: the same numbers to rounding
            _close(M_rigid, M_generic)


@pytest.mark.parametrize("seed", range(6))
def test_library_rigid_forests_take_the_rigid_kernel(seed):
    system = rigid_forest(seed)
    assert MM.applies(system._engine.layout)
    w = system._engine._request_vector(REQUESTS["mass_matrix"], np.dtype(np.float64))
    assert w.view(np.int64)[0] != REQUESTS["mass_matrix"].address(np.float64)  # the rigid variant's address


def test_other_body_types_keep_the_generic_kernel():
    """Rotor links and flexible bodies among rigid ones: the generic kernel, still equal to the reference."""
    for seed in range(6):
        system = random_system(seed)
        if MM.applies(system._engine.layout):
            continue
        w = system._engine._request_vector(REQUESTS["mass_matrix"], np.dtype(np.float64))
        assert w.view(np.int64)[0] == REQUESTS["mass_matrix"].address(np.float64)
        q = system.random_configuration(np.random.default_rng(seed))
        with use_backend("reference"):
            _close(system.mass_matrix(q), system.mass_matrix(q), 1e-12)
    assert not all(MM.applies(random_system(seed)._engine.layout) for seed in range(6))


@pytest.mark.parametrize("seed", range(4))
def test_batch_equals_single_calls(seed):
    """A batch (in the lanes, sko.engine.lanes: the same ten-parameter steps on four states at
    once) equals the single calls to 1e-13 relative to the largest entry."""
    system = rigid_forest(seed)
    Q = configurations(system, seed, 37)  # more than a chunk of the parallel batch
    batch = system.mass_matrix(Q)
    for s in range(Q.shape[0]):
        single = system.mass_matrix(Q[s])
        np.testing.assert_allclose(batch[s], single, rtol=0, atol=1e-13 * np.abs(single).max())


def test_complex_stepconfigurations():
    """complex128 states keep the generic kernel (the rigid one is compiled for float64 alone),
    equal to the reference path."""
    system = rigid_forest(3)
    w = system._engine._request_vector(REQUESTS["mass_matrix"], np.dtype(np.complex128))
    assert w.view(np.int64)[0] == REQUESTS["mass_matrix"].address(np.complex128)
    rng = np.random.default_rng(3)
    q = system.random_configuration(rng) + 1e-20j * rng.normal(size=system.nq)
    M = system.mass_matrix(q)
    assert M.dtype == np.complex128
    with use_backend("reference"):
        M_ref = system.mass_matrix(q)
    _close(M.real, M_ref.real, 1e-12)
    _close(M.imag * 1e20, M_ref.imag * 1e20, 1e-9)


def test_example_robots_agree_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    from sko.interop import PinocchioMap

    for path, floating, system in example_robots():
        model = pin.buildModelFromUrdf(str(path), *((pin.JointModelFreeFlyer(),) if floating else ()))
        assert MM.applies(system._engine.layout)
        data, cmap = model.createData(), PinocchioMap(system, model)
        for q in configurations(system, 0, 5):
            M = pin.crba(model, data, cmap.q(q))
            _close(cmap.matrix(system.mass_matrix(q)), np.triu(M) + np.triu(M, 1).T)


def test_an_inertia_off_its_ten_parameters_takes_the_generic_kernel():
    """A physical inertia is accepted to a relative 1e-9 of its rigid structure; the ten
    parameters would drop the difference, so such a system keeps the generic kernels."""
    rng = np.random.default_rng(5)
    root = inertia(rng)
    exact = [RigidBody("a", None, Free(), root), RigidBody("b", "a", Revolute([0, 0, 1]), inertia(rng))]
    assert MM.applies(MultibodySystem(exact)._engine.layout)
    off = root.copy()
    off[5, 5] *= 1 + 1e-11
    system = MultibodySystem([RigidBody("a", None, Free(), off), exact[1]])
    assert not MM.applies(system._engine.layout)
    q = system.random_configuration(rng)
    M = system.mass_matrix(q)
    with use_backend("reference"):
        _close(M, system.mass_matrix(q), 1e-12)


def _listed(bodies, order, gravity) -> MultibodySystem:
    """The system of ``bodies`` stacked in ``order`` (positions in ``bodies``)."""
    return MultibodySystem([bodies[i] for i in order], gravity=gravity)


def _on_one_path(system) -> np.ndarray:
    """``nv × nv``: whether the bodies of the two coordinates are one the ancestor of the other
    (or the same body), the entries of ℳ that may be nonzero."""
    owner = np.empty(system.nv, dtype=object)
    for k in system.bodies:
        owner[system.dof_slices[k]] = k

    def above(a, b):  # a is b or an ancestor of b
        while b is not None and b != a:
            b = system.body(b).parent
        return b == a

    return np.array([[above(a, b) or above(b, a) for b in owner] for a in owner], dtype=bool).reshape(system.nv, system.nv)


def _check_every_entry(system, q):
    """ℳ equals the reference path; the rigid kernel writes exactly the pairs on one path (``out``
    NaN on entry: every other entry keeps it) with the generic kernels' numbers."""
    M = system.mass_matrix(q)
    with use_backend("reference"):
        _close(M, system.mass_matrix(q), 1e-12)
    np.testing.assert_array_equal(M, M.T)
    related = _on_one_path(system)
    assert not M[~related].any()
    M_rigid, M_generic = _kernels(system, q, blank=np.nan)
    np.testing.assert_array_equal(np.isfinite(M_rigid), related)
    _close(np.where(related, M_rigid, 0.0), M_generic)
    _close(M_rigid[related], M[related])


def _placed(rng):
    return sp.pose_transform(rng.normal(size=3), rng.uniform(-np.pi, np.pi, 3))


def _structures():
    """Hand-made trees (``name, bodies`` parents first): zero-dof bodies at a root and between
    moving ones, multi-dof joints at roots and inside, reversed joints, a forest."""
    rng = np.random.default_rng(11)

    def body(name, parent, joint):
        return RigidBody(name, parent, joint, inertia(rng), _placed(rng))

    return [
        ("chain under a fixed root", [body("r", None, Fixed()), body("a", "r", Revolute([0, 0, 1])),
                                      body("b", "a", Spherical()), body("c", "b", Fixed()), body("d", "c", Fixed()),
                                      body("e", "d", Prismatic([1, 0, 0])), body("f", "e", Revolute([0, 1, 0]))]),
        ("branches through fixed bodies", [body("r", None, Free()), body("z", "r", Fixed()),
                                           body("a", "z", Cylindrical([0.3, 0.4, 0.5])), body("y", "a", Fixed()),
                                           body("b", "y", Planar([1.0, 0.2, 0.0])), body("c", "z", Revolute([0, 0, 1]).reversed()),
                                           body("d", "c", Spherical().reversed()), body("e", "y", Free()),
                                           body("w", "e", Fixed())]),
        ("forest of every kind", [body("p", None, Planar([0, 0, 1])), body("s", None, Spherical()),
                                  body("x", None, Fixed()), body("p1", "p", Revolute([1, 0, 0])),
                                  body("p2", "p1", Cylindrical([0, 1, 0])), body("s1", "s", Free().reversed()),
                                  body("x1", "x", Fixed()), body("x2", "x1", Spherical()), body("x3", "x", Prismatic([0, 0, 1])),
                                  body("s2", "s1", Fixed()), body("s3", "s2", Revolute([0, 1, 0]))]),
    ]


@pytest.mark.parametrize("name, bodies", _structures(), ids=[name for name, _ in _structures()])
@pytest.mark.parametrize("order", ["parents first", "children first", "shuffled"])
def test_every_entry_whatever_the_numbering_of_the_coordinates(name, bodies, order):
    """Zero-dof bodies at a root and between moving ones, multi-dof and reversed joints, listed
    parents first (one run of columns per chain), children first (every body a run of its own)
    or shuffled: ℳ equals the reference path and the generic kernels, the rigid kernel writes
    every pair of coordinates on one path and nothing else, and ℳ is the same matrix for every
    stacking order (permuted)."""
    rng = np.random.default_rng(len(bodies))
    positions = {"parents first": range(len(bodies)), "children first": range(len(bodies) - 1, -1, -1),
                 "shuffled": rng.permutation(len(bodies))}[order]
    first, system = _listed(bodies, range(len(bodies)), [0.0, 0.0, -9.81]), _listed(bodies, positions, [0.0, 0.0, -9.81])
    assert MM.applies(system._engine.layout)
    columns = np.concatenate([np.arange(system.nv)[system.dof_slices[k]] for k in first.bodies])
    for q0 in configurations(first, len(bodies), 3):
        q = np.zeros(system.nq)
        for k in first.bodies:
            q[system.q_slices[k]] = q0[first.q_slices[k]]
        _check_every_entry(system, q)
        _close(system.mass_matrix(q)[np.ix_(columns, columns)], first.mass_matrix(q0))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_a_forest_in_any_stacking_order(seed):
    """A random forest of every library joint kind (zero-dof bodies anywhere) stacked in a random
    order, children often before their parents: every entry as above, and a batch equals its
    states one by one."""
    system = rigid_forest(seed)
    order = np.random.default_rng(seed).permutation(len(system.bodies))
    shuffled = _listed([system.body(k) for k in system.bodies], order, system.gravity)
    Q = configurations(shuffled, seed, 5)
    for q in Q:
        _check_every_entry(shuffled, q)
    batch = shuffled.mass_matrix(Q)
    for s in range(Q.shape[0]):
        single = shuffled.mass_matrix(Q[s])
        np.testing.assert_allclose(batch[s], single, rtol=0, atol=1e-13 * max(np.abs(single).max(initial=0.0), 1.0))
