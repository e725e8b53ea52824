"""Physical consistency of rigid-body inertia, judged by the body's own scale (RIGID.md, *Spatial algebra*).

A rigid body of mass ``m`` has rotational inertia about its centre of mass
``I_c = ∫ ρ (‖r‖² 1 − r rᵀ)``. In its principal axes the moments are ``J_i = Σ_{j≠i} L_j`` with
the second moments of the mass distribution ``L_j = ∫ ρ r_j² ≥ 0``, so a body exists exactly when

    m ≥ 0   and   L = tr(I_c)/2 − J ≥ 0    (the triangle inequalities ``J_i ≤ J_j + J_k``),

which also gives ``J ≥ 0``. Every comparison is relative to the body's own ``m r²``, with ``r``
its radius of gyration about its frame origin: ``m r² = tr(I_c)/2 + m ‖c‖²`` (``c`` the centre of
mass in the body frame). The same body in grams and millimetres or in kilograms and metres is
judged the same; a point mass (``I_c = 0``) and a massless frame (``m = 0``, ``I_c = 0``) are
valid bodies.

:func:`nearest_physical_inertia` projects an inconsistent ``I_c`` onto the consistent ones: the
nearest in the Frobenius norm keeps the principal axes and solves the non-negative least-squares
problem ``min ‖A L − J‖, L ≥ 0`` (``A = 𝟙𝟙ᵀ − 1``, ``J = A L``), by :func:`scipy.optimize.nnls`.

Every test is homogeneous in the inertia, so each works on ``I_c`` scaled by a power of 2 (exact)
to a largest entry near 1: moments of any size a float holds, 1e-300 or 1e308, are judged (and
repaired, and the change reported by :func:`repair_description`) as those of size 1 — no square
or sum overflows to ``inf`` or underflows to 0 on the way.
"""

from __future__ import annotations

import numpy as np

from sko.graphs.arrays import _numeric, is_numeric
from sko.graphs.errors import NotPositiveDefiniteError

__all__ = [
    "InertiaRepairWarning",
    "RTOL",
    "inertia_scale",
    "inertia_violation",
    "check_physical_inertia",
    "check_spatial_inertia",
    "nearest_physical_inertia",
    "repair_description",
]

#: Relative tolerance of the triangle inequalities (rounding of printed inertias, 6–7 digits).
RTOL = 1e-6

#: Spatial inertias with larger entries are checked scaled down (their squares would overflow).
_HUGE = 1e150

#: Principal moments ``J = A L`` from the second moments ``L`` of the mass distribution.
_A = np.ones((3, 3)) - np.eye(3)


class InertiaRepairWarning(UserWarning):
    """An inertia was replaced by the nearest physically consistent one; the message lists each
    body and how much its rotational inertia changed, :attr:`repairs` the same one per body."""

    def __init__(self, message: str, repairs=()):
        super().__init__(message)
        self.repairs = tuple(repairs)  #: one description per repaired body


def _exponent(*arrays) -> int:
    """``e`` with ``2**e`` about the largest entry of ``arrays`` (0 when all are zero or not finite)."""
    largest = max((float(np.abs(np.asarray(a, dtype=float)).max(initial=0.0)) for a in arrays), default=0.0)
    return int(np.frexp(largest)[1]) if 0 < largest < np.inf else 0


def _norm(x) -> float:
    """Frobenius norm without overflow or underflow of the squares."""
    x = np.asarray(x, dtype=float)
    e = _exponent(x)
    return float(np.ldexp(np.linalg.norm(np.ldexp(x, -e)), e))


def _mass_moment(mass: float, com, e: int) -> float:
    """``m ‖c‖² / 2**e`` without overflow or underflow on the way (``inf`` when the result itself
    exceeds the floating-point range)."""
    com = np.asarray(com, dtype=float)
    big = float(np.abs(com).max(initial=0.0))
    if not (mass > 0 and big > 0):
        return 0.0
    unit = com / big
    with np.errstate(over="ignore", under="ignore"):
        return float(np.exp(np.log(float(mass)) + 2 * np.log(big) + np.log(unit @ unit) - e * np.log(2.0)))


def _scaled(mass: float, com, inertia_com) -> tuple[np.ndarray, np.ndarray, float, int]:
    """``(I_c / 2**e, principal moments of its symmetric part, m r² / 2**e, e)``, ``2**e`` about
    the largest entry of ``I_c`` (module docstring: every test is homogeneous in the inertia)."""
    Ic = np.asarray(inertia_com, dtype=float)
    e = _exponent(Ic)
    Icn = np.ldexp(Ic, -e)
    J = np.linalg.eigvalsh((Icn + Icn.T) / 2)
    return Icn, J, float(np.trace(Icn)) / 2 + _mass_moment(mass, com, e), e


