"""Physical consistency of rigid-body parameters by the log-Cholesky parameterisation (IDENTIFICATION.md, *Physical consistency*).

A rigid body's ten parameters are those of a physical body exactly when its pseudo-inertia

    J = [[Σ, h], [hᵀ, m]],   Σ = ½ tr(Ī) 1 − Ī = ∫ ρ r rᵀ,   h = m c,

is positive semidefinite (Wensing, Kim & Slotine 2017): ``Σ`` is the second moment of the mass
distribution. Rucker & Wensing (RA-L 2022) write every positive definite ``J`` as ``U Uᵀ`` with

    U = e^α [[e^{d₁}, s₁₂, s₁₃, t₁], [0, e^{d₂}, s₂₃, t₂], [0, 0, e^{d₃}, t₃], [0, 0, 0, 1]],

ten unconstrained numbers ``θ = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃)``, a smooth
bijection onto the physically consistent bodies of positive mass and nonsingular ``Σ``, so a
least-squares fit over ``θ`` gives a consistent estimate without constraints.
"""

from __future__ import annotations

import numpy as np

from sko.arrays import checked_array
from sko.graphs.errors import DimensionError, NonFiniteError, NotPositiveDefiniteError

__all__ = ["pseudo_inertia", "rigid_from_pseudo_inertia", "log_cholesky_parameters", "rigid_from_log_cholesky"]


def _ten(parameters, what: str = "rigid parameters") -> np.ndarray:
    """Ten finite numbers (real, complex for a complex step, or symbolic), else the error naming ``what``."""
    p = checked_array(parameters, (0, 1), what, finite=False)
    if p.shape != (10,):
        raise DimensionError(f"{what} must be ten numbers {_ORDER[what]}, got shape {p.shape}")
    if not (p.dtype == object or np.isfinite(p).all()):
        raise NonFiniteError(f"{what} {p.tolist()} have NaN or infinite entries")
    return p


_ORDER = {"rigid parameters": "[m, m c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]",
          "log-Cholesky parameters": "θ = (α, d₁, d₂, d₃, s₁₂, s₂₃, s₁₃, t₁, t₂, t₃)"}


def pseudo_inertia(parameters) -> np.ndarray:
    """``J`` (4 × 4) of ten rigid parameters ``[m, m c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``;
    a :class:`~sko.graphs.errors.DimensionError` for another shape, a
    :class:`~sko.graphs.errors.NonFiniteError` for NaN or infinity."""
    parameters = _ten(parameters)
    m, h, (xx, xy, yy, xz, yz, zz) = parameters[0], parameters[1:4], parameters[4:10]
    Ibar = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    J = np.zeros((4, 4), dtype=np.result_type(np.asarray(parameters), float))
    J[:3, :3] = 0.5 * np.trace(Ibar) * np.eye(3) - Ibar
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def rigid_from_pseudo_inertia(J) -> np.ndarray:
    """The ten parameters of a pseudo-inertia ``J`` (inverse of :func:`pseudo_inertia`)."""
    Sigma = J[:3, :3]
    Ibar = np.trace(Sigma) * np.eye(3) - Sigma
    return np.concatenate([[J[3, 3]], J[:3, 3], [Ibar[0, 0], Ibar[0, 1], Ibar[1, 1], Ibar[0, 2], Ibar[1, 2], Ibar[2, 2]]])


def rigid_from_log_cholesky(theta) -> np.ndarray:
    """The ten parameters of ``θ`` (module docstring); real or complex ``θ`` (a complex step).

    Raises
    ------
    DimensionError, NonFiniteError
        Not ten numbers, not finite, or parameters beyond the floating-point range (``e^α`` or
        ``e^{dᵢ}`` overflowing)."""
    a, d1, d2, d3, s12, s23, s13, t1, t2, t3 = _ten(theta, "log-Cholesky parameters")
    zero = 0 * a
    with np.errstate(over="ignore", invalid="ignore"):
        U = np.exp(a) * np.array([[np.exp(d1), s12, s13, t1], [zero, np.exp(d2), s23, t2],
                                  [zero, zero, np.exp(d3), t3], [zero, zero, zero, 1 + zero]])
        out = rigid_from_pseudo_inertia(U @ U.T)
    if not np.isfinite(out).all():
        raise NonFiniteError(f"the rigid parameters of log-Cholesky parameters {np.asarray(theta).tolist()} overflow "
                             "the floating-point range")
    return out


def log_cholesky_parameters(parameters) -> np.ndarray:
    """``θ`` of ten parameters whose pseudo-inertia is positive definite.

    Raises
    ------
    NotPositiveDefiniteError
        The pseudo-inertia is not positive definite (a massless body, a point mass, a body
        of no physical mass distribution).
    DimensionError, NonFiniteError
        Not ten numbers, or not finite.
    """
    parameters = _ten(parameters)
    if parameters.dtype.kind not in "f":
        raise DimensionError(f"rigid parameters must be real numbers, got {parameters.dtype}")
    J = pseudo_inertia(parameters)
    flip = J[::-1, ::-1]  # J = U Uᵀ, U upper triangular ⇔ flip(J) = L Lᵀ, L = flip(U) lower triangular
    try:
        L = np.linalg.cholesky(flip)
    except np.linalg.LinAlgError:
        raise NotPositiveDefiniteError(f"the pseudo-inertia of parameters {np.round(parameters, 6).tolist()} is not "
                                       "positive definite: no log-Cholesky parameters") from None
    U = L[::-1, ::-1]
    a = np.log(U[3, 3])
    U = U / U[3, 3]
    return np.array([a, np.log(U[0, 0]), np.log(U[1, 1]), np.log(U[2, 2]), U[0, 1], U[1, 2], U[0, 2],
                     U[0, 3], U[1, 3], U[2, 3]])
