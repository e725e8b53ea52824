"""Identities of the regressors (IDENTIFICATION.md, *Identities*), on every case with a system.

* ``torque_regressor`` — ``Y(q, v, v̇) π = τ − T_hinge`` (inverse dynamics without the
  parameter-free hinge forces);
* ``regressor_complex_step`` — ``Y = ∂τ/∂π``, column by column by complex step in ``π`` on the
  reference path (exact: ``τ`` is linear in ``π``); a coupled system steps its spanning tree and
  maps back by ``Gᵀ``;
* ``energy_regressors`` — ``y_T π = T`` and ``y_V π = V`` (the bodies' potential energy);
* ``energy_regressor_rate`` — ``d(y_T + y_V)/dt · π = vᵀ(τ − T_hinge − d)`` along a motion, ``d``
  the dissipative forces (the part of ``τ − T_hinge`` odd in ``v``), the derivative along the
  configuration's tangent map (:func:`sko.verify.physics.tangent_derivative`);
* ``base_parameters`` — ``Y_b (K π) = Y π`` at a state the base parameters were not found at.

``torque_regressor`` applies to the systems whose every body declares parameters (a body
declaring none keeps its forces outside ``Y π``, IDENTIFICATION.md, *Parameters of a body*); the
others to those whose bodies also give their node and energy regressors (rigid, armature and
coupled systems). Where a body's regressor is itself a complex step in ``π`` (a flexible body),
comparing it with a complex step would check the step against itself, at the cost of one system
per parameter; the tests compare those bodies with the complex step instead.
"""

from __future__ import annotations

import numpy as np

from sko.identification import base_parameters as find_base_parameters
from sko.systems import regressors

from .physics import PHYSICS_TOLERANCE, _along, _state, _system_scale, complex_steps, tangent_derivative
from .registry import Case, compare, register

__all__ = ["stepped_torque_regressor", "parameterised", "analytic"]

TOLERANCE = 1e-9


def parameterised(system) -> bool:
    """Whether every body of ``system`` declares inertial parameters."""
    spanning = getattr(system, "spanning_system", None)
    tree = spanning() if spanning is not None else system
    return all(len(tree.body(k).inertial_parameters()) for k in tree.bodies)


def analytic(system) -> bool:
    """Whether every body of ``system`` gives its node and energy regressors itself."""
    from sko.bodies.contract import BodyType

    spanning = getattr(system, "spanning_system", None)
    tree = spanning() if spanning is not None else system
    return parameterised(system) and all(
        type(tree.body(k)).node_regressor is not BodyType.node_regressor
        and type(tree.body(k)).energy_regressors is not BodyType.energy_regressors for k in tree.bodies)


def _random_dv(case: Case, system) -> np.ndarray:
    return case.rng("regressor_dv").standard_normal(system.nv)


def stepped_torque_regressor(system, q, v, dv) -> np.ndarray:
    """``∂(τ − T_hinge)/∂π`` (nv × p, bodies' columns) by complex step in ``π``."""
    spanning = getattr(system, "spanning_system", None)
    if spanning is not None:  # a coupled system: Gᵀ ∂τ_sp/∂π at (θ, G v, G v̇ + Ġ v)
        G, Gdv, _, _ = system.constraint_matrices(q, v)
        return G.T @ stepped_torque_regressor(spanning(), system.spanning_configuration(q), G @ v, G @ dv + Gdv)
    pi = system.inertial_parameters()
    with complex_steps():
        columns = [regressors._stepped(system, pi, c, lambda s: regressors._inverse_dynamics(s, q, v, dv))
                   for c in range(len(pi))]
    return np.column_stack(columns) if columns else np.zeros((system.nv, 0))


@register("torque_regressor", "IDENTIFICATION.md: Y π = τ", tolerance=TOLERANCE, symbolic=False, system=True,
          when=parameterised)
def torque_regressor(case: Case):
    """The joint-torque regressor times the parameters gives inverse dynamics."""
    system, q, v = _state(case)
    dv = _random_dv(case, system)
    Y = system.joint_torque_regressor(q, v, dv)
    tau = np.asarray(system.inverse_dynamics(q, v, dv)) - np.asarray(system.hinge_forces(q, v))
    return compare(Y @ system.inertial_parameters(), tau, label="Y π")


@register("regressor_complex_step", "IDENTIFICATION.md: Y = ∂τ/∂π", tolerance=TOLERANCE, symbolic=False, system=True,
          when=analytic)
def regressor_complex_step(case: Case):
    """Every column of the regressor is the derivative of inverse dynamics in its parameter."""
    system, q, v = _state(case)
    dv = _random_dv(case, system)
    return compare(system.joint_torque_regressor(q, v, dv), stepped_torque_regressor(system, q, v, dv), label="∂τ/∂π")


@register("energy_regressors", "IDENTIFICATION.md: T = y_T π, V = y_V π", tolerance=TOLERANCE, symbolic=False,
          system=True, when=analytic)
def energy_regressors(case: Case):
    """The energy regressors times the parameters give the kinetic and potential energies."""
    system, q, v = _state(case)
    pi = system.inertial_parameters()
    return [compare(np.atleast_1d(system.kinetic_energy_regressor(q, v) @ pi),
                    np.atleast_1d(np.real(system.kinetic_energy(q, v))), label="y_T π"),
            compare(np.atleast_1d(system.potential_energy_regressor(q) @ pi),
                    np.atleast_1d(np.real(system._bodies_potential_energy(q))), label="y_V π")]


@register("base_parameters", "IDENTIFICATION.md: Y_b K π = Y π", tolerance=PHYSICS_TOLERANCE, symbolic=False,
          system=True, when=analytic)
def base_parameters(case: Case):
    """The base parameters reproduce the torques at a state they were not found at."""
    system, q, v = _state(case)
    dv = _random_dv(case, system)
    base = find_base_parameters(system, samples=max(4, 2 * len(system.inertial_parameters()) // max(system.nv, 1) + 2),
                                rng=case.rng("base_parameters"))
    Y = system.joint_torque_regressor(q, v, dv)
    pi = system.inertial_parameters()
    return compare(base.regressor(Y) @ base.base(pi), Y @ pi, label="Y_b π_b")


@register("energy_regressor_rate", "IDENTIFICATION.md: d(y_T + y_V)/dt π = vᵀ(τ − T_hinge − d)",
          tolerance=PHYSICS_TOLERANCE, symbolic=False, system=True, when=analytic)
def energy_regressor_rate(case: Case):
    """The rate of the energy rows times the parameters is the power of the non-dissipative forces."""
    system, q, v = _state(case)
    dv = _random_dv(case, system)
    pi = system.inertial_parameters()

    def forces(u):
        return np.asarray(system.inverse_dynamics(q, u, dv)) - np.asarray(system.hinge_forces(q, u))

    tau = forces(v)
    odd = (np.asarray(system.bias_forces(q, v)) - np.asarray(system.bias_forces(q, -v))
           - np.asarray(system.hinge_forces(q, v)) + np.asarray(system.hinge_forces(q, -v))) / 2
    def energy(x):
        return (system.kinetic_energy_regressor(x, v) + system.potential_energy_regressor(x)) @ pi

    rate = tangent_derivative(energy, q, _along(system, q, v)) \
        + tangent_derivative(lambda u: system.kinetic_energy_regressor(q, u) @ pi, v, dv)
    power = v @ (tau - odd)
    scale = _system_scale(v * tau, v * odd, rate, power)
    return compare(np.atleast_1d(np.real(rate)), np.atleast_1d(power), scale=scale, label="d(y_T + y_V)/dt π")
