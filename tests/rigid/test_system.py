"""Rigid systems as SKO models: the generic algorithms against the dense operators, Newton–Euler
columns, power balance, Jacobians, energies, builders and every rejection path."""

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import sko.algorithms as alg
from sko.graphs.errors import DimensionError, NonFiniteError, RankDeficientError, UnknownNodeError
from sko import spatial as sp
from sko.bodies import Fixed, Free, Revolute, Spherical
from sko.errors import RigidSystemError
from sko.systems import SystemBuilder
from sko.io.dh import DHLink, dh_system
from sko.examples.rigid import example_systems, planar_chain, rod_inertia
from tests.rigid.random_systems import random_rigid_system
from sko.bodies import RigidBody
from sko.systems import RigidSystem
from tests.util import assert_close

EXAMPLES = {name: factory() for name, factory in example_systems().items()}
seeds = st.integers(0, 2**32 - 1)


def _state(system, seed):
    rng = np.random.default_rng(seed)
    return system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.nv)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@settings(max_examples=10)
@given(seed=seeds)
def test_generic_algorithms_match_the_dense_operators(name, seed):
    """ℳ = H φ M φ* H* and 𝒞 = H φ (M φ* a + b) (Eq. 2, 3) on the rigid SKO model."""
    system = EXAMPLES[name]
    q, qd, qdd = _state(system, seed)
    model, a, b = system.sko_model(q, qd)
    dense = model.dense()
    M = system.mass_matrix(q)
    assert_close(M, dense.mass_matrix, 1e-12)
    assert_close(system.bias_forces(q, qd), dense.bias(a, b), 1e-11)
    assert_close(system.inverse_dynamics(q, qd, qdd), M @ qdd + dense.bias(a, b), 1e-11)
    assert_close(system.forward_dynamics(q, qd, system.inverse_dynamics(q, qd, qdd)), qdd, 1e-9)
    # the weights are (ᵏX_℘)ᵀ = (X_J X_T)ᵀ and H(k) = S_kᵀ, M(k) = I_k
    for k in system.bodies:
        spec = system.body(k)
        X, S, _ = spec.joint.kinematics(q[system.q_slice(k)], qd[system.v_slice(k)])
        if system.tree.parent(k) is not None:
            assert_close(model.phi[k], (X @ spec.placement).T, 1e-14, scale=1.0)
        assert_close(model.H[k], S.T, 0, scale=1.0)
        assert_close(model.M[k], spec.inertia, 0, scale=1.0)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_mass_matrix_columns_by_newton_euler(name):
    """ℳ e_i = τ(q, 0, e_i) − τ(q, 0, 0): CRBA against Newton–Euler on unit accelerations."""
    system = EXAMPLES[name]
    q = system.random_configuration(7)
    g = system.inverse_dynamics(q, np.zeros(system.nv), np.zeros(system.nv))
    columns = np.column_stack([system.inverse_dynamics(q, np.zeros(system.nv), e) - g for e in np.eye(system.nv)])
    assert_close(system.mass_matrix(q), columns, 1e-12)
    assert_close(g, system.gravity_forces(q), 1e-14)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
