"""The position error of a Baumgarte ``kp`` is complex-step safe (CONSTRAINTS.md §7): complex
states answer on the reference path, and the derivatives take ``kp`` on any constraint."""

import numpy as np
import pytest

from sko.constraints import FrameConstraint, FrameContact, anchored, constraint_error
from sko.examples.rigid import arm7
from sko.spatial import axis_angle_matrix


def _setup():
    system = arm7()
    rng = np.random.default_rng(3)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    T = anchored(system, q, [FrameContact("arm_link7")])[0].other_placement.copy()
    T[:3, :3] = T[:3, :3] @ axis_angle_matrix(np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8]), 0.7)
    T[:3, 3] += 0.1
    return system, q, v, tau, T


@pytest.mark.parametrize("reference", ["local", "world", "local_world_aligned"])
@pytest.mark.parametrize("directions", [(0, 1, 2), (0, 1, 2, 3, 4, 5), (1, 4)])
def test_the_error_takes_complex_steps(reference, directions):
    system, q, _, _, T = _setup()
    c = [FrameConstraint("arm_link7", None, None, T, directions, reference)]
    h, fd_h = 1e-30, 1e-6
    for i in range(system.nv):
        e = np.zeros(system.nv)
        e[i] = 1.0
        step = np.imag(constraint_error(system, q + 1j * h * system.qdot(q, e), c)) / h
        fd = (constraint_error(system, system.integrate(q, fd_h * e), c)
              - constraint_error(system, system.integrate(q, -fd_h * e), c)) / (2 * fd_h)
        np.testing.assert_allclose(step, fd, rtol=0, atol=1e-8)


def test_complex_states_with_a_kp_frame_constraint_answer_on_the_reference_path():
    system, q, v, tau, T = _setup()
    c = [FrameContact("arm_link7", baumgarte=(5.0, 1.0), target=T)]
    real = system.constrained_dynamics(q, v, tau, c)
    for got, want in zip(system.constrained_dynamics(q + 0j, v + 0j, tau + 0j, c), real):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("constraint", [
    lambda T: FrameConstraint("arm_link7", None, None, T, (0, 1, 2), "world", (50.0, 0.0)),
    lambda T: FrameContact("arm_link7", "local", (50.0, 3.0), target=T),
    lambda T: FrameConstraint("arm_link7", None, None, T, (0, 2, 3, 5), "local_world_aligned", (20.0, 1.0))])
def test_derivatives_with_kp_equal_central_differences(constraint):
    system, q, v, tau, T = _setup()
    c = [constraint(T)]
    d = system.constrained_dynamics_derivatives(q, v, tau, c)
    h = 1e-5
    fd = np.column_stack([(system.constrained_dynamics(system.integrate(q, h * e), v, tau, c)[0]
                           - system.constrained_dynamics(system.integrate(q, -h * e), v, tau, c)[0]) / (2 * h)
                          for e in np.eye(system.nv)])
    np.testing.assert_allclose(d.ddv_dq, fd, rtol=0, atol=1e-6 * np.abs(fd).max())
