"""Spatial (6-D) vector algebra in Featherstone's conventions (RIGID.md, *Spatial algebra*).

Conventions, fixed once for the whole project:

* A spatial **motion** vector is ``[ω; v]`` (angular part first), a spatial **force** vector is
  ``[n; f]`` (moment first); both are expressed in the coordinates of a stated frame.
* A **Plücker transform** ``ᴮX_A = rot(E) xlt(r)`` maps motion vectors from A to B coordinates,
  where ``r`` is the position of B's origin relative to A's, in A coordinates, and ``E`` is the
  3 × 3 *coordinate transform* from A to B (``E = Rᵀ`` when ``R`` is the rotation whose columns
  are B's axes in A coordinates). Forces transform with ``ᴮX_A^* = (ᴮX_A)^{-ᵀ}``.
* ``rx, ry, rz`` are Featherstone's coordinate transforms (``rz(θ) = R_z(θ)ᵀ``), while
  :func:`rotation_x`, :func:`rotation_y`, :func:`rotation_z`, :func:`rpy_matrix` and
  :func:`quaternion_matrix` return active rotation matrices ``R``.
* Quaternions are ``(w, x, y, z)``, scalar first, and represent the active rotation ``R``.

Every function keeps the scalar type of its inputs (float, complex for complex-step
differentiation, ``object`` arrays of sympy expressions).
"""

from __future__ import annotations

import numpy as np

from sko.arrays import checked_array, is_numeric, result_dtype
from sko.graphs.errors import DimensionError
from sko.optional import require

__all__ = [
    "cos_sin",
    "skew",
    "rotation_x",
    "rotation_y",
    "rotation_z",
    "rx",
    "ry",
    "rz",
    "axis_angle_matrix",
    "rpy_matrix",
    "matrix_rpy",
    "rot",
    "xlt",
    "plucker",
    "plucker_from_pose",
    "pose_transform",
    "plucker_rotation",
    "plucker_translation",
    "plucker_inverse",
    "force_transform",
    "crm",
    "crf",
    "motion_cross",
    "force_cross",
    "cross",
    "spatial_inertia",
    "inertia_parameters",
    "transform_inertia",
    "quaternion_matrix",
    "matrix_quaternion",
    "quaternion_multiply",
    "quaternion_rate",
    "quaternion_rate_matrix",
    "quaternion_exp",
    "quaternion_normalize",
    "checked_transform",
    "check_inertia_size",
]


def cos_sin(angle):
    """``cos``, ``sin`` of a number or of a sympy expression."""
    if hasattr(angle, "free_symbols"):
        import sympy

        return sympy.cos(angle), sympy.sin(angle)
    return np.cos(angle), np.sin(angle)


def _zeros(shape, *like):
    return np.zeros(shape, dtype=result_dtype(*like))


# ---------------------------------------------------------------------------- 3-D rotations
def skew(p) -> np.ndarray:
    """The cross-product matrix ``p×`` (so ``skew(p) @ u == cross(p, u)``)."""
    x, y, z = p
    zero = 0 * x
    return np.array([[zero, -z, y], [z, zero, -x], [-y, x, zero]])


def cross(a, b) -> np.ndarray:
    """``a × b`` of two 3-vectors, for any scalar type."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _elementary(angle, i: int, j: int) -> np.ndarray:
    c, s = cos_sin(angle)
    k = 3 - i - j
    R = _zeros((3, 3), np.asarray(angle))
    R[k, k] = 1
    R[i, i], R[j, j], R[i, j], R[j, i] = c, c, -s, s
    return R


def rotation_x(angle) -> np.ndarray:
    """Active rotation ``R_x(angle)`` about the x axis."""
    return _elementary(angle, 1, 2)


def rotation_y(angle) -> np.ndarray:
    """Active rotation ``R_y(angle)`` about the y axis."""
    return _elementary(angle, 2, 0)


def rotation_z(angle) -> np.ndarray:
    """Active rotation ``R_z(angle)`` about the z axis."""
    return _elementary(angle, 0, 1)


def rx(angle) -> np.ndarray:
    """Featherstone's coordinate transform ``rx(θ) = R_x(θ)ᵀ``."""
    return rotation_x(angle).T


def ry(angle) -> np.ndarray:
    """Featherstone's coordinate transform ``ry(θ) = R_y(θ)ᵀ``."""
    return rotation_y(angle).T


