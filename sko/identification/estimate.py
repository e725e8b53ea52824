"""Least-squares identification of base parameters and a physically consistent full estimate (IDENTIFICATION.md, *Estimation*).

Measured torques at states ``s`` stack into ``y = τ − T_hinge`` (the hinge forces of the model
carry no parameter) and the base regressors into ``W_b``; with row weights ``w`` (inverse
standard deviations of the torque noise) the estimate is ``π̂_b = argmin ‖w (W_b π_b − y)‖``,
its covariance ``σ² (W_bᵀ W_b)⁻¹`` with ``σ² = ‖r‖² / (rows − rank)`` of the weighted residual
``r``, and the condition number of ``w W_b`` says how well the motion excites the parameters.

The full parameters are not identifiable, but a physically consistent set that explains the
data is: every rigid body's ten parameters through its log-Cholesky ``θ``
(:mod:`sko.identification.consistent`), the other parameters as they are, fitted by
:func:`scipy.optimize.least_squares` to ``‖w (W π(θ) − y)‖² + λ ‖π(θ) − π₀‖²``, with ``π₀`` the
system's own parameters and a small ``λ`` choosing among the parameters the data cannot tell
apart (those closest to the model's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from sko.bodies.rigid_parameters import RIGID_PARAMETER_NAMES
from sko.graphs.errors import DimensionError, NonFiniteError
from sko.identification.base import BaseParameters, numeric_regressor, real_array, system_base
from sko.systems.declared import flag
from sko.identification.consistent import (log_cholesky_parameters, pseudo_inertia, rigid_from_log_cholesky,
                                           rigid_from_pseudo_inertia)

__all__ = ["Identification", "identify", "rigid_blocks"]


@dataclass(frozen=True)
class Identification:
    """What :func:`identify` found.

    Attributes
    ----------
    base : BaseParameters
    estimate, standard_errors : (rank,) arrays
        ``π̂_b`` and the standard error of each entry.
    covariance : (rank, rank) array
    condition_number : float
        Of the weighted base regressor.
    residual_rms : float
        Root mean square of the weighted residual.
    consistent : (p,) array or None
        A physically consistent full estimate (every rigid body's pseudo-inertia positive
        definite), ``None`` when not asked for.
    """

    base: BaseParameters
    estimate: np.ndarray
    standard_errors: np.ndarray
    covariance: np.ndarray
    condition_number: float
    residual_rms: float
    consistent: np.ndarray | None = None

    @property
    def consistent_base(self) -> np.ndarray | None:
        """``K π_consistent``: the base parameters of the consistent estimate."""
        return None if self.consistent is None else self.base.base(self.consistent)


def rigid_blocks(names: list) -> list[int]:
    """Start indices of the rigid bodies' ten-parameter blocks in a list of parameter names."""
    n, out, i = len(RIGID_PARAMETER_NAMES), [], 0
    while i + n <= len(names):
        block = names[i:i + n]
        if tuple(x[1] for x in block) == RIGID_PARAMETER_NAMES and len({x[0] for x in block}) == 1:
            out.append(i)
            i += n
        else:
            i += 1
    return out


def _batch(x, name: str, width: int) -> np.ndarray:
    x = real_array(x, name)
    if x.ndim != 2 or x.shape[1] != width:
        raise DimensionError(f"{name} must have shape (B, {width}), got {x.shape}")
    if not np.isfinite(x).all():
        raise NonFiniteError(f"{name} has NaN or infinite entries")
    return x


