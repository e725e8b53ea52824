"""Built-in example rigid systems for documentation, tests and ``python -m sko verify``.

:func:`example_systems` maps a name to a factory taking no required argument:

* ``"planar_chain"`` — :func:`planar_chain`, an n-link pendulum (revolute joints about y).
* ``"arm7"`` — :func:`arm7`, a 7-dof arm from modified DH parameters.
* ``"branched_tree"`` — :func:`branched_tree`, a fixed-base tree using every joint type of the
  library (helical, cylindrical, planar, both spherical joints, rack-and-pinion, prismatic,
  a reversed joint, a user-defined joint, fixed frames).
* ``"humanoid"`` — :func:`humanoid`, a floating-base humanoid-like tree (free pelvis,
  ball-joint hips and shoulders).

Masses and inertias are plausible, not those of a real product.

>>> sorted(example_systems())
['arm7', 'branched_tree', 'humanoid', 'planar_chain']
>>> humanoid().nq, humanoid().nv
(33, 28)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sko.spatial import pose_transform, rot, rx

from sko.systems.builder import SystemBuilder
from sko.io.dh import DHLink, dh_system
from sko.bodies.joints import (
    CustomJoint,
    Cylindrical,
    Fixed,
    Free,
    Helical,
    Planar,
    Prismatic,
    RackAndPinion,
    Revolute,
    Spherical,
    SphericalEulerZYX,
)
from sko.systems.rigid import RigidSystem

__all__ = ["example_systems", "planar_chain", "arm7", "branched_tree", "humanoid", "rod_inertia", "box_inertia"]


def rod_inertia(mass: float, length: float, axis: int = 2, radius: float = 0.02) -> np.ndarray:
    """Rotational inertia about the centre of a solid cylinder along coordinate ``axis``."""
    transverse = mass * (3 * radius**2 + length**2) / 12
    I = np.full(3, transverse)
    I[axis] = mass * radius**2 / 2
    return np.diag(I)


def box_inertia(mass: float, size) -> np.ndarray:
    """Rotational inertia about the centre of a solid box of edge lengths ``size``."""
    x, y, z = size
    return mass / 12 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])


def planar_chain(n: int = 3, length: float = 1.0, mass: float = 1.0, gravity=None) -> RigidSystem:
    """An ``n``-link pendulum hanging along −z, every joint a revolute about y.

    >>> chain = planar_chain(4)
    >>> chain.bodies
    ('link1', 'link2', 'link3', 'link4')
    """
    b = SystemBuilder(gravity)
    parent = None
    for i in range(1, n + 1):
        name = f"link{i}"
        placement = None if parent is None else pose_transform([0.0, 0.0, -length])
        b.add_body(name, parent, Revolute([0, 1, 0], name=f"joint{i}"), placement, mass=mass,
                   com=[0.0, 0.0, -length / 2], inertia_com=rod_inertia(mass, length))
        parent = name
    b.add_frame("tip", parent, pose_transform([0.0, 0.0, -length]))
    return b.build()


def arm7(gravity=None) -> RigidSystem:
    """A 7-dof revolute arm (modified DH, alternating ±90° twists, shoulder-elbow-wrist layout)."""
    half = np.pi / 2
    rows = [  # alpha_{i-1}, d_i, mass, com (DH frame i)
        (0.0, 0.34, 4.0, [0.0, -0.03, -0.12]),
        (-half, 0.0, 4.0, [0.0, -0.06, 0.03]),
        (half, 0.40, 3.0, [0.0, 0.03, -0.13]),
        (half, 0.0, 2.7, [0.0, 0.07, 0.03]),
        (-half, 0.40, 1.7, [0.0, -0.02, -0.11]),
        (-half, 0.0, 1.8, [0.0, 0.0, 0.02]),
        (half, 0.126, 0.3, [0.0, 0.0, -0.02]),
    ]
    links = [
        DHLink(a=0.0, alpha=alpha, d=d, theta=0.0, mass=m, com=c,
               inertia_com=box_inertia(m, [0.1, 0.1, 0.2] if d > 0 else [0.1, 0.15, 0.1]), name=f"arm_link{i}")
        for i, (alpha, d, m, c) in enumerate(rows, start=1)
    ]
    return dh_system(links, convention="modified", gravity=gravity)


def _custom_revolute_x() -> CustomJoint:
    """A user-defined joint: rotation about x, written by hand."""

    def kinematics(q, v):
        S = np.zeros((6, 1))
        S[0, 0] = 1.0
        return rot(rx(q[0])), S, np.zeros(6)

    return CustomJoint(1, 1, kinematics, name="custom_x")


def branched_tree(gravity=None) -> RigidSystem:
    """A fixed-base tree with three branches exercising the whole joint library."""
    b = SystemBuilder(gravity)
    box = lambda m, s: dict(mass=m, com=[0.0, 0.0, 0.05], inertia_com=box_inertia(m, s))  # noqa: E731
    b.add_body("torso", None, Revolute([0, 0, 1], name="yaw"), **box(5.0, [0.3, 0.2, 0.5]))
    # branch 1: helical -> cylindrical -> Euler ball joint
    b.add_body("screw", "torso", Helical([0, 0, 1], pitch=0.05, name="screw"), pose_transform([0.2, 0, 0.3]),
               **box(1.0, [0.1, 0.1, 0.2]))
    b.add_body("sleeve", "screw", Cylindrical([1, 0, 0], name="sleeve"), pose_transform([0, 0, 0.2], [0, 0.3, 0]),
               **box(0.8, [0.2, 0.05, 0.05]))
    b.add_body("wrist", "sleeve", SphericalEulerZYX(name="wrist"), pose_transform([0.2, 0, 0]), **box(0.5, [0.05, 0.1, 0.15]))
    # branch 2: rack-and-pinion -> quaternion ball joint -> reversed revolute
    b.add_body("pinion", "torso", RackAndPinion(0.05, name="rack"), pose_transform([-0.2, 0, 0.1], [np.pi / 2, 0, 0]),
               **box(0.6, [0.1, 0.1, 0.02]))
    b.add_body("ball", "pinion", Spherical(name="ball"), pose_transform([0, 0.1, 0]), **box(0.7, [0.1, 0.2, 0.1]))
    b.add_body("flipped", "ball", Revolute([0, 1, 0], name="flipped").reversed(), pose_transform([0, 0, 0.2]),
               **box(0.4, [0.05, 0.05, 0.2]))
    # branch 3: fixed mount -> prismatic -> planar -> user-defined joint
    b.add_body("mount", "torso", Fixed(name="mount"), pose_transform([0, 0.15, 0.4]), **box(0.3, [0.1, 0.1, 0.1]))
    b.add_body("slider", "mount", Prismatic([0, 1, 0], name="slider"), **box(0.5, [0.05, 0.2, 0.05]))
    b.add_body("puck", "slider", Planar([0, 0, 1], name="puck"), pose_transform([0, 0.2, 0]), **box(0.4, [0.1, 0.1, 0.05]))
    b.add_body("flap", "puck", _custom_revolute_x(), pose_transform([0.1, 0, 0]), **box(0.2, [0.02, 0.1, 0.1]))
    b.add_frame("flap_tip", "flap", pose_transform([0, 0.1, 0]))
    return b.build()


def humanoid(gravity=None) -> RigidSystem:
    """A floating-base humanoid-like tree: free pelvis, torso, head, two arms, two legs."""
    b = SystemBuilder(gravity)
    b.add_body("pelvis", None, Free(name="root_joint"), pose_transform([0, 0, 1.0]), mass=8.0, com=[0, 0, 0.05],
               inertia_com=box_inertia(8.0, [0.3, 0.25, 0.2]))
    b.add_body("torso", "pelvis", Revolute([0, 0, 1], name="waist"), pose_transform([0, 0, 0.15]), mass=15.0,
               com=[0, 0, 0.2], inertia_com=box_inertia(15.0, [0.35, 0.25, 0.45]))
    b.add_body("head", "torso", Revolute([0, 1, 0], name="neck"), pose_transform([0, 0, 0.5]), mass=4.0,
               com=[0, 0, 0.1], inertia_com=box_inertia(4.0, [0.2, 0.2, 0.25]))
    for side, y in (("left", 1.0), ("right", -1.0)):
        b.add_body(f"{side}_upper_arm", "torso", Spherical(name=f"{side}_shoulder"), pose_transform([0, 0.22 * y, 0.4]),
                   mass=2.0, com=[0, 0, -0.14], inertia_com=rod_inertia(2.0, 0.28, radius=0.04))
        b.add_body(f"{side}_forearm", f"{side}_upper_arm", Revolute([0, 1, 0], name=f"{side}_elbow"),
                   pose_transform([0, 0, -0.28]), mass=1.5, com=[0, 0, -0.13], inertia_com=rod_inertia(1.5, 0.26, radius=0.035))
        b.add_frame(f"{side}_hand", f"{side}_forearm", pose_transform([0, 0, -0.26]))
        b.add_body(f"{side}_thigh", "pelvis", Spherical(name=f"{side}_hip"), pose_transform([0, 0.1 * y, -0.05]),
                   mass=6.0, com=[0, 0, -0.2], inertia_com=rod_inertia(6.0, 0.4, radius=0.07))
        b.add_body(f"{side}_shin", f"{side}_thigh", Revolute([0, 1, 0], name=f"{side}_knee"), pose_transform([0, 0, -0.4]),
                   mass=3.5, com=[0, 0, -0.2], inertia_com=rod_inertia(3.5, 0.4, radius=0.05))
        b.add_body(f"{side}_ankle", f"{side}_shin", Revolute([0, 1, 0], name=f"{side}_ankle_pitch"),
                   pose_transform([0, 0, -0.4]), mass=0.3, com=[0, 0, 0], inertia_com=box_inertia(0.3, [0.05, 0.05, 0.05]))
        b.add_body(f"{side}_foot", f"{side}_ankle", Revolute([1, 0, 0], name=f"{side}_ankle_roll"), mass=1.0,
                   com=[0.05, 0, -0.05], inertia_com=box_inertia(1.0, [0.22, 0.1, 0.05]))
        b.add_frame(f"{side}_sole", f"{side}_foot", pose_transform([0.05, 0, -0.08]))
    return b.build()


def example_systems() -> dict[str, Callable[[], RigidSystem]]:
    """``{name: factory}`` of the built-in examples (each factory takes no required argument)."""
    return {"planar_chain": planar_chain, "arm7": arm7, "branched_tree": branched_tree, "humanoid": humanoid}

