"""The derivatives of inverse and forward dynamics of a batch with the states innermost
(sko.engine.lane_derivatives): a float64 batch of a rigid tree the compiled derivatives take
(constant ``S``, ``c_J = 0``) and the lanes take (library rigid bodies) runs the recursion of
DERIVATIVES.md Eq. 10–13 on four states at once, in each tree's base frame. Every state's three
matrices equal its single call's (the one-state kernel, in world coordinates): inverse dynamics to
1e-13 relative to each matrix's largest entry (the same products, taken in another frame and
order), forward dynamics to that plus ``nv κ(ℳ) ε`` relative (two factorizations' rounding,
amplified by the solves). On random trees of every joint the compiled derivatives take, on
example robots (fixed and floating bases), for batches of 1, L − 1, L, L + 1, 2 L + 3,
4 L + 1, 8 L + 5 (a tail padded in its block; two threads' runs of unequal length) and 1024
states; a state that is not finite, whose result overflows, whose joint rejects it or whose ℳ is
not positive definite gets the single call's error, naming the state. Into an output filled with
NaN, every entry of each state's row is written (a rejected state's with zeros)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko import spatial as sp
from sko.bodies import Fixed, Free, Prismatic, Revolute, RigidBody, Spherical
from sko.engine import lanes
from sko.engine.dispatch import LANE_RUNS
from sko.engine.requests import REQUESTS
from sko.graphs.errors import NonFiniteError, NotPositiveDefiniteError, SKOError
from sko.spatial import spatial_inertia
from sko.systems import MultibodySystem, SystemBuilder
from sko.systems.derivatives import _compiled
from tests.compiled.rigid_forests import example_robots
from tests.rigid.random_systems import random_rigid_system

L = lanes.LANES
SIZES = (1, L - 1, L, L + 1, 2 * L + 3, 4 * L + 1, 8 * L + 5)
NAMES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")


def _taken(system) -> bool:
    """Whether a batch of the system's derivatives runs in the lanes."""
    return _compiled(system) and system._engine._lanes() and all(name in LANE_RUNS for name in NAMES)


def _states(system, B: int, seed: int):
    rng = np.random.default_rng(seed)
    Q = np.array([system.random_configuration(rng) for _ in range(B)]).reshape(B, system.nq)
    V, X = rng.normal(size=(2, B, system.nv))
    return Q, V, X


def _equal_to_single_calls(system, name: str, Q, V, X, states=None):
    """Each state's three matrices equal its single call's (module docstring)."""
    batch = getattr(system, name)(Q, V, X)
    for matrix in batch:
        assert matrix.shape == (Q.shape[0], system.nv, system.nv)
    for s in range(Q.shape[0]) if states is None else states:
        single = getattr(system, name)(Q[s], V[s], X[s])
        slack = 0.0
        if name == "forward_dynamics_derivatives" and system.nv:
            slack = system.nv * np.linalg.cond(system.mass_matrix(Q[s])) * np.finfo(float).eps
        for ours, theirs in zip(batch, single):
            scale = max(np.abs(theirs).max(initial=0.0), 1.0)
            assert np.abs(ours[s] - theirs).max(initial=0.0) <= (1e-13 + slack) * scale


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 12), st.sampled_from(SIZES), st.sampled_from(NAMES))
def test_batch_equals_single_calls_on_random_rigid_trees(seed, bodies, B, name):
    system = random_rigid_system(seed, bodies, constant_motion=True)
    assert _taken(system)
    _equal_to_single_calls(system, name, *_states(system, B, seed))


