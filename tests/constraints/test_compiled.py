"""The compiled constrained and impulse dynamics (sko.engine.constrained, sko.constraints.compiled)
against the reference path on random trees with random constraint sets, every system kind, a
batch against its states one by one, and the states it hands to the proximal reference path
(redundant, inconsistent constraints) inside a batch."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.constraints import FrameConstraint, FrameContact, InconsistentConstraintsError, PointContact
from sko.constraints.compiled import plan_of
from sko.constraints.dynamics import reference_constrained_dynamics, reference_impulse_dynamics
from sko.examples.bodies import flexible_two_link
from sko.examples.embedding import four_bar
from sko.examples.rigid import humanoid, planar_chain
from sko.systems import SystemBuilder
from sko.engine.dispatch import use_backend
from sko.bodies import Free
from tests.constraints.test_dense_kkt import _kkt, _random_constraints
from tests.rigid.random_systems import random_rigid_system


def _close(ours, reference, tol):
    np.testing.assert_allclose(ours, reference, rtol=0, atol=tol * (1 + np.abs(reference).max(initial=0.0)))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.floats(0.0, 1.0))
def test_compiled_equals_reference_on_random_trees(seed, e):
    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=6)
    constraints = _random_constraints(system, rng, int(rng.integers(1, 4)))
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    try:
        dv_r, lam_r = reference_constrained_dynamics(system, q, v, tau, constraints)
    except InconsistentConstraintsError as exc:
        with pytest.raises(InconsistentConstraintsError, match="residual") as info:
            system.constrained_dynamics(q, v, tau, constraints)
        assert info.value.residual == pytest.approx(exc.residual, rel=1e-6)
        return
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    _close(dv, dv_r, 1e-9)
    _close(lam, lam_r, 1e-8)
    dv_k, lam_k, *_ = _kkt(system, q, v, tau, constraints)
    _close(dv, dv_k, 1e-6)
    v_plus, impulses = system.impulse_dynamics(q, v, constraints, restitution=e)
    v_r, impulses_r = reference_impulse_dynamics(system, q, v, constraints, e)
    _close(v_plus, v_r, 1e-9)
    _close(impulses, impulses_r, 1e-8)


@pytest.mark.parametrize("make, constraints", [
    (flexible_two_link, [PointContact(("lower", "tip"), reference="local"),
                         FrameConstraint(("upper", "tip"), "lower", directions=(5, 0), reference="world",
                                         baumgarte=(2.0, 1.0))]),
    (four_bar, [FrameConstraint("rocker", directions=(0, 4), reference="local_world_aligned")]),
    (humanoid, [FrameContact("left_sole", baumgarte=(0.0, 3.0)), PointContact("right_sole", reference="local"),
                FrameConstraint("left_hand", "right_hand", directions=(0, 1, 2, 3, 4), reference="world")]),
], ids=["flexible", "clustered", "humanoid"])
def test_every_system_kind_equals_the_reference(make, constraints):
    """Flexible bodies (their drift from the records' ``Γ_o α + γ_o`` against the reference's
    complex step), a cluster's members (their records in the cluster node), named frames."""
    system = make()
    rng = np.random.default_rng(5)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    dv_r, lam_r = reference_constrained_dynamics(system, q, v, tau, constraints)
    _close(dv, dv_r, 1e-9)
    _close(lam, lam_r, 1e-8)
    v_plus, impulses = system.impulse_dynamics(q, v, constraints, restitution=0.5)
    v_r, impulses_r = reference_impulse_dynamics(system, q, v, constraints, 0.5)
    _close(v_plus, v_r, 1e-9)
    _close(impulses, impulses_r, 1e-8)
    with use_backend("reference"):  # the reference backend takes the reference path
        dv_b, lam_b = system.constrained_dynamics(q, v, tau, constraints)
    _close(dv_b, dv_r, 1e-12)


def _box():
    b = SystemBuilder(gravity=[0, 0, -9.81])
    b.add_body("box", None, Free(), mass=2.0, com=[0.1, 0.0, 0.05], inertia_com=np.diag([0.1, 0.2, 0.3]))
    return b.build()