@settings(max_examples=5)
@given(seed=seeds)
def test_power_balance(name, seed):
    """dE/dt = νᵀ τ along the motion (energy, gravity sign and q̇ maps checked together)."""
    system = EXAMPLES[name]
    q, qd, tau = _state(system, seed)
    qdd = system.forward_dynamics(q, qd, tau)
    qdot = system.qdot(q, qd)
    h = 1e-6
    rate = (system.energy(q + h * qdot, qd + h * qdd) - system.energy(q - h * qdot, qd - h * qdd)) / (2 * h)
    assert np.isclose(rate, qd @ tau, rtol=1e-6, atol=1e-6 * (abs(qd) @ abs(tau)))
    # kinetic energy is ½ νᵀ ℳ ν; gravity forces are the gradient of the potential along q̇
    assert np.isclose(system.kinetic_energy(q, qd), qd @ system.mass_matrix(q) @ qd / 2)
    dU = (system.potential_energy(q + h * qdot) - system.potential_energy(q - h * qdot)) / (2 * h)
    assert np.isclose(dU, system.gravity_forces(q) @ qd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_jacobians_and_external_forces(name):
    system = EXAMPLES[name]
    q, qd, qdd = _state(system, 11)
    qdot = system.qdot(q, qd)
    h = 1e-6
    rng = np.random.default_rng(5)
    for frame in list(system.frames)[-3:] + [system.bodies[-1]]:
        J = system.jacobian(q, frame)
        # v_frame = J ν from finite differences of the world pose: [Rᵀ Ṙ; Rᵀ ṗ]
        Tp, Tm = system.frame_pose(q + h * qdot, frame), system.frame_pose(q - h * qdot, frame)
        T = system.frame_pose(q, frame)
        dT = (Tp - Tm) / (2 * h)
        W = T[:3, :3].T @ dT[:3, :3]
        velocity = np.concatenate([[W[2, 1], W[0, 2], W[1, 0]], T[:3, :3].T @ dT[:3, 3]])
        assert_close(J @ qd, velocity, 1e-6)
        body = system.frames[frame].body
        if body is None:
            continue
        # a world force on the body enters as −Jᵀ (ᵏX_0^* f)
        f = rng.normal(size=6)
        X0 = sp.plucker_from_pose(system.body_poses(q)[body][:3, :3], system.body_poses(q)[body][:3, 3])
        Jk = system.jacobian(q, body)
        expected = system.inverse_dynamics(q, qd, qdd) - Jk.T @ (sp.force_transform(X0) @ f)
        assert_close(system.inverse_dynamics(q, qd, qdd, external_forces={body: f}), expected, 1e-11)
        assert_close(system.body_velocities(q, qd)[body], Jk @ qd, 1e-12)


def test_operational_space_inertia():
    system = EXAMPLES["humanoid"]
    q = system.random_configuration(2)
    M = system.mass_matrix(q)
    frames = ["left_hand", "right_sole", "left_sole"]
    J = np.vstack([system.jacobian(q, f) for f in frames])
    assert_close(system.operational_space_inertia(q, frames), np.linalg.inv(J @ np.linalg.solve(M, J.T)), 1e-9)
    Jh = system.jacobian(q, "left_hand")
    assert_close(system.operational_space_inertia(q, "left_hand"), np.linalg.inv(Jh @ np.linalg.solve(M, Jh.T)), 1e-9)
    with pytest.raises(RankDeficientError, match="two on the same node"):
        system.operational_space_inertia(q, ["left_forearm", "left_hand"])
    with pytest.raises(UnknownNodeError, match="nowhere"):
        system.operational_space_inertia(q, ["nowhere"])


def test_double_pendulum_closed_form():
    l, m = 1.0, 1.0
    chain = planar_chain(2, length=l, mass=m)
    Iy = rod_inertia(m, l)[1, 1]
    lc = l / 2
    for q2 in (0.0, 0.4, 2.0):
        M = chain.mass_matrix([0.3, q2])
        c = np.cos(q2)
        M11 = 2 * Iy + m * lc**2 + m * (l**2 + lc**2 + 2 * l * lc * c)
        M12 = Iy + m * (lc**2 + l * lc * c)
        assert_close(M, [[M11, M12], [M12, Iy + m * lc**2]], 1e-13)
    # hanging straight down is an equilibrium; horizontal first link feels m g (lc + l + lc)
    assert_close(chain.gravity_forces([0.0, 0.0]), [0.0, 0.0], 0, scale=1.0)
    tau = chain.gravity_forces([np.pi / 2, 0.0])
    assert np.isclose(abs(tau[0]), 9.81 * m * (lc + l + lc))


def test_symbolic_mass_matrix():
    """The same code on sympy object arrays: the 2-link chain's ℳ(q) in closed form."""
    chain = planar_chain(2)
    q1, q2 = sympy.symbols("q1 q2", real=True)
    model, _, _ = chain.sko_model(np.array([q1, q2], dtype=object))
    M = sympy.Matrix(alg.mass_matrix(model)).applyfunc(sympy.simplify)
    for value in (0.0, 0.7):
        numeric = np.array(M.subs({q1: 0.2, q2: value}), dtype=float)
        assert_close(numeric, chain.mass_matrix([0.2, value]), 1e-12)
    assert M[1, 1].free_symbols == set()


def test_complex_step_derivative_of_inverse_dynamics():
    system = EXAMPLES["arm7"]
    q, qd, qdd = _state(system, 4)
    e = np.zeros(system.nq)
    e[2] = 1.0
    h = 1e-30
    d_complex = system.inverse_dynamics(q + 1j * h * e, qd, qdd).imag / h
    step = 1e-6
    d_central = (system.inverse_dynamics(q + step * e, qd, qdd) - system.inverse_dynamics(q - step * e, qd, qdd)) / (2 * step)
    assert_close(d_complex, d_central, 1e-7)


def test_fixed_joints_merge_into_the_parent():
    bracket = sp.pose_transform([0.1, 0, -1.0], [0.2, 0, 0])
    rod = dict(mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))

    def build(split: bool):
        b = SystemBuilder()
        if split:
            b.add_body("a", None, Revolute([0, 1, 0]), **rod)
            b.add_body("bracket", "a", Fixed(), bracket, mass=0.5, com=[0, 0.1, 0], inertia_com=0.002 * np.eye(3))
            b.add_body("b", "bracket", Revolute([1, 0, 0]), sp.pose_transform([0, 0, -0.2]), **rod)
        else:  # the bracket's inertia moved into a's frame by hand: I_a += Xᵀ I X with X = ᵇʳX_a
            extra = bracket.T @ sp.spatial_inertia(0.5, [0, 0.1, 0], 0.002 * np.eye(3)) @ bracket
            b.add_body("a", None, Revolute([0, 1, 0]), inertia=sp.spatial_inertia(**rod) + extra)
            b.add_body("b", "a", Revolute([1, 0, 0]), sp.pose_transform([0, 0, -0.2]) @ bracket, **rod)
        return b.build()

    merged, manual = build(True), build(False)
    assert merged.bodies == ("a", "b") and merged.frames["bracket"].body == "a"
    assert_close(merged.body("a").inertia, manual.body("a").inertia, 1e-14)
    q, qd = np.array([0.3, -0.8]), np.array([1.0, 2.0])
    assert_close(merged.mass_matrix(q), manual.mass_matrix(q), 1e-13)
    assert_close(merged.bias_forces(q, qd), manual.bias_forces(q, qd), 1e-13)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_dh_frames_follow_the_dh_product(convention):
    rng = np.random.default_rng(0)
    rows = [(rng.uniform(-1, 1), rng.uniform(-2, 2), rng.uniform(-1, 1), rng.uniform(-2, 2), kind)
            for kind in ("revolute", "prismatic", "revolute", "revolute")]
    links = [DHLink(a, alpha, d, theta, joint=kind, mass=1.0, com=[0.1, 0, 0], inertia_com=0.01 * np.eye(3))
             for a, alpha, d, theta, kind in rows]
    system = dh_system(links, convention=convention)
    q = rng.normal(size=system.nq)

    def H(R, p):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        return T

    T = np.eye(4)
    for i, ((a, alpha, d, theta, kind), qi) in enumerate(zip(rows, q), start=1):
        theta, d = (theta + qi, d) if kind == "revolute" else (theta, d + qi)
        Rz, Tz = H(sp.rotation_z(theta), np.zeros(3)), H(np.eye(3), [0, 0, d])
        Tx, Rx = H(np.eye(3), [a, 0, 0]), H(sp.rotation_x(alpha), np.zeros(3))
        T = T @ (Rz @ Tz @ Tx @ Rx if convention == "standard" else Rx @ Tx @ Rz @ Tz)
        assert_close(system.frame_pose(q, f"link{i}_dh"), T, 1e-12, scale=1.0)
    # inertias are given in the DH frames: the centre of mass sits at (0.1, 0, 0) of each DH frame
    poses = {f: system.frame_pose(q, f"{f}_dh") for f in system.bodies}
    height = sum((poses[f] @ [0.1, 0, 0, 1])[2] for f in system.bodies)  # unit masses
    assert np.isclose(system.potential_energy(q), 9.81 * height)


