"""An independent check of body types: lumped particles and Lagrange's equations.

Nothing here shares code with the SKO path (no spatial algebra, no SKO model, no recursion):
every body of a tree is a set of particles whose world positions come from plain 4 × 4
homogeneous-transform kinematics, and the equations of motion follow from the particles alone
(BODIES.md, "Checking a body type independently").
"""

from .kinematics import (
    IndependentJoint,
    free_joint,
    homogeneous,
    prismatic_joint,
    revolute_joint,
    rotation_about,
    rotation_from_quaternion,
    rotation_from_vector,
    skew,
    spherical_joint,
)
from .lagrange import ParticleBody, ParticleRotor, ParticleTree, particles_from_inertia

__all__ = [
    "IndependentJoint",
    "revolute_joint",
    "prismatic_joint",
    "spherical_joint",
    "free_joint",
    "homogeneous",
    "rotation_about",
    "rotation_from_quaternion",
    "rotation_from_vector",
    "skew",
    "ParticleBody",
    "ParticleRotor",
    "ParticleTree",
    "particles_from_inertia",
]
