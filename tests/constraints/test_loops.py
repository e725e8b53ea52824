"""A 5-D revolute loop (which Pinocchio's rigid constraints cannot express) against the dense KKT
solve and against the same four-bar built with a loop joint and constraint embedding
(CONSTRAINTS.md §3, §5; EMBEDDING.md §3)."""

import numpy as np
import pytest

from sko.constraints import FrameConstraint, constraint_compliance
from sko.bodies import Revolute
from sko.examples.embedding import four_bar
from sko.spatial import pose_transform
from sko.systems import SystemBuilder
from tests.constraints.test_dense_kkt import _kkt


def _translation(x) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = x
    return T


#: the knee of :func:`four_bar`: the coupler's end turns about z against the rocker's end
KNEE = FrameConstraint("coupler", "rocker", _translation([1.5, 0, 0]), _translation([1.5, 0, 0]),
                       directions=(0, 1, 2, 3, 4), reference="local")


@pytest.mark.parametrize("angle, rate, torque", [(1.0, 0.7, 0.3), (0.4, -2.0, 5.0), (2.2, 0.0, -1.0)])
def test_revolute_loop_matches_constraint_embedding(angle, rate, torque):
    """The open chain under the 5-D loop moves as the embedded four-bar: its spanning
    accelerations are ``G v̇ + Ġ v`` of the embedded one (the loop is planar, so three of its five
    rows are redundant: the proximal resolution answers)."""
    loop = four_bar()
    tree = loop.spanning_system()
    q, v, tau = np.array([angle]), np.array([rate]), np.array([torque])
    loop_q = loop.spanning_configuration(q)
    G, Gdv, _, _ = loop.constraint_matrices(q, v)
    theta_dot = G @ v
    tau_tree = np.zeros(tree.nv)
    tau_tree[0] = torque  # the crank's joint is the independent coordinate
    dv, lam = tree.constrained_dynamics(loop_q, theta_dot, tau_tree, [KNEE])
    expected = G @ loop.forward_dynamics(q, v, tau) + Gdv
    np.testing.assert_allclose(dv, expected, rtol=0, atol=1e-9 * (1 + np.abs(expected).max()))
    assert np.isfinite(lam).all()
    Omega = constraint_compliance(tree, loop_q, [KNEE])
    assert np.linalg.matrix_rank(Omega, tol=1e-9 * np.abs(Omega).max()) == 2  # redundant: the proximal path
    dv_k, lam_k, *_ = _kkt(tree, loop_q, theta_dot, tau_tree, [KNEE])
    np.testing.assert_allclose(dv, dv_k, rtol=0, atol=1e-9 * (1 + np.abs(dv_k).max()))
    np.testing.assert_allclose(lam, lam_k, rtol=0, atol=1e-7 * (1 + np.abs(lam_k).max()))  # minimum-norm forces


def _two_branches(rng, lengths=(4, 3)):
    """Two chains of revolute joints with random axes from the world: a 7-dof tree to close."""
    b = SystemBuilder(gravity=[0, 0, -9.81])
    for branch, n in enumerate(lengths):
        parent = None
        for i in range(n):
            name = f"b{branch}{i}"
            axis = rng.normal(size=3)
            b.add_body(name, parent, Revolute(axis / np.linalg.norm(axis)),
                       placement=pose_transform(rng.normal(size=3) * 0.3, rng.uniform(-np.pi, np.pi, 3)),
                       mass=float(rng.uniform(0.5, 2.0)), com=rng.normal(size=3) * 0.1, inertia_com=0.05 * np.eye(3))
            parent = name
    return b.build()


@pytest.mark.parametrize("seed", range(5))
def test_spatial_revolute_loop_against_dense_kkt(seed):
    """Two branches closed by a 5-D revolute loop between their tips (full rank), the motion one
    the loop allows, against the dense KKT solve."""
    rng = np.random.default_rng(seed)
    system = _two_branches(rng)
    c = FrameConstraint("b03", "b12", _translation(rng.normal(size=3) * 0.2), _translation(rng.normal(size=3) * 0.2),
                        directions=(0, 1, 2, 3, 4))
    q = system.random_configuration(rng)
    J = system.constraint_jacobian(q, [c])
    v = rng.normal(size=system.nv)
    v = v - np.linalg.pinv(J) @ (J @ v)  # a motion the loop allows
    tau = rng.normal(size=system.nv)
    dv_k, lam_k, *_ = _kkt(system, q, v, tau, [c])
    dv, lam = system.constrained_dynamics(q, v, tau, [c])
    np.testing.assert_allclose(dv, dv_k, rtol=0, atol=1e-9 * (1 + np.abs(dv_k).max()))
    np.testing.assert_allclose(lam, lam_k, rtol=0, atol=1e-8 * (1 + np.abs(lam_k).max()))
    np.testing.assert_allclose(J @ dv + system.constraint_drift(q, v, [c]), 0.0, atol=1e-9 * (1 + np.abs(dv).max()))
