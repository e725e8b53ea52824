"""Joint types from outside the package (tests/compiled/user_joints.py, one declaration each)
work in every request, compiled equal to the reference path, batched equal to per state,
rolled out compiled equal to the stepwise loop, with complex-step derivatives equal to central
differences; two of them equal the library's joints they re-implement; a malformed declaration
or output is a JointError naming the joint."""

from __future__ import annotations

import numpy as np
import pytest

import sko
from sko.engine import use_backend
from sko.bodies import Joint, Revolute, Spherical
from sko.engine import joint_type
from sko.engine.dispatch import LANE_RUNS
from sko.engine.joints import ADDRESS, PYTHON, pack_joint
from sko.errors import JointError
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from sko.simulation.rollout import compiled_maps
from tests.compiled.user_joints import CubicRevolute, HandBall, PitchedScrew, Universal


def _inertia(rng):
    A = rng.normal(size=(3, 3))
    second = A @ A.T * 0.05 + 0.01 * np.eye(3)
    return np.trace(second) * np.eye(3) - second


def user_system(seed: int, reversed_: bool = True):
    """A tree of every user joint type (some reversed) and library joints."""
    rng = np.random.default_rng(seed)
    joints = [PitchedScrew(rng.normal(size=3), 0.2, 0.3, name="screw"), Universal(name="universal"),
              HandBall(name="ball"), CubicRevolute(rng.normal(size=3), 0.4, name="cubic"),
              Revolute(rng.normal(size=3)), Universal(name="universal2")]
    parents = [None, "b0", "b1", "b0", "b3", "b4"]
    b = SystemBuilder(gravity=[0.0, -3.0, -9.81])
    for i, (joint, parent) in enumerate(zip(joints, parents)):
        if reversed_ and i in (1, 3):
            joint = joint.reversed()
        b.add_body(f"b{i}", parent, joint, pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3)),
                   mass=rng.uniform(0.5, 2.0), com=rng.normal(size=3) * 0.2, inertia_com=_inertia(rng))
    return b.build()


def _state(system, rng):
    return system.random_configuration(rng), rng.normal(size=system.nv), rng.normal(size=system.nv)


REQUESTS = {
    "inverse_dynamics": lambda s, q, v, a: s.inverse_dynamics(q, v, a),
    "forward_dynamics": lambda s, q, v, a: s.forward_dynamics(q, v, a),
    "mass_matrix": lambda s, q, v, a: s.mass_matrix(q),
    "mass_matrix_inverse": lambda s, q, v, a: s.mass_matrix_inverse(q),
    "kinetic_energy": lambda s, q, v, a: s.kinetic_energy(q, v),
    "potential_energy": lambda s, q, v, a: s.potential_energy(q),
    "qdot": lambda s, q, v, a: s.qdot(q, v),
}


def test_user_joints_are_compiled_through_their_addresses():
    system = user_system(0)
    layout = system._engine.layout
    assert layout is not None and layout.all_compiled
    for k in system.bodies:
        code, _, packed = pack_joint(system.body(k).joint)
        assert code != PYTHON
        if not isinstance(system.body(k).joint, Revolute):
            assert code == ADDRESS and packed[1] != 0 and packed[2] != 0
    assert not system._engine.coordinates_are_velocities  # the ball and the cubic coordinate have maps


@pytest.mark.parametrize("name", sorted(REQUESTS))
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_compiled_equals_reference(name, dtype):
    system = user_system(1)
    rng = np.random.default_rng(2)
    f = REQUESTS[name]
    for _ in range(3):
        q, v, a = _state(system, rng)
        if dtype is np.complex128:
            q, v, a = (x + 1e-4j * rng.normal(size=x.size) for x in (q, v, a))
        compiled = f(system, q, v, a)
        with use_backend("reference"):
            reference = f(system, q, v, a)
        scale = max(1.0, np.abs(reference).max())
        np.testing.assert_allclose(compiled, reference, rtol=0, atol=1e-11 * scale)


