"""Forward dynamics of a batch with the states innermost (sko.engine.lanes): a float64 batch of a
system of library rigid bodies takes the lane kernel, whose result for every state equals the
state's own call (the per-state kernels) to 1e-13 relative to the largest entry — the same
products and sums, fused differently by the compiler, so not bit for bit — on random rigid
forests of every library joint kind and on example robots, for batches of 1, L − 1, L, L + 1,
2 L + 3, 4 L + 1, 8 L + 5 (two threads split these in runs of blocks of unequal length) and 1024
states (L = LANES);
a state that is not a number stays in its lane; other systems and complex states keep the per-state batch; a state
whose input is not finite, whose hinge force overflows or whose ``D(k)`` is not positive
definite raises the per-state path's error naming that state. Batched inverse dynamics takes the
same fill and Newton–Euler in the lanes, under the same checks. Floating bases (free joints, filled
in the lanes) are drawn several to a forest, with quaternions of any size and fast spins; a
quaternion the joint rejects (zero, tiny, not finite) gets the per-state path's status and
error."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numba import njit

from sko import spatial as sp
from sko.bodies import CompiledState, Free, Prismatic, Revolute, RigidBody
from sko.engine import lanes, use_backend
from sko.engine.bodies.rigid import pack_rigid
from sko.engine.hooks import hinge_force_kernel
from sko.engine.layout import Flat
from sko.engine.requests import REQUESTS, evaluate_batch
from sko.examples.bodies import random_system
from sko.errors import JointError
from sko.graphs.errors import NonFiniteError, NotPositiveDefiniteError
from sko.spatial import pose_transform, spatial_inertia
from sko.systems import MultibodySystem
from tests.compiled.rigid_forests import JOINTS, configurations, example_robots, inertia, rigid_forest
from tests.rigid.random_systems import random_rigid_system

L = lanes.LANES
C = 4  # blocks
SIZES = (1, L - 1, L, L + 1, 2 * L + 3, C * L + 1, 2 * C * L + 5)


def _close(a, b, rtol=1e-13):
    assert np.abs(a - b).max(initial=0.0) <= rtol * max(np.abs(b).max(initial=0.0), 1.0)


def _batch(system, B: int, seed: int):
    rng = np.random.default_rng(seed)
    Q = configurations(system, seed, B)
    V, TAU = rng.normal(size=(2, B, system.nv))
    return Q, V, TAU


def _taken(system) -> bool:
    return system._engine._lanes()


def _equal_to_single_calls(system, Q, V, TAU, conditioned: bool = True):
    """Each state of the batch equals its single call to 1e-13 relative to the largest entry; on a
    drawn system whose ℳ is not well ``conditioned`` (up to 10⁵ here), to that plus the rounding a
    solve amplifies, ``nv κ(ℳ) ε`` relative (the two paths sum in different orders), plus twice
    the single call's own distance from the reference path."""
    batch = system.forward_dynamics(Q, V, TAU)
    assert batch.shape == (Q.shape[0], system.nv)
    for s in range(Q.shape[0]):
        single = system.forward_dynamics(Q[s], V[s], TAU[s])
        slack = 0.0
        if not conditioned and system.nv:  # (no ℳ to condition without coordinates)
            with use_backend("reference"):
                slack = 2 * np.abs(single - system.forward_dynamics(Q[s], V[s], TAU[s])).max(initial=0.0)
            rounding = system.nv * np.linalg.cond(system.mass_matrix(Q[s])) * np.finfo(float).eps
            slack += rounding * np.abs(single).max(initial=0.0)
        assert np.abs(batch[s] - single).max(initial=0.0) <= 1e-13 * max(np.abs(single).max(initial=0.0), 1.0) + slack


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans(), st.sampled_from(SIZES))
@example(1062, True, 3)  # ℳ's condition 10⁵: the two paths' rounding, amplified, is 4e-13 relative
def test_batch_equals_single_calls_on_random_rigid_forests(seed, library_forest, B):
    system = rigid_forest(seed) if library_forest else random_rigid_system(seed)
    assert _taken(system) or not library_forest  # the drawn systems' joints may have no compiled kernel
    _equal_to_single_calls(system, *_batch(system, B, seed), conditioned=False)


