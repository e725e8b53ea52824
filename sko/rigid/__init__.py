"""Rigid-body systems as SKO models (RIGID.md): joints, bodies, systems, URDF and
Denavit–Hartenberg builders, and example systems."""

from .builder import DEFAULT_GRAVITY, SystemBuilder
from .errors import JointError, RigidSystemError, URDFError
from .joints import (
    CustomJoint,
    Cylindrical,
    Fixed,
    Free,
    Helical,
    Joint,
    JointKinematics,
    Planar,
    Prismatic,
    RackAndPinion,
    ReversedJoint,
    Revolute,
    Spherical,
    SphericalEulerZYX,
)
from .system import BodySpec, RigidSystem
from .dh import DHLink, dh_system
from .examples import example_systems
from .urdf import load_urdf, parse_urdf

__all__ = [
    "RigidSystem",
    "BodySpec",
    "load_urdf",
    "parse_urdf",
    "DHLink",
    "dh_system",
    "example_systems",
    "SystemBuilder",
    "DEFAULT_GRAVITY",
    "Joint",
    "JointKinematics",
    "Revolute",
    "Prismatic",
    "Helical",
    "Cylindrical",
    "Planar",
    "Spherical",
    "SphericalEulerZYX",
    "Free",
    "Fixed",
    "RackAndPinion",
    "CustomJoint",
    "ReversedJoint",
    "JointError",
    "RigidSystemError",
    "URDFError",
]
