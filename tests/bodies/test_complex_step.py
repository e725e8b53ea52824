"""Complex steps flow through the body types and the generic recursions (generic scalars):
the derivatives of ℳ, 𝒞 and θ̈ along a direction in (q, θ̇) match central differences."""

from __future__ import annotations

import numpy as np
import pytest

from sko.bodies.examples import random_system
from tests.util import assert_close

from .helpers import random_state


@pytest.mark.parametrize("seed", range(3))
def test_complex_step_derivatives(seed):
    system = random_system(seed, n_bodies=7, shape="random")
    rng = np.random.default_rng(seed)
    q, qd = random_state(system, rng)
    dq, dv, tau = rng.standard_normal(system.q_size), rng.standard_normal(system.dof_size), rng.standard_normal(system.dof_size)
    h, e = 1e-30, 1e-6
    for f in (lambda x, v: system.mass_matrix(x), system.bias, lambda x, v: system.forward_dynamics(x, v, tau)):
        step = f(q + 1j * h * dq, qd + 1j * h * dv)
        assert np.iscomplexobj(step)
        central = (f(q + e * dq, qd + e * dv) - f(q - e * dq, qd - e * dv)) / (2 * e)
        assert_close(step.imag / h, central, 1e-7)
        assert_close(step.real, f(q, qd), 1e-13)
