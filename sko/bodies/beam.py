"""Clamped-free bending modes of a uniform beam, and a flexible link built from them.

The beam lies along the x axis of its body frame, from the clamped root at the origin to the
free tip at ``x = L``. It is lumped into ``N`` stations ``x_j = j L/N`` (half masses at root and
tip, so the total mass is exact). Its transverse flexibility is the cantilever influence
coefficient ``F_jl = x_<² (3 x_> − x_<) / (6 EI)`` (``x_<, x_>``: the smaller and larger of
``x_j, x_l``), so ``K = F^{-1}``, and ``K φ = ω² M φ`` is solved by :func:`scipy.linalg.eigh`
with mass-normalised modes (``φ* M φ = I``, modal stiffness ``diag(ω²)``). The slope of a mode
at ``x`` is that of the beam under the point loads ``K φ`` that produce it
(``θ(x) = Σ_l f_l x_<(2 x_l − x_<) / (2 EI)`` with ``x_< = min(x, x_l)``).

Each station carries four particles on a ring of radius ``thickness/2`` around the axis, so
the section has rotary inertia and ``M(k)`` is positive definite.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import NamedTuple

import numpy as np
import scipy.linalg

from sko.arrays import checked_count, checked_scalar

from sko.bodies.joints import Joint

from sko.bodies.contract import BodyError
from sko.bodies.flexible import FlexibleBody

__all__ = ["BeamModes", "cantilever_modes", "flexible_beam"]

_DIRECTIONS = {"z": (2, np.array([0.0, -1.0, 0.0])), "y": (1, np.array([0.0, 0.0, 1.0]))}


class BeamModes(NamedTuple):
    """Lumped clamped-free modes: station positions ``x`` and masses, mass-normalised
    deflections ``shapes`` (N + 1, r), slopes (N + 1, r) and circular frequencies (r,)."""

    x: np.ndarray
    masses: np.ndarray
    shapes: np.ndarray
    slopes: np.ndarray
    frequencies: np.ndarray


def cantilever_modes(length: float, mass: float, EI: float, n_modes: int, stations: int = 24) -> BeamModes:
    """The ``n_modes`` lowest bending modes of a uniform cantilever lumped into ``stations``.

    Raises
    ------
    BodyError
        Unless ``length, mass, EI > 0`` and ``1 <= n_modes <= stations``.

    Examples
    --------
    >>> m = cantilever_modes(1.0, 1.0, 1.0, 2, stations=60)
    >>> bool(abs(m.frequencies[0] / 1.8751**2 - 1) < 2e-3)    # continuous beam: 1.8751² √(EI/ρL⁴)
    True
    """
    length = checked_scalar(length, "beam length", positive=True, error=BodyError)
    mass = checked_scalar(mass, "beam mass", positive=True, error=BodyError)
    EI = checked_scalar(EI, "beam bending stiffness EI", positive=True, error=BodyError)
    stations = checked_count(stations, "beam stations", minimum=1, error=BodyError)
    n_modes = checked_count(n_modes, "beam n_modes", minimum=1, error=BodyError)
    if not (1 <= n_modes <= stations):
        raise BodyError(f"beam with {stations} stations has 1..{stations} modes, asked for {n_modes}")
    x = np.linspace(0.0, length, stations + 1)
    masses = np.full(stations + 1, mass / stations)
    masses[[0, -1]] /= 2
    xf = x[1:]
    lo, hi = np.minimum.outer(xf, xf), np.maximum.outer(xf, xf)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        compliance = lo**2 * (3 * hi - lo) / (6 * EI)
        scales = (masses * np.float64(length) ** 3 / EI).max()
    out_of_range = BodyError(f"beam with length {length!r}, mass {mass!r} and EI {EI!r}: the modes overflow or "
                             "underflow the floating-point range; rescale the units")
    if not (np.isfinite(compliance).all() and np.isfinite(scales) and scales > 0 and np.diagonal(compliance).min() > 0):
        raise out_of_range
    try:
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            K = np.linalg.inv(compliance)
            K = (K + K.T) / 2
            w2, phi = scipy.linalg.eigh(K, np.diag(masses[1:]), subset_by_index=[0, n_modes - 1])
    except (np.linalg.LinAlgError, ValueError):
        raise out_of_range from None
    if not (np.isfinite(w2).all() and np.isfinite(phi).all() and w2.min() > 0):
        raise out_of_range
    phi *= np.sign(phi[-1])  # tip deflection positive
    loads = K @ phi
    lo_s = np.minimum.outer(x, xf)
    slopes = (lo_s * (2 * xf - lo_s) / (2 * EI)) @ loads
    shapes = np.vstack([np.zeros(n_modes), phi])
    return BeamModes(x=x, masses=masses, shapes=shapes, slopes=slopes, frequencies=np.sqrt(w2))


def flexible_beam(name: Hashable, parent: Hashable | None, joint: Joint, length: float, mass: float, EI: float,
                  n_modes: int, stations: int = 24, thickness: float | None = None, damping_ratio: float = 0.0,
                  directions: Sequence[str] = ("z",), placement=None, attach: Hashable | None = None) -> FlexibleBody:
    """A uniform flexible link along x with ``n_modes`` clamped-free bending modes per direction.

    ``directions``: bending deflections along ``"z"`` (rotation about −y) and/or ``"y"``
    (rotation about +z). Modal damping ``C = diag(2 ζ ω)``. The link offers the node ``"tip"``
    (at ``x = L``, with its modal translation and rotation) for children.

    Examples
    --------
    >>> from sko.bodies.joints import Revolute
    >>> link = flexible_beam("link", None, Revolute([0, 1, 0]), 1.0, 2.0, 50.0, n_modes=2)
    >>> link.node_dim, link.dof_size, sorted(link.nodes)
    (8, 3, ['tip'])
    """
    modes = cantilever_modes(length, mass, EI, n_modes, stations)
    length = float(modes.x[-1])
    if thickness is not None:
        thickness = checked_scalar(thickness, f"flexible beam {name!r}: thickness", positive=True, error=BodyError)
    damping_ratio = checked_scalar(damping_ratio, f"flexible beam {name!r}: damping ratio", nonnegative=True,
                                   error=BodyError)
    if isinstance(directions, str) or not isinstance(directions, Iterable):
        raise BodyError(f"flexible beam {name!r}: directions must be a sequence of 'y', 'z', got {directions!r}")
    directions = tuple(directions)
    if not directions or any(not isinstance(d, str) or d not in _DIRECTIONS for d in directions) or len(set(directions)) != len(directions):
        raise BodyError(f"flexible beam {name!r}: directions must be distinct values of 'y', 'z', got {directions!r}")
    half = (length / 20 if thickness is None else thickness) / 2
    ring = half * np.array([[0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    positions = (modes.x[:, None, None] * np.array([1.0, 0, 0]) + ring[None]).reshape(-1, 3)
    masses = np.repeat(modes.masses / 4, 4)
    r = n_modes * len(directions)
    Phi = np.zeros((len(modes.x), 3, r))
    Psi = np.zeros((3, r))
    for d, key in enumerate(directions):
        axis, rot_axis = _DIRECTIONS[key]
        cols = slice(d * n_modes, (d + 1) * n_modes)
        Phi[:, axis, cols] = modes.shapes
        Psi[:, cols] = np.outer(rot_axis, modes.slopes[-1])
    w = np.tile(modes.frequencies, len(directions))
    return FlexibleBody(name, parent, joint, masses, positions, np.repeat(Phi, 4, axis=0),
                        stiffness=np.diag(w**2), damping=np.diag(2 * damping_ratio * w),
                        nodes={"tip": (np.array([length, 0.0, 0.0]), Phi[-1], Psi)}, placement=placement, attach=attach)
