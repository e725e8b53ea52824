"""Composite, offset and position-first free joints, and armature bodies, against systems built
without them: a composite joint is a chain of massless bodies, the position-first free joint is
:class:`Free` in other coordinates, armature adds ``diag(A)`` to ℳ."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko import spatial as sp
from sko.bodies import ArmatureBody, BodyError, CompositeJoint, Free, FreePositionFirst, OffsetJoint, Revolute
from sko.errors import JointError
from sko.systems import SystemBuilder
from sko.systems.multibody import MultibodySystem
from tests.rigid.random_systems import JOINT_MAKERS
from tests.util import assert_close


def _inertia(rng):
    S = rng.normal(size=(3, 3))
    S = S @ S.T * 0.05 + 0.01 * np.eye(3)
    return dict(mass=rng.uniform(0.5, 2.0), com=rng.normal(size=3) * 0.2, inertia_com=np.trace(S) * np.eye(3) - S)


def _pair(seed: int, n_parts: int):
    """The same mechanism twice: a body on a composite of ``n_parts`` random joints (and a child),
    and a chain of massless bodies, one per part."""
    rng = np.random.default_rng(seed)
    joints = []
    for _ in range(n_parts):  # at most 6 dofs in all; no user-defined joint (its states are fully
        joint = JOINT_MAKERS[int(rng.integers(len(JOINT_MAKERS) - 1))](rng)  # checked: no massless body)
        if sum(j.nv for j in joints) + joint.nv <= 6:
            joints.append(joint)
    joints = joints or [Revolute(rng.normal(size=3))]
    transforms = [sp.pose_transform(rng.normal(size=3) * 0.3, rng.normal(size=3)) for _ in joints]
    body, child, X_T = _inertia(rng), _inertia(rng), sp.pose_transform(rng.normal(size=3), rng.normal(size=3))
    composite = SystemBuilder()
    composite.add_body("base", None, Revolute(rng.normal(size=3)), mass=1.0, inertia_com=0.1 * np.eye(3))
    composite.add_body("body", "base", CompositeJoint(list(zip([None] + transforms[1:], joints))), transforms[0], **body)
    composite.add_body("child", "body", Revolute(rng.normal(size=3)), X_T, **child)
    chain = SystemBuilder()
    chain.add_body("base", None, composite.build().body_joint("base"), mass=1.0, inertia_com=0.1 * np.eye(3))
    parent = "base"
    for i, (A, joint) in enumerate(zip(transforms, joints)):
        last = i == len(joints) - 1
        chain.add_body("body" if last else f"virtual{i}", parent, joint, A, **(body if last else {}))
        parent = "body" if last else f"virtual{i}"
    chain.add_body("child", "body", composite.build().body_joint("child"), X_T, **child)
    return composite.build(), chain.build(), rng


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3))
def test_composite_joint_is_a_chain_of_massless_bodies(seed, n_parts):
    composite, chain, rng = _pair(seed, n_parts)
    assert (composite.nq, composite.nv) == (chain.nq, chain.nv)
    q = composite.random_configuration(rng)
    qd, qdd = rng.normal(size=(2, composite.nv))
    assert_close(composite.mass_matrix(q), chain.mass_matrix(q), rtol=1e-11)
    assert_close(composite.inverse_dynamics(q, qd, qdd), chain.inverse_dynamics(q, qd, qdd), rtol=1e-11)
    assert_close(composite.qdot(q, qd), chain.qdot(q, qd), rtol=1e-14)
    assert_close(composite.integrate(q, qd, 0.1), chain.integrate(q, qd, 0.1), rtol=1e-14)
    q1 = composite.integrate(q, qd, 0.3)
    assert_close(composite.difference(q, q1), chain.difference(q, q1), rtol=1e-14)
    assert_close(composite.normalize(q), chain.normalize(q), rtol=1e-15)
    assert_close(composite.neutral_configuration(), chain.neutral_configuration(), rtol=0)


def test_position_first_free_joint_is_free_in_other_coordinates():
    rng = np.random.default_rng(4)
    body, arm = _inertia(rng), _inertia(rng)
    systems = []
    for joint in (Free(), FreePositionFirst()):
        b = SystemBuilder()
        b.add_body("trunk", None, joint, **body)
        b.add_body("arm", "trunk", Revolute([0, 1, 0]), sp.pose_transform([0.2, 0, 0]), **arm)
        systems.append(b.build())
    ours, theirs = systems
    for _ in range(5):
        quat, p = sp.quaternion_normalize(rng.normal(size=4)), rng.normal(size=3)
        w, v_body, qd_arm = rng.normal(size=3), rng.normal(size=3), rng.normal(size=1)
        wdot, vdot_body, qdd_arm = rng.normal(size=3), rng.normal(size=3), rng.normal(size=1)
        R = sp.quaternion_matrix(quat)
        q1, q2 = np.concatenate([quat, p, [0.3]]), np.concatenate([p, quat, [0.3]])
        nu1, nu2 = np.concatenate([w, v_body, qd_arm]), np.concatenate([R @ v_body, w, qd_arm])
        a1 = np.concatenate([wdot, vdot_body, qdd_arm])
        a2 = np.concatenate([R @ (vdot_body + np.cross(w, v_body)), wdot, qdd_arm])  # d(R v)/dt
        tau1 = ours.inverse_dynamics(q1, nu1, a1)
        tau2 = theirs.inverse_dynamics(q2, nu2, a2)
        assert_close(tau2, np.concatenate([R @ tau1[3:6], tau1[:3], tau1[6:]]), rtol=1e-12)  # f_world = R f_body
        assert_close(theirs.forward_dynamics(q2, nu2, tau2), a2, rtol=1e-10)
        assert_close(ours.energy(q1, nu1), theirs.energy(q2, nu2), rtol=1e-13)
        assert_close(theirs.qdot(q2, nu2), np.concatenate([R @ v_body, ours.qdot(q1, nu1)[:4], qd_arm]), rtol=1e-13)
        assert_close(theirs.difference(q2, theirs.integrate(q2, nu2, 0.5)), 0.5 * nu2, rtol=1e-12)


def test_offset_joint_reads_from_its_offset():
    joint = OffsetJoint(Revolute([0, 0, 1], name="hinge"), [0.4])
    assert joint.name == "hinge" and joint.kind == "offset" and joint.joint.kind == "revolute"
    np.testing.assert_allclose(joint.transform([1.0]), Revolute([0, 0, 1]).transform([0.6]))
    np.testing.assert_allclose(joint.neutral(), [0.4])
    np.testing.assert_allclose(joint.transform(joint.neutral()), np.eye(6), atol=1e-15)
    with pytest.raises(JointError, match="ν = q̇"):
        OffsetJoint(Free(), np.zeros(7))
    with pytest.raises(JointError, match="7 velocity coordinates"):
        CompositeJoint([(None, Free()), (None, Revolute())])


def test_armature_adds_its_diagonal_and_nothing_else():
    rng = np.random.default_rng(8)
    I = [sp.spatial_inertia(**_inertia(rng)) for _ in range(3)]
    joints = [Revolute(rng.normal(size=3)), Free(), Revolute(rng.normal(size=3))]
    X = [sp.pose_transform(rng.normal(size=3), rng.normal(size=3)) for _ in range(3)]
    A = [np.array([0.3]), np.arange(1.0, 7.0) / 10, np.array([0.0])]
    from sko.bodies import RigidBody

    plain = MultibodySystem([RigidBody(f"b{i}", f"b{i - 1}" if i else None, joints[i], I[i], X[i]) for i in range(3)])
    armed = MultibodySystem([ArmatureBody(f"b{i}", f"b{i - 1}" if i else None, joints[i], I[i], A[i], X[i])
                             for i in range(3)])
    q = plain.random_configuration(rng)
    qd, qdd = rng.normal(size=(2, plain.dof_size))
    D = np.diag(np.concatenate(A))
    assert_close(armed.mass_matrix(q), plain.mass_matrix(q) + D, rtol=1e-13)
    assert_close(armed.inverse_dynamics(q, qd, qdd), plain.inverse_dynamics(q, qd, qdd) + D @ qdd, rtol=1e-12)
    tau = armed.inverse_dynamics(q, qd, qdd)
    assert_close(armed.forward_dynamics(q, qd, tau), qdd, rtol=1e-10)
    assert_close(armed.kinetic_energy(q, qd), plain.kinetic_energy(q, qd) + qd @ D @ qd / 2, rtol=1e-13)
    with pytest.raises(BodyError, match="armature of body 'x'"):
        ArmatureBody("x", None, Revolute(), I[0], [-1.0])