def test_configuration_helpers():
    system = EXAMPLES["humanoid"]
    q0 = system.neutral_configuration()
    assert q0.shape == (system.nq,)
    poses = system.body_poses(q0)
    assert_close(poses["pelvis"][:3, 3], [0, 0, 1.0], 1e-15, scale=1.0)
    q = system.random_configuration(1)
    qd = np.random.default_rng(2).normal(size=system.nv)
    q1 = system.integrate(q, qd, 0.1)
    s = system.q_slice("pelvis")
    assert np.isclose(np.linalg.norm(q1[s][:4]), 1.0)
    scaled = q.copy()
    scaled[s.start:s.start + 4] *= 2.0
    assert_close(system.normalize(scaled), q, 1e-15, scale=1.0)
    assert_close(system.mass_matrix(scaled), system.mass_matrix(q), 1e-13)  # non-unit quaternions are normalised
    assert system.joint_names()["root_joint"] == "pelvis"
    assert system.total_mass > 0 and "RigidSystem(15 bodies" in repr(system)


def test_bad_inputs():
    system = EXAMPLES["arm7"]
    q = np.zeros(system.nq)
    with pytest.raises(DimensionError, match="nq = 7"):
        system.mass_matrix(np.zeros(6))
    with pytest.raises(DimensionError, match="v has length 3"):
        system.inverse_dynamics(q, np.zeros(3), np.zeros(7))
    with pytest.raises(DimensionError, match="dv"):
        system.inverse_dynamics(q, np.zeros(7), np.zeros(8))
    with pytest.raises(DimensionError, match="tau"):
        system.forward_dynamics(q, np.zeros(7), np.zeros((7, 1)))
    with pytest.raises(NonFiniteError):
        system.mass_matrix(np.full(7, np.nan))
    with pytest.raises(UnknownNodeError, match="ghost"):
        system.jacobian(q, "ghost")
    with pytest.raises(UnknownNodeError, match="ghost"):
        system.body("ghost")
    with pytest.raises(UnknownNodeError, match="ghost"):
        system.inverse_dynamics(q, q, q, external_forces={"ghost": np.zeros(6)})
    with pytest.raises(DimensionError, match=r"external force of body 'arm_link2' must have shape \(6,\)"):
        system.inverse_dynamics(q, q, q, external_forces={"arm_link2": np.zeros(3)})
    with pytest.raises(DimensionError, match="mapping"):
        system.inverse_dynamics(q, q, q, external_forces=[np.zeros(6)])
    world = SystemBuilder()
    world.add_frame("camera", None, sp.pose_transform([1, 0, 0]))
    world.add_body("link", None, Revolute(), mass=1.0, inertia_com=np.eye(3))
    built = world.build()
    with pytest.raises(UnknownNodeError, match="fixed on the world"):
        built.operational_space_inertia([0.0], "camera")
    assert_close(built.jacobian([0.0], "camera"), np.zeros((6, 1)), 0, scale=1.0)


