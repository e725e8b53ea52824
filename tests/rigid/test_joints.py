"""Joint models: S against finite differences of X_J, c_J against finite differences of S, the q̇
maps, configuration helpers, polarity reversal, generic scalars and bad input."""

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from sko import spatial as sp
from sko.bodies import CustomJoint, Cylindrical, Fixed, Free, Helical, Planar, Prismatic, RackAndPinion, ReversedJoint, Revolute, Spherical, SphericalEulerZYX
from sko.bodies.joints import Joint
from sko.errors import JointError
from tests.util import assert_close


def _custom_screw():
    """A user-defined joint with non-constant S: rotation about z by q, then translation by q²
    along the rotated x axis, so ``v_J = [0, 0, q̇, 2 q q̇, q² q̇, 0]`` in the successor frame."""

    def kinematics(q, v):
        X = sp.xlt(np.array([q[0] ** 2, 0.0, 0.0])) @ sp.rot(sp.rz(q[0]))
        S = np.array([[0.0, 0.0, 1.0, 2 * q[0], q[0] ** 2, 0.0]]).T
        c = np.array([0.0, 0.0, 0.0, 2 * v[0] ** 2, 2 * q[0] * v[0] ** 2, 0.0])
        return X, S, c

    return CustomJoint(1, 1, kinematics, name="custom_screw")


JOINTS = {
    "revolute": lambda: Revolute([0.3, -0.5, 0.8]),
    "prismatic": lambda: Prismatic([1.0, 2.0, -0.5]),
    "helical": lambda: Helical([0.0, 0.6, 0.8], pitch=0.3),
    "cylindrical": lambda: Cylindrical([1.0, 1.0, 0.0]),
    "planar": lambda: Planar(),
    "planar_tilted": lambda: Planar([0.2, 0.5, 1.0]),
    "spherical": lambda: Spherical(),
    "euler_zyx": lambda: SphericalEulerZYX(),
    "free": lambda: Free(),
    "rack_and_pinion": lambda: RackAndPinion(0.3),
    "custom": _custom_screw,
    "fixed": lambda: Fixed(),
}
ALL = {**JOINTS, **{f"reversed_{k}": (lambda f=f: f().reversed()) for k, f in JOINTS.items()}}
seeds = st.integers(0, 2**32 - 1)


def _state(joint, seed):
    rng = np.random.default_rng(seed)
    return joint.random(rng), rng.normal(size=joint.nv)


def _derivative(fun, q, qdot, h=1e-6):
    return (fun(q + h * qdot) - fun(q - h * qdot)) / (2 * h)


@pytest.mark.parametrize("name", sorted(ALL))
@settings(max_examples=25)
@given(seed=seeds)
def test_motion_subspace_is_the_derivative_of_the_joint_transform(name, seed):
    """v_J = S ν with  Ẋ_J = −crm(v_J) X_J  along q̇ = qdot(q, ν)."""
    joint = ALL[name]()
    q, v = _state(joint, seed)
    X, S, _ = joint.kinematics(q, v)
    Xdot = _derivative(joint.transform, q, joint.qdot(q, v))
    assert_close(-Xdot @ sp.plucker_inverse(X), sp.crm(S @ v), 1e-7, scale=max(1.0, np.abs(Xdot).max()))


@pytest.mark.parametrize("name", sorted(ALL))
@settings(max_examples=25)
@given(seed=seeds)
def test_bias_is_the_derivative_of_the_motion_subspace(name, seed):
    """c_J = S̊ ν: the derivative of S's successor-frame coordinates along the motion."""
    joint = ALL[name]()
    q, v = _state(joint, seed)
    c = joint.bias_acceleration(q, v)
    Sdot = _derivative(joint.motion_subspace, q, joint.qdot(q, v))
    assert_close(c, Sdot @ v, 1e-7, scale=max(1.0, np.abs(Sdot @ v).max()))