def rz(angle) -> np.ndarray:
    """Featherstone's coordinate transform ``rz(θ) = R_z(θ)ᵀ``.

    >>> rz(np.pi / 2).round(12) + 0.0
    array([[ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    return rotation_z(angle).T


def axis_angle_matrix(axis, angle) -> np.ndarray:
    """Active rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula)."""
    u = np.asarray(axis)
    c, s = cos_sin(angle)
    K = skew(u)
    return np.eye(3, dtype=result_dtype(u, np.asarray(angle))) + s * K + (1 - c) * (K @ K)


def rpy_matrix(roll, pitch, yaw) -> np.ndarray:
    """Fixed-axis roll-pitch-yaw (URDF ``rpy``): ``R = R_z(yaw) R_y(pitch) R_x(roll)``."""
    return rotation_z(yaw) @ rotation_y(pitch) @ rotation_x(roll)


def matrix_rpy(R) -> np.ndarray:
    """``(roll, pitch, yaw)`` with ``rpy_matrix(*matrix_rpy(R)) == R`` (numeric ``R``)."""
    R = np.asarray(R, dtype=float)
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # gimbal lock: put the whole rotation in roll
        return np.array([np.arctan2(-R[1, 2], R[1, 1]), pitch, 0.0])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


# ---------------------------------------------------------------------------- Plücker transforms
def _lower_block(A, B=None) -> np.ndarray:
    """``[[A, 0], [B, A]]`` for 3 × 3 blocks (``B = 0`` if omitted), in their common scalar type."""
    X = np.zeros((6, 6), dtype=A.dtype if B is None else np.result_type(A.dtype, B.dtype))
    X[:3, :3] = A
    X[3:, 3:] = A
    if B is not None:
        X[3:, :3] = B
    return X


def rot(E) -> np.ndarray:
    """``rot(E) = [[E, 0], [0, E]]`` for a 3 × 3 coordinate transform ``E``."""
    return _lower_block(np.asarray(E))


def xlt(r) -> np.ndarray:
    """``xlt(r) = [[I, 0], [−r×, I]]``: a pure translation of the origin by ``r``."""
    r = np.asarray(r)
    X = np.eye(6, dtype=result_dtype(r))
    X[3:, :3] = -skew(r)
    return X


def plucker(E, r) -> np.ndarray:
    """``ᴮX_A = rot(E) xlt(r)`` = ``[[E, 0], [−E r×, E]]``."""
    E = np.asarray(E)
    return _lower_block(E, -E @ skew(r))


def plucker_from_pose(R, p) -> np.ndarray:
    """``ᴮX_A`` for a frame B whose axes are the columns of ``R`` and origin is ``p`` (both in A)."""
    return plucker(np.asarray(R).T, p)


def pose_transform(xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0)) -> np.ndarray:
    """``ᴮX_A`` for a frame B at ``xyz`` with URDF fixed-axis ``rpy`` orientation relative to A."""
    return plucker_from_pose(rpy_matrix(*rpy), xyz)


def plucker_rotation(X) -> np.ndarray:
    """The coordinate transform ``E`` of a Plücker transform ``X = rot(E) xlt(r)``."""
    return np.asarray(X)[:3, :3]


_VEE = [7, 2, 3]  #: flat indices of (2, 1), (0, 2), (1, 0) in a 3 × 3 matrix: r from r×


def plucker_translation(X) -> np.ndarray:
    """The translation ``r`` of a Plücker transform ``X = rot(E) xlt(r)``."""
    X = np.asarray(X)
    return -(X[:3, :3].T @ X[3:, :3]).ravel()[_VEE]  # (r×)[2, 1], (r×)[0, 2], (r×)[1, 0]


def plucker_inverse(X) -> np.ndarray:
    """``X^{-1} = [[Eᵀ, 0], [Bᵀ, Eᵀ]]`` for ``X = [[E, 0], [B, E]]`` (no matrix inversion)."""
    X = np.asarray(X)
    Y = np.zeros_like(X)
    Y[:3, :3] = X[:3, :3].T
    Y[3:, 3:] = X[:3, :3].T
    Y[3:, :3] = X[3:, :3].T
    return Y


def force_transform(X) -> np.ndarray:
    """``X^* = X^{-ᵀ} = [[E, B], [0, E]]``: the force transform matching motion transform ``X``."""
    return plucker_inverse(X).T


# ---------------------------------------------------------------------------- cross products
#: ``crm(v) = _CRM @ v``: the motion cross product as a constant integer 6 × 6 × 6 tensor, one
#: small contraction instead of assembling blocks (integers keep sympy entries exact).
_CRM = np.stack([_lower_block(skew(e[:3]), skew(e[3:])) for e in np.eye(6, dtype=int)], axis=-1)


def crm(v) -> np.ndarray:
    """Motion cross product ``v×`` = ``[[ω×, 0], [v×, ω×]]`` for ``v = [ω; v]``."""
    return _CRM @ np.asarray(v)


def crf(v) -> np.ndarray:
    """Force cross product ``v×* = −crm(v)ᵀ``."""
    return -crm(v).T


def motion_cross(v, m) -> np.ndarray:
    """``crm(v) m = [ω × m_ω; v × m_ω + ω × m_v]``."""
    return crm(v) @ m


def force_cross(v, f) -> np.ndarray:
    """``crf(v) f = [ω × n + v × f; ω × f]``."""
    return -(f @ crm(v))


# ---------------------------------------------------------------------------- inertia
def spatial_inertia(mass, com, inertia_com) -> np.ndarray:
    """``[[I_c + m c× c×ᵀ, m c×], [m c×ᵀ, m I]]`` about the frame origin (RIGID.md).

    ``com`` is the centre of mass and ``inertia_com`` the 3 × 3 rotational inertia about it,
    both in the body frame.

    >>> spatial_inertia(2.0, [0, 0, 1], np.eye(3)).diagonal()
    array([3., 3., 1., 2., 2., 2.])
    """
    c, Ic = np.asarray(com), np.asarray(inertia_com)
    C = skew(c)
    I6 = _zeros((6, 6), np.asarray(mass), c, Ic)
    I6[:3, :3] = Ic + mass * (C @ C.T)
    I6[:3, 3:] = mass * C
    I6[3:, :3] = mass * C.T
    I6[3:, 3:] = mass * np.eye(3)
    return I6


def inertia_parameters(I6) -> tuple:
    """``(mass, com, inertia_com)`` of a spatial inertia (inverse of :func:`spatial_inertia`).

    The mass must be nonzero (a numeric check is the caller's business)."""
    I6 = np.asarray(I6)
    m = I6[5, 5]
    C = I6[:3, 3:] / m
    c = np.array([C[2, 1], C[0, 2], C[1, 0]])
    return m, c, I6[:3, :3] - m * (C @ C.T)


def transform_inertia(X, I6) -> np.ndarray:
    """An inertia given in frame A re-expressed in frame B, ``ᴮX_A = X``: ``X^* I X^{-1}``."""
    Xi = plucker_inverse(X)
    return Xi.T @ np.asarray(I6) @ Xi


# ---------------------------------------------------------------------------- quaternions
def quaternion_matrix(q) -> np.ndarray:
    """Active rotation of the quaternion ``q = (w, x, y, z)``.

    The homogeneous form ``R = (…)/‖q‖²`` is used, so any nonzero ``q`` gives the exact
    rotation of ``q/‖q‖`` (Featherstone Eq. 4.12 is its transpose for unit ``q``); NaN where an
    entry of ``q`` is not finite (no rotation, and no warning: the callers' checks name ``q``).
    """
    q = np.asarray(q)
    if q.dtype.kind in "fc":  # R is homogeneous of degree 0 in q: scale first so no square overflows
        top = np.abs(q.real).max(initial=0.0)
        if not np.isfinite(top):
            return np.full((3, 3), np.nan, dtype=np.result_type(q, float))
        if top > 0:
            q = q / top
    w, x, y, z = q
    n2 = w * w + x * x + y * y + z * z
    R = np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )
    return R / n2


