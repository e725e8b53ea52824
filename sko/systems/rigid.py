"""Rigid-body systems as SKO models (RIGID.md).

A :class:`RigidSystem` is a description without state: a tree of bodies, each with its inboard
joint, tree transform ``X_T`` and spatial inertia, plus named frames fixed on bodies. Each body
is a :class:`~sko.bodies.rigid.RigidBody` of the body-type contract, held in a
:class:`~sko.systems.multibody.MultibodySystem`, so at a state ``(q, ν)`` the SKO model
``(H, ℰ_φ, M)`` with the stacked ``a`` and ``b`` (:meth:`RigidSystem.sko_model`) is that of the
contract, and every dynamics quantity comes from the generic algorithms of ``algorithms`` on it:
Newton–Euler (inverse dynamics, bias forces), the composite body inertias (mass matrix), the
articulated body recursion (forward dynamics), operational space inertia.

Coordinates: ``q`` stacks each body's joint position variables and ``ν`` (called ``qd``) its
velocity variables, in body order; ``ν = q̇`` except for joints with quaternions or
successor-frame velocities (see :meth:`RigidSystem.qdot`). Quaternions in ``q`` are
``(w, x, y, z)``; a non-unit quaternion is normalised (its rotation is that of ``q/‖q‖``), a zero
one is rejected (:class:`~sko.errors.JointError`); :meth:`RigidSystem.normalize` projects
an integrated ``q`` back. Spatial vectors are ``[ω; v]``, forces ``[n; f]``; external forces are
given per body in world coordinates about the world origin.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from numbers import Real
from typing import NamedTuple

import numpy as np

import sko.algorithms as alg
from sko.graphs.errors import DimensionError, NonFiniteError, RankDeficientError, SKOError, UnknownNodeError, preview
from sko.arrays import result_dtype
from sko.bodies.hinge import checked_placement
from sko.bodies.armature import ArmatureBody
from sko.bodies.rigid import RigidBody
from sko.systems.multibody import MultibodySystem, stacked
from sko.model import SKOModel
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


class RigidSystem:
    """A tree of rigid bodies and joints (no state). Build one with
    :class:`~sko.systems.builder.SystemBuilder`, :meth:`from_urdf` or :func:`~sko.io.dh.dh_system`.

    Parameters
    ----------
    bodies : sequence of BodySpec
        Every parent before its children; names unique.
    frames : mapping name -> (body or None, ᶠX_body)
        Named frames fixed on bodies (``None``: on the world); each body must be one of
        ``bodies`` and each ``ᶠX_body`` a finite 6 × 6 Plücker transform (checked here:
        :class:`~sko.graphs.errors.UnknownNodeError`, :class:`~sko.graphs.errors.DimensionError`,
        :class:`~sko.graphs.errors.NonFiniteError`).
    gravity : (6,) array
        ``a_g = [0; g]`` in world coordinates.

    Each body becomes a :class:`~sko.bodies.rigid.RigidBody`, which checks its inertia (symmetric
    positive definite) and placement once, here. The joints of :mod:`sko.bodies.joints` give a
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

    def __init__(self, bodies, frames: Mapping, gravity):
        self._specs = tuple(bodies)
        self.bodies = tuple(s.name for s in self._specs)
        self._spec = {s.name: s for s in self._specs}
        self.gravity = np.array(gravity, dtype=float)
        self._system = MultibodySystem([_body(s) for s in self._specs], self.gravity)
        self.tree = self._system.tree
        self.frames = {name: self._checked_frame(name, spec) for name, spec in frames.items()}
        for name in self.bodies:
            self.frames.setdefault(name, (name, np.eye(6)))
        self._q_slices, self._v_slices = self._system.q_slices, self._system.dof_slices
        self.nq, self.nv = self._system.q_size, self._system.dof_size

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_mjcf(cls, source) -> "RigidSystem":
        """Compile MJCF with MuJoCo and read the compiled model (see :func:`sko.io.mjcf.load_mjcf`):
        ``q``, ``ν`` and ``τ`` are MuJoCo's ``qpos``, ``qvel`` and ``qfrc``."""
        from sko.io.mjcf import load_mjcf

        return load_mjcf(source)

    @classmethod
    def from_urdf(cls, path, floating_base: bool = False, gravity=None, inertia: str = "strict") -> "RigidSystem":
        """Load a URDF file (see :func:`sko.io.urdf.load_urdf`; ``inertia="repair"`` replaces
        unphysical link inertias by the nearest physical ones, with a warning)."""
        from sko.io.urdf import load_urdf

        return load_urdf(path, floating_base=floating_base, gravity=gravity, inertia=inertia)

    # ------------------------------------------------------------------ structure
    def body(self, name: Hashable) -> BodySpec:
        """The :class:`BodySpec` of body ``name``."""
        self._check_body(name)
        return self._spec[name]

    def joint(self, name: Hashable) -> Joint:
        return self.body(name).joint

    def q_slice(self, name: Hashable) -> slice:
        """Where body ``name``'s joint position variables sit in ``q``."""
        self._check_body(name)
        return self._q_slices[name]

    def v_slice(self, name: Hashable) -> slice:
        """Where body ``name``'s joint velocity variables sit in ``ν`` (and in ``τ``)."""
        self._check_body(name)
        return self._v_slices[name]

    def joint_names(self) -> dict:
        """``{joint name: body}`` for the joints that have a name."""
        return {s.joint.name: s.name for s in self._specs if s.joint.name is not None}

    @property
    def total_mass(self) -> float:
        return float(sum(s.inertia[5, 5] for s in self._specs))

    def __repr__(self) -> str:
        return f"RigidSystem({len(self.bodies)} bodies, nq={self.nq}, nv={self.nv})"

    # ------------------------------------------------------------------ configurations
    def neutral_configuration(self) -> np.ndarray:
        """Every joint at its neutral configuration (``X_J = I``)."""
        return self._system.neutral()

    def random_configuration(self, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """A random valid configuration (unit quaternions)."""
        rng = np.random.default_rng(rng)
        return stacked([s.joint.random(rng) for s in self._specs])

    def normalize(self, q) -> np.ndarray:
        """``q`` with every quaternion renormalised."""
        return self._system.normalize(q)

    def qdot(self, q, qd) -> np.ndarray:
        """``q̇`` from the position and velocity variables (joint by joint)."""
        return self._system.qdot(q, qd)

    def integrate(self, q, qd, dt: float) -> np.ndarray:
        """The configuration reached from ``q`` at constant velocity ``qd`` after ``dt``
        (exact on each joint's configuration manifold; quaternions stay unit).

        Raises
        ------
        DimensionError, NonFiniteError
            ``dt`` not a real number, or not finite (and the checks of ``q``, ``qd``).
        """
        if not isinstance(dt, Real):
            raise DimensionError(f"time step dt must be a real number, got {dt!r}")
        if not np.isfinite(dt):
            raise NonFiniteError(f"time step dt must be finite, got {dt!r}")
        q, qd = self._system.checked_vectors(q, qd)
        return stacked([s.joint.integrate(q[self._q_slices[s.name]], qd[self._v_slices[s.name]], dt) for s in self._specs])

    # ------------------------------------------------------------------ the SKO model
    def sko_model(self, q, qd=None, external_forces: Mapping | None = None) -> tuple[SKOModel, np.ndarray, np.ndarray]:
        """The SKO model at ``(q, ν)`` and the stacked ``a``, ``b`` (RIGID.md table).

        Parameters
        ----------
        q : (nq,) array
        qd : (nv,) array, optional
            Velocity variables ``ν`` (zero if omitted).
        external_forces : mapping body -> (6,) array, optional
            Spatial forces ``[n; f]`` on bodies, world coordinates about the world origin.

        Returns
        -------
        model : SKOModel
            Weights ``φ(℘(k), k) = (ᵏX_℘)*``, ``H(k) = S_kᵀ``, ``M(k) = I_k``.
        a, b : (6 N,) arrays
            ``a(k) = c_J + v_k × S_k ν_k`` (+ ``ᵏX_0 (−a_g)`` on base bodies) and
            ``b(k) = v_k ×* I_k v_k − ᵏX_0^* f^x_k``.
        """
        return self._system.sko_model(q, qd, external_forces)

    def _states(self, q, qd=None) -> dict:
        """The bodies' :class:`~sko.bodies.contract.NodeState` at ``(q, ν)``."""
        return self._system.node_states(q, qd)

    # ------------------------------------------------------------------ dynamics (generic algorithms)
    def inverse_dynamics(self, q, qd, qdd, external_forces: Mapping | None = None) -> np.ndarray:
        """``τ = ℳ(q) ν̇ + 𝒞(q, ν)`` by Newton–Euler on the SKO model (SKO.md §5)."""
        return self._system.inverse_dynamics(q, qd, qdd, external_forces)

    def bias_forces(self, q, qd, external_forces: Mapping | None = None) -> np.ndarray:
        """``𝒞(q, ν)`` (Coriolis, centrifugal, gravity and external forces): inverse dynamics at ``ν̇ = 0``."""
        return self._system.bias(q, qd, external_forces)

    def gravity_forces(self, q) -> np.ndarray:
        """The gravity part of ``𝒞``: bias forces at ``ν = 0``."""
        return self.bias_forces(q, None)

    def mass_matrix(self, q) -> np.ndarray:
        """``ℳ(q) = H φ M φ* H*`` by the composite body algorithm (SKO.md §6, Algorithm 4.2)."""
        return self._system.mass_matrix(q)

    def forward_dynamics(self, q, qd, tau, external_forces: Mapping | None = None) -> np.ndarray:
        """``ν̇ = ℳ^{-1}(τ − 𝒞)`` by the articulated body recursion (SKO.md §11, Algorithm 6.1)."""
        return self._system.forward_dynamics(q, qd, tau, external_forces)

    # ------------------------------------------------------------------ energy
    def kinetic_energy(self, q, qd):
        """``½ Σ v_kᵀ I_k v_k``."""
        return self._system.kinetic_energy(q, qd)

    def potential_energy(self, q):
        """Gravitational potential ``−Σ m_k g · c_k`` (``g`` the linear part of ``a_g``, ``c_k``
        the world centre of mass); zero at the world origin."""
        return self._system.potential_energy(q)

    def energy(self, q, qd):
        """Kinetic plus potential energy (in the state's scalar type)."""
        return self._system.energy(q, qd)

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

    def body_velocities(self, q, qd) -> dict:
        """``{body: v_k}``, spatial velocities in body coordinates."""
        states = self._states(q, qd)
        return {k: states[k].attachments[None].velocity for k in self.bodies}

    def jacobian(self, q, frame: Hashable) -> np.ndarray:
        """``J = ℬ* φ* H*`` (SKO.md §12): 6 × nv with ``v_frame = J ν`` in frame coordinates.

        Walks from the frame's body to the root: the column block of an ancestor ``j`` is
        ``ᶠX_k φ*(j, k) H*(j)``, zero for bodies off the path (O(depth))."""
        body, X = self._frame(frame)
        model, _, _ = self.sko_model(q)
        J = np.zeros((6, self.nv), dtype=model.dtype)
        if body is None:
            return J
        X = X @ np.eye(6, model.node_dim(body))  # v_k = [1, 0] 𝒱(k) (armature bodies carry θ̇ too)
        for j in [body, *self.tree.ancestors(body)]:
            J[:, self._v_slices[j]] = X @ model.H[j].T
            if self.tree.parent(j) is not None:
                X = X @ model.phi[j].T
        return J

    def operational_space_inertia(self, q, frames) -> np.ndarray:
        """``Λ = (J ℳ^{-1} J*)^{-1}`` for the stacked 6-row Jacobians of bodies or frames fixed on
        them (SKO.md §12: ``Λ^{-1} = ℬ* Ω ℬ`` with ``Ω = ψ* H* D^{-1} H ψ``, by
        :func:`sko.algorithms.operational_space_inertia`; a frame ``f`` on body ``k`` picks the node
        through ``B_k = (ᶠX_k)ᵀ``).

        Raises
        ------
        UnknownNodeError
            An unknown frame, or one fixed on the world.
        RankDeficientError
            Two frames on the same body, or a task the joints cannot move independently.
        """
        if isinstance(frames, (set, frozenset)):
            raise SKOError(f"frames must be an ordered sequence (they order the blocks of Λ), got the set {frames!r}")
        frames = list(frames) if isinstance(frames, list) or (isinstance(frames, tuple) and frames not in self.frames) else [frames]
        picks = [self._frame(f) for f in frames]
        bodies = [body for body, _ in picks]
        for f, body in zip(frames, bodies):
            if body is None:
                raise UnknownNodeError(f"frame {f!r} is fixed on the world: it has no operational space inertia")
        if len(set(bodies)) < len(bodies):
            raise RankDeficientError(f"frames {frames!r} include two on the same body: their stacked Jacobian has dependent rows")
        model, _, _ = self.sko_model(q)
        return alg.operational_space_inertia(model, bodies,
                                             transforms={b: (X @ np.eye(6, model.node_dim(b))).T for b, X in picks})

    # ------------------------------------------------------------------ input checks
    def _checked_frame(self, name, spec) -> tuple:
        """A frame ``(body or None, ᶠX_body)``: a known body and a finite 6 × 6 transform."""
        try:
            body, X = spec
        except (TypeError, ValueError):
            raise DimensionError(f"frame {name!r} must be a pair (body or None, 6 × 6 transform), got {spec!r}") from None
        if body is not None and body not in self._spec:
            raise UnknownNodeError(f"frame {name!r} is fixed on {body!r}, which is not a body of this rigid system "
                                   f"(bodies: {preview(self.bodies)})")
        return body, checked_placement(X, name, "transform of frame")

    def _check_body(self, name):
        if name not in self._spec:
            raise UnknownNodeError(f"{name!r} is not a body of this rigid system (bodies: {preview(self.bodies)})")

    def _frame(self, frame):
        try:
            return self.frames[frame]
        except (KeyError, TypeError):
            raise UnknownNodeError(f"{frame!r} is neither a body nor a frame of this rigid system") from None


def _body(spec: BodySpec) -> RigidBody:
    """The body type of a spec: rigid, with armature when it has some."""
    if spec.armature is None:
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

