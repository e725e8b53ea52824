"""The mass matrix of rigid trees on ten inertial parameters (sko.engine.mass_matrix) equals the
generic block kernels on the same filled arena, the reference path and Pinocchio's ``crba``; it
takes exactly the systems of library rigid bodies, and a batch equals its states one by one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko import spatial as sp
from sko.engine import use_backend
from sko.engine import crba
from sko.bodies import Fixed, Free, Helical, Planar, Prismatic, Revolute, RigidBody, Spherical
from sko.engine import mass_matrix as MM
from sko.examples.bodies import random_system
from sko.systems import MultibodySystem
from sko.engine.requests import REQUESTS
from tests.rigid.random_systems import random_rigid_system


def _kernels(system, q):
    """``(ℳ by the rigid kernel, ℳ by the generic kernels)`` on one arena filled at ``q``."""
    L = system._engine.layout
    A = L.fill(q[None], np.zeros((1, system.nv)))[0]
    layout, nv = np.array(L.request_layout), system.nv
    M_rigid, M_generic = np.zeros((nv, nv)), np.zeros((nv, nv))
    MM.rigid_mass_matrix(layout, A, np.full(MM.NODE * len(L.bodies), np.nan), np.full(6 * max(nv, 1), np.nan),
                         M_rigid)
    R, tmp = np.zeros(A.size), np.zeros(36)
    crba.composite_inertias(layout, A, R, tmp)
    crba.mass_matrix(layout, A, R, M_generic, np.zeros(6 * max(nv, 1)), np.zeros(6 * max(nv, 1)))
    return M_rigid, M_generic


def _close(a, b, rtol=1e-13):
    assert np.abs(a - b).max(initial=0.0) <= rtol * max(np.abs(b).max(initial=0.0), 1.0)


def _inertia(rng):
    A = rng.normal(size=(3, 3))
    second = A @ A.T * 0.05 + 0.01 * np.eye(3)
    return sp.spatial_inertia(rng.uniform(0.2, 3.0), rng.normal(size=3) * 0.3, np.trace(second) * np.eye(3) - second)


JOINTS = [lambda r: Revolute(r.normal(size=3)), lambda r: Prismatic(r.normal(size=3)),
          lambda r: Helical(r.normal(size=3), r.uniform(-0.3, 0.3)), lambda r: Planar(r.normal(size=3)),
          lambda r: Spherical(), lambda r: Free(), lambda r: Fixed(), lambda r: Revolute(r.normal(size=3)).reversed()]


def _forest(seed: int) -> MultibodySystem:
    """A random forest of rigid bodies on every library joint kind, reversed ones and zero-dof
    (fixed) bodies kept as bodies of their own, far from the origin (floating bases)."""
    rng = np.random.default_rng(seed)
    bodies, n = [], int(rng.integers(1, 9))
    for i in range(n):
        parent = None if i == 0 or rng.random() < 0.2 else f"b{int(rng.integers(i))}"
        joint = JOINTS[int(rng.integers(len(JOINTS)))](rng)
        placement = sp.pose_transform(rng.normal(size=3) * 2.0, rng.uniform(-np.pi, np.pi, 3))
        bodies.append(RigidBody(f"b{i}", parent, joint, _inertia(rng), placement))
    return MultibodySystem(bodies, gravity=rng.normal(size=3))


def _states(system, seed: int, count: int):
    rng = np.random.default_rng(seed)
    return np.array([system.random_configuration(rng) for _ in range(count)]).reshape(count, system.nq)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_rigid_kernel_equals_generic_and_reference(seed, library_forest):
    system = _forest(seed) if library_forest else random_rigid_system(seed)
    taken = MM.applies(system._engine.layout)
    for q in _states(system, seed, 3):
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
    system = _forest(seed)
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
def test_batch_equals_states(seed):
    system = _forest(seed)
    Q = _states(system, seed, 37)  # more than a chunk of the parallel batch
    batch = system.mass_matrix(Q)
    for s in range(Q.shape[0]):
        np.testing.assert_array_equal(batch[s], system.mass_matrix(Q[s]))


def test_complex_step_states():
    """complex128 states keep the generic kernel (the rigid one is compiled for float64 alone),
    equal to the reference path."""
    system = _forest(3)
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
    from sko.io import load_urdf
    from tests.rigid.pinocchio_map import robots_dir

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    for rel, floating in (("ur_description/urdf/ur5_robot.urdf", False), ("solo_description/robots/solo12.urdf", True),
                          ("talos_data/robots/talos_reduced.urdf", True)):
        system = load_urdf(str(root / rel), floating_base=floating)
        model = pin.buildModelFromUrdf(str(root / rel), *((pin.JointModelFreeFlyer(),) if floating else ()))
        assert MM.applies(system._engine.layout)
        data, cmap = model.createData(), PinocchioMap(system, model)
        for q in _states(system, 0, 5):
            M = pin.crba(model, data, cmap.q(q))
            _close(cmap.matrix(system.mass_matrix(q)), np.triu(M) + np.triu(M, 1).T)


def test_an_inertia_off_its_ten_parameters_takes_the_generic_kernel():
    """A physical inertia is accepted to a relative 1e-9 of its rigid structure; the ten
    parameters would drop the difference, so such a system keeps the generic kernels."""
    rng = np.random.default_rng(5)
    inertia = _inertia(rng)
    exact = [RigidBody("a", None, Free(), inertia), RigidBody("b", "a", Revolute([0, 0, 1]), _inertia(rng))]
    assert MM.applies(MultibodySystem(exact)._engine.layout)
    off = inertia.copy()
    off[5, 5] *= 1 + 1e-11
    system = MultibodySystem([RigidBody("a", None, Free(), off), exact[1]])
    assert not MM.applies(system._engine.layout)
    q = system.random_configuration(rng)
    M = system.mass_matrix(q)
    with use_backend("reference"):
        _close(M, system.mass_matrix(q), 1e-12)
