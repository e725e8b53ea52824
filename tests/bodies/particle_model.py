"""The independent particle model of a :class:`~sko.bodies.MultibodySystem`.

Reads only the bodies' data (joint kind and axis, placement, inertia or particles, modes,
nodes, rotor parameters) and builds a :class:`sko.independent.ParticleTree` from it with plain
numpy; no spatial algebra or SKO code is involved.
"""

from __future__ import annotations

import numpy as np

from sko.bodies import FlexibleBody, GearedRotorLink, RigidBody
from sko.systems import MultibodySystem
from sko.independent import (
    ParticleBody,
    ParticleRotor,
    ParticleTree,
    free_joint,
    homogeneous,
    particles_from_inertia,
    prismatic_joint,
    revolute_joint,
    spherical_joint,
)


def _joint(joint):
    kind = joint.kind
    if kind == "revolute":
        return revolute_joint(joint.axis)
    if kind == "prismatic":
        return prismatic_joint(joint.axis)
    if kind == "spherical":
        return spherical_joint()
    if kind == "free":
        return free_joint()
    raise NotImplementedError(f"no independent model of {kind} joints")


def _pose(X) -> np.ndarray:
    """Homogeneous pose of B in A from the Plücker ``ᴮX_A = [[E, 0], [−E r×, E]]``."""
    E = X[:3, :3]
    rx = -E.T @ X[3:, :3]
    return homogeneous(E.T, np.array([rx[2, 1], rx[0, 2], rx[1, 0]]))


def _rigid_particles(I6):
    m = I6[5, 5]
    C = I6[:3, 3:] / m
    c = np.array([C[2, 1], C[0, 2], C[1, 0]])
    return particles_from_inertia(m, c, I6[:3, :3] - m * C @ C.T)


def _rotor(body: GearedRotorLink) -> ParticleRotor:
    """Two rings of three particles at ``±h`` along the axis: ``J_a = m ρ²``,
    ``J_t = m ρ²/2 + m h²``."""
    u = body.rotor_axis
    J = body.rotor_inertia
    Ja, Jt = u @ J @ u, np.trace(J) / 2 - (u @ J @ u) / 2
    m = body.rotor_mass
    rho, h = np.sqrt(Ja / m), np.sqrt((Jt - Ja / 2) / m)
    e1 = np.cross(u, [1.0, 0, 0] if abs(u[0]) < 0.9 else [0, 1.0, 0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    offsets = [s * h * u + rho * (np.cos(t) * e1 + np.sin(t) * e2) for s in (1, -1) for t in 2 * np.pi * np.arange(3) / 3]
    return ParticleRotor(axis=u, centre=body.rotor_centre, ratio=body.gear_ratio, masses=np.full(6, m / 6),
                         offsets=np.array(offsets))


def _point_mass(m, c) -> np.ndarray:
    C = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    return m * np.block([[C @ C.T, C], [C.T, np.eye(3)]])


def particle_tree(system: MultibodySystem) -> ParticleTree:
    """The particle model. A rotor's particles carry its mass, so the mass its parent carries
    for it (``parent_point_mass``) is taken out of the parent: from a rigid parent's inertia, or
    from the particle of a flexible parent that sits at the rotor's node (rotors on flexible
    bodies must be centred on their node)."""
    own = {k: np.array(b.inertia) for k, b in ((k, system.body(k)) for k in system.bodies) if isinstance(b, (RigidBody, GearedRotorLink))}
    particle_masses = {k: np.array(b.masses) for k, b in ((k, system.body(k)) for k in system.bodies) if isinstance(b, FlexibleBody)}
    for b in [system.body(k) for k in system.bodies]:
        if not isinstance(b, GearedRotorLink) or b.parent is None:
            continue
        mass, centre = b.parent_point_mass()
        if b.parent in own:
            own[b.parent] -= _point_mass(mass, centre)
            continue
        parent = system.body(b.parent)
        node = (np.zeros(3), np.zeros((3, parent.r))) if b.attach is None else parent.nodes[b.attach][:2]
        match = sorted((particle_masses[b.parent][i] != mass, i) for i in range(len(parent.masses))
                       if np.array_equal(parent.positions[i], node[0]) and np.array_equal(parent.modes[i], node[1])
                       and particle_masses[b.parent][i] >= mass)  # a particle of exactly that mass first
        match = [i for _, i in match]
        if np.any(centre) or not match:
            raise NotImplementedError(f"rotor {b.name!r}: no particle of {b.parent!r} carries its mass at its node")
        particle_masses[b.parent][match[0]] -= mass
    out = []
    for k in system.bodies:
        b = system.body(k)
        common = dict(name=k, parent=b.parent, joint=_joint(b.joint), placement=_pose(b.placement), attach=b.attach)
        if isinstance(b, FlexibleBody):
            keep = particle_masses[k] > 0
            out.append(ParticleBody(masses=particle_masses[k][keep], positions=b.positions[keep],
                                    modes=b.modes[keep] if b.r else None, stiffness=b.stiffness, damping=b.damping,
                                    nodes={n: tuple(d) for n, d in b.nodes.items()}, **common))
        elif isinstance(b, (RigidBody, GearedRotorLink)):
            masses, positions = _rigid_particles(own[k])
            rotor = _rotor(b) if isinstance(b, GearedRotorLink) else None
            out.append(ParticleBody(masses=masses, positions=positions, rotor=rotor, **common))
        else:
            raise NotImplementedError(type(b).__name__)
    return ParticleTree(out, gravity=system.gravity)
