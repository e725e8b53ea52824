"""The compiled O(N·d) recursion of the derivatives (sko.engine.derivatives,
the ``inverse_dynamics_derivatives`` request): equal to the complex step and to the reference
recursion on random forests of the joints it takes, batches equal to states, and the common
call's fast path as checked as the others."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.engine import use_backend
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.systems import rigid_derivatives
from sko.systems.derivatives import _compiled
from tests.derivatives.test_complex_step import three_link_pendulum
from tests.rigid.random_systems import random_rigid_system


def _close(x, y, rtol=1e-11):
    np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * max(1.0, np.abs(y).max(initial=0.0)))


def _state(system, rng):
    q = system.random_configuration(rng)
    v, a = rng.normal(size=(2, system.nv))
    return q, v, a


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_compiled_equals_complex_step_and_the_reference_recursion(seed, bodies):
    system = random_rigid_system(seed, bodies, constant_motion=True)
    assert _compiled(system)
    rng = np.random.default_rng(seed)
    q, v, a = _state(system, rng)
    compiled = system.inverse_dynamics_derivatives(q, v, a)
    for x, y in zip(compiled, system.inverse_dynamics_derivatives(q, v, a, method="complex_step")):
        _close(x, y)
    with use_backend("reference"):
        for x, y in zip(compiled, system.inverse_dynamics_derivatives(q, v, a, method="analytic")):
            _close(x, y, 1e-12)
    tau = rng.normal(size=system.nv)
    for x, y in zip(system.forward_dynamics_derivatives(q, v, tau),
                    system.forward_dynamics_derivatives(q, v, tau, method="complex_step")):
        _close(x, y, 1e-10)


@pytest.mark.parametrize("derivatives", ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"])
def test_batches_equal_states(derivatives):
    system = random_rigid_system(7, 9, constant_motion=True)
    rng = np.random.default_rng(1)
    Q = np.array([system.random_configuration(rng) for _ in range(37)])  # more than a parallel chunk
    V, X = rng.normal(size=(2, 37, system.nv))
    batch = getattr(system, derivatives)(Q, V, X)
    for s in (0, 17, 36):
        for x, y in zip(batch, getattr(system, derivatives)(Q[s], V[s], X[s])):
            _close(x[s], y, 1e-13)


def test_the_worked_example_compiled():
    system = three_link_pendulum()
    assert _compiled(system)
    q, v, a = np.array([0.3, -0.6, 0.9]), np.array([0.5, -0.8, 1.2]), np.array([0.3, -0.4, 0.7])
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)
    np.testing.assert_allclose(dq[2], [1.6617427992, 1.70679621729, 1.73902283843], rtol=1e-11)
    np.testing.assert_allclose(dv[0], [-1.78692028995, -1.08507688919, -0.497978136556], rtol=1e-11)
    np.testing.assert_allclose(M, system.mass_matrix(q), rtol=1e-14)


def test_joints_with_moving_subspaces_are_not_compiled():
    system = next(s for s in map(random_rigid_system, range(100))
                  if rigid_derivatives.applies(s) and not _compiled(s))
    assert not all(system.body(k).joint.constant_motion for k in system.bodies)


def test_the_fast_path_checks_as_the_others_and_leaves_inputs_alone():
    system = three_link_pendulum()
    q, v, a = np.array([0.3, -0.6, 0.9]), np.array([0.5, -0.8, 1.2]), np.array([0.3, -0.4, 0.7])
    kept = [x.copy() for x in (q, v, a)]
    system.inverse_dynamics_derivatives(q, v, a)
    system.forward_dynamics_derivatives(q, v, a)
    for x, y in zip((q, v, a), kept):
        np.testing.assert_array_equal(x, y)
    for derivatives in (system.inverse_dynamics_derivatives, system.forward_dynamics_derivatives):
        with pytest.raises(NonFiniteError, match="v"):
            derivatives(q, np.array([0.0, np.nan, 0.0]), a)
        with pytest.raises(DimensionError, match="nv"):
            derivatives(q, v, a[:2])
        with pytest.raises(DimensionError, match="same leading batch axis"):
            derivatives(np.stack([q, q]), v, a)


def test_a_singular_mass_matrix_names_its_body_for_one_state_and_in_a_batch():
    from sko.bodies import Revolute
    from sko.graphs.errors import NotPositiveDefiniteError
    from sko.spatial import pose_transform
    from sko.systems import SystemBuilder

    b = SystemBuilder()
    b.add_body("a", None, Revolute([0, 0, 1]), mass=1.0, com=[0.5, 0, 0], inertia_com=0.1 * np.eye(3))
    b.add_body("tip", "a", Revolute([0, 0, 1]), pose_transform([1.0, 0, 0]), mass=0.0, com=[0, 0, 0],
               inertia_com=np.zeros((3, 3)))
    system = b.build()
    q = np.array([0.3, 0.2])
    with pytest.raises(NotPositiveDefiniteError, match=r"^hinge inertia .* body 'tip'"):
        system.forward_dynamics_derivatives(q)
    with pytest.raises(NotPositiveDefiniteError, match=r"^state 0 of the batch: .* body 'tip'"):
        system.forward_dynamics_derivatives(np.stack([q, q]), np.zeros((2, 2)), np.zeros((2, 2)))