def test_a_batch_equals_its_states_with_redundant_states_answered_by_the_proximal_path():
    """Parallel chunks of states; the states at rest make the doubled contact redundant and
    consistent (Ω singular): the kernel hands them to the proximal iterations, no NaN."""
    system = _box()
    rng = np.random.default_rng(7)
    P = np.eye(4)
    P[:3, 3] = [0.2, 0.1, 0.3]
    constraints = (PointContact("box"), PointContact("box"), PointContact("box", placement=P))
    B = 40
    Q = np.stack([system.random_configuration(rng) for _ in range(B)])
    V = np.zeros((B, system.nv))
    T = rng.normal(size=(B, system.nv))
    dv, lam = system.constrained_dynamics(Q, V, T, constraints)
    assert dv.shape == (B, system.nv) and lam.shape == (B, 9)
    assert np.isfinite(dv).all() and np.isfinite(lam).all()
    for s in (0, 17, B - 1):
        dv_k, lam_k, *_ = _kkt(system, Q[s], V[s], T[s], constraints)
        _close(dv[s], dv_k, 1e-8)
        _close(lam[s], lam_k, 1e-6)


def test_a_batch_equals_its_states_one_by_one():
    system = humanoid()
    rng = np.random.default_rng(3)
    constraints = [FrameContact("left_sole", reference="local_world_aligned"), PointContact("right_sole"),
                   FrameConstraint("left_hand", None, None, np.eye(4), (0, 2, 4), "world", (4.0, 2.0))]
    B = 37  # chunks of 16 and a partial one
    Q = np.stack([system.random_configuration(rng) for _ in range(B)])
    V, T = rng.normal(size=(2, B, system.nv))
    dv, lam = system.constrained_dynamics(Q, V, T, constraints)
    v_plus, impulses = system.impulse_dynamics(Q, V, constraints, restitution=0.2)
    for s in range(B):
        d1, l1 = system.constrained_dynamics(Q[s], V[s], T[s], constraints)
        _close(dv[s], d1, 1e-12)
        _close(lam[s], l1, 1e-12)
        p1, i1 = system.impulse_dynamics(Q[s], V[s], constraints, restitution=0.2)
        _close(v_plus[s], p1, 1e-12)
        _close(impulses[s], i1, 1e-12)
    dv_r, lam_r = reference_constrained_dynamics(system, Q[:3], V[:3], T[:3], constraints)
    _close(dv[:3], dv_r, 1e-9)
    _close(lam[:3], lam_r, 1e-8)


def test_inconsistent_states_of_a_batch_are_named():
    chain = planar_chain(2)
    T1, T2 = np.eye(4), np.eye(4)
    T2[:3, 3] = [0.5, 0.0, 0.0]
    weld = [FrameContact("link2", target=T1, baumgarte=(10.0, 0.0)),
            FrameContact("link2", target=T2, baumgarte=(10.0, 0.0), placement=np.eye(4))]
    Q = np.array([[0.3, -0.2], [0.1, 0.4]])
    with pytest.raises(InconsistentConstraintsError, match=r"state 0 of the batch: .*residual"):
        chain.constrained_dynamics(Q, np.zeros((2, 2)), np.zeros((2, 2)), weld)


def test_inputs_the_direct_call_declines_take_the_checked_path():
    """Lists, read-only and non-contiguous arrays give the same answer; bad shapes and
    non-finite inputs the reference path's errors."""
    from sko.graphs.errors import DimensionError, NonFiniteError

    system = humanoid()
    rng = np.random.default_rng(9)
    constraints = [FrameContact("left_sole"), PointContact("right_sole", reference="local")]
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    frozen = q.copy()
    frozen.flags.writeable = False
    strided = np.repeat(v, 2)[::2]
    for args in ((list(q), list(v), list(tau)), (frozen, strided, tau)):
        d, l = system.constrained_dynamics(*args, constraints)
        _close(d, dv, 1e-14)
        _close(l, lam, 1e-14)
    assert not frozen.flags.writeable and np.array_equal(frozen, q)
    with pytest.raises(DimensionError):
        system.constrained_dynamics(q[:-1], v, tau, constraints)
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(NonFiniteError):
        system.constrained_dynamics(q, bad, tau, constraints)


