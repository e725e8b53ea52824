"""Random forests of library rigid bodies, their configurations and the example robots: the
systems the rigid kernels take (the mass matrix on ten inertial parameters, the lanes)."""

import numpy as np
import pytest

from sko import spatial as sp
from sko.bodies import Fixed, Free, Helical, Planar, Prismatic, Revolute, RigidBody, Spherical
from sko.systems import MultibodySystem
from tests.util import joint_axis


def inertia(rng):
    """A random physical spatial inertia."""
    A = rng.normal(size=(3, 3))
    second = A @ A.T * 0.05 + 0.01 * np.eye(3)
    return sp.spatial_inertia(rng.uniform(0.2, 3.0), rng.normal(size=3) * 0.3, np.trace(second) * np.eye(3) - second)


JOINTS = [lambda r: Revolute(joint_axis(r)), lambda r: Prismatic(joint_axis(r)),
          lambda r: Helical(joint_axis(r), r.uniform(-0.3, 0.3)), lambda r: Planar(r.normal(size=3)),
          lambda r: Spherical(), lambda r: Free(), lambda r: Fixed(), lambda r: Revolute(r.normal(size=3)).reversed()]


def rigid_forest(seed: int) -> MultibodySystem:
    """A random forest of rigid bodies on every library joint kind, reversed ones and zero-dof
    (fixed) bodies kept as bodies of their own, far from the origin (floating bases)."""
    rng = np.random.default_rng(seed)
    bodies, n = [], int(rng.integers(1, 9))
    for i in range(n):
        parent = None if i == 0 or rng.random() < 0.2 else f"b{int(rng.integers(i))}"
        joint = JOINTS[int(rng.integers(len(JOINTS)))](rng)
        placement = sp.pose_transform(rng.normal(size=3) * 2.0, rng.uniform(-np.pi, np.pi, 3))
        bodies.append(RigidBody(f"b{i}", parent, joint, inertia(rng), placement))
    return MultibodySystem(bodies, gravity=rng.normal(size=3))


def configurations(system, seed: int, count: int) -> np.ndarray:
    """``count`` random configurations of ``system`` (``count × nq``)."""
    rng = np.random.default_rng(seed)
    return np.array([system.random_configuration(rng) for _ in range(count)]).reshape(count, system.nq)


#: example-robot-data URDFs and whether each has a floating base
EXAMPLE_ROBOTS = (("ur_description/urdf/ur5_robot.urdf", False), ("solo_description/robots/solo12.urdf", True),
                  ("talos_data/robots/talos_reduced.urdf", True))


def example_robots():
    """``(URDF path, floating base, system)`` of each of :data:`EXAMPLE_ROBOTS`; the test is
    skipped without Pinocchio (the robots' locator) or example-robot-data."""
    pytest.importorskip("pinocchio")
    from sko.io import load_urdf
    from tests.rigid.pinocchio_map import robots_dir

    root = robots_dir()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    for rel, floating in EXAMPLE_ROBOTS:
        yield root / rel, floating, load_urdf(str(root / rel), floating_base=floating)
