"""Centroidal dynamics of rigid trees on ten inertial parameters (sko.engine.rigid_centroidal,
CENTROIDAL.md §5) against the generic kernels of sko.engine.centroidal on the same system, the
reference path and Pinocchio; which systems take which kernel (Request.rigid); a batch equals
its states one by one."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from sko import spatial as sp
from sko.bodies import Free, Revolute, RigidBody
from sko.engine import use_backend
from sko.engine import mass_matrix as MM
from sko.engine import requests as rq
from sko.engine.centroidal import Result
from sko.engine.rigid_centroidal import inertia_rate
from sko.examples.bodies import flexible_examples
from sko.systems import MultibodySystem
from sko.systems.centroidal import momentum_matrix_rate_by_complex_step
from tests.compiled.rigid_forests import JOINTS, configurations, inertia
from tests.embedding.random_clusters import random_clustered_system

NAMES = ("centroidal_terms", "centroidal_momentum_matrix_rate")
#: the library joints of constant S (the rate's recursion takes them): revolute, prismatic,
#: helical, planar, ball, free, fixed
CONSTANT = JOINTS[:7]


def _close(a, b, rtol):
    scale = max(np.abs(b).max(initial=0.0), 1.0)
    assert np.abs(a - b).max(initial=0.0) <= rtol * scale, np.abs(a - b).max() / scale


def shuffled_forest(seed: int, constant_motion: bool, offset: float = 0.0) -> MultibodySystem:
    """A random forest of library rigid bodies (one to three trees, floating bases among them),
    listed in a random order under names that do not follow it; with ``constant_motion``, joints
    of constant ``S`` only, else reversed revolute joints too; ``offset`` moves every tree's root
    by ``(offset, offset, offset)`` in the world (the same forest, translated)."""
    rng = np.random.default_rng(seed)
    joints = CONSTANT if constant_motion else JOINTS
    n = int(rng.integers(1, 10))
    names = [f"n{int(k)}" for k in rng.permutation(100)[:n]]
    roots = int(rng.integers(1, min(3, n) + 1))
    bodies = []
    for i, name in enumerate(names):
        parent = None if i < roots else names[int(rng.integers(i))]
        position = rng.normal(size=3) * 2.0 + (offset if parent is None else 0.0)
        placement = sp.pose_transform(position, rng.uniform(-np.pi, np.pi, 3))
        bodies.append(RigidBody(name, parent, joints[int(rng.integers(len(joints)))](rng), inertia(rng), placement))
    return MultibodySystem([bodies[int(k)] for k in rng.permutation(n)], gravity=rng.normal(size=3))


def _kernel(system, name: str, q, v, rigid: bool) -> np.ndarray:
    """Request ``name`` at one state by its rigid kernel or its generic one."""
    layout, request = system._engine.layout, rq.REQUESTS[name]
    if not rigid:
        request = dataclasses.replace(request, rigid=None)
    shape = request.shape(rq.sizes(layout))
    out = np.zeros(int(np.prod(shape)))  # zeroed, as the engine passes it
    status = rq.evaluate_one(rq.request_vector(request, layout, np.float64), q, v, np.zeros(0), out)
    assert status == -1
    return out.reshape(shape)


@njit
def _rate(c, v, out):
    h, i = inertia_rate((c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]),
                        (v[0], v[1], v[2], v[3], v[4], v[5]))
    numbers = h + i
    for k in range(9):
        out[k] = numbers[k]


def _rigid_inertia(c):
    """The 6 × 6 ``[[Ī, h×], [h×*, m 1]]`` of ten numbers (``m``, ``h``, ``Ī``'s upper triangle)."""
    upper = np.zeros((3, 3))
    upper[np.triu_indices(3)] = c[4:]
    return np.block([[upper + np.triu(upper, 1).T, sp.skew(c[1:4])], [sp.skew(c[1:4]).T, c[0] * np.eye(3)]])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_inertia_rate_is_the_dense_one(seed):
    """Eq. 9 is ``v ×* ℐ − ℐ v×`` with the mass's rate zero."""
    rng = np.random.default_rng(seed)
    X = sp.plucker(sp.rpy_matrix(*rng.uniform(-np.pi, np.pi, 3)), rng.normal(size=3))
    I = X.T @ inertia(rng) @ X  # a rigid inertia about another point, in other axes
    I = (I + I.T) / 2
    c = np.concatenate([[I[5, 5]], [I[2, 4], I[0, 5], I[1, 3]], I[:3, :3][np.triu_indices(3)]])
    v, out = rng.normal(size=6), np.zeros(9)
    _rate(c, v, out)
    expected = sp.crf(v) @ I - I @ sp.crm(v)
    np.testing.assert_allclose(_rigid_inertia(np.concatenate([[0.0], out])), expected, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_rigid_kernels_equal_the_generic_kernels_and_the_reference(seed, constant_motion):
    """On random forests (floating bases, fixed bodies, names in no order), the rigid kernels equal
    the generic kernels on the same system to 1e-13 and the reference path to 1e-12; the rate where
    its recursion applies (joints of constant ``S``)."""
    system = shuffled_forest(seed, constant_motion)
    assert rq.takes_rigid(rq.REQUESTS["centroidal_terms"], system._engine.layout, np.float64)
    rng = np.random.default_rng(seed)
    for q in configurations(system, seed, 2):
        v = rng.normal(size=system.nv)
        for name in NAMES[:1 + system._compiled_derivatives]:
            rigid = _kernel(system, name, q, v, True)
            _close(rigid, _kernel(system, name, q, v, False), 1e-13)
            out = getattr(system, name)(q, v)
            _close(out, rigid, 0.0)  # the system's method takes the rigid kernel
            with use_backend("reference"):
                _close(out, getattr(system, name)(q, v), 1e-12 if name == NAMES[0] else 1e-10)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_rate_against_the_complex_step(seed):
    """The rigid rate against the complex-step derivative of ``A_G`` (which runs the generic
    kernel in complex128)."""
    system = shuffled_forest(seed, True)
    rng = np.random.default_rng(seed)
    q, v = system.random_configuration(rng), rng.normal(size=system.nv)
    _close(system.centroidal_momentum_matrix_rate(q, v), momentum_matrix_rate_by_complex_step(system, q, v), 1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("rigid", [True, False], ids=["rigid kernels", "generic kernels"])
def test_a_translated_forest_keeps_its_centroidal_terms(seed, rigid):
    """Moved by 10⁴ in the world, a forest keeps ``A_G``, ``I_G``, ``h_G`` and ``Ȧ_G`` (taken about its
    centre of mass) and its centre of mass moves by as much: the rigid and the generic kernels lose
    digits as the system's size, not as the distance from the world origin (about the origin, the
    terms in ``|p|²`` cost 4e-8 relative here)."""
    d = 1e4
    near, far = shuffled_forest(seed, True), shuffled_forest(seed, True, d)
    rng = np.random.default_rng(seed)
    q, v = near.random_configuration(rng), rng.normal(size=near.nv)
    for name in NAMES[:1 + near._compiled_derivatives]:
        a, b = _kernel(near, name, q, v, rigid), _kernel(far, name, q, v, rigid)
        if name == NAMES[0]:
            centre = near.nv + Result.center  # (c, m, 0, 0)
            _close(b[:3, centre], a[:3, centre] + d, 1e-12 * d)
            a, b = a[:, :centre], b[:, :centre]
        _close(b, a, 1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_batch_equals_single_calls(seed):
    """A batch (more states than a chunk of the parallel batch) runs the rigid kernel state by
    state: each state's result is its single call's, bit for bit."""
    system = shuffled_forest(seed, True)
    Q = configurations(system, seed, 37)
    V = np.random.default_rng(seed).normal(size=(37, system.nv))
    terms, rate = system.centroidal_terms(Q, V), system.centroidal_momentum_matrix_rate(Q, V)
    for s in range(Q.shape[0]):
        np.testing.assert_array_equal(terms[s], system.centroidal_terms(Q[s], V[s]))
        np.testing.assert_array_equal(rate[s], system.centroidal_momentum_matrix_rate(Q[s], V[s]))


def test_which_kernel_a_request_takes():
    """float64 states of library rigid bodies take the rigid kernels, complex128 states and other
    body types (flexible, clustered) the generic ones; no request is chosen by its name."""
    rigid, other = shuffled_forest(1, True), flexible_examples()["flexible-spacecraft"]()
    builder, theta0 = random_clustered_system(0)
    clustered = builder.build(initial=theta0)
    chosen = [name for name, r in rq.REQUESTS.items() if r.rigid is not None]
    assert set(chosen) == {"mass_matrix", "inverse_dynamics", "forward_dynamics", "centroidal_momentum_matrix", *NAMES}
    for name in chosen:
        request = rq.REQUESTS[name]
        w = rigid._engine._request_vector(request, np.dtype(np.float64))
        assert w.view(np.int64)[rq.Header.KERNEL] == request.address(np.float64, True) != request.address(np.float64)
        w = rigid._engine._request_vector(request, np.dtype(np.complex128))
        assert w.view(np.int64)[rq.Header.KERNEL] == request.address(np.complex128)
        for system in (other, clustered):
            assert not rq.takes_rigid(request, system._engine.layout, np.float64)


def test_an_inertia_off_its_ten_parameters_takes_the_generic_kernels():
    """A physical inertia off its rigid structure by a relative 1e-11 keeps the generic kernels
    (the rate's too), which agree with the rigid kernels of the exact system and the reference."""
    rng = np.random.default_rng(7)
    root, child = inertia(rng), inertia(rng)
    off = root.copy()
    off[5, 5] *= 1 + 1e-11  # the mass no longer the same on the diagonal
    joints = (Free(), Revolute([0, 0, 1]))
    exact = MultibodySystem([RigidBody("a", None, joints[0], root), RigidBody("b", "a", joints[1], child)])
    system = MultibodySystem([RigidBody("a", None, joints[0], off), RigidBody("b", "a", joints[1], child)])
    assert MM.applies(exact._engine.layout) and not MM.applies(system._engine.layout)
    assert system._compiled_derivatives
    q, v = exact.random_configuration(rng), rng.normal(size=exact.nv)
    for name in NAMES:
        out = getattr(system, name)(q, v)
        _close(out, _kernel(system, name, q, v, False), 0.0)
        _close(out, getattr(exact, name)(q, v), 1e-10)
        with use_backend("reference"):
            _close(out, getattr(system, name)(q, v), 1e-10)


ROBOTS = (("ur_description/urdf/ur5_robot.urdf", False), ("panda_description/urdf/panda.urdf", False),
          ("solo_description/robots/solo12.urdf", True), ("anymal_c_simple_description/urdf/anymal.urdf", True),
          ("romeo_description/urdf/romeo_small.urdf", True), ("talos_data/robots/talos_reduced.urdf", True))


@pytest.mark.parametrize("rel, floating", ROBOTS, ids=[r.split("/")[-1] for r, _ in ROBOTS])
def test_example_robots_take_the_rigid_kernels_and_agree_with_pinocchio(rel, floating):
    """The robots of the benchmark: ``A_G``, ``h_G``, ``I_G``, ``c`` against ``ccrba`` and ``Ȧ_G``
    against ``dccrba`` to 1e-12 relative (rows ``[l; k]`` there, ``[k; l]`` here)."""
    pin = pytest.importorskip("pinocchio")
    from sko.interop import PinocchioMap
    from tests.rigid.pinocchio_map import robots_dir
    from tests.rigid.test_pinocchio import _load

    root = robots_dir()
    if root is None or not (root / rel).exists():
        pytest.skip(f"example-robot-data has no {rel}")
    system, model = _load(root / rel, floating)
    for name in NAMES:
        assert rq.takes_rigid(rq.REQUESTS[name], system._engine.layout, np.float64)
    data, to_pin = model.createData(), PinocchioMap(system, model)
    swap, rng = np.r_[3:6, 0:3], np.random.default_rng(0)
    for q in configurations(system, 0, 3):
        v = rng.normal(size=system.nv)
        qp, vp = to_pin.q(q), to_pin.v(v)
        Ag = pin.ccrba(model, data, qp, vp).copy()
        hg, Ig, com = data.hg.vector.copy(), data.Ig.matrix().copy(), data.com[0].copy()
        dAg = pin.dccrba(model, data, qp, vp).copy()
        out = system.centroidal(q, v)
        _close(out.momentum_matrix, Ag[swap] @ to_pin.lift, 1e-12)
        _close(out.momentum, hg[swap], 1e-12)
        _close(out.inertia, Ig[np.ix_(swap, swap)], 1e-12)
        _close(out.center_of_mass, com, 1e-12)
        _close(system.centroidal_momentum_matrix_rate(q, v), dAg[swap] @ to_pin.lift, 1e-12)
