"""Identities of the derivatives of the dynamics (DERIVATIVES.md, Eq. 3, 14–20).

They use only inverse and forward dynamics, ℳ, the energies, ``integrate`` and the brackets of
the tangent columns, so they hold on every system whose velocity products are quadratic in
``θ̇`` and check :meth:`~sko.systems.multibody.MultibodySystem.inverse_dynamics_derivatives` and
:meth:`~sko.systems.multibody.MultibodySystem.forward_dynamics_derivatives` on any body type.
Each side is computed by a different path: the recursions' ℳ and ℳ⁻¹ against complex steps of
inverse dynamics (on the reference recursions, :func:`~sko.verify.physics.complex_steps`) and
differences of forward dynamics, the kinetic energy against Newton–Euler, ℳ̇ against complex steps
of the composite-body ℳ. Dissipation enters through its odd part in ``θ̇``: with
``J(θ̇) = ∂T/∂θ̇`` and ``c(θ̇) = T(q, θ̇, θ̈) − T(q, 0, θ̈)``, the velocity products are the even
part ``c_e = (c(θ̇) + c(−θ̇))/2`` and their derivative the odd part ``J_e = (J(θ̇) − J(−θ̇))/2``.

Brackets (Eq. 16): the tangent columns ``X_ι = Q(q) e_ι`` (``Q`` = :meth:`qdot_matrix`) have Lie
brackets ``[X_ι, X_κ] = Σ_λ (ad(e_ι) e_κ)_λ X_λ``; ``𝒩(θ̇) = Σ_ι θ̇_ι ad(e_ι)`` and ``𝒩̄(p)`` with
``𝒩(θ̇)* p = 𝒩̄(p) θ̇``. They vanish where ``θ̇ = q̇``; for a ball joint ``ad(ω) w = ω × w``.
"""

from __future__ import annotations

import numpy as np

from sko.systems import body_derivatives, rigid_derivatives

from .physics import PHYSICS_TOLERANCE, central, complex_steps, tangent_derivative
from .registry import Case, compare, register

__all__ = ["brackets"]

_H = 1e-30  # complex step (Eq. 21)


def _state(case: Case):
    system = case.system
    q, v = np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)
    a = case.rng("derivatives_dv").standard_normal(system.nv)
    return system, q, v, a


def _scale(*arrays) -> float:
    return max(1.0, *(float(np.abs(x).max(initial=0.0)) for x in arrays))


def brackets(system, q: np.ndarray) -> np.ndarray:
    """``A[λ, ι, κ] = (ad(e_ι) e_κ)_λ``: the structure constants of the tangent columns at ``q``
    (module docstring), from derivatives of ``Q(q)`` along its own columns."""
    Q = np.asarray(system.qdot_matrix(q), dtype=float)
    n = Q.shape[1]
    dQ = [np.asarray(tangent_derivative(lambda x: np.asarray(system.qdot_matrix(x)), q, Q[:, i]), dtype=float)
          for i in range(n)]  # dQ[ι][:, κ] = D(X_κ)·X_ι
    bracket = np.stack([np.stack([dQ[i][:, k] - dQ[k][:, i] for k in range(n)], axis=1) for i in range(n)], axis=1)
    return np.linalg.lstsq(Q, bracket.reshape(Q.shape[0], -1), rcond=None)[0].reshape(n, n, n)


def _coriolis_parts(case: Case):
    """``(J_e, c_e)`` at the case's state (module docstring), computed once per case."""
    def compute():
        system, q, v, a = _state(case)
        J = system.inverse_dynamics_derivatives(q, v, a).dtau_dv
        J_minus = system.inverse_dynamics_derivatives(q, -v, a).dtau_dv
        T0 = np.asarray(system.inverse_dynamics(q, None, a))
        c = np.asarray(system.inverse_dynamics(q, v, a)) - T0
        c_minus = np.asarray(system.inverse_dynamics(q, -v, a)) - T0
        return (J - J_minus) / 2, (c + c_minus) / 2

    return case.cached("derivatives_coriolis", compute)


@register("acceleration_derivative", "DERIVATIVES.md, Eq. 14: ∂T/∂θ̈ = ℳ", system=True, symbolic=False)
def acceleration_derivative(case: Case):
    """ℳ from the composite bodies equals the complex-step derivative of inverse dynamics in θ̈."""
    system, q, v, a = _state(case)
    n = system.nv
    steps = a + 1j * _H * np.eye(n)
    with complex_steps():
        dT = np.asarray(system.inverse_dynamics(np.repeat(q[None] + 0j, n, 0), np.repeat(v[None] + 0j, n, 0), steps))
    M = system.inverse_dynamics_derivatives(q, v, a).mass_matrix
    return compare(M, dT.imag.T / _H, scale=_scale(M), label="∂T/∂θ̈")


