"""Constrained dynamics against the dense KKT solve on random rigid trees with random constraint
sets (CONSTRAINTS.md §3), the drift against finite differences of the frames'
motion, redundant and inconsistent sets, impulses."""

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from sko.constraints import (ConstraintError, FrameConstraint, FrameContact, InconsistentConstraintsError,
                             PointContact, constraint_compliance)
from sko.constraints.kinematics import constraint_error
from sko.examples.bodies import flexible_two_link
from sko.examples.embedding import four_bar
from sko.examples.rigid import arm7, humanoid, planar_chain
from sko.spatial import axis_angle_matrix
from sko.systems import SystemBuilder
from sko.bodies import Free
from tests.rigid.random_systems import random_rigid_system

REFERENCES = ("local", "world", "local_world_aligned")


def _pose(rng):
    T = np.eye(4)
    axis = rng.normal(size=3)
    T[:3, :3] = axis_angle_matrix(axis / np.linalg.norm(axis), rng.uniform(-np.pi, np.pi))
    T[:3, 3] = rng.normal(size=3) * 0.3
    return T


def _random_constraints(system, rng, count: int):
    bodies = list(system.bodies)
    out = []
    for _ in range(count):
        frame = bodies[int(rng.integers(len(bodies)))]
        others = [b for b in bodies if b != frame]
        other = others[int(rng.integers(len(others)))] if others and rng.random() < 0.4 else None
        k = int(rng.integers(1, 7))
        directions = tuple(int(d) for d in rng.permutation(6)[:k])
        gains = (float(rng.uniform(0, 10)), float(rng.uniform(0, 5))) if rng.random() < 0.5 else (0.0, 0.0)
        out.append(FrameConstraint(frame, other, _pose(rng), _pose(rng), directions,
                                   REFERENCES[int(rng.integers(3))], gains))
    return out


def _kkt(system, q, v, tau, constraints):
    """The dense answer: ``ℳ v̇ = τ − 𝒞 + Jᵀ λ``, ``J v̇ = a_ref − γ``, λ of minimum norm."""
    M, C = system.mass_matrix(q), system.bias_forces(q, v)
    J, gamma = system.constraint_jacobian(q, constraints), system.constraint_drift(q, v, constraints)
    e = constraint_error(system, q, constraints)
    kp = np.concatenate([np.full(c.dimension, c.baumgarte[0]) for c in constraints])
    kd = np.concatenate([np.full(c.dimension, c.baumgarte[1]) for c in constraints])
    a_ref = -kp * e - kd * (J @ v)
    Minv = np.linalg.inv(M)
    dv_free = Minv @ (tau - C)
    Omega = J @ Minv @ J.T
    # minimum norm, directions of Ω below 1e-10 of the inertia's scale left out: a row of J at
    # rounding (2e-16) is a direction no joint moves, not one to reach with a force of 1e32
    w, U = np.linalg.eigh(0.5 * (Omega + Omega.T))
    keep = w > 1e-10 * max(np.abs(w).max(initial=0.0), np.abs(Minv).max())
    lam = U[:, keep] @ ((U[:, keep].T @ (a_ref - gamma - J @ dv_free)) / w[keep])
    return dv_free + Minv @ J.T @ lam, lam, Omega, J, a_ref, gamma


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
@example(seed=70000)  # more rows than joints (m = 2, nv = 1): λ is not unique
@example(seed=19610679)  # a row of J at rounding (2e-16), asking for an acceleration: inconsistent
def test_constrained_dynamics_equals_dense_kkt(seed):
    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=6)
    constraints = _random_constraints(system, rng, int(rng.integers(1, 3)))
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    dv_k, lam_k, Omega, J, a_ref, gamma = _kkt(system, q, v, tau, constraints)
    w = np.linalg.svd(J, compute_uv=False)
    consistent = np.linalg.norm(J @ dv_k - (a_ref - gamma)) <= 1e-8 * (1 + np.linalg.norm(a_ref - gamma))
    if not consistent:
        with pytest.raises(InconsistentConstraintsError, match="residual"):
            system.constrained_dynamics(q, v, tau, constraints)
        return
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    scale = 1 + np.abs(dv_k).max()
    np.testing.assert_allclose(dv, dv_k, rtol=0, atol=1e-7 * scale * (1 if w.min() > 1e-6 * w.max() else 1e2))
    np.testing.assert_allclose(J @ dv + gamma, a_ref, rtol=0, atol=1e-7 * scale * (1 + np.abs(J).max()))
    np.testing.assert_allclose(constraint_compliance(system, q, constraints), Omega, rtol=0,
                               atol=1e-10 * (1 + np.abs(Omega).max()))
    if len(w) == len(lam_k) and w.min() > 1e-4 * w.max():  # λ is unique: J has full row rank (m ≤ nv)
        np.testing.assert_allclose(lam, lam_k, rtol=0, atol=1e-7 * (1 + np.abs(lam_k).max()))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_drift_is_the_constraint_acceleration(seed):
    """``J v̇ + γ`` is the second derivative of the constraint's motion: along ``q(t) = q ⊕ t v``
    (``v̇ = 0``), a central difference of ``J(q(t)) v`` (frame rows) or of the point velocity."""
    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=5, constant_motion=True)
    constraints = _random_constraints(system, rng, 1)
    q = system.random_configuration(rng)
    v = rng.normal(size=system.nv)
    c = constraints[0]
    gamma = system.constraint_drift(q, v, constraints)
    h = 1e-5
    Jv = [system.constraint_jacobian(system.integrate(q, v, t), constraints) @ v for t in (-h, h)]
    fd = (Jv[1] - Jv[0]) / (2 * h)
    from sko.constraints.kinematics import constraint_frame_pose

    T1 = constraint_frame_pose(system, q, c)
    R1, p1 = T1[:3, :3], T1[:3, 3]
    if c.point and c.reference == "local":  # classical: R1ᵀ d/dt (ṗ1 − ṗ2), R1 held at q
        lwa = [FrameConstraint(c.frame, c.other, c.placement, c.other_placement, (0, 1, 2), "local_world_aligned")]
        Jw = [system.constraint_jacobian(system.integrate(q, v, t), lwa) @ v for t in (-h, h)]
        fd = (R1.T @ ((Jw[1] - Jw[0]) / (2 * h)))[list(c.directions)]
    elif not c.point:  # the local relative acceleration, its axes (and origin) held at q
        local = [FrameConstraint(c.frame, c.other, c.placement, c.other_placement, range(6), "local")]
        Jl = [system.constraint_jacobian(system.integrate(q, v, t), local) @ v for t in (-h, h)]
        g = (Jl[1] - Jl[0]) / (2 * h)
        lin, ang = R1 @ g[:3], R1 @ g[3:]
        if c.reference == "local":
            lin, ang = g[:3], g[3:]
        elif c.reference == "world":
            lin = lin + np.cross(p1, ang)
        fd = np.concatenate([lin, ang])[list(c.directions)]
    np.testing.assert_allclose(gamma, fd, rtol=0, atol=1e-5 * (1 + np.abs(fd).max()))