@pytest.mark.parametrize("name", NAMES)
def test_example_robots(name):
    for _, floating, system in example_robots():
        assert _taken(system)
        for B in (L - 1, 2 * L + 3, 1024):
            Q, V, X = _states(system, B, B)
            _equal_to_single_calls(system, name, Q, V, X, range(0, B, max(1, B // 16)))


def test_other_systems_keep_the_per_state_batch():
    """A complex batch of a rigid tree, and a system whose joints the compiled derivatives do not
    take, keep their own paths, still equal to the single calls."""
    system = random_rigid_system(3, 5, constant_motion=True)
    Q, V, X = _states(system, L + 1, 3)
    other = next(s for s in map(random_rigid_system, range(100)) if s._engine._lanes() and not _compiled(s))
    _equal_to_single_calls(other, "inverse_dynamics_derivatives", *_states(other, L + 1, 4))
    with pytest.raises(SKOError, match="must be real"):  # derivatives are taken at real states only
        system.inverse_dynamics_derivatives(Q + 0j, V, X)


# ----------------------------------------------------------------------------- errors, by state
def _arm(tip=None):
    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    return MultibodySystem([RigidBody("a", None, Free(), inertia),
                            RigidBody("b", "a", Revolute([0, 1, 0]), inertia),
                            RigidBody("tip", "b", Revolute([1, 0, 0]), inertia if tip is None else tip)])


@pytest.mark.parametrize("name", NAMES)
def test_a_state_that_is_not_finite_is_named(name):
    system = _arm()
    assert _taken(system)
    Q, V, X = _states(system, L + 1, 5)
    V[3, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r"first at index \[3, 1\]"):
        getattr(system, name)(Q, V, X)


@pytest.mark.parametrize("name", NAMES)
def test_a_state_that_is_not_a_number_stays_in_its_lane(name):
    """The lane kernel itself (the engine refuses such a batch before it): a NaN velocity in a
    lane of the second thread's run makes that state's result not finite (status −3) and leaves
    every other state's, its block's neighbours included, equal to its single call."""
    system = random_rigid_system(7, 9, constant_motion=True)
    assert _taken(system)
    B, bad = 8 * L + 5, 5 * L + 1
    Q, V, X = _states(system, B, 9)
    V[bad, 0] = np.nan
    engine = system._engine
    w = engine._request_vector(REQUESTS[name], np.dtype(np.float64), kernels=False)
    out, status = np.zeros((B, 3 * system.nv ** 2)), np.full(B, -1, dtype=np.int64)
    lanes.evaluate(LANE_RUNS[name], w, Q, V, X, out, status, engine._lane_sizes)
    assert status[bad] == -3  # a NaN velocity: no joint or pivot rejects it, the result is not finite
    good = np.delete(np.arange(B), bad)
    assert (status[good] == -1).all()
    batch = out.reshape(B, 3, system.nv, system.nv)
    for s in good[::3]:
        single = getattr(system, name)(Q[s], V[s], X[s])
        for k in range(3):
            scale = max(np.abs(single[k]).max(), 1.0)
            cond = system.nv * np.linalg.cond(single[2]) * np.finfo(float).eps
            assert np.abs(batch[s, k] - single[k]).max() <= (1e-13 + cond) * scale


def _forest():
    """Two trees with fixed links (merged into their parents by the builder): a floating base
    (its quaternion first in ``q``) and a fixed link carrying a revolute and a spherical joint; a
    revolute base carrying a prismatic, a fixed link and a revolute. ``nv = 13``: ``3 nv = 39``
    right-hand sides, a tail after the solve's chunks of eight, ``nv²`` not a multiple of four."""
    rng = np.random.default_rng(11)
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    for name, parent, joint in (("a", None, Free()), ("f", "a", Fixed()), ("b", "f", Revolute([0, 1, 0])),
                                ("c", "b", Spherical()), ("d", None, Revolute([0, 0, 1])),
                                ("e", "d", Prismatic([1, 0, 0])), ("g", "e", Fixed()), ("h", "g", Revolute([1, 0, 0]))):
        A = rng.normal(size=(3, 3))
        second_moments = A @ A.T * 0.05 + 0.01 * np.eye(3)  # ∫ρ r rᵀ: the inertia below is physical
        b.add_body(name, parent, joint, sp.pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3)),
                   mass=rng.uniform(0.2, 3.0), com=rng.normal(size=3) * 0.2,
                   inertia_com=np.trace(second_moments) * np.eye(3) - second_moments)
    return b.build()


@pytest.mark.parametrize("B", (2 * L + 3, 8 * L + 5))
@pytest.mark.parametrize("name", NAMES)
def test_every_entry_is_written(name, B):
    """The lane kernel into an ``out`` filled with NaN (the engine's comes from ``np.empty``, often
    zeros): a zero quaternion of the floating base in the middle of a block and in the last,
    partial block is rejected (status ≥ 0, a row of zeros); every other state's status is −1 and
    its row equals its single call (module docstring), so no entry was left unwritten."""
    system = _forest()
    assert _taken(system) and system.nv == 13
    Q, V, X = _states(system, B, B)
    bad = [L + 2, B - 1]
    Q[bad, :4] = 0.0
    engine = system._engine
    w = engine._request_vector(REQUESTS[name], np.dtype(np.float64), kernels=False)
    out, status = np.full((B, 3 * system.nv ** 2), np.nan), np.full(B, -1, dtype=np.int64)
    lanes.evaluate(LANE_RUNS[name], w, Q, V, X, out, status, engine._lane_sizes)
    assert (status[bad] >= 0).all() and status[bad[0]] == status[bad[1]]
    assert (out[bad] == 0.0).all()
    good = np.delete(np.arange(B), bad)
    assert (status[good] == -1).all()
    assert np.isfinite(out[good]).all()
    batch = out.reshape(B, 3, system.nv, system.nv)
    for s in good:
        single = getattr(system, name)(Q[s], V[s], X[s])
        slack = 0.0
        if name == "forward_dynamics_derivatives":
            slack = system.nv * np.linalg.cond(system.mass_matrix(Q[s])) * np.finfo(float).eps
        for k in range(3):
            scale = max(np.abs(single[k]).max(), 1.0)
            assert np.abs(batch[s, k] - single[k]).max() <= (1e-13 + slack) * scale


@pytest.mark.parametrize("name", NAMES)
def test_an_overflowing_state_gets_the_single_calls_error(name):
    system = _arm()
    Q, V, X = _states(system, L + 2, 6)
    V[L + 1] = 1e200
    with pytest.raises(SKOError) as single:
        getattr(system, name)(Q[L + 1], V[L + 1], X[L + 1])
    with pytest.raises(type(single.value), match=f"state {L + 1} of the batch"):
        getattr(system, name)(Q, V, X)


@pytest.mark.parametrize("name", NAMES)
def test_a_rejected_configuration_gets_the_single_calls_error(name):
    """A zero quaternion of the floating base, which its joint rejects."""
    system = _arm()
    Q, V, X = _states(system, L + 1, 7)
    Q[2, :4] = 0.0  # the free joint's q: the quaternion, then the position
    with pytest.raises(SKOError) as single:
        getattr(system, name)(Q[2], V[2], X[2])
    with pytest.raises(type(single.value), match="state 2 of the batch"):
        getattr(system, name)(Q, V, X)


def test_a_mass_matrix_that_is_not_positive_definite_names_its_state():
    """A tip of zero mass and inertia: ℳ is singular at every state; the forward dynamics
    derivatives raise the single call's error, naming the first state of the batch, and the
    inverse dynamics derivatives (no solve) equal the single calls."""
    system = _arm(np.zeros((6, 6)))
    assert _taken(system)
    Q, V, X = _states(system, L + 1, 8)
    with pytest.raises(NotPositiveDefiniteError) as single:
        system.forward_dynamics_derivatives(Q[0], V[0], X[0])
    with pytest.raises(NotPositiveDefiniteError, match="state 0 of the batch") as batch:
        system.forward_dynamics_derivatives(Q, V, X)
    assert str(single.value) in str(batch.value)
    _equal_to_single_calls(system, "inverse_dynamics_derivatives", Q, V, X)


def test_inputs_are_not_mutated():
    system = _arm()
    Q, V, X = _states(system, L + 1, 4)
    copies = [x.copy() for x in (Q, V, X)]
    for x in (Q, V, X):
        x.setflags(write=False)
    for name in NAMES:
        getattr(system, name)(Q, V, X)
    for x, c in zip((Q, V, X), copies):
        np.testing.assert_array_equal(x, c)