@pytest.mark.parametrize("name", sorted(ALL))
def test_neutral_is_identity_and_shapes(name):
    joint = ALL[name]()
    q0 = joint.neutral()
    X, S, c = joint.kinematics(q0)
    assert_close(X, np.eye(6), 1e-15, scale=1.0)
    assert S.shape == (6, joint.nv) and c.shape == (6,) and q0.shape == (joint.nq,)
    if joint.nv:
        assert np.linalg.matrix_rank(S) == joint.nv


def test_reversal_table_4_2():
    rng = np.random.default_rng(3)
    joint = Helical([1.0, 0.0, 0.0], 0.2)
    rev = joint.reversed()
    assert isinstance(rev, ReversedJoint) and rev.reversed() is joint
    q, v = joint.random(rng), rng.normal(size=1)
    X, S, c = joint.kinematics(q, v)
    Xr, Sr, cr = rev.kinematics(q, v)
    assert_close(Xr @ X, np.eye(6), 1e-14)
    assert_close(Sr, -Xr @ S, 1e-14)
    assert_close(cr, -Xr @ c, 1e-14, scale=1.0)


def test_revolute_and_prismatic_are_featherstone_table_4_1():
    q = 0.7
    X, S, _ = Revolute([0, 0, 1]).kinematics([q])
    assert_close(X, sp.rot(sp.rz(q)), 1e-15)
    assert_close(S.ravel(), [0, 0, 1, 0, 0, 0], 0, scale=1.0)
    X, S, _ = Prismatic([0, 0, 1]).kinematics([q])
    assert_close(X, sp.xlt([0, 0, q]), 1e-15)
    assert_close(S.ravel(), [0, 0, 0, 0, 0, 1], 0, scale=1.0)
    X, S, _ = Helical([0, 0, 1], 0.1).kinematics([q])
    assert_close(X, sp.rot(sp.rz(q)) @ sp.xlt([0, 0, 0.1 * q]), 1e-15)


def test_rack_and_pinion_is_example_4_6():
    r, q, qd = 0.3, 0.8, -1.7
    X, S, c = RackAndPinion(r).kinematics([q], [qd])
    assert_close(X, sp.rot(sp.rz(q)) @ sp.xlt([r * q, 0, 0]), 1e-15)
    assert_close(S.ravel(), [0, 0, 1, r * np.cos(q), -r * np.sin(q), 0], 1e-15)
    assert_close(c, [0, 0, 0, -r * np.sin(q) * qd**2, -r * np.cos(q) * qd**2, 0], 1e-15)


def test_euler_zyx_is_eq_4_7_to_4_9_symbolically():
    q = sympy.symbols("q1:4", real=True)
    qd = sympy.symbols("qd1:4", real=True)
    t = sympy.Symbol("t")
    X, S, c = SphericalEulerZYX().kinematics(np.array(q, dtype=object), np.array(qd, dtype=object))
    E = sp.rx(q[2]) @ sp.ry(q[1]) @ sp.rz(q[0])
    assert all(sympy.simplify(e) == 0 for e in (X[:3, :3] - E).flat)
    # c_J = dS/dt q̇ with q(t) moving at q̇
    path = {qi: qi + qdi * t for qi, qdi in zip(q, qd)}
    Sdot = sympy.Matrix(S).subs(path).diff(t).subs(t, 0)
    residual = sympy.simplify(Sdot * sympy.Matrix(qd) - sympy.Matrix(c))
    assert residual == sympy.zeros(6, 1)


def test_complex_step_through_revolute():
    joint = Revolute([0.0, 1.0, 0.0])
    h = 1e-30
    X = joint.transform([0.4])
    dX = joint.transform(np.array([0.4 + 1j * h])).imag / h
    assert_close(-dX @ sp.plucker_inverse(X), sp.crm(joint.motion_subspace([0.4]).ravel()), 1e-13)