def test_redundant_constraints_give_the_least_squares_answer_without_nan():
    """Two 3-D contacts on one body of a floating box, plus the same contact twice: Ω singular."""
    b = SystemBuilder(gravity=[0, 0, -9.81])
    b.add_body("box", None, Free(), mass=2.0, com=[0.1, 0.0, 0.05], inertia_com=np.diag([0.1, 0.2, 0.3]))
    system = b.build()
    rng = np.random.default_rng(3)
    q = system.random_configuration(rng)
    v, tau = np.zeros(system.nv), rng.normal(size=system.nv)  # at rest: redundant and consistent (moving, the
    P = np.eye(4)                                             # second point's centripetal term would contradict)
    P[:3, 3] = [0.2, 0.1, 0.3]
    constraints = [PointContact("box"), PointContact("box"), PointContact("box", placement=P),
                   FrameContact("box", reference="local_world_aligned")]
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    dv_k, lam_k, *_ = _kkt(system, q, v, tau, constraints)
    assert np.isfinite(dv).all() and np.isfinite(lam).all()
    np.testing.assert_allclose(dv, dv_k, atol=1e-8)
    np.testing.assert_allclose(lam, lam_k, atol=1e-6 * (1 + np.abs(lam_k).max()))  # the minimum-norm forces


def test_inconsistent_welds_report_the_residual():
    chain = planar_chain(2)
    q = np.array([0.3, -0.2])
    T1, T2 = np.eye(4), np.eye(4)
    T2[:3, 3] = [0.5, 0.0, 0.0]
    weld = [FrameContact("link2", target=T1, baumgarte=(10.0, 0.0)),
            FrameContact("link2", target=T2, baumgarte=(10.0, 0.0), placement=np.eye(4))]
    with pytest.raises(InconsistentConstraintsError, match=r"residual .* = \d") as info:
        chain.constrained_dynamics(q, np.zeros(2), np.zeros(2), weld)
    assert info.value.residual > 1.0


