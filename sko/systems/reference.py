"""The reference path of the declared requests: one function per request, one state each.

A reference function ``reference(system, q, v, x, external_forces)`` answers its request at
one state by the model-level recursions on the system's SKO model (SKO.md §14) — those of
:mod:`sko.engine.algorithms`, which run the compiled steps on float64 and complex128 models and
the generic ones of :mod:`sko.algorithms` otherwise or under the reference backend — checking what the compiled path checks and raising the same errors; the arguments a
request does not read are None. The system's method (made from the request's
:class:`~sko.systems.declared.Declaration`) calls it when the compiled path declines: symbolic
or other scalar types, the reference backend forced, a state the kernels reject; batches reach
it state by state.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from sko.engine import algorithms as alg
from sko.systems import centroidal, regressors
from sko.systems.overflow import finite_result, named_overflow

__all__ = ["mass_matrix", "mass_matrix_inverse", "inverse_dynamics", "forward_dynamics", "centroidal_terms",
           "centroidal_momentum_matrix", "centroidal_momentum_matrix_rate", "joint_torque_regressor", "energy_regressors"]


def mass_matrix(system, q, v=None, x=None, external_forces: Mapping | None = None) -> np.ndarray:
    """``ℳ(q)`` by the composite body algorithm (SKO.md §6, Algorithm 4.2)."""
    model, _, _ = system.sko_model(q)
    with named_overflow(system, "mass matrix"):
        return finite_result(alg.mass_matrix(model), "mass matrix")


def mass_matrix_inverse(system, q, v=None, x=None, external_forces: Mapping | None = None) -> np.ndarray:
    """``ℳ^{-1}(q)`` by the innovations factorization (SKO.md §10, Eq. 51)."""
    model, _, _ = system.sko_model(q)
    with named_overflow(system, "inverse mass matrix"):
        return finite_result(alg.mass_matrix_inverse(model), "inverse mass matrix")


def inverse_dynamics(system, q, v=None, x=None, external_forces: Mapping | None = None) -> np.ndarray:
    """``τ = ℳ(q) θ̈ + 𝒞(q, v)`` by Newton–Euler on the SKO model (SKO.md §5, Algorithm 3.1),
    plus the hinge forces; ``x`` is ``θ̈``."""
    q, v = system.checked_vectors(q, v)
    x = None if x is None else system._stacked(x, "dv", system.dof_size, "nv")  # checked as the compiled path does
    model, a, b = system._assemble(system._node_states(q, v), system.external_forces(external_forces))
    hinge = _hinge_forces(system, q, v)
    with named_overflow(system, "inverse dynamics"):
        return finite_result(alg.inverse_dynamics(model, x, None, a, b) + hinge, "inverse dynamics")


def forward_dynamics(system, q, v=None, x=None, external_forces: Mapping | None = None) -> np.ndarray:
    """``θ̈ = ℳ^{-1}(τ − 𝒞 − hinge)`` by the articulated body recursion (SKO.md §11, Algorithm
    6.1); ``x`` is ``τ``."""
    q, v = system.checked_vectors(q, v)
    x = None if x is None else system._stacked(x, "tau", system.dof_size, "nv")  # checked as the compiled path does
    model, a, b = system._assemble(system._node_states(q, v), system.external_forces(external_forces))
    tau = model.dof_vector(None) if x is None else x
    hinge = _hinge_forces(system, q, v)
    with named_overflow(system, "forward dynamics"):
        return finite_result(alg.forward_dynamics(model, tau - hinge, a, b), "forward dynamics")


def _hinge_forces(system, q, v) -> np.ndarray:
    """The hinge forces at ``(q, v)``, outside :func:`named_overflow`: a body's force that is not
    finite is named by the body (``checked_hinge_force``), not reported as the recursion's overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        return system._hinge_forces(q, v)


def centroidal_terms(system, q, v, x, external_forces) -> np.ndarray:
    """The packed centroidal terms ``[A_G | I_G | h_G | (c, m, 0, 0)]`` (6 × (nv + 8)) at one
    state (:func:`~sko.systems.centroidal.reference_centroidal`, CENTROIDAL.md, Eq. 4)."""
    return centroidal.reference_centroidal(system, q, v, external_forces)


def centroidal_momentum_matrix(system, q, v, x, external_forces) -> np.ndarray:
    """``A_G`` (6 × nv) at one state: the first ``nv`` columns of :func:`centroidal_terms`."""
    return centroidal.reference_centroidal(system, q, None, external_forces)[:, :system.nv]


def centroidal_momentum_matrix_rate(system, q, v, x, external_forces) -> np.ndarray:
    """``Ȧ_G`` at one state by the complex step of ``A_G`` along ``q̇``, any body type
    (:func:`~sko.systems.centroidal.momentum_matrix_rate_by_complex_step`, CENTROIDAL.md §4)."""
    v = np.zeros(system.nv) if v is None else v
    return centroidal.momentum_matrix_rate_by_complex_step(system, q, v)


def joint_torque_regressor(system, q, v, x, external_forces) -> np.ndarray:
    """The bodies' columns of ``Y`` (``τ − T_hinge = Y π``, IDENTIFICATION.md, Eq. 3) at one
    state, ``x`` being ``θ̈`` (:func:`~sko.systems.regressors.body_torque_regressor`); the
    declaration's options append the joint columns."""
    return regressors.body_torque_regressor(system, q, v, x)


def energy_regressors(system, q, v, x, external_forces) -> np.ndarray:
    """The bodies' ``[y_T; y_V]`` (``T = y_T · π``, ``V = y_V · π``) at one state
    (:func:`~sko.systems.regressors.body_energy_regressors`)."""
    return regressors.body_energy_regressors(system, q, v)
