"""Built-in systems with flexible bodies and geared rotors, and random mixed trees for tests.

:func:`flexible_examples` maps names to factories (no arguments, returning a
:class:`~sko.systems.multibody.MultibodySystem`), e.g. for the verification command line.
:func:`random_system` draws a random tree mixing rigid bodies, flexible bodies (different mode
counts, children on modal nodes) and geared-rotor links (below rigid parents, other rotor links
or the ground), with random joints, placements and inertias.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from sko.bodies.joints import Free, Prismatic, Revolute, Spherical
from sko.spatial import pose_transform, spatial_inertia

from sko.bodies.beam import flexible_beam
from sko.bodies.flexible import FlexibleBody
from sko.bodies.rigid import RigidBody
from sko.bodies.rotor import GearedRotorLink
from sko.systems.multibody import MultibodySystem

__all__ = ["flexible_examples", "verify_models", "flexible_two_link", "flexible_spacecraft", "geared_rotor_chain",
           "flexible_geared_arm", "random_system", "point_mass_inertia"]


def point_mass_inertia(mass: float, position) -> np.ndarray:
    """Spatial inertia of a point mass (e.g. a rotor's mass carried by its parent)."""
    return spatial_inertia(mass, np.asarray(position, dtype=float), np.zeros((3, 3)))


def _rod(mass: float, length: float, axis: int = 0) -> np.ndarray:
    """A slender box along ``axis`` from the origin: centre of mass at ``length/2``."""
    c = np.zeros(3)
    c[axis] = length / 2
    Ic = np.full(3, mass * length**2 / 12)
    Ic[axis] = mass * (0.05 * length) ** 2 / 6
    return spatial_inertia(mass, c, np.diag(Ic))


def flexible_two_link(n_modes: int = 2, damping_ratio: float = 0.0) -> MultibodySystem:
    """A two-link arm in the vertical x-z plane, both links flexible beams (1 m, 1 kg,
    EI = 20 N m²) with ``n_modes`` in-plane bending modes; joints about y, the elbow at the
    first link's tip node."""
    y = [0.0, 1.0, 0.0]
    upper = flexible_beam("upper", None, Revolute(y), 1.0, 1.0, 20.0, n_modes, damping_ratio=damping_ratio)
    lower = flexible_beam("lower", "upper", Revolute(y), 1.0, 1.0, 20.0, n_modes, damping_ratio=damping_ratio,
                          attach="tip")
    return MultibodySystem([upper, lower])


def flexible_spacecraft(n_modes: int = 2) -> MultibodySystem:
    """A free-floating rigid hub (200 kg) with two flexible solar arrays (4 m, 10 kg,
    EI = 400 N m², bending in z and y) on revolute drives about their long axes; no gravity."""
    hub = RigidBody("hub", None, Free(), spatial_inertia(200.0, np.zeros(3), np.diag([40.0, 40.0, 30.0])))
    arrays = [flexible_beam(name, "hub", Revolute([1.0, 0.0, 0.0]), 4.0, 10.0, 400.0, n_modes, directions=("z", "y"),
                            thickness=0.4, placement=pose_transform([side * 1.0, 0.0, 0.0], [0.0, 0.0, yaw]))
              for name, side, yaw in (("array+", 1.0, 0.0), ("array-", -1.0, np.pi))]
    return MultibodySystem([hub, *arrays], gravity=np.zeros(3))


def geared_rotor_chain(n_links: int = 3, ratio: float = 50.0) -> MultibodySystem:
    """A planar chain of ``n_links`` 0.5 m links about y, each driven through a gear of ``ratio``
    by a rotor (0.2 kg, J_a = 1e-4, J_t = 6e-5 kg m²) on its parent; the first rotor is on the
    ground. Every parent carries its child's rotor mass."""
    rotor = dict(gear_ratio=ratio, axial_inertia=1e-4, transverse_inertia=6e-5, rotor_mass=0.2)
    bodies = []
    for j in range(n_links):
        inertia = _rod(1.0, 0.5)
        if j + 1 < n_links:
            inertia = inertia + point_mass_inertia(0.2, [0.5, 0.0, 0.0])
        bodies.append(GearedRotorLink(f"link{j}", None if j == 0 else f"link{j - 1}", Revolute([0.0, 1.0, 0.0]),
                                      inertia, [0.0, 1.0, 0.0], rotor_centre=[0.0, 0.0, 0.0] if j == 0 else [0.5, 0.0, 0.0],
                                      placement=None if j == 0 else pose_transform([0.5, 0.0, 0.0]), **rotor))
    return MultibodySystem(bodies)


def flexible_geared_arm(n_modes: int = 3) -> MultibodySystem:
    """A rotor-driven rigid shoulder link with a flexible forearm (``n_modes``) whose tip node
    carries a rigid payload on a wrist joint: all three body types in one chain."""
    shoulder = GearedRotorLink("shoulder", None, Revolute([0.0, 0.0, 1.0]), _rod(2.0, 0.4),
                               [0.0, 0.0, 1.0], gear_ratio=80.0, axial_inertia=2e-4, transverse_inertia=1.2e-4,
                               rotor_mass=0.3)
    forearm = flexible_beam("forearm", "shoulder", Revolute([0.0, 1.0, 0.0]), 1.0, 1.5, 30.0, n_modes,
                            directions=("z", "y"), placement=pose_transform([0.4, 0.0, 0.0]))
    payload = RigidBody("payload", "forearm", Revolute([1.0, 0.0, 0.0]),
                        spatial_inertia(0.5, [0.05, 0.0, 0.0], 1e-3 * np.eye(3)), attach="tip")
    return MultibodySystem([shoulder, forearm, payload])


def flexible_examples() -> dict[str, Callable[[], MultibodySystem]]:
    """Built-in systems with flexible bodies or geared rotors: name → factory."""
    return {
        "flexible-two-link": flexible_two_link,
        "flexible-spacecraft": flexible_spacecraft,
        "geared-rotor-chain": geared_rotor_chain,
        "flexible-geared-arm": flexible_geared_arm,
    }


def verify_models(seed: int = 0) -> dict[str, Callable[[], MultibodySystem]]:
    """The examples for the identity and physics checks: name → factory returning the system
    (taken at a reproducible random state by the verifier), plus a random mixed tree."""
    models = dict(flexible_examples())  # systems: the verifier takes them at a random state, keeping them
    models["flexible-random-mixed"] = lambda: random_system(seed, n_bodies=10, shape="random")
    return models


# ---------------------------------------------------------------------------- random trees
def _random_inertia(rng: np.random.Generator, mass: float | None = None) -> np.ndarray:
    A = rng.standard_normal((3, 3))
    S = 0.05 * A @ A.T + 0.02 * np.eye(3)  # second moment: a physical rotational inertia
    return spatial_inertia(mass or rng.uniform(0.5, 2.0), 0.3 * rng.standard_normal(3), np.trace(S) * np.eye(3) - S)


def _random_placement(rng):
    return pose_transform(0.5 * rng.standard_normal(3), rng.uniform(-np.pi, np.pi, 3))


def _random_flexible(rng, name, parent, joint, attach, r, damping, placement, point_masses):
    """A random flexible body; ``point_masses`` ``[(mass, node)]`` become particles at those
    nodes (the masses of rotors mounted there, moving with the node's translation)."""
    n = 7
    A = rng.standard_normal((r, r))
    K = A @ A.T + 5.0 * np.eye(r)
    C = (lambda B: 0.1 * B @ B.T)(rng.standard_normal((r, r))) if damping else None
    nodes = {f"node{j}": (0.5 * rng.standard_normal(3), 0.2 * rng.standard_normal((3, r)), 0.2 * rng.standard_normal((3, r)))
             for j in range(2)}
    masses, positions, modes = rng.uniform(0.1, 0.5, n), 0.5 * rng.standard_normal((n, 3)), 0.2 * rng.standard_normal((n, 3, r))
    for mass, node in point_masses:
        p_o, Phi_o = (np.zeros(3), np.zeros((3, r))) if node is None else nodes[node][:2]
        masses, positions, modes = np.append(masses, mass), np.vstack([positions, p_o]), np.concatenate([modes, Phi_o[None]])
    return FlexibleBody(name, parent, joint, masses, positions, modes, K, C, nodes=nodes, placement=placement, attach=attach)


def random_system(seed: int, n_bodies: int = 6, shape: str = "random", damping: bool = True,
                  floating_base: bool | None = None, gravity=(0.0, 0.0, -9.81)) -> MultibodySystem:
    """A random tree of ``n_bodies`` mixing rigid, flexible (0 to 3 modes) and geared-rotor bodies.

    ``shape``: ``"chain"``, ``"fan"``, ``"random"`` or ``"forest"`` (two base bodies, the rest
    hanging at random below them). Children of flexible bodies hang from
    modal nodes or the body frame. Every rotor's mass is carried by its parent: a point mass
    added to a rigid parent's inertia, or a particle at the node of a flexible parent (rotors
    on flexible bodies are centred on their node, so that particle moves exactly with them).
    ``floating_base`` (default: random) makes the first base body free-floating. The stacking
    order is a random permutation.
    """
    rng = np.random.default_rng(seed)
    bases = 2 if shape == "forest" else 1
    parents = [None if g < bases else (g - 1 if shape == "chain" else 0 if shape == "fan" else int(rng.integers(0, g)))
               for g in range(n_bodies)]
    if floating_base is None:
        floating_base = bool(rng.integers(0, 2))
    kinds, attach, joints, rotors = [], [], [], []
    point_masses = {g: [] for g in range(n_bodies)}
    for g, p in enumerate(parents):
        kind = str(rng.choice(["rigid", "flexible"] if g == 0 and floating_base else ["rigid", "flexible", "rotor"]))
        at = str(rng.choice(["node0", "node1", "frame"])) if p is not None and kinds[p] == "flexible" else "frame"
        at = None if at == "frame" else at
        rotor = None
        if kind == "rotor":
            joint = Revolute(rng.standard_normal(3)) if rng.random() < 0.7 else Prismatic(rng.standard_normal(3))
            Ja = rng.uniform(1e-3, 1e-2)
            on_flexible = p is not None and kinds[p] == "flexible"
            rotor = dict(rotor_axis=rng.standard_normal(3), gear_ratio=float(rng.choice([-1, 1]) * rng.uniform(2, 40)),
                         axial_inertia=Ja, transverse_inertia=Ja * rng.uniform(0.6, 1.5), rotor_mass=rng.uniform(0.1, 0.4),
                         rotor_centre=np.zeros(3) if on_flexible else 0.3 * rng.standard_normal(3))
            if p is not None:
                point_masses[p].append((rotor["rotor_mass"], at if on_flexible else rotor["rotor_centre"]))
        elif g == 0 and floating_base:
            joint = Free()
        else:
            joint = [Revolute(rng.standard_normal(3)), Prismatic(rng.standard_normal(3)), Spherical()][int(rng.choice(3, p=[0.6, 0.2, 0.2]))]
        kinds.append(kind)
        attach.append(at)
        joints.append(joint)
        rotors.append(rotor)
    bodies = []
    for g, kind in enumerate(kinds):
        name, parent, placement = f"b{g}", None if parents[g] is None else f"b{parents[g]}", _random_placement(rng)
        if kind == "flexible":
            bodies.append(_random_flexible(rng, name, parent, joints[g], attach[g], int(rng.integers(0, 4)), damping,
                                           placement, point_masses[g]))
            continue
        inertia = _random_inertia(rng) + sum((point_mass_inertia(m, c) for m, c in point_masses[g]), np.zeros((6, 6)))
        if kind == "rotor":
            bodies.append(GearedRotorLink(name, parent, joints[g], inertia, placement=placement, attach=attach[g], **rotors[g]))
        else:
            bodies.append(RigidBody(name, parent, joints[g], inertia, placement=placement, attach=attach[g]))
    order = rng.permutation(n_bodies)  # an arbitrary stacking order
    return MultibodySystem([bodies[i] for i in order], gravity=gravity)