def matrix_quaternion(R) -> np.ndarray:
    """Unit quaternion ``(w, x, y, z)``, ``w ≥ 0``, of a numeric rotation matrix (Shepperd)."""
    R = np.asarray(R, dtype=float)
    t = np.trace(R)
    cands = [1 + t, 1 + 2 * R[0, 0] - t, 1 + 2 * R[1, 1] - t, 1 + 2 * R[2, 2] - t]
    i = int(np.argmax(cands))
    s = np.sqrt(cands[i]) * 2
    if i == 0:
        q = [s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif i == 1:
        q = [(R[2, 1] - R[1, 2]) / s, s / 4, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif i == 2:
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, s / 4, (R[1, 2] + R[2, 1]) / s]
    else:
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, s / 4]
    q = np.array(q)
    return -q if q[0] < 0 else q


def quaternion_multiply(p, q) -> np.ndarray:
    """Hamilton product ``p ⊗ q`` (rotation ``R(p) R(q)``)."""
    p0, pv = p[0], np.asarray(p[1:])
    q0, qv = q[0], np.asarray(q[1:])
    out = _zeros(4, np.asarray(p), np.asarray(q))
    out[0] = p0 * q0 - pv @ qv
    # float64: the same products and differences as np.cross, without its general-axis machinery
    out[1:] = p0 * qv + q0 * pv + (cross(pv, qv) if pv.dtype == qv.dtype == np.float64 else np.cross(pv, qv))
    return out