def _value(x: float, e: int, digits: int = 4) -> str:
    """``x · 2**e`` printed with ``digits`` significant digits, also beyond the float range."""
    if x == 0 or not np.isfinite(x):
        return f"{x:.{digits}g}"
    with np.errstate(over="ignore", under="ignore"):
        value = float(np.ldexp(x, e))
    if value != 0 and np.isfinite(value) and abs(value) >= np.finfo(float).tiny:
        return f"{value:.{digits}g}"
    exponent10 = np.log10(abs(x)) + e * np.log10(2.0)
    p = int(np.floor(exponent10))
    return f"{np.sign(x) * 10 ** (exponent10 - p):.{digits}g}e{p:+d}"


def inertia_scale(mass: float, com, inertia_com) -> float:
    """``m r² = tr(I_c)/2 + m ‖c‖²``: the body's own inertia scale about its frame origin
    (``inf`` only when it exceeds the floating-point range)."""
    Ic = np.asarray(inertia_com, dtype=float)
    e = _exponent(Ic)
    with np.errstate(over="ignore"):
        return float(np.ldexp(float(np.trace(np.ldexp(Ic, -e))) / 2 + _mass_moment(mass, com, e), e))


def inertia_violation(mass: float, com, inertia_com) -> float:
    """How far ``I_c`` is from physical: ``max(0, −min L) / (m r²)`` (0 when consistent; ``inf``
    for a nonzero violation of a body of zero scale). Computed on ``I_c`` scaled to unit size, so
    moments near the ends of the floating-point range are judged as any others."""
    _, J, scale, _ = _scaled(mass, com, inertia_com)
    worst = max(0.0, -float((J.sum() / 2 - J).min()))
    if worst == 0.0:
        return 0.0
    return worst / scale if scale > 0 else float("inf")


def check_physical_inertia(mass: float, com, inertia_com, where: str, error: type[Exception] = NotPositiveDefiniteError,
                           rtol: float = RTOL) -> None:
    """Raise ``error`` naming ``where`` (e.g. ``"link 'head'"``) unless ``mass ≥ 0``, ``I_c`` is
    symmetric (to ``rtol`` of the body's scale) and its principal moments satisfy the triangle
    inequalities to ``rtol`` of the body's ``m r²`` (module docstring)."""
    if not mass >= 0:
        raise error(f"{where} has negative mass {mass:.6g}: no physical body has one")
    Icn, J, scale, e = _scaled(mass, com, inertia_com)
    if np.abs(Icn - Icn.T).max(initial=0.0) > rtol * max(scale, np.abs(Icn).max(initial=0.0)):
        raise error(f"{where}: rotational inertia is not symmetric")
    worst = max(0.0, -float((J.sum() / 2 - J).min()))
    violation = 0.0 if worst == 0.0 else (worst / scale if scale > 0 else float("inf"))
    # subnormal moments (below 2.2e-308) carry fewer digits than rtol asks for: a violation within
    # a few of their steps (2**-1074) is rounding, e.g. of the nearest physical inertia stored
    resolution = 8 * float(np.ldexp(1.0, -1074 - e)) / scale if scale > 0 else 0.0
    if violation > max(rtol, resolution) and scale <= 0:  # no size to judge the moments by: their sum is negative
        raise error(f"{where}: rotational inertia is not positive semidefinite: principal moments "
                    f"{', '.join(_value(x, e) for x in J)} sum to {_value(float(J.sum()), e)} < 0")
    if violation > max(rtol, resolution):
        what = "is not positive semidefinite" if J.min() < -rtol * scale else "is not physical"
        raise error(f"{where}: rotational inertia {what}: principal moments {', '.join(_value(x, e) for x in J)} "
                    f"break the triangle inequality J_i ≤ J_j + J_k by {violation:.3g} of the body's m r² = "
                    f"{_value(scale, e)} (load with inertia='repair' to use the nearest physical inertia)")


def repair_description(what: str, before, after) -> str:
    """``"<what> changed by <‖after − before‖> (<relative> relative)"`` (Frobenius norms), for
    :class:`InertiaRepairWarning`: computed at unit scale, so a repair of moments of 1e-300 or
    1e308 reports its true size, not 0 or ``inf``."""
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    e = _exponent(before, after)
    change = float(np.linalg.norm(np.ldexp(after, -e) - np.ldexp(before, -e)))
    size = float(np.linalg.norm(np.ldexp(before, -e)))
    relative = change / size if size > 0 else float("inf") if change > 0 else 0.0
    return f"{what} changed by {_value(change, e, 3)} ({relative:.3g} relative)"


