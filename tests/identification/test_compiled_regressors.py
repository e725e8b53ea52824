"""The compiled regressors of rigid trees (:mod:`sko.engine.regressors`) against the reference
path (:mod:`sko.systems.regressors`, the Python recursion of IDENTIFICATION.md Eq. 3): random
forests with every joint of the library (floating bases, reversed joints), batches against
single states, complex states, and the same errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.engine import regressors as compiled
from sko.examples.bodies import geared_rotor_chain
from sko.examples.rigid import arm7
from sko.graphs.errors import NonFiniteError, SKOError
from sko.engine.dispatch import use_backend
from tests.rigid.random_systems import random_rigid_system


def _state(system, rng):
    q = system.random_configuration(rng)
    v, dv = rng.normal(size=(2, system.nv))
    return q, v, dv


def _all(system, q, v, dv, **columns):
    return (system.joint_torque_regressor(q, v, dv, **columns), system.kinetic_energy_regressor(q, v, **columns),
            system.potential_energy_regressor(q, **columns))


def _close(ours, reference, rtol: float = 1e-12) -> None:
    scale = max(np.abs(reference).max(initial=0.0), 1.0)
    assert ours.shape == reference.shape and ours.dtype == reference.dtype
    assert np.abs(ours - reference).max(initial=0.0) <= rtol * scale


def _compiled_joints(system) -> bool:
    return all(not system.body(k).joint.user_defined for k in system.bodies)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_compiled_equals_reference_on_random_forests(seed):
    system = random_rigid_system(seed)
    assert compiled.applies(system) == _compiled_joints(system)
    rng = np.random.default_rng(seed)
    q, v, dv = _state(system, rng)
    for columns in ({}, {"friction": True, "armature": True}):
        ours = _all(system, q, v, dv, **columns)
        with use_backend("reference"):
            reference = _all(system, q, v, dv, **columns)
        for x, y in zip(ours, reference):
            _close(x, y)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_compiled_batches_equal_single_states(seed):
    system = random_rigid_system(seed, constant_motion=True)
    assert compiled.applies(system)
    rng = np.random.default_rng(seed)
    states = [_state(system, rng) for _ in range(int(rng.integers(1, 40)))]  # several parallel chunks
    Q, V, DV = (np.array(x) for x in zip(*states))
    for columns in ({}, {"friction": True}, {"armature": True}):
        batch = _all(system, Q, V, DV, **columns)
        for s, (q, v, dv) in enumerate(states):
            for x, y in zip(batch, _all(system, q, v, dv, **columns)):
                np.testing.assert_array_equal(x[s], y)
    for x in _all(system, Q[:0], V[:0], DV[:0]):
        assert x.shape[0] == 0


def test_missing_velocities_and_accelerations_are_zero():
    system = arm7()
    q = system.random_configuration(1)
    zeros = np.zeros(system.nv)
    np.testing.assert_array_equal(system.joint_torque_regressor(q), system.joint_torque_regressor(q, zeros, zeros))
    np.testing.assert_array_equal(system.kinetic_energy_regressor(q), system.kinetic_energy_regressor(q, zeros))


def test_complex_states_equal_the_reference_path():
    system = random_rigid_system(5, constant_motion=True)
    rng = np.random.default_rng(2)
    q, v, dv = _state(system, rng)
    q, v, dv = q + 0j, v + 1e-3j * rng.normal(size=system.nv), dv + 1e-3j * rng.normal(size=system.nv)
    ours = _all(system, q, v, dv, friction=False, armature=True)
    with use_backend("reference"):
        reference = _all(system, q, v, dv, friction=False, armature=True)
    for x, y in zip(ours, reference):
        assert np.iscomplexobj(x)
        _close(x, y)
    batch = system.joint_torque_regressor(np.array([q, q]), np.array([v, v]), np.array([dv, dv]))
    np.testing.assert_array_equal(batch[1], system.joint_torque_regressor(q, v, dv))


def test_other_body_types_take_the_reference_path():
    system = geared_rotor_chain(2)
    assert not compiled.applies(system)
    q, v, dv = _state(system, np.random.default_rng(1))
    got = system.joint_torque_regressor(q, v, dv)
    with use_backend("reference"):
        _close(got, system.joint_torque_regressor(q, v, dv))
    assert not any(name == "joint_torque_regressor" for name, _ in getattr(system._engine, "_vectors", {}))


def _error(call):
    try:
        call()
    except SKOError as exc:
        return type(exc), str(exc)
    raise AssertionError("no error")


@pytest.mark.parametrize("args", [
    lambda s: (np.zeros(s.nq + 1), None, None),
    lambda s: (np.zeros(s.nq), np.zeros(s.nv - 1), None),
    lambda s: (np.zeros(s.nq), None, np.full(s.nv, np.nan)),
    lambda s: (np.zeros((2, s.nq)), np.zeros((3, s.nv)), None),
    lambda s: (np.zeros((2, s.nq)), np.zeros(s.nv), None),
    lambda s: (np.zeros((1, 1, s.nq)), None, None),
    lambda s: ([np.inf] * s.nq, None, None),
])
def test_bad_input_gives_the_reference_paths_errors(args):
    system = arm7()
    q, v, dv = args(system)
    ours = _error(lambda: system.joint_torque_regressor(q, v, dv))
    with use_backend("reference"):
        assert ours == _error(lambda: system.joint_torque_regressor(q, v, dv))


def test_an_overflow_is_an_error_never_an_infinity():
    system = arm7()
    q = system.random_configuration(0)
    v = np.full(system.nv, 1e200)
    for call in (lambda: system.joint_torque_regressor(q, v), lambda: system.kinetic_energy_regressor(q, v),
                 lambda: system.joint_torque_regressor(np.array([q, q]), np.array([v * 0, v]))):
        with pytest.raises(NonFiniteError):
            call()