def quaternion_rate(q, omega) -> np.ndarray:
    """``q̇ = ½ q ⊗ (0, ω)`` for ``ω`` in the rotated (successor) frame (Featherstone Eq. 4.13)."""
    omega = np.asarray(omega)
    return quaternion_multiply(q, np.concatenate([np.zeros(1, dtype=omega.dtype), omega])) / 2


def quaternion_rate_matrix(q) -> np.ndarray:
    """``G(q)`` (4 × 3) with ``½ q ⊗ (0, ω) = G(q) ω``: the matrix of :func:`quaternion_rate`."""
    w, x, y, z = q
    return np.array([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]]) / 2


def quaternion_exp(omega) -> np.ndarray:
    """Unit quaternion of the rotation vector ``omega`` (rotation by ``‖ω‖`` about ``ω/‖ω‖``).

    Analytic in a complex ``omega`` (complex step): ``‖ω‖ = √(ω·ω)`` and the branch on its
    real part; both ``cos(‖ω‖/2)`` and ``sin(‖ω‖/2)/‖ω‖`` are even in the square root."""
    omega = float_or_complex(omega)
    angle = analytic_norm(omega)
    half = angle / 2
    # sin(half)/angle, with its series near zero
    k = 0.5 - angle**2 / 48 if real_part(angle) < 1e-6 else np.sin(half) / angle
    return np.concatenate([[np.cos(half)], k * omega])


def quaternion_log(q) -> np.ndarray:
    """The rotation vector ``ω``, ``‖ω‖ ≤ π``, with ``quaternion_exp(ω)`` the rotation of the
    nonzero ``q`` (the inverse of :func:`quaternion_exp` up to the quaternion's sign).

    Analytic in a complex ``q`` (complex step): the sign and the branches are decided on the
    real parts, and ``arctan2`` is written with ``arctan`` of the ratio that stays bounded."""
    q = quaternion_normalize(q)
    if real_part(q[0]) < 0:
        q = -q
    s = analytic_norm(q[1:])
    if q.dtype.kind == "c":  # arctan2(s, w) for w ≥ 0 (real parts), without its real-only ufunc
        half = np.arctan(s / q[0]) if real_part(s) <= real_part(q[0]) else np.pi / 2 - np.arctan(q[0] / s)
        angle = 2 * half
    else:
        angle = 2 * np.arctan2(s, q[0])
    # angle / sin(angle / 2), with its series near zero
    k = 2 + s**2 / 3 if real_part(s) < 1e-6 else angle / s
    return k * q[1:]


def quaternion_conjugate(q) -> np.ndarray:
    """``(w, −x, −y, −z)``: the inverse rotation of a unit quaternion."""
    q = np.asarray(q)
    return np.concatenate([q[:1], -q[1:]])


def quaternion_normalize(q) -> np.ndarray:
    """``q / ‖q‖`` (computed on ``q / max|q|``, so any finite nonzero ``q`` works); the sign is kept.

    A complex ``q`` (complex step) stays complex: it is scaled by the largest real part and
    divided by the analytic ``√(q·q)``."""
    q = float_or_complex(q)
    if q.dtype == object:  # expressions: divided by their norm as they are
        return q / analytic_norm(q)
    top = np.abs(real_part(q)).max(initial=0.0)
    q = q / top if np.isfinite(top) and top > 0 else q
    return q / analytic_norm(q)


# ---------------------------------------------------------------------------- complex steps
def float_or_complex(x) -> np.ndarray:
    """``x`` as float64, or as complex128 if it is complex (the scalar of a complex step, which
    a cast to float would drop); object arrays of numbers are converted to float as any other,
    and of expressions (sympy) kept as they are."""
    x = np.asarray(x)
    if x.dtype == object and not is_numeric(x):
        return x
    return x.astype(np.complex128, copy=False) if x.dtype.kind == "c" else np.asarray(x, dtype=float)