def nearest_physical_inertia(inertia_com) -> np.ndarray:
    """The physically consistent rotational inertia nearest to ``inertia_com`` (Frobenius norm):
    same principal axes, principal moments ``A L`` with ``L ≥ 0`` from non-negative least squares.

    >>> (3 * nearest_physical_inertia(np.diag([1.0, 1.0, 3.0]))).round(12)
    array([[4., 0., 0.],
           [0., 4., 0.],
           [0., 0., 8.]])
    """
    from scipy.optimize import nnls  # a quarter of a second to import: only when repairing

    Ic = np.asarray(inertia_com, dtype=float)
    if not np.isfinite(Ic).all():
        raise NotPositiveDefiniteError("a rotational inertia with NaN or infinite entries has no nearest physical one")
    # the problem is homogeneous: solve it at unit scale (an exact power of 2), where the solver
    # converges for moments of any size, subnormal ones included, and (Ic + Icᵀ)/2 cannot overflow
    e = _exponent(Ic)
    Icn = np.ldexp(Ic, -e)
    J, V = np.linalg.eigh((Icn + Icn.T) / 2)
    if np.abs(J).max() == 0:
        return np.zeros((3, 3))
    L, _ = nnls(_A, J)
    with np.errstate(over="ignore"):
        out = np.ldexp((V * (_A @ L)) @ V.T, e)
    if not np.isfinite(out).all():
        raise NotPositiveDefiniteError("the nearest physical rotational inertia exceeds the floating-point range")
    return out


def check_spatial_inertia(I6: np.ndarray, where: str, error: type[Exception] = NotPositiveDefiniteError,
                          rtol: float = RTOL) -> None:
    """Raise ``error`` unless the 6 × 6 ``I6`` is the spatial inertia of a physical rigid body
    (possibly massless or a point mass): symmetric, ``I6 = spatial_inertia(m, c, I_c)`` with
    ``m ≥ 0`` and ``I_c`` consistent (:func:`check_physical_inertia`). A massless ``I6`` must be
    zero apart from a positive semidefinite rotational block. Symbolic entries are checked for
    symmetry only."""
    if not is_numeric(I6):
        asym = [(i, j) for i in range(6) for j in range(i) if (I6[i, j] - I6[j, i]) != 0]
        if asym:
            raise error(f"{where}: spatial inertia is not symmetric (entries {asym[:3]})")
        return
    R = _numeric(I6)
    if not np.isfinite(R).all():
        raise error(f"{where}: spatial inertia has NaN or infinite entries")
    scale = max(np.abs(R).max(initial=0.0), np.finfo(float).tiny)
    if scale > _HUGE:  # every check is homogeneous in I6: scale down (exactly, by a power of 2) so m²c² cannot overflow
        R = np.ldexp(R, -int(np.frexp(scale)[1]))
        scale = np.abs(R).max()
    if np.abs(R - R.T).max() > 1e-9 * scale:
        raise error(f"{where}: spatial inertia is not symmetric")
    m = R[5, 5]
    lower = R[3:, 3:] - m * np.eye(3)
    if m > 0:
        C = R[:3, 3:] / m
        c = np.array([C[2, 1], C[0, 2], C[1, 0]])
        mC = m * _skew(c)
        if max(np.abs(lower).max(), np.abs(R[:3, 3:] - mC).max()) > 1e-9 * scale:
            raise error(f"{where}: not the spatial inertia of a rigid body (its lower-right block must be m·1 and "
                        "its off-diagonal blocks m c×, m c×ᵀ)")
        check_physical_inertia(m, c, R[:3, :3] - mC @ mC.T / m, where, error, rtol)
        return
    if m < 0:
        raise error(f"{where} has negative mass {m:.6g}: no physical body has one")
    if max(np.abs(lower).max(), np.abs(R[:3, 3:]).max()) > 1e-12 * scale:
        raise error(f"{where}: a massless body's spatial inertia can only have a rotational block")
    J = np.linalg.eigvalsh((R[:3, :3] + R[:3, :3].T) / 2)
    if J.min(initial=0.0) < -rtol * max(J.max(initial=0.0), 0.0):
        raise error(f"{where}: rotational inertia of a massless body is not positive semidefinite "
                    f"(smallest eigenvalue {J.min():.3g})")


def _skew(c) -> np.ndarray:
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])
