"""Constraints at frames as values (CONSTRAINTS.md §1).

A :class:`FrameConstraint` holds a frame of a system (a body, a named frame of a rigid system or a
pair ``(body, attachment)``), the constraint frame's placement in it, the other side (another
frame, or the world) with its placement, the selected relative-motion directions and the
reference frame they are expressed in, and Baumgarte gains. It holds no system: every check that
needs one (the frames exist, they are not on the same rigid body) is made when the constraint is
used with a system (:func:`sko.constraints.kinematics.resolved`).

Directions follow Pinocchio's spatial order ``[v; ω]``: ``0, 1, 2`` translate along the reference
axes ``x, y, z``, ``3, 4, 5`` rotate about them. A point contact is ``(0, 1, 2)``, a weld all six, a
revolute loop about ``z`` ``(0, 1, 2, 3, 4)``. ``reference`` takes Pinocchio's names: ``"local"``
(the constraint frame's axes at its origin), ``"world"`` (world axes at the world origin) and
``"local_world_aligned"`` (world axes at the constraint frame's origin).
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from sko.graphs.errors import SKOError

__all__ = ["ConstraintError", "InconsistentConstraintsError", "FrameConstraint", "PointContact", "FrameContact",
           "REFERENCES"]

#: Pinocchio's names of the reference frames a constraint's rows are expressed in.
REFERENCES = ("local", "world", "local_world_aligned")


class ConstraintError(SKOError, ValueError):
    """A constraint that cannot be posed: an empty or bad direction selection, an unknown reference
    frame, bad Baumgarte gains or placement, both sides on one rigid body. The message names it."""


class InconsistentConstraintsError(ConstraintError):
    """Constraints that cannot all hold at once (e.g. two frames of one chain welded to different
    world poses): the least-squares answer leaves a residual, reported in the message and in
    :attr:`residual` (the norm of ``J v̇ + γ − a_ref``)."""

    def __init__(self, message: str, residual: float):
        super().__init__(message)
        self.residual = residual


def _checked_pose(T, what: str) -> np.ndarray | None:
    """``None`` or a finite 4 × 4 rigid transform ``[[R, p], [0, 1]]`` (``R`` orthonormal, det 1)."""
    if T is None:
        return None
    try:
        T = np.array(T, dtype=float)
    except (TypeError, ValueError):
        raise ConstraintError(f"{what} must be a 4 × 4 homogeneous transform, got {T!r}") from None
    if T.shape != (4, 4):
        raise ConstraintError(f"{what} must be a 4 × 4 homogeneous transform [[R, p], [0, 1]], got shape {T.shape}")
    if not np.isfinite(T).all():
        raise ConstraintError(f"{what} has non-finite entries")
    R = T[:3, :3]
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0
            and np.allclose(T[3], [0.0, 0.0, 0.0, 1.0])):
        raise ConstraintError(f"{what} is not a rigid transform (R orthonormal with det 1, last row [0, 0, 0, 1])")
    T.flags.writeable = False
    return T


def _checked_gains(baumgarte) -> tuple[float, float]:
    try:
        kp, kd = baumgarte
    except (TypeError, ValueError):
        raise ConstraintError(f"baumgarte must be a pair (kp, kd), got {baumgarte!r}") from None
    for name, k in (("kp", kp), ("kd", kd)):
        if isinstance(k, bool) or not isinstance(k, Real) or not np.isfinite(k) or k < 0:
            raise ConstraintError(f"Baumgarte gain {name} must be a finite real number ≥ 0, got {k!r}")
    return float(kp), float(kd)


def _checked_directions(directions) -> tuple[int, ...]:
    try:
        directions = tuple(directions)
    except TypeError:
        raise ConstraintError(f"directions must be a sequence of indices in 0..5, got {directions!r}") from None
    if not directions:
        raise ConstraintError("directions is empty: a constraint must select at least one of the six relative motion "
                              "directions (0, 1, 2 translations, 3, 4, 5 rotations)")
    for d in directions:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 0 <= d <= 5:
            raise ConstraintError(f"direction {d!r} is not one of 0..5 (0, 1, 2 translations, 3, 4, 5 rotations)")
    if len(set(directions)) < len(directions):
        raise ConstraintError(f"directions {directions!r} repeat an index")
    return tuple(int(d) for d in directions)


class FrameConstraint:
    """Relative motion of two frames held to zero in the selected directions (module docstring).

    Parameters
    ----------
    frame
        The constrained frame: a body, a named frame of a rigid system, or ``(body, attachment)``.
    other
        The frame it is held to, or ``None``: the world.
    placement, other_placement : 4 × 4 arrays, optional
        The constraint frames ``c1``, ``c2`` in ``frame``'s and ``other``'s coordinates (identity
        when omitted); with ``other=None``, ``other_placement`` is ``c2``'s world pose, the target
        of the Baumgarte position term.
    directions : sequence of int
        The selected directions, in the order of the rows (``[v; ω]`` indices 0..5).
    reference : str
        ``"local"``, ``"world"`` or ``"local_world_aligned"``.
    baumgarte : (kp, kd)
        The constraint is ``J v̇ + γ = −kp e − kd J v`` (``e`` the position error in the reference
        frame); ``kp > 0`` needs a target: ``other`` or ``other_placement``.

    Raises
    ------
    ConstraintError
        Empty or bad directions, unknown reference, bad gains or placements; setting an
        attribute after construction (a constraint is a value: the compiled path keeps what it
        derived from one, :mod:`sko.constraints.compiled`).
    """

    def __init__(self, frame, other=None, placement=None, other_placement=None, directions=(0, 1, 2, 3, 4),
                 reference: str = "local", baumgarte=(0.0, 0.0)):
        if reference not in REFERENCES:
            raise ConstraintError(f"reference must be one of {REFERENCES}, got {reference!r}")
        self.frame, self.other, self.reference = frame, other, reference
        self.directions = _checked_directions(directions)
        self.placement = _checked_pose(placement, f"placement of the constraint at {frame!r}")
        self.other_placement = _checked_pose(other_placement, f"other_placement of the constraint at {frame!r}")
        self.baumgarte = _checked_gains(baumgarte)
        if self.baumgarte[0] > 0 and other is None and other_placement is None:
            raise ConstraintError(f"the constraint at {frame!r} has Baumgarte kp = {self.baumgarte[0]} but no target: "
                                  "give other_placement (the world pose to hold), or anchor it where it is with sko.constraints.anchored")
        self.__dict__["_frozen"] = True

    def __setstate__(self, state: dict):
        """A copy or an unpickled constraint is a value too: its placements read-only again."""
        self.__dict__.update(state)
        for name in ("placement", "other_placement"):
            if isinstance(state.get(name), np.ndarray):
                state[name].flags.writeable = False

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen"):
            raise ConstraintError(f"{self!r} is a value: its {name!r} cannot be changed; make a new constraint "
                                  "(with_target gives one held to another world pose)")
        super().__setattr__(name, value)

    @property
    def dimension(self) -> int:
        """The number of constraint rows."""
        return len(self.directions)

    @property
    def point(self) -> bool:
        """Whether the rows are translations of the constraint point only, expressed in local or
        local-world-aligned axes: then the drift is the point's classical acceleration."""
        return max(self.directions) < 3 and self.reference != "world"

    def with_target(self, target) -> "FrameConstraint":
        """A copy held to the world pose ``target`` (4 × 4) instead (``other`` must be None)."""
        if self.other is not None:
            raise ConstraintError(f"{self!r} is held to the frame {self.other!r}, not to a world target")
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.__dict__["other_placement"] = _checked_pose(target, f"target of the constraint at {self.frame!r}")
        return out

    def __repr__(self) -> str:
        other = "" if self.other is None else f", other={self.other!r}"
        return (f"{type(self).__name__}({self.frame!r}{other}, directions={self.directions}, "
                f"reference={self.reference!r}, baumgarte={self.baumgarte})")


class PointContact(FrameConstraint):
    """A 3-D point contact: the origin of ``frame`` (through ``placement``) held to the world point
    ``target`` (a 4 × 4 pose; only needed for a Baumgarte ``kp``)."""

    def __init__(self, frame, reference: str = "local_world_aligned", baumgarte=(0.0, 0.0), placement=None,
                 target=None):
        super().__init__(frame, None, placement, target, (0, 1, 2), reference, baumgarte)


class FrameContact(FrameConstraint):
    """A 6-D frame contact: ``frame`` (through ``placement``) welded to the world pose ``target``."""

    def __init__(self, frame, reference: str = "local", baumgarte=(0.0, 0.0), placement=None, target=None):
        super().__init__(frame, None, placement, target, (0, 1, 2, 3, 4, 5), reference, baumgarte)
