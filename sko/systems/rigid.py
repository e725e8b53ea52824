"""Rigid-body systems as SKO models (RIGID.md).

A :class:`RigidSystem` is a description without state: a tree of bodies, each with its inboard
joint, tree transform ``X_T`` and spatial inertia, plus named frames fixed on bodies. Each body
is a :class:`~sko.bodies.rigid.RigidBody` of the body-type contract, held in a
:class:`~sko.systems.multibody.MultibodySystem`, so at a state ``(q, ν)`` the SKO model
``(H, ℰ_φ, M)`` with the stacked ``a`` and ``b`` (:meth:`RigidSystem.sko_model`) is that of the
contract, and every dynamics quantity comes from the generic algorithms of ``algorithms`` on it:
Newton–Euler (inverse dynamics, bias forces), the composite body inertias (mass matrix), the
articulated body recursion (forward dynamics), operational space inertia.

Coordinates: ``q`` stacks each body's joint position variables and ``ν`` (called ``v``) its
velocity variables, in body order; ``ν = q̇`` except for joints with quaternions or
successor-frame velocities (see :meth:`RigidSystem.qdot`). Quaternions in ``q`` are
``(w, x, y, z)``; a non-unit quaternion is normalised (its rotation is that of ``q/‖q‖``), a zero
one is rejected (:class:`~sko.errors.JointError`); :meth:`RigidSystem.normalize` projects
an integrated ``q`` back. Spatial vectors are ``[ω; v]``, forces ``[n; f]``; external forces are
given per body in world coordinates about the world origin.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from sko.engine import algorithms as alg
from sko.graphs.errors import DimensionError, RankDeficientError, SKOError, UnknownNodeError, preview
from sko.arrays import result_dtype
from sko.bodies.hinge import checked_placement
from sko.bodies.armature import ArmatureBody
from sko.bodies.rigid import RigidBody
from sko.systems.deprecation import renamed_keywords
from sko.engine.dispatch import engine
from sko.systems.frames import Frame, center_of_mass, center_of_mass_jacobian
from sko.systems.multibody import FixedTendon, MultibodySystem
from sko.spatial import plucker_rotation, plucker_translation

from sko.bodies.joints import Joint

__all__ = ["BodySpec", "RigidSystem"]


class BodySpec(NamedTuple):
    """One moving body of a rigid system."""

    name: Hashable
    parent: Hashable | None  #: parent body, None for a base body
    joint: Joint
    placement: np.ndarray  #: X_T, parent body frame to the joint's predecessor frame
    inertia: np.ndarray  #: spatial inertia about the body origin, body coordinates
    armature: np.ndarray | None = None  #: reflected rotor inertia per joint velocity coordinate (MuJoCo's)


class RigidSystem(MultibodySystem):
    """A tree of rigid bodies and joints (no state). Build one with
    :class:`~sko.systems.builder.SystemBuilder`, or load one with :func:`sko.io.load_urdf`,
    :func:`sko.io.load_mjcf` or :func:`sko.io.dh.dh_system`.

    The dynamics, configurations and lookups by body and joint name are those of
    :class:`~sko.systems.multibody.MultibodySystem` (the one system API, arguments ``q, v, tau``);
    this class adds named frames, their kinematics and Jacobians, and operational space inertia.
    ``body(name)`` returns the :class:`~sko.bodies.rigid.RigidBody` (``joint``, ``placement``,
    ``inertia``).

    Parameters
    ----------
    bodies : sequence of BodySpec
        Every parent before its children; names unique.
    frames : mapping name -> (body or None, ᶠX_body)
        Named frames fixed on bodies, kept as :class:`~sko.systems.frames.Frame` objects in
        :attr:`frames` (every body also names its own frame) (``None``: on the world); each body must be one of
        ``bodies`` and each ``ᶠX_body`` a finite 6 × 6 Plücker transform (checked here:
        :class:`~sko.graphs.errors.UnknownNodeError`, :class:`~sko.graphs.errors.DimensionError`,
        :class:`~sko.graphs.errors.NonFiniteError`).
    gravity : (6,) array
        ``a_g = [0; g]`` in world coordinates.
    tendons : sequence of FixedTendon, optional
        Fixed tendons between hinge and slide joints (:class:`~sko.systems.multibody.FixedTendon`),
        whose springs and dampers are hinge forces of the system.

    Each body becomes a :class:`~sko.bodies.rigid.RigidBody` (an
    :class:`~sko.bodies.armature.ArmatureBody` when its spec has armature), which checks its
    inertia (that of a physical body, massless and point masses included: :mod:`sko.inertia`)
    and placement once, here. The joints of :mod:`sko.bodies.joints` give a
    full-rank ``S`` by construction, so the SKO model at a state is built without re-checking
    (``SKOModel(validate=False)``); with a :class:`~sko.bodies.joints.CustomJoint` anywhere, every
    state is fully checked instead (rank of ``S``, finiteness).

    Examples
    --------
    >>> import numpy as np
    >>> from sko.examples.rigid import planar_chain
    >>> chain = planar_chain(2)
    >>> model, a, b = chain.sko_model([0.1, 0.2], [0.0, 1.0])
    >>> model.node_dim("link2"), model.dof_dim("link2")
    (6, 1)
    >>> tau = chain.inverse_dynamics([0.1, 0.2], [0.0, 1.0], [1.0, 0.0])
    >>> bool(np.allclose(chain.forward_dynamics([0.1, 0.2], [0.0, 1.0], tau), [1.0, 0.0]))
    True
    """

    def __init__(self, bodies, frames: Mapping, gravity, tendons: Sequence[FixedTendon] = ()):
        super().__init__([_body(s) for s in bodies], gravity, tendons)
        self.frames = {name: Frame(name, *self._checked_frame(name, spec), system=self) for name, spec in frames.items()}
        for name in self.bodies:
            self.frames.setdefault(name, Frame(name, name, np.eye(6), system=self))

    # ------------------------------------------------------------------ structure
    @property
    def total_mass(self):
        return sum(self._body[k].inertia[5, 5] for k in self.bodies)

    def __repr__(self) -> str:
        return f"RigidSystem({len(self.bodies)} bodies, nq={self.nq}, nv={self.nv})"

    def _states(self, q, v=None) -> dict:
        """The bodies' :class:`~sko.bodies.contract.NodeState` at ``(q, v)``."""
        return self.node_states(q, v)

    def frame(self, name: Hashable) -> Frame:
        """The named frame (or body frame) ``name``: a :class:`~sko.systems.frames.Frame` with
        ``pose(q)``, ``velocity(q, v)`` and ``jacobian(q)``."""
        try:
            return self.frames[name]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{name!r} is neither a body nor a frame of this rigid system") from None

    # ------------------------------------------------------------------ inertial parameters
    def _with_bodies(self, bodies) -> "RigidSystem":
        """:meth:`MultibodySystem._with_bodies`, the named frames on the new system."""
        new = super()._with_bodies(bodies)
        new.frames = {name: Frame(name, f.body, f.placement, system=new) for name, f in self.frames.items()}
        return new

    # ------------------------------------------------------------------ centre of mass
    def center_of_mass(self, q) -> np.ndarray:
        """The world centre of mass ``Σ m_k c_k / Σ m_k`` at ``q`` (O(N))."""
        return center_of_mass(self, q)

    def center_of_mass_jacobian(self, q) -> np.ndarray:
        """3 × nv ``J_c`` with ``ċ = J_c v`` in world coordinates (one gather over the tree)."""
        return center_of_mass_jacobian(self, q)

    # ------------------------------------------------------------------ kinematics
    def body_poses(self, q) -> dict:
        """``{body: T}``, the 4 × 4 homogeneous pose of each body frame in the world."""
        states = self._states(q)
        return {k: _pose(states[k]) for k in self.bodies}

    def frame_pose(self, q, frame: Hashable) -> np.ndarray:
        """The 4 × 4 world pose of a body or named frame."""
        body, X = self._frame(frame)
        if body is None:
            return _homogeneous(X)
        return _pose(self._states(q)[body]) @ _homogeneous(X)

    @renamed_keywords(qd="v")
    def body_velocities(self, q, v) -> dict:
        """``{body: v_k}``, spatial velocities in body coordinates."""
        states = self._states(q, v)
        return {k: states[k].attachments[None].velocity for k in self.bodies}

    def jacobian(self, q, frame: Hashable) -> np.ndarray:
        """``J = ℬ* φ* H*`` (SKO.md §12): 6 × nv with ``v_frame = J ν`` in frame coordinates.

        Walks from the node carrying the frame to the root: the column block of an ancestor ``j``
        is ``ᶠX_k Γ_k φ*(j, k) H*(j)``, zero for nodes off the path (O(depth))."""
        node, B = self._frame_on_node(frame)
        if (fast := engine(self).jacobian(self.jacobian, q, frame, node, B)) is not NotImplemented:
            return fast
        model, _, _ = self.sko_model(q)
        J = np.zeros((6, self.nv), dtype=model.dtype)
        if node is None:
            return J
        for j in [node, *self.tree.ancestors(node)]:
            J[:, self.dof_slices[j]] = B @ model.H[j].T
            if self.tree.parent(j) is not None:
                B = B @ model.phi[j].T
        return J

    def operational_space_inertia(self, q, frames) -> np.ndarray:
        """``Λ = (J ℳ^{-1} J*)^{-1}`` for the stacked 6-row Jacobians of bodies or frames fixed on
        them (SKO.md §12: ``Λ^{-1} = ℬ* Ω ℬ`` with ``Ω = ψ* H* D^{-1} H ψ``, by
        :func:`sko.algorithms.operational_space_inertia`; a frame ``f`` on body ``b`` picks the node
        ``k`` carrying ``b`` through ``B_k = (ᶠX_b Γ_b)ᵀ``, ``Γ_b`` the body's selector: see
        :meth:`_frame_on_node`).

        Raises
        ------
        UnknownNodeError
            An unknown frame, or one fixed on the world.
        RankDeficientError
            Two frames on the same node (a body or a cluster), or a task the joints cannot move
            independently.
        """
        if isinstance(frames, (set, frozenset)):
            raise SKOError(f"frames must be an ordered sequence (they order the blocks of Λ), got the set {frames!r}")
        frames = list(frames) if isinstance(frames, list) or (isinstance(frames, tuple) and frames not in self.frames) else [frames]
        picks = []
        for f in frames:
            node, B = self._frame_on_node(f)
            if node is None:
                raise UnknownNodeError(f"frame {f!r} is fixed on the world: it has no operational space inertia")
            picks.append((node, B))
        nodes = [node for node, _ in picks]
        if len(set(nodes)) < len(nodes):
            raise RankDeficientError(f"frames {frames!r} include two on the same node (a body or a cluster): their "
                                     "stacked Jacobian has dependent rows")
        model, _, _ = self.sko_model(q)
        return alg.operational_space_inertia(model, nodes, transforms={node: B.T for node, B in picks})

    # ------------------------------------------------------------------ input checks
    def _checked_frame(self, name, spec) -> tuple:
        """A frame ``(body or None, ᶠX_body)``: a known body and a finite 6 × 6 transform."""
        try:
            body, X = spec
        except (TypeError, ValueError):
            raise DimensionError(f"frame {name!r} must be a pair (body or None, 6 × 6 transform), got {spec!r}") from None
        if body is not None and body not in self._body:
            raise UnknownNodeError(f"frame {name!r} is fixed on {body!r}, which is not a body of this rigid system "
                                   f"(bodies: {preview(self.bodies)})")
        return body, checked_placement(X, name, "transform of frame")

    def _frame(self, frame) -> tuple:
        f = self.frame(frame)
        return f.body, f.placement

    def _frame_on_node(self, frame) -> tuple:
        """``(k, ᶠX_b Γ_b)``: the node ``k`` carrying the frame's body ``b`` and the map from
        ``𝒱(k)`` to the frame's velocity (:meth:`_body_on_node`); ``(None, ᶠX)`` for a frame on
        the world."""
        body, X = self._frame(frame)
        if body is None:
            return None, X
        node, Gamma = self._body_on_node(body)
        return node, X @ Gamma

    def _body_on_node(self, body) -> tuple:
        """``(k, Γ_b)``: the node ``k`` carrying ``body`` (the body itself) and ``Γ_b`` (6 × m)
        with ``v_b = Γ_b 𝒱(k)``, the first six entries (an armature body's node carries more)."""
        return body, np.eye(6, self._body[body].node_dim)


def _body(spec: BodySpec) -> RigidBody:
    """The body type of a spec: rigid, with armature when it has some."""
    if getattr(spec, "armature", None) is None:
        return RigidBody(spec.name, spec.parent, spec.joint, spec.inertia, spec.placement)
    return ArmatureBody(spec.name, spec.parent, spec.joint, spec.inertia, spec.armature, spec.placement)


def _pose(state) -> np.ndarray:
    """World pose ``[[R, p], [0, 1]]`` of a body's own frame."""
    frame = state.attachments[None]
    T = np.eye(4, dtype=result_dtype(frame.rotation, frame.position))
    T[:3, :3], T[:3, 3] = frame.rotation, frame.position
    return T


def _homogeneous(X) -> np.ndarray:
    """World pose ``[[R, p], [0, 1]]`` of the frame whose Plücker transform from world is ``X``."""
    T = np.eye(4, dtype=result_dtype(X))
    T[:3, :3] = plucker_rotation(X).T
    T[:3, 3] = plucker_translation(X)
    return T

