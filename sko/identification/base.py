"""Base parameters: the identifiable linear combinations of a system's parameters (IDENTIFICATION.md, *Base parameters*).

Some columns of the regressor vanish at every state (a base link's mass) or are combinations
of others (a revolute joint only sees ``I_xx + I_yy`` of a link about its axis and the like).
Stack ``Y`` at random states into ``W`` and factor ``W P = Q R`` with column pivoting (Gautier
1990): the first ``r`` pivoted columns (``r`` the numerical rank) are independent, and the others
are ``W₂ = W₁ β`` with ``β = R₁₁⁻¹ R₁₂``. Then ``W π = W₁ (π₁ + β π₂)``: the base parameters are
``π_b = K π`` with ``K = [1, β] Pᵀ``, and ``Y π = Y[:, independent] π_b`` at every state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from sko.arrays import checked_array, numeric_array, plain_numbers_as_floats
from sko.graphs.errors import DimensionError
from sko.systems.declared import flag

__all__ = ["BaseParameters", "base_parameters", "stacked_regressor", "system_base", "real_array", "generator",
           "numeric_regressor"]


@dataclass(frozen=True)
class BaseParameters:
    """The base parameters of a system.

    Attributes
    ----------
    rank : int
        How many combinations are identifiable.
    independent : (rank,) int array
        The columns of ``Y`` kept: ``Y π = Y[..., independent] @ (K @ π)``.
    K : (rank, p) array
        The map from full to base parameters, ``π_b = K π``.
    names : list
        ``(body, name)`` of each independent column (the leading term of its combination).
    """

    rank: int
    independent: np.ndarray
    K: np.ndarray
    names: list

    def base(self, parameters) -> np.ndarray:
        """``π_b = K π`` (``π`` one parameter vector or a stack of them along the first axis)."""
        pi = self._columns(parameters, "parameters", "entries", (1, 2))
        return pi @ self.K.T

    def regressor(self, Y) -> np.ndarray:
        """The base regressor: the independent columns of ``Y`` (one state or a batch)."""
        return self._columns(Y, "Y", "columns", (2, 3))[..., self.independent]

    def _columns(self, x, name: str, what: str, ndim: tuple) -> np.ndarray:
        """``x`` checked: ``ndim`` axes, the last of the ``p`` parameters, finite; else the error
        naming ``name``."""
        x = checked_array(x, ndim, name)
        if x.shape[-1] != self.K.shape[1]:
            raise DimensionError(f"{name} must have {self.K.shape[1]} {what} (the last axis), got shape {x.shape}")
        return x


def real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array of real numbers (a measurement, a weight), else the error naming
    ``name``: a complex part or a symbol would be dropped by a float cast, text parsed."""
    x = plain_numbers_as_floats(numeric_array(x, name), name)
    if x.dtype.kind not in "biuf":
        raise DimensionError(f"{name} must hold real numbers, got {x.dtype}")
    return x.astype(float)


def numeric_regressor(Y: np.ndarray, what: str) -> np.ndarray:
    """``Y`` as float64 numbers, or a :class:`DimensionError`: identification computes with
    numbers, and the regressor of a system with symbolic masses, lengths or gravity holds
    expressions (sympy's ``TypeError`` came from the first float operation on them)."""
    if Y.dtype != object:
        return Y
    try:
        return Y.astype(float)
    except (TypeError, ValueError):
        raise DimensionError(f"{what} computes with numbers, but the regressor of this system holds symbols (sympy "
                             "masses, lengths or gravity): substitute numbers for them first") from None


def generator(rng, what: str) -> np.random.Generator:
    """``numpy.random.default_rng(rng)``, or the error naming ``what``."""
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError):
        raise DimensionError(f"{what}: rng must be a seed (a non-negative integer or a sequence of them), None or a "
                             f"numpy Generator, got {rng!r}") from None


def _random_states(system, samples: int, rng) -> tuple:
    q = np.array([system.random_configuration(rng) for _ in range(samples)])
    v, dv = rng.normal(size=(2, samples, system.nv))
    return q, v, dv


def stacked_regressor(system, q, v, dv, friction: bool = False, armature: bool = False) -> np.ndarray:
    """``W`` (B·nv × p): the joint-torque regressors at a batch of states, stacked."""
    Y = system.joint_torque_regressor(q, v, dv, friction=friction, armature=armature)
    return Y.reshape(int(np.prod(Y.shape[:-1])), Y.shape[-1])  # also without parameters (-1 is ambiguous then)


