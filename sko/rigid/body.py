"""One rigid body as one SKO node at a state (RIGID.md, *The SKO model in body coordinates*).

:func:`rigid_node` is the whole per-body computation: from the joint, the tree (placement)
transform, the body inertia, the parent's kinematics and the body's own coordinates it returns
the node's weight, joint map, inertia, ``a(k)``, ``b(k)`` and the kinematics its children need::

    ᵏX_℘ = X_J(q_k) X_T(k)
    φ(℘(k), k) = (ᵏX_℘)*,   H(k) = S_kᵀ,   M(k) = I_k
    v_k  = ᵏX_℘ v_℘ + S_k ν_k
    a(k) = c_J(k) + crm(v_k) S_k ν_k (+ ᵏX_℘ (−a_g) below the root)
    b(k) = crf(v_k) I_k v_k − ᵏX_0^* f^x_k

The root's "acceleration" ``−a_g`` enters ``a(k)`` of the base bodies only; the SPO ``φ*``
carries it to every other body (RIGID.md: gravity as a term of the base bodies' ``a``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sko.spatial import force_cross, force_transform, motion_cross

from .joints import Joint

__all__ = ["NodeTerms", "BodyKinematics", "rigid_node"]


class NodeTerms(NamedTuple):
    """What one body contributes to the SKO model at a state."""

    weight: np.ndarray  #: φ(℘(k), k) = (ᵏX_℘)ᵀ, 6 × 6
    H: np.ndarray  #: H(k) = S_kᵀ, n_k × 6
    M: np.ndarray  #: M(k) = I_k, 6 × 6
    a: np.ndarray  #: Coriolis acceleration a(k), 6
    b: np.ndarray  #: gyroscopic (and external) force b(k), 6


class BodyKinematics(NamedTuple):
    """Kinematics a body passes to its children."""

    X0: np.ndarray  #: ᵏX_0, world to body coordinates
    v: np.ndarray  #: spatial velocity v_k in body coordinates
    arc_acceleration: np.ndarray  #: acceleration injected on the arcs to the children (−a_g at the root, else 0)

    @classmethod
    def root(cls, gravity: np.ndarray) -> "BodyKinematics":
        """The inertial root: identity pose, zero velocity, and ``−a_g`` for its arcs."""
        return cls(np.eye(6), np.zeros(6), -np.asarray(gravity, dtype=float))


def rigid_node(joint: Joint, placement: np.ndarray, inertia: np.ndarray, parent: BodyKinematics, q_k, v_k,
               external_force=None) -> tuple[NodeTerms, BodyKinematics]:
    """The SKO node terms of a rigid body and its kinematics (RIGID.md table).

    Parameters
    ----------
    joint : Joint
        The body's inboard joint.
    placement : (6, 6) array
        ``X_T(k)``: Plücker transform from the parent body frame to the joint's predecessor frame.
    inertia : (6, 6) array
        ``I_k`` about the body frame origin, in body coordinates.
    parent : BodyKinematics
        The parent's kinematics (``BodyKinematics.root(a_g)`` for a base body).
    q_k, v_k : arrays
        The joint's position and velocity variables.
    external_force : (6,) array, optional
        ``f^x_k = [n; f]`` applied to the body, in world coordinates about the world origin.
    """
    X, S, c = joint.kinematics(q_k, v_k)
    X_up = X @ placement
    v_joint = S @ v_k
    v = X_up @ parent.v + v_joint
    a = c + motion_cross(v, v_joint) + X_up @ parent.arc_acceleration
    b = force_cross(v, inertia @ v)
    X0 = X_up @ parent.X0
    if external_force is not None:
        b = b - force_transform(X0) @ external_force
    zeros = np.zeros(6, dtype=v.dtype)
    return NodeTerms(X_up.T, S.T, inertia, a, b), BodyKinematics(X0, v, zeros)