def test_plans_are_kept_per_constraint_set_and_constraints_are_values():
    from sko.constraints import ConstraintError

    system = planar_chain(3)
    a = [PointContact("tip")]
    b = [PointContact("tip")]  # other objects, same contents: the same plan
    assert plan_of(system, a, 1e8) is plan_of(system, tuple(a), 1e8) is plan_of(system, b, 1e8)
    assert plan_of(system, [PointContact("tip", reference="local")], 1e8) is not plan_of(system, a, 1e8)
    with pytest.raises(ConstraintError, match="cannot be changed"):
        a[0].reference = "local"
    by_identity, by_contents = system._engine.constraint_plans  # the plans are the engine's own
    assert by_identity[tuple(a)] is plan_of(system, a, 1e8) and plan_of(system, a, 1e8) in by_contents.values()
    other = planar_chain(3)
    assert plan_of(other, a, 1e8) is not plan_of(system, a, 1e8)  # each engine packs its own
    assert other._engine.constraint_plans[0][tuple(a)] is plan_of(other, a, 1e8)


def test_the_prepared_call_equals_the_checked_path_and_leaves_generators_alone():
    """The common call (a plan already made) answers as the checked path does, for the dynamics
    and for impacts of different restitutions on one plan; a generator of constraints is
    refused as on a first call."""
    from sko.constraints import ConstraintError

    system = humanoid()
    rng = np.random.default_rng(4)
    constraints = [FrameContact("left_sole"), PointContact("right_sole", reference="world")]
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    system.constrained_dynamics(q, v, tau, constraints)  # makes the plan
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    Dv, Lam = system.constrained_dynamics(q[None], v[None], tau[None], constraints)  # the batch path
    _close(dv, Dv[0], 1e-14)
    _close(lam, Lam[0], 1e-14)
    with pytest.raises(ConstraintError, match="got generator"):  # refused as on the first call, not looked up
        system.constrained_dynamics(q, v, tau, (c for c in constraints))
    for e in (0.0, 1.0, 0.5):
        vp, imp = system.impulse_dynamics(q, v, constraints, restitution=e)
        Vp, Imp = system.impulse_dynamics(q[None], v[None], constraints, restitution=e)
        _close(vp, Vp[0], 1e-14)
        _close(imp, Imp[0], 1e-14)
        J = system.constraint_jacobian(q, constraints)
        _close(J @ vp, -e * (J @ v), 1e-9)


def test_the_kernel_answers_well_posed_states_and_hands_on_redundant_ones():
    """The statuses behind the public calls: −1 (answered) for two feet of a humanoid,
    RANK_DEFICIENT for one contact given twice (the proximal path answers it)."""
    from sko.engine.constrained import RANK_DEFICIENT
    from sko.constraints.compiled import _vector
    from sko.engine import requests as rq

    system = humanoid()
    rng = np.random.default_rng(2)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    for constraints, expected in (([FrameContact("left_sole"), PointContact("right_sole")], -1),
                                  ([PointContact("right_sole"), PointContact("right_sole")], RANK_DEFICIENT)):
        plan = plan_of(system, constraints, 1e8)
        w = _vector(plan, system._engine.layout, False, np.float64)
        out = np.zeros(system.nv + plan.rows)
        assert rq.evaluate_one(w, q, v, tau, out) == expected
        if expected == -1:
            dv, lam = system.constrained_dynamics(q, v, tau, constraints)
            np.testing.assert_array_equal(out, np.concatenate([dv, lam]))


def test_complex_states_take_the_reference_path():
    system = humanoid()
    rng = np.random.default_rng(4)
    constraints = [FrameContact("left_sole")]
    q = system.random_configuration(rng) + 0j
    v, tau = rng.normal(size=(2, system.nv)) + 0j
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    dv_r, lam_r = reference_constrained_dynamics(system, q, v, tau, constraints)
    assert dv.dtype.kind == "c"
    np.testing.assert_array_equal(dv, dv_r)
    np.testing.assert_array_equal(lam, lam_r)
