"""Programmatic construction of rigid systems.

A :class:`SystemBuilder` collects links and joints one at a time, merges links attached by
fixed joints into their parent (their inertia is added, their frame is kept as a named frame
fixed on the parent), checks every moving body's inertia, and hands an immutable
:class:`~sko.systems.rigid.RigidSystem` to :meth:`SystemBuilder.build`.

Examples
--------
>>> import numpy as np
>>> from sko.systems import SystemBuilder
>>> from sko.bodies import Revolute
>>> from sko.spatial import pose_transform
>>> b = SystemBuilder()
>>> b.add_body("upper", None, Revolute([0, 1, 0]), mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
'upper'
>>> b.add_body("lower", "upper", Revolute([0, 1, 0]), placement=pose_transform([0, 0, -1.0]),
...            mass=1.0, com=[0, 0, -0.5], inertia_com=0.01 * np.eye(3))
'lower'
>>> b.add_frame("tip", "lower", pose_transform([0, 0, -1.0]))
'tip'
>>> system = b.build()
>>> system.bodies, system.nq, system.nv
(('upper', 'lower'), 2, 2)
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from sko.arrays import check_psd, checked_scalar, is_numeric, numeric_array
from sko.spatial import checked_transform, spatial_inertia

from sko.errors import RigidSystemError
from sko.bodies.joints import Fixed, Joint

__all__ = ["SystemBuilder", "DEFAULT_GRAVITY", "link_inertia"]

#: ``a_g`` of RIGID.md: ``[0, 0, 0, 0, 0, −9.81]`` in world coordinates.
DEFAULT_GRAVITY = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -9.81])


class SystemBuilder:
    """Collects bodies, joints and frames of a rigid system.

    Parameters
    ----------
    gravity : 3- or 6-vector, optional
        Gravitational acceleration in world coordinates (a 3-vector is the linear part);
        default ``[0, 0, −9.81]``.
    """

    def __init__(self, gravity=None):
        self.gravity = _gravity(gravity)
        self._bodies: dict = {}  # name -> [parent, joint, placement, inertia]
        self._frames: dict = {}  # name -> (body or None, ᶠX_body)

    def add_body(self, name: Hashable, parent: Hashable | None, joint: Joint, placement=None, inertia=None, *,
                 mass=None, com=None, inertia_com=None) -> Hashable:
        """Attach a link ``name`` to ``parent`` (``None``: the inertial root) through ``joint``.

        Parameters
        ----------
        name : hashable
            A new, unique name (it also names the link's frame).
        parent : hashable or None
            A body or frame added before (a link merged by a fixed joint counts), or ``None``.
        joint : Joint
            A :class:`~sko.bodies.joints.Fixed` joint merges the link into its parent.
        placement : (6, 6) array, optional
            ``X_T``: Plücker transform from the parent frame to the joint's predecessor frame
            (identity by default; see :func:`sko.spatial.pose_transform`).
        inertia : (6, 6) array, optional
            Spatial inertia about the link frame origin; or give ``mass``, ``com`` and
            ``inertia_com`` (rotational inertia about the centre of mass). Default: massless.

        Returns
        -------
        The name, for chaining.

        Raises
        ------
        RigidSystemError
            Duplicate name, unknown parent, a joint that is not a :class:`Joint`, a negative mass,
            a rotational inertia that is not symmetric positive semi-definite, a bad shape.
        """
        self._check_new(name)
        if parent is not None and parent not in self._frames:
            raise RigidSystemError(f"body {name!r}: parent {parent!r} has not been added")
        if not isinstance(joint, Joint):
            raise RigidSystemError(f"body {name!r}: joint must be a sko.bodies Joint, got {type(joint).__name__}")
        X_T = np.eye(6) if placement is None else np.array(checked_transform(placement, f"placement of body {name!r}",
                                                                            error=RigidSystemError), dtype=float)
        I6 = link_inertia(name, inertia, mass, com, inertia_com)
        parent_body, X_frame = self._frames[parent] if parent is not None else (None, np.eye(6))
        X_T = X_T @ X_frame  # from the parent *body* frame
        if isinstance(joint, Fixed):
            self._frames[name] = (parent_body, X_T)
            if parent_body is not None:
                self._bodies[parent_body][3] = self._bodies[parent_body][3] + _to_parent(X_T, I6)
            return name
        self._bodies[name] = [parent_body, joint, X_T, I6]
        self._frames[name] = (name, np.eye(6))
        return name

    def add_frame(self, name: Hashable, parent: Hashable | None, placement=None) -> Hashable:
        """A named frame fixed on ``parent`` (a body or frame; ``None``: the world) at
        ``placement`` (Plücker transform from the parent frame to the new frame)."""
        return self.add_body(name, parent, Fixed(name=str(name)), placement)

    def build(self):
        """The immutable :class:`~sko.systems.rigid.RigidSystem`.

        Raises
        ------
        RigidSystemError
            No moving body, or a moving body whose inertia (after merging) is not positive
            definite, so that it cannot be an SKO node.
        """
        from sko.systems.rigid import BodySpec, RigidSystem

        if not self._bodies:
            raise RigidSystemError("the system has no moving body")
        specs = []
        for name, (parent, joint, X_T, I6) in self._bodies.items():
            I6 = (I6 + I6.T) / 2
            eig = np.linalg.eigvalsh(I6).min()
            if eig <= 1e-12 * max(1.0, np.abs(I6).max()):
                raise RigidSystemError(
                    f"body {name!r} (moved by joint {joint!r}) has a singular spatial inertia (smallest eigenvalue "
                    f"{eig:.3g}, mass {I6[5, 5]:.3g}); an SKO node needs M(k) positive definite: give it a mass "
                    "and a positive definite rotational inertia, or attach it with a fixed joint")
            specs.append(BodySpec(name, parent, joint, X_T, I6))
        return RigidSystem(specs, dict(self._frames), self.gravity)

    def _check_new(self, name):
        try:
            hash(name)
        except TypeError:
            raise RigidSystemError(f"body name {name!r} is not hashable") from None
        if name is None or name in self._frames:
            raise RigidSystemError(f"body or frame name {name!r} is None or already used")


def _to_parent(X_T, I6):
    """An inertia given in a frame F, ᶠX_b = X_T, expressed in the body frame b: ``X_Tᵀ I X_T``."""
    return X_T.T @ I6 @ X_T


def _gravity(gravity) -> np.ndarray:
    if gravity is None:
        return DEFAULT_GRAVITY.copy()
    try:
        g = np.array(numeric_array(gravity, "gravity"), dtype=float)
    except (TypeError, ValueError) as exc:
        raise RigidSystemError(f"gravity must be a finite 3- or 6-vector of numbers, got {gravity!r}: {exc}") from None
    if g.shape == (3,):
        g = np.concatenate([np.zeros(3), g])
    if g.shape != (6,) or not np.isfinite(g).all():
        raise RigidSystemError(f"gravity must be a finite 3- or 6-vector, got shape {g.shape}")
    return g


def _matrix(A, shape, what, default) -> np.ndarray:
    if A is None:
        return default.copy()
    try:
        A = numeric_array(A, what)
        if A.dtype.kind == "c" or A.dtype == object and not is_numeric(A):
            raise RigidSystemError(f"{what} must be real, got {A.tolist()}")
        A = np.array(A, dtype=float)
    except (TypeError, ValueError) as exc:
        raise RigidSystemError(f"{what} is not a numeric array: {exc}") from None
    if A.shape != shape:
        raise RigidSystemError(f"{what} must be an array of shape {shape}, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise RigidSystemError(f"{what} must be finite, got {A.tolist()}")
    return A


def link_inertia(name, inertia=None, mass=None, com=None, inertia_com=None) -> np.ndarray:
    """A link's checked 6 × 6 spatial inertia from ``inertia`` or ``mass, com, inertia_com``
    (zero for a massless link); ``name`` labels the error messages."""
    if inertia is not None:
        if mass is not None or com is not None or inertia_com is not None:
            raise RigidSystemError(f"body {name!r}: give either inertia or mass/com/inertia_com, not both")
        I6 = _matrix(inertia, (6, 6), f"spatial inertia of body {name!r}", None)
        check_psd(I6, f"spatial inertia of body {name!r}", 1e-12, RigidSystemError, symmetry_rtol=1e-9)
        return I6
    if mass is None:
        if com is not None or inertia_com is not None:
            raise RigidSystemError(f"body {name!r}: com/inertia_com given without a mass")
        return np.zeros((6, 6))
    m = checked_scalar(mass, f"body {name!r}: mass", nonnegative=True, error=RigidSystemError)
    c = _matrix(com, (3,), f"centre of mass of body {name!r}", np.zeros(3))
    Ic = _matrix(inertia_com, (3, 3), f"rotational inertia of body {name!r}", np.zeros((3, 3)))
    check_psd(Ic, f"rotational inertia of body {name!r}", 1e-12, RigidSystemError, symmetry_rtol=1e-9)
    return spatial_inertia(m, c, Ic)