RANK_TOLERANCE = 1e-10
"""Default rank tolerance of :func:`base_parameters`, relative to the largest diagonal entry of
the pivoted ``R`` of the column-scaled ``W``. Rounding in the recursions leaves a dependent
column up to ~1e-11 of it (flexible bodies on geared rotors: their columns are sums of terms
far larger than the column), while a combination the random states excite sits above ~1e-10;
``max(B·nv, p) · eps`` (``numpy.linalg.matrix_rank``'s factor, ~1e-13) would keep rounding
noise as a parameter."""


def base_parameters(system, samples: int = 50, rng=None, friction: bool = False, armature: bool = False,
                    tolerance: float = RANK_TOLERANCE) -> BaseParameters:
    """The base parameters of ``system`` from regressors at ``samples`` random states (module
    docstring); a pivoted column is independent when its diagonal entry of ``R`` exceeds
    ``tolerance`` times the largest (:data:`RANK_TOLERANCE`).

    Raises
    ------
    DimensionError, SKOError
        ``samples`` not a positive integer, ``tolerance`` not in ``[0, 1)``, ``rng`` not a seed
        or generator, an option not True or False.

    Examples
    --------
    >>> from sko.examples.rigid import planar_chain
    >>> base = base_parameters(planar_chain(2), rng=0)
    >>> base.rank, base.K.shape
    (6, (6, 20))
    """
    if isinstance(samples, (bool, np.bool_)) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise DimensionError(f"samples must be a positive integer, got {samples!r}")
    if isinstance(tolerance, (bool, np.bool_)) or not (
            isinstance(tolerance, (int, float, np.integer, np.floating)) and 0 <= tolerance < 1):
        raise DimensionError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    friction, armature = flag(friction, "base_parameters(friction=)"), flag(armature, "base_parameters(armature=)")
    rng = generator(rng, "base_parameters")
    W = numeric_regressor(stacked_regressor(system, *_random_states(system, int(samples), rng), friction=friction,
                                            armature=armature), "base_parameters")
    names = system.inertial_parameter_names(friction=friction, armature=armature)
    if not W.size:  # no parameter, or no coordinate to move one
        return BaseParameters(0, np.zeros(0, dtype=int), np.zeros((0, W.shape[1])), [])
    # scale each column to unit norm so the pivoting ranks combinations, not units; a column of
    # rounding noise only (a parameter that moves nothing, zero up to rounding) is zero, not noise
    # blown up to unit norm
    norms = np.linalg.norm(W, axis=0)
    noise = norms <= np.sqrt(np.finfo(float).eps) * norms.max(initial=0.0)
    W = np.where(noise, 0.0, W)
    scale = np.where(noise, 1.0, norms)
    _, R, P = scipy.linalg.qr(W / scale, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    r = int(np.sum(d > tolerance * d.max(initial=0.0))) if d.size else 0
    beta = scipy.linalg.solve_triangular(R[:r, :r], R[:r, r:])
    p = W.shape[1]
    K = np.zeros((r, p))
    independent, dependent = P[:r], P[r:]
    # W π = (W/s) (s π): base parameters of the scaled columns, scaled back
    K[:, independent] = np.eye(r)
    K[:, dependent] = beta * scale[dependent] / scale[independent][:, None]
    order = np.argsort(independent)
    independent, K = independent[order], K[order]
    return BaseParameters(r, independent, K, [names[i] for i in independent])


def system_base(system, base: BaseParameters | None, friction: bool, armature: bool, rng=None) -> BaseParameters:
    """``base``, or the base parameters of ``system`` when None; a :class:`DimensionError` when
    ``base`` is of other columns than the system's with ``friction`` and ``armature``."""
    if base is None:
        return base_parameters(system, friction=friction, armature=armature, rng=rng)
    if not isinstance(base, BaseParameters):
        raise DimensionError(f"base must be the BaseParameters of base_parameters, got {type(base).__name__}")
    names = system.inertial_parameter_names(friction=friction, armature=armature)
    if base.K.shape[1] != len(names) or [names[i] for i in base.independent] != list(base.names):
        raise DimensionError(f"base is of other parameters ({base.K.shape[1]} columns) than this system's {len(names)} "
                             f"with friction={friction}, armature={armature}: find it by base_parameters of this "
                             "system with the same friction and armature")
    return base
