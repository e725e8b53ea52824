"""The mass matrix of rigid trees on ten inertial parameters (sko.engine.mass_matrix) equals the
generic block kernels on the same filled arena, the reference path and Pinocchio's ``crba``; it
takes exactly the systems of library rigid bodies, and a batch equals its states one by one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.engine import use_backend
from sko.engine import crba
from sko.bodies import Free, Revolute, RigidBody
from sko.engine import mass_matrix as MM
from sko.examples.bodies import random_system
from sko.systems import MultibodySystem
from sko.engine.requests import REQUESTS
from tests.compiled.rigid_forests import configurations, example_robots, inertia, rigid_forest
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
