"""Inverse dynamics of rigid trees in body coordinates (sko.engine.rigid_rnea): the kernel the
``inverse_dynamics`` request takes for float64 states where every body is a library rigid body
on ten inertial parameters and every joint has a constant S. It equals the generic kernel and
the reference on random forests of every joint kind of constant S, and hands an arena the caller
filled (external forces) to the generic recursion."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sko.bodies import Free, Revolute, RigidBody
from sko.engine import rigid_rnea, use_backend
from sko.engine import requests as rq
from sko.errors import JointError
from sko.examples.bodies import flexible_examples
from sko.systems import MultibodySystem
from tests.compiled.rigid_forests import example_robots, inertia
from tests.compiled.test_rigid_centroidal import _close, shuffled_forest

ID = rq.REQUESTS["inverse_dynamics"]


def _state(system, seed: int):
    rng = np.random.default_rng(seed)
    return system.random_configuration(rng), *rng.normal(size=(2, system.nv))


def _kernel(system, q, v, dv, rigid: bool) -> np.ndarray:
    """``T`` at one state by the rigid kernel or the generic one."""
    request = ID if rigid else dataclasses.replace(ID, rigid=None)
    out = np.zeros(system.nv)
    status = rq.evaluate_one(rq.request_vector(request, system._engine.layout, np.float64), q, v, dv, out)
    assert status == -1
    return out


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), constant=st.booleans())
def test_the_rigid_kernel_equals_the_generic_kernel_and_the_reference(seed, constant):
    system = shuffled_forest(seed, constant)
    layout = system._engine.layout
    takes = rq.takes_rigid(ID, layout, np.float64)
    joints = [system.body(k).joint for k in system.bodies]
    assert takes == all(j.constant_motion or j.kind == "fixed" for j in joints)  # reversed joints: generic
    q, v, dv = _state(system, seed)
    got = system.inverse_dynamics(q, v, dv)
    if takes:
        _close(_kernel(system, q, v, dv, True), _kernel(system, q, v, dv, False), 1e-12)
    with use_backend("reference"):
        _close(got, system.inverse_dynamics(q, v, dv), 1e-10)


def test_joints_on_every_coordinate_axis_equal_the_reference_per_state_and_in_lanes():
    """A chain on revolute, prismatic and helical joints about ``±e_x``, ``±e_y``, ``±e_z`` (the
    kinematics' plane rotations, each row order and sign) under turned placements: inverse
    dynamics, ℳ and forward dynamics equal the reference path, and a batch its single calls."""
    from sko import spatial as sp
    from sko.bodies import Helical, Prismatic

    rng = np.random.default_rng(7)
    bodies, parent = [], None
    for kind in (Revolute, Prismatic, lambda u: Helical(u, 0.2)):
        for k in range(3):
            for sign in (1.0, -1.0):
                name = f"b{len(bodies)}"
                placement = sp.pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3))
                bodies.append(RigidBody(name, parent, kind(sign * np.eye(3)[k]), inertia(rng), placement))
                parent = name
    system = MultibodySystem(bodies, gravity=rng.normal(size=3))
    assert system._engine._lanes()
    Q, V, X = rng.normal(size=(3, 5, system.nv))
    ID, M, FD = system.inverse_dynamics(Q, V, X), system.mass_matrix(Q), system.forward_dynamics(Q, V, X)
    for s in range(5):
        single = system.inverse_dynamics(Q[s], V[s], X[s]), system.mass_matrix(Q[s]), system.forward_dynamics(Q[s], V[s], X[s])
        with use_backend("reference"):
            reference = (system.inverse_dynamics(Q[s], V[s], X[s]), system.mass_matrix(Q[s]),
                         system.forward_dynamics(Q[s], V[s], X[s]))
        for batch, one, ref in zip((ID[s], M[s], FD[s]), single, reference):
            _close(one, ref, 1e-10)
            _close(batch, one, 1e-12)


def test_the_example_robots_take_it_and_equal_the_reference():
    for _, _, system in example_robots():
        assert rq.takes_rigid(ID, system._engine.layout, np.float64)
        q, v, dv = _state(system, 3)
        got = system.inverse_dynamics(q, v, dv)
        with use_backend("reference"):
            _close(got, system.inverse_dynamics(q, v, dv), 1e-11)


def test_external_forces_reach_the_result():
    """The engine fills the arena itself for external forces (in each body's ``b``): the rigid
    kernel hands it to the generic recursion, which reads them."""
    system = shuffled_forest(3, True)
    assert rq.takes_rigid(ID, system._engine.layout, np.float64)
    rng = np.random.default_rng(0)
    forces = {k: rng.normal(size=6) for k in list(system.bodies)[:2]}
    q, v, dv = _state(system, 0)
    got = system.inverse_dynamics(q, v, dv, external_forces=forces)
    assert np.abs(got - system.inverse_dynamics(q, v, dv)).max() > 1e-3
    with use_backend("reference"):
        _close(got, system.inverse_dynamics(q, v, dv, external_forces=forces), 1e-10)


def test_a_batch_equals_its_single_calls():
    system = shuffled_forest(5, True)
    rng = np.random.default_rng(1)
    Q = np.array([system.random_configuration(rng) for _ in range(37)])
    V, A = rng.normal(size=(2, 37, system.nv))
    T = system.inverse_dynamics(Q, V, A)
    for s in range(37):
        _close(T[s], system.inverse_dynamics(Q[s], V[s], A[s]), 1e-12)


def test_other_systems_keep_the_generic_kernel():
    """A joint whose S varies (a reversed revolute joint), another body type, complex states."""
    rng = np.random.default_rng(2)
    reversed_joint = MultibodySystem([RigidBody("a", None, Revolute([0, 0, 1]).reversed(), inertia(rng))])
    assert not rigid_rnea.applies(reversed_joint._engine.layout)
    flexible = flexible_examples()["flexible-spacecraft"]()
    rigid = shuffled_forest(3, True)
    assert not rq.takes_rigid(ID, reversed_joint._engine.layout, np.float64)
    assert not rq.takes_rigid(ID, flexible._engine.layout, np.float64)
    assert not rq.takes_rigid(ID, rigid._engine.layout, np.complex128)


def test_a_free_joint_asked_for_its_structure_alone_equals_every_term():
    """A free joint's state kernel at Terms.STRUCTURE (its own path: E from the quaternion and
    the position, H = I) writes what the joint's general path writes; any nonzero quaternion is
    its unit one; a zero quaternion is the joint's error, naming the body, on both paths."""
    rng = np.random.default_rng(4)
    system = MultibodySystem([RigidBody("base", None, Free(), inertia(rng)),
                              RigidBody("arm", "base", Revolute([0, 1, 0]), inertia(rng))], gravity=[0, 0, -9.81])
    q = system.random_configuration(rng)
    M = system.mass_matrix(q)
    with use_backend("reference"):
        _close(M, system.mass_matrix(q), 1e-13)
    scaled = q.copy()
    scaled[:4] *= 7.5
    _close(system.mass_matrix(scaled), M, 1e-14)
    zero = q.copy()
    zero[:4] = 0
    for backend in ("compiled", "reference"):
        with use_backend(backend), pytest.raises(JointError, match="body 'base': .*zero norm"):
            system.mass_matrix(zero)