def test_a_large_batch_equals_single_calls():
    system = rigid_forest(11)
    Q, V, TAU = _batch(system, 1024, 11)
    batch = system.forward_dynamics(Q, V, TAU)
    for s in range(0, 1024, 37):
        _close(batch[s], system.forward_dynamics(Q[s], V[s], TAU[s]))
    _close(batch[-1], system.forward_dynamics(Q[-1], V[-1], TAU[-1]))


def test_inputs_are_not_mutated_and_read_only_inputs_are_taken():
    system = rigid_forest(4)
    Q, V, TAU = _batch(system, L + 1, 4)
    copies = [x.copy() for x in (Q, V, TAU)]
    for x in (Q, V, TAU):
        x.setflags(write=False)
    system.forward_dynamics(Q, V, TAU)
    for x, c in zip((Q, V, TAU), copies):
        np.testing.assert_array_equal(x, c)


def test_other_body_types_and_complex_states_keep_the_per_state_batch():
    """Rotor links and flexible bodies among rigid ones take the per-state batch, still equal to
    the single calls; a complex batch of a rigid forest too."""
    others = [random_system(seed) for seed in range(6)]
    others = [s for s in others if not _taken(s)]
    assert others
    for system in others[:2]:
        _equal_to_single_calls(system, *_batch(system, L + 1, 2))
    system = rigid_forest(3)
    Q, V, TAU = _batch(system, L + 1, 3)
    Qc = Q + 1e-20j * np.random.default_rng(3).normal(size=Q.shape)
    batch = system.forward_dynamics(Qc, V, TAU)
    assert batch.dtype == np.complex128
    for s in range(Q.shape[0]):
        _close(batch[s], system.forward_dynamics(Qc[s], V[s], TAU[s]))


def test_example_robots():
    for _, _, system in example_robots():
        assert _taken(system)
        for B in (*SIZES, 1024):
            Q, V, TAU = _batch(system, B, B)
            batch = system.forward_dynamics(Q, V, TAU)
            for s in range(0, B, max(1, B // 16)):
                _close(batch[s], system.forward_dynamics(Q[s], V[s], TAU[s]))


# ----------------------------------------------------------------------------- errors, by state
def _arm(kind=RigidBody):
    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    return MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                            kind("b", "a", Revolute([1, 0, 0]), inertia)])


def test_a_state_that_is_not_finite_is_named():
    system = _arm()
    Q, V, TAU = _batch(system, L + 1, 5)
    V[3, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r"first at index \[3, 1\]"):
        system.forward_dynamics(Q, V, TAU)


def test_a_state_that_is_not_a_number_stays_in_its_lane():
    """The lane kernel itself (the engine refuses such a batch before it), on a batch of two
    threads' runs of blocks and a tail: a NaN velocity in a lane of the second run makes that state's result not
    finite and leaves every other state's, its block's neighbours included, equal to its single
    call."""
    system = rigid_forest(9)
    assert _taken(system)
    B, bad = 2 * C * L + 5, C * L + L + 1  # a lane of the second thread's run of blocks
    Q, V, TAU = _batch(system, B, 9)
    V[bad, 0] = np.nan
    engine = system._engine
    w = engine._request_vector(REQUESTS["forward_dynamics"], np.dtype(np.float64), kernels=False)
    out, status = np.zeros((B, system.nv)), np.full(B, -1, dtype=np.int64)
    lanes.forward_dynamics(w, Q, V, TAU, out, status, engine._lane_sizes)
    assert not np.isfinite(out[bad]).all() or status[bad] != -1
    for s in range(B):
        if s != bad:
            assert status[s] == -1
            _close(out[s], system.forward_dynamics(Q[s], V[s], TAU[s]))


class _OverflowingSpring(RigidBody):
    """A rigid body with a hinge spring in Python that overflows for ``q > 0.9``."""

    def hinge_force(self, q, qd):
        return np.exp(800.0 * q[:1]) + 0.0 * qd


