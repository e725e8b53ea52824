"""Identification of a 7-dof arm from an excitation trajectory with 1 % torque noise
(IDENTIFICATION.md, *Estimation*, *Physical consistency*, *Excitation*)."""

from __future__ import annotations

import numpy as np
import pytest

from sko.examples.rigid import arm7, planar_chain
from sko.graphs.errors import DimensionError, NotPositiveDefiniteError
from sko.identification import (base_parameters, excitation_trajectory, identify, log_cholesky_parameters,
                                pseudo_inertia, rigid_from_log_cholesky)
from sko.identification.estimate import rigid_blocks


@pytest.fixture(scope="module")
def arm():
    system = arm7()
    base = base_parameters(system, rng=0)
    trajectory = excitation_trajectory(system, samples=40, harmonics=3, candidates=4, iterations=30, base=base, rng=1)
    return system, base, trajectory


def test_base_parameters_reproduce_the_torques(arm):
    system, base, _ = arm
    assert base.K.shape == (base.rank, len(system.inertial_parameters()))
    rng = np.random.default_rng(9)
    q = np.array([system.random_configuration(rng) for _ in range(20)])
    v, dv = rng.normal(size=(2, 20, system.nv))
    Y = system.joint_torque_regressor(q, v, dv)
    pi = system.inertial_parameters()
    np.testing.assert_allclose(base.regressor(Y) @ base.base(pi), Y @ pi, rtol=0, atol=1e-9 * np.abs(Y @ pi).max())
    W = base.regressor(Y).reshape(-1, base.rank)
    assert np.linalg.matrix_rank(W) == base.rank  # independent at states it was not found at
    # a planar chain of revolute joints about parallel axes: three combinations per link but the base
    assert base_parameters(planar_chain(2), rng=0).rank < 20


def test_excitation_stays_within_limits_and_is_periodic(arm):
    system, base, trajectory = arm
    assert np.isfinite(trajectory.condition_number) and trajectory.condition_number < 1e4
    q, v, dv = trajectory.at(trajectory.times + trajectory.period)
    np.testing.assert_allclose(q, trajectory.q, atol=1e-9)
    np.testing.assert_allclose(v, trajectory.v, atol=1e-9)
    assert (np.abs(trajectory.q - trajectory.q0) <= np.pi * 0.9 + 1e-12).all()
    assert (np.abs(trajectory.v) <= 2.0 * 0.9 + 1e-12).all()
    h = 1e-6  # dv is the derivative of v, v of q
    q1, v1, _ = trajectory.at(trajectory.times + h)
    q0, v0, _ = trajectory.at(trajectory.times - h)
    np.testing.assert_allclose((q1 - q0) / (2 * h), trajectory.v, atol=1e-6)
    np.testing.assert_allclose((v1 - v0) / (2 * h), trajectory.dv, atol=1e-6)


def test_identification_recovers_base_parameters_within_three_standard_errors(arm):
    system, base, trajectory = arm
    tau = system.inverse_dynamics(trajectory.q, trajectory.v, trajectory.dv)
    rng = np.random.default_rng(2)
    sigma = 0.01 * np.abs(tau).std(axis=0)
    measured = tau + sigma * rng.normal(size=tau.shape)
    result = identify(system, trajectory.q, trajectory.v, trajectory.dv, measured, weights=1 / sigma, base=base)
    true = base.base(system.inertial_parameters())
    assert (np.abs(result.estimate - true) <= 3 * result.standard_errors).all()
    assert np.isfinite(result.condition_number)
    consistent = result.consistent
    for i in rigid_blocks(system.inertial_parameter_names()):
        assert np.linalg.eigvalsh(pseudo_inertia(consistent[i:i + 10])).min() > 0
    Y = system.joint_torque_regressor(trajectory.q, trajectory.v, trajectory.dv)
    # the consistent estimate explains the data as well as the model does (noise level)
    rms = np.sqrt(np.mean(((Y @ consistent - measured) / sigma) ** 2))
    assert rms < 1.2


def test_log_cholesky_round_trip():
    system = arm7()
    pi = system.inertial_parameters()
    for i in rigid_blocks(system.inertial_parameter_names()):
        p = pi[i:i + 10]
        np.testing.assert_allclose(rigid_from_log_cholesky(log_cholesky_parameters(p)), p, rtol=1e-10,
                                   atol=1e-12 * np.abs(p).max())
    with pytest.raises(NotPositiveDefiniteError, match="pseudo-inertia"):
        log_cholesky_parameters([-1.0, 0, 0, 0, 1, 0, 1, 0, 0, 1])


def test_identify_rejects_bad_input():
    system = planar_chain(2)
    q = np.zeros((3, 2))
    with pytest.raises(DimensionError, match="tau"):
        identify(system, q, q, q, np.zeros((3, 3)))
    with pytest.raises(DimensionError, match="same number of states"):
        identify(system, q, q, q, np.zeros((2, 2)))
    with pytest.raises(DimensionError, match="weights"):
        identify(system, q, q, q, q, weights=[1.0, -1.0])
    with pytest.raises(DimensionError, match="samples"):
        base_parameters(system, samples=0)
