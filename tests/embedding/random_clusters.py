"""Random trees of rigid bodies with random couplings and loop joints (EMBEDDING.md §3 checks)."""

from __future__ import annotations

import numpy as np

from sko import spatial as sp
from sko.bodies import Cylindrical, Helical, Prismatic, Revolute, Spherical, SphericalEulerZYX
from sko.systems import SystemBuilder

#: Joints whose velocities are the rates of their coordinates θ (a cluster needs them).
JOINTS = [
    lambda rng: Revolute(rng.normal(size=3)),
    lambda rng: Revolute(rng.normal(size=3)),
    lambda rng: Prismatic(rng.normal(size=3)),
    lambda rng: Helical(rng.normal(size=3), rng.uniform(-0.3, 0.3)),
    lambda rng: Cylindrical(rng.normal(size=3)),
    lambda rng: SphericalEulerZYX(),
]


def random_clustered_system(seed: int, max_bodies: int = 8):
    """A random forest with one to three couplings between joints of equal dimension (chains of
    mimics, across branches) and, half the time (always without a coupling), a spherical loop joint closed at a random
    configuration ``θ0``. Returns ``(system, θ0 by body)``."""
    rng = np.random.default_rng(seed)
    b = SystemBuilder(gravity=rng.normal(size=3) * 5)
    n = int(rng.integers(3, max_bodies + 1))
    names, parents, joints = [], {}, {}
    for i in range(n):
        parent = None if i == 0 or rng.random() < 0.15 else names[int(rng.integers(len(names)))]
        joint = JOINTS[int(rng.integers(len(JOINTS)))](rng)
        if rng.random() < 0.2:
            joint = joint.reversed()
        x = rng.uniform(0.01, 0.1, 3)  # principal moments (y + z, x + z, x + y): physical
        R = sp.quaternion_matrix(sp.quaternion_normalize(rng.normal(size=4)))
        name = f"b{i}"
        b.add_body(name, parent, joint, sp.pose_transform(rng.normal(size=3) * 0.4, rng.uniform(-np.pi, np.pi, 3)),
                   mass=rng.uniform(0.2, 3.0), com=rng.normal(size=3) * 0.2, inertia_com=R @ np.diag([x[1] + x[2], x[0] + x[2], x[0] + x[1]]) @ R.T)
        names.append(name)
        parents[name], joints[name] = parent, joint
    theta0 = {k: rng.uniform(-1.0, 1.0, joints[k].nv) for k in names}
    dependents: set = set()
    for j in range(int(rng.integers(1, 4))):
        a, d = sorted(rng.choice(n, 2, replace=False))
        pa, pd = names[a], names[d]  # primary before dependent: no cycle
        if pd in dependents or joints[pa].nv != joints[pd].nv:
            continue
        ratio = float(rng.uniform(-2.0, 2.0))
        offset = float(rng.uniform(-0.3, 0.3))
        theta0[pd] = ratio * theta0[pa] + offset
        b.add_coupling(f"c{j}", pa, pd, ratio, offset)
        dependents.add(pd)
    if not dependents or rng.random() < 0.5:
        spanning = SystemBuilder(b.gravity)
        for k in names:
            spanning._bodies[k] = list(b._bodies[k])
        spanning._frames = dict(b._frames)
        tree = spanning.build()
        poses = tree.body_poses(np.concatenate([theta0[k] for k in names]))
        u, v = rng.choice(n + 1, 2, replace=False)
        ends = [None if i == n else names[i] for i in (u, v)]
        point = rng.normal(size=3) * 0.3
        T_u = np.eye(4) if ends[0] is None else poses[ends[0]]
        T_v = np.eye(4) if ends[1] is None else poses[ends[1]]
        world = T_u[:3, :3] @ point + T_u[:3, 3]
        local_v = T_v[:3, :3].T @ (world - T_v[:3, 3])
        b.add_loop_joint("loop", ends[0], ends[1], Spherical(), sp.pose_transform(point),
                         sp.pose_transform(local_v, rng.uniform(-np.pi, np.pi, 3)))
    return b, theta0


def drawn_clustered_system(seed: int):
    """The system of :func:`random_clustered_system` built at its ``θ0``, inside a hypothesis
    test: a drawn loop over-constraining its cluster (a clear ``ClusterError``, which is right) is
    assumed away."""
    from hypothesis import assume

    from sko.bodies import ClusterError

    builder, theta0 = random_clustered_system(seed)
    try:
        return builder.build(initial=theta0)
    except ClusterError:
        assume(False)
