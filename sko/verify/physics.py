"""Physics checks: does a system's SKO model describe mechanics (BODIES.md, *The contract*)?

The identity checks of :mod:`sko.verify.checks` prove that the recursions agree with the
operators of whatever ``(φ, H, M, a, b)`` a body type returns; they cannot see a body type whose
operators are wrong (a gyroscopic term dropped from ``b``, a wrong sign in ``a``). These checks
compare the model with the system's own energies, so any body type gets them for free:

* ``christoffel`` — the velocity-product forces (the part of ``𝒞(q, v)`` quadratic in ``v``)
  equal those of Lagrange's equations built from ``ℳ(q)`` (``ℳ(q) w`` as the difference of two
  inverse dynamics at zero velocity),

      c(q, v) = Ṁ v − ½ ∂(vᵀℳv)/∂q + s(q, v),

  derivatives taken along the configuration's tangent map ``q̇ = Q(q) v``; ``s`` is Hamel's term
  ``s_k = −pᵀ Q⁺ [X_v, X_k]`` (``p = ℳ v``, ``X_w = Q w`` the vector fields of the velocity
  coordinates), zero when ``v = q̇`` and the gyroscopic ``ω × Iω`` of quaternion joints. Both
  sides are compared relative to the problem's natural scale too (``|ℳ v|·|v|`` and the bias
  forces ``𝒞(q, ±v)``, ``𝒞(q, 0)`` the even part is taken from), not only to the size of the
  terms: where the velocity products vanish identically (slides along one axis, a body spinning
  about a principal axis) both sides are rounding noise, which is not a failure;
* ``conservative_forces`` — ``𝒞(q, 0) = ∂V/∂q`` (gravity and elastic forces from the bodies'
  potential energy);
* ``power_balance`` — ``d(T + V)/dt = vᵀ(τ − d)`` at a random ``τ`` with ``dv`` from forward
  dynamics, ``d`` the dissipative forces (the part of ``𝒞`` odd in ``v``);
* ``mass_from_energy`` — ``ℳ = ∂²T/∂v²``, with each body's own kinetic energy where its type
  offers one (:meth:`~sko.bodies.contract.BodyType.kinetic_energy` returning a value, not
  ``None``), else ``½ 𝒱*M𝒱`` of its node state.

Derivatives: complex step when the system carries complex numbers through its state functions
(on the reference recursions, :func:`complex_steps`),
otherwise (a body type that fills float arrays, a ``.real`` somewhere) Richardson-extrapolated
central differences; each complex-step derivative is cross-checked against the central one, so
a body type that silently drops the imaginary part falls back instead of failing. The tolerance
(1e-6) covers the central differences' truncation (``O(h⁴)``, ``h = 1e-3``) and rounding
(``ε/h``) relative to the size of the terms compared; a broken body type is off by O(1).

The checks run on cases that carry a system (built-in example systems, or any system given to
:func:`sko.verify.run`); on a bare SKO model they do not apply.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy as np

from sko.engine.backend import use_backend

from .registry import Case, compare, register

__all__ = ["tangent_derivative", "central", "complex_steps", "velocity_product_forces", "PHYSICS_TOLERANCE"]

PHYSICS_TOLERANCE = 1e-6
_H_FD = 1e-3
_H_CS = 1e-20


def complex_steps() -> AbstractContextManager:
    """The path the checks take their complex steps (DERIVATIVES.md §7, Eq. 21) on: the reference
    recursions, on which every operation must be analytic in the complex scalar (ibid.). They are
    independent of the compiled path the checks compare them with, and nothing is compiled in
    complex128 for a check (a first ``sko verify`` compiles that much less)."""
    return use_backend("reference")


def _complex_step(f: Callable, x: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """``Im f(x + i h w) / h`` (on :func:`complex_steps`), or ``None`` when ``f`` does not carry
    complex numbers through."""
    with warnings.catch_warnings(), complex_steps():
        warnings.simplefilter("error", np.exceptions.ComplexWarning if hasattr(np, "exceptions") else np.ComplexWarning)
        try:
            y = np.asarray(f(x + 1j * _H_CS * w))
        except (TypeError, ValueError, ArithmeticError, Warning):
            return None
    if not np.iscomplexobj(y):
        return None
    return y.imag / _H_CS


def central(f: Callable, x, w, h: float = _H_FD) -> np.ndarray:
    """Richardson-extrapolated central difference of ``f`` along ``w`` (error ``O(h⁴)``)."""
    def real(z):
        return np.asarray(z).real if np.iscomplexobj(z) else np.asarray(z, dtype=float)

    d1 = (real(f(x + h * w)) - real(f(x - h * w))) / (2 * h)
    d2 = (real(f(x + 2 * h * w)) - real(f(x - 2 * h * w))) / (4 * h)
    return (4 * d1 - d2) / 3


def tangent_derivative(f: Callable, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The derivative of ``f`` at ``x`` along ``w``: complex step when ``f`` supports it and agrees
    with the central difference to its truncation error, the central difference otherwise."""
    x, w = np.asarray(x, dtype=float), np.asarray(w, dtype=float)
    fd = central(f, x, w)
    cs = _complex_step(f, x, w)
    if cs is not None and cs.shape == fd.shape:
        size = max(float(np.abs(fd).max(initial=0.0)), float(np.abs(cs).max(initial=0.0)), 1e-300)
        if np.isfinite(cs).all() and np.abs(cs - fd).max(initial=0.0) <= 1e-6 * size + 1e-12:
            return cs
    return fd