@pytest.mark.parametrize("joint", [Spherical(), Free(), Planar([0.0, 1.0, 1.0])], ids=["spherical", "free", "planar"])
@given(seed=seeds)
def test_integrate_is_the_exponential_of_a_constant_velocity(joint, seed):
    rng = np.random.default_rng(seed)
    q, v = joint.random(rng), rng.normal(size=joint.nv)
    qd = joint.qdot(q, v)
    dt = 0.37
    q1 = joint.integrate(q, v, dt)
    half = joint.integrate(joint.integrate(q, v, dt / 2), v, dt / 2)
    assert_close(joint.transform(half), joint.transform(q1), 1e-12, scale=1.0)
    h = 1e-7
    assert_close((joint.integrate(q, v, h) - joint.integrate(q, v, -h)) / (2 * h), qd, 1e-6, scale=1.0)
    # the body velocity is constant along the motion: X(t + h) X(t)^{-1} has generator S v
    X0, X1 = joint.transform(q1), joint.transform(joint.integrate(q1, v, h))
    assert_close(-(X1 - X0) / h @ sp.plucker_inverse(X0), sp.crm(joint.motion_subspace(q1) @ v), 1e-5, scale=10.0)


@pytest.mark.parametrize("joint", [Spherical(), Free()], ids=["spherical", "free"])
@given(seed=seeds)
def test_quaternion_coordinates(joint, seed):
    rng = np.random.default_rng(seed)
    q, v = joint.random(rng), rng.normal(size=joint.nv)
    assert np.isclose(np.linalg.norm(q[:4]), 1.0)
    qd = joint.qdot(q, v)
    assert abs(q[:4] @ qd[:4]) < 1e-12  # q̇ is tangent to the unit sphere
    assert np.isclose(np.linalg.norm(joint.integrate(q, v, 0.37)[:4]), 1.0)
    # a non-unit quaternion is normalised (same transform), the zero quaternion is rejected
    scaled = q.copy()
    scaled[:4] *= 3.0
    assert_close(joint.transform(scaled), joint.transform(q), 1e-14, scale=1.0)
    assert_close(joint.normalize(scaled), q, 1e-15, scale=1.0)
    zero = q.copy()
    zero[:4] = 0.0
    with pytest.raises(JointError, match="zero norm"):
        joint.transform(zero)
    with pytest.raises(JointError, match="zero norm"):
        joint.normalize(zero)


def test_planar_coordinates_are_position_in_predecessor_velocity_in_successor():
    joint = Planar()
    q = np.array([0.5, 1.0, -2.0])
    X = joint.transform(q)
    assert_close(sp.plucker_translation(X), [1.0, -2.0, 0.0], 1e-15)
    v = np.array([0.3, 1.0, 0.0])  # moving along the successor's x axis
    assert_close(joint.qdot(q, v), [0.3, np.cos(0.5), np.sin(0.5)], 1e-15)


@pytest.mark.parametrize("make, match", [
    (lambda: Revolute([0.0, 0.0, 0.0]), "axis"),
    (lambda: Prismatic([1.0, np.nan, 0.0]), "axis"),
    (lambda: Helical([1.0, 0.0]), "axis"),
    (lambda: Planar([0.0, 0.0, 0.0]), "axis"),
    (lambda: RackAndPinion(np.inf), "radius"),
    (lambda: CustomJoint(2, 1, lambda q, v: None), "qdot"),
    (lambda: CustomJoint(1, 7, lambda q, v: None), "nv"),
    (lambda: CustomJoint(1, 1, "not callable"), "callable"),
    (lambda: CustomJoint(1, 1, lambda q, v: None, neutral=[0.0, 0.0]), "neutral"),
    (lambda: ReversedJoint("revolute"), "Joint"),
])
def test_bad_joint_parameters(make, match):
    with pytest.raises(JointError, match=match):
        make()


