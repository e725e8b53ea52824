"""The ten inertial parameters of a rigid body and its regressors (IDENTIFICATION.md, *Parameters of a body*).

``π = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``, Pinocchio's order
(``Inertia.toDynamicParameters``), with ``I`` the rotational inertia about the body frame's
origin. The spatial inertia (RIGID.md, *Spatial algebra*; motion ``[ω; v]``) is linear in them,

    I(π) = [[Ī, (m c)×], [(m c)×ᵀ, m 1]] = Σ_c π_c B_c,

so the node force ``f = I α + v ×* I v`` of a body at velocity ``v`` and acceleration ``α`` is
``F(v, α) π`` with column ``c`` equal to ``B_c α + v ×* B_c v`` (Atkeson et al. 1986), its kinetic
energy ``½ vᵀ I v = y_T · π`` with ``y_T[c] = ½ vᵀ B_c v``, and its potential energy
``−m g·(p + R c) = −(g·p) m − (Rᵀ g)·(m c)``.
"""

from __future__ import annotations

import numpy as np

from sko.spatial import crf

__all__ = ["RIGID_PARAMETER_NAMES", "rigid_parameters", "rigid_inertia", "rigid_force_regressor",
           "rigid_energy_regressors"]

#: Names of the ten parameters, in order.
RIGID_PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")

#: ``(row, column)`` of the rotational block's entries ``I_xx, I_xy, I_yy, I_xz, I_yz, I_zz``.
_ROTATIONAL = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


def _basis() -> np.ndarray:
    """``B`` (10, 6, 6): ``I(π) = Σ_c π_c B_c``."""
    B = np.zeros((10, 6, 6))
    B[0, 3:, 3:] = np.eye(3)
    for i in range(3):  # (m c)× in the upper-right block, its transpose in the lower-left one
        e = np.zeros(3)
        e[i] = 1.0
        X = np.array([[0.0, -e[2], e[1]], [e[2], 0.0, -e[0]], [-e[1], e[0], 0.0]])
        B[1 + i, :3, 3:], B[1 + i, 3:, :3] = X, X.T
    for c, (i, j) in enumerate(_ROTATIONAL):
        B[4 + c, i, j] = B[4 + c, j, i] = 1.0
    B.setflags(write=False)
    return B


_B = _basis()


def rigid_parameters(I6) -> np.ndarray:
    """The ten parameters of the spatial inertia ``I6`` (about the body frame).

    >>> from sko.spatial import spatial_inertia
    >>> rigid_parameters(spatial_inertia(2.0, [0, 0, 1], np.eye(3))).tolist()
    [2.0, 0.0, 0.0, 2.0, 3.0, 0.0, 3.0, 0.0, 0.0, 1.0]
    """
    I6 = np.asarray(I6)
    mc = np.array([I6[2, 4], I6[0, 5], I6[1, 3]])  # (m c)× = [[0, −z, y], [z, 0, −x], [−y, x, 0]]
    return np.concatenate([[I6[5, 5]], mc, [I6[i, j] for i, j in _ROTATIONAL]])


def rigid_inertia(parameters) -> np.ndarray:
    """The spatial inertia ``Σ_c π_c B_c`` of ten parameters (real or complex)."""
    p = np.asarray(parameters)
    return np.tensordot(p, _B, axes=1)


def rigid_force_regressor(v, alpha) -> np.ndarray:
    """``F`` (6 × 10) with ``I α + v ×* I v = F π`` (module docstring)."""
    Ba, Bv = _B @ alpha, _B @ v  # (10, 6) each
    return Ba.T + crf(v) @ Bv.T


def rigid_energy_regressors(v, rotation, position, gravity) -> tuple[np.ndarray, np.ndarray]:
    """``(y_T, y_V)``: the kinetic energy ``½ vᵀ I v`` and potential energy ``−m g·(p + R c)``
    of a body at body velocity ``v`` and world pose ``(R, p)`` are ``y · π``."""
    yT = 0.5 * (_B @ v) @ v
    g = np.asarray(gravity)
    yV = np.concatenate([[-(g @ position)], -(g @ rotation), np.zeros(6, dtype=np.result_type(g, rotation))])
    return yT, yV