# --------------------------------------------------------------------------- the system at a state
def _state(case: Case):
    return case.system, np.asarray(case.q, dtype=float), np.asarray(case.v, dtype=float)


def _tangent_map(system, q: np.ndarray) -> np.ndarray:
    """``Q(q)`` (nq × nv) with ``q̇ = Q(q) v``, column by column (``qdot`` is linear in ``v``)."""
    return np.column_stack([np.asarray(system.qdot(q, e), dtype=float) for e in np.eye(system.nv)]) \
        if system.nv else np.zeros((len(q), 0))


def _along(system, q: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The configuration-space direction ``Q(q) w`` of the velocity-space direction ``w``."""
    return np.asarray(system.qdot(q, w), dtype=float)


def _even_part(system, q, v) -> np.ndarray:
    """The part of ``𝒞(q, v)`` even in ``v`` minus ``𝒞(q, 0)``: the velocity products."""
    return _even_part_and_scale(system, q, v)[0]


def _even_part_and_scale(system, q, v) -> tuple[np.ndarray, float]:
    """:func:`_even_part` and the size of the bias forces it is computed from (its rounding is
    relative to them)."""
    plus, minus = np.asarray(system.bias_forces(q, v)), np.asarray(system.bias_forces(q, -v))
    rest = np.asarray(system.bias_forces(q, np.zeros_like(v)))
    return (plus + minus) / 2 - rest, _system_scale(plus, minus, rest)


def _mass_times(system, q, w) -> np.ndarray:
    """``ℳ(q) w`` by two Newton–Euler passes at zero velocity, ``τ(q, 0, w) − τ(q, 0, 0)`` (SKO.md
    §5: inverse dynamics is affine in the accelerations): O(N) where ℳ itself is O(N²)."""
    return np.asarray(system.inverse_dynamics(q, None, w)) - np.asarray(system.inverse_dynamics(q, None, None))


def velocity_product_forces(system, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float]:
    """Lagrange's (Hamel's) velocity-product forces ``Ṁv − ½ ∂(vᵀℳv)/∂q + s`` derived from
    ``ℳ(q)`` alone (module docstring; ``ℳ(q) w`` by :func:`_mass_times`), and the size of the terms
    that cancel in it."""
    n = system.nv
    p = _mass_times(system, q, v)
    Xv = _along(system, q, v)
    dM_v = tangent_derivative(lambda x: _mass_times(system, x, v), q, Xv)
    Q = _tangent_map(system, q)
    Q_pinv = np.linalg.pinv(Q)
    grad = np.empty(n)
    hamel = np.zeros(n)
    for k, e in enumerate(np.eye(n)):
        Xk = Q[:, k]
        grad[k] = tangent_derivative(lambda x: v @ _mass_times(system, x, v), q, Xk)
        # [X_v, X_k] = D(X_k)·X_v − D(X_v)·X_k as vector fields on configuration space
        bracket = tangent_derivative(lambda x: system.qdot(x, e), q, Xv) - tangent_derivative(lambda x: system.qdot(x, v), q, Xk)
        if np.abs(bracket).max(initial=0.0) > 0:
            hamel[k] = -p @ (Q_pinv @ bracket)
    terms = (dM_v, grad / 2, hamel)
    scale = max(float(np.abs(t).max(initial=0.0)) for t in terms)
    return terms[0] - terms[1] + terms[2], scale


# --------------------------------------------------------------------------- the checks
def _system_scale(*arrays) -> float:
    return max(float(np.abs(np.asarray(a, dtype=complex)).max(initial=0.0)) for a in arrays)


@register("christoffel", "BODIES.md contract; Lagrange/Hamel equations", tolerance=PHYSICS_TOLERANCE, symbolic=False,
          system=True)
def christoffel(case: Case):
    """𝒞(q, v) − 𝒞(q, 0) (its even part) equals Ṁv − ½∂(vᵀℳv)/∂q (+ Hamel's term)."""
    system, q, v = _state(case)
    expected, scale = velocity_product_forces(system, q, v)
    actual, bias = _even_part_and_scale(system, q, v)
    # the natural scale of velocity products, |ℳ v|·|v|, and of the forces the even part is the
    # difference of: the floor below which both sides are rounding noise (velocity products that
    # vanish identically are compared as noise against noise otherwise, a relative residual ≈ 1)
    natural = _system_scale(_mass_times(system, q, v)) * _system_scale(v)
    return compare(actual, expected, scale=max(scale, _system_scale(actual), bias, natural), label="velocity-product forces")


@register("conservative_forces", "BODIES.md contract: 𝒞(q, 0) = ∂V/∂q", tolerance=PHYSICS_TOLERANCE, symbolic=False,
          system=True)
def conservative_forces(case: Case):
    """Gravity and elastic forces 𝒞(q, 0) equal the gradient of the potential energy."""
    system, q, v = _state(case)
    Q = _tangent_map(system, q)
    gradient = np.array([float(np.real(tangent_derivative(lambda x: system.potential_energy(x), q, Q[:, k])))
                         for k in range(system.nv)])
    actual = np.asarray(system.gravity_forces(q))
    return compare(actual, gradient, label="∂V/∂q")


@register("power_balance", "BODIES.md contract: d(T + V)/dt = vᵀ(τ − d)", tolerance=PHYSICS_TOLERANCE,
          symbolic=False, system=True)
def power_balance(case: Case):
    """The rate of the energy T + V along the motion equals the power of τ minus dissipation."""
    system, q, v = _state(case)
    tau = case.rng("power_tau").standard_normal(system.nv)
    dv = np.asarray(system.forward_dynamics(q, v, tau))
    odd = (np.asarray(system.bias_forces(q, v)) - np.asarray(system.bias_forces(q, -v))) / 2
    Xv = _along(system, q, v)
    energy_rate = tangent_derivative(lambda x: system.kinetic_energy(x, v) + system.potential_energy(x), q, Xv) \
        + tangent_derivative(lambda u: system.kinetic_energy(q, u), v, dv)
    power = v @ (tau - odd)
    scale = _system_scale(v * tau, v * odd, energy_rate, power)
    return compare(np.real(energy_rate), power, scale=scale, label="d(T + V)/dt")


def _own_kinetic_energy(system, q: np.ndarray, v: np.ndarray):
    """``T(q, v)`` summed body by body: each body's own ``kinetic_energy`` where its type offers
    one, else ``½ 𝒱*M𝒱`` of its node state."""
    from sko.bodies.contract import root_attachment

    states = system.node_states(q, v)
    root = root_attachment(system.gravity)
    total = 0.0
    for k in system.bodies:
        body, s = system.body(k), states[k]
        own = getattr(body, "kinetic_energy", None)
        T = None
        if callable(own):
            inboard = root if body.parent is None else states[body.parent].attachments[body.attach]
            T = own(q[system.q_slices[k]], v[system.dof_slices[k]], inboard)
        total = total + (0.5 * s.V @ s.M @ s.V if T is None else T)
    return total


@register("mass_from_energy", "BODIES.md contract: ℳ = ∂²T/∂v²", tolerance=PHYSICS_TOLERANCE, symbolic=False,
          system=True)
def mass_from_energy(case: Case):
    """ℳ(q) equals the Hessian of the kinetic energy in v (each body's own T where offered):
    ``ℳ_ii = 2 T(e_i)``, and ``uᵀ ℳ u = 2 T(u)`` along random directions ``u``. A symmetric
    matrix other than ℳ matches the quadratic form on its diagonal and on a random direction
    only on a set of measure zero, so this checks every entry at ``n + 3`` evaluations of T
    instead of the ``n (n + 1) / 2`` of full polarization."""
    system, q, v = _state(case)
    n = system.nv
    M = system.mass_matrix(q)

    def T(u):
        return float(np.real(_own_kinetic_energy(system, q, u)))

    U = case.rng("energy_directions").standard_normal((3, n))
    expected = np.concatenate([np.diag(M), [u @ M @ u for u in U]])
    got = 2 * np.array([T(e) for e in np.eye(n)] + [T(u) for u in U])
    return compare(expected, got, label="2 T(e_i), 2 T(u)")
