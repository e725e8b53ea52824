"""Batched rollouts (sko.rollout): the compiled loop equals the stepwise one and simulate, a batch
equals its rollouts run alone, a diverging rollout stops alone, and bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sko
from sko.constraints import FrameConstraint
from sko.engine import use_backend
from sko.examples.bodies import flexible_examples
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.simulation import simulate
from sko.simulation.rollout import compiled_maps
from tests.rigid.random_systems import random_rigid_system


def _batch(system, rng, B):
    Q0 = np.array([system.random_configuration(rng) for _ in range(B)])
    return Q0, rng.normal(size=(B, system.nv))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["rk4", "euler"]))
def test_the_compiled_loop_equals_the_stepwise_one(seed, integrator):
    system = random_rigid_system(seed, 6, constant_motion=True)  # ball, free and planar joints among them
    assert compiled_maps(system) is not None
    rng = np.random.default_rng(seed)
    Q0, V0 = _batch(system, rng, 5)
    T = rng.normal(size=(5, 15, system.nv))
    compiled = sko.rollout(system, Q0, V0, 1e-3, 15, tau=T, integrator=integrator)
    with use_backend("reference"):
        stepwise = sko.rollout(system, Q0, V0, 1e-3, 15, tau=T, integrator=integrator)
    np.testing.assert_allclose(compiled.q, stepwise.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(compiled.v, stepwise.v, rtol=0, atol=1e-11 * max(1.0, np.abs(stepwise.v).max()))
    assert (compiled.failed == -1).all() and not compiled.errors


def test_a_batch_equals_its_rollouts_alone_and_simulate():
    system = random_rigid_system(3, 8, constant_motion=True)
    rng = np.random.default_rng(0)
    Q0, V0 = _batch(system, rng, 37)  # more than a parallel chunk
    batch = sko.rollout(system, Q0, V0, 2e-3, 25)
    assert batch.q.shape == (37, 26, system.nq) and batch.v.shape == (37, 26, system.nv)
    np.testing.assert_allclose(batch.t, 2e-3 * np.arange(26))
    for s in (0, 20, 36):
        alone = sko.rollout(system, Q0[s], V0[s], 2e-3, 25)
        np.testing.assert_array_equal(alone.q, batch.q[s])
        np.testing.assert_array_equal(alone.v, batch.v[s])
        reference = simulate(system, Q0[s], V0[s], 2e-3, 25)
        np.testing.assert_allclose(alone.q, reference.q, atol=1e-12)
        np.testing.assert_allclose(alone.v, reference.qd, atol=1e-11)


def test_a_diverging_rollout_stops_alone():
    system = random_rigid_system(5, 5, constant_motion=True)
    rng = np.random.default_rng(1)
    Q0, V0 = _batch(system, rng, 4)
    V0[2] = 1e200
    for backend in ("compiled", "reference"):
        with use_backend(backend):
            out = sko.rollout(system, Q0, V0, 1e-3, 10)
            alone = sko.rollout(system, Q0[[0, 1, 3]], V0[[0, 1, 3]], 1e-3, 10)
        assert out.failed.tolist() == [-1, -1, 0, -1]
        assert list(out.errors) == [2] and isinstance(out.errors[2], NonFiniteError) and "step 1" in str(out.errors[2])
        assert np.isnan(out.q[2, 1:]).all() and (out.q[2, 0] == system.normalize(Q0[2])).all()
        np.testing.assert_array_equal(out.q[[0, 1, 3]], alone.q)


def test_python_bodies_and_callables_take_the_stepwise_path():
    system = flexible_examples()["flexible-spacecraft"]()
    rng = np.random.default_rng(2)
    Q0, V0 = _batch(system, rng, 3)
    calls = []

    def tau(t, Q, V):
        calls.append(Q.shape[0])
        return -0.1 * V

    out = sko.rollout(system, Q0, V0, 1e-3, 5, tau=tau)
    assert calls == [3] * 20  # four stages a step, one call for the whole batch
    for s in range(3):
        reference = simulate(system, Q0[s], V0[s], 1e-3, 5, torque=lambda t, q, v: -0.1 * v)
        np.testing.assert_allclose(out.q[s], reference.q, atol=1e-12)


def test_bad_input_is_refused():
    system = random_rigid_system(1, 3, constant_motion=True)
    q, v = system.random_configuration(0), np.zeros(system.nv)
    Q = np.stack([q, q])
    with pytest.raises(DimensionError, match="q0 has length"):
        sko.rollout(system, Q[:, :-1], None, 1e-3, 2)
    with pytest.raises(DimensionError, match="v0 has 1 states but q0 has 2"):
        sko.rollout(system, Q, v[None], 1e-3, 2)
    with pytest.raises(NonFiniteError, match="q0"):
        sko.rollout(system, np.full_like(Q, np.nan), None, 1e-3, 2)
    with pytest.raises(DimensionError, match=r"tau has shape \(2, 3, 1\)"):
        sko.rollout(system, Q, None, 1e-3, 2, tau=np.zeros((2, 3, 1)))
    with pytest.raises(NonFiniteError, match="tau"):
        sko.rollout(system, Q, None, 1e-3, 2, tau=np.full((2, 2, system.nv), np.inf))
    with pytest.raises(SKOError, match="integrator"):
        sko.rollout(system, Q, None, 1e-3, 2, integrator="verlet")
    with pytest.raises(SKOError, match="tau must be"):
        sko.rollout(system, Q, None, 1e-3, 2, tau=3.0)
    with pytest.raises(DimensionError, match=r"returned shape \(3,\)"):
        sko.rollout(system, Q, None, 1e-3, 2, tau=lambda t, Q, V: np.zeros(3))
    with pytest.raises(NonFiniteError, match="dt"):
        sko.rollout(system, Q, None, np.nan, 2)
    kept = Q.copy()
    sko.rollout(system, Q, None, 1e-3, 2)
    np.testing.assert_array_equal(Q, kept)


@pytest.mark.parametrize("torque, match", [
    (lambda t, q, qd: qd + 1e-3j, r"returned bad forces: tau must hold real numbers, got complex128"),
    (lambda t, q, qd: np.array(["1", "2", "3"]), r"returned bad forces: tau has dtype <U1"),
])
def test_simulate_names_a_torque_that_is_not_real_numbers(torque, match):
    system = random_rigid_system(1, 3, constant_motion=True)
    with pytest.raises(DimensionError, match=r"^simulate: torque\(t, q, qd\) at t = 0 s " + match):
        simulate(system, system.random_configuration(0), np.zeros(system.nv), 1e-3, 2, torque=torque)


def test_progress_segments_the_compiled_loop_without_changing_it(monkeypatch):
    import importlib

    module = importlib.import_module("sko.simulation.rollout")

    system = random_rigid_system(4, 5, constant_motion=True)
    rng = np.random.default_rng(3)
    Q0, V0 = _batch(system, rng, 5)
    V0[1] = 1e200  # stops in the first segment; the others run on
    T = rng.normal(size=(5, 9, system.nv))
    whole = sko.rollout(system, Q0, V0, 1e-3, 9, tau=T)
    monkeypatch.setattr(module, "SEGMENT", 10)  # 2 steps per segment for 5 rollouts
    done = []
    parts = sko.rollout(system, Q0, V0, 1e-3, 9, tau=T, progress=done.append)
    assert done == [2, 4, 6, 8, 9]
    np.testing.assert_array_equal(parts.q, whole.q)
    np.testing.assert_array_equal(parts.v, whole.v)
    assert parts.failed.tolist() == whole.failed.tolist() == [-1, 0, -1, -1, -1]


@pytest.mark.parametrize("dt, steps", [(1e308, 2), (1e300, 10**9), (1.0, 10**400)])
def test_a_final_time_that_overflows_is_named(dt, steps):
    """``dt · steps`` past the largest float: every entry point that steps in time refuses it
    naming both, before any step (the time grid would hold infinities)."""
    system = random_rigid_system(3, 1, constant_motion=True)
    q = system.random_configuration(np.random.default_rng(0))
    for call in (lambda: sko.rollout(system, q, None, dt, steps),
                 lambda: simulate(system, q, np.zeros(system.nv), dt, steps),
                 lambda: sko.rollout(system, q, None, dt, steps, constraints=[FrameConstraint(system.bodies[-1])])):
        with pytest.raises(NonFiniteError, match=r"final time dt × steps = .* overflows"):
            call()