def test_an_overflowing_hinge_force_names_its_state():
    system = _arm(_OverflowingSpring)
    assert _taken(system)
    Q, V, TAU = _batch(system, L + 2, 6)
    Q[:, 1] = 0.3
    Q[L + 1, 1] = 1.0
    with np.errstate(over="ignore"), pytest.raises(NonFiniteError, match=f"state {L + 1} of the batch"):
        system.forward_dynamics(Q, V, TAU)


@hinge_force_kernel
def _spring(q, v, constants, out):
    out[0] = 3.0 * q[0] + 0.5 * v[0]
    return True


class _CompiledSpring(RigidBody):
    """A rigid body with a spring and a damper across its hinge, compiled too."""

    def hinge_force(self, q, qd):
        return 3.0 * q[:1] + 0.5 * qd

    def compiled_state(self):
        state = pack_rigid(self)  # the library's rigid kernel, with the hinge force compiled
        return CompiledState(state.kernel, state.constants, state.scratch, hinge_force=_spring)


def test_compiled_hinge_forces_are_subtracted_per_state():
    system = _arm(_CompiledSpring)
    assert _taken(system)
    _equal_to_single_calls(system, *_batch(system, L + 1, 7))


def test_a_d_that_is_not_positive_definite_names_its_state():
    """A body of zero mass and inertia on a hinge: ``D = 0`` at every state, the per-state
    path's error, naming the first state of the batch."""
    inertia = spatial_inertia(1.0, [0.1, 0.0, -0.3], np.diag([0.02, 0.03, 0.04]))
    system = MultibodySystem([RigidBody("a", None, Revolute([0, 1, 0]), inertia),
                              RigidBody("tip", "a", Revolute([1, 0, 0]), np.zeros((6, 6)))])
    assert _taken(system)
    Q, V, TAU = _batch(system, L + 1, 8)
    with pytest.raises(NotPositiveDefiniteError) as single:
        system.forward_dynamics(Q[0], V[0], TAU[0])
    with pytest.raises(NotPositiveDefiniteError, match="state 0 of the batch") as batch:
        system.forward_dynamics(Q, V, TAU)
    assert str(single.value) in str(batch.value)


# ----------------------------------------------------------------------------- inverse dynamics
def _inverse_equal_to_single_calls(system, Q, V, A):
    """Each state's batched ``T = ℳ θ̈ + 𝒞 + hinge`` equals its single call to 1e-13 relative to
    the largest entry (no solve: no condition to amplify the two paths' rounding)."""
    batch = system.inverse_dynamics(Q, V, A)
    assert batch.shape == (Q.shape[0], system.nv)
    for s in range(Q.shape[0]):
        _close(batch[s], system.inverse_dynamics(Q[s], V[s], A[s]))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(SIZES))
def test_inverse_dynamics_batch_equals_single_calls_on_random_rigid_forests(seed, B):
    system = rigid_forest(seed)
    assert _taken(system)
    _inverse_equal_to_single_calls(system, *_batch(system, B, seed))


