"""What identification reports and refuses (IDENTIFICATION.md, *Estimation*, *Excitation*): the
excitation's condition number is cond(W_b) at its samples; bad inputs are errors of the project's
own types naming the input."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import Revolute
from sko.examples.rigid import planar_chain
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.identification import base_parameters, excitation_trajectory, identify, log_cholesky_parameters
from sko.spatial import pose_transform
from sko.systems import SystemBuilder


def _limited_double_pendulum():
    b = SystemBuilder(gravity=[0, 0, -9.81])
    joint = Revolute([0, 1, 0]).with_limits(-2, 2, 3.0, 1.0)  # an effort limit of 1 N m the motion exceeds
    b.add_body("l1", None, joint, mass=1.0, com=[0, 0, -0.5], inertia_com=np.diag([0.1, 0.1, 0.01]))
    b.add_body("l2", "l1", joint, placement=pose_transform([0, 0, -1.0]), mass=1.0, com=[0, 0, -0.5],
               inertia_com=np.diag([0.1, 0.1, 0.01]))
    return b.build()


def test_excitation_reports_the_condition_number_of_the_base_regressor_at_its_samples():
    system = _limited_double_pendulum()
    base = base_parameters(system, rng=0)
    ex = excitation_trajectory(system, harmonics=2, samples=40, candidates=3, iterations=0, base=base, rng=1)
    Y = system.joint_torque_regressor(ex.q, ex.v, ex.dv)
    assert np.abs(Y @ system.inertial_parameters()).max() > 1.0  # the effort penalty is active
    assert ex.condition_number == pytest.approx(np.linalg.cond(base.regressor(Y).reshape(-1, base.rank)), rel=1e-12)


@pytest.mark.parametrize("option, value", [("candidates", 0), ("harmonics", 0), ("samples", 2.0), ("iterations", -1),
                                           ("period", np.inf), ("period", 0.0), ("margin", -1.0), ("margin", np.nan),
                                           ("margin", 1.5), ("default_range", 0.0), ("default_velocity", np.inf)])
def test_excitation_rejects_bad_options_naming_them(option, value):
    options = dict(harmonics=2, samples=10, candidates=2, iterations=0, rng=1) | {option: value}
    with pytest.raises(DimensionError, match=option):
        excitation_trajectory(planar_chain(2), **options)


def test_excitation_with_a_margin_stays_within_its_share_of_the_range():
    ex = excitation_trajectory(planar_chain(2), harmonics=2, samples=50, candidates=2, iterations=0, margin=0.5, rng=1)
    assert (np.abs(ex.q - ex.q0) <= 0.5 * np.pi + 1e-12).all() and (np.abs(ex.v) <= 0.5 * 2.0 + 1e-12).all()


@pytest.fixture(scope="module")
def data():
    system = planar_chain(2)
    rng = np.random.default_rng(0)
    q, v, dv = rng.normal(size=(3, 40, 2))
    tau = system.inverse_dynamics(q, v, dv) + 0.3 * v + 0.2 * np.sign(v)
    return system, q, v, dv, tau


def test_identify_refuses_a_base_of_other_columns(data):
    system, q, v, dv, tau = data
    base, base_friction = base_parameters(system, rng=0), base_parameters(system, rng=0, friction=True)
    with pytest.raises(DimensionError, match="base is of other parameters.*friction=True"):
        identify(system, q, v, dv, tau, base=base, friction=True, consistent=False)
    with pytest.raises(DimensionError, match="base is of other parameters.*friction=False"):
        identify(system, q, v, dv, tau, base=base_friction, consistent=False)
    with pytest.raises(DimensionError, match="base is of other parameters"):
        excitation_trajectory(system, harmonics=2, samples=10, candidates=1, iterations=0, base=base, friction=True)
    result = identify(system, q, v, dv, tau, base=base_friction, friction=True, consistent=False)
    assert result.estimate.size == base_friction.rank


def test_identify_refuses_no_states_and_a_bad_regularization(data):
    system, q, v, dv, tau = data
    with pytest.raises(DimensionError, match="0 torque rows"):
        identify(system, q[:0], v[:0], dv[:0], tau[:0])
    for regularization in (-1.0, np.nan, "small"):
        with pytest.raises(DimensionError, match="regularization"):
            identify(system, q, v, dv, tau, regularization=regularization)


def test_log_cholesky_parameters_refuse_nan_and_other_sizes():
    with pytest.raises(NonFiniteError, match="NaN"):
        log_cholesky_parameters([np.nan] * 10)
    with pytest.raises(DimensionError, match="ten numbers"):
        log_cholesky_parameters([1.0] * 9)
