"""Body types: the contract a node type implements, the rigid joint library, and the body types
built on them (BODIES.md).

* :mod:`.contract`: :class:`BodyType` (what a new node type supplies), :class:`Attachment`,
  :class:`NodeState`, :class:`BodyError`.
* :mod:`.joints`: the rigid joint library (RIGID.md), :mod:`.hinge`: a joint's part of a node state.
* :mod:`.composite`: several joints in series on one body, joints read from an offset, and
  MuJoCo's free-joint coordinates.
* :mod:`.rigid`, :mod:`.flexible`, :mod:`.rotor`: rigid bodies, assumed-modes flexible bodies,
  links driven through a gear by a rotor on their parent; :mod:`.armature`: rigid bodies with
  reflected rotor inertia on their joint's diagonal of ℳ; :mod:`.beam`: clamped-free beam modes.
* :mod:`.cluster`: rigid bodies coupled by mimic joints, gears or closed loops as one node with
  non-square weights (constraint embedding, EMBEDDING.md).

The body types here are Python only; their compiled node states and joint kinematics are in
:mod:`sko.engine` (the library's kernels, and :func:`sko.engine.state_kernel` and
:func:`sko.engine.joint_type` for a type written elsewhere). Systems of body types are in
:mod:`sko.systems`. Their dynamics are checked against
:mod:`sko.independent` (particles and Lagrange's equations, no shared code) in ``tests/bodies``;
``papers/tutorial_body_type.py`` shows how to write a new body type.
"""

from sko.bodies.armature import ArmatureBody
from sko.bodies.beam import BeamModes, cantilever_modes, flexible_beam
from sko.bodies.cluster import ClusterError, ClusterMember, Coupling, LoopClosureError, LoopConstraint, RigidCluster
from sko.bodies.composite import CompositeJoint, FreePositionFirst, OffsetJoint
from sko.bodies.contract import Attachment, BodyError, BodyType, CompiledState, NodeState, root_attachment
from sko.bodies.flexible import FlexibleBody, ModalNode, exp_map_coefficients
from sko.bodies.joints import (
    CustomJoint,
    Cylindrical,
    Fixed,
    Free,
    Helical,
    Joint,
    JointDerivatives,
    JointKinematics,
    JointLimits,
    Planar,
    Prismatic,
    RackAndPinion,
    ReversedJoint,
    Revolute,
    Spherical,
    SphericalEulerZYX,
)
from sko.bodies.rigid import RigidBody
from sko.bodies.rotor import GearedRotorLink

__all__ = [
    "RigidCluster",
    "ClusterMember",
    "Coupling",
    "LoopConstraint",
    "ClusterError",
    "LoopClosureError",
    "BodyType", "Attachment", "NodeState", "CompiledState", "BodyError", "root_attachment",
    "RigidBody", "ArmatureBody", "FlexibleBody", "ModalNode", "exp_map_coefficients", "GearedRotorLink",
    "BeamModes", "cantilever_modes", "flexible_beam",
    "Joint", "JointDerivatives", "JointKinematics", "JointLimits", "Revolute", "Prismatic", "Helical", "Cylindrical", "Planar", "Spherical",
    "SphericalEulerZYX", "Free", "Fixed", "RackAndPinion", "CustomJoint", "ReversedJoint",
    "CompositeJoint", "OffsetJoint", "FreePositionFirst",
]