def identify(system, q, v, dv, tau, weights=None, base: BaseParameters | None = None, friction: bool = False,
             armature: bool = False, consistent: bool = True, regularization: float = 1e-6,
             rng=None) -> Identification:
    """Base parameters of ``system`` from measured states ``(q, v, dv)`` and torques ``tau``
    (each ``(B, n)``), with standard errors, and a physically consistent full estimate (module
    docstring).

    Parameters
    ----------
    weights : (nv,) or (B, nv) array, optional
        Row weights, the inverse standard deviations of the torque noise (default: ones).
    base : BaseParameters, optional
        Default :func:`~sko.identification.base.base_parameters` of the system (same columns).
    regularization : float
        ``λ`` relative to the mean squared column norm of ``w W``.

    Raises
    ------
    DimensionError, NonFiniteError, SKOError
        Inputs of the wrong shape, not real numbers, or not finite; fewer rows than base
        parameters; a ``base`` of other columns (another ``friction`` or ``armature``);
        ``regularization`` not a finite non-negative number; an option not True or False.
    """
    friction, armature = flag(friction, "identify(friction=)"), flag(armature, "identify(armature=)")
    consistent = flag(consistent, "identify(consistent=)")
    q, v, dv = _batch(q, "q", system.nq), _batch(v, "v", system.nv), _batch(dv, "dv", system.nv)
    tau = _batch(tau, "tau", system.nv)
    if not q.shape[0] == v.shape[0] == dv.shape[0] == tau.shape[0]:
        raise DimensionError(f"q, v, dv and tau must hold the same number of states, got {q.shape[0]}, {v.shape[0]}, "
                             f"{dv.shape[0]}, {tau.shape[0]}")
    w = np.ones(system.nv) if weights is None else real_array(weights, "weights")
    if w.shape not in ((system.nv,), tau.shape) or not np.isfinite(w).all() or (w < 0).any():
        raise DimensionError(f"weights must be {system.nv} or {tau.shape} finite non-negative numbers, got shape {w.shape}")
    w = np.broadcast_to(w, tau.shape)
    if isinstance(regularization, (bool, np.bool_)) or not (
            isinstance(regularization, (int, float, np.integer, np.floating)) and np.isfinite(regularization)
            and regularization >= 0):
        raise DimensionError(f"regularization must be a finite non-negative number, got {regularization!r}")
    base = system_base(system, base, friction, armature, rng)
    if tau.size <= base.rank:
        raise DimensionError(f"{tau.size} torque rows ({tau.shape[0]} states) cannot identify {base.rank} base "
                             "parameters")
    Y = numeric_regressor(system.joint_torque_regressor(q, v, dv, friction=friction, armature=armature), "identify")
    hinge = np.array([system.hinge_forces(qs, vs) for qs, vs in zip(q, v)])
    W = (Y * w[..., None]).reshape(-1, Y.shape[-1])
    y = ((tau - hinge) * w).reshape(-1)
    Wb = W[:, base.independent]
    estimate, *_ = np.linalg.lstsq(Wb, y, rcond=None)
    r = Wb @ estimate - y
    sigma2 = float(r @ r) / (Wb.shape[0] - base.rank)
    covariance = sigma2 * np.linalg.pinv(Wb.T @ Wb)
    full = _consistent(system, W, y, friction, armature, regularization) if consistent else None
    return Identification(base, estimate, np.sqrt(np.diag(covariance)), covariance, float(np.linalg.cond(Wb)),
                          float(np.sqrt(np.mean(r * r))), full)


def _consistent(system, W: np.ndarray, y: np.ndarray, friction: bool, armature: bool, regularization: float) -> np.ndarray:
    """The physically consistent full estimate (module docstring)."""
    names = system.inertial_parameter_names(friction=friction, armature=armature)
    prior = system.inertial_parameters(friction=friction, armature=armature)
    blocks = rigid_blocks(names)
    rigid = np.zeros(len(names), dtype=bool)
    for i in blocks:
        rigid[i:i + 10] = True
    x0 = [log_cholesky_parameters(_definite(prior[i:i + 10])) for i in blocks]
    x0 = np.concatenate([*x0, prior[~rigid]])

    def parameters(x):
        p = np.zeros(len(names), dtype=x.dtype)
        for n, i in enumerate(blocks):
            p[i:i + 10] = rigid_from_log_cholesky(x[10 * n:10 * n + 10])
        p[~rigid] = x[10 * len(blocks):]
        return p

    lam = np.sqrt(regularization * np.mean(np.sum(W * W, axis=0)))
    scale = np.where(np.abs(prior) > 0, np.abs(prior), 1.0)

    def residual(x):
        p = parameters(x)
        return np.concatenate([W @ p - y, lam * (p - prior) / scale * np.linalg.norm(scale) / np.sqrt(len(scale))])

    def jacobian(x):  # exact, by complex step: π(θ) is analytic
        h, J = 1e-20, np.zeros((len(names), len(x)))
        for j in range(len(x)):
            xc = x.astype(complex)
            xc[j] += 1j * h
            J[:, j] = np.imag(parameters(xc)) / h
        return np.vstack([W @ J, lam * J / scale[:, None] * np.linalg.norm(scale) / np.sqrt(len(scale))])

    result = least_squares(residual, x0, jac=jacobian, method="trf", x_scale="jac", max_nfev=200)
    return parameters(result.x)


def _definite(p: np.ndarray) -> np.ndarray:
    """Rigid parameters nudged to a positive definite pseudo-inertia (a massless or point-mass
    body of the model as a starting point)."""
    J = pseudo_inertia(p)
    size = max(np.abs(J).max(), 1e-6)
    lo = np.linalg.eigvalsh(J).min()
    if lo > 1e-9 * size:
        return p
    return rigid_from_pseudo_inertia(J + (1e-6 * size - min(lo, 0.0)) * np.eye(4))
