"""Identities of centroidal dynamics (CENTROIDAL.md), on every system case.

* ``centroidal_momentum`` — ``h_G = A_G θ̇`` (Eq. 2, Eq. 4), and its linear part is ``m ċ`` with
  ``ċ`` the complex-step rate of the centre of mass along ``q̇``;
* ``centroidal_mass_matrix_rows`` — for a free-floating base ``B``, ``A_G = X_G^* ⁰X_B^* ℳ(B, :)``
  (§3), ``⁰X_B^*`` from the base frame's world pose;
* ``centroidal_wrench`` — for a free-floating base, ``A_G θ̈ + Ȧ_G θ̇ = [0; m g] + X_G^* ⁰X_B^* T_B``
  (§4), ``T_B`` the base's six generalised forces of the inverse dynamics at a random ``θ̈``;
* ``centroidal_rate`` — ``Ȧ_G`` against the derivative of ``A_G`` along ``q̇`` (a complex step on
  the reference recursions, cross-checked by central differences): the recursion of Eq. 6 on
  compiled rigid trees on joints of constant ``S``; elsewhere ``Ȧ_G`` is itself a complex step of
  ``A_G``, through the path the system takes, and a body type that drops the imaginary part of
  a complex state fails it by name.
"""

from __future__ import annotations

import numpy as np

from sko.spatial import skew

from .physics import tangent_derivative
from .registry import Case, compare, register

__all__: list = []


def _state(case: Case):
    system = case.system
    return system, np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)


def _floating_base(system) -> bool:
    """One base body, on a free joint (``ν = [ω; v]`` of its own frame)."""
    from sko.bodies import Free

    bases = system.tree.base_bodies()
    return len(bases) == 1 and isinstance(getattr(system.body(bases[0]), "joint", None), Free)


def _base_map(system, q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``X_G^* ⁰X_B^*``: forces of the base frame's coordinates to the centre of mass, world axes."""
    (base,) = system.tree.base_bodies()
    frame = system.node_states(q)[base].attachments[None]
    R, p = np.asarray(frame.rotation, dtype=float), np.asarray(frame.position, dtype=float)
    X = np.zeros((6, 6))
    X[:3, :3], X[3:, 3:], X[:3, 3:] = R, R, skew(p - c) @ R
    return X


@register("centroidal_momentum", "CENTROIDAL.md, Eq. 4: h_G = A_G θ̇, l_G = m ċ", system=True, symbolic=False)
def centroidal_momentum(case: Case):
    """The centroidal momentum is ``A_G θ̇``, and its linear part the mass times the rate of the centre of mass."""
    system, q, v = _state(case)
    out = system.centroidal(q, v)
    c_rate = tangent_derivative(lambda x: system.centroidal(x).center_of_mass, q, np.asarray(system.qdot(q, v), dtype=float))
    return [compare(out.momentum, out.momentum_matrix @ v, label="h_G"),
            compare(out.momentum[3:], out.mass * np.real(c_rate), label="l_G = m ċ")]


@register("centroidal_mass_matrix_rows", "CENTROIDAL.md §3: A_G = X_G^* ⁰X_B^* ℳ(B, :)", system=True, symbolic=False,
          when=_floating_base)
def centroidal_mass_matrix_rows(case: Case):
    """The rows of a free-floating base in ℳ, mapped to the centre of mass, are the centroidal momentum matrix."""
    system, q, _ = _state(case)
    out = system.centroidal(q)
    B = system.v_slice(system.tree.base_bodies()[0])
    return compare(out.momentum_matrix, _base_map(system, q, out.center_of_mass) @ system.mass_matrix(q)[B], label="A_G")


@register("centroidal_wrench", "CENTROIDAL.md §4: A_G θ̈ + Ȧ_G θ̇ = [0; m g] + X_G^* ⁰X_B^* T_B", system=True,
          symbolic=False, when=_floating_base)
def centroidal_wrench(case: Case):
    """The rate of the centroidal momentum is gravity plus the wrench the inverse dynamics asks of the floating base."""
    system, q, v = _state(case)
    dv = case.rng("centroidal_dv").standard_normal(system.nv)
    out = system.centroidal(q, v)
    B = system.v_slice(system.tree.base_bodies()[0])
    tau = np.asarray(system.inverse_dynamics(q, v, dv))[B]
    gravity = np.concatenate([np.zeros(3), out.mass * np.asarray(system.gravity, dtype=float)[-3:]])
    rate = out.momentum_matrix @ dv + system.centroidal_momentum_matrix_rate(q, v) @ v
    return compare(rate, gravity + _base_map(system, q, out.center_of_mass) @ tau, label="ḣ_G")


@register("centroidal_rate", "CENTROIDAL.md §4, Eq. 6: Ȧ_G = d A_G / dt", system=True, symbolic=False)
def centroidal_rate(case: Case):
    """The system's Ȧ_G (the recursion of Eq. 6, or the complex step of A_G through the system's
    path) equals the derivative of A_G along q̇ on the reference recursions."""
    system, q, v = _state(case)
    expected = tangent_derivative(lambda x: system.centroidal_momentum_matrix(x), q,
                                  np.asarray(system.qdot(q, v), dtype=float))
    return compare(system.centroidal_momentum_matrix_rate(q, v), np.real(expected), label="Ȧ_G")