def test_batched_equals_per_state():
    system = random_rigid_system(11, max_bodies=5)
    rng = np.random.default_rng(0)
    constraints = _random_constraints(system, rng, 1)
    Q = np.stack([system.random_configuration(rng) for _ in range(3)])
    V, T = rng.normal(size=(2, 3, system.nv))
    dv, lam = system.constrained_dynamics(Q, V, T, constraints)
    for s in range(3):
        d1, l1 = system.constrained_dynamics(Q[s], V[s], T[s], constraints)
        np.testing.assert_allclose(dv[s], d1, rtol=0, atol=1e-12 * (1 + np.abs(d1).max()))
        np.testing.assert_allclose(lam[s], l1, rtol=0, atol=1e-12 * (1 + np.abs(l1).max()))


def test_compiled_and_reference_paths_agree():
    from sko.engine import use_backend

    system = arm7()
    rng = np.random.default_rng(1)
    constraints = [PointContact("arm_link7", reference="local"),
                   FrameConstraint("arm_link5", None, _pose(rng), _pose(rng), (2, 4), "world", (3.0, 1.0))]
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    with use_backend("reference"):
        dv_r, lam_r = system.constrained_dynamics(q, v, tau, constraints)
    np.testing.assert_allclose(dv, dv_r, rtol=0, atol=1e-10 * (1 + np.abs(dv).max()))
    np.testing.assert_allclose(lam, lam_r, rtol=0, atol=1e-9 * (1 + np.abs(lam).max()))


@pytest.mark.parametrize("make, constraints", [
    (flexible_two_link, [PointContact(("lower", "tip")), FrameConstraint(("upper", "tip"), "lower", directions=(5,))]),
    (four_bar, [FrameConstraint("rocker", directions=(0,), reference="local_world_aligned")]),
    (humanoid, [FrameContact("left_sole"), PointContact("right_sole", reference="local"),
                FrameConstraint("left_hand", "right_hand", directions=(0, 1, 2, 3, 4), reference="world")]),
], ids=["flexible", "clustered", "humanoid"])
def test_every_system_kind_against_dense_kkt(make, constraints):
    system = make()
    rng = np.random.default_rng(4)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    dv_k, lam_k, Omega, *_ = _kkt(system, q, v, tau, constraints)
    dv, lam = system.constrained_dynamics(q, v, tau, constraints)
    np.testing.assert_allclose(dv, dv_k, rtol=0, atol=1e-9 * (1 + np.abs(dv_k).max()))
    np.testing.assert_allclose(lam, lam_k, rtol=0, atol=1e-8 * (1 + np.abs(lam_k).max()))
    np.testing.assert_allclose(constraint_compliance(system, q, constraints), Omega, rtol=0,
                               atol=1e-11 * (1 + np.abs(Omega).max()))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.floats(0.0, 1.0))
@example(seed=13585, e=0.0)  # two rows no joint can move (J is rounding noise)
def test_impulses_meet_restitution_and_never_add_energy(seed, e):
    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=6)
    constraints = [FrameConstraint(c.frame, c.other, c.placement, c.other_placement, c.directions, c.reference)
                   for c in _random_constraints(system, rng, int(rng.integers(1, 3)))]
    q = system.random_configuration(rng)
    v = rng.normal(size=system.nv)
    J = system.constraint_jacobian(q, constraints)
    v_plus, impulses = system.impulse_dynamics(q, v, constraints, restitution=e)
    assert np.isfinite(v_plus).all() and np.isfinite(impulses).all()
    np.testing.assert_allclose(J @ v_plus, -e * (J @ v), rtol=0, atol=1e-8 * (1 + np.abs(J @ v).max()))
    M = system.mass_matrix(q)
    assert v_plus @ M @ v_plus <= v @ M @ v * (1 + 1e-10) + 1e-12
    np.testing.assert_allclose(M @ (v_plus - v), J.T @ impulses, rtol=0, atol=1e-8 * (1 + np.abs(J.T @ impulses).max()))


