"""Serial robots from Denavit–Hartenberg parameters (Featherstone §4.3), standard and modified.

* Standard (Denavit–Hartenberg): ``ⁱ⁻¹T_i = R_z(θ_i) T_z(d_i) T_x(a_i) R_x(α_i)``; joint ``i``
  moves about / along ``z_{i−1}``.
* Modified (Craig): ``ⁱ⁻¹T_i = R_x(α_{i−1}) T_x(a_{i−1}) R_z(θ_i) T_z(d_i)``; joint ``i`` moves
  about / along ``z_i``. Each row holds ``(α_{i−1}, a_{i−1})`` of the previous link.

The joint variable adds to ``θ_i`` (revolute) or ``d_i`` (prismatic); the row's value is the
offset. Each body frame is a joint frame (z = joint axis, so every joint is a ``Revolute`` or
``Prismatic`` about z) and ``X_T`` collects the constant part. The DH frame ``i`` is kept as a
named frame ``"<name>_dh"``; link inertias are given in it. For the modified convention the
body frame *is* DH frame ``i``; for the standard one, DH frame ``i`` sits at
``T_x(a_i) R_x(α_i)`` on body ``i``.

Any parameter, mass, centre of mass or inertia may be a sympy expression: the system is then
symbolic (see :class:`~sko.systems.builder.SystemBuilder`).

Examples
--------
A planar two-link arm (standard DH, unit links, point-like unit masses at the link ends):

>>> import numpy as np
>>> from sko.io.dh import DHLink, dh_system
>>> link = dict(a=1.0, alpha=0.0, d=0.0, theta=0.0, mass=1.0, com=[0, 0, 0], inertia_com=1e-3 * np.eye(3))
>>> arm = dh_system([DHLink(**link), DHLink(**link)], gravity=[0, -9.81, 0])
>>> arm.nv, sorted(arm.frames)[:2]
(2, ['link1', 'link1_dh'])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sko.arrays import checked_scalar
from sko.spatial import checked_transform, plucker_from_pose, rotation_x, rotation_z

from sko.systems.builder import SystemBuilder, link_inertia
from sko.errors import RigidSystemError
from sko.bodies.joints import Prismatic, Revolute

__all__ = ["DHLink", "dh_system"]


@dataclass(frozen=True)
class DHLink:
    """One row of a DH table and the link's inertia (in its DH frame).

    ``alpha`` and ``a`` are ``α_i, a_i`` (standard) or ``α_{i−1}, a_{i−1}`` (modified).
    ``joint`` is ``"revolute"`` or ``"prismatic"``. Give ``inertia`` (6 × 6 about the DH frame
    origin) or ``mass``, ``com`` and ``inertia_com``.
    """

    a: float
    alpha: float
    d: float
    theta: float
    joint: str = "revolute"
    mass: float | None = None
    com: tuple | None = None
    inertia_com: np.ndarray | None = None
    inertia: np.ndarray | None = None
    name: str | None = None


def _homogeneous(R, p) -> np.ndarray:
    R, p = np.asarray(R), np.asarray(p)
    T = np.eye(4, dtype=object if object in (R.dtype, p.dtype) else float)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _rz(t):
    return _homogeneous(rotation_z(t), np.zeros(3))


def _rx(t):
    return _homogeneous(rotation_x(t), np.zeros(3))


def _tz(d):
    return _homogeneous(np.eye(3), np.array([0, 0, d], dtype=object if _symbolic(d) else float))


def _tx(a):
    return _homogeneous(np.eye(3), np.array([a, 0, 0], dtype=object if _symbolic(a) else float))


def _symbolic(x) -> bool:
    return bool(getattr(x, "free_symbols", None))


def _plucker(T) -> np.ndarray:
    """Plücker transform to the frame whose pose in the parent is the homogeneous ``T``."""
    return plucker_from_pose(T[:3, :3], T[:3, 3])


def dh_system(links, convention: str = "standard", base_placement=None, gravity=None):
    """A serial :class:`~sko.systems.rigid.RigidSystem` from DH rows.

    Parameters
    ----------
    links : sequence of DHLink
    convention : ``"standard"`` or ``"modified"``
    base_placement : (6, 6) array, optional
        Plücker transform from the world to DH frame 0.
    gravity : 3- or 6-vector, optional

    Raises
    ------
    RigidSystemError
        An unknown convention or joint type, non-finite parameters, bad inertia.
    """
    if convention not in ("standard", "modified"):
        raise RigidSystemError(f"DH convention must be 'standard' or 'modified', got {convention!r}")
    if isinstance(links, (str, bytes, DHLink)) or not isinstance(links, Iterable):
        raise RigidSystemError(f"DH links must be a sequence of DHLink, got {type(links).__name__}")
    links = list(links)
    if not links:
        raise RigidSystemError("a DH table needs at least one link")
    builder = SystemBuilder(gravity)
    parent = None
    previous_tail = np.eye(4)  # standard DH: T_x(a_{i−1}) R_x(α_{i−1}) of the previous row
    for i, row in enumerate(links, start=1):
        if not isinstance(row, DHLink):
            raise RigidSystemError(f"DH row {i} must be a DHLink, got {type(row).__name__}")
        name = row.name or f"link{i}"
        for key in ("a", "alpha", "d", "theta"):
            checked_scalar(getattr(row, key), f"DH row {i} ({name!r}): parameter {key}", symbolic=True,
                           error=RigidSystemError)
        if row.joint == "revolute":
            joint, offset = Revolute([0, 0, 1], name=f"joint{i}"), _tz(row.d) @ _rz(row.theta)
        elif row.joint == "prismatic":
            joint, offset = Prismatic([0, 0, 1], name=f"joint{i}"), _rz(row.theta) @ _tz(row.d)
        else:
            raise RigidSystemError(f"DH row {i} ({name!r}): joint must be 'revolute' or 'prismatic', got {row.joint!r}")
        if convention == "standard":
            fixed = previous_tail @ offset
            dh_on_body = _tx(row.a) @ _rx(row.alpha)
            previous_tail = dh_on_body
        else:
            fixed = _rx(row.alpha) @ _tx(row.a) @ offset
            dh_on_body = np.eye(4)
        placement = _plucker(fixed)
        if i == 1 and base_placement is not None:
            placement = placement @ checked_transform(base_placement, "DH base placement", error=RigidSystemError)
        X_dh = checked_transform(_plucker(dh_on_body), f"DH frame of row {i} ({name!r})", error=RigidSystemError)  # ᵈʰX_body
        inertia = _inertia_in_body(row, name, X_dh)
        builder.add_body(name, parent, joint, placement=placement, inertia=inertia)
        builder.add_frame(f"{name}_dh", name, X_dh)
        parent = name
    return builder.build()


def _inertia_in_body(row: DHLink, name: str, X_dh: np.ndarray) -> np.ndarray:
    """The link inertia, given in its DH frame, about the body frame origin."""
    I_dh = link_inertia(name, row.inertia, row.mass, row.com, row.inertia_com)
    return X_dh.T @ I_dh @ X_dh
