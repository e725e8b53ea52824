"""Random rigid systems for property tests: random forests of bodies with random joints from
the whole library (including reversed and user-defined ones), placements and inertias."""

from __future__ import annotations

import numpy as np

from sko import spatial as sp
from sko.bodies import CustomJoint, Cylindrical, Fixed, Free, Helical, Planar, Prismatic, RackAndPinion, Revolute, Spherical, SphericalEulerZYX
from sko.systems import SystemBuilder
from tests.util import joint_axis


def _custom(rng):
    axis = sp.quaternion_normalize(np.concatenate([[0.0], rng.normal(size=3)]))[1:]

    def kinematics(q, v):
        S = np.concatenate([axis, np.zeros(3)]).reshape(6, 1)
        return sp.rot(sp.axis_angle_matrix(axis, q[0]).T), S, np.zeros(6)

    return CustomJoint(1, 1, kinematics, name="custom")


JOINT_MAKERS = [
    lambda rng: Revolute(joint_axis(rng)),
    lambda rng: Prismatic(joint_axis(rng)),
    lambda rng: Helical(joint_axis(rng), rng.uniform(-0.3, 0.3)),
    lambda rng: Cylindrical(rng.normal(size=3)),
    lambda rng: Planar(rng.normal(size=3)),
    lambda rng: Spherical(),
    lambda rng: SphericalEulerZYX(),
    lambda rng: Free(),
    lambda rng: RackAndPinion(rng.uniform(0.05, 0.5)),
    _custom,
]


#: the joints of constant ``S`` and ``c_J = 0`` (Joint.constant_motion): revolute, prismatic,
#: helical, cylindrical, planar, ball, free
CONSTANT_MOTION_MAKERS = JOINT_MAKERS[:6] + [JOINT_MAKERS[7]]


def random_rigid_system(seed: int, max_bodies: int = 7, constant_motion: bool = False):
    """A random forest (one to three base bodies) of up to ``max_bodies`` moving bodies, with
    random joints (a third of them reversed), fixed links merged on the way, and gravity; with
    ``constant_motion``, only joints of constant ``S`` and ``c_J = 0``, none reversed."""
    rng = np.random.default_rng(seed)
    b = SystemBuilder(gravity=rng.normal(size=3) * 5)
    names: list = []
    n = int(rng.integers(1, max_bodies + 1))
    n_base = int(rng.integers(1, min(3, n) + 1))
    for i in range(n):
        parent = None if i < n_base else names[int(rng.integers(len(names)))]
        makers = CONSTANT_MOTION_MAKERS if constant_motion else JOINT_MAKERS
        joint = makers[int(rng.integers(len(makers)))](rng)
        if rng.random() < 0.3 and not constant_motion:
            joint = joint.reversed()
        A = rng.normal(size=(3, 3))
        second_moments = A @ A.T * 0.05 + 0.01 * np.eye(3)  # ∫ρ r rᵀ, so the inertia below is physical
        placement = sp.pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3))
        name = f"b{i}"
        b.add_body(name, parent, joint, placement, mass=rng.uniform(0.2, 3.0), com=rng.normal(size=3) * 0.2,
                   inertia_com=np.trace(second_moments) * np.eye(3) - second_moments)
        names.append(name)
        if rng.random() < 0.3:  # a fixed link merged into this body, sometimes a parent of later bodies
            fixed = f"f{i}"
            b.add_body(fixed, name, Fixed(), sp.pose_transform(rng.normal(size=3) * 0.2, rng.normal(size=3)),
                       mass=rng.uniform(0.0, 1.0), com=rng.normal(size=3) * 0.1, inertia_com=0.01 * np.eye(3))
            names.append(fixed)
    return b.build()
