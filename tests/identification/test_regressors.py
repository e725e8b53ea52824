"""The regressors on random systems of every kind (IDENTIFICATION.md): ``Y π = τ − T_hinge``,
linearity against systems rebuilt with other physical parameters, the columns against complex
step in ``π``, batches against single states, energies, coupled systems against ``Gᵀ Y_sp``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.bodies.contract import BodyError
from sko.examples.bodies import flexible_two_link, geared_rotor_chain, random_system
from sko.examples.rigid import arm7, planar_chain
from sko.identification.consistent import pseudo_inertia
from sko.identification.estimate import rigid_blocks
from sko.engine import use_backend
from sko.verify.identification import stepped_torque_regressor
from tests.embedding.random_clusters import drawn_clustered_system
from tests.rigid.random_systems import random_rigid_system

ROOT = Path(__file__).resolve().parents[2]


def _state(system, rng):
    q = system.random_configuration(rng)
    v, dv = rng.normal(size=(2, system.nv))
    return q, v, dv


def _other_parameters(system, rng) -> np.ndarray:
    """Physical parameters unlike the system's: each rigid body's pseudo-inertia times a random
    positive definite congruence, other parameters scaled by random positive factors."""
    pi = system.inertial_parameters()
    out = pi * rng.uniform(0.5, 2.0, len(pi))
    for i in rigid_blocks(system.inertial_parameter_names()):
        J = pseudo_inertia(pi[i:i + 10])
        A = np.eye(4) + 0.2 * rng.normal(size=(4, 4))
        A[3, :3] = 0.0
        Jn = A @ J @ A.T
        Sigma = Jn[:3, :3]
        Ibar = np.trace(Sigma) * np.eye(3) - Sigma
        out[i:i + 10] = [Jn[3, 3], *Jn[:3, 3], Ibar[0, 0], Ibar[0, 1], Ibar[1, 1], Ibar[0, 2], Ibar[1, 2], Ibar[2, 2]]
    return out


def _torque(system, q, v, dv):
    return system.inverse_dynamics(q, v, dv) - system.hinge_forces(q, v)


def _scale(*xs) -> float:
    return max(max(np.abs(x).max(initial=0.0) for x in xs), 1e-300)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_forest_regressor_reproduces_inverse_dynamics_on_both_backends(seed):
    system = random_rigid_system(seed)
    rng = np.random.default_rng(seed)
    q, v, dv = _state(system, rng)
    Y = system.joint_torque_regressor(q, v, dv)
    pi = system.inertial_parameters()
    for backend in ("reference", "compiled"):
        with use_backend(backend):
            tau = _torque(system, q, v, dv)
        assert np.abs(Y @ pi - tau).max() <= 1e-10 * _scale(tau, np.abs(Y) @ np.abs(pi))
    other = system.with_inertial_parameters(_other_parameters(system, rng))
    tau = _torque(other, q, v, dv)
    assert np.abs(Y @ other.inertial_parameters() - tau).max() <= 1e-10 * _scale(tau, Y)
    stepped = stepped_torque_regressor(system, q, v, dv)
    assert np.abs(Y - stepped).max(initial=0.0) <= 1e-12 * _scale(Y)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_batched_regressors_equal_single_states(seed):
    system = random_rigid_system(seed, max_bodies=5)
    rng = np.random.default_rng(seed)
    states = [_state(system, rng) for _ in range(3)]
    Q, V, DV = (np.array(x) for x in zip(*states))
    for friction, armature in ((False, False), (True, True)):
        Y = system.joint_torque_regressor(Q, V, DV, friction=friction, armature=armature)
        yT = system.kinetic_energy_regressor(Q, V, friction=friction, armature=armature)
        yV = system.potential_energy_regressor(Q, friction=friction, armature=armature)
        for s, (q, v, dv) in enumerate(states):
            np.testing.assert_array_equal(Y[s], system.joint_torque_regressor(q, v, dv, friction=friction,
                                                                              armature=armature))
            np.testing.assert_array_equal(yT[s], system.kinetic_energy_regressor(q, v, friction=friction,
                                                                                 armature=armature))
            np.testing.assert_array_equal(yV[s], system.potential_energy_regressor(q, friction=friction,
                                                                                   armature=armature))
    empty = system.joint_torque_regressor(np.zeros((0, system.nq)), np.zeros((0, system.nv)), np.zeros((0, system.nv)))
    assert empty.shape == (0, system.nv, len(system.inertial_parameters()))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_energy_regressors(seed):
    system = random_rigid_system(seed)
    rng = np.random.default_rng(seed)
    q, v, _ = _state(system, rng)
    pi = system.inertial_parameters()
    T, V = system.kinetic_energy(q, v), system.potential_energy(q)
    assert abs(system.kinetic_energy_regressor(q, v) @ pi - T) <= 1e-12 * max(abs(T), 1.0)
    assert abs(system.potential_energy_regressor(q) @ pi - V) <= 1e-12 * max(abs(V), 1.0)


def test_joint_columns():
    system = arm7()
    rng = np.random.default_rng(3)
    q, v, dv = _state(system, rng)
    Y = system.joint_torque_regressor(q, v, dv, friction=True, armature=True)
    p, n = len(system.inertial_parameters()), system.nv
    np.testing.assert_array_equal(Y[:, :p], system.joint_torque_regressor(q, v, dv))
    np.testing.assert_array_equal(Y[:, p:], np.hstack([np.diag(v), np.diag(np.sign(v)), np.diag(dv)]))
    names = system.inertial_parameter_names(friction=True, armature=True)
    assert len(names) == Y.shape[1] and names[p] == ("viscous", 0) and names[-1] == ("armature", n - 1)
    np.testing.assert_array_equal(system.inertial_parameters(friction=True, armature=True)[p:], np.zeros(3 * n))
    yT = system.kinetic_energy_regressor(q, v, armature=True)
    np.testing.assert_array_equal(yT[p:], 0.5 * v * v)


@pytest.mark.parametrize("build", [lambda: flexible_two_link(2, 0.05), lambda: geared_rotor_chain(3),
                                   lambda: random_system(4), lambda: random_system(11)])
def test_non_rigid_bodies_against_complex_step_and_other_parameters(build):
    system = build()
    rng = np.random.default_rng(5)
    q, v, dv = _state(system, rng)
    Y = system.joint_torque_regressor(q, v, dv)
    pi = system.inertial_parameters()
    tau = _torque(system, q, v, dv)
    assert np.abs(Y @ pi - tau).max() <= 1e-10 * _scale(tau, np.abs(Y) @ np.abs(pi))
    assert np.abs(Y - stepped_torque_regressor(system, q, v, dv)).max() <= 1e-12 * _scale(Y)
    other = system.with_inertial_parameters(_other_parameters(system, rng))
    tau = _torque(other, q, v, dv)
    assert np.abs(Y @ other.inertial_parameters() - tau).max() <= 1e-10 * _scale(tau, Y)
    T = system.kinetic_energy(q, v)
    assert abs(system.kinetic_energy_regressor(q, v) @ pi - T) <= 1e-12 * max(abs(T), 1.0)


def test_tutorial_bead_declares_no_parameters_and_adds_no_columns():
    spec = importlib.util.spec_from_file_location("tutorial_body_type", ROOT / "papers" / "tutorial_body_type.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("tutorial_body_type", module)
    spec.loader.exec_module(module)
    system = module.build()
    names = system.inertial_parameter_names()
    assert not any(k.startswith("bead") for k, _ in names)
    rng = np.random.default_rng(7)
    q, v, dv = _state(system, rng)
    Y = system.joint_torque_regressor(q, v, dv)
    assert np.abs(Y - stepped_torque_regressor(system, q, v, dv)).max() <= 1e-12 * _scale(Y)
    # the beads' forces stay outside Y π: linear in the others' parameters all the same
    other = system.with_inertial_parameters(_other_parameters(system, rng))
    change = _torque(other, q, v, dv) - _torque(system, q, v, dv)
    assert np.abs(Y @ (other.inertial_parameters() - system.inertial_parameters()) - change).max() \
        <= 1e-10 * _scale(change, Y)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_coupled_systems_against_dense_spanning_construction(seed):
    system = drawn_clustered_system(seed)  # a drawn loop its cluster cannot close is assumed away
    rng = np.random.default_rng(seed)
    q = system.random_configuration(rng)
    v, dv = rng.normal(size=(2, system.nv))
    Y = system.joint_torque_regressor(q, v, dv)
    spanning = system.spanning_system()
    G, Gdv, _, _ = system.constraint_matrices(q, v)
    theta = system.spanning_configuration(q)
    # dense: Gᵀ Y_sp from the spanning tree's own public regressor at the lifted motion
    dense = G.T @ spanning.joint_torque_regressor(theta, G @ v, G @ dv + Gdv)
    np.testing.assert_allclose(Y, dense, rtol=0, atol=1e-12 * _scale(dense))
    pi = system.inertial_parameters()
    tau = _torque(system, q, v, dv)
    assert np.abs(Y @ pi - tau).max(initial=0.0) <= 1e-9 * _scale(tau, np.abs(Y) @ np.abs(pi))  # nv may be 0
    other = system.with_inertial_parameters(_other_parameters(spanning, rng))
    tau = _torque(other, q, v, dv)
    assert np.abs(Y @ other.inertial_parameters() - tau).max(initial=0.0) <= 1e-9 * _scale(tau, Y)
    T = system.kinetic_energy(q, v)
    assert abs(system.kinetic_energy_regressor(q, v) @ pi - T) <= 1e-10 * max(abs(T), 1.0)


def test_with_inertial_parameters_checks_and_never_mutates():
    system = arm7()
    pi = system.inertial_parameters()
    before = pi.copy()
    new = system.with_inertial_parameters(2 * pi)
    np.testing.assert_array_equal(system.inertial_parameters(), before)
    np.testing.assert_allclose(new.inertial_parameters(), 2 * pi)
    q = system.random_configuration(0)
    np.testing.assert_allclose(new.mass_matrix(q), 2 * system.mass_matrix(q), rtol=1e-12)
    with pytest.raises(BodyError, match="inertial parameters"):
        system.with_inertial_parameters(pi[:-1])
    bad = pi.copy()
    bad[0] = -1.0
    with pytest.raises(Exception, match="negative mass"):
        system.with_inertial_parameters(bad)
    bad = pi.copy()
    bad[4] = np.nan
    with pytest.raises(BodyError, match="finite"):
        system.with_inertial_parameters(bad)


def test_regressors_of_symbolic_states_are_expressions_equal_to_the_numeric_ones():
    sympy = pytest.importorskip("sympy")
    system = planar_chain(2)
    t, w, a = sympy.symbols("t1 t2"), sympy.symbols("w1 w2"), sympy.symbols("a1 a2")
    q, v, dv = (np.array(x, dtype=object) for x in (t, w, a))
    values = {**dict(zip(t, [0.3, 0.2])), **dict(zip(w, [0.5, -0.1])), **dict(zip(a, [0.2, 0.4]))}

    def numeric(x):
        return np.array([float(sympy.sympify(e).subs(values)) for e in x.ravel()]).reshape(x.shape)

    Y = system.joint_torque_regressor(q, v, dv, friction=True, armature=True)
    y = system.energy_regressors(q, v, friction=True, armature=True)
    assert Y.dtype == object and y.dtype == object
    np.testing.assert_allclose(numeric(Y), system.joint_torque_regressor([0.3, 0.2], [0.5, -0.1], [0.2, 0.4],
                                                                        friction=True, armature=True), atol=1e-12)
    np.testing.assert_allclose(numeric(y), system.energy_regressors([0.3, 0.2], [0.5, -0.1], friction=True,
                                                                    armature=True), atol=1e-12)