def test_a_row_no_joint_can_move_takes_no_force_on_either_path():
    from sko.engine import use_backend
    from sko.graphs.errors import RankDeficientError

    system = random_rigid_system(3585, max_bodies=6)  # b1 turns about one axis of b0 only
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v = rng.normal(size=system.nv)
    welded = [FrameConstraint("b1", "b0", directions=(5, 4), reference="local")]
    J = system.constraint_jacobian(q, welded)
    assert np.abs(J).max() < 1e-12  # the rows are rounding noise
    for backend in ("compiled", "reference"):
        with use_backend(backend):
            v_plus, impulses = system.impulse_dynamics(q, v, welded)
            dv, lam = system.constrained_dynamics(q, v, np.zeros(system.nv), welded)
        np.testing.assert_array_equal(impulses, 0.0)
        np.testing.assert_array_equal(lam, 0.0)
        np.testing.assert_allclose(v_plus, v, rtol=0, atol=1e-12)
        np.testing.assert_allclose(dv, system.forward_dynamics(q, v, np.zeros(system.nv)), rtol=0, atol=1e-10)
    with pytest.raises(RankDeficientError, match="redundant"):
        system.constrained_operational_space_inertia(q, welded)


def test_operational_space_inertia_inverts_the_compliance_or_names_redundancy():
    from sko.graphs.errors import RankDeficientError

    system = random_rigid_system(8, max_bodies=6)
    q = system.random_configuration(np.random.default_rng(2))
    frame = system.bodies[-1]
    c = [PointContact(frame)]
    Omega = constraint_compliance(system, q, c)
    if np.linalg.cond(Omega) < 1e8:
        np.testing.assert_allclose(system.constrained_operational_space_inertia(q, c) @ Omega, np.eye(3), atol=1e-8)
    with pytest.raises(RankDeficientError, match="redundant"):
        system.constrained_operational_space_inertia(q, [PointContact(frame), PointContact(frame)])


@pytest.mark.parametrize("make, match", [
    (lambda: FrameConstraint("link1", directions=()), "directions is empty"),
    (lambda: FrameConstraint("link1", directions=(0, 7)), "not one of 0..5"),
    (lambda: FrameConstraint("link1", directions=(1, 1)), "repeat"),
    (lambda: FrameConstraint("link1", reference="body"), "reference must be one of"),
    (lambda: PointContact("link1", baumgarte=(-1.0, 0.0)), "kp must be a finite real number"),
    (lambda: PointContact("link1", baumgarte=(np.nan, 0.0)), "kp must be a finite real number"),
    (lambda: PointContact("link1", baumgarte=(1.0, 0.0)), "no target"),
    (lambda: FrameContact("link1", placement=np.ones((4, 4))), "not a rigid transform"),
])
def test_bad_constraints_are_named(make, match):
    with pytest.raises(ConstraintError, match=match):
        make()


def test_unknown_frames_and_same_body_are_named():
    from sko.graphs.errors import UnknownNodeError

    chain = planar_chain(2)
    q, v = np.zeros(2), np.zeros(2)
    with pytest.raises(UnknownNodeError, match="nope"):
        chain.constrained_dynamics(q, v, v, [PointContact("nope")])
    with pytest.raises(ConstraintError, match="same rigid body"):
        chain.constrained_dynamics(q, v, v, [FrameConstraint("link2", "tip")])
    with pytest.raises(ConstraintError, match="restitution"):
        chain.impulse_dynamics(q, v, [PointContact("tip")], restitution=1.5)


def test_anchored_constraints_hold_their_frames_where_they_are():
    """Anchored at ``q``, the position error is zero there, and the Baumgarte term is ``−kd J v``."""
    from sko.constraints import anchored

    system = arm7()
    rng = np.random.default_rng(6)
    q = system.random_configuration(rng)
    held = anchored(system, q, [FrameConstraint("arm_link7", baumgarte=(0.0, 2.0), reference="world"),
                                PointContact("arm_link4", baumgarte=(0.0, 1.0))])
    np.testing.assert_allclose(constraint_error(system, q, held), 0.0, atol=1e-12)
    moved = system.integrate(q, rng.normal(size=system.nv), 0.01)
    assert np.abs(constraint_error(system, moved, held)).max() > 1e-4


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_drift_from_node_accelerations_equals_the_complex_step(seed):
    """On rigid systems γ comes from the node accelerations ``α = φ* a``; the complex step along the
    motion (the path of other body types) gives the same rows, every semantics and reference."""
    from sko.constraints.kinematics import COMPLEX_STEP, body_states, constraint_drift_rows

    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=6)
    constraints = _random_constraints(system, rng, 2)
    q = system.random_configuration(rng)
    v = rng.normal(size=system.nv)
    states = body_states(system, q + 1j * COMPLEX_STEP * system.qdot(q, v))
    by_step = np.concatenate([constraint_drift_rows(system, q, v, c, states) for c in constraints])
    np.testing.assert_allclose(system.constraint_drift(q, v, constraints), by_step, rtol=0,
                               atol=1e-11 * (1 + np.abs(by_step).max()))