def test_inverse_dynamics_of_example_robots():
    for _, _, system in example_robots():
        for B in (L + 1, 2 * C * L + 5, 1024):
            Q, V, A = _batch(system, B, B)
            batch = system.inverse_dynamics(Q, V, A)
            for s in range(0, B, max(1, B // 16)):
                _close(batch[s], system.inverse_dynamics(Q[s], V[s], A[s]))


def test_inverse_dynamics_adds_compiled_hinge_forces_per_state():
    system = _arm(_CompiledSpring)
    assert _taken(system)
    _inverse_equal_to_single_calls(system, *_batch(system, L + 1, 7))


def test_inverse_dynamics_of_other_body_types_keeps_the_per_state_batch():
    system = next(s for s in (random_system(seed) for seed in range(6)) if not _taken(s))
    _inverse_equal_to_single_calls(system, *_batch(system, L + 1, 2))


# ----------------------------------------------------------------------------- the mass matrix
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(SIZES))
def test_mass_matrix_batch_equals_single_calls_on_random_rigid_forests(seed, B):
    """The ten-parameter recursion in the lanes against the single call's: equal to 1e-13 relative
    to the largest entry, exactly symmetric, and exactly zero at the pairs of unrelated hinge
    columns (SKO.md Eq. 15), as the single call is (every entry of the batch's result is written
    by the lanes: it is not zeroed first)."""
    system = rigid_forest(seed)
    assert _taken(system)
    Q = configurations(system, seed, B)
    batch = system.mass_matrix(Q)
    assert batch.shape == (B, system.nv, system.nv)
    related = _related(system)
    for s in range(B):
        single = system.mass_matrix(Q[s])
        _close(batch[s], single)
        np.testing.assert_array_equal(batch[s], batch[s].T)
        assert (batch[s][~related] == 0).all() and (single[~related] == 0).all()


def _related(system) -> np.ndarray:
    """``nv × nv``: whether two hinge columns are of one body or of a body and its ancestor."""
    layout = np.array(system._engine.layout.request_layout)
    related = np.zeros((system.nv, system.nv), dtype=bool)
    for k in range(layout.shape[0]):
        a, cols = k, slice(layout[k, Flat.DOF], layout[k, Flat.DOF] + layout[k, Flat.HINGE_DIM])
        while a >= 0:
            rows = slice(layout[a, Flat.DOF], layout[a, Flat.DOF] + layout[a, Flat.HINGE_DIM])
            related[rows, cols] = related[cols, rows] = True
            a = layout[a, Flat.PARENT]
    return related


@pytest.mark.parametrize("B", [L - 1, L + 1, 2 * L + 3])
def test_mass_matrix_lanes_write_every_entry_of_each_state(B):
    """The lanes' ℳ into a result filled with NaN (the batch's comes from ``np.empty``): every
    entry of every state is written — the pairs of unrelated hinge columns as exact zeros, each
    matrix exactly symmetric and equal to its single call to rounding."""
    system = rigid_forest(0)  # three trees
    assert _taken(system)
    Q = configurations(system, 11, B)
    engine = system._engine
    w = engine._request_vector(REQUESTS["mass_matrix"], Q.dtype, kernels=False)
    out, status = np.full((B, system.nv ** 2), np.nan), np.full(B, -1)
    lanes.evaluate(lanes.REQUESTS["mass_matrix"], w, Q, np.zeros((B, system.nv)), np.zeros((B, 0)), out, status,
                   engine._lane_sizes)
    assert (status == -1).all()
    related = _related(system)
    assert not related.all()  # a forest: some pairs are unrelated
    for s in range(B):
        M = out[s].reshape(system.nv, system.nv)
        assert np.isfinite(M).all()
        assert (M[~related] == 0).all()
        np.testing.assert_array_equal(M, M.T)
        _close(M, system.mass_matrix(Q[s]))


def test_mass_matrix_that_overflows_in_one_lane_is_reported_for_that_state():
    """A prismatic joint along its parent's revolute axis, pushed to 1e160: the body's inertia about
    the root's origin overflows (``m p²``), so that state's ℳ is not finite. The lanes give it
    status −3 and no other state of its block (:func:`~sko.engine.lanes.evaluate`), and the batch
    raises the single call's error, naming the state."""
    rng = np.random.default_rng(4)
    system = MultibodySystem([
        RigidBody("a", None, Revolute([0.0, 0.0, 1.0]), inertia(rng)),
        RigidBody("b", "a", Prismatic([0.0, 0.0, 1.0]), inertia(rng), pose_transform([0.3, 0.0, 0.0])),
        RigidBody("c", "b", Revolute([0.0, 1.0, 0.0]), inertia(rng), pose_transform([0.0, 0.2, 0.0]))])
    assert _taken(system)
    B, bad = 2 * L + 1, L + 1
    Q = configurations(system, 4, B)
    Q[bad, 1] = 1e160
    engine = system._engine
    w = engine._request_vector(REQUESTS["mass_matrix"], Q.dtype, kernels=False)
    out, status = np.empty((B, system.nv ** 2)), np.full(B, -1)
    lanes.evaluate(lanes.REQUESTS["mass_matrix"], w, Q, np.zeros((B, system.nv)), np.zeros((B, 0)), out, status, engine._lane_sizes)
    assert status.tolist() == [-3 if s == bad else -1 for s in range(B)]
    with pytest.raises(NonFiniteError, match="overflows"):
        system.mass_matrix(Q[bad])
    with pytest.raises(NonFiniteError, match=f"state {bad} of the batch"):
        system.mass_matrix(Q)
    good = np.delete(Q, bad, axis=0)
    for s, M in enumerate(system.mass_matrix(good)):
        _close(M, system.mass_matrix(good[s]))


def test_mass_matrix_of_example_robots():
    for _, _, system in example_robots():
        for B in (L + 1, 1024):
            Q = configurations(system, B, B)
            batch = system.mass_matrix(Q)
            for s in range(0, B, max(1, B // 16)):
                _close(batch[s], system.mass_matrix(Q[s]))


# ----------------------------------------------------------------------------- sine and cosine
@njit
def _sine_cosine(x, s, c):
    for i in range(x.shape[0] // L):
        a, b = lanes.sine_cosine(lanes.row(x, i))
        lanes.set_row(s, i, a)
        lanes.set_row(c, i, b)


def test_sine_and_cosine_in_the_lanes_are_libms_to_a_unit_of_rounding():
    """Within 2 units of rounding of numpy's (libm's) relative to the value, or one of 1, up to
    ``REDUCED``; NaN for a NaN or an infinity."""
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-8, 8, 40000), rng.uniform(-1e4, 1e4, 4000), rng.uniform(-1e8, 1e8, 4000),
                        [0.0, -0.0, np.pi / 4, np.pi / 2, np.pi, -np.pi, 1e-300, lanes.REDUCED]])
    x = np.concatenate([x, np.zeros(-x.size % L)])
    s, c = np.empty_like(x), np.empty_like(x)
    _sine_cosine(x, s, c)
    for ours, libm in ((s, np.sin(x)), (c, np.cos(x))):
        assert (np.abs(ours - libm) <= 2 * np.spacing(np.maximum(np.abs(libm), 1.0))).all()
        typical = np.abs(libm) > 1e-3
        assert (np.abs(ours - libm)[typical] <= 2 * np.spacing(np.abs(libm[typical]))).all()
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    s, c = np.empty_like(x), np.empty_like(x)
    _sine_cosine(x, s, c)
    assert np.isnan(s[:3]).all() and np.isnan(c[:3]).all()
    assert abs(s[3] - np.sin(1.0)) <= 2 * np.spacing(1.0) and abs(c[3] - np.cos(1.0)) <= 2 * np.spacing(1.0)


def test_angles_beyond_the_reduction_take_libm():
    """A revolute angle of 10⁹ (beyond ``REDUCED``) in a batch: libm's sine and cosine in its lane,
    the batch equal to the single calls."""
    system = _arm()
    assert _taken(system)
    Q, V, TAU = _batch(system, L + 1, 5)
    Q[1, 0] += 1e9
    Q[2, 1] -= 3e8
    _equal_to_single_calls(system, Q, V, TAU)


# ----------------------------------------------------------------------------- floating bases
def _floating_forest(seed: int):
    """``(system, free bodies)``: a random forest of one to three floating bases (free roots), each
    carrying a random subtree of library joints, free joints among them (a free body below a
    body)."""
    rng = np.random.default_rng(seed)
    roots = int(rng.integers(1, 4))
    bodies, free = [], []
    for i in range(roots + int(rng.integers(0, 8))):
        parent = None if i < roots else f"b{int(rng.integers(i))}"
        joint = Free() if parent is None or rng.random() < 0.2 else JOINTS[int(rng.integers(len(JOINTS)))](rng)
        if isinstance(joint, Free):
            free.append(f"b{i}")
        placement = sp.pose_transform(rng.normal(size=3) * 2.0, rng.uniform(-np.pi, np.pi, 3))
        bodies.append(RigidBody(f"b{i}", parent, joint, inertia(rng), placement))
    return MultibodySystem(bodies, gravity=rng.normal(size=3)), free


def _floating_batch(system, free, B: int, seed: int):
    """:func:`_batch` with each free body's quaternion scaled by ``10^{±4}`` (not normalised; a
    non-unit quaternion is the rotation of ``q/‖q‖``) and its angular velocity up to ``10³``."""
    Q, V, TAU = _batch(system, B, seed)
    rng = np.random.default_rng(seed + 1)
    for name in free:
        q, v = system.q_slice(name), system.v_slice(name)
        Q[:, q.start: q.start + 4] *= 10.0 ** rng.uniform(-4, 4, size=(B, 1))
        V[:, v.start: v.start + 3] *= 10.0 ** rng.uniform(0, 3, size=(B, 1))
    return Q, V, TAU


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(SIZES))
def test_floating_bases_in_the_lanes_equal_single_calls(seed, B):
    """Free joints (roots and below a body) are filled in the lanes: each state equals its single
    call to 1e-13 relative to the largest entry, plus the rounding ℳ's condition amplifies
    (:func:`_equal_to_single_calls`); inverse dynamics and ℳ to 1e-13."""
    system, free = _floating_forest(seed)
    assert _taken(system)
    Q, V, TAU = _floating_batch(system, free, B, seed)
    _equal_to_single_calls(system, Q, V, TAU, conditioned=False)
    _inverse_equal_to_single_calls(system, Q, V, TAU)
    batch = system.mass_matrix(Q)
    for s in range(B):
        _close(batch[s], system.mass_matrix(Q[s]))


