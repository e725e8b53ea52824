"""Nearly redundant constraints that can all hold take the least-squares answer
(CONSTRAINTS.md §5), not an :class:`InconsistentConstraintsError`: two point contacts of one free
body a small distance apart (``Ω`` singular, with one more eigenvalue of the order of the
distance squared, where the proximal iterations converge slowly)."""

import numpy as np
import pytest

from sko.bodies import Free
from sko.constraints import PointContact
from sko.engine.dispatch import use_backend
from sko.systems import SystemBuilder


@pytest.mark.parametrize("backend", ["compiled", "reference"])
@pytest.mark.parametrize("d", [1e-5, 1e-6])
def test_two_contacts_close_together_hold(backend, d):
    b = SystemBuilder(gravity=[0, 0, -9.81])
    b.add_body("box", None, Free(), mass=2.0, com=[0.1, 0.0, 0.05], inertia_com=np.diag([0.1, 0.2, 0.3]))
    system = b.build()
    rng = np.random.default_rng(0)
    q = system.random_configuration(rng)
    v, tau = rng.normal(size=(2, system.nv))
    P = np.eye(4)
    P[:3, 3] = [d, 0.0, 0.0]
    C = [PointContact("box"), PointContact("box", placement=P)]
    J = system.constraint_jacobian(q, C)
    v = v - np.linalg.pinv(J) @ (J @ v)  # a velocity the contacts allow
    with use_backend(backend):
        dv, lam = system.constrained_dynamics(q, v, tau, C)
    gamma = system.constraint_drift(q, v, C)
    assert np.linalg.norm(J @ dv + gamma) < 1e-8 * (1 + np.linalg.norm(gamma))
    M = system.mass_matrix(q)  # Gauss: M v̇ = τ − C + Jᵀ λ
    np.testing.assert_allclose(M @ dv, tau - system.bias_forces(q, v) + J.T @ lam, rtol=0, atol=1e-6 * (1 + np.abs(lam).max()))