def real_part(x):
    """The real part of a complex number or array (where a branch or a check of a complex step
    is decided), anything else as it is."""
    return np.real(x) if np.iscomplexobj(x) else x


def analytic_norm(x):
    """``‖x‖`` of a real array, ``√(Σ xᵢ²)`` of a complex one: analytic in ``x`` (a complex
    step), unlike ``np.linalg.norm``, which takes ``|xᵢ|``; ``sympy.sqrt(Σ xᵢ²)`` of expressions."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return np.sqrt(np.sum(x * x))
    if x.dtype == object and not is_numeric(x):
        return require("sympy", "symbolic norms").sqrt(np.sum(x * x))
    return np.linalg.norm(x)


# ---------------------------------------------------------------------------- checks
#: Largest translation a checked transform may carry: inertias transform with ``r²`` terms, and
#: squares of larger numbers leave the floating-point range (a limit of the arithmetic, not physics).
_LARGEST_OFFSET = 1e150
#: Largest entry a checked spatial inertia may have: every state multiplies it by accelerations
#: (gravity), squared velocities and offsets, and sums it over a subtree; this leaves 1e4 of room
#: before those products leave the floating-point range (a limit of the arithmetic, not physics).
_LARGEST_INERTIA = 1e304
_I3 = np.eye(3)


def _within_range(size: float, limit: float, what: str, products: str, error: type[Exception]) -> None:
    """``error`` saying that ``what`` of this ``size`` is too large for ``products`` when ``size``
    exceeds ``limit`` (or is not finite)."""
    if not size <= limit:
        raise error(f"{what} of size {size:.3g}: products with {products} would overflow the floating-point range")


def check_inertia_size(I6, what: str, error: type[Exception] = DimensionError) -> None:
    """``error`` naming ``what`` when a numeric spatial inertia has an entry beyond
    :data:`_LARGEST_INERTIA` (or one that is not finite: it overflowed where it was formed);
    symbolic entries are not judged."""
    I6 = np.asarray(I6)
    if I6.dtype == object and not is_numeric(I6):
        return
    R = I6 if I6.dtype.kind == "f" else np.array(I6, dtype=complex).real
    _within_range(float(np.abs(R).max(initial=0.0)), _LARGEST_INERTIA, f"{what} has an entry",
                  "a state's accelerations, squared velocities and offsets (m g, I ω²)", error)

def checked_transform(X, what: str, rtol: float = 1e-6, error: type[Exception] = DimensionError) -> np.ndarray:
    """``X`` as a checked read-only rigid Plücker transform ``rot(E) xlt(r)``.

    Numeric ``X`` must be a finite 6 × 6 array with ``E`` (upper-left block) a proper rotation,
    a zero upper-right block, ``E`` again lower-right, and a lower-left block ``−E r×`` (so
    ``Eᵀ`` times it is skew-symmetric), all to ``rtol`` relative to the block's size; symbolic
    entries are checked for shape only. ``what`` names it in the ``error`` messages.
    """
    X = checked_array(X, 2, what)
    if X.shape != (6, 6):
        raise error(f"{what} must be a finite 6 × 6 Plücker transform (shape (6, 6)), got shape {X.shape}")
    if X.dtype == object and not is_numeric(X):
        return X
    R = X if X.dtype.kind == "f" else np.array(X, dtype=complex).real
    E, B = R[:3, :3], R[3:, :3]
    offset = float(np.abs(B).max())
    _within_range(offset, _LARGEST_OFFSET, f"{what} has a translation", "inertias (∝ r²)", error)
    problems = []
    (a, b, c), (d, e, f), (g, h, i) = E.tolist()
    if np.abs(E @ E.T - _I3).max() > rtol or a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) <= 0:
        problems.append("its rotation block is not a proper rotation")
    if np.abs(R[:3, 3:]).max() > rtol or np.abs(R[3:, 3:] - E).max() > rtol:
        problems.append("its blocks are not [[E, 0], [−E r×, E]]")
    EB = E.T @ B
    if not np.abs(EB + EB.T).max() <= rtol * max(1.0, offset):
        problems.append("its lower-left block is not −E r×")
    if problems:
        raise error(f"{what} is not a rigid Plücker transform: {'; '.join(problems)}")
    return X