def test_bad_joint_inputs():
    with pytest.raises(JointError, match=r"q of Revolute 'elbow' must have shape \(1,\)"):
        Revolute(name="elbow").transform([0.1, 0.2])
    with pytest.raises(JointError, match="velocity"):
        Free().kinematics(Free().neutral(), np.zeros(7))
    with pytest.raises(JointError, match="shape"):
        Spherical().qdot([1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    bad_shapes = CustomJoint(1, 1, lambda q, v: (np.eye(6), np.zeros((6, 2)), np.zeros(6)), name="bad")
    with pytest.raises(JointError, match=r"S of shape \(6, 2\)"):
        bad_shapes.kinematics([0.0])
    not_tuple = CustomJoint(1, 1, lambda q, v: [np.eye(6)], name="bad")
    with pytest.raises(JointError, match="tuple"):
        not_tuple.kinematics([0.0])
    bad_qdot = CustomJoint(2, 1, lambda q, v: (np.eye(6), np.ones((6, 1)), np.zeros(6)), qdot=lambda q, v: v, name="bad")
    with pytest.raises(JointError, match="qdot returned"):
        bad_qdot.qdot([0.0, 0.0], [1.0])


def test_inputs_are_not_mutated():
    joint = Free()
    q = joint.random(np.random.default_rng(0))
    q[:4] *= 2
    before = q.copy()
    joint.kinematics(q, np.ones(6))
    joint.normalize(q)
    joint.integrate(q, np.ones(6), 0.1)
    assert (q == before).all()


# --------------------------------------------------------------------------- a user's subclass of a library joint
class _Scaled(Revolute):
    """A revolute joint whose transform is scaled: not a rigid motion."""

    def _kinematics(self, q, v):
        X, S, c = super()._kinematics(q, v)
        return X * 2.0, S, c


class _Cut(Revolute):
    def _kinematics(self, q, v):
        X, S, c = super()._kinematics(q, v)
        return X[:5], S, c


class _Complex(Revolute):
    def _kinematics(self, q, v):
        X, S, c = super()._kinematics(q, v)
        return X, S + 1e-3j, c


class _Sheared(Joint):  # a joint written from the base class
    nq = nv = 1

    def _kinematics(self, q, v):
        X = sp.rot(sp.rz(q[0]))
        X[0, 1] += 0.5
        return X, np.array([[0.0, 0, 1, 0, 0, 0]]).T, np.zeros(6)


def _system(joint):
    from sko.bodies import RigidBody
    from sko.systems import MultibodySystem

    return MultibodySystem([RigidBody("link", None, joint, sp.spatial_inertia(1.0, [0.1, 0, 0], 0.1 * np.eye(3)))])


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("make, named", [
    (lambda: _Scaled([0, 0, 1], name="scaled"), r"_Scaled 'scaled': X_J returned by _Scaled._kinematics at q = \[0\.\] "
                                                r"is not a rigid Plücker transform"),
    (lambda: _Sheared(name="sheared"), r"_Sheared 'sheared': X_J returned by _Sheared._kinematics at q = .* is not a "
                                       r"rigid Plücker transform: its rotation block is not a proper rotation"),
    (lambda: _Scaled([0, 0, 1], name="scaled").reversed(), r"_Scaled 'scaled'.* is not a rigid Plücker transform"),
])
def test_a_subclass_whose_transform_is_not_rigid_is_refused_by_name(make, named, backend):
    """A subclass of a library joint (or of Joint) overriding _kinematics is user code, as a
    CustomJoint's functions are: its X_J is judged a rigid transform as theirs is, when a body's
    system takes the joint. A scaled X_J gave wrong dynamics without a word."""
    from sko.engine import use_backend

    with use_backend(backend), pytest.raises(JointError, match=named):
        _system(make()).forward_dynamics([0.3], [0.2], [0.1])


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("joint, named", [
    (_Cut([0, 0, 1], name="cut"), r"_Cut 'cut': _Cut._kinematics returned X_J of shape \(5, 6\), expected \(6, 6\)"),
    (_Complex([0, 0, 1], name="complex"), r"_Complex 'complex': S returned by _Complex._kinematics is complex at a "
                                          r"real state"),
])
def test_what_a_subclass_returns_is_checked_at_every_call(joint, named, backend):
    """The shapes and numbers a subclass's _kinematics returns are checked as a CustomJoint's are:
    a cut X_J failed deep in numpy ("operands could not be broadcast")."""
    from sko.engine import use_backend

    with pytest.raises(JointError, match=named):
        joint.kinematics([0.3], [0.2])
    with use_backend(backend), pytest.raises(JointError, match=named):
        _system(joint).forward_dynamics([0.3], [0.2], [0.1])


def test_a_correct_subclass_runs_as_its_parent_with_its_outputs_checked():
    class Same(Revolute):
        def _kinematics(self, q, v):
            return super()._kinematics(q, v)

    joint = Same([0, 0, 1], name="same")
    assert joint.user_defined and not Revolute([0, 0, 1]).user_defined
    state = (np.array([0.3]), np.array([0.2]), np.array([0.1]))
    assert_close(_system(joint).forward_dynamics(*state), _system(Revolute([0, 0, 1])).forward_dynamics(*state), 1e-14)


class _LongRate(Revolute):
    def _qdot(self, q, v):
        return np.array([v[0], 1.0])


class _WideProjection(Revolute):
    def normalize(self, q):
        return np.zeros(3)


@pytest.mark.parametrize("joint, call, named", [
    (_LongRate([0, 0, 1], name="j"), lambda s: s.integrate([0.3], [0.1], 0.1),
     r"_LongRate 'j': _LongRate._qdot returned shape \(2,\), expected \(1,\)"),
    (_WideProjection([0, 0, 1], name="j"), lambda s: s.normalize([0.3]),
     r"_WideProjection 'j': _WideProjection.normalize returned shape \(3,\), expected \(1,\)"),
])
def test_a_subclass_s_own_coordinate_maps_are_checked(joint, call, named):
    """A subclass's own q̇ map or projection is user code as a CustomJoint's are: a wrong size was
    numpy's "could not broadcast input array from shape (2,) into shape (1,)"."""
    with pytest.raises(JointError, match=named):
        call(_system(joint))


@pytest.mark.parametrize("name", sorted(JOINTS))
def test_symbolic_coordinates_are_projected_and_moved_or_refused_by_name(name):
    """normalize, integrate and difference of symbolic coordinates: cast to float ("Cannot convert
    expression to float"). Joints with q̇ = ν move exactly; a quaternion is divided by its symbolic
    norm; an exponential or logarithm map, which takes a series near the zero rotation by
    comparing the angle, is refused naming the joint."""
    joint = JOINTS[name]()
    q = np.array(sympy.symbols(f"q1:{joint.nq + 1}", real=True), dtype=object)
    v = np.array(sympy.symbols(f"v1:{joint.nv + 1}", real=True), dtype=object)
    if not joint.nq:
        return
    normal = joint.normalize(q)
    assert normal.dtype == object
    quaternion = {"spherical": slice(0, 4), "free": slice(0, 4)}.get(name)
    if quaternion is not None:
        x = q[quaternion]
        assert all(sympy.simplify(a - b / sympy.sqrt(x @ x)) == 0 for a, b in zip(normal[quaternion], x))
    else:
        assert all(sympy.simplify(a - b) == 0 for a, b in zip(normal, q))
    if name in ("planar", "planar_tilted", "spherical", "free"):
        for call, what in ((lambda: joint.integrate(q, v, 0.1), "integrate"), (lambda: joint.difference(q, q), "difference")):
            with pytest.raises(JointError, match=rf"{what} takes numbers: .* symbolic coordinates do not allow"):
                call()
    elif joint.nq == joint.nv and name != "custom":  # a user's q̇ map has no difference
        assert all(sympy.simplify(a - (b + 0.1 * c)) == 0 for a, b, c in zip(joint.integrate(q, v, 0.1), q, v))
        assert all(sympy.simplify(d) == 0 for d in joint.difference(q, q))