def test_frames_are_checked_at_construction():
    """A frame must sit on a known body (or the world) with a finite 6 × 6 transform."""
    system = planar_chain(2)
    specs = [system.body(k) for k in system.bodies]
    ok = RigidSystem(specs, {"tool": ("link2", sp.pose_transform([0.0, 0.0, 1.0]))}, system.gravity)
    assert_close(ok.frame_pose([0.0, 0.0], "tool")[:3, 3], system.frame_pose([0.0, 0.0], "link2")[:3, 3] + [0.0, 0.0, 1.0], 1e-14)
    with pytest.raises(UnknownNodeError, match="frame 'tool' is fixed on 'ghost'"):
        RigidSystem(specs, {"tool": ("ghost", np.eye(6))}, system.gravity)
    with pytest.raises(DimensionError, match=r"transform of frame 'tool' must be a finite 6 × 6.*\(4, 4\)"):
        RigidSystem(specs, {"tool": ("link2", np.eye(4))}, system.gravity)
    with pytest.raises(NonFiniteError, match="transform of frame 'tool'"):
        RigidSystem(specs, {"tool": ("link2", np.full((6, 6), np.nan))}, system.gravity)
    with pytest.raises(DimensionError, match="transform of frame 'tool'.*not an array"):
        RigidSystem(specs, {"tool": ("link2", [[1.0], [1.0, 2.0]])}, system.gravity)
    with pytest.raises(DimensionError, match="frame 'tool' must be a pair"):
        RigidSystem(specs, {"tool": "link2"}, system.gravity)


