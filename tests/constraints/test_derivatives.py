"""Complex-step derivatives of the constrained dynamics (CONSTRAINTS.md §7; DERIVATIVES.md §7)
against central differences along ``integrate`` on random rigid trees, and ``∂v̇/∂τ`` against the
dense projected inverse ``ℳ⁻¹ − ℳ⁻¹ Jᵀ Ω⁻¹ J ℳ⁻¹``."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sko.constraints import ConstraintError, FrameConstraint, FrameContact, InconsistentConstraintsError, PointContact
from sko.examples.bodies import flexible_two_link
from tests.rigid.random_systems import random_rigid_system
from tests.constraints.test_dense_kkt import _random_constraints


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_derivatives_equal_central_differences(seed):
    rng = np.random.default_rng(seed)
    system = random_rigid_system(seed % 10_000, max_bodies=5, constant_motion=True)
    constraints = [FrameConstraint(c.frame, c.other, c.placement, c.other_placement, c.directions, c.reference,
                                   (0.0, c.baumgarte[1])) for c in _random_constraints(system, rng, 1)]
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    try:
        d = system.constrained_dynamics_derivatives(q, v, tau, constraints)
    except InconsistentConstraintsError:
        return
    sigma = np.linalg.svd(system.constraint_jacobian(q, constraints), compute_uv=False)
    if np.any((sigma > 1e-10 * sigma[0]) & (sigma < 1e-2 * sigma[0])):
        return  # near a singular J, not at one: central differences divide its rounding by σ²
    h = 1e-6
    E = np.eye(system.nv)
    for ours, step in ((d.ddv_dq, lambda e: (system.integrate(q, e), v, tau)), (d.ddv_dv, lambda e: (q, v + e, tau)),
                       (d.ddv_dtau, lambda e: (q, v, tau + e))):
        try:
            fd = np.column_stack([(system.constrained_dynamics(*step(h * e), constraints)[0]
                                   - system.constrained_dynamics(*step(-h * e), constraints)[0]) / (2 * h) for e in E])
        except InconsistentConstraintsError:
            return
        np.testing.assert_allclose(ours, fd, rtol=0, atol=1e-5 * (1 + np.abs(fd).max()))


def test_torque_derivative_is_the_projected_inverse():
    from sko.examples.rigid import arm7

    system = arm7()
    rng = np.random.default_rng(3)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    c = [FrameContact("arm_link7", reference="world")]
    d = system.constrained_dynamics_derivatives(q, v, tau, c)
    Minv, J = np.linalg.inv(system.mass_matrix(q)), system.constraint_jacobian(q, c)
    Omega = J @ Minv @ J.T
    expected = Minv - Minv @ J.T @ np.linalg.solve(Omega, J @ Minv)
    np.testing.assert_allclose(d.ddv_dtau, expected, rtol=0, atol=1e-10 * np.abs(Minv).max())
    np.testing.assert_allclose(d.dlam_dtau, -np.linalg.solve(Omega, J @ Minv), rtol=0, atol=1e-9 * np.abs(d.dlam_dtau).max())


def test_derivatives_say_what_they_cannot_do():
    system = flexible_two_link()
    q = system.neutral_configuration()
    with pytest.raises(ConstraintError, match="rigid system"):
        system.constrained_dynamics_derivatives(q, np.zeros(system.nv), np.zeros(system.nv), [PointContact(("lower", "tip"))])
