"""The SE(3) logarithm of the position error (CONSTRAINTS.md §2) keeps its digits at small
angles, on the reference path and in the kernel."""

import mpmath
import numpy as np
import pytest

from sko.constraints import FrameContact, anchored, constraint_compliance, constraint_error
from sko.engine.constrained import log_coefficient
from sko.examples.rigid import arm7
from sko.spatial import axis_angle_matrix, skew


def _exact_k(theta: float) -> float:
    mpmath.mp.dps = 50
    t = mpmath.mpf(theta)
    return float((1 - t * mpmath.sin(t) / (2 * (1 - mpmath.cos(t)))) / t ** 2)


@pytest.mark.parametrize("theta", [1e-9, 2e-6, 1e-5, 1e-4, 1e-3, 0.1, 0.2499, 0.25, 0.5, 1.0, 2.0, 3.0, np.pi])
def test_the_log_coefficient_is_exact_to_rounding(theta):
    assert log_coefficient(theta) == pytest.approx(_exact_k(theta), rel=1e-14)


def _exact_error(held_pose, target):
    """The local error ``[V(ω)⁻¹ R2ᵀ (p1 − p2); ω]`` with ``k`` in 50 digits."""
    R1, R2 = held_pose[:3, :3], target[:3, :3]
    t = R2.T @ (held_pose[:3, 3] - target[:3, 3])
    R = R2.T @ R1
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin θ times the axis
    w *= np.arcsin(np.linalg.norm(w)) / np.linalg.norm(w)
    W = skew(w)
    return np.concatenate([t - 0.5 * W @ t + _exact_k(float(np.linalg.norm(w))) * W @ W @ t, w])


@pytest.mark.parametrize("angle", [2e-6, 3e-5, 4e-4])
def test_a_weld_turned_by_a_small_angle_has_the_exact_error_on_both_paths(angle):
    system = arm7()
    q = system.random_configuration(np.random.default_rng(2))
    held = anchored(system, q, [FrameContact("arm_link7")])[0]
    T = held.other_placement.copy()
    T[:3, :3] = T[:3, :3] @ axis_angle_matrix(np.array([0.0, 0.0, 1.0]), angle)
    T[:3, 3] += T[:3, :3] @ np.array([1.0, 0.0, 0.0])
    exact = _exact_error(held.other_placement, T)
    np.testing.assert_allclose(constraint_error(system, q, [held.with_target(T)]), exact, rtol=0, atol=1e-13)
    # the kernel's: λ is affine in a_ref = −kp e, so e = −Ω (λ(kp) − λ(0)) / kp
    v, tau = np.zeros(system.nv), np.zeros(system.nv)
    kp = 3.0
    stiff = FrameContact("arm_link7", target=T, baumgarte=(kp, 0.0))
    loose = FrameContact("arm_link7", target=T)
    lam_kp = system.constrained_dynamics(q, v, tau, [stiff])[1]
    lam_0 = system.constrained_dynamics(q, v, tau, [loose])[1]
    e = -constraint_compliance(system, q, [stiff]) @ (lam_kp - lam_0) / kp
    np.testing.assert_allclose(e, exact, rtol=0, atol=1e-9)
