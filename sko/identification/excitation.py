"""Excitation trajectories: periodic joint motions that make the base parameters well identifiable (IDENTIFICATION.md, *Excitation*).

Swevers et al. (1997) move each joint along a finite Fourier series of base frequency
``ω = 2π / period``,

    q_i(t) = q₀_i + Σ_l (a_il / (ω l)) sin(ω l t) − (b_il / (ω l)) cos(ω l t),
    v_i(t) = Σ_l a_il cos(ω l t) + b_il sin(ω l t),   v̇_i(t) = Σ_l ω l (b_il cos(ω l t) − a_il sin(ω l t)),

periodic (so measurements can be averaged over periods and differentiated exactly) and band
limited, and choose the coefficients minimising the condition number of the base regressor
stacked at samples over one period. Each joint's coefficients are scaled so its motion stays
within its position and velocity limits (by construction), and torques beyond the effort limits
are penalised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from sko.graphs.errors import DimensionError
from sko.identification.base import BaseParameters, generator, numeric_regressor, system_base
from sko.systems.declared import flag

__all__ = ["ExcitationTrajectory", "excitation_trajectory", "fourier_motion"]


@dataclass(frozen=True)
class ExcitationTrajectory:
    """A periodic excitation: ``a``, ``b`` (nv × harmonics), offset ``q0``, ``period``, and
    the motion ``q``, ``v``, ``dv`` sampled at ``times`` with the base regressor's
    ``condition_number`` there (``cond(W_b)``, without the search's effort penalty)."""

    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray
    period: float
    times: np.ndarray
    q: np.ndarray
    v: np.ndarray
    dv: np.ndarray
    condition_number: float

    def at(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, v, dv)`` at ``times`` (any, not only the samples)."""
        return fourier_motion(self.a, self.b, self.q0, self.period, np.asarray(times, dtype=float))


def fourier_motion(a, b, q0, period: float, times) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, v, dv)`` (each ``(len(times), nv)``) of the series (module docstring)."""
    omega = 2 * np.pi / period
    wl = omega * np.arange(1, a.shape[1] + 1)  # (L,)
    s, c = np.sin(np.outer(times, wl)), np.cos(np.outer(times, wl))  # (T, L)
    q = q0 + (s / wl) @ a.T - (c / wl) @ b.T
    v = c @ a.T + s @ b.T
    dv = (c * wl) @ b.T - (s * wl) @ a.T
    return q, v, dv


def _limits(system, margin: float, default_range: float, default_velocity: float):
    lo, hi = system.lower_position_limit, system.upper_position_limit
    finite = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(finite, lo, -default_range), np.where(finite, hi, default_range)
    q0, half = (lo + hi) / 2, (hi - lo) / 2 * margin
    vmax = system.velocity_limit
    vmax = np.where(np.isfinite(vmax), vmax, default_velocity) * margin
    return q0, half, vmax


def _within(a, b, half, vmax, period: float, times) -> tuple[np.ndarray, np.ndarray]:
    """Each joint's coefficients scaled down until its motion stays in ``|q − q₀| ≤ half`` and
    ``|v| ≤ vmax`` at the samples."""
    q, v, _ = fourier_motion(a, b, np.zeros(len(half)), period, times)
    ratio = np.maximum(np.abs(q).max(axis=0) / half, np.abs(v).max(axis=0) / vmax)
    s = np.where(ratio > 1, 1 / np.maximum(ratio, 1e-300), 1.0)[:, None]
    return a * s, b * s


def excitation_trajectory(system, period: float = 10.0, harmonics: int = 5, samples: int = 100,
                          base: BaseParameters | None = None, friction: bool = False, armature: bool = False,
                          candidates: int = 10, iterations: int = 200, margin: float = 0.9,
                          default_range: float = np.pi, default_velocity: float = 2.0, rng=None) -> ExcitationTrajectory:
    """A Fourier-series excitation of ``system`` (module docstring) minimising the condition
    number of its base regressor at ``samples`` times over one period: the best of
    ``candidates`` random coefficient sets, refined by Nelder–Mead for ``iterations``
    evaluations. Joints without limits use ``±default_range`` about 0 and ``default_velocity``;
    ``margin`` (in ``(0, 1]``) keeps inside the limits. Its ``condition_number`` is that of the
    base regressor at the samples; the search minimises it times a penalty on torques beyond the
    effort limits.

    Raises
    ------
    DimensionError
        A system without joints, or whose coordinates are not its velocities (``nq ≠ nv``:
        quaternions), bad sizes or counts, or a period, margin, default range or velocity out
        of range (named); a ``base`` of other columns (another ``friction`` or ``armature``), an
        ``rng`` that is no seed or generator.
    SKOError
        ``friction`` or ``armature`` not True or False.
    """
    if not system.nv:
        raise DimensionError("an excitation trajectory moves joints; this system has none (nv = 0)")
    if system.nq != system.nv:
        raise DimensionError(f"an excitation trajectory moves joints with q̇ = v; this system has nq = {system.nq}, "
                             f"nv = {system.nv} (a free or spherical joint)")
    for name, value, least in (("harmonics", harmonics, 1), ("samples", samples, 1), ("candidates", candidates, 1),
                               ("iterations", iterations, 0)):
        if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= least):
            raise DimensionError(f"{name} must be an integer ≥ {least}, got {value!r}")
    for name, value in (("period", period), ("margin", margin), ("default_range", default_range),
                        ("default_velocity", default_velocity)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value) and value > 0):
            raise DimensionError(f"{name} must be a finite positive number, got {value!r}")
    if margin > 1:
        raise DimensionError(f"margin must be in (0, 1] (the share of each joint's range and velocity limit the "
                             f"motion may use), got {margin!r}")
    friction = flag(friction, "excitation_trajectory(friction=)")
    armature = flag(armature, "excitation_trajectory(armature=)")
    rng = generator(rng, "excitation_trajectory")
    base = system_base(system, base, friction, armature, rng)
    q0, half, vmax = _limits(system, margin, default_range, default_velocity)
    times = np.linspace(0.0, period, samples, endpoint=False)
    effort = system.effort_limit
    n, L = system.nv, harmonics

    def unpack(x):
        a, b = x[:n * L].reshape(n, L), x[n * L:].reshape(n, L)
        return _within(a, b, half, vmax, period, times)

    def condition(q, v, dv):
        Y = numeric_regressor(system.joint_torque_regressor(q, v, dv, friction=friction, armature=armature),
                              "excitation_trajectory")
        return Y, float(np.linalg.cond(base.regressor(Y).reshape(-1, base.rank)))

    def cost(x):
        a, b = unpack(x)
        Y, c = condition(*fourier_motion(a, b, q0, period, times))
        if np.isfinite(effort).any():
            tau = np.einsum("tij,j->ti", Y, system.inertial_parameters(friction, armature))
            excess = np.maximum(np.abs(tau) / effort - 1, 0.0)
            c *= 1 + 10 * float(excess.max(initial=0.0))
        return c if np.isfinite(c) else 1e300

    scale = vmax.repeat(L)
    starts = [np.concatenate([rng.normal(size=n * L) * scale, rng.normal(size=n * L) * scale]) for _ in range(candidates)]
    best = min(starts, key=cost)
    if iterations > 0:
        best = minimize(cost, best, method="Nelder-Mead", options={"maxfev": iterations, "xatol": 1e-6}).x
    a, b = unpack(best)
    q, v, dv = fourier_motion(a, b, q0, period, times)
    return ExcitationTrajectory(a, b, q0, float(period), times, q, v, dv, condition(q, v, dv)[1])