def test_body_placements_are_checked():
    with pytest.raises(DimensionError, match="placement X_T of body 'b'.*not an array"):
        RigidBody("b", None, Revolute(), np.eye(6), [[1.0], [1.0, 2.0]])
    with pytest.raises(NonFiniteError, match="placement X_T of body 'b'"):
        RigidBody("b", None, Revolute(), np.eye(6), np.full((6, 6), np.inf))


def _builder():
    b = SystemBuilder()
    b.add_body("base", None, Revolute(), mass=1.0, inertia_com=np.eye(3))
    return b


@pytest.mark.parametrize("action, match", [
    (lambda b: b.add_body("base", None, Revolute(), mass=1.0), "already used"),
    (lambda b: b.add_body(None, None, Revolute(), mass=1.0), "None"),
    (lambda b: b.add_body(["x"], None, Revolute(), mass=1.0), "hashable"),
    (lambda b: b.add_body("x", "nowhere", Revolute(), mass=1.0), "parent 'nowhere'"),
    (lambda b: b.add_body("x", "base", "revolute", mass=1.0), "Joint"),
    (lambda b: b.add_body("x", "base", Revolute(), mass=-1.0), "non-negative"),
    (lambda b: b.add_body("x", "base", Revolute(), mass="heavy"), "number"),
    (lambda b: b.add_body("x", "base", Revolute(), mass=1.0, inertia_com=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), "not symmetric"),
    (lambda b: b.add_body("x", "base", Revolute(), mass=1.0, inertia_com=-np.eye(3)), "semidefinite"),
    (lambda b: b.add_body("x", "base", Revolute(), inertia=np.eye(6), mass=1.0), "either"),
    (lambda b: b.add_body("x", "base", Revolute(), inertia=-np.eye(6)), "negative mass"),
    (lambda b: b.add_body("x", "base", Revolute(), mass=1.0, inertia_com=np.diag([1.0, 1.0, 3.0])), "triangle inequality"),
    (lambda b: b.add_body("x", "base", Revolute(), inertia=np.triu(np.ones((6, 6)))), "not symmetric"),
    (lambda b: b.add_body("x", "base", Revolute(), com=[0, 0, 1]), "without a mass"),
    (lambda b: b.add_body("x", "base", Revolute(), placement=np.eye(4), mass=1.0), r"shape \(6, 6\)"),
    (lambda b: b.add_body("x", "base", Revolute(), mass=1.0, com=[0, 0, np.inf]), "finite"),
])
def test_builder_rejections(action, match):
    with pytest.raises(RigidSystemError, match=match):
        action(_builder())


