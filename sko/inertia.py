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


def inertia_scale(mass: float, com, inertia_com) -> float:
    """``m r² = tr(I_c)/2 + m ‖c‖²``: the body's own inertia scale about its frame origin."""
    com = np.asarray(com, dtype=float)
    return float(np.trace(inertia_com)) / 2 + float(mass) * float(com @ com)


def inertia_violation(mass: float, com, inertia_com) -> float:
    """How far ``I_c`` is from physical: ``max(0, −min L) / (m r²)`` (0 when consistent; ``inf``
    for a nonzero violation of a body of zero scale)."""
    Ic = np.asarray(inertia_com, dtype=float)
    J = np.linalg.eigvalsh((Ic + Ic.T) / 2)
    worst = max(0.0, -float((J.sum() / 2 - J).min()))
    if worst == 0.0:
        return 0.0
    scale = inertia_scale(mass, com, Ic)
    return worst / scale if scale > 0 else float("inf")


def check_physical_inertia(mass: float, com, inertia_com, where: str, error: type[Exception] = NotPositiveDefiniteError,
                           rtol: float = RTOL) -> None:
    """Raise ``error`` naming ``where`` (e.g. ``"link 'head'"``) unless ``mass ≥ 0``, ``I_c`` is
    symmetric (to ``rtol`` of the body's scale) and its principal moments satisfy the triangle
    inequalities to ``rtol`` of the body's ``m r²`` (module docstring)."""
    Ic = np.asarray(inertia_com, dtype=float)
    if not mass >= 0:
        raise error(f"{where} has negative mass {mass:.6g}: no physical body has one")
    scale = inertia_scale(mass, com, Ic)
    if np.abs(Ic - Ic.T).max(initial=0.0) > rtol * max(scale, np.abs(Ic).max(initial=0.0)):
        raise error(f"{where}: rotational inertia is not symmetric")
    violation = inertia_violation(mass, com, Ic)
    if violation > rtol:
        J = np.linalg.eigvalsh((Ic + Ic.T) / 2)
        what = "is not positive semidefinite" if J.min() < -rtol * scale else "is not physical"
        raise error(f"{where}: rotational inertia {what}: principal moments {', '.join(f'{x:.4g}' for x in J)} "
                    f"break the triangle inequality J_i ≤ J_j + J_k by {violation:.3g} of the body's m r² = {scale:.4g} "
                    "(load with inertia='repair' to use the nearest physical inertia)")


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
    J, V = np.linalg.eigh((Ic + Ic.T) / 2)
    scale = np.abs(J).max()
    if scale == 0:
        return np.zeros((3, 3))
    # the problem is homogeneous: solve it at unit scale (an exact power of 2), where the solver
    # converges for moments of any size, subnormal ones included
    e = int(np.frexp(scale)[1])
    L, _ = nnls(_A, np.ldexp(J, -e))
    return (V * np.ldexp(_A @ L, e)) @ V.T


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