@register("forward_dynamics_derivatives", "DERIVATIVES.md, Eq. 3: ∂θ̈/∂x = −ℳ⁻¹ ∂T/∂x, ∂θ̈/∂T = ℳ⁻¹", system=True,
          symbolic=False, tolerance=PHYSICS_TOLERANCE)
def forward_dynamics_derivatives(case: Case):
    """The derivatives of forward dynamics from those of inverse dynamics equal differences of
    the articulated-body recursion itself, in q (along ``integrate``), θ̇ and T (central,
    Richardson-extrapolated: this check compiles no complex forward dynamics)."""
    system, q, v, tau = _state(case)
    n = system.nv
    derived = system.forward_dynamics_derivatives(q, v, tau)
    basis = np.eye(n)
    columns = (
        [central(lambda t, e=e: system.forward_dynamics(system.integrate(q, t * e), v, tau), 0.0, 1.0) for e in basis],
        [central(lambda x: system.forward_dynamics(q, x, tau), v, e) for e in basis],
        [central(lambda x: system.forward_dynamics(q, v, x), tau, e) for e in basis],
    )
    direct = [np.column_stack(c) if n else np.zeros((0, 0)) for c in columns]
    condition = float(np.linalg.cond(derived.mass_matrix_inverse)) if n else 1.0
    return [compare(ours, theirs, scale=_scale(theirs), label=label, condition=condition)
            for ours, theirs, label in zip(derived, direct, ("∂θ̈/∂q", "∂θ̈/∂θ̇", "∂θ̈/∂T"))]


@register("velocity_derivative", "DERIVATIVES.md, Eq. 15: (∂T/∂θ̇) θ̇ = 2c", system=True, symbolic=False)
def velocity_derivative(case: Case):
    """The velocity derivative of the velocity products is homogeneous of degree one."""
    _, _, v, _ = _state(case)
    J_e, c_e = _coriolis_parts(case)
    return compare(J_e @ v, 2 * c_e, scale=_scale(J_e * v, c_e), label="J_e θ̇")


