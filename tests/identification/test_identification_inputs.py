"""What identification reports and refuses (IDENTIFICATION.md, *Estimation*, *Excitation*): the
excitation's condition number is cond(W_b) at its samples; bad inputs are errors of the project's
own types naming the input."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies import Revolute
from sko.examples.rigid import planar_chain
from sko.graphs.errors import DimensionError, NonFiniteError, SKOError
from sko.identification import (base_parameters, excitation_trajectory, identify, log_cholesky_parameters,
                                pseudo_inertia, rigid_from_log_cholesky)
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


def _complex(x):
    return np.asarray(x) + 1e-3j


def _text(x):
    return np.asarray(x).astype(str)


@pytest.mark.parametrize("name", ["q", "v", "dv", "tau"])
@pytest.mark.parametrize("form, error, match", [
    (_complex, DimensionError, "must hold real numbers, got complex128"),
    (_text, DimensionError, "has dtype <U"),
])
def test_identify_refuses_measurements_that_are_not_real_numbers(data, name, form, error, match):
    """A complex measurement lost its imaginary part to a ComplexWarning (the fit used the real
    part), text was parsed as numbers or raised numpy's ValueError."""
    system, q, v, dv, tau = data
    args = dict(q=q, v=v, dv=dv, tau=tau)
    args[name] = form(args[name])
    with pytest.raises(error, match=f"^{name} {match}"):
        identify(system, **args, consistent=False)


@pytest.mark.parametrize("weights, match", [
    (np.array([1.0, 1.0]) + 1j, "weights must hold real numbers, got complex128"),
    (["a", "b"], "weights has dtype <U1"),
])
def test_identify_refuses_weights_that_are_not_real_numbers(data, weights, match):
    system, q, v, dv, tau = data
    with pytest.raises(DimensionError, match=match):
        identify(system, q, v, dv, tau, weights=weights, consistent=False)


@pytest.mark.parametrize("option", ["friction", "armature", "consistent"])
def test_identify_options_are_true_or_false(data, option):
    """``consistent="no"`` ran the consistent fit, ``friction="yes"`` was reported as a base of
    other columns."""
    system, q, v, dv, tau = data
    with pytest.raises(SKOError, match=rf"identify\({option}=\) must be True or False, got 'no'"):
        identify(system, q, v, dv, tau, **{option: "no"})


def test_identify_refuses_a_base_that_is_not_base_parameters(data):
    system, q, v, dv, tau = data
    with pytest.raises(DimensionError, match="base must be the BaseParameters of base_parameters, got str"):
        identify(system, q, v, dv, tau, base="mine", consistent=False)


def test_base_parameters_check_what_they_are_applied_to():
    system = planar_chain(2)
    base = base_parameters(system, rng=0)
    with pytest.raises(DimensionError, match=r"parameters must have 20 entries \(the last axis\), got shape \(3,\)"):
        base.base(np.ones(3))
    with pytest.raises(NonFiniteError, match="parameters"):
        base.base(np.full(20, np.nan))
    with pytest.raises(DimensionError, match=r"Y must have 20 columns \(the last axis\), got shape \(2, 3\)"):
        base.regressor(np.ones((2, 3)))
    pi = system.inertial_parameters()
    np.testing.assert_array_equal(base.base(np.stack([pi, pi])), np.stack([base.base(pi)] * 2))


@pytest.mark.parametrize("options, match", [
    (dict(samples=True), "samples must be a positive integer, got True"),
    (dict(rng="seed"), "rng must be a seed .* or a numpy Generator, got 'seed'"),
    (dict(friction="yes"), r"base_parameters\(friction=\) must be True or False"),
])
def test_base_parameters_refuse_bad_options_naming_them(options, match):
    with pytest.raises(SKOError, match=match):
        base_parameters(planar_chain(2), **options)


def test_a_system_without_coordinates_has_no_base_parameters():
    b = SystemBuilder()
    b.add_frame("base", None)
    base = base_parameters(b.build())
    assert base.rank == 0 and base.K.shape == (0, 0) and base.independent.shape == (0,) and base.names == []


def test_an_excitation_of_a_system_without_coordinates_is_refused():
    """numpy's reshape error ("cannot reshape array of size 0 into shape (0)") came out of it."""
    b = SystemBuilder()
    b.add_frame("base", None)
    with pytest.raises(DimensionError, match="an excitation trajectory moves joints; this system has none"):
        excitation_trajectory(b.build(), harmonics=1, samples=5, candidates=1, iterations=0)


@pytest.mark.parametrize("theta, error, match", [
    (np.ones(3), DimensionError, "ten numbers"),
    (np.full(10, np.nan), NonFiniteError, "log-Cholesky parameters .* NaN or infinite"),
    (np.full(10, 1000.0), NonFiniteError, "overflow"),
])
def test_rigid_parameters_of_bad_log_cholesky_parameters_are_refused(theta, error, match):
    with pytest.raises(error, match=match):
        rigid_from_log_cholesky(theta)


def test_a_pseudo_inertia_of_nan_parameters_is_refused():
    with pytest.raises(NonFiniteError, match="rigid parameters"):
        pseudo_inertia(np.full(10, np.nan))


@pytest.mark.parametrize("method", ["inertial_parameters", "inertial_parameter_names"])
def test_the_parameter_options_are_true_or_false(method):
    with pytest.raises(SKOError, match=rf"{method}\(friction=\) must be True or False"):
        getattr(planar_chain(2), method)(friction=np.array([1.0, 2.0]))


def test_with_inertial_parameters_refuses_complex_parameters():
    system = planar_chain(2)
    with pytest.raises(SKOError, match="inertial parameters must be real numbers, got complex128"):
        system.with_inertial_parameters(system.inertial_parameters() + 1e-3j)


def test_identification_of_a_symbolic_system_asks_for_numbers(data):
    """sympy's "Cannot convert expression to float" came out of base_parameters and identify."""
    from sko.examples.symbolic import symbolic_pendulum

    system, _ = symbolic_pendulum(2)
    numeric, q, v, dv, tau = data
    with pytest.raises(DimensionError, match="base_parameters computes with numbers, but the regressor of this system "
                                             "holds symbols"):
        base_parameters(system, samples=3)
    with pytest.raises(DimensionError, match="identify computes with numbers"):
        identify(system, q, v, dv, tau, base=base_parameters(numeric, rng=0), consistent=False)


def test_the_regressors_of_a_symbolic_system_at_a_numeric_state_are_expressions():
    """Assigning the symbolic columns into a float array, and the parameters into one, raised
    sympy's TypeError."""
    import sympy

    from sko.examples.symbolic import symbolic_pendulum

    system, _ = symbolic_pendulum(2)
    q, v, dv = np.array([0.1, 0.2]), np.array([0.3, -0.4]), np.array([0.5, 0.6])
    Y, YE, pi = system.joint_torque_regressor(q, v, dv), system.energy_regressors(q, v), system.inertial_parameters()
    assert Y.dtype == object and Y.shape == (2, 20) and YE.shape == (2, 20) and pi.dtype == object
    residual = [sympy.sympify(r) for r in Y @ pi - system.inverse_dynamics(q, v, dv)]
    symbols = sorted(set().union(*(r.free_symbols for r in residual)), key=str)
    values = {s: 0.5 + 0.1 * i for i, s in enumerate(symbols)}  # any numbers: the identity holds for all
    assert max(abs(float(r.subs(values))) for r in residual) < 1e-9