def test_jacobians_equal_the_reference():
    system = user_system(3)
    q, _, _ = _state(system, np.random.default_rng(4))
    for frame in ("b2", "b5"):
        compiled = system.jacobian(q, frame)
        with use_backend("reference"):
            reference = system.jacobian(q, frame)
        np.testing.assert_allclose(compiled, reference, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["inverse_dynamics", "forward_dynamics", "mass_matrix"])
def test_batched_equals_per_state(name):
    system = user_system(5)
    rng = np.random.default_rng(6)
    states = [_state(system, rng) for _ in range(40)]  # more than a parallel chunk
    Q, V, A = (np.array(x) for x in zip(*states))
    batch = REQUESTS[name](system, Q, V, A)
    for s in (0, 17, 39):  # a batch of rigid bodies alone runs four states at once: equal to rounding
        single = REQUESTS[name](system, Q[s], V[s], A[s])
        if name in LANE_RUNS and system._engine._lanes():
            np.testing.assert_allclose(batch[s], single, rtol=0, atol=1e-13 * np.abs(single).max())
        else:
            np.testing.assert_array_equal(batch[s], single)


def _library_twin(seed: int):
    """The same tree twice: on HandBall and CubicRevolute, and on the library's Spherical and
    Revolute they re-implement (θ = q + a q³)."""
    rng = np.random.default_rng(seed)
    axis, a = rng.normal(size=3), 0.4
    placements = [pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3)) for _ in range(3)]
    inertias = [(rng.uniform(0.5, 2.0), rng.normal(size=3) * 0.2, _inertia(rng)) for _ in range(3)]
    systems = []
    for ball, turn in ((HandBall(), CubicRevolute(axis, a)), (Spherical(), Revolute(axis))):
        b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
        for i, (joint, parent) in enumerate(((ball, None), (turn, "b0"), (ball.reversed(), "b1"))):
            m, c, I = inertias[i]
            b.add_body(f"b{i}", parent, joint, placements[i], mass=m, com=c, inertia_com=I)
        systems.append(b.build())
    return systems, a


