"""Body types beyond the rigid body, the contract they implement, and systems mixing them.

* :mod:`.contract`: :class:`BodyType` (what a new node type supplies), :class:`Attachment`,
  :class:`NodeState`, :class:`BodyError`.
* :mod:`.system`: :class:`MultibodySystem`, the SKO model of any mix of body types at a state.
* :mod:`.rigid`, :mod:`.flexible`, :mod:`.rotor`: rigid bodies, assumed-modes flexible bodies,
  links driven through a gear by a rotor on their parent; :mod:`.beam`: clamped-free beam modes.
* :mod:`.simulate`: RK4 time integration; :mod:`.examples`: built-in flexible and geared
  systems (:func:`flexible_examples`) and random mixed trees.

Their dynamics are checked against :mod:`sko.independent` (particles and Lagrange's equations,
no shared code) in ``tests/bodies``; ``papers/tutorial_body_type.py`` shows how to write a new
body type.
"""

from .beam import BeamModes, cantilever_modes, flexible_beam
from .contract import Attachment, BodyError, BodyType, NodeState, root_attachment
from .flexible import FlexibleBody, ModalNode, exp_map_coefficients
from .rigid import RigidBody
from .rotor import GearedRotorLink
from .examples import flexible_examples, random_system, verify_models
from .simulate import Trajectory, simulate
from .system import MultibodySystem

__all__ = [
    "BodyType",
    "Attachment",
    "NodeState",
    "BodyError",
    "root_attachment",
    "MultibodySystem",
    "RigidBody",
    "FlexibleBody",
    "ModalNode",
    "exp_map_coefficients",
    "GearedRotorLink",
    "BeamModes",
    "cantilever_modes",
    "flexible_beam",
    "simulate",
    "Trajectory",
    "flexible_examples",
    "random_system",
    "verify_models",
]