def _mass_matrix_rate(system, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``ℳ̇ = d/dε ℳ(q ⊕ ε θ̇)``: ``ℳ e_κ = T(q, 0, e_κ) − T(q, 0, 0)`` (Newton–Euler, affine in
    ``θ̈``) at ``q + i h Q(q) θ̇``, one batch of complex states."""
    n = system.nv
    z = q + 1j * _H * (system.qdot_matrix(q) @ v)
    with complex_steps():
        T = np.asarray(system.inverse_dynamics(np.repeat(z[None], n + 1, 0), np.zeros((n + 1, n), dtype=complex),
                                               np.vstack([np.eye(n), np.zeros(n)]) + 0j))
    return (T[:n] - T[n]).imag.T / _H


@register("coriolis_skew", "DERIVATIVES.md, Eq. 16: C θ̇ = c, ℳ̇ − 2C skew-symmetric", system=True, symbolic=False,
          tolerance=PHYSICS_TOLERANCE)
def coriolis_skew(case: Case):
    """``C = ½[J_e + 𝒩(θ̇)* ℳ − 𝒩̄(ℳθ̇)]`` factors the velocity products, and ``ℳ̇ − 2C`` is
    skew-symmetric (ℳ̇ by complex step along ``Q(q) θ̇``). The brackets come from central
    differences of ``Q(q)`` where it is not analytic, hence the physics tolerance."""
    system, q, v, _ = _state(case)
    J_e, c_e = _coriolis_parts(case)
    M = system.mass_matrix(q)
    A = case.cached("derivatives_brackets", lambda: brackets(system, q))
    N = np.einsum("lik,i->lk", A, v)
    N_bar = np.einsum("lik,l->ki", A, M @ v)
    C = (J_e + N.T @ M - N_bar) / 2
    M_dot = _mass_matrix_rate(system, q, v)
    S = M_dot - 2 * C
    scale = _scale(M_dot, C * np.abs(v).max(initial=1.0))
    return [compare(C @ v, c_e, scale=_scale(C * v, c_e), label="C θ̇"),
            compare(S + S.T, np.zeros_like(S), scale=scale, label="ℳ̇ − 2C + (ℳ̇ − 2C)*")]


@register("kinetic_energy_derivatives", "DERIVATIVES.md, Eq. 18: ∂KE/∂θ̇ = ℳθ̇, ∂KE/∂θ = ½[G(θ̇) − G(0)]* θ̇",
          system=True, symbolic=False)
def kinetic_energy_derivatives(case: Case):
    """The gradient of the kinetic energy (complex steps of the energy request) from the
    configuration derivative of inverse dynamics at zero velocity."""
    system, q, v, _ = _state(case)
    n = system.nv
    Q = system.qdot_matrix(q)
    qs = np.concatenate([q + 1j * _H * Q.T, np.repeat(q[None] + 0j, n, 0)])
    vs = np.concatenate([np.repeat(v[None] + 0j, n, 0), v + 1j * _H * np.eye(n)])
    with complex_steps():
        gradient = np.asarray(system.kinetic_energy(qs, vs)).imag.reshape(2, n) / _H
    zero = np.zeros(n)
    G_v = system.inverse_dynamics_derivatives(q, zero, v).dtau_dq
    G_0 = system.inverse_dynamics_derivatives(q, zero, zero).dtau_dq
    M = system.mass_matrix(q)
    expected = ((G_v - G_0).T @ v / 2, M @ v)
    return [compare(gradient[0], expected[0], scale=_scale(gradient[0], (G_v - G_0) * v), label="∂KE/∂θ"),
            compare(gradient[1], expected[1], scale=_scale(M * v), label="∂KE/∂θ̇")]


@register("gravity_hessian", "DERIVATIVES.md, Eq. 20: G − G* = 𝒩̄(g)", system=True, symbolic=False,
          tolerance=PHYSICS_TOLERANCE)
def gravity_hessian(case: Case):
    """``G = ∂T/∂θ(q, 0, 0)``, the Hessian of the potential along the tangent columns, is
    symmetric up to the brackets' term ``𝒩̄(g)`` (``g = T(q, 0, 0)``)."""
    system, q, _, _ = _state(case)
    zero = np.zeros(system.nv)
    G = system.inverse_dynamics_derivatives(q, zero, zero).dtau_dq
    g = np.asarray(system.inverse_dynamics(q, zero, zero))
    A = case.cached("derivatives_brackets", lambda: brackets(system, q))
    N_bar = np.einsum("lik,l->ki", A, g)
    return compare(G - G.T, N_bar, scale=_scale(G), label="G − G*")


@register("analytic_derivatives", "DERIVATIVES.md, Eq. 10–12: the O(N·d) recursion equals the complex step of Eq. 21",
          system=True, symbolic=False, when=rigid_derivatives.applies)
def analytic_derivatives(case: Case):
    """On rigid trees the recursion of :mod:`sko.systems.rigid_derivatives` and the exact
    complex step of the reference recursions give the same derivatives of inverse dynamics."""
    system, q, v, a = _state(case)
    analytic = system.inverse_dynamics_derivatives(q, v, a, method="analytic")
    with complex_steps():
        reference = system.inverse_dynamics_derivatives(q, v, a, method="complex_step")
    return [compare(x, y, scale=_scale(y), label=label)
            for x, y, label in zip(analytic[:2], reference[:2], ("∂T/∂θ", "∂T/∂θ̇"))]


def _other_body_types(system) -> bool:
    """A tree of body types that the rigid recursion does not take (the local one of
    DERIVATIVES.md §9 does)."""
    return body_derivatives.applies(system) and not rigid_derivatives.applies(system)


@register("local_derivatives", "DERIVATIVES.md §9, Eq. 22–26: the local recursion equals the complex step of Eq. 21",
          system=True, symbolic=False, when=_other_body_types)
def local_derivatives(case: Case):
    """On trees of other body types the recursion of :mod:`sko.systems.body_derivatives` on the
    bodies' local partials and the exact complex step of the whole inverse dynamics on the
    reference recursions give the same derivatives of inverse dynamics."""
    system, q, v, a = _state(case)
    local = system.inverse_dynamics_derivatives(q, v, a, method="local")
    with complex_steps():
        reference = system.inverse_dynamics_derivatives(q, v, a, method="complex_step")
    return [compare(x, y, scale=_scale(y), label=label)
            for x, y, label in zip(local[:2], reference[:2], ("∂T/∂θ", "∂T/∂θ̇"))]