def test_re_implemented_joints_equal_the_library():
    (mine, library), a = _library_twin(7)
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, v, tau = _state(mine, rng)
        theta = q.copy()
        theta[4] = q[4] + a * q[4] ** 3  # the revolute's angle
        np.testing.assert_allclose(mine.forward_dynamics(q, v, tau), library.forward_dynamics(theta, v, tau),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mine.mass_matrix(q), library.mass_matrix(theta), rtol=1e-12, atol=1e-12)
        qdot = mine.qdot(q, v)
        np.testing.assert_allclose(qdot[4], v[3] / (1 + 3 * a * q[4] ** 2), rtol=1e-14)
        np.testing.assert_allclose(qdot[:4], library.qdot(theta, v)[:4], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_the_compiled_rollout_equals_the_stepwise_one(integrator):
    system = user_system(9)
    maps = compiled_maps(system)
    assert maps is not None and maps.packed.size  # the ball's and the cubic joint's maps, compiled
    rng = np.random.default_rng(10)
    Q0 = np.array([system.random_configuration(rng) for _ in range(5)])
    V0, T = rng.normal(size=(5, system.nv)), rng.normal(size=(5, 20, system.nv))
    compiled = sko.rollout(system, Q0, V0, 1e-3, 20, tau=T, integrator=integrator)
    with use_backend("reference"):
        stepwise = sko.rollout(system, Q0, V0, 1e-3, 20, tau=T, integrator=integrator)
    np.testing.assert_allclose(compiled.q, stepwise.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(compiled.v, stepwise.v, rtol=0, atol=1e-11 * max(1.0, np.abs(stepwise.v).max()))
    assert (compiled.failed == -1).all()
    ball = system.q_slices[system.bodies[2]]
    np.testing.assert_allclose(np.linalg.norm(compiled.q[:, :, ball], axis=-1), 1.0, rtol=1e-14)


def _central(f, x, directions, h=1e-5):
    def column(step):
        return (8 * (f(step(h)) - f(step(-h))) - (f(step(2 * h)) - f(step(-2 * h)))) / (12 * h)

    return np.column_stack([column(lambda t, d=d: d(x, t)) for d in directions])


@pytest.mark.parametrize("reversed_", [False, True])
def test_derivatives_agree_with_central_differences(reversed_):
    system = user_system(11, reversed_)
    rng = np.random.default_rng(12)
    q, v, a = _state(system, rng)
    basis = np.eye(system.nv)
    along_q = [lambda x, t, e=e: system.integrate(x, t * e) for e in basis]
    along_v = [lambda x, t, e=e: x + t * e for e in basis]
    dq, dv, M = system.inverse_dynamics_derivatives(q, v, a)
    fq = _central(lambda x: system.inverse_dynamics(x, v, a), q, along_q)
    fv = _central(lambda x: system.inverse_dynamics(q, x, a), v, along_v)
    scale = max(np.abs(fq).max(), np.abs(fv).max(), 1.0)
    assert np.abs(dq - fq).max() <= 1e-6 * scale and np.abs(dv - fv).max() <= 1e-6 * scale
    ddq, ddv, Minv = system.forward_dynamics_derivatives(q, v, a)
    gq = _central(lambda x: system.forward_dynamics(x, v, a), q, along_q)
    scale = max(np.abs(gq).max(), 1.0)
    assert np.abs(ddq - gq).max() <= 1e-6 * scale
    np.testing.assert_allclose(Minv @ M, np.eye(system.nv), atol=1e-9)


def test_constant_motion_user_joints_take_the_compiled_analytic_derivatives():
    (mine, library), a = _library_twin(13)
    rng = np.random.default_rng(14)
    q, v, dv = _state(mine, rng)
    analytic = mine.inverse_dynamics_derivatives(q, v, dv)
    step = mine.inverse_dynamics_derivatives(q, v, dv, method="complex_step")
    for x, y in zip(analytic, step):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9)


def test_a_joint_declaring_a_constant_S_it_does_not_have_is_a_joint_error():
    """The recursions that trust constant_motion (the rigid inverse dynamics, the analytic
    derivatives, Ȧ_G) would answer wrongly: the system refuses the joint, naming it."""
    from tests.compiled.user_joints import _screw

    @joint_type(kinematics=_screw, nq=1, nv=1, parameters=5, constant_motion=True)
    class LyingScrew(PitchedScrew):
        pass

    b = SystemBuilder()
    b.add_body("a", None, LyingScrew([0.2, 0.3, 1.0], 0.2, 0.5, name="screw"), np.eye(6), mass=1.0,
               com=[0.3, 0.1, 0.2], inertia_com=np.eye(3) * 0.1)
    system = b.build()
    for backend in ("compiled", "reference"):
        with use_backend(backend), pytest.raises(JointError, match="'screw' declares constant_motion"):
            system.inverse_dynamics([0.7], [1.5], [0.3])


def test_a_python_joint_declaring_a_constant_S_is_checked_too_and_its_domain_respected():
    """A CustomJoint (kinematics in Python) declaring constant_motion with a growing pitch is
    refused; an honest one rejecting half its random configurations (a domain) is taken."""
    from sko.bodies import CustomJoint
    from sko.spatial import rot, rz, xlt

    def screw(q, v):
        pitch = 0.2 + 0.5 * q[0]
        S = np.array([[0, 0, 1, 0, 0, pitch]], dtype=float).T
        return rot(rz(q[0])) @ xlt([0, 0, pitch * q[0]]), S, np.array([0, 0, 0, 0, 0, 0.5 * v[0] ** 2])

    def turn(q, v):
        if q[0] > 1.0:
            raise sko.errors.JointError(f"turn: q = {q} outside [-pi, 1]")
        return rot(rz(q[0])), np.array([[0, 0, 1, 0, 0, 0.0]]).T, np.zeros(6)

    class Lying(CustomJoint):
        constant_motion = True

    for kinematics, refused in ((screw, True), (turn, False)):
        b = SystemBuilder()
        b.add_body("a", None, Lying(1, 1, kinematics, name="j"), np.eye(6), mass=1.0, com=[0.3, 0.1, 0.2],
                   inertia_com=np.eye(3) * 0.1)
        system = b.build()
        if refused:
            with pytest.raises(JointError, match="'j' declares constant_motion"):
                system.inverse_dynamics([0.4], [1.5], [0.3])
        else:
            assert np.isfinite(system.inverse_dynamics([0.4], [1.5], [0.3])).all()


def test_a_joint_whose_init_skips_the_base_class_prints_its_type():
    class Bare(Revolute):
        def __init__(self):
            self.axis = np.array([0.0, 0.0, 1.0])

    assert repr(Bare()) == "Bare"


def test_the_python_kinematics_of_a_declaration_are_its_kernels():
    joint = HandBall()
    q = np.array([0.9, 0.1, -0.3, 0.2])
    ref = Spherical().kinematics(q, np.array([0.1, 0.2, 0.3]))
    mine = joint.kinematics(q, np.array([0.1, 0.2, 0.3]))
    for x, y in zip(mine, ref):
        np.testing.assert_allclose(x, y, atol=1e-15)
    np.testing.assert_allclose(joint.normalize(2 * q), q / np.linalg.norm(q))
    with pytest.raises(JointError, match="user-defined q̇ map"):
        joint.difference(q, q)


# ---------------------------------------------------------------------------- bad declarations
def _kinematics_ok(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = 1.0
    return True


def test_bad_declarations_are_joint_errors():
    with pytest.raises(JointError, match="nv must be"):
        joint_type(kinematics=_kinematics_ok, nq=1, nv=7)(type("J", (Joint,), {}))
    with pytest.raises(JointError, match="must declare a qdot"):
        joint_type(kinematics=_kinematics_ok, nq=2, nv=1)(type("J", (Joint,), {}))
    with pytest.raises(JointError, match="parameters must be"):
        joint_type(kinematics=_kinematics_ok, nq=1, nv=1, parameters=11)(type("J", (Joint,), {}))
    with pytest.raises(JointError, match="subclass of Joint"):
        joint_type(kinematics=_kinematics_ok, nq=1, nv=1)(object)


def _one_body(joint):
    b = SystemBuilder()
    b.add_body("body", None, joint, np.eye(6), mass=1.0, com=[0.1, 0.0, 0.0], inertia_com=np.eye(3) * 0.1)
    return b


def test_wrong_parameters_are_joint_errors_naming_the_joint():
    @joint_type(kinematics=_kinematics_ok, nq=1, nv=1, parameters=2)
    class TwoNumbers(Joint):
        def compiled_parameters(self):
            return np.array([1.0, np.nan])

    with pytest.raises(JointError, match="body .body.: TwoNumbers .hinge.: .*finite"):
        _one_body(TwoNumbers(name="hinge")).build().mass_matrix([0.1])


def _rank_deficient(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = S[2, 1] = 1.0  # two equal columns
    return True


def _not_finite(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = 1.0
    c[0] = np.inf * q[qo]
    return True


def _not_analytic(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = 1.0
    X[0, 3] = max(q[qo], 0.0)  # no order on complex numbers
    return True


def _out_of_bounds(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = 1.0
    c[6] = 1.0  # past c_J
    return True


def _no_return(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    S[2, 0] = 1.0


@pytest.mark.parametrize("kinematics, nv, message", [(_rank_deficient, 2, "rank-deficient"),
                                                     (_no_return, 1, "must return True or False"),
                                                     (_out_of_bounds, 1, "IndexError"),
                                                     (_not_finite, 1, "non-finite c_J"),
                                                     (_not_analytic, 1, "does not compile for complex128")])
def test_bad_outputs_are_joint_errors_never_wrong_answers(kinematics, nv, message):
    kind = joint_type(kinematics=kinematics, nq=nv, nv=nv)(type("Bad", (Joint,), {}))
    system = _one_body(kind(name="bad")).build()
    with pytest.raises(JointError, match=message):
        system.mass_matrix(np.full(nv, 0.3))
        system.forward_dynamics(np.full(nv, 0.3), np.zeros(nv), np.zeros(nv))


# ---------------------------------------------------------------------------- kernels past their own numbers
def _two_bodies(joint):
    """``joint`` then a library revolute after it: numbers past the joint's own are its neighbour's."""
    b = SystemBuilder(gravity=[0.0, 0.0, -9.81])
    b.add_body("a", None, joint, np.eye(6), mass=1.0, com=[0.3, 0.1, 0.2], inertia_com=np.eye(3) * 0.1)
    b.add_body("b", "a", Revolute([1.0, 0.0, 0.0]), np.eye(6), mass=1.0, com=[0.0, 0.2, 0.3],
               inertia_com=np.eye(3) * 0.1)
    return b.build()


def _turn_reading_the_next_coordinate(p, po, q, qo, v, vo, X, S, c):
    a = q[qo] + 0.1 * q[qo + 1]  # a second coordinate it does not have
    X[0, 0], X[0, 1], X[1, 0], X[1, 1], X[2, 2] = np.cos(a), np.sin(a), -np.sin(a), np.cos(a), 1.0
    S[2, 0] = 1.0
    return True


def _turn_reading_past_its_parameters(p, po, q, qo, v, vo, X, S, c):
    a = p[po] * q[qo]
    X[0, 0], X[0, 1], X[1, 0], X[1, 1], X[2, 2] = np.cos(a), np.sin(a), -np.sin(a), np.cos(a), 1.0
    S[2, 0] = p[po]
    X[0, 3] = p[po + 1]  # an offset it did not declare
    return True


@pytest.mark.parametrize("kinematics", [_turn_reading_the_next_coordinate, _turn_reading_past_its_parameters])
def test_a_kernel_reading_past_its_own_numbers_is_a_joint_error_on_both_paths(kinematics):
    """The compiled path gives the kernel views of exactly its own q, ν and parameters: reading
    past them is the bounds check's error, not the neighbour's number."""
    kind = joint_type(kinematics=kinematics, nq=1, nv=1, parameters=1)(
        type("Turn", (Joint,), {"compiled_parameters": lambda self: np.array([2.0])}))
    system = _two_bodies(kind(name="turn"))
    q, v = np.array([0.3, 0.4]), np.array([0.5, -0.2])
    for backend in ("compiled", "reference"):
        with use_backend(backend):
            for request in (lambda: system.inverse_dynamics(q, v, np.zeros(2)), lambda: system.mass_matrix(q),
                            lambda: system.mass_matrix(np.stack([q, q]))):
                with pytest.raises(JointError, match="'turn': its kinematics function failed: IndexError"):
                    request()


# ---------------------------------------------------------------------------- X_J that is not rot(E) xlt(r)
def _forgot_a_diagonal_entry(p, po, q, qo, v, vo, X, S, c):
    X[0, 0], X[0, 1], X[1, 0], X[1, 1] = np.cos(q[qo]), np.sin(q[qo]), -np.sin(q[qo]), np.cos(q[qo])  # no X[2, 2]
    S[2, 0] = 1.0
    return True


def _a_reflection(p, po, q, qo, v, vo, X, S, c):
    X[0, 0], X[0, 1], X[1, 0], X[1, 1] = np.cos(q[qo]), np.sin(q[qo]), -np.sin(q[qo]), np.cos(q[qo])
    X[2, 2] = -1.0
    S[2, 0] = 1.0
    return True


def _full_plucker_matrix(p, po, q, qo, v, vo, X, S, c):
    for i in range(3):
        X[i, i] = X[i + 3, i + 3] = 1.0  # rot(I) xlt(r) = [[1, 0], [−r×, 1]] for r = θ e_z, not (E, r)
    X[3, 1], X[4, 0] = q[qo], -q[qo]
    S[5, 0] = 1.0
    return True


def _S_past_its_columns(p, po, q, qo, v, vo, X, S, c):
    X[0, 0] = X[1, 1] = X[2, 2] = 1.0
    X[2, 3] = q[qo]
    S[5, 0] = S[5, 1] = 1.0  # nv = 1
    return True


@pytest.mark.parametrize("kinematics, message", [(_forgot_a_diagonal_entry, "not a rotation: E Eᵀ differs from I"),
                                                 (_a_reflection, "a reflection"),
                                                 (_full_plucker_matrix, r"outside its \(E, r\) storage"),
                                                 (_S_past_its_columns, "S past its nv = 1 columns")])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_a_joint_transform_that_is_not_rot_E_xlt_r_is_a_joint_error_on_both_paths(kinematics, message, dtype):
    kind = joint_type(kinematics=kinematics, nq=1, nv=1)(type("Odd", (Joint,), {}))
    system = _two_bodies(kind(name="odd"))
    q, v = np.array([0.3, 0.4], dtype=dtype), np.array([0.5, -0.2], dtype=dtype)
    for backend in ("compiled", "reference"):
        with use_backend(backend):
            for request in (lambda: system.inverse_dynamics(q, v, np.zeros(2)), lambda: system.frame_pose(q, "b")):
                with pytest.raises(JointError, match="'odd': its kinematics .*" + message):
                    request()


# ---------------------------------------------------------------------------- q̇ maps in the compiled rollout
def _rate_past_its_block(p, po, q, qo, v, vo, out, oo):
    for i in range(4):  # out[oo + 1 .. oo + 4]: one past the joint's four entries
        out[oo + 1 + i] = 0.5 * v[vo + min(i, 2)] * q[qo + i]
    return True


def _rate_not_finite(p, po, q, qo, v, vo, out, oo):
    for i in range(3):
        out[oo + i] = 0.5 * v[vo + i] * q[qo + i]
    out[oo + 3] = np.inf * v[vo]
    return True


def _project_not_finite(p, po, q, qo):
    """The unit quaternion as it is; any other: not finite."""
    n2 = q[qo] * q[qo] + q[qo + 1] * q[qo + 1] + q[qo + 2] * q[qo + 2] + q[qo + 3] * q[qo + 3]
    if (n2 - 1.0) * (n2 - 1.0) > 1e-24:
        for i in range(4):
            q[qo + i] = q[qo + i] / (n2 - n2)
    return True


@pytest.mark.parametrize("qdot, normalize, message", [
    (_rate_past_its_block, None, "its qdot function failed: IndexError"),
    (_rate_not_finite, None, "its qdot function gives non-finite q̇"),
    ("ball", _project_not_finite, "its normalize function gives non-finite q")])
@pytest.mark.parametrize("integrator", ["rk4", "euler"])
def test_a_failing_q_map_stops_the_compiled_rollout_naming_the_joint(qdot, normalize, message, integrator):
    """As the stepwise loop does: never a neighbour's entry overwritten, nor an overflow reported."""
    from tests.compiled.user_joints import _ball, _ball_rate

    functions = {"qdot": _ball_rate if qdot == "ball" else qdot, "normalize": normalize}
    kind = joint_type(kinematics=_ball, nq=4, nv=3, **{k: f for k, f in functions.items() if f is not None})(
        type("Ball", (Joint,), {"neutral": lambda self: np.array([1.0, 0.0, 0.0, 0.0])}))
    system = _two_bodies(kind(name="ball"))
    assert compiled_maps(system) is not None
    q, v = np.array([[0.9, 0.1, -0.3, 0.2, 0.4]]), np.array([[0.5, -0.2, 0.1, 0.7]])
    q[0, :4] /= np.linalg.norm(q[0, :4])
    for backend in ("compiled", "reference"):
        with use_backend(backend):
            r = sko.rollout(system, q, v, 1e-2, 3, integrator=integrator)
        assert r.failed.tolist() == [0] and np.isnan(r.q[0, 1:]).all()
        assert isinstance(r.errors[0], JointError) and str(r.errors[0]).startswith("step 1 (t = 0 s): Ball 'ball'")
        assert message in str(r.errors[0])