@pytest.mark.parametrize("quaternion", [(0.0, 0.0, 0.0, 0.0), (1e-10, 0.0, -1e-10, 0.0)])
def test_a_quaternion_the_joint_rejects_names_its_state(quaternion):
    """A zero or tiny quaternion in one lane of a block: the batch raises the single call's error,
    naming that state."""
    system, free = _floating_forest(3)
    Q, V, TAU = _floating_batch(system, free, 2 * L + 1, 3)
    q = system.q_slice("b0")  # a floating base
    Q[L + 2, q.start: q.start + 4] = quaternion
    with pytest.raises(JointError) as single:
        system.forward_dynamics(Q[L + 2], V[L + 2], TAU[L + 2])
    with pytest.raises(JointError, match=f"state {L + 2} of the batch") as batch:
        system.forward_dynamics(Q, V, TAU)
    assert str(single.value) in str(batch.value)


def test_rejected_quaternions_get_the_per_state_status_in_their_lanes():
    """The lane kernel itself against the per-state batch kernel, on a batch of two threads' runs
    of blocks and a tail, every free body's quaternion zero, tiny, NaN or infinite in some lanes
    (the engine refuses a non-finite batch before either) and of size 10²⁵⁰ in another: the same
    status for every state (the first row rejecting it), and every other state's result equal to
    the per-state kernel's."""
    for seed in range(4):
        system, free = _floating_forest(seed)
        assert _taken(system)
        B = 2 * C * L + 5
        Q, V, TAU = _floating_batch(system, free, B, seed)
        rng = np.random.default_rng(seed)
        for name in free:
            q = system.q_slice(name)
            for s, bad in zip(rng.choice(B, 5, replace=False), (0.0, 1e-12, np.nan, np.inf, 1e250)):
                if bad in (0.0, 1e-12):
                    Q[s, q.start: q.start + 4] = bad
                elif bad == 1e250:  # accepted: the rotation of q/‖q‖
                    Q[s, q.start: q.start + 4] *= bad
                else:
                    Q[s, q.start + int(rng.integers(4))] = bad
        engine, name = system._engine, "forward_dynamics"
        results = []
        for lane_kernel in (True, False):
            out, status = np.zeros((B, system.nv)), np.full(B, -1, dtype=np.int64)
            if lane_kernel:
                w = engine._request_vector(REQUESTS[name], np.dtype(np.float64), kernels=False)
                lanes.forward_dynamics(w, Q, V, TAU, out, status, engine._lane_sizes)
            else:
                w = engine._request_vector(REQUESTS[name], np.dtype(np.float64))
                evaluate_batch(w, Q, V, TAU, np.zeros((0, engine.layout.size)), out, status)
            results.append((out, status))
        (out, status), (expected, expected_status) = results
        np.testing.assert_array_equal(status, expected_status)
        assert (status >= 0).any() and (status == -1).any()
        for s in np.flatnonzero(status == -1):
            _close(out[s], expected[s])
