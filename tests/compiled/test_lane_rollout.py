"""Rollouts in blocks of states (sko.engine.lane_rollout): a system of library rigid bodies rolls
out on the lanes, every other system on the per-state kernel; each trajectory equals its per-state
rollout (the engine told not to take the lanes) to rounding, on random rigid forests of every
library joint kind (floating bases among them) and on ur5 and solo12, for batches of 1, 3, 5 and
17 trajectories (not multiples of the lanes), RK4 and Euler; a trajectory that starts or ends up
not finite, or reaches a state its compiled hinge force rejects, stops in the per-state rollout's
step with its status and error while the others of its block equal their own rollouts; inputs are
not mutated; other systems keep the per-state rollout.

The tolerance: the lanes' ``θ̈`` equals a one-state call's to about 1e-13 relative, more where ℳ
is ill-conditioned (up to κ(ℳ) ε on drawn forests; tests/compiled/test_lanes.py), not bit for
bit. Each ``θ̈`` enters the state as ``dt θ̈``, so over 12 steps of 1 ms the trajectories differ by
far less than that (at most 7e-15 relative to the largest entry on 40 forests, RK4 and Euler);
1e-11 leaves room for an ill-conditioned ℳ, while a wrong stage, lane or coordinate map moves the
state by terms of order ``dt²`` (1e-6) or more.
"""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sko
from sko.bodies import CompiledState, Revolute, RigidBody
from sko.bodies.contract import BodyError
from sko.engine import lane_rollout as LR
from sko.engine import rollout as CR
from sko.engine.bodies.rigid import pack_rigid
from sko.engine.hooks import hinge_force_kernel
from sko.engine.requests import REQUESTS
from sko.examples.bodies import flexible_examples
from sko.graphs.errors import NonFiniteError
from sko.simulation.rollout import compiled_maps
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem
from tests.compiled.rigid_forests import configurations, example_robots, rigid_forest

STEPS, DT = 12, 1e-3


def _inputs(system, B: int, seed: int, forces: bool = True):
    rng = np.random.default_rng(seed)
    Q0 = configurations(system, seed, B)
    V0 = rng.normal(size=(B, system.nv))
    T = rng.normal(size=(B, STEPS, system.nv)) * 3.0 if forces else None
    return Q0, V0, T


_LANE_ROLLOUT = LR.rollout


