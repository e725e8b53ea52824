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

from collections.abc import Hashable, Mapping

import numpy as np

from sko.arrays import checked_scalar, numeric_array
from sko.inertia import check_physical_inertia, check_spatial_inertia
from sko.spatial import checked_transform, spatial_inertia

from sko.errors import RigidSystemError
from sko.systems.multibody import fixed_tendon
from sko.systems.rigid import BodySpec, RigidSystem
from sko.optional import require
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

    Masses, centres of mass, inertias, placements and gravity may be sympy expressions: the
    system is then symbolic (exact sympy entries; floats given with them become rationals), and
    its mass matrix, bias forces and every recursion come out as expressions. Symbolic inertias
    are checked for symmetry only; their definiteness is the caller's assumption (declare the
    symbols ``positive=True``). See ``papers/symbolic_pendulum.py``.
    """

    def __init__(self, gravity=None):
        self.gravity = _gravity(gravity)
        self._bodies: dict = {}  # name -> [parent, joint, placement, inertia]
        self._frames: dict = {}  # name -> (body or None, ᶠX_body)
        self._couplings: list = []  # sko.bodies.cluster.Coupling between bodies
        self._loops: list = []  # sko.bodies.cluster.LoopConstraint between bodies (None: world)
        self._tendons: dict = {}  # name -> sko.systems.multibody.FixedTendon

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
        if parent is not None and not isinstance(parent, Hashable):
            raise RigidSystemError(f"body {name!r}: parent {parent!r} is not hashable, so it names no body or frame")
        if parent is not None and parent not in self._frames:
            raise RigidSystemError(f"body {name!r}: parent {parent!r} has not been added")
        if not isinstance(joint, Joint):
            raise RigidSystemError(f"body {name!r}: joint must be a sko.bodies Joint, got {type(joint).__name__}")
        X_T = np.eye(6) if placement is None else checked_transform(placement, f"placement of body {name!r}",
                                                                    error=RigidSystemError)
        I6 = link_inertia(name, inertia, mass, com, inertia_com)
        parent_body, X_frame = self._frames[parent] if parent is not None else (None, np.eye(6))
        X_T = _array(X_T @ X_frame, f"placement of body {name!r}")  # from the parent *body* frame
        if isinstance(joint, Fixed):
            self._frames[name] = (parent_body, X_T)
            if parent_body is not None:
                self._bodies[parent_body][3] = _array(self._bodies[parent_body][3] + _to_parent(X_T, I6),
                                                      f"spatial inertia of body {parent_body!r}")
            return name
        self._bodies[name] = [parent_body, joint, X_T, I6]
        self._frames[name] = (name, np.eye(6))
        return name

    def add_frame(self, name: Hashable, parent: Hashable | None, placement=None) -> Hashable:
        """A named frame fixed on ``parent`` (a body or frame; ``None``: the world) at
        ``placement`` (Plücker transform from the parent frame to the new frame)."""
        return self.add_body(name, parent, Fixed(name=str(name)), placement)

    def add_coupling(self, name: Hashable, primary: Hashable, dependent: Hashable, ratio=1.0, offset=0.0) -> Hashable:
        """Couple two joints: ``θ_dependent = ratio θ_primary + offset`` (a mimic joint; a gear
        pair with ``ratio = −N_a/N_b``; a belt). ``primary`` and ``dependent`` name moving bodies
        or their joints. Embedded as a cluster node by :meth:`build` (EMBEDDING.md).

        Raises
        ------
        RigidSystemError
            An unknown or fixed joint, a non-finite ratio or offset.
        """
        from sko.bodies.cluster import Coupling

        _check_hashable(name, "coupling")
        ends = [self._moving_body(x, f"coupling {name!r}") for x in (primary, dependent)]
        if ends[0] == ends[1]:
            raise RigidSystemError(f"coupling {name!r} couples the joint of body {ends[0]!r} to itself")
        ratio = checked_scalar(ratio, f"coupling {name!r}: ratio", error=RigidSystemError)
        offset = checked_scalar(offset, f"coupling {name!r}: offset", error=RigidSystemError)
        self._couplings.append(Coupling(name, ends[0], ends[1], ratio, offset))
        return name

    def add_loop_joint(self, name: Hashable, predecessor: Hashable | None, successor: Hashable | None, joint: Joint,
                       placement_predecessor=None, placement_successor=None) -> Hashable:
        """Close a loop: ``joint`` connects a frame fixed on ``predecessor`` to one fixed on
        ``successor`` (bodies or frames added before; ``None``: the world). Each placement is
        the Plücker transform from that body's frame to the joint's frame on it (identity by
        default), Featherstone's loop-joint convention. :meth:`build` embeds the loop as a
        cluster node (EMBEDDING.md §4).

        Raises
        ------
        RigidSystemError
            An unknown body, a joint that is not a :class:`Joint`, a bad placement.
        """
        from sko.bodies.cluster import LoopConstraint

        _check_hashable(name, "loop")
        if not isinstance(joint, Joint) or isinstance(joint, Fixed):
            raise RigidSystemError(f"loop {name!r}: joint must be a moving sko.bodies Joint, got {joint!r}")
        ends = []
        for role, end, X in (("predecessor", predecessor, placement_predecessor),
                             ("successor", successor, placement_successor)):
            if end is not None and (not isinstance(end, Hashable) or end not in self._frames):
                raise RigidSystemError(f"loop {name!r}: {role} {end!r} has not been added (a loop joins bodies added before)")
            X = np.eye(6) if X is None else checked_transform(X, f"{role} placement of loop {name!r}", error=RigidSystemError)
            body, X_frame = self._frames[end] if end is not None else (None, np.eye(6))
            ends.append((body, X @ X_frame))
        if ends[0][0] == ends[1][0]:
            raise RigidSystemError(f"loop {name!r} joins {predecessor!r} and {successor!r}, which move as one body")
        self._loops.append(LoopConstraint(name, ends[0][0], ends[1][0], joint, ends[0][1], ends[1][1]))
        return name

    def add_tendon(self, name: Hashable, coefficients: Mapping, stiffness=0.0, damping=0.0,
                   spring_length=0.0) -> Hashable:
        """A fixed tendon of length ``L = Σ_j c_j q_j`` (``coefficients`` ``{joint or body: c_j}``,
        hinge and slide joints) with a spring of ``stiffness`` ``k``, slack while ``L`` lies in
        ``spring_length`` (one length, or a deadband ``(lo, hi)``), and a damper ``damping`` on
        ``L̇``: its hinge forces ``c_j (k (L − clamp(L, lo, hi)) + b L̇)`` add to the bias forces
        (:class:`~sko.systems.multibody.FixedTendon`). With couplings or loops, its joints must be
        independent coordinates (:meth:`build` says which is not).

        Raises
        ------
        RigidSystemError
            A name already used by a tendon, an unknown or fixed joint, a joint without exactly one
            coordinate, a non-finite coefficient, a negative or non-finite stiffness or damping, a
            bad spring length.
        """
        tendon = fixed_tendon(name, coefficients, stiffness, damping, spring_length, error=RigidSystemError)
        if name in self._tendons:
            raise RigidSystemError(f"tendon name {name!r} is already used")
        for joint in tendon.coefficients:
            body = self._moving_body(joint, f"tendon {name!r}")
            j = self._bodies[body][1]
            if (j.nq, j.nv) != (1, 1):
                raise RigidSystemError(f"tendon {name!r}: joint {joint!r} has {j.nq} position and {j.nv} velocity "
                                       "coordinates; a fixed tendon takes hinge and slide joints")
        self._tendons[name] = tendon
        return name

    def _moving_body(self, name, where):
        if not isinstance(name, Hashable):
            raise RigidSystemError(f"{where}: {name!r} is not hashable, so it names no joint or body")
        if name in self._bodies:
            return name
        by_joint = [k for k, spec in self._bodies.items() if spec[1].name is not None and spec[1].name == name]
        if len(by_joint) == 1:
            return by_joint[0]
        if name in self._frames:
            raise RigidSystemError(f"{where}: {name!r} is attached by a fixed joint, it has no coordinate")
        raise RigidSystemError(f"{where}: unknown joint {name!r}")

    def build(self, independent=None, initial=None):
        """The immutable :class:`~sko.systems.rigid.RigidSystem` (possibly with no moving body,
        ``nv = 0``); with couplings or loop joints a
        :class:`~sko.systems.clustered.ClusteredRigidSystem` whose coupled bodies form cluster
        nodes (EMBEDDING.md §1).

        Massless moving bodies and point masses are kept: whether the dynamics stay defined is
        the articulated-body recursion's check (``D(k)`` positive definite, reported by body).

        Parameters
        ----------
        independent : sequence of bodies, optional
            Bodies whose inboard joints are the independent coordinates of their cluster
            (chosen automatically when ``None``).
        initial : mapping body -> joint coordinates, optional
            A guess of an assembled configuration of the loops, which picks the assembly branch
            (default: every joint neutral). Loops are assembled from it by least squares, the
            independent coordinates held (:class:`~sko.bodies.cluster.RigidCluster`).

        Raises
        ------
        ClusterError, LoopClosureError
            Inconsistent couplings or loops (:mod:`sko.bodies.cluster`).
        DependentJointError
            A tendon acting on a joint the couplings or loops make dependent, named.
        """
        specs = []
        for name, (parent, joint, X_T, I6) in self._bodies.items():
            symbolic = I6.dtype == object or X_T.dtype == object  # definiteness is the caller's assumption
            specs.append(BodySpec(name, parent, joint, X_T, I6 if symbolic else I6 / 2 + I6.T / 2))
        tendons = tuple(self._tendons.values())
        if self._couplings or self._loops:
            from sko.systems.clustered import ClusteredRigidSystem

            return ClusteredRigidSystem(specs, dict(self._frames), self.gravity, self._couplings, self._loops,
                                        independent, initial, tendons)
        return RigidSystem(specs, dict(self._frames), self.gravity, tendons)

    def _check_new(self, name):
        _check_hashable(name, "body")
        if name is None or name in self._frames:
            raise RigidSystemError(f"body or frame name {name!r} is None or already used")


def _check_hashable(name, kind: str) -> None:
    try:
        hash(name)
    except TypeError:
        raise RigidSystemError(f"{kind} name {name!r} is not hashable") from None


def _to_parent(X_T, I6):
    """An inertia given in a frame F, ᶠX_b = X_T, expressed in the body frame b: ``X_Tᵀ I X_T``."""
    return X_T.T @ I6 @ X_T


def _gravity(gravity) -> np.ndarray:
    if gravity is None:
        return DEFAULT_GRAVITY.copy()
    g = _array(gravity, "gravity")
    if g.shape == (3,):
        g = np.concatenate([np.zeros(3, dtype=g.dtype), g])
    if g.shape != (6,):
        raise RigidSystemError(f"gravity must be a 3- or 6-vector, got shape {g.shape}")
    if g.dtype != object and not np.isfinite(g).all():
        raise RigidSystemError(f"gravity must be finite, got {np.asarray(gravity, dtype=float).tolist()}")
    return g


def _symbolic(x) -> bool:
    """True for a sympy expression with free symbols."""
    return bool(getattr(x, "free_symbols", None))


def _array(A, what: str) -> np.ndarray:
    """A float array, or an object array of exact sympy entries when any entry has symbols
    (floats there become rationals, ``1.0*l`` becomes ``l``, so results compare exactly)."""
    try:
        A = numeric_array(np.array(A, dtype=object), what)  # numbers or sympy: no strings, None, containers
    except (TypeError, ValueError) as exc:
        raise RigidSystemError(f"{what} is not an array of numbers: {exc}") from None
    if any(isinstance(e, (complex, np.complexfloating)) for e in A.flat):
        raise RigidSystemError(f"{what} must be real, got {A.tolist()}")
    if any(_symbolic(e) for e in A.flat):
        sympy = require("sympy", "symbolic systems")

        return np.vectorize(lambda e: sympy.nsimplify(e, rational=True), otypes=[object])(A) if A.size else A
    try:
        return A.astype(float)
    except (TypeError, ValueError) as exc:
        raise RigidSystemError(f"{what} must be numbers or sympy expressions: {exc}") from None


def _matrix(A, shape, what, default) -> np.ndarray:
    if A is None:
        return default.copy()
    A = _array(A, what)
    if A.shape != shape:
        raise RigidSystemError(f"{what} must be an array of shape {shape}, got shape {A.shape}")
    if A.dtype != object and not np.isfinite(A).all():
        raise RigidSystemError(f"{what} must be finite, got {A.tolist()}")
    return A


def _check_symmetric(A: np.ndarray, where: str) -> None:
    """Symbolic inertias are checked for symmetry only (definiteness of symbols is the caller's
    assumption); numeric ones by :mod:`sko.inertia`."""
    if any((A[i, j] - A[j, i]) != 0 for i in range(A.shape[0]) for j in range(i)):
        raise RigidSystemError(f"{where} is not symmetric")


def link_inertia(name, inertia=None, mass=None, com=None, inertia_com=None) -> np.ndarray:
    """A link's checked 6 × 6 spatial inertia from ``inertia`` or ``mass, com, inertia_com``
    (zero for a massless link); ``name`` labels the error messages."""
    if inertia is not None:
        if mass is not None or com is not None or inertia_com is not None:
            raise RigidSystemError(f"body {name!r}: give either inertia or mass/com/inertia_com, not both")
        I6 = _matrix(inertia, (6, 6), f"spatial inertia of body {name!r}", None)
        if I6.dtype == object:
            _check_symmetric(I6, f"spatial inertia of body {name!r}")
        else:
            check_spatial_inertia(I6, f"body {name!r}", RigidSystemError)
        return I6
    if mass is None:
        if com is not None or inertia_com is not None:
            raise RigidSystemError(f"body {name!r}: com/inertia_com given without a mass")
        return np.zeros((6, 6))
    checked_scalar(mass, f"body {name!r}: mass", nonnegative=True, symbolic=True, error=RigidSystemError)
    m = _array(mass, f"mass of body {name!r}")
    if m.shape != ():
        raise RigidSystemError(f"body {name!r}: mass must be a number, got {mass!r}")
    m = m[()]
    if not _symbolic(m) and not (np.isfinite(float(m)) and m >= 0):
        raise RigidSystemError(f"body {name!r}: mass must be finite and non-negative, got {mass!r}")
    c = _matrix(com, (3,), f"centre of mass of body {name!r}", np.zeros(3))
    Ic = _matrix(inertia_com, (3, 3), f"rotational inertia of body {name!r}", np.zeros((3, 3)))
    if Ic.dtype == object or c.dtype == object or _symbolic(m):
        _check_symmetric(Ic, f"rotational inertia of body {name!r}")
    else:
        check_physical_inertia(float(m), c.astype(float), Ic, f"body {name!r}", RigidSystemError)
    return _array(spatial_inertia(m, c, Ic), f"spatial inertia of body {name!r}")