def test_build_rejections():
    with pytest.raises(RigidSystemError, match="gravity"):
        SystemBuilder(gravity=[0, 0])
    with pytest.raises(RigidSystemError, match="convention"):
        dh_system([DHLink(0, 0, 0, 0, mass=1.0)], convention="craig")
    with pytest.raises(RigidSystemError, match="joint must be"):
        dh_system([DHLink(0, 0, 0, 0, joint="spherical", mass=1.0)])
    with pytest.raises(RigidSystemError, match="non-finite"):
        dh_system([DHLink(np.nan, 0, 0, 0, mass=1.0)])
    with pytest.raises(RigidSystemError, match="at least one"):
        dh_system([])
    with pytest.raises(RigidSystemError, match="DHLink"):
        dh_system([(0, 0, 0, 0)])


def test_inputs_are_not_mutated():
    system = EXAMPLES["humanoid"]
    q, qd, tau = _state(system, 3)
    copies = q.copy(), qd.copy(), tau.copy()
    f = {"head": np.ones(6)}
    system.forward_dynamics(q, qd, tau, external_forces=f)
    system.integrate(q, qd, 0.1)
    assert all((x == y).all() for x, y in zip((q, qd, tau), copies)) and (f["head"] == 1).all()


def test_floating_base_free_fall():
    """A free body with no torque falls with g and keeps its body velocity's angular part."""
    b = SystemBuilder()
    b.add_body("box", None, Free(), mass=2.0, inertia_com=np.diag([1.0, 2.0, 3.0]))
    system = b.build()
    q = system.random_configuration(0)
    R = system.body_poses(q)["box"][:3, :3]
    qdd = system.forward_dynamics(q, np.zeros(6), np.zeros(6))
    assert_close(qdd[:3], np.zeros(3), 0, scale=1.0)
    assert_close(R @ qdd[3:], [0, 0, -9.81], 1e-14)
    ball = SystemBuilder(gravity=[0, 0, 0])
    ball.add_body("ball", None, Spherical(), mass=1.0, com=[0, 0, -1.0], inertia_com=0.1 * np.eye(3))
    assert ball.build().nq == 4


@given(seed=seeds)
def test_random_rigid_forests(seed):
    """On random forests of random joints: the generic algorithms against the dense operators,
    forward dynamics inverting inverse dynamics, and the power balance."""
    system = random_rigid_system(seed)
    q, qd, tau = _state(system, seed)
    model, a, b = system.sko_model(q, qd)
    dense = model.dense()
    M = system.mass_matrix(q)
    assert_close(M, dense.mass_matrix, 1e-11)
    qdd = system.forward_dynamics(q, qd, tau)
    assert_close(M @ qdd + dense.bias(a, b), tau, 1e-8, scale=np.abs(tau).max() + np.abs(dense.bias(a, b)).max())
    assert_close(system.inverse_dynamics(q, qd, qdd), tau, 1e-8, scale=np.abs(tau).max() + np.abs(dense.bias(a, b)).max())
    h = 1e-6
    qdot = system.qdot(q, qd)
    rate = (system.energy(q + h * qdot, qd + h * qdd) - system.energy(q - h * qdot, qd - h * qdd)) / (2 * h)
    assert np.isclose(rate, qd @ tau, rtol=1e-5, atol=1e-5 * (abs(qd) @ abs(tau) + abs(qd) @ M @ abs(qd)))


@pytest.mark.parametrize("gravity, match", [
    ([0.0, 0.0, np.nan], r"gravity must be finite, got \[0\.0, 0\.0, nan\]"),
    ([0.0, 0.0], r"gravity must be a 3- or 6-vector, got shape \(2,\)"),
])
def test_a_builders_gravity_is_named_by_what_is_wrong(gravity, match):
    """A NaN gravity was reported as of the wrong shape ("a finite 3- or 6-vector, got shape (6,)")."""
    from sko.errors import RigidSystemError
    from sko.systems import SystemBuilder

    with pytest.raises(RigidSystemError, match=match):
        SystemBuilder(gravity)