def _per_state(system, *args, **kwargs):
    """``sko.rollout`` with the engine told that the lanes do not take the system."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(system._engine, "_lanes", lambda: False)
        patch.setattr(LR, "rollout", lambda *a, **k: pytest.fail("the per-state rollout ran on the lanes"))
        return sko.rollout(system, *args, **kwargs)


def _on_lanes(system, *args, **kwargs):
    """``sko.rollout``, asserting that it ran on the lanes."""
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LR, "rollout", lambda *a, **k: calls.append(1) or _LANE_ROLLOUT(*a, **k))
        out = sko.rollout(system, *args, **kwargs)
    assert calls
    return out


def _close(a, b, rtol=1e-11):
    """Equal to ``rtol`` relative to the largest entry of ``b``, NaN where ``b`` is NaN."""
    assert np.array_equal(np.isnan(a), np.isnan(b))
    finite = ~np.isnan(b)
    assert np.abs(a[finite] - b[finite]).max(initial=0.0) <= rtol * max(np.abs(b[finite]).max(initial=0.0), 1.0)


def _same(lane, reference):
    _close(lane.q, reference.q)
    _close(lane.v, reference.v)
    np.testing.assert_array_equal(lane.failed, reference.failed)
    assert {s: (type(e), str(e)) for s, e in lane.errors.items()} == \
        {s: (type(e), str(e)) for s, e in reference.errors.items()}


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([1, 3, 5, 17]), st.sampled_from(["rk4", "euler"]))
def test_lane_rollouts_equal_per_state_rollouts_on_random_rigid_forests(seed, B, integrator):
    system = rigid_forest(seed)
    assert system._engine._lanes()
    Q0, V0, T = _inputs(system, B, seed)
    _same(_on_lanes(system, Q0, V0, DT, STEPS, tau=T, integrator=integrator),
          _per_state(system, Q0, V0, DT, STEPS, tau=T, integrator=integrator))


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_lane_rollouts_equal_per_state_rollouts_on_example_robots(integrator):
    for _, _, system in islice(example_robots(), 2):  # ur5, solo12
        Q0, V0, _ = _inputs(system, 17, 3, forces=False)
        _same(_on_lanes(system, Q0, V0, DT, STEPS, integrator=integrator),
              _per_state(system, Q0, V0, DT, STEPS, integrator=integrator))


def test_other_systems_keep_the_per_state_rollout(monkeypatch):
    system = flexible_examples()["flexible-geared-arm"]()
    assert compiled_maps(system) is not None and not system._engine._lanes()
    monkeypatch.setattr(LR, "rollout", lambda *a, **k: pytest.fail("the lanes do not take a flexible body"))
    Q0, V0, _ = _inputs(system, 3, 0, forces=False)
    out = sko.rollout(system, Q0, V0, DT, 3)
    assert np.isfinite(out.q).all() and (out.failed == -1).all()


def _kernels(system, B, seed, rk4, edit):
    """The lane and the per-state kernels on the same inputs, after ``edit(Q, V, T)`` of the
    initial states and forces: each's ``(Q, V, failed, status)``, and whether the inputs they
    share stayed as they were."""
    Q0, V0, T0 = _inputs(system, B, seed)
    engine, maps = system._engine, compiled_maps(system)
    assert engine._lanes()
    results, intact = [], True
    for lanes in (True, False):
        w = engine._request_vector(REQUESTS["forward_dynamics"], np.dtype(np.float64), kernels=not lanes)
        Q, V, T = np.full((B, STEPS + 1, system.nq), 7.0), np.full((B, STEPS + 1, system.nv), 7.0), T0.copy()
        Q[:, 0] = [system.normalize(q) for q in Q0]
        V[:, 0] = V0
        edit(Q, V, T)
        T_in, w_in, table, packed = T.copy(), w.copy(), maps.table.copy(), maps.packed.copy()
        failed, status = np.zeros(B, dtype=np.int64), np.zeros(B, dtype=np.int64)
        if lanes:
            LR.rollout(w, maps.table, maps.packed, T, DT, rk4, Q, V, failed, status, engine._lane_sizes)
        else:
            CR.rollout(w, maps.table, maps.packed, T, DT, rk4, Q, V, failed, status)
        intact &= np.array_equal(T, T_in, equal_nan=True) and np.array_equal(w, w_in, equal_nan=True) \
            and np.array_equal(maps.table, table) and np.array_equal(maps.packed, packed)
        results.append((Q, V, failed, status))
    return results, intact


@hinge_force_kernel
def _stop(q, v, constants, out):
    if q[0] > 0.5:
        return False
    out[0] = 3.0 * q[0] + 0.5 * v[0]
    return True


class _Stopped(RigidBody):
    """A rigid body with a spring and a damper across its hinge, compiled, and a stop at 0.5 beyond
    which the hinge force rejects the state."""

    def hinge_force(self, q, qd):
        if q[0] > 0.5:
            raise BodyError(f"body {self.name!r} is beyond its stop at q = 0.5")
        return 3.0 * q[:1] + 0.5 * qd

    def compiled_state(self):
        state = pack_rigid(self)
        return CompiledState(state.kernel, state.constants, state.scratch, hinge_force=_stop)


def _stopped_arm():
    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    return MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                            _Stopped("b", "a", Revolute([1, 0, 0]), inertia)])


def _failing(Q, V, T):
    """Trajectory 1 starts with a NaN, 3 runs into the stop in step 5 or later, 6 gets a NaN force
    in step 4, 9 an overflowing force in step 7."""
    Q[:, 0, 1] = np.clip(Q[:, 0, 1], -0.4, 0.4)
    Q[1, 0, 0] = np.nan
    Q[3, 0, 1], V[3, 0, 1] = 0.47, 6.0
    T[6, 4, 1] = np.nan
    T[9, 7, :] = 1e308


@pytest.mark.parametrize("rk4", [True, False])
def test_a_failing_trajectory_stops_with_the_per_state_status_and_the_others_go_on(rk4):
    system = _stopped_arm()
    (lane, reference), intact = _kernels(system, 11, 5, rk4, _failing)
    assert intact
    np.testing.assert_array_equal(lane[2], reference[2])
    np.testing.assert_array_equal(lane[3], reference[3])
    assert list(np.flatnonzero(lane[2] >= 0)) == [1, 3, 6, 9]
    assert lane[2][1] == 0 and lane[2][3] >= 5 and lane[2][6] == 4 and lane[2][9] == 7
    assert lane[3][3] >= 0 and lane[3][9] == -3  # rejected by the hinge force; not finite
    for X, Y in zip(lane[:2], reference[:2]):
        _close(X, Y)
    (alone, _), _ = _kernels(system, 11, 5, rk4, lambda Q, V, T: _clip(Q))
    for s in (0, 2, 4, 5, 7, 8, 10):  # the others equal their rollouts without the failing ones
        np.testing.assert_array_equal(lane[0][s], alone[0][s])
        np.testing.assert_array_equal(lane[1][s], alone[1][s])


def _clip(Q):
    Q[:, 0, 1] = np.clip(Q[:, 0, 1], -0.4, 0.4)


def test_the_errors_of_failing_trajectories_are_the_per_state_ones():
    system = _stopped_arm()
    Q0, V0, T = _inputs(system, 11, 5)
    Q0[:, 1] = np.clip(Q0[:, 1], -0.4, 0.4)
    Q0[3, 1], V0[3, 1] = 0.47, 6.0
    T[9, 7, :] = 1e308
    lane = _on_lanes(system, Q0, V0, DT, STEPS, tau=T)
    assert sorted(lane.errors) == [3, 9]
    _same(lane, _per_state(system, Q0, V0, DT, STEPS, tau=T))


def test_an_overflowing_trajectory_raises_the_per_state_error_and_inputs_stay():
    system = rigid_forest(7)
    Q0, V0, T = _inputs(system, 6, 7)
    T[4, 5:] = 1e308
    copies = Q0.copy(), V0.copy(), T.copy()
    lane = _on_lanes(system, Q0, V0, DT, STEPS, tau=T)
    for x, y in zip((Q0, V0, T), copies):
        np.testing.assert_array_equal(x, y)
    assert lane.failed[4] >= 5 and isinstance(lane.errors[4], NonFiniteError)
    assert list(lane.errors) == [4]
    _same(lane, _per_state(system, Q0, V0, DT, STEPS, tau=T))
